//! Schema resolution: the decoder program for data written with a writer schema, read into the
//! plan bound to the codec's (reader) schema, by the Avro resolution rules.
//!
//! This is the one place where compatibility is judged: a pair that cannot be read is an error
//! naming the place (`$.readings[].temp`) and the reason. It runs once per new writer schema,
//! in time and memory linear in the two schemas: one entry per (writer node, reader node, plan
//! node) met, shared by every use of a named type, and one skip program per writer node.
//!
//! The rules beyond the specification (see docs/avro.md, "Schema evolution"): records, enums
//! and fixed types outside a union are matched by position, not by name, since a class rarely
//! carries a foreign schema's name; a reader field the writer lacks takes the class's default
//! even when the reader schema gives none.

use std::collections::HashMap;

use polycodec_formats::avro::schema::Schema;
use polycodec_formats::avro::schema::{Kind, Logical, Node as SchemaNode, NodeId as SchemaId};

use super::ops::{ReadOp, WriteOp};
use crate::errors::Error;
use crate::plan::{FieldDefault, Node, NodeId, Plan};

/// Why a writer schema cannot be read, and where (steps from the root: a field's wire name,
/// or `None` for every item of an array or value of a map).
pub struct Refusal {
    pub steps: Vec<Option<String>>,
    pub reason: String,
}

impl Refusal {
    fn path(&self) -> String {
        let mut out = String::from("$");
        for step in &self.steps {
            match step {
                Some(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                None => out.push_str("[]"),
            }
        }
        out
    }

    /// The DecodeError raised when the pair is resolved, located at the refusal's place.
    pub fn into_error(self) -> Error {
        let error = Error::decode(format!("cannot read the writer schema: {}", self.reason));
        self.steps
            .into_iter()
            .rev()
            .fold(error, |error, step| match step {
                Some(name) => error.at_field(&name),
                None => error.at_items(),
            })
    }

    /// The refusal as one message with its place: a writer union branch the reader cannot
    /// take raises it when it is read.
    pub fn message(&self) -> String {
        format!(
            "cannot read the writer schema at {}: {}",
            self.path(),
            self.reason
        )
    }
}

type Resolved = std::result::Result<usize, Refusal>;

/// What the binding of the plan to the reader schema says (computed once per codec).
pub struct Binding<'a> {
    pub plan: &'a Plan,
    pub reader: &'a Schema,
    pub write_ops: &'a [Option<WriteOp>],
    /// For each reader union node: the plan node each branch is read as (`None`: no class
    /// takes that branch).
    pub branch_plan: &'a HashMap<SchemaId, Vec<Option<NodeId>>>,
}

pub struct Resolver<'a> {
    binding: &'a Binding<'a>,
    writer: &'a Schema,
    pub ops: Vec<ReadOp>,
    memo: HashMap<(SchemaId, SchemaId, NodeId), usize>,
    skip_memo: HashMap<SchemaId, usize>,
    /// Every memo entry in the order its op was emitted, so that a writer union branch the
    /// reader cannot take is rolled back whole: nothing it began is reused by another path.
    journal: Vec<Memo>,
    steps: Vec<Option<String>>,
}

enum Memo {
    Resolved((SchemaId, SchemaId, NodeId)),
    Skip(SchemaId),
}

const UNITS: [(Logical, i64, bool); 4] = [
    (Logical::TimestampMicros, 1, false),
    (Logical::TimestampMillis, 1000, false),
    (Logical::LocalTimestampMicros, 1, true),
    (Logical::LocalTimestampMillis, 1000, true),
];

fn promotes_to(writer: &Kind, reader: &Kind) -> bool {
    matches!(
        (writer, reader),
        (
            Kind::Int,
            Kind::Int | Kind::Long | Kind::Float | Kind::Double
        ) | (Kind::Long, Kind::Long | Kind::Float | Kind::Double)
            | (Kind::Float, Kind::Float | Kind::Double)
            | (Kind::Double, Kind::Double)
            | (Kind::String, Kind::String | Kind::Bytes)
            | (Kind::Bytes, Kind::Bytes | Kind::String)
    )
}

fn same_kind(a: &Kind, b: &Kind) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

fn is_named(node: &SchemaNode) -> bool {
    matches!(
        node.kind,
        Kind::Record { .. } | Kind::Enum { .. } | Kind::Fixed { .. }
    )
}

fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

impl<'a> Resolver<'a> {
    pub fn new(binding: &'a Binding<'a>, writer: &'a Schema) -> Self {
        Resolver {
            binding,
            writer,
            ops: Vec::new(),
            memo: HashMap::new(),
            skip_memo: HashMap::new(),
            journal: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// The root op for the writer's root read as the reader's root, into plan node `root`.
    pub fn root(&mut self, root: NodeId) -> Resolved {
        self.resolve(self.writer.root, self.binding.reader.root, root)
    }

    fn emit(&mut self, op: ReadOp) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    fn remember(&mut self, key: (SchemaId, SchemaId, NodeId), index: usize) {
        self.memo.insert(key, index);
        self.journal.push(Memo::Resolved(key));
    }

    fn remember_skip(&mut self, wid: SchemaId, index: usize) {
        self.skip_memo.insert(wid, index);
        self.journal.push(Memo::Skip(wid));
    }

    /// Forgets every op emitted from `mark` on, and the memo entries that point at them.
    fn roll_back(&mut self, mark: usize) {
        while let Some(entry) = self.journal.last() {
            let index = match entry {
                Memo::Resolved(key) => self.memo[key],
                Memo::Skip(wid) => self.skip_memo[wid],
            };
            if index < mark {
                break;
            }
            match self.journal.pop() {
                Some(Memo::Resolved(key)) => {
                    self.memo.remove(&key);
                }
                Some(Memo::Skip(wid)) => {
                    self.skip_memo.remove(&wid);
                }
                None => {}
            }
        }
        self.ops.truncate(mark);
    }

    fn refuse(&self, reason: impl Into<String>) -> Refusal {
        Refusal {
            steps: self.steps.clone(),
            reason: reason.into(),
        }
    }

    fn cannot(&self, w: &SchemaNode, r: &SchemaNode) -> Refusal {
        self.refuse(format!(
            "writer {} cannot be read as {}",
            w.describe(),
            r.describe()
        ))
    }

    fn resolve(&mut self, wid: SchemaId, rid: SchemaId, pid: NodeId) -> Resolved {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.resolve_inner(wid, rid, pid))
    }

    fn resolve_inner(&mut self, wid: SchemaId, rid: SchemaId, pid: NodeId) -> Resolved {
        let key = (wid, rid, pid);
        if let Some(&index) = self.memo.get(&key) {
            return Ok(index);
        }
        let plan = self.binding.plan;
        if let Node::Extension(spec) = plan.node(pid) {
            // The wire value, then the extension's decode function.
            let index = self.emit(ReadOp::Null);
            self.remember(key, index);
            let inner = self.resolve(wid, rid, spec.wire)?;
            self.ops[index] = ReadOp::Extension { inner, plan: pid };
            return Ok(index);
        }
        let writer = self.writer;
        let reader = self.binding.reader;
        let w = writer.node(wid);
        let r = reader.node(rid);
        if let Kind::Union { branches } = &w.kind {
            let index = self.emit(ReadOp::Null);
            self.remember(key, index);
            let mut ops = Vec::with_capacity(branches.len());
            for &branch in branches {
                let mark = self.ops.len();
                let op = match self.resolve(branch, rid, pid) {
                    Ok(op) => op,
                    Err(refusal) => {
                        self.roll_back(mark);
                        self.emit(ReadOp::Error(refusal.message()))
                    }
                };
                ops.push(op);
            }
            self.ops[index] = ReadOp::Union(ops);
            return Ok(index);
        }
        if let Kind::Union { branches } = &r.kind {
            return self.read_as_union_branch(wid, branches, rid);
        }
        // Outside unions the position says which type is meant, so named types need not
        // have the same name (names and aliases choose between the branches of a union).
        match (&w.kind, &r.kind) {
            (Kind::Record { fields: wfields }, Kind::Record { fields: rfields }) => {
                self.record(key, wfields, rfields, pid)
            }
            (
                Kind::Enum { symbols, .. },
                Kind::Enum {
                    symbols: reader_symbols,
                    default,
                },
            ) => {
                let Node::Enum(spec) = plan.node(pid) else {
                    return Err(self.cannot(w, r));
                };
                let default_name = default.map(|d| reader_symbols[d as usize].as_str());
                let position = |name: &str| spec.members.iter().position(|m| m.name == name);
                let members = symbols
                    .iter()
                    .map(|symbol| position(symbol).or_else(|| default_name.and_then(position)))
                    .collect();
                let index = self.emit(ReadOp::Enum {
                    plan: pid,
                    members,
                    symbols: symbols.clone(),
                });
                self.remember(key, index);
                Ok(index)
            }
            (Kind::Record { .. } | Kind::Enum { .. }, _) => Err(self.cannot(w, r)),
            (Kind::Array { items: witems }, Kind::Array { items: ritems }) => {
                let item_plan = match plan.node(pid) {
                    Node::Sequence(spec) => spec.item,
                    _ => return Err(self.cannot(w, r)),
                };
                let index = self.emit(ReadOp::Null);
                self.remember(key, index);
                self.steps.push(None);
                let item = self.resolve(*witems, *ritems, item_plan);
                self.steps.pop();
                self.ops[index] = ReadOp::Array {
                    item: item?,
                    plan: pid,
                };
                Ok(index)
            }
            (Kind::Array { .. }, _) => {
                Err(self.refuse(format!("writer array cannot be read as {}", r.describe())))
            }
            (Kind::Map { values: wvalues }, Kind::Map { values: rvalues }) => {
                let value_plan = match plan.node(pid) {
                    Node::Dict(spec) => spec.value,
                    _ => return Err(self.cannot(w, r)),
                };
                let index = self.emit(ReadOp::Null);
                self.remember(key, index);
                self.steps.push(None);
                let value = self.resolve(*wvalues, *rvalues, value_plan);
                self.steps.pop();
                self.ops[index] = ReadOp::Map {
                    value: value?,
                    plan: pid,
                };
                Ok(index)
            }
            (Kind::Map { .. }, _) => {
                Err(self.refuse(format!("writer map cannot be read as {}", r.describe())))
            }
            _ => {
                let op = self.scalar(w, r, pid)?;
                let index = self.emit(op);
                self.remember(key, index);
                Ok(index)
            }
        }
    }

    /// A non-union writer read as the first branch of the reader union that matches it, else
    /// the first it promotes to, else (a record, enum or fixed) the union's only branch of its
    /// kind.
    fn read_as_union_branch(
        &mut self,
        wid: SchemaId,
        branches: &[SchemaId],
        rid: SchemaId,
    ) -> Resolved {
        let reader = self.binding.reader;
        let w = self.writer.node(wid);
        let empty = Vec::new();
        let targets = self.binding.branch_plan.get(&rid).unwrap_or(&empty);
        let target = |i: usize| targets.get(i).copied().flatten();
        for (i, &branch) in branches.iter().enumerate() {
            if let Some(plan) = target(i) {
                if matches(w, reader.node(branch)) {
                    return self.resolve(wid, branch, plan);
                }
            }
        }
        for (i, &branch) in branches.iter().enumerate() {
            if let Some(plan) = target(i) {
                let r = reader.node(branch);
                if promotes_to(&w.kind, &r.kind)
                    && w.logical == Logical::None
                    && r.logical == Logical::None
                {
                    return self.resolve(wid, branch, plan);
                }
            }
        }
        if is_named(w) {
            let same: Vec<usize> = branches
                .iter()
                .enumerate()
                .filter(|(i, b)| same_kind(&reader.node(**b).kind, &w.kind) && target(*i).is_some())
                .map(|(i, _)| i)
                .collect();
            if let [i] = same[..] {
                if let Some(plan) = target(i) {
                    return self.resolve(wid, branches[i], plan);
                }
            }
        }
        Err(self.refuse(format!(
            "writer {} matches no branch of the reader union",
            w.describe()
        )))
    }

    fn record(
        &mut self,
        key: (SchemaId, SchemaId, NodeId),
        wfields: &[polycodec_formats::avro::schema::Field],
        rfields: &[polycodec_formats::avro::schema::Field],
        pid: NodeId,
    ) -> Resolved {
        let plan = self.binding.plan;
        let Node::Record(spec) = plan.node(pid) else {
            return Err(self.refuse("internal: a record bound to a plan node that is not one"));
        };
        let order: &[usize] = match self.binding.write_ops.get(pid) {
            Some(Some(WriteOp::Record(order))) => order,
            _ => &[],
        };
        let index = self.emit(ReadOp::Null);
        self.remember(key, index);
        let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(rfields.len());
        for (i, field) in rfields.iter().enumerate() {
            by_name.insert(field.name.as_str(), i);
        }
        for (i, field) in rfields.iter().enumerate() {
            for alias in &field.aliases {
                by_name.entry(alias.as_str()).or_insert(i);
            }
        }
        let mut used = vec![false; rfields.len()];
        let mut fields = Vec::with_capacity(wfields.len());
        for wfield in wfields {
            let found = by_name
                .get(wfield.name.as_str())
                .copied()
                .filter(|&position| !used[position]);
            let (Some(position), Some(&field_index)) =
                (found, found.and_then(|position| order.get(position)))
            else {
                let skip = self.skip(wfield.schema);
                fields.push((None, skip));
                continue;
            };
            used[position] = true;
            let Some(field) = spec.fields.get(field_index) else {
                return Err(self.refuse("internal: a record field outside its plan"));
            };
            self.steps.push(Some(field.wire_name.clone()));
            let op = self.resolve(wfield.schema, rfields[position].schema, field.node);
            self.steps.pop();
            fields.push((Some(field_index), op?));
        }
        for (position, rfield) in rfields.iter().enumerate() {
            if used[position] {
                continue;
            }
            let has_default = order
                .get(position)
                .and_then(|&i| spec.fields.get(i))
                .is_some_and(|field| {
                    matches!(
                        field.default,
                        FieldDefault::Value(_) | FieldDefault::Factory(_)
                    )
                });
            if !has_default {
                return Err(self.refuse(format!(
                    "reader field `{}` is missing from the writer schema and has no default",
                    rfield.name
                )));
            }
        }
        self.ops[index] = ReadOp::Record {
            plan: pid,
            fields,
            direct: false,
        };
        Ok(index)
    }

    fn scalar(&self, w: &SchemaNode, r: &SchemaNode, pid: NodeId) -> Result<ReadOp, Refusal> {
        let plan = self.binding.plan;
        let write_op = self.binding.write_ops.get(pid).and_then(Option::as_ref);
        let bad = || self.cannot(w, r);
        match (&w.kind, w.logical) {
            (Kind::Null, _) => {
                if !matches!(r.kind, Kind::Null) {
                    return Err(bad());
                }
                // Null read as a field's UNSET alternative is UNSET.
                return Ok(if matches!(plan.node(pid), Node::Unset) {
                    ReadOp::Unset
                } else {
                    ReadOp::Null
                });
            }
            (Kind::Boolean, _) => {
                return match r.kind {
                    Kind::Boolean => Ok(ReadOp::Boolean(pid)),
                    _ => Err(bad()),
                }
            }
            _ => {}
        }
        match write_op {
            Some(WriteOp::Timestamp { local, .. }) => {
                return match UNITS.iter().find(|(l, _, _)| *l == w.logical) {
                    Some((_, unit, is_local))
                        if matches!(w.kind, Kind::Long) && is_local == local =>
                    {
                        Ok(ReadOp::Timestamp {
                            unit: *unit,
                            local: *local,
                            plan: pid,
                        })
                    }
                    _ => Err(bad()),
                };
            }
            Some(WriteOp::Date) => {
                return match (&w.kind, w.logical) {
                    (Kind::Int, Logical::Date) => Ok(ReadOp::Date(pid)),
                    _ => Err(bad()),
                };
            }
            Some(WriteOp::Time { .. }) => {
                return match (&w.kind, w.logical) {
                    (Kind::Long, Logical::TimeMicros) => Ok(ReadOp::Time { unit: 1, plan: pid }),
                    (Kind::Int, Logical::TimeMillis) => Ok(ReadOp::Time {
                        unit: 1000,
                        plan: pid,
                    }),
                    _ => Err(bad()),
                };
            }
            Some(WriteOp::UuidString | WriteOp::UuidFixed) => {
                return match (&w.kind, w.logical) {
                    (Kind::String, Logical::Uuid) => Ok(ReadOp::Text(pid)),
                    (Kind::Fixed { size: 16 }, Logical::Uuid) => Ok(ReadOp::UuidFixed(pid)),
                    _ => Err(bad()),
                };
            }
            Some(op @ (WriteOp::Decimal { .. } | WriteOp::DecimalString)) => {
                return match (&w.kind, w.logical) {
                    (Kind::Bytes | Kind::Fixed { .. }, Logical::Decimal { scale, .. }) => {
                        if let WriteOp::Decimal { scale: own, .. } = op {
                            if *own != scale {
                                return Err(self.refuse("decimal scales differ"));
                            }
                        }
                        Ok(ReadOp::Decimal {
                            scale,
                            size: match w.kind {
                                Kind::Fixed { size } => Some(size),
                                _ => None,
                            },
                            plan: pid,
                        })
                    }
                    (Kind::String, Logical::None) if matches!(op, WriteOp::DecimalString) => {
                        Ok(ReadOp::Text(pid))
                    }
                    _ => Err(bad()),
                };
            }
            _ => {}
        }
        match &w.kind {
            Kind::Int | Kind::Long => {
                // A date or timestamp is not read into a plain int or float field.
                if promotes_to(&w.kind, &r.kind) && w.logical == Logical::None {
                    Ok(ReadOp::Long(pid))
                } else {
                    Err(bad())
                }
            }
            Kind::Float => match r.kind {
                Kind::Float | Kind::Double => Ok(ReadOp::Float(pid)),
                _ => Err(bad()),
            },
            Kind::Double => match r.kind {
                Kind::Double => Ok(ReadOp::Double(pid)),
                _ => Err(bad()),
            },
            Kind::String | Kind::Bytes => {
                if matches!(w.logical, Logical::Decimal { .. } | Logical::Uuid) {
                    return Err(bad());
                }
                match r.kind {
                    Kind::String | Kind::Bytes => Ok(ReadOp::Text(pid)),
                    _ => Err(bad()),
                }
            }
            Kind::Fixed { size } => match r.kind {
                Kind::Fixed { size: theirs } if theirs == *size => Ok(ReadOp::Fixed(*size, pid)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    /// An op that reads past a writer value nobody reads, checking it as a read one is.
    fn skip(&mut self, wid: SchemaId) -> usize {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.skip_inner(wid))
    }

    fn skip_inner(&mut self, wid: SchemaId) -> usize {
        if let Some(&index) = self.skip_memo.get(&wid) {
            return index;
        }
        let writer = self.writer;
        let op = match &writer.node(wid).kind {
            Kind::Null => ReadOp::SkipFixed(0),
            Kind::Boolean => ReadOp::SkipFixed(1),
            Kind::Float => ReadOp::SkipFixed(4),
            Kind::Double => ReadOp::SkipFixed(8),
            Kind::Int | Kind::Long | Kind::Enum { .. } => ReadOp::SkipVarint,
            Kind::String => ReadOp::SkipString,
            Kind::Bytes => ReadOp::SkipBytes,
            Kind::Fixed { size } => ReadOp::SkipFixed(*size),
            Kind::Array { items } => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                self.ops[index] = ReadOp::SkipArray(self.skip(*items));
                return index;
            }
            Kind::Map { values } => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                self.ops[index] = ReadOp::SkipMap(self.skip(*values));
                return index;
            }
            Kind::Record { fields } => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                let ops = fields.iter().map(|f| self.skip(f.schema)).collect();
                self.ops[index] = ReadOp::SkipRecord(ops);
                return index;
            }
            Kind::Union { branches } => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                let ops = branches.iter().map(|b| self.skip(*b)).collect();
                self.ops[index] = ReadOp::SkipUnion(ops);
                return index;
            }
            Kind::Reference(_) => ReadOp::SkipFixed(0),
        };
        let index = self.emit(op);
        self.remember_skip(wid, index);
        index
    }
}

/// Whether reader branch `r` is the one a writer `w` is read as: the same type, and for a
/// named type the same name (full, short, or an alias of the reader's), else the same logical
/// type (arrays and maps match whatever their contents).
fn matches(w: &SchemaNode, r: &SchemaNode) -> bool {
    if !same_kind(&w.kind, &r.kind) {
        return false;
    }
    if let (Some(wname), Some(named)) = (w.fullname(), &r.named) {
        let wshort = short(wname);
        return wname == named.fullname
            || wshort == short(&named.fullname)
            || named
                .aliases
                .iter()
                .any(|a| a == wname || short(a) == wshort);
    }
    matches!(w.kind, Kind::Array { .. } | Kind::Map { .. }) || w.logical == r.logical
}

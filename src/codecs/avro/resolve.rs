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
use polycodec_formats::avro::schema::{Field, Logical, Node as SchemaNode, NodeId as SchemaId};

use super::ops::{ReadOp, Slot, WriteOp};
use crate::errors::{Code, Error};
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
        let error = Error::decode(
            Code::DecodeError,
            format!("cannot read the writer schema: {}", self.reason),
        );
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

/// The specification's promotions (and no change), logical types aside.
fn promotes_to(writer: &SchemaNode, reader: &SchemaNode) -> bool {
    use SchemaNode as N;
    matches!(
        (writer, reader),
        (N::Int(_), N::Int(_) | N::Long(_) | N::Float | N::Double)
            | (N::Long(_), N::Long(_) | N::Float | N::Double)
            | (N::Float, N::Float | N::Double)
            | (N::Double, N::Double)
            | (N::String(_), N::String(_) | N::Bytes(_))
            | (N::Bytes(_), N::Bytes(_) | N::String(_))
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

    fn cannot(&self, wid: SchemaId, rid: SchemaId) -> Refusal {
        self.refuse(format!(
            "writer {} cannot be read as {}",
            self.writer.describe(wid),
            self.binding.reader.describe(rid)
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
        if let SchemaNode::Union(branches) = writer.node(wid) {
            let index = self.emit(ReadOp::Null);
            self.remember(key, index);
            let mut ops = Vec::with_capacity(branches.len());
            for &branch in branches.iter() {
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
        if let SchemaNode::Union(branches) = reader.node(rid) {
            return self.read_as_union_branch(wid, branches, rid);
        }
        // Outside unions the position says which type is meant, so named types need not
        // have the same name (names and aliases choose between the branches of a union).
        match (writer.node(wid), reader.node(rid)) {
            (SchemaNode::Record(w), SchemaNode::Record(r)) => {
                self.record(key, &w.fields, &r.fields, pid)
            }
            (SchemaNode::Enum(w), SchemaNode::Enum(r)) => {
                let Node::Enum(spec) = plan.node(pid) else {
                    return Err(self.cannot(wid, rid));
                };
                let default = r.default.map(|d| reader.text(r.symbols[d as usize]));
                let position = |name: &str| spec.members.iter().position(|m| m.name == name);
                let symbols: Vec<String> = w
                    .symbols
                    .iter()
                    .map(|s| writer.text(*s).to_string())
                    .collect();
                let members = symbols
                    .iter()
                    .map(|symbol| position(symbol).or_else(|| default.and_then(position)))
                    .collect();
                let index = self.emit(ReadOp::Enum {
                    plan: pid,
                    members,
                    symbols,
                });
                self.remember(key, index);
                Ok(index)
            }
            (SchemaNode::Record(_) | SchemaNode::Enum(_), _) => Err(self.cannot(wid, rid)),
            (SchemaNode::Array(witems), SchemaNode::Array(ritems)) => {
                let item_plan = match plan.node(pid) {
                    Node::Sequence(spec) => spec.item,
                    _ => return Err(self.cannot(wid, rid)),
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
            (SchemaNode::Array(_), _) => Err(self.refuse(format!(
                "writer array cannot be read as {}",
                reader.describe(rid)
            ))),
            (SchemaNode::Map(wvalues), SchemaNode::Map(rvalues)) => {
                let value_plan = match plan.node(pid) {
                    Node::Dict(spec) => spec.value,
                    _ => return Err(self.cannot(wid, rid)),
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
            (SchemaNode::Map(_), _) => Err(self.refuse(format!(
                "writer map cannot be read as {}",
                reader.describe(rid)
            ))),
            _ => {
                let op = self.scalar(wid, rid, pid)?;
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
        let writer = self.writer;
        let w = writer.node(wid);
        let empty = Vec::new();
        let targets = self.binding.branch_plan.get(&rid).unwrap_or(&empty);
        let target = |i: usize| targets.get(i).copied().flatten();
        for (i, &branch) in branches.iter().enumerate() {
            if let Some(plan) = target(i) {
                if self.matches(wid, branch) {
                    return self.resolve(wid, branch, plan);
                }
            }
        }
        for (i, &branch) in branches.iter().enumerate() {
            if let Some(plan) = target(i) {
                let r = reader.node(branch);
                if promotes_to(w, r) && w.logical() == Logical::None && r.logical() == Logical::None
                {
                    return self.resolve(wid, branch, plan);
                }
            }
        }
        if w.named().is_some() {
            let same: Vec<usize> = branches
                .iter()
                .enumerate()
                .filter(|(i, b)| reader.node(**b).same_type(w) && target(*i).is_some())
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
            writer.describe(wid)
        )))
    }

    /// Whether reader branch `rid` is the one a writer `wid` is read as: the same type, and for
    /// a named type the same name (full, short, or an alias of the reader's), else the same
    /// logical type (arrays and maps match whatever their contents).
    fn matches(&self, wid: SchemaId, rid: SchemaId) -> bool {
        let (writer, reader) = (self.writer, self.binding.reader);
        let (w, r) = (writer.node(wid), reader.node(rid));
        if !w.same_type(r) {
            return false;
        }
        if let (Some(wname), Some(named)) = (writer.fullname(wid), r.named()) {
            let rname = reader.text(named.name);
            let wshort = short(wname);
            return wname == rname
                || wshort == short(rname)
                || named.aliases.iter().any(|alias| {
                    let alias = reader.text(*alias);
                    alias == wname || short(alias) == wshort
                });
        }
        matches!(w, SchemaNode::Array(_) | SchemaNode::Map(_)) || w.logical() == r.logical()
    }

    fn record(
        &mut self,
        key: (SchemaId, SchemaId, NodeId),
        wfields: &[Field],
        rfields: &[Field],
        pid: NodeId,
    ) -> Resolved {
        let (writer, reader) = (self.writer, self.binding.reader);
        let plan = self.binding.plan;
        let Node::Record(spec) = plan.node(pid) else {
            return Err(self.refuse("internal: a record bound to a plan node that is not one"));
        };
        let order: &[Slot] = match self.binding.write_ops.get(pid) {
            Some(Some(WriteOp::Record(order))) => order,
            _ => &[],
        };
        let index = self.emit(ReadOp::Null);
        self.remember(key, index);
        let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(rfields.len());
        for (i, field) in rfields.iter().enumerate() {
            by_name.insert(reader.text(field.name), i);
        }
        for (i, field) in rfields.iter().enumerate() {
            for alias in reader.aliases_of(field) {
                by_name.entry(reader.text(*alias)).or_insert(i);
            }
        }
        let mut used = vec![false; rfields.len()];
        let mut fields = Vec::with_capacity(wfields.len());
        for wfield in wfields {
            let found = by_name
                .get(writer.text(wfield.name))
                .copied()
                .filter(|&position| !used[position]);
            let (Some(position), Some(field_index)) = (
                found,
                found.and_then(|position| order.get(position)?.field()),
            ) else {
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
            // A reader field no class field reads (its schema default was written instead)
            // needs nothing from the writer.
            let Some(field_index) = order.get(position).and_then(Slot::field) else {
                continue;
            };
            if used[position] {
                continue;
            }
            let has_default = spec.fields.get(field_index).is_some_and(|field| {
                matches!(
                    field.default,
                    FieldDefault::Value(_) | FieldDefault::Factory(_)
                )
            });
            if !has_default {
                return Err(self.refuse(format!(
                    "reader field `{}` is missing from the writer schema and has no default",
                    reader.text(rfield.name)
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

    fn scalar(&self, wid: SchemaId, rid: SchemaId, pid: NodeId) -> Result<ReadOp, Refusal> {
        use SchemaNode as N;
        let plan = self.binding.plan;
        let w = self.writer.node(wid);
        let r = self.binding.reader.node(rid);
        let write_op = self.binding.write_ops.get(pid).and_then(Option::as_ref);
        let bad = || self.cannot(wid, rid);
        match w {
            N::Null => {
                if !matches!(r, N::Null) {
                    return Err(bad());
                }
                // Null read as a field's UNSET alternative is UNSET.
                return Ok(if matches!(plan.node(pid), Node::Unset) {
                    ReadOp::Unset
                } else {
                    ReadOp::Null
                });
            }
            N::Boolean => {
                return match r {
                    N::Boolean => Ok(ReadOp::Boolean(pid)),
                    _ => Err(bad()),
                }
            }
            _ => {}
        }
        let logical = w.logical();
        match write_op {
            Some(WriteOp::Timestamp { local, .. }) => {
                return match UNITS.iter().find(|(l, _, _)| *l == logical) {
                    Some((_, unit, is_local)) if matches!(w, N::Long(_)) && is_local == local => {
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
                return match w {
                    N::Int(Logical::Date) => Ok(ReadOp::Date(pid)),
                    _ => Err(bad()),
                };
            }
            Some(WriteOp::Time { .. }) => {
                return match w {
                    N::Long(Logical::TimeMicros) => Ok(ReadOp::Time { unit: 1, plan: pid }),
                    N::Int(Logical::TimeMillis) => Ok(ReadOp::Time {
                        unit: 1000,
                        plan: pid,
                    }),
                    _ => Err(bad()),
                };
            }
            Some(WriteOp::UuidString | WriteOp::UuidFixed) => {
                return match w {
                    N::String(Logical::Uuid) => Ok(ReadOp::Text(pid)),
                    N::Fixed(fixed) if fixed.size == 16 && fixed.logical == Logical::Uuid => {
                        Ok(ReadOp::UuidFixed(pid))
                    }
                    _ => Err(bad()),
                };
            }
            Some(op @ (WriteOp::Decimal { .. } | WriteOp::DecimalString)) => {
                return match (w, logical) {
                    (N::Bytes(_) | N::Fixed(_), Logical::Decimal { scale, .. }) => {
                        if let WriteOp::Decimal { scale: own, .. } = op {
                            if *own != scale {
                                return Err(self.refuse("decimal scales differ"));
                            }
                        }
                        Ok(ReadOp::Decimal {
                            scale,
                            size: match w {
                                N::Fixed(fixed) => Some(fixed.size),
                                _ => None,
                            },
                            plan: pid,
                        })
                    }
                    (N::String(Logical::None), _) if matches!(op, WriteOp::DecimalString) => {
                        Ok(ReadOp::Text(pid))
                    }
                    _ => Err(bad()),
                };
            }
            _ => {}
        }
        match w {
            N::Int(_) | N::Long(_) => {
                // A date or timestamp is not read into a plain int or float field.
                if promotes_to(w, r) && logical == Logical::None {
                    Ok(ReadOp::Long(pid))
                } else {
                    Err(bad())
                }
            }
            N::Float => match r {
                N::Float | N::Double => Ok(ReadOp::Float(pid)),
                _ => Err(bad()),
            },
            N::Double => match r {
                N::Double => Ok(ReadOp::Double(pid)),
                _ => Err(bad()),
            },
            N::String(_) | N::Bytes(_) => {
                if matches!(logical, Logical::Decimal { .. } | Logical::Uuid) {
                    return Err(bad());
                }
                match r {
                    N::String(_) | N::Bytes(_) => Ok(ReadOp::Text(pid)),
                    _ => Err(bad()),
                }
            }
            N::Fixed(fixed) => match r {
                N::Fixed(theirs) if theirs.size == fixed.size => Ok(ReadOp::Fixed(fixed.size, pid)),
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
        use SchemaNode as N;
        if let Some(&index) = self.skip_memo.get(&wid) {
            return index;
        }
        let writer = self.writer;
        let op = match writer.node(wid) {
            N::Null => ReadOp::SkipFixed(0),
            N::Boolean => ReadOp::SkipFixed(1),
            N::Float => ReadOp::SkipFixed(4),
            N::Double => ReadOp::SkipFixed(8),
            N::Int(_) | N::Long(_) | N::Enum(_) => ReadOp::SkipVarint,
            N::String(_) => ReadOp::SkipString,
            N::Bytes(_) => ReadOp::SkipBytes,
            N::Fixed(fixed) => ReadOp::SkipFixed(fixed.size),
            N::Array(items) => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                self.ops[index] = ReadOp::SkipArray(self.skip(*items));
                return index;
            }
            N::Map(values) => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                self.ops[index] = ReadOp::SkipMap(self.skip(*values));
                return index;
            }
            N::Record(record) => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                let ops = record.fields.iter().map(|f| self.skip(f.schema)).collect();
                self.ops[index] = ReadOp::SkipRecord(ops);
                return index;
            }
            N::Union(branches) => {
                let index = self.emit(ReadOp::SkipFixed(0));
                self.remember_skip(wid, index);
                let ops = branches.iter().map(|b| self.skip(*b)).collect();
                self.ops[index] = ReadOp::SkipUnion(ops);
                return index;
            }
        };
        let index = self.emit(op);
        self.remember_skip(wid, index);
        index
    }
}

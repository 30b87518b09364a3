//! The safe typed unpickler: converts the inert arena the pickle machine built (`vm.rs`) into
//! Python objects, led by the plan. A call node becomes an object only where the plan expects
//! exactly that class or standard constructor; everything else is refused with a DecodeError,
//! and no module is imported and no callable the pickle provides is ever called. Objects are
//! created the way the other formats create them (records through `RecordBuilder`, from the
//! plan's own class objects) or by a fixed list of standard constructors (datetime types,
//! `Decimal(str)`, `UUID` from its int, `ZoneInfo(key)`), never through a global's name.
//!
//! The format's `decode` (`mod.rs`) first tries the single-pass fast path (`from_opcodes.rs`); this
//! two-step path decodes whatever it does not recognise, and is the one that reports every
//! error.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyDelta, PyDict, PyInt, PyTzInfo, PyTzInfoAccess};

use super::recognise::{
    is_latin1_encoding, make_bytes, module_alias, uuid_bits, DateState, DateTimeState, Standard,
    TimeDeltaArgError, TimeDeltaArgs, TimeState, UuidKey, ZONEINFO_UNPICKLE,
};
use super::vm::{self, Arena, CallKind, Id, Value};
use super::{KeyMap, Pickle, StateForm};
use crate::errors::{Code, Error, Result};
use crate::plan::{
    BytesSpec, EnumSpec, LengthBounds, Node, NodeId, Plan, RecordKind, RecordSpec, SequenceKind,
};
use crate::py::{self, Obj};
use crate::values::{check_tz, nested, unknown_field, Decoding, RecordBuilder, MAX_DEPTH};

/// One value by the general two-step path alone (the fast path's fallback).
pub(super) fn decode_one<'py>(
    fmt: &Pickle,
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    input: &[u8],
) -> Result<Obj<'py>> {
    let (arena, root) = vm::run(input).map_err(machine_error)?;
    let mut converter = Converter::new(fmt, py, plan, strict, &arena);
    converter.value(root, plan.root)
}

/// A pickled list (or tuple) of root-type values by the general two-step path alone.
pub(super) fn decode_many<'py>(
    fmt: &Pickle,
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    input: &[u8],
) -> Result<Obj<'py>> {
    let (arena, root) = vm::run(input).map_err(machine_error)?;
    let mut converter = Converter::new(fmt, py, plan, strict, &arena);
    let items = match arena.get(root) {
        Value::List(items) => items.as_slice(),
        Value::Tuple(items) => items.as_slice(),
        other => {
            return Err(Error::validation(
                Code::ListType,
                format!(
                    "expected a pickled list for decode_many, got {}",
                    kind_name(other)
                ),
            ))
        }
    };
    let mut out = Vec::new();
    crate::errors::reserve(&mut out, items.len(), ITEMS)?;
    for (index, &item) in items.iter().enumerate() {
        out.push(
            converter
                .value(item, plan.root)
                .map_err(|e| e.at_index(index))?,
        );
    }
    Ok(crate::py::new_list(py, out.into_iter())?.into_any())
}

/// What a failed allocation of a sequence's items says (a MemoryError).
const ITEMS: &str = "the items of a pickled sequence";

#[cold]
fn machine_error(err: vm::VmError) -> Error {
    if err.out_of_memory {
        return Error::from(pyo3::exceptions::PyMemoryError::new_err(
            "cannot allocate memory for the values of the pickle",
        ));
    }
    Error::decode(
        Code::PickleInvalid,
        format!("malformed pickle: {} at byte {}", err.message, err.offset),
    )
}

fn kind_name(value: &Value<'_>) -> &'static str {
    match value {
        Value::None => "None",
        Value::Bool(_) => "bool",
        Value::Int(_) | Value::BigInt(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "str",
        Value::Bytes(_) => "bytes",
        Value::ByteArray(_) => "bytearray",
        Value::List(_) => "list",
        Value::Tuple(_) => "tuple",
        Value::Dict(_) => "dict",
        Value::Set(_) => "set",
        Value::FrozenSet(_) => "frozenset",
        Value::Global { .. } => "a bare global",
        Value::Call { .. } => "an object",
    }
}

/// Names and text from the pickle as messages show them: bounded (see `errors::cut_bytes`).
fn show(bytes: &[u8]) -> Cow<'_, str> {
    Cow::Owned(crate::errors::cut_bytes(bytes))
}

fn text(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes)
        .map_err(|_| Error::decode(Code::PickleInvalid, "malformed pickle: a str is not UTF-8"))
}

/// A call node taken apart.
#[derive(Clone, Copy)]
struct Call<'a> {
    kind: CallKind,
    func: Id,
    /// The global called, when the callable is a global.
    target: Option<(&'a [u8], &'a [u8])>,
    args: Id,
    kwargs: Option<Id>,
    state: Option<Id>,
}

struct Converter<'a, 'v, 'f, 'p, 'py> {
    arena: &'v Arena<'a>,
    fmt: &'f Pickle,
    ctx: Decoding<'p, 'py>,
    depth: usize,
    /// Values referenced more than once, converted once per plan node: `None` while in
    /// progress, so a cycle is detected instead of followed.
    shared: KeyMap<(Id, NodeId), Option<Obj<'py>>>,
    zones: KeyMap<Id, Bound<'py, PyTzInfo>>,
    /// How many values Python may still visit while hashing set items and dict keys (see
    /// `charge_hash`), and the unfolded sizes of shared values already measured.
    hash_budget: u64,
    sizes: KeyMap<Id, u64>,
}

impl<'a, 'v, 'f, 'p, 'py> Converter<'a, 'v, 'f, 'p, 'py> {
    fn new(
        fmt: &'f Pickle,
        py: Python<'py>,
        plan: &'p Plan,
        strict: bool,
        arena: &'v Arena<'a>,
    ) -> Self {
        Converter {
            arena,
            fmt,
            ctx: Decoding { py, plan, strict },
            depth: 0,
            shared: KeyMap::default(),
            zones: KeyMap::default(),
            hash_budget: 4 * arena.values.len() as u64 + 4096,
            sizes: KeyMap::default(),
        }
    }

    /// Charges the hashing of a set item or dict key against a budget linear in the input.
    /// Python hashes a tuple (or a frozen dataclass) by hashing everything inside it, with no
    /// cache, so a few shared tuples nested in each other (`t1 = (t0, t0)`, `t2 = (t1, t1)`,
    /// ...) would take 2**depth steps to hash: `pickle.loads` hangs on them, polycodec refuses.
    fn charge_hash(&mut self, id: Id) -> Result<()> {
        if !matches!(
            self.arena.get(id),
            Value::Tuple(_) | Value::FrozenSet(_) | Value::Call { .. }
        ) {
            return Ok(());
        }
        let size = self.unfolded_size(id, 0);
        if size > self.hash_budget {
            return Err(Error::decode(
                Code::DecodeError,
                "the pickle's shared structure would make hashing its set items or dict keys \
                 take time exponential in its size",
            ));
        }
        self.hash_budget -= size;
        Ok(())
    }

    /// The number of values in `id` with every shared value counted at each place it is
    /// referenced, saturating at `u64::MAX` (also for cycles and for depths past the limit).
    fn unfolded_size(&mut self, id: Id, depth: usize) -> u64 {
        if depth > MAX_DEPTH {
            return u64::MAX;
        }
        let shared = self.arena.shared[id as usize];
        if shared {
            if let Some(&size) = self.sizes.get(&id) {
                return size;
            }
            // Provisional, so a cycle back to this value saturates instead of recursing.
            self.sizes.insert(id, u64::MAX);
        }
        let arena: &'v Arena<'a> = self.arena;
        let size = nested(depth, || match arena.get(id) {
            value @ (Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::FrozenSet(_)) => {
                let items = value.items().unwrap_or_default();
                items.iter().fold(1u64, |total, &item| {
                    total.saturating_add(self.unfolded_size(item, depth + 1))
                })
            }
            Value::Dict(entries) => entries.iter().fold(1u64, |total, &(key, item)| {
                total
                    .saturating_add(self.unfolded_size(key, depth + 1))
                    .saturating_add(self.unfolded_size(item, depth + 1))
            }),
            Value::Call { args, state, .. } => {
                let mut total = 1u64.saturating_add(self.unfolded_size(*args, depth + 1));
                if let Some(state) = state {
                    total = total.saturating_add(self.unfolded_size(*state, depth + 1));
                }
                total
            }
            _ => 1,
        });
        if shared {
            self.sizes.insert(id, size);
        }
        size
    }

    fn value(&mut self, id: Id, node: NodeId) -> Result<Obj<'py>> {
        if !self.arena.shared[id as usize] {
            if let Some(done) = self.plain_scalar(id, node) {
                return done;
            }
            return self.convert(id, node);
        }
        match self.shared.get(&(id, node)) {
            Some(Some(done)) => return Ok(done.clone()),
            Some(None) => {
                return Err(Error::decode(
                    Code::DecodeError,
                    "the pickle holds a recursive structure (an object containing itself)",
                ))
            }
            None => {}
        }
        self.shared.insert((id, node), None);
        let result = self.convert(id, node);
        match &result {
            Ok(done) => self.shared.insert((id, node), Some(done.clone())),
            Err(_) => self.shared.remove(&(id, node)),
        };
        result
    }

    /// The common scalar fields without the general dispatch: a str, int, float or bool at a
    /// position of exactly that type with no constraint. `None` when the general path decides.
    #[inline]
    fn plain_scalar(&self, id: Id, node: NodeId) -> Option<Result<Obj<'py>>> {
        let py = self.ctx.py;
        match (self.arena.get(id), self.ctx.plan.node(node)) {
            (Value::Str(bytes), Node::Str(spec)) if spec.is_unconstrained() && bytes.is_ascii() => {
                Some(py::new_str(py, bytes, true).map_err(Error::from))
            }
            (Value::Int(number), Node::Int(bounds)) if *bounds == Default::default() => {
                Some(py::new_int(py, *number).map_err(Error::from))
            }
            (Value::Float(number), Node::Float(bounds)) if *bounds == Default::default() => {
                Some(py::new_float(py, *number).map_err(Error::from))
            }
            (Value::Bool(flag), Node::Bool) => Some(Ok(pyo3::types::PyBool::new(py, *flag)
                .to_owned()
                .into_any())),
            _ => None,
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::decode(
                Code::RecursionLoop,
                format!("pickle nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    /// Runs one nesting level (containers, records) with the depth guard.
    fn level(&mut self, f: impl FnOnce(&mut Self) -> Result<Obj<'py>>) -> Result<Obj<'py>> {
        self.enter()?;
        let result = nested(self.depth, || f(self));
        self.depth -= 1;
        result
    }

    fn call_parts(&self, id: Id) -> Option<Call<'a>> {
        match self.arena.get(id) {
            Value::Call {
                kind,
                func,
                args,
                kwargs,
                state,
            } => Some(Call {
                kind: *kind,
                func: *func,
                target: self.global(*func),
                args: *args,
                kwargs: *kwargs,
                state: *state,
            }),
            _ => None,
        }
    }

    fn global(&self, id: Id) -> Option<(&'a [u8], &'a [u8])> {
        match self.arena.get(id) {
            Value::Global { module, name } => Some((module_alias(module), name)),
            _ => None,
        }
    }

    /// Whether `id` names the class `module`/`qualname`: a global, or (how protocols 2 and 3
    /// name a nested class) `getattr(<its parent>, "<last part>")`, followed through the
    /// qualname's dots without calling anything.
    fn is_class(&self, id: Id, module: &str, qualname: &str) -> bool {
        match self.arena.get(id) {
            Value::Global { .. } => self.is_global(id, module, qualname),
            Value::Call {
                kind: CallKind::Reduce,
                func,
                args,
                kwargs: None,
                state: None,
            } if self.is_standard(*func, Standard::GetAttr) => {
                let Some((parent, last)) = qualname.rsplit_once('.') else {
                    return false;
                };
                match self.tuple_items(*args) {
                    Some([owner, attribute]) => {
                        matches!(self.arena.get(*attribute), Value::Str(name) if *name == last.as_bytes())
                            && self.is_class(*owner, module, parent)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn is_global(&self, id: Id, module: &str, name: &str) -> bool {
        self.global(id)
            .is_some_and(|(m, n)| m == module.as_bytes() && n == name.as_bytes())
    }

    fn is_standard(&self, id: Id, global: Standard) -> bool {
        self.global(id)
            .is_some_and(|(module, name)| global.is(module, name))
    }

    /// The arguments of a call of a standard global, their count checked (`what` names the
    /// call in the error).
    fn standard_args(&self, call: &Call<'_>, global: Standard, what: &str) -> Result<&'v [Id]> {
        let args = self.args(call, what)?;
        if !global.arguments().contains(&args.len()) {
            return Err(Error::decode(
                Code::PickleInvalid,
                format!("malformed pickle: {what} arguments"),
            ));
        }
        Ok(args)
    }

    /// The refusal for a call the plan does not allow at this position.
    fn refused(&self, call: &Call<'_>, node: &Node) -> Error {
        match call.target {
            Some((module, name)) => Error::decode(
                Code::PickleInvalid,
                format!(
                    "pickle refers to {}.{}, which the type does not allow here (expected {})",
                    show(module),
                    show(name),
                    node.describe()
                ),
            ),
            None => Error::decode(
                Code::PickleInvalid,
                format!(
                    "pickle calls a computed callable, which the type does not allow here \
                 (expected {})",
                    node.describe()
                ),
            ),
        }
    }

    fn tuple_items(&self, id: Id) -> Option<&'v [Id]> {
        match self.arena.get(id) {
            Value::Tuple(items) => Some(items.as_slice()),
            _ => None,
        }
    }

    fn mismatch(&self, node: &Node, id: Id) -> Error {
        Error::validation(
            node.type_code(),
            format!("expected {}, got {}", node.describe(), self.describe(id)),
        )
    }

    fn describe(&self, id: Id) -> String {
        match self.call_parts(id) {
            Some(Call {
                target: Some((module, name)),
                ..
            }) => format!("{}.{}", show(module), show(name)),
            _ => kind_name(self.arena.get(id)).to_owned(),
        }
    }

    // ---- dispatch ----

    fn convert(&mut self, id: Id, node_id: NodeId) -> Result<Obj<'py>> {
        let node_id = self.resolve(node_id, id)?;
        let plan: &'p Plan = self.ctx.plan;
        let node = plan.node(node_id);
        if let Node::Extension(spec) = node {
            // The wire form, read with the wire type's rules, then the extension's `decode`.
            let wire = self.value(id, spec.wire)?;
            return spec.decode_value(wire);
        }
        let py = self.ctx.py;
        let value = self.arena.get(id);
        if let Node::Any = node {
            return self.any(id);
        }
        match value {
            Value::None => self.ctx.null(node_id),
            Value::Bool(flag) => self.ctx.boolean(node_id, *flag),
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) if matches!(node, Node::Enum(_)) => {
                Err(self.mismatch(node, id))
            }
            Value::Int(number) => self.ctx.int(node_id, *number),
            Value::BigInt(data) => {
                let number = big_int(py, data)?;
                match node {
                    Node::Int(bounds) if *bounds == Default::default() => Ok(number),
                    Node::Int(_) | Node::Float(_) | Node::Decimal(_) => {
                        let digits = number.str()?;
                        self.ctx.big_int(node_id, py::str_utf8(&digits)?)
                    }
                    _ => Err(self.mismatch(node, id)),
                }
            }
            Value::Float(number) => self.ctx.float(node_id, *number, None),
            Value::Str(bytes) => match node {
                Node::Str(_) | Node::Literal(_) => {
                    let ascii = bytes.is_ascii();
                    if ascii || std::str::from_utf8(bytes).is_ok() {
                        match node {
                            Node::Str(spec) if spec.is_unconstrained() => {
                                Ok(py::new_str(py, bytes, ascii)?)
                            }
                            _ => self.ctx.string(node_id, bytes, ascii),
                        }
                    } else if matches!(node, Node::Str(spec) if spec.is_unconstrained()) {
                        surrogate_str(py, bytes)
                    } else {
                        Err(Error::decode(
                            Code::PickleInvalid,
                            "malformed pickle: a str is not UTF-8",
                        ))
                    }
                }
                // Lax mode: numeric and boolean text, as JSON's lax mode reads it.
                Node::Int(_) | Node::Float(_) | Node::Bool if !self.ctx.strict => {
                    self.ctx
                        .string(node_id, text(bytes)?.as_bytes(), bytes.is_ascii())
                }
                _ => Err(self.mismatch(node, id)),
            },
            Value::Bytes(data) | Value::ByteArray(data) => match node {
                Node::Bytes(spec) => make_bytes(py, spec, data),
                _ => Err(self.mismatch(node, id)),
            },
            Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::FrozenSet(_) => {
                let items: &'v [Id] = value.items().unwrap_or_default();
                match node {
                    Node::Sequence(spec) => {
                        self.level(|this| this.sequence(items, spec.item, spec.kind, &spec.length))
                    }
                    Node::Tuple(item_nodes)
                        if matches!(value, Value::Tuple(_) | Value::List(_)) =>
                    {
                        self.level(|this| this.fixed_tuple(items, item_nodes))
                    }
                    Node::Record(spec)
                        if spec.kind == RecordKind::NamedTuple
                            && matches!(value, Value::Tuple(_)) =>
                    {
                        // A bare tuple is what `pickle.dumps` gives for a plain tuple; the
                        // namedtuple form is a NEWOBJ, but the field values are the same.
                        self.level(|this| this.positional_record(spec, items))
                    }
                    _ => Err(self.mismatch(node, id)),
                }
            }
            Value::Dict(entries) => match node {
                Node::Dict(spec) => {
                    self.level(|this| this.dict(entries, spec.key, spec.value, node_id))
                }
                Node::Record(spec) if spec.kind == RecordKind::TypedDict => {
                    self.level(|this| this.typed_dict(node_id, spec, entries))
                }
                _ => Err(self.mismatch(node, id)),
            },
            Value::Global { .. } if matches!(node, Node::Unset) && self.fits(node, id) => plan
                .unset
                .as_ref()
                .map(|unset| unset.bind(py).clone())
                .ok_or_else(|| Error::validation(Code::ValueError, "expected UNSET")),
            Value::Global { module, name } => Err(Error::decode(
                Code::PickleInvalid,
                format!(
                    "pickle holds the global {}.{} as a value, which no type allows",
                    show(module),
                    show(name)
                ),
            )),
            Value::Call { .. } => {
                let call = self.call_parts(id).expect("a call node");
                self.call(node_id, node, &call, id)
            }
        }
    }

    /// The union variant a value takes: the first whose kind (or class) fits.
    fn resolve(&self, node_id: NodeId, id: Id) -> Result<NodeId> {
        let plan = self.ctx.plan;
        let Node::Union(spec) = plan.node(node_id) else {
            return Ok(node_id);
        };
        if let Some(&variant) = spec
            .variants
            .iter()
            .find(|&&variant| self.fits(plan.node(variant), id))
        {
            return Ok(variant);
        }
        if let (Value::Int(_) | Value::BigInt(_), Some(float)) = (self.arena.get(id), spec.float) {
            return Ok(float);
        }
        let names: Vec<&str> = spec
            .variants
            .iter()
            .map(|&v| plan.node(v).describe())
            .collect();
        Err(Error::validation(
            plan.union_code(&spec.variants),
            format!("expected {}, got {}", names.join(" | "), self.describe(id)),
        ))
    }

    fn fits(&self, node: &Node, id: Id) -> bool {
        let value = self.arena.get(id);
        match (node, value) {
            (Node::Any, _) => true,
            (Node::None, Value::None)
            | (Node::Bool, Value::Bool(_))
            | (Node::Int(_), Value::Int(_) | Value::BigInt(_))
            | (Node::Float(_), Value::Float(_))
            | (Node::Str(_), Value::Str(_))
            | (Node::Bytes(_), Value::Bytes(_) | Value::ByteArray(_))
            | (
                Node::Sequence(_),
                Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::FrozenSet(_),
            )
            | (Node::Tuple(_), Value::Tuple(_))
            | (Node::Dict(_), Value::Dict(_)) => true,
            (Node::Record(spec), Value::Dict(_)) => spec.kind == RecordKind::TypedDict,
            // `polycodec.UNSET`, pickled by reference (`UnsetType.__reduce__`).
            (Node::Unset, Value::Global { .. }) => self.is_standard(id, Standard::Unset),
            (Node::Literal(spec), _) => {
                use crate::plan::LiteralValue as L;
                spec.values.iter().any(|(v, _)| {
                    matches!(
                        (v, value),
                        (L::Str(_), Value::Str(_))
                            | (L::Int(_), Value::Int(_))
                            | (L::Bool(_), Value::Bool(_))
                    )
                })
            }
            (_, Value::Call { .. }) => {
                let Some(call) = self.call_parts(id) else {
                    return false;
                };
                self.call_fits(node, &call)
            }
            _ => false,
        }
    }

    fn call_fits(&self, node: &Node, call: &Call<'_>) -> bool {
        let plan = self.ctx.plan;
        let standard = call
            .target
            .and_then(|(module, name)| Standard::of(module, name));
        match node {
            Node::Record(spec) => self.is_class(call.func, &spec.module, &spec.qualname),
            Node::TaggedUnion(spec) => spec.tags.iter().any(|(_, record)| {
                matches!(plan.node(*record),
                    Node::Record(r) if self.is_class(call.func, &r.module, &r.qualname))
            }),
            Node::Enum(spec) => {
                self.is_class(call.func, &spec.module, &spec.name)
                    || (standard == Some(Standard::GetAttr)
                        && self
                            .tuple_items(call.args)
                            .and_then(|items| items.first())
                            .is_some_and(|&cls| self.is_class(cls, &spec.module, &spec.name)))
            }
            _ => standard.is_some_and(|global| global.builds(node)),
        }
    }

    // ---- calls: the only places objects other than builtins are made ----

    fn call(
        &mut self,
        node_id: NodeId,
        node: &'p Node,
        call: &Call<'a>,
        id: Id,
    ) -> Result<Obj<'py>> {
        if !self.call_fits(node, call) {
            return Err(match (node, call.target) {
                (_, Some(_)) => self.refused(call, node),
                _ => self.mismatch(node, id),
            });
        }
        let py = self.ctx.py;
        match node {
            Node::Record(spec) => self.level(|this| this.record(node_id, spec, call)),
            Node::TaggedUnion(spec) => {
                let plan: &'p Plan = self.ctx.plan;
                for (_, record_id) in &spec.tags {
                    if let Node::Record(record) = plan.node(*record_id) {
                        if self.is_class(call.func, &record.module, &record.qualname) {
                            let record_id = *record_id;
                            return self.level(|this| this.record(record_id, record, call));
                        }
                    }
                }
                Err(self.refused(call, node))
            }
            Node::Enum(spec) => self.enum_member(spec, call),
            Node::DateTime(rule) => {
                let value = self.datetime(call)?;
                check_tz(*rule, value.get_tzinfo().is_some(), "datetime")?;
                Ok(value.into_any())
            }
            Node::Date => self.date(call),
            Node::Time(rule) => {
                let (value, aware) = self.time(call)?;
                check_tz(*rule, aware, "time")?;
                Ok(value)
            }
            Node::TimeDelta => Ok(self.timedelta(call)?.into_any()),
            Node::Decimal(spec) => {
                let digits = self.decimal_text(call)?;
                self.ctx.decimal(spec, digits)
            }
            Node::Uuid => self.uuid(call),
            Node::Bytes(spec) => {
                let data = self.bytes_call(call)?;
                make_bytes(py, spec, &data)
            }
            Node::Sequence(spec) => {
                let items = self.set_call_items(call)?;
                self.level(|this| this.sequence(items, spec.item, spec.kind, &spec.length))
            }
            _ => Err(self.refused(call, node)),
        }
    }

    fn expect_no_state(&self, call: &Call<'_>, what: &str) -> Result<()> {
        if call.state.is_some() || call.kind != CallKind::Reduce {
            return Err(Error::decode(
                Code::PickleInvalid,
                format!("malformed pickle: {what} is built with an unexpected opcode sequence"),
            ));
        }
        Ok(())
    }

    fn args(&self, call: &Call<'_>, what: &str) -> Result<&'v [Id]> {
        self.tuple_items(call.args).ok_or_else(|| {
            Error::decode(
                Code::PickleInvalid,
                format!("malformed pickle: the arguments of {what} are not a tuple"),
            )
        })
    }

    fn record(
        &mut self,
        node_id: NodeId,
        spec: &'p RecordSpec,
        call: &Call<'a>,
    ) -> Result<Obj<'py>> {
        let args = self.args(call, &spec.qualname)?;
        if let Some(kwargs) = call.kwargs {
            if !matches!(self.arena.get(kwargs), Value::Dict(entries) if entries.is_empty()) {
                return Err(Error::decode(
                    Code::DecodeError,
                    format!(
                        "NEWOBJ_EX with keyword arguments for {} is refused",
                        spec.qualname
                    ),
                ));
            }
        }
        if spec.kind == RecordKind::NamedTuple {
            if call.state.is_some() {
                return Err(Error::decode(
                    Code::DecodeError,
                    format!("unexpected BUILD state for namedtuple {}", spec.qualname),
                ));
            }
            return self.positional_record(spec, args);
        }
        if spec.kind != RecordKind::Dataclass || call.kind != CallKind::NewObj || !args.is_empty() {
            return Err(Error::decode(
                Code::PickleInvalid,
                format!(
                    "malformed pickle: {} must be created with NEWOBJ and no arguments",
                    spec.qualname
                ),
            ));
        }
        let mut builder = RecordBuilder::new(spec);
        if let Some(state) = call.state {
            match self.arena.get(state) {
                Value::Dict(entries) => self.state_dict(node_id, spec, entries, &mut builder)?,
                Value::Tuple(parts) if parts.len() == 2 => {
                    for &part in parts.iter() {
                        match self.arena.get(part) {
                            Value::None => {}
                            Value::Dict(entries) => {
                                self.state_dict(node_id, spec, entries, &mut builder)?
                            }
                            _ => return Err(self.bad_state(spec)),
                        }
                    }
                }
                Value::List(values)
                    if values.len() <= spec.fields.len()
                        && self.fmt.record(node_id).state == StateForm::List =>
                {
                    for (index, &item) in values.iter().enumerate() {
                        let field = &spec.fields[index];
                        let value = self
                            .value(item, field.node)
                            .map_err(|e| e.at_field(&field.wire_name))?;
                        builder.set(index, value);
                    }
                }
                _ => return Err(self.bad_state(spec)),
            }
        }
        builder.finish(self.ctx.py, spec)
    }

    fn bad_state(&self, spec: &RecordSpec) -> Error {
        Error::decode(
            Code::PickleInvalid,
            format!(
                "malformed pickle: unexpected BUILD state for {}",
                spec.qualname
            ),
        )
    }

    fn state_dict(
        &mut self,
        node_id: NodeId,
        spec: &'p RecordSpec,
        entries: &'v [(Id, Id)],
        builder: &mut RecordBuilder<'py>,
    ) -> Result<()> {
        let fmt: &'f Pickle = self.fmt;
        let names = &fmt.record(node_id).names;
        let mut hint = 0;
        for &(key, item) in entries {
            let Value::Str(key) = self.arena.get(key) else {
                return Err(self.bad_state(spec));
            };
            let count = names.len();
            let found = (0..count)
                .map(|step| (hint + step) % count)
                .find(|&index| names[index].as_bytes() == *key);
            match found {
                Some(index) => {
                    hint = index + 1;
                    let field = &spec.fields[index];
                    let value = self
                        .value(item, field.node)
                        .map_err(|e| e.at_field(&field.wire_name))?;
                    builder.set(index, value);
                }
                None => {
                    unknown_field(spec, &show(key))?;
                    self.check_skipped(item)
                        .map_err(|e| e.at_field(&show(key)))?;
                }
            }
        }
        Ok(())
    }

    /// Checks a skipped value (an unknown field's) as strictly as a read one: every str in it
    /// must decode. Each value is visited once, shared or not, so the walk is linear in the
    /// arena and ends on cycles.
    fn check_skipped(&self, root: Id) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        let mut pending = vec![root];
        while let Some(id) = pending.pop() {
            if !seen.insert(id) {
                continue;
            }
            match self.arena.get(id) {
                Value::Str(bytes) => {
                    if !bytes.is_ascii() && std::str::from_utf8(bytes).is_err() {
                        surrogate_str(self.ctx.py, bytes)?;
                    }
                }
                Value::Dict(pairs) => pending.extend(pairs.iter().flat_map(|&(k, v)| [k, v])),
                Value::Call {
                    func,
                    args,
                    kwargs,
                    state,
                    ..
                } => pending.extend([*func, *args].into_iter().chain(*kwargs).chain(*state)),
                value => pending.extend(value.items().unwrap_or_default()),
            }
        }
        Ok(())
    }

    fn typed_dict(
        &mut self,
        node_id: NodeId,
        spec: &'p RecordSpec,
        entries: &'v [(Id, Id)],
    ) -> Result<Obj<'py>> {
        let mut builder = RecordBuilder::new(spec);
        let fmt: &'f Pickle = self.fmt;
        let names = &fmt.record(node_id).names;
        for &(key, item) in entries {
            let Value::Str(key) = self.arena.get(key) else {
                return Err(Error::validation(
                    Code::DictKeyType,
                    "expected str keys for a TypedDict",
                ));
            };
            match names.iter().position(|name| name.as_bytes() == *key) {
                Some(index) => {
                    let field = &spec.fields[index];
                    let value = self
                        .value(item, field.node)
                        .map_err(|e| e.at_field(&field.wire_name))?;
                    builder.set(index, value);
                }
                None => {
                    unknown_field(spec, &show(key))?;
                    self.check_skipped(item)
                        .map_err(|e| e.at_field(&show(key)))?;
                }
            }
        }
        builder.finish(self.ctx.py, spec)
    }

    fn positional_record(&mut self, spec: &'p RecordSpec, items: &'v [Id]) -> Result<Obj<'py>> {
        if items.len() > spec.fields.len() {
            return Err(Error::validation(
                Code::TooLong,
                format!(
                    "expected at most {} items, got {}",
                    spec.fields.len(),
                    items.len()
                ),
            ));
        }
        let mut builder = RecordBuilder::new(spec);
        for (index, &item) in items.iter().enumerate() {
            let value = self
                .value(item, spec.fields[index].node)
                .map_err(|e| e.at_index(index))?;
            builder.set(index, value);
        }
        builder.finish(self.ctx.py, spec)
    }

    fn enum_member(&self, spec: &EnumSpec, call: &Call<'_>) -> Result<Obj<'py>> {
        let py = self.ctx.py;
        self.expect_no_state(call, &spec.name)?;
        let args = self.args(call, &spec.name)?;
        let by_name = !self.is_class(call.func, &spec.module, &spec.name);
        let found = match (by_name, args) {
            (false, [value]) => match self.arena.get(*value) {
                Value::Str(bytes) => spec.by_str(bytes),
                Value::Int(number) => match spec.by_int(*number) {
                    Some(member) => Some(member),
                    // A combination of a Flag's members, as the stdlib pickles it.
                    None => {
                        if let Some(member) = spec.flag_member(py::new_int(py, *number)?)? {
                            return Ok(member);
                        }
                        None
                    }
                },
                _ => None,
            },
            (true, [_, name]) => match self.arena.get(*name) {
                Value::Str(bytes) => spec
                    .members
                    .iter()
                    .find(|m| m.name.as_bytes() == *bytes)
                    .map(|m| &m.member),
                _ => None,
            },
            _ => None,
        };
        found.map(|m| m.bind(py).clone()).ok_or_else(|| {
            Error::validation(
                Code::Enum,
                format!(
                    "invalid enum value for {}: expected {}",
                    spec.name,
                    spec.describe_values()
                ),
            )
        })
    }

    // ---- containers ----

    fn sequence(
        &mut self,
        items: &'v [Id],
        item_node: NodeId,
        kind: SequenceKind,
        length: &LengthBounds,
    ) -> Result<Obj<'py>> {
        let hashed = matches!(kind, SequenceKind::Set | SequenceKind::FrozenSet);
        let mut out = Vec::new();
        crate::errors::reserve(&mut out, items.len(), ITEMS)?;
        for (index, &item) in items.iter().enumerate() {
            if hashed {
                self.charge_hash(item).map_err(|e| e.at_index(index))?;
            }
            out.push(self.value(item, item_node).map_err(|e| e.at_index(index))?);
        }
        let py = self.ctx.py;
        let result = match kind {
            SequenceKind::List => crate::py::new_list(py, out.into_iter())?.into_any(),
            SequenceKind::VarTuple => crate::py::new_tuple(py, out.into_iter())?.into_any(),
            SequenceKind::Set => py::user_code(py, || crate::values::new_set(py, false, out))?,
            SequenceKind::FrozenSet => py::user_code(py, || crate::values::new_set(py, true, out))?,
        };
        // Sets may collapse equal items: the bound applies to what the caller gets.
        length.check(result.len()?, crate::plan::LengthUnit::Items)?;
        Ok(result)
    }

    fn fixed_tuple(&mut self, items: &'v [Id], item_nodes: &'p [NodeId]) -> Result<Obj<'py>> {
        if items.len() != item_nodes.len() {
            return Err(Error::validation(
                Code::PickleValue,
                format!(
                    "expected a tuple of length {}, got {}",
                    item_nodes.len(),
                    items.len()
                ),
            ));
        }
        let mut out = Vec::with_capacity(items.len());
        for (index, (&item, &node)) in items.iter().zip(item_nodes).enumerate() {
            out.push(self.value(item, node).map_err(|e| e.at_index(index))?);
        }
        Ok(crate::py::new_tuple(self.ctx.py, out.into_iter())?.into_any())
    }

    fn dict(
        &mut self,
        entries: &'v [(Id, Id)],
        key_node: NodeId,
        value_node: NodeId,
        dict_node: NodeId,
    ) -> Result<Obj<'py>> {
        let dict = py::new_dict(self.ctx.py)?;
        for &(key, item) in entries {
            self.charge_hash(key)
                .map_err(|e| e.at_key(&self.describe_key(key)))?;
            let key_object = self
                .value(key, key_node)
                .map_err(|e| e.at_key(&self.describe_key(key)))?;
            let value = self.value(item, value_node).map_err(|e| {
                let shown = crate::errors::shown_key(key_object.as_any());
                e.at_key(&shown)
            })?;
            self.ctx
                .store_entry(&dict, key_node, value_node, key_object, value)?;
        }
        self.ctx.check_length(dict_node, dict.len())?;
        Ok(dict.into_any())
    }

    fn describe_key(&self, key: Id) -> String {
        match self.arena.get(key) {
            Value::Str(bytes) => show(bytes).into_owned(),
            Value::Int(number) => number.to_string(),
            other => kind_name(other).to_owned(),
        }
    }

    // ---- standard library values ----

    /// The bytes of a datetime/date/time state: a bytes value, or, from protocol 2 picklers,
    /// `_codecs.encode(text, "latin1")`.
    fn state_bytes(&self, id: Id) -> Result<Cow<'a, [u8]>> {
        match self.arena.get(id) {
            Value::Bytes(data) => Ok(Cow::Borrowed(data)),
            Value::Call { .. } => {
                let call = self.call_parts(id).expect("a call node");
                Ok(Cow::Owned(self.codecs_encode(&call)?))
            }
            other => Err(Error::validation(
                Code::PickleValue,
                format!("expected a bytes state, got {}", kind_name(other)),
            )),
        }
    }

    /// `_codecs.encode(text, "latin1")`, decoded without calling it.
    fn codecs_encode(&self, call: &Call<'_>) -> Result<Vec<u8>> {
        let is_encode = call
            .target
            .is_some_and(|(module, name)| Standard::CodecsEncode.is(module, name));
        if !is_encode || call.kind != CallKind::Reduce || call.state.is_some() {
            return Err(self.refused(
                call,
                &Node::Bytes(BytesSpec {
                    class: crate::plan::BytesClass::Bytes,
                    length: LengthBounds::default(),
                }),
            ));
        }
        let args = self.args(call, "_codecs.encode")?;
        let [data, encoding] = args else {
            return Err(Error::decode(
                Code::PickleInvalid,
                "malformed pickle: _codecs.encode takes 2 arguments",
            ));
        };
        match (self.arena.get(*data), self.arena.get(*encoding)) {
            (Value::Str(data), Value::Str(encoding)) if is_latin1_encoding(encoding) => {
                latin1(text(data)?)
            }
            _ => Err(Error::decode(
                Code::PickleInvalid,
                "malformed pickle: _codecs.encode is only accepted with a str and \"latin1\"",
            )),
        }
    }

    fn bytes_call(&self, call: &Call<'_>) -> Result<Vec<u8>> {
        let Some((module, name)) = call.target else {
            return Err(Error::decode(
                Code::PickleInvalid,
                "malformed pickle: bytes from a computed callable",
            ));
        };
        let global = Standard::of(module, name);
        if global == Some(Standard::CodecsEncode) {
            return self.codecs_encode(call);
        }
        self.expect_no_state(call, "bytes")?;
        let args = self.args(call, "bytes")?;
        let bytearray = global == Some(Standard::ByteArray);
        match args {
            [] => Ok(Vec::new()),
            [source] if bytearray => Ok(self.state_bytes(*source)?.into_owned()),
            [source, encoding] if bytearray => {
                match (self.arena.get(*source), self.arena.get(*encoding)) {
                    (Value::Str(data), Value::Str(encoding)) if is_latin1_encoding(encoding) => {
                        latin1(text(data)?)
                    }
                    _ => Err(Error::decode(
                        Code::PickleInvalid,
                        "malformed pickle: unexpected bytearray arguments",
                    )),
                }
            }
            _ => Err(Error::decode(
                Code::PickleInvalid,
                "malformed pickle: unexpected bytes arguments",
            )),
        }
    }

    /// `builtins.set(items)` / `frozenset(items)` as protocols 2 and 3 write sets.
    fn set_call_items(&self, call: &Call<'_>) -> Result<&'v [Id]> {
        self.expect_no_state(call, "a set")?;
        let args = self.args(call, "set")?;
        match args {
            [] => Ok(&[]),
            [items] => self.arena.get(*items).items().ok_or_else(|| {
                Error::decode(Code::PickleInvalid, "malformed pickle: set() of a non-list")
            }),
            _ => Err(Error::decode(
                Code::PickleInvalid,
                "malformed pickle: set() with several arguments",
            )),
        }
    }

    fn datetime(&mut self, call: &Call<'_>) -> Result<Bound<'py, PyDateTime>> {
        self.expect_no_state(call, "datetime")?;
        let args = self.standard_args(call, Standard::DateTime, "datetime")?;
        let (state, zone) = (args[0], args.get(1).copied());
        let data = self.state_bytes(state)?;
        let state = DateTimeState::parse(&data).ok_or_else(|| {
            Error::validation(Code::PickleValue, "expected a 10-byte datetime state")
        })?;
        let zone = match zone {
            Some(zone) => self.tzinfo(zone)?,
            None => None,
        };
        state.build(self.ctx.py, zone.as_ref()).map_err(invalid)
    }

    fn date(&self, call: &Call<'_>) -> Result<Obj<'py>> {
        self.expect_no_state(call, "date")?;
        let args = self.standard_args(call, Standard::Date, "date")?;
        let data = self.state_bytes(args[0])?;
        let state = DateState::parse(&data)
            .ok_or_else(|| Error::validation(Code::PickleValue, "expected a 4-byte date state"))?;
        Ok(state.build(self.ctx.py).map_err(invalid)?.into_any())
    }

    fn time(&mut self, call: &Call<'_>) -> Result<(Obj<'py>, bool)> {
        self.expect_no_state(call, "time")?;
        let args = self.standard_args(call, Standard::Time, "time")?;
        let (state, zone) = (args[0], args.get(1).copied());
        let data = self.state_bytes(state)?;
        let state = TimeState::parse(&data)
            .ok_or_else(|| Error::validation(Code::PickleValue, "expected a 6-byte time state"))?;
        let zone = match zone {
            Some(zone) => self.tzinfo(zone)?,
            None => None,
        };
        let aware = zone.is_some();
        let value = state.build(self.ctx.py, zone.as_ref()).map_err(invalid)?;
        Ok((value.into_any(), aware))
    }

    fn timedelta(&self, call: &Call<'_>) -> Result<Bound<'py, PyDelta>> {
        self.expect_no_state(call, "timedelta")?;
        let args = self.standard_args(call, Standard::TimeDelta, "timedelta")?;
        let mut parts = TimeDeltaArgs::default();
        for &arg in args {
            let Value::Int(number) = self.arena.get(arg) else {
                return Err(Error::validation(
                    Code::PickleValue,
                    "expected int timedelta components",
                ));
            };
            parts.push(*number).map_err(|error| match error {
                TimeDeltaArgError::OutOfRange => {
                    Error::validation(Code::PickleValue, "timedelta component out of range")
                }
                TimeDeltaArgError::TooMany => {
                    Error::decode(Code::PickleInvalid, "malformed pickle: timedelta arguments")
                }
            })?;
        }
        parts.build(self.ctx.py).map_err(invalid)
    }

    /// A tzinfo: None, `datetime.timezone(offset[, name])`, or a `zoneinfo.ZoneInfo` by key
    /// (`getattr(ZoneInfo, "_unpickle")(key, from_cache)` as `ZoneInfo.__reduce__` writes it).
    fn tzinfo(&mut self, id: Id) -> Result<Option<Bound<'py, PyTzInfo>>> {
        if let Value::None = self.arena.get(id) {
            return Ok(None);
        }
        if let Some(zone) = self.zones.get(&id) {
            return Ok(Some(zone.clone()));
        }
        let py = self.ctx.py;
        let call = self.call_parts(id).ok_or_else(|| {
            Error::validation(
                Code::PickleValue,
                format!("expected a tzinfo, got {}", self.describe(id)),
            )
        })?;
        self.expect_no_state(&call, "tzinfo")?;
        let is_timezone = call
            .target
            .is_some_and(|(module, name)| Standard::TimeZone.is(module, name));
        let zone: Bound<'py, PyTzInfo> = if is_timezone {
            let args = self.standard_args(&call, Standard::TimeZone, "timezone")?;
            let (offset, name) = (args[0], args.get(1).copied());
            let offset_call = self
                .call_parts(offset)
                .filter(|c| {
                    c.target
                        .is_some_and(|(module, name)| Standard::TimeDelta.is(module, name))
                })
                .ok_or_else(|| {
                    Error::validation(Code::PickleValue, "expected a timedelta timezone offset")
                })?;
            let delta = self.timedelta(&offset_call)?;
            match name.map(|n| self.arena.get(n)) {
                None => PyTzInfo::fixed_offset(py, delta).map_err(invalid)?,
                Some(Value::Str(name)) => {
                    let timezone = py.import("datetime")?.getattr("timezone")?;
                    timezone
                        .call1((delta, text(name)?))
                        .map_err(invalid)?
                        .cast_into::<PyTzInfo>()
                        .map_err(PyErr::from)?
                }
                Some(_) => {
                    return Err(Error::validation(
                        Code::PickleValue,
                        "expected a str timezone name",
                    ))
                }
            }
        } else if self.is_zoneinfo_unpickle(&call) {
            let args = self.standard_args(&call, Standard::ZoneInfo, "ZoneInfo")?;
            let (key, from_cache) = (&args[0], &args[1]);
            let Value::Str(key) = self.arena.get(*key) else {
                return Err(Error::validation(
                    Code::PickleValue,
                    "expected a str ZoneInfo key",
                ));
            };
            let cached = match self.arena.get(*from_cache) {
                Value::Int(number) => *number != 0,
                Value::Bool(flag) => *flag,
                _ => {
                    return Err(Error::validation(
                        Code::ValueError,
                        "expected an int ZoneInfo cache flag",
                    ))
                }
            };
            let key = text(key)?;
            let class = py.import("zoneinfo")?.getattr("ZoneInfo")?;
            // ZoneInfo is Python code (and reads a file, letting other threads run).
            let zone = py::user_code(py, || {
                if cached {
                    class.call1((key,))
                } else {
                    class.call_method1("no_cache", (key,))
                }
            });
            // An unknown or malformed key (ZoneInfoNotFoundError is a KeyError) is bad input.
            let zone = zone.map_err(|err| {
                Error::validation(
                    Code::PickleValue,
                    format!(
                        "invalid ZoneInfo key {}: {}",
                        crate::errors::quote(key),
                        err.value(py)
                    ),
                )
            })?;
            zone.cast_into::<PyTzInfo>().map_err(PyErr::from)?
        } else {
            return Err(Error::decode(
                Code::PickleInvalid,
                format!(
                    "pickle refers to {}, which is not an allowed tzinfo (datetime.timezone, \
                 zoneinfo.ZoneInfo)",
                    self.describe(id)
                ),
            ));
        };
        self.zones.insert(id, zone.clone());
        Ok(Some(zone))
    }

    /// Whether a call is `getattr(zoneinfo.ZoneInfo, "_unpickle")(...)`.
    fn is_zoneinfo_unpickle(&self, call: &Call<'_>) -> bool {
        let Value::Call {
            kind: CallKind::Reduce,
            func: inner_func,
            args: inner_args,
            state: None,
            ..
        } = self.arena.get(call.func)
        else {
            return false;
        };
        if !self.is_standard(*inner_func, Standard::GetAttr) {
            return false;
        }
        match self.tuple_items(*inner_args) {
            Some([cls, attribute]) => {
                self.is_standard(*cls, Standard::ZoneInfo)
                    && matches!(self.arena.get(*attribute), Value::Str(name) if *name == ZONEINFO_UNPICKLE)
            }
            _ => false,
        }
    }

    fn decimal_text(&self, call: &Call<'_>) -> Result<&'a str> {
        self.expect_no_state(call, "Decimal")?;
        let args = self.standard_args(call, Standard::Decimal, "Decimal")?;
        match self.arena.get(args[0]) {
            Value::Str(bytes) => text(bytes),
            _ => Err(Error::validation(
                Code::PickleValue,
                "expected a str Decimal argument",
            )),
        }
    }

    /// `uuid.UUID`: NEWOBJ with no arguments, then BUILD with `{"int": n}` (and maybe
    /// `"is_safe"`, which is not kept).
    fn uuid(&self, call: &Call<'_>) -> Result<Obj<'py>> {
        let bad = || {
            Error::decode(
                Code::PickleInvalid,
                "malformed pickle: unexpected UUID construction",
            )
        };
        if call.kind != CallKind::NewObj || !self.args(call, "UUID")?.is_empty() {
            return Err(bad());
        }
        let Some(Value::Dict(entries)) = call.state.map(|s| self.arena.get(s)) else {
            return Err(bad());
        };
        let mut bits = None;
        for &(key, value) in entries {
            let Value::Str(key) = self.arena.get(key) else {
                return Err(bad());
            };
            match UuidKey::of(key) {
                Some(UuidKey::Int) => bits = Some(self.u128_of(value)?),
                Some(UuidKey::IsSafe) => {}
                None => return Err(bad()),
            }
        }
        let bits = bits.ok_or_else(bad)?;
        Ok(py::new_uuid(self.ctx.py, bits)?)
    }

    fn u128_of(&self, id: Id) -> Result<u128> {
        let out_of_range = || Error::validation(Code::PickleValue, "UUID int out of range");
        match self.arena.get(id) {
            Value::Int(number) => u128::try_from(*number).map_err(|_| out_of_range()),
            Value::BigInt(data) => uuid_bits(data).ok_or_else(out_of_range),
            _ => Err(Error::validation(
                Code::ValueError,
                "expected an int UUID value",
            )),
        }
    }

    // ---- typing.Any ----

    /// A value under `typing.Any`: builtins, and the standard library values polycodec
    /// supports (datetimes, Decimal, UUID); classes are refused, since no plan names them.
    fn any(&mut self, id: Id) -> Result<Obj<'py>> {
        let py = self.ctx.py;
        let any = self.ctx.plan.any;
        Ok(match self.arena.get(id) {
            Value::None => py.None().into_bound(py),
            Value::Bool(flag) => pyo3::types::PyBool::new(py, *flag).to_owned().into_any(),
            Value::Int(number) => py::new_int(py, *number)?,
            Value::BigInt(data) => big_int(py, data)?,
            Value::Float(number) => py::new_float(py, *number)?,
            Value::Str(bytes) => {
                let ascii = bytes.is_ascii();
                if ascii || std::str::from_utf8(bytes).is_ok() {
                    py::new_str(py, bytes, ascii)?
                } else {
                    surrogate_str(py, bytes)?
                }
            }
            Value::Bytes(data) => crate::py::new_bytes(py, data)?.into_any(),
            Value::ByteArray(data) => crate::py::new_bytearray(py, data)?,
            Value::List(items) => {
                return self.level(|this| this.any_items(items, SequenceKind::List))
            }
            Value::Tuple(items) => {
                return self.level(|this| this.any_items(items, SequenceKind::VarTuple))
            }
            Value::Set(items) => {
                return self.level(|this| this.any_items(items, SequenceKind::Set))
            }
            Value::FrozenSet(items) => {
                return self.level(|this| this.any_items(items, SequenceKind::FrozenSet))
            }
            Value::Dict(entries) => return self.level(|this| this.dict(entries, any, any, any)),
            Value::Global { module, name } => {
                return Err(Error::decode(
                    Code::PickleInvalid,
                    format!(
                        "pickle holds the global {}.{} as a value, which no type allows",
                        show(module),
                        show(name)
                    ),
                ))
            }
            Value::Call { .. } => {
                let call = self.call_parts(id).expect("a call node");
                return self.any_call(&call);
            }
        })
    }

    fn any_items(&mut self, items: &'v [Id], kind: SequenceKind) -> Result<Obj<'py>> {
        let any = self.ctx.plan.any;
        self.sequence(items, any, kind, &LengthBounds::default())
    }

    fn any_call(&mut self, call: &Call<'a>) -> Result<Obj<'py>> {
        let py = self.ctx.py;
        let Some((module, name)) = call.target else {
            return Err(Error::decode(
                Code::PickleInvalid,
                "pickle calls a computed callable, which no type allows here",
            ));
        };
        match Standard::of(module, name) {
            Some(Standard::DateTime) => Ok(self.datetime(call)?.into_any()),
            Some(Standard::Date) => self.date(call),
            Some(Standard::Time) => Ok(self.time(call)?.0),
            Some(Standard::TimeDelta) => Ok(self.timedelta(call)?.into_any()),
            Some(Standard::Decimal) => {
                let digits = self.decimal_text(call)?;
                let decimal = py::stdlib(py).decimal.bind(py).call1((digits,));
                decimal.map_err(|_| {
                    Error::validation(
                        Code::DecimalParsing,
                        format!("invalid decimal {}", crate::errors::quote(digits)),
                    )
                })
            }
            Some(Standard::Uuid) => self.uuid(call),
            Some(global @ (Standard::Set | Standard::FrozenSet)) => {
                let items = self.set_call_items(call)?;
                let kind = if global == Standard::Set {
                    SequenceKind::Set
                } else {
                    SequenceKind::FrozenSet
                };
                self.level(|this| this.any_items(items, kind))
            }
            Some(Standard::CodecsEncode | Standard::Bytes) => {
                Ok(crate::py::new_bytes(py, &self.bytes_call(call)?)?.into_any())
            }
            Some(Standard::ByteArray) => Ok(crate::py::new_bytearray(py, &self.bytes_call(call)?)?),
            _ => Err(Error::decode(
                Code::PickleInvalid,
                format!(
                    "pickle refers to {}.{}, which the type does not allow here (expected any \
                 builtin value)",
                    show(module),
                    show(name)
                ),
            )),
        }
    }
}

fn latin1(text: &str) -> Result<Vec<u8>> {
    super::recognise::latin1(text).ok_or_else(|| {
        Error::decode(
            Code::PickleInvalid,
            "malformed pickle: latin1 text with a character above U+00FF",
        )
    })
}

/// An int from LONG1/LONG4 bytes (little-endian two's complement), through `int.from_bytes`.
fn big_int<'py>(py: Python<'py>, data: &[u8]) -> Result<Obj<'py>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("signed", true)?;
    Ok(py.get_type::<PyInt>().call_method(
        "from_bytes",
        (crate::py::new_bytes(py, data)?, "little"),
        Some(&kwargs),
    )?)
}

/// A pickled str that is not strict UTF-8: pickle writes lone surrogates with "surrogatepass",
/// and reads them back the same way; anything else is malformed.
fn surrogate_str<'py>(py: Python<'py>, bytes: &[u8]) -> Result<Obj<'py>> {
    crate::py::new_bytes(py, bytes)?
        .call_method1("decode", ("utf-8", "surrogatepass"))
        .map_err(|_| Error::decode(Code::PickleInvalid, "malformed pickle: a str is not UTF-8"))
}

/// A value the standard library refuses to construct (a day 32, an offset beyond 24 hours, a
/// timedelta beyond its range): bad input, whatever exception class CPython chose for it.
#[cold]
fn invalid(err: PyErr) -> Error {
    Python::attach(|py| Error::validation(Code::ValueError, err.value(py).to_string()))
}

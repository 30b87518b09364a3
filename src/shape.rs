//! What a Python value looks like, for the encoders: type checks against plan nodes, field
//! access on records, iteration over sequences, and the runtime dispatch of `typing.Any`.
//! Shared by every format's encoder.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDate, PyDateTime, PyDelta, PyDict, PyFloat, PyFrozenSet, PyInt,
    PyList, PyMemoryView, PySet, PyString, PyTime, PyTuple, PyType,
};

use crate::errors::{Error, Result};
use crate::plan::{
    EnumSpec, FieldDefault, LiteralSpec, LiteralValue, Node, NodeId, Plan, RecordKind, RecordSpec,
    TaggedUnionSpec, UnionSpec,
};
use crate::py::{self, Obj};
use crate::values::MAX_DEPTH;

/// Calls `f` on each item of a list, tuple, set, frozenset or other iterable, stopping at the
/// first error. List items are read by index each time, so a list mutated by user code during
/// encoding is never read out of bounds.
pub fn for_each_item<'py>(
    values: &Obj<'py>,
    mut f: impl FnMut(&Obj<'py>) -> Result<()>,
) -> Result<()> {
    if let Ok(list) = values.cast::<PyList>() {
        let mut index = 0;
        while let Some(item) = py::list_item(list, index) {
            f(&item)?;
            index += 1;
        }
        return Ok(());
    }
    if let Ok(tuple) = values.cast::<PyTuple>() {
        for item in tuple.iter_borrowed() {
            f(&item.to_owned())?;
        }
        return Ok(());
    }
    if values.is_instance_of::<PyString>() || values.is_instance_of::<PyDict>() {
        return Err(Error::encode(format!(
            "expected a sequence, got {}",
            py::type_name(values)
        )));
    }
    let iterator = values.try_iter().map_err(|_| {
        Error::encode(format!(
            "expected a sequence, got {}",
            py::type_name(values)
        ))
    })?;
    for item in iterator {
        f(&item?)?;
    }
    Ok(())
}

/// list, tuple, set and frozenset: the values an array node accepts.
#[inline]
pub fn is_array_like(value: &Obj<'_>) -> bool {
    value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyTuple>()
        || value.is_instance_of::<PySet>()
        || value.is_instance_of::<PyFrozenSet>()
}

pub fn is_uuid(value: &Obj<'_>) -> bool {
    is_instance_of(value, py::stdlib(value.py()).uuid.bind(value.py()))
}

pub fn is_decimal(value: &Obj<'_>) -> bool {
    is_instance_of(value, py::stdlib(value.py()).decimal.bind(value.py()))
}

/// `isinstance`, answering the exact-type case without a call into CPython.
#[inline]
fn is_instance_of(value: &Obj<'_>, cls: &Bound<'_, PyType>) -> bool {
    value.get_type_ptr() == cls.as_type_ptr() || value.is_instance(cls).unwrap_or(false)
}

/// The bytes of a bytes, bytearray or memoryview (the latter two copied, since user code may
/// resize them while we hold the data).
pub fn bytes_like<'a>(value: &'a Obj<'_>) -> Option<Cow<'a, [u8]>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Some(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Some(Cow::Owned(array.to_vec()));
    }
    if value.is_instance_of::<PyMemoryView>() {
        let bytes = value
            .call_method0("tobytes")
            .ok()?
            .cast_into::<PyBytes>()
            .ok()?;
        return Some(Cow::Owned(bytes.as_bytes().to_vec()));
    }
    None
}

/// One more level of nesting for an encoder, refused past [`MAX_DEPTH`] (a value that contains
/// itself would otherwise recurse until the stack guard gives up).
pub fn enter_nested(depth: &mut usize) -> Result<()> {
    *depth += 1;
    if *depth > MAX_DEPTH {
        return Err(Error::encode(format!(
            "value nested deeper than {MAX_DEPTH} levels (a reference cycle?)"
        )));
    }
    Ok(())
}

/// The position of `value` among an enum's members (compared by identity).
pub fn enum_member_index(spec: &EnumSpec, value: &Obj<'_>) -> Option<usize> {
    let py = value.py();
    spec.members
        .iter()
        .position(|m| m.member.bind(py).is(value))
}

/// The value of a `Flag` instance that is none of its class's canonical members (a combination
/// of them, or an int its boundary let through): the int and its object, as an encoder writes
/// them; the EncodeError for a value that is no instance of the class (or of an enum that is no
/// flag).
#[cold]
#[inline(never)]
pub fn flag_value<'py>(spec: &EnumSpec, value: &Obj<'py>) -> Result<(LiteralValue, Obj<'py>)> {
    let py = value.py();
    if !spec.flag || !value.is_instance(spec.cls.bind(py))? {
        return Err(not_a_member(spec, value));
    }
    let raw = value.getattr(pyo3::intern!(py, "_value_"))?;
    match py::int_as_i64(&raw) {
        Some(number) if raw.is_instance_of::<PyInt>() => Ok((LiteralValue::Int(number), raw)),
        _ => Err(Error::encode(format!(
            "{} value {} does not fit in 64 bits",
            spec.name,
            crate::errors::cut(&raw.repr()?.to_string())
        ))),
    }
}

/// The EncodeError for a value that is not a member of the enum.
pub fn not_a_member(spec: &EnumSpec, value: &Obj<'_>) -> Error {
    Error::encode(format!(
        "expected a member of {}, got {}",
        spec.name,
        value
            .repr()
            .map(|r| crate::errors::cut(&r.to_string()).into_owned())
            .unwrap_or_default()
    ))
}

/// The literal `value` stands for, when it is one of the literals `spec` allows.
pub fn allowed_literal(spec: &LiteralSpec, value: &Obj<'_>) -> Result<LiteralValue> {
    LiteralValue::of(value)
        .filter(|v| spec.find(v).is_some())
        .ok_or_else(|| {
            Error::encode(format!(
                "expected {}, got {}",
                spec.describe_values(),
                value
                    .repr()
                    .map(|r| crate::errors::cut(&r.to_string()).into_owned())
                    .unwrap_or_default()
            ))
        })
}

/// The allowed literal `value` is, found without making a string: the annotation's own object
/// (an interned str, a small int) by identity, else a str's text or an int's value compared.
#[inline]
pub fn find_literal<'s>(spec: &'s LiteralSpec, value: &Obj<'_>) -> Option<&'s LiteralValue> {
    if let Some((literal, _)) = spec.values.iter().find(|(_, obj)| obj.is(value)) {
        return Some(literal);
    }
    if let Ok(text) = value.cast_exact::<PyString>() {
        let text = py::str_utf8(text).ok()?;
        return spec.values.iter().find_map(|(literal, _)| match literal {
            LiteralValue::Str(allowed) if allowed == text => Some(literal),
            _ => None,
        });
    }
    let wanted = LiteralValue::of(value)?;
    spec.values
        .iter()
        .find(|(literal, _)| *literal == wanted)
        .map(|(literal, _)| literal)
}

/// Whether `value` is an instance of the record's class (exact type first: the common case).
#[inline]
pub fn is_record(spec: &RecordSpec, value: &Obj<'_>) -> bool {
    if py::has_exact_type(value, spec.type_addr) {
        return true;
    }
    match spec.kind {
        RecordKind::TypedDict => value.is_instance_of::<PyDict>(),
        _ => value
            .is_instance(spec.cls.bind(value.py()))
            .unwrap_or(false),
    }
}

/// Whether a field's value would be written and read back as its default, for
/// `omit_defaults`. Factory defaults of the builtin containers compare with an empty container
/// without calling the factory.
pub fn equals_default(default: &FieldDefault, value: &Obj<'_>) -> Result<bool> {
    let py = value.py();
    match default {
        FieldDefault::Value(default) => same_value(value, default.bind(py), 0),
        FieldDefault::Factory(factory) => {
            let factory = factory.bind(py);
            let empty_container = [
                py.get_type::<PyList>(),
                py.get_type::<PyDict>(),
                py.get_type::<PySet>(),
                py.get_type::<PyTuple>(),
                py.get_type::<PyFrozenSet>(),
            ]
            .iter()
            .any(|t| factory.is(t));
            if empty_container {
                Ok(value.get_type().is(factory) && value.len().map(|n| n == 0).unwrap_or(false))
            } else {
                same_value(value, &factory.call0()?, 0)
            }
        }
        FieldDefault::Required | FieldDefault::Absent => Ok(false),
    }
}

/// Nesting past which two containers are not compared further (and the value is written).
const MAX_SAME_VALUE_DEPTH: usize = 32;

/// Whether `value` is `default` or a copy of it: the same exact type and the same parts, so
/// that leaving it out loses nothing. Equality alone is not that: `False == 0`, `1.0 == 1`,
/// `-0.0 == 0.0`, `Decimal("1.00") == Decimal("1")`, and an aware datetime equals the same
/// instant in another zone, yet each is written (and read back) differently.
fn same_value(value: &Obj<'_>, default: &Obj<'_>, depth: usize) -> Result<bool> {
    if value.is(default) {
        return Ok(true);
    }
    if !value.get_type().is(default.get_type()) || depth > MAX_SAME_VALUE_DEPTH {
        return Ok(false);
    }
    // The types are the same from here on, so one side's type test answers for both.
    if let (Ok(a), Ok(b)) = (value.cast::<PyFloat>(), default.cast::<PyFloat>()) {
        return Ok(a.value().to_bits() == b.value().to_bits());
    }
    if value.is_instance_of::<PyInt>()
        || value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyBytes>()
        || value.is_instance_of::<PyDelta>()
        || is_uuid(value)
        || (value.is_instance_of::<PyDate>() && !value.is_instance_of::<PyDateTime>())
    {
        return Ok(value.eq(default).unwrap_or(false));
    }
    if value.is_instance_of::<PyDateTime>() || value.is_instance_of::<PyTime>() {
        // The same zone object and fold: then `==` compares the wall-clock fields.
        let tzinfo = value.getattr("tzinfo")?;
        return Ok(tzinfo.is(default.getattr("tzinfo")?)
            && value.getattr("fold")?.eq(default.getattr("fold")?)?
            && value.eq(default).unwrap_or(false));
    }
    if is_decimal(value) {
        // `str` spells out a Decimal's sign, digits and exponent.
        let (a, b) = (value.str()?, default.str()?);
        return Ok(a.as_any().eq(b)?);
    }
    if let (Ok(a), Ok(b)) = (value.cast::<PyTuple>(), default.cast::<PyTuple>()) {
        return same_items(a.iter(), b.iter(), a.len() == b.len(), depth);
    }
    if let (Ok(a), Ok(b)) = (value.cast::<PyList>(), default.cast::<PyList>()) {
        return same_items(a.iter(), b.iter(), a.len() == b.len(), depth);
    }
    if let (Ok(a), Ok(b)) = (value.cast::<PyDict>(), default.cast::<PyDict>()) {
        if a.len() != b.len() {
            return Ok(false);
        }
        for ((key_a, item_a), (key_b, item_b)) in a.iter().zip(b.iter()) {
            if !same_value(&key_a, &key_b, depth + 1)? || !same_value(&item_a, &item_b, depth + 1)?
            {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if value.is_instance_of::<PyFrozenSet>() || value.is_instance_of::<PySet>() {
        // Equal sets of exact ints, strs and bytes hold the same items (no such item equals
        // one of another of these types); any other items are compared by identity above.
        let plain = |set: &Obj<'_>| -> Result<bool> {
            for item in set.try_iter()? {
                let item = item?;
                if !(item.is_exact_instance_of::<PyInt>()
                    || item.is_exact_instance_of::<PyString>()
                    || item.is_exact_instance_of::<PyBytes>())
                {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        return Ok(value.eq(default).unwrap_or(false) && plain(value)? && plain(default)?);
    }
    if value.get_type().hasattr("__dataclass_fields__")? {
        // Field by field: the generated `__eq__` compares them with `==`.
        let fields = value
            .py()
            .import("dataclasses")?
            .getattr("fields")?
            .call1((value,))?;
        for field in fields.try_iter()? {
            let name = field?
                .getattr("name")?
                .cast_into::<PyString>()
                .map_err(PyErr::from)?;
            let (a, b) = (value.getattr(&name)?, default.getattr(&name)?);
            if !same_value(&a, &b, depth + 1)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    // Any other class (bytearray, an extension's type): its own equality.
    Ok(value.eq(default).unwrap_or(false))
}

fn same_items<'py>(
    a: impl Iterator<Item = Obj<'py>>,
    b: impl Iterator<Item = Obj<'py>>,
    same_length: bool,
    depth: usize,
) -> Result<bool> {
    if !same_length {
        return Ok(false);
    }
    for (item_a, item_b) in a.zip(b) {
        if !same_value(&item_a, &item_b, depth + 1)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The variant of a tagged union that encodes `value`: the record of the value's exact class
/// (one pointer comparison per variant, no call into CPython), else the first variant the value
/// is an instance of (a subclass instance). Returns the record's node id with its spec.
#[inline]
pub fn tagged_variant<'p>(
    plan: &'p Plan,
    spec: &TaggedUnionSpec,
    value: &Obj<'_>,
) -> Option<(NodeId, &'p RecordSpec)> {
    let class = value.get_type_ptr() as usize;
    let record = |id: NodeId| match plan.node(id) {
        Node::Record(record) => Some((id, record)),
        _ => None,
    };
    if let Some(&(_, id)) = spec.classes.iter().find(|(addr, _)| *addr == class) {
        return record(id);
    }
    spec.tags
        .iter()
        .filter_map(|&(_, id)| record(id))
        .find(|(_, record)| is_record(record, value))
}

/// Chooses the union variant for a Python value by its type. Unions are unambiguous by
/// construction, so the first variant whose type accepts the value is the one. `Optional[X]`
/// needs no search: anything but None goes to `X`, whose encoder checks the type.
///
/// A union with several record variants (Avro, pickle) picks the record of the value's exact
/// class; an instance of a subclass goes to the record of its nearest base class in the union,
/// as a record field takes subclass instances (written with the base class's fields).
#[inline]
pub fn pick_variant(plan: &Plan, spec: &UnionSpec, value: &Obj<'_>) -> Option<NodeId> {
    if let Some(other) = spec.optional_member() {
        return if value.is_none() {
            spec.none
        } else {
            Some(other)
        };
    }
    if !spec.records.is_empty() {
        if let Some(id) = spec.record_of_class(value.get_type_ptr() as usize) {
            return Some(id);
        }
    }
    let found = spec
        .variants
        .iter()
        .copied()
        .find(|&id| accepts(plan, plan.node(id), value))?;
    let class_record =
        |node: &Node| matches!(node, Node::Record(r) if r.kind != RecordKind::TypedDict);
    if !spec.records.is_empty() && class_record(plan.node(found)) {
        return Some(nearest_record(spec, value).unwrap_or(found));
    }
    Some(found)
}

/// The record variant of the nearest class in the value's MRO (for a subclass instance).
#[cold]
fn nearest_record(spec: &UnionSpec, value: &Obj<'_>) -> Option<NodeId> {
    value
        .get_type()
        .mro()
        .iter()
        .find_map(|cls| spec.record_of_class(cls.as_ptr() as usize))
}

/// Whether `value` is of the type `node` encodes (an encoder would take it).
pub(crate) fn accepts(plan: &Plan, node: &Node, value: &Obj<'_>) -> bool {
    let is_int = || value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>();
    match node {
        Node::Any => true,
        Node::None => value.is_none(),
        Node::Bool => value.is_instance_of::<PyBool>(),
        Node::Int(_) => value.is_exact_instance_of::<PyInt>() || (is_int() && !is_enum(value)),
        Node::Float(_) => value.is_instance_of::<PyFloat>() || is_int(),
        Node::Str(_) => {
            value.is_exact_instance_of::<PyString>()
                || (value.is_instance_of::<PyString>() && !is_enum(value))
        }
        Node::Bytes(_) => {
            value.is_instance_of::<PyBytes>()
                || value.is_instance_of::<PyByteArray>()
                || value.is_instance_of::<PyMemoryView>()
        }
        Node::Decimal(_) => is_decimal(value),
        Node::DateTime(_) => value.is_instance_of::<PyDateTime>(),
        Node::Date => value.is_instance_of::<PyDate>() && !value.is_instance_of::<PyDateTime>(),
        Node::Time(_) => value.is_instance_of::<PyTime>(),
        Node::TimeDelta => value.is_instance_of::<PyDelta>(),
        Node::Uuid => is_uuid(value),
        Node::Enum(spec) => value
            .is_instance(spec.cls.bind(value.py()))
            .unwrap_or(false),
        Node::Literal(spec) => LiteralValue::of(value).is_some_and(|v| spec.find(&v).is_some()),
        Node::Union(spec) => pick_variant(plan, spec, value).is_some(),
        Node::TaggedUnion(spec) => spec.tags.iter().any(|(_, id)| match plan.node(*id) {
            Node::Record(record) => is_record(record, value),
            _ => false,
        }),
        Node::Sequence(_) => is_array_like(value),
        Node::Tuple(_) => value.is_instance_of::<PyTuple>() || value.is_instance_of::<PyList>(),
        Node::Dict(_) => value.is_instance_of::<PyDict>(),
        Node::Record(spec) => is_record(spec, value),
        Node::Extension(spec) => {
            (spec.nullable && value.is_none())
                || value
                    .is_instance(spec.cls.bind(value.py()))
                    .unwrap_or(false)
        }
        Node::Unset => plan.is_unset(value),
        Node::Raw { nullable } => {
            (*nullable && value.is_none()) || crate::raw::bytes_of(value).is_some()
        }
    }
}

fn is_enum(value: &Obj<'_>) -> bool {
    value
        .is_instance(py::stdlib(value.py()).enum_type.bind(value.py()))
        .unwrap_or(false)
}

/// The runtime kinds `typing.Any` encodes directly; everything else goes through a plan.
pub enum Shape {
    None,
    Bool(bool),
    Int,
    Float(f64),
    Str,
    Array,
    Dict,
    Other,
}

#[inline]
pub fn classify(value: &Obj<'_>) -> Shape {
    if value.is_none() {
        Shape::None
    } else if let Ok(flag) = value.cast_exact::<PyBool>() {
        Shape::Bool(flag.is_true())
    } else if value.is_exact_instance_of::<PyInt>() {
        Shape::Int
    } else if let Ok(number) = value.cast_exact::<PyFloat>() {
        Shape::Float(number.value())
    } else if value.is_exact_instance_of::<PyString>() {
        Shape::Str
    } else if value.is_exact_instance_of::<PyList>()
        || value.is_exact_instance_of::<PyTuple>()
        || value.is_exact_instance_of::<PySet>()
        || value.is_exact_instance_of::<PyFrozenSet>()
    {
        Shape::Array
    } else if value.is_exact_instance_of::<PyDict>() {
        Shape::Dict
    } else {
        Shape::Other
    }
}

/// Counts the times a class was given per-class options (`@polycodec.options`, which calls
/// `_options_changed`; `polycodec._options` keeps the same count for the Python caches): a plan
/// compiled under an older count may hold a class's old options, so the caches of subclass and
/// value plans keep the count a plan was compiled under and drop one compiled before the last
/// change.
static OPTIONS_GENERATION: AtomicU64 = AtomicU64::new(0);

/// The current options generation: read before a plan is compiled, kept with it.
#[inline]
pub fn options_generation() -> u64 {
    OPTIONS_GENERATION.load(Ordering::SeqCst)
}

/// Called by `polycodec.options` when a class is given options.
#[pyfunction]
pub fn _options_changed() {
    OPTIONS_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Subclasses a plan keeps the plans of before it starts again (dynamic classes made in a loop
/// would otherwise be kept alive by it).
const SUBCLASS_PLANS_KEPT: usize = 64;

/// The plan of `value`'s own class, when it is an instance of a subclass of record `spec`'s
/// class that writes more or other than its base class (fields of its own, other options):
/// msgspec writes such an instance with its own fields, so every encoder writes it with the
/// subclass's plan (compiled with `plan`'s options, once per plan and subclass), or refuses it
/// where the format cannot carry it. `None` for an instance of the class itself, of a subclass
/// that writes what its base class writes (written as the base class, as before: a tagged
/// variant keeps its tag first), and for a TypedDict, whose values are dicts. An instance of
/// another class is the caller's error to raise.
#[inline]
pub fn subclass_plan(plan: &Plan, spec: &RecordSpec, value: &Obj<'_>) -> Result<Option<Arc<Plan>>> {
    if py::has_exact_type(value, spec.type_addr) || spec.kind == RecordKind::TypedDict {
        return Ok(None);
    }
    subclass_plan_slow(plan, spec, value)
}

#[cold]
#[inline(never)]
fn subclass_plan_slow(
    plan: &Plan,
    spec: &RecordSpec,
    value: &Obj<'_>,
) -> Result<Option<Arc<Plan>>> {
    if !is_record(spec, value) {
        return Ok(None);
    }
    let cls = value.get_type();
    let key = cls.as_ptr() as usize;
    let generation = options_generation();
    let found = plan
        .subclasses
        .lock()
        .expect("subclass plans")
        .get(&key)
        .filter(|entry| entry.generation == generation)
        .map(|entry| entry.plan.clone());
    let compiled = match found {
        Some(compiled) => compiled,
        None => {
            let compiled = compile_subclass(plan, &cls)?
                .map(|own| (!writes_as_base(spec, &own, value.py())).then_some(own));
            let entry = crate::plan::SubclassPlan {
                cls: cls.clone().unbind(),
                generation,
                plan: compiled.clone(),
            };
            // What leaves the cache is released after the lock is: releasing a class can run
            // Python code, which could encode again.
            let (evicted, replaced) = {
                let mut plans = plan.subclasses.lock().expect("subclass plans");
                let evicted = if plans.len() >= SUBCLASS_PLANS_KEPT {
                    std::mem::take(&mut *plans)
                } else {
                    HashMap::new()
                };
                (evicted, plans.insert(key, entry))
            };
            drop((evicted, replaced));
            compiled
        }
    };
    match compiled {
        Ok(found) => Ok(found),
        Err(reason) => Err(Error::encode(format!(
            "{} is a subclass of {}, written with its own fields (as msgspec writes it), and it \
             cannot be: {reason}",
            py::type_name(value),
            spec.qualname
        ))),
    }
}

/// Whether the subclass's plan `own` writes what record `base` writes: the same fields under
/// the same wire names, in the same order, with the same record options.
fn writes_as_base(base: &RecordSpec, own: &Plan, py: Python<'_>) -> bool {
    let Node::Record(sub) = own.node(own.root) else {
        return false;
    };
    let fields = |record: &RecordSpec| -> Vec<(String, String, bool)> {
        record
            .fields
            .iter()
            .map(|f| (f.name.bind(py).to_string(), f.wire_name.clone(), f.on_wire))
            .collect()
    };
    fields(base) == fields(sub)
        && base.wire_fields == sub.wire_fields
        && (base.array_like, base.omit_defaults) == (sub.array_like, sub.omit_defaults)
        && base.class_tag().map(|tag| &tag.value) == sub.class_tag().map(|tag| &tag.value)
}

/// Compiles `cls` with `plan`'s options: its plan, or the message of the TypeError or
/// ValueError that says why it has none (kept with the class, as a plan is); any other
/// exception passes.
fn compile_subclass(
    plan: &Plan,
    cls: &Bound<'_, PyType>,
) -> Result<std::result::Result<Arc<Plan>, String>> {
    let py = cls.py();
    let compiled = (|| -> PyResult<Plan> {
        let options = plan.compile_options.as_ref().map(|o| o.bind(py));
        let spec = py
            .import("polycodec._plan")?
            .getattr("compile_spec")?
            .call((cls,), options)?;
        let mut compiled = crate::plan::build_plan(&spec)?;
        compiled.compile_options = plan.compile_options.as_ref().map(|o| o.clone_ref(py));
        Ok(compiled)
    })();
    match compiled {
        Ok(compiled) => Ok(Ok(Arc::new(compiled))),
        Err(err)
            if err.is_instance_of::<PyTypeError>(py)
                || err.is_instance_of::<pyo3::exceptions::PyValueError>(py) =>
        {
            Ok(Err(err.value(py).str()?.to_string()))
        }
        Err(err) => Err(err.into()),
    }
}

type PlanCache = Mutex<HashMap<usize, (Py<PyType>, Arc<Plan>, u64)>>;

static VALUE_PLANS: PyOnceLock<PlanCache> = PyOnceLock::new();

/// The plan for a value of a type `typing.Any` meets at runtime (a dataclass, enum, datetime,
/// subclass of a builtin, ...), compiled once per type with default options. `None` when the
/// type has no plan.
pub fn plan_for_value(value: &Obj<'_>) -> Result<Option<Arc<Plan>>> {
    let py = value.py();
    let cls = value.get_type();
    let key = cls.as_ptr() as usize;
    let cache = VALUE_PLANS.get_or_init(py, || Mutex::new(HashMap::new()));
    let generation = options_generation();
    if let Some((_, plan, compiled_under)) = cache.lock().expect("plan cache").get(&key) {
        if *compiled_under == generation {
            return Ok(Some(plan.clone()));
        }
    }
    let compile = py.import("polycodec._plan")?.getattr("compile_spec")?;
    let spec = match compile.call1((&cls,)) {
        Ok(spec) => spec,
        Err(err) if err.is_instance_of::<PyTypeError>(py) => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    let plan = Arc::new(crate::plan::build_plan(&spec)?);
    if matches!(plan.node(plan.root), Node::Any) {
        return Ok(None);
    }
    // A plan compiled under older options, released after the lock (see `subclass_plan`).
    let stale = cache
        .lock()
        .expect("plan cache")
        .insert(key, (cls.unbind(), plan.clone(), generation));
    drop(stale);
    Ok(Some(plan))
}

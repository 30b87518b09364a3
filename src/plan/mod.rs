//! The type plan: what a value is, independent of any wire format.
//!
//! A plan is an arena of [`Node`]s that refer to each other by [`NodeId`], so recursive types are
//! cycles of indices. It is compiled once per (type, options) from the spec that
//! `python/polycodec/_plan.py` produces (see `docs/plan-spec.md`), and then only read, from any
//! thread. It holds no format's bytes: what a format precomputes from it (JSON's escaped field
//! keys, pickle's state forms, Avro's schema) lives in that format's per-codec state, built by
//! its `open` and indexed by [`NodeId`].

mod build;
pub mod constraints;
mod direct;
mod extension;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit};

use crate::errors::Code;
use crate::py::fields::{FieldAccess, FieldName};

pub use crate::py::defaults::{DefaultTest, Verdict};

// The record-side vocabulary the CPython room reads fields by (`py::fields`), which does not
// depend on the plan.
pub use crate::py::fields::{Plain, PlainRule, RecordKind};

pub use build::build_plan;
pub use constraints::{DecimalBounds, FloatBounds, IntBounds, LengthBounds, LengthUnit};
pub use direct::{DirectField, DirectKind};
pub use extension::ExtensionSpec;

pub type NodeId = usize;

/// A compiled plan: the nodes and the root.
pub struct Plan {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    /// A `Node::Any` every plan carries, for the values nested inside a runtime-typed value.
    pub any: NodeId,
    /// Whether some node is read before its value's first token: a `Node::Extension` (its
    /// wire type's value) or a `Node::Raw` (the value's bytes). The MessagePack and builtins
    /// decoders look for one at each value only then, so other plans pay one predictable
    /// branch.
    pub reads_node_first: bool,
    /// Whether some node is a `Node::Raw`: its decoders then keep `Raw` values as views of
    /// the input object (`raw::with_input`).
    pub has_raw: bool,
    /// `polycodec.UNSET`, when some record field may hold it (`RecordSpec::has_unset`).
    pub unset: Option<Py<PyAny>>,
    /// Whether decoding runs no Python code with side effects: no extension, and every record
    /// a dataclass or TypedDict without `__post_init__`, Python field setters, its own
    /// `__new__` or a default factory other than a builtin type. `from_builtins` then tries
    /// its direct walk first and, on any error, decodes the whole value again with the shared
    /// decoder, which words the error (see `codecs::builtins::direct`); the pickle decoder
    /// tries its single-pass path, which may give up and start again (`codecs::pickle::fast`),
    /// only then.
    pub decode_is_pure: bool,
    /// The keywords `compile_spec` compiled the plan with (format and record options); the
    /// plans of subclass instances met in its record fields are compiled with them too. None:
    /// its defaults (a plan for a value under `Any`).
    pub compile_options: Option<Py<PyDict>>,
    /// The plans of the subclasses whose instances were met where a record class was
    /// expected (see `shape::subclass_plan`).
    pub subclasses: SubclassPlans,
}

/// The plans of subclass instances met in a plan's record fields, by the subclass's address:
/// the class (kept alive, so the address stays its own), the options generation the plan was
/// compiled under (`shape::options_generation`), and the plan (`None` when the subclass writes
/// what its base class writes, or the reason the class has no plan).
pub type SubclassPlans = std::sync::Mutex<std::collections::HashMap<usize, SubclassPlan>>;

pub struct SubclassPlan {
    pub cls: Py<pyo3::types::PyType>,
    pub generation: u64,
    pub plan: std::result::Result<Option<std::sync::Arc<Plan>>, String>,
}

/// A node of untyped values (see [`Plan::untyped`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Untyped {
    /// `Any`: whatever the input holds.
    Any,
    /// `list[Any]`: an array.
    List,
    /// `dict[str, Any]`: a map of str keys.
    StrDict,
    /// `dict[Any, Any]`: a map whose keys are untyped too (a JSON object's are strs).
    AnyDict,
}

impl Plan {
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// The code of a value no variant of a union takes: `union_type`, or the one variant's
    /// type code when the union has only one.
    pub fn union_code(&self, variants: &[NodeId]) -> Code {
        match variants {
            [] => Code::ValueError,
            [only] => self.node(*only).type_code(),
            _ => Code::UnionType,
        }
    }

    /// Whether node `id` holds untyped values only, which the decoders read with loops of
    /// their own (no node is looked at below it): `Any`, and a `list[Any]`, `dict[str, Any]`
    /// or `dict[Any, Any]` without length bounds.
    pub fn untyped(&self, id: NodeId) -> Option<Untyped> {
        match self.node(id) {
            Node::Any => Some(Untyped::Any),
            Node::Sequence(spec)
                if spec.kind == SequenceKind::List
                    && spec.length.is_unbounded()
                    && matches!(self.node(spec.item), Node::Any) =>
            {
                Some(Untyped::List)
            }
            Node::Dict(spec)
                if spec.length.is_unbounded() && matches!(self.node(spec.value), Node::Any) =>
            {
                match self.node(spec.key) {
                    Node::Any => Some(Untyped::AnyDict),
                    Node::Str(key) if key.is_unconstrained() => Some(Untyped::StrDict),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Reports every Python object the plan holds to the garbage collector, so that a cycle
    /// through a codec (a class keeping its own codec as an attribute) can be collected.
    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        for node in &self.nodes {
            match node {
                Node::Str(spec) => visit.call(&spec.pattern)?,
                Node::Decimal(spec) => {
                    let bounds = &spec.bounds;
                    for bound in [&bounds.ge, &bounds.gt, &bounds.le, &bounds.lt] {
                        visit.call(bound)?;
                    }
                }
                Node::Enum(spec) => {
                    visit.call(&spec.cls)?;
                    for member in &spec.members {
                        visit.call(&member.member)?;
                    }
                }
                Node::Literal(spec) => {
                    for (_, value) in &spec.values {
                        visit.call(value)?;
                    }
                }
                Node::Extension(spec) => {
                    visit.call(&spec.cls)?;
                    visit.call(&spec.encode)?;
                    visit.call(&spec.decode)?;
                }
                Node::Record(spec) => {
                    visit.call(&spec.cls)?;
                    if let Some(tag) = spec.class_tag() {
                        visit.call(&tag.field.name)?;
                    }
                    visit.call(&spec.before_fill)?;
                    visit.call(&spec.after_fill)?;
                    spec.access.traverse(visit)?;
                    for field in &spec.fields {
                        visit.call(&field.name)?;
                        match &field.default {
                            FieldDefault::Value(value) | FieldDefault::Factory(value) => {
                                visit.call(value)?
                            }
                            FieldDefault::Required | FieldDefault::Absent => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(unset) = &self.unset {
            visit.call(unset)?;
        }
        visit.call(&self.compile_options)?;
        // Not waited for: a collection never runs while an encoder holds the lock (it takes
        // it without running Python code), and a plan visited at another moment is complete.
        if let Ok(subclasses) = self.subclasses.try_lock() {
            for entry in subclasses.values() {
                visit.call(&entry.cls)?;
                if let Ok(Some(plan)) = &entry.plan {
                    plan.traverse(visit)?;
                }
            }
        }
        Ok(())
    }

    /// The address of `polycodec.UNSET` when some field of the plan may hold it, else 0 (which
    /// no object has).
    #[inline]
    pub fn unset_addr(&self) -> usize {
        self.unset
            .as_ref()
            .map_or(0, |unset| unset.as_ptr() as usize)
    }

    /// Whether `value` is `polycodec.UNSET` (false when no field of the plan may hold it).
    #[inline]
    pub fn is_unset(&self, value: &Bound<'_, PyAny>) -> bool {
        self.unset.as_ref().is_some_and(|unset| value.is(unset))
    }
}

/// Whether a datetime or time must carry a tzinfo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TzRule {
    Either,
    Aware,
    Naive,
}

impl TzRule {
    /// Whether a value with (`aware`) or without a tzinfo is what the rule asks for
    /// (the rule `values::check_tz` reports on).
    #[inline]
    pub fn allows(self, aware: bool) -> bool {
        !matches!(
            (self, aware),
            (TzRule::Aware, false) | (TzRule::Naive, true)
        )
    }
}

pub enum Node {
    /// Builtins passthrough: JSON-like values decode to dict/list/str/int/float/bool/None.
    Any,
    None,
    Bool,
    Int(IntBounds),
    Float(FloatBounds),
    Str(StrSpec),
    Bytes(BytesSpec),
    Decimal(DecimalSpec),
    DateTime(TzRule),
    Date,
    Time(TzRule),
    TimeDelta,
    Uuid,
    Enum(EnumSpec),
    Literal(LiteralSpec),
    Union(UnionSpec),
    TaggedUnion(TaggedUnionSpec),
    Sequence(SequenceSpec),
    Tuple(Vec<NodeId>),
    Dict(DictSpec),
    Record(RecordSpec),
    /// A user class carried as another node's value (see `extension.rs`).
    Extension(ExtensionSpec),
    /// `polycodec.UNSET`, an alternative of a record field's union in a format whose wire says
    /// which alternative follows (Avro's branch, a pickle's global); the other formats leave
    /// it out of the plan (`Field::unset`) and write nothing for it.
    Unset,
    /// `polycodec.Raw`: a value kept as its bytes in the input, and written back as they are;
    /// `nullable` for `Optional[Raw]` (null and None pass through as themselves).
    Raw {
        nullable: bool,
    },
}

impl Node {
    /// The code of a type mismatch, by what was expected: `expected int, got str` is
    /// `int_type` (a relation, `int >= 0`, is the bound's code instead: see `plan/constraints.rs`).
    pub fn type_code(&self) -> Code {
        match self {
            Node::None => Code::NoneRequired,
            Node::Bool => Code::BoolType,
            Node::Int(_) => Code::IntType,
            Node::Float(_) => Code::FloatType,
            Node::Str(_) => Code::StringType,
            Node::Bytes(_) => Code::BytesType,
            Node::Decimal(_) => Code::DecimalType,
            Node::DateTime(_) => Code::DatetimeType,
            Node::Date => Code::DateType,
            Node::Time(_) => Code::TimeType,
            Node::TimeDelta => Code::TimeDeltaType,
            Node::Uuid => Code::UuidType,
            Node::Enum(_) => Code::Enum,
            Node::Literal(_) => Code::LiteralError,
            Node::Sequence(_) | Node::Tuple(_) => Code::ListType,
            Node::TaggedUnion(_) | Node::Dict(_) => Code::DictType,
            Node::Record(record) => match record.kind {
                RecordKind::NamedTuple => Code::ListType,
                _ if record.array_like => Code::ListType,
                _ => Code::DictType,
            },
            Node::Any | Node::Union(_) | Node::Extension(_) | Node::Unset | Node::Raw { .. } => {
                Code::ValueError
            }
        }
    }

    /// Whether this node's values are builtins or standard-library C types (or enum members,
    /// which live as long as their class), whose hashing and deallocation run no Python code.
    pub fn is_builtin_scalar(&self) -> bool {
        matches!(
            self,
            Node::Any
                | Node::None
                | Node::Bool
                | Node::Int(_)
                | Node::Float(_)
                | Node::Str(_)
                | Node::Bytes(_)
                | Node::Decimal(_)
                | Node::DateTime(_)
                | Node::Date
                | Node::Time(_)
                | Node::TimeDelta
                | Node::Literal(_)
        )
    }

    /// The name used in "expected ..." messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Node::Any => "any value",
            Node::None => "null",
            Node::Bool => "bool",
            Node::Int(_) => "int",
            Node::Float(_) => "float",
            Node::Str(_) => "str",
            Node::Bytes(_) => "bytes",
            Node::Decimal(_) => "decimal",
            Node::DateTime(_) => "datetime",
            Node::Date => "date",
            Node::Time(_) => "time",
            Node::TimeDelta => "timedelta",
            Node::Uuid => "uuid",
            Node::Enum(_) => "enum value",
            Node::Literal(_) => "literal value",
            Node::Union(_) => "union member",
            Node::TaggedUnion(_) => "object",
            Node::Sequence(spec) => match spec.kind {
                SequenceKind::List => "array",
                SequenceKind::Set => "array (set)",
                SequenceKind::FrozenSet => "array (frozenset)",
                SequenceKind::VarTuple => "array (tuple)",
            },
            Node::Tuple(_) => "array (tuple)",
            Node::Dict(_) => "object",
            Node::Record(record) => match record.kind {
                RecordKind::NamedTuple => "array (namedtuple)",
                _ if record.array_like => "array",
                _ => "object",
            },
            Node::Extension(_) => "extension value",
            Node::Unset => "UNSET",
            Node::Raw { .. } => "Raw",
        }
    }
}

pub struct StrSpec {
    pub length: LengthBounds,
    /// A compiled `re.Pattern`; values must match it (`pattern.search`).
    pub pattern: Option<Py<PyAny>>,
}

impl StrSpec {
    pub fn is_unconstrained(&self) -> bool {
        self.length.is_unbounded() && self.pattern.is_none()
    }
}

pub struct BytesSpec {
    /// What a decoded value is.
    pub class: BytesClass,
    pub length: LengthBounds,
}

/// The class a `bytes` node decodes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BytesClass {
    Bytes,
    ByteArray,
    /// A read-only `memoryview` over a new `bytes` object holding the data.
    MemoryView,
}

impl BytesSpec {
    /// A decoded value of this node holding `data` (its length is the caller's to check).
    #[inline]
    pub fn new_value<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        match self.class {
            BytesClass::Bytes => Ok(crate::py::new_bytes(py, data)?.into_any()),
            BytesClass::ByteArray => crate::py::new_bytearray(py, data),
            BytesClass::MemoryView => {
                let bytes = crate::py::new_bytes(py, data)?;
                Ok(pyo3::types::PyMemoryView::from(bytes.as_any())?.into_any())
            }
        }
    }
}

pub struct DecimalSpec {
    pub max_digits: Option<u32>,
    pub decimal_places: Option<u32>,
    pub bounds: DecimalBounds,
}

impl DecimalSpec {
    /// Whether any constraint applies (else a decoded value needs no check).
    #[inline]
    pub fn is_constrained(&self) -> bool {
        self.max_digits.is_some() || self.decimal_places.is_some() || !self.bounds.is_unbounded()
    }
}

/// An Enum class, encoded by value.
pub struct EnumSpec {
    pub cls: Py<PyAny>,
    /// The class's `__qualname__`.
    pub name: String,
    /// The class's `__module__`.
    pub module: String,
    pub members: Vec<EnumMember>,
    /// An `enum.Flag`: `members` are its canonical members, and any other int is decoded as
    /// `cls(value)` (see [`EnumSpec::flag_member`]).
    pub flag: bool,
}

pub struct EnumMember {
    pub member: Py<PyAny>,
    /// The member's `.name` (Avro enum symbols and pickles refer to members by name).
    pub name: String,
    pub value: LiteralValue,
    /// The member's `.value` object itself (`to_builtins` returns it when it is an exact str
    /// or int, the object `json.loads` would make an equal one of).
    pub value_object: Py<PyAny>,
}

impl EnumSpec {
    pub fn by_str(&self, text: &[u8]) -> Option<&Py<PyAny>> {
        self.members
            .iter()
            .find(|m| matches!(&m.value, LiteralValue::Str(s) if s.as_bytes() == text))
            .map(|m| &m.member)
    }

    pub fn by_int(&self, value: i64) -> Option<&Py<PyAny>> {
        self.members
            .iter()
            .find(|m| matches!(m.value, LiteralValue::Int(v) if v == value))
            .map(|m| &m.member)
    }

    /// The values this enum accepts, for error messages.
    pub fn describe_values(&self) -> impl std::fmt::Display + '_ {
        EnumValues(self)
    }

    /// The member a `Flag` class makes of an int that is none of its canonical members'
    /// values: `cls(value)` (its `_missing_`, which combines members, or lets the value through
    /// as its boundary says); `None` when the class refuses it (a `ValueError`) or for an enum
    /// that is no flag.
    #[cold]
    #[inline(never)]
    pub fn flag_member<'py>(
        &self,
        value: Bound<'py, PyAny>,
    ) -> crate::errors::Result<Option<Bound<'py, PyAny>>> {
        if !self.flag {
            return Ok(None);
        }
        let py = value.py();
        match crate::py::user_code(py, || self.cls.bind(py).call1((value,))) {
            Ok(member) => Ok(Some(member)),
            Err(err) if err.is_instance_of::<pyo3::exceptions::PyValueError>(py) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    pub fn has_str_values(&self) -> bool {
        self.members
            .iter()
            .any(|m| matches!(m.value, LiteralValue::Str(_)))
    }

    pub fn has_int_values(&self) -> bool {
        self.members
            .iter()
            .any(|m| matches!(m.value, LiteralValue::Int(_)))
    }
}

/// A value an Enum member or a Literal stands for on the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum LiteralValue {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl LiteralValue {
    /// The literal a str, int or bool value stands for.
    pub fn of(value: &Bound<'_, PyAny>) -> Option<LiteralValue> {
        if let Ok(flag) = value.cast::<pyo3::types::PyBool>() {
            return Some(LiteralValue::Bool(flag.is_true()));
        }
        if value.is_instance_of::<pyo3::types::PyInt>() {
            return crate::py::int_as_i64(value).map(LiteralValue::Int);
        }
        if let Ok(text) = value.cast::<PyString>() {
            return text.to_str().ok().map(|s| LiteralValue::Str(s.to_owned()));
        }
        None
    }
}

pub struct LiteralSpec {
    /// Each allowed value with the Python object returned for it (the annotation's own object).
    pub values: Vec<(LiteralValue, Py<PyAny>)>,
}

impl LiteralSpec {
    pub fn find(&self, value: &LiteralValue) -> Option<&Py<PyAny>> {
        self.values
            .iter()
            .find(|(v, _)| v == value)
            .map(|(_, obj)| obj)
    }

    /// The object of the str literal whose text is `bytes`, compared without making a string.
    #[inline]
    pub fn find_str(&self, bytes: &[u8]) -> Option<&Py<PyAny>> {
        self.values.iter().find_map(|(v, obj)| match v {
            LiteralValue::Str(text) if text.as_bytes() == bytes => Some(obj),
            _ => None,
        })
    }

    pub fn describe_values(&self) -> impl std::fmt::Display + '_ {
        OneOf(self.values.iter().map(|(value, _)| value))
    }
}

/// [`EnumSpec::describe_values`].
struct EnumValues<'a>(&'a EnumSpec);

impl std::fmt::Display for EnumValues<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        OneOf(self.0.members.iter().map(|member| &member.value)).fmt(f)?;
        if self.0.flag {
            f.write_str(", or a combination of them")?;
        }
        Ok(())
    }
}

/// `one of "a", "b", 3` for error messages, shortened after a dozen values; a `Display`, so
/// that a message is written with nothing allocated first.
pub struct OneOf<I>(pub I);

impl<'a, I: Iterator<Item = &'a LiteralValue> + Clone> std::fmt::Display for OneOf<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 12;
        f.write_str("one of ")?;
        for (i, value) in self.0.clone().take(SHOWN).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            value.fmt(f)?;
        }
        let count = self.0.clone().count();
        if count > SHOWN {
            write!(f, ", ... ({count} in all)")?;
        }
        Ok(())
    }
}

impl LiteralValue {
    pub fn is_int(&self) -> bool {
        matches!(self, LiteralValue::Int(_))
    }
}

impl std::fmt::Display for LiteralValue {
    /// As the value appears in JSON: strings quoted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Input text can be long: quoted as error messages quote input.
            LiteralValue::Str(text) => crate::errors::Quoted(text).fmt(f),
            LiteralValue::Int(number) => write!(f, "{number}"),
            LiteralValue::Bool(flag) => write!(f, "{flag}"),
        }
    }
}

/// A union, with the variant to use for each kind of wire token precomputed. Unions are checked
/// unambiguous when the plan is compiled, so every token kind has at most one candidate, except
/// for the records of a format that marks the branch on the wire (see `records`).
pub struct UnionSpec {
    pub variants: Vec<NodeId>,
    pub none: Option<NodeId>,
    pub bool: Option<NodeId>,
    pub int: Option<NodeId>,
    pub float: Option<NodeId>,
    pub str: Option<NodeId>,
    pub array: Option<NodeId>,
    pub object: Option<NodeId>,
    /// `(class address, variant)` for each dataclass or namedtuple variant, filled only when a
    /// union has two or more of them (formats that mark the branch on the wire, such as Avro,
    /// allow that without a tag). The token slots above then hold the first such record; an
    /// encoder picks the variant by the value's class instead.
    pub records: Vec<(usize, NodeId)>,
}

impl UnionSpec {
    /// `X`'s node when the union is `Optional[X]`: exactly two variants, one of them `None`.
    #[inline]
    pub fn optional_member(&self) -> Option<NodeId> {
        match (self.none, self.variants.as_slice()) {
            (Some(none), &[a, b]) => Some(if a == none { b } else { a }),
            _ => None,
        }
    }

    /// The record variant whose class is exactly `type_addr`.
    #[inline]
    pub fn record_of_class(&self, type_addr: usize) -> Option<NodeId> {
        self.records
            .iter()
            .find(|(addr, _)| *addr == type_addr)
            .map(|(_, id)| *id)
    }
}

/// A union of records dispatched on a shared `Literal` field.
pub struct TaggedUnionSpec {
    pub tag_field: String,
    pub tags: Vec<(LiteralValue, NodeId)>,
    /// Every field name of the variants, with the node that decodes it when all variants that
    /// have the field decode it the same way. Lets a decoder read fields that arrive before the
    /// tag in one pass; only fields whose type depends on the variant are read later.
    pub keys: Vec<UnionKey>,
    /// `(class address, variant)` for each variant, so an encoder picks the variant of a value
    /// of the class itself by pointer comparison.
    pub classes: Vec<(usize, NodeId)>,
}

pub struct UnionKey {
    pub wire_name: String,
    pub shared: Option<NodeId>,
}

impl TaggedUnionSpec {
    /// The tag values this union accepts, for error messages.
    pub fn describe_tags(&self) -> impl std::fmt::Display + '_ {
        OneOf(self.tags.iter().map(|(tag, _)| tag))
    }

    pub fn key_index(&self, wire_name: &[u8]) -> Option<usize> {
        self.keys
            .iter()
            .position(|k| k.wire_name.as_bytes() == wire_name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequenceKind {
    List,
    Set,
    FrozenSet,
    VarTuple,
}

pub struct SequenceSpec {
    pub kind: SequenceKind,
    pub item: NodeId,
    pub length: LengthBounds,
    /// The plain scalar kind of `item` (see [`PlainRule::for_node`]): the encoders write a
    /// list's plain items straight from the list.
    pub plain: Option<PlainRule>,
}

pub struct DictSpec {
    pub key: NodeId,
    pub value: NodeId,
    pub length: LengthBounds,
    /// The plain scalar kind of `value` (see [`PlainRule::for_node`]).
    pub plain: Option<PlainRule>,
    /// Whether the key node is `str` (or `Any`): an exact str key is written as it is.
    pub str_keys: bool,
}

/// What a record knows besides its fields' wire names ([`RecordSpec::other_names`]).
pub struct OtherNames {
    /// The class's own tag, written first whenever the class is (see [`ClassTag`]).
    pub class_tag: Option<ClassTag>,
    /// Other names a field is read by (`Meta(aliases=...)`): each with the field's position in
    /// `wire_fields`.
    pub aliases: Vec<(String, usize)>,
}

/// A map key that is none of a record's wire names ([`RecordSpec::other_key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtherKey {
    /// The class tag's key: its value must be the tag (read as this `Literal` node).
    ClassTag(NodeId),
    /// An alias: its entry in `RecordSpec::aliases`.
    Alias(usize),
    /// No name of the record's.
    Unknown,
}

/// How a decoder fills a field the input left out, decided when the plan is built: no call
/// and no look at the default for the common kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// No default: the field is reported missing (or, not on the wire, left to
    /// `__post_init__`).
    Required,
    /// Left out of a TypedDict.
    Absent,
    /// The default object itself (`FieldDefault::Value`), shared by every instance as the
    /// class's `__init__` shares it.
    Shared,
    /// A new empty `list` (the factory is exactly `list`).
    EmptyList,
    /// A new empty `dict` (the factory is exactly `dict`).
    EmptyDict,
    /// A new empty `set` (the factory is exactly `set`).
    EmptySet,
    /// Any other factory, called (Python code).
    Call,
}

pub enum FieldDefault {
    Required,
    /// Optional in the wire data, with nothing to fill in (a non-total TypedDict key).
    Absent,
    Value(Py<PyAny>),
    Factory(Py<PyAny>),
}

impl PlainRule {
    /// The rule for a field of type `id`, when the node is a plain scalar or `Optional` of one.
    pub fn for_node(plan: &Plan, id: NodeId) -> Option<PlainRule> {
        fn kind(node: &Node) -> Option<Plain> {
            match node {
                Node::Str(_) => Some(Plain::Str),
                Node::Int(_) => Some(Plain::Int),
                Node::Float(_) => Some(Plain::Float),
                Node::Bool => Some(Plain::Bool),
                Node::DateTime(_) => Some(Plain::DateTime),
                _ => None,
            }
        }
        match plan.node(id) {
            Node::Union(spec) => spec.optional_member().and_then(|other| {
                kind(plan.node(other)).map(|kind| PlainRule {
                    kind,
                    nullable: true,
                })
            }),
            node => kind(node).map(|kind| PlainRule {
                kind,
                nullable: false,
            }),
        }
    }
}

pub struct Field {
    /// The attribute (or TypedDict key) name, interned (a class tag's: its wire name).
    pub name: Py<PyString>,
    pub wire_name: String,
    /// `wire_name` as an interned str (the same object as `name` when they are equal): the key
    /// `to_builtins` writes, with its hash already computed.
    pub wire_key: Py<PyString>,
    pub node: NodeId,
    pub default: FieldDefault,
    /// False for dataclass fields declared `init=False`: never on the wire.
    pub on_wire: bool,
    /// The plain scalar kind of `node` (or `Optional` of one), precomputed for the encoders.
    pub plain: Option<PlainRule>,
    /// The field may hold `polycodec.UNSET` (its annotation is `T | UnsetType`): the value
    /// UNSET is left out of a map, as if the field were not there.
    pub unset: bool,
    /// How `omit_defaults` compares the field's value with its default, decided when the plan
    /// is built ([`DefaultTest::Never`] for a record without the option, and for its tag).
    pub omit: DefaultTest,
}

/// How the encoders walk a record's fields, decided when the plan is built: an array form is a
/// walk of its own, not a flag tested at every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordLayout {
    /// A map of every wire field (`RecordSpec::common_map`, `RecordSpec::class_map`).
    Full,
    /// A map whose fields may be left out: at their default under `omit_defaults`, UNSET, or a
    /// TypedDict's absent keys.
    Sparse,
    /// An array of the wire fields in order (`array_like`, a NamedTuple).
    Array,
    /// The general walk (an `array_like` TypedDict).
    General,
}

/// A class tag (`polycodec.options(tag=...)`): a tag the class itself carries rather than one
/// of its fields, written first, before its fields, and read as a `Literal` of the one value.
pub struct ClassTag {
    /// The tag as a field no attribute holds: its wire name, and its node, a `Literal` of the
    /// tag (its index in the writers' and readers' name tables is `RecordSpec::fields.len()`).
    pub field: Field,
    pub value: LiteralValue,
}

impl FieldName for Field {
    #[inline(always)]
    fn field_name(&self) -> &Py<PyString> {
        &self.name
    }
}

pub struct RecordSpec {
    pub kind: RecordKind,
    pub cls: Py<PyAny>,
    /// `cls` as a type pointer, for the identity check on encode.
    pub type_addr: usize,
    pub qualname: String,
    /// The class's `__module__` (pickles and Avro namespaces name classes by module).
    pub module: String,
    pub fields: Vec<Field>,
    /// Whether a new instance's fields are followed by Python code: the dataclass's
    /// `__post_init__`, or `after_fill`.
    pub post_init: bool,
    /// Called with a new instance before its fields are set (an attrs class's
    /// `__attrs_pre_init__`).
    pub before_fill: Option<Py<PyAny>>,
    /// Called with a new instance once its fields are set, in place of `__post_init__` (an
    /// attrs class's validators and `__attrs_post_init__`).
    pub after_fill: Option<Py<PyAny>>,
    /// Setting the fields runs user code (see `py::user_code`): some field is set through a
    /// descriptor defined in Python (its `__set__` is Python code), or `before_fill` runs
    /// first.
    pub user_setattr: bool,
    /// A named tuple whose `__new__` is the one `collections.namedtuple` generates (it calls
    /// `tuple.__new__(cls, fields)`) and whose `__init__` is `object`'s: decoding makes its
    /// instances with that call, in C, rather than calling the class.
    pub tuple_new: bool,
    /// A TypedDict's keys in field order with `None` values (the `dict_template` layout, where
    /// it is in use): a decoded dict with every key is a copy of it filled by position.
    pub dict_template: Option<crate::py::cpython::DictTemplate>,
    /// A frozen dataclass (always true for a namedtuple).
    pub frozen: bool,
    pub slots: bool,
    /// How the fields of an instance are read and stored, chosen once for the class.
    pub access: FieldAccess,
    pub forbid_unknown_fields: bool,
    pub omit_defaults: bool,
    pub array_like: bool,
    /// The tag field's index and value when this record is a tagged-union variant.
    pub tag: Option<(usize, LiteralValue)>,
    /// The names the record knows besides its fields' wire names (a class tag, aliases), boxed:
    /// most records have none, and every node is as large as a record (a smaller node keeps
    /// more of a plan in the cache).
    pub other_names: Option<Box<OtherNames>>,
    /// A map whose every field is written from the writers' entry table (a dataclass, not
    /// `array_like`, no `omit_defaults`, no field that may be UNSET): `Encoder::record`'s
    /// common path, with `class_map` for a class tagged on its own.
    pub common_map: bool,
    pub class_map: bool,
    /// How the encoders walk the fields (see [`RecordLayout`]).
    pub layout: RecordLayout,
    /// Whether the tag field's `Literal` allows only the class's own tag, so every instance
    /// writes the same leading tag entry (byte formats precompute it: `Encoder::leading_tag`).
    pub fixed_tag: bool,
    /// Positions of the fields that are on the wire, in declaration order.
    pub wire_fields: Vec<usize>,
    /// `wire_fields` with each field's node beside its position, for the decoders' ordered
    /// path: matching the next field and decoding its value then reads no `Field` (72 bytes,
    /// one cache line each; issue 10, hierarchy decode's L1 misses).
    pub wire_order: Box<[(usize, NodeId)]>,
    /// `from_builtins`' view of the wire fields, in the same order (see [`DirectField`]);
    /// empty for a record whose fields do not fit its entries.
    pub direct: Box<[DirectField]>,
    /// How each field (by index in `fields`) is filled when the input leaves it out.
    pub fills: Box<[Fill]>,
}

impl RecordSpec {
    /// The class's own tag.
    #[inline]
    pub fn class_tag(&self) -> Option<&ClassTag> {
        self.other_names.as_ref()?.class_tag.as_ref()
    }

    /// The fields' aliases, each with the field's position in `wire_fields`.
    #[inline]
    pub fn aliases(&self) -> &[(String, usize)] {
        match &self.other_names {
            Some(names) => &names.aliases,
            None => &[],
        }
    }

    /// The index of the field with this wire name, or alias.
    pub fn field_index(&self, wire_name: &[u8]) -> Option<usize> {
        self.find_wire_field(wire_name, 0)
            .or_else(|| self.find_alias(wire_name))
            .map(|position| self.wire_fields[position])
    }

    /// The position in `wire_fields` of the field that has `key` as an alias.
    #[cold]
    #[inline(never)]
    pub fn find_alias(&self, key: &[u8]) -> Option<usize> {
        self.aliases()
            .iter()
            .find(|(alias, _)| alias.as_bytes() == key)
            .map(|&(_, position)| position)
    }

    /// The tag a decoder may meet among the fields: the `Literal` tag field's index, or for a
    /// class tag `fields.len()` (where the name tables keep its entry), with its field.
    #[inline]
    pub fn tag_field(&self) -> Option<(usize, &Field)> {
        match (&self.tag, self.class_tag()) {
            (Some((index, _)), _) => Some((*index, &self.fields[*index])),
            (None, Some(tag)) => Some((self.fields.len(), &tag.field)),
            (None, None) => None,
        }
    }

    /// What a map key that is none of the fields' wire names is to the record.
    #[cold]
    #[inline(never)]
    pub fn other_key(&self, key: &[u8]) -> OtherKey {
        if let Some(tag) = self.class_tag() {
            if tag.field.wire_name.as_bytes() == key {
                return OtherKey::ClassTag(tag.field.node);
            }
        }
        match self
            .aliases()
            .iter()
            .position(|(alias, _)| alias.as_bytes() == key)
        {
            Some(entry) => OtherKey::Alias(entry),
            None => OtherKey::Unknown,
        }
    }

    /// Finds a field by its wire name, starting the scan at `hint` (the field after the one
    /// matched last), so keys in declaration order match on the first comparison.
    #[inline]
    pub fn find_wire_field(&self, key: &[u8], hint: usize) -> Option<usize> {
        let count = self.wire_fields.len();
        for step in 0..count {
            let mut position = hint + step;
            if position >= count {
                position -= count;
            }
            let index = self.wire_fields[position];
            if self.fields[index].wire_name.as_bytes() == key {
                return Some(position);
            }
        }
        None
    }
}

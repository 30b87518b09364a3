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
use pyo3::types::PyString;
use pyo3::{PyTraverseError, PyVisit};

use crate::py::fields::{FieldAccess, FieldName};

// The record-side vocabulary the CPython room reads fields by (`py::fields`), which does not
// depend on the plan.
pub use crate::py::fields::{Plain, PlainRule, RecordKind};

pub use build::build_plan;
pub use constraints::{DecimalBounds, FloatBounds, IntBounds, LengthBounds};
pub use direct::{DirectField, DirectKind};
pub use extension::ExtensionSpec;

pub type NodeId = usize;

/// A compiled plan: the nodes and the root.
pub struct Plan {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    /// A `Node::Any` every plan carries, for the values nested inside a runtime-typed value.
    pub any: NodeId,
    /// Whether some node is a `Node::Extension`: the JSON and MessagePack decoders look for
    /// one at each value only then, so plans without extensions pay one predictable branch.
    pub has_extensions: bool,
    /// Whether decoding runs no Python code with side effects: no extension, and every record
    /// a dataclass or TypedDict without `__post_init__`, Python field setters, its own
    /// `__new__` or a default factory other than a builtin type. `from_builtins` then tries
    /// its direct walk first and, on any error, decodes the whole value again with the shared
    /// decoder, which words the error (see `codecs::builtins::direct`); the pickle decoder
    /// tries its single-pass path, which may give up and start again (`codecs::pickle::fast`),
    /// only then.
    pub decode_is_pure: bool,
}

impl Plan {
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
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
        Ok(())
    }
}

/// Whether a datetime or time must carry a tzinfo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TzRule {
    Either,
    Aware,
    Naive,
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
}

impl Node {
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
    pub bytearray: bool,
    pub length: LengthBounds,
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
    pub fn describe_values(&self) -> String {
        one_of(self.members.iter().map(|member| &member.value))
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

    pub fn describe_values(&self) -> String {
        one_of(self.values.iter().map(|(value, _)| value))
    }
}

/// `one of "a", "b", 3` for error messages, shortened after a dozen values.
pub fn one_of<'a>(values: impl Iterator<Item = &'a LiteralValue>) -> String {
    const SHOWN: usize = 12;
    let values: Vec<&LiteralValue> = values.collect();
    let mut text = String::from("one of ");
    for (i, value) in values.iter().take(SHOWN).enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&value.to_string());
    }
    if values.len() > SHOWN {
        text.push_str(&format!(", ... ({} in all)", values.len()));
    }
    text
}

impl std::fmt::Display for LiteralValue {
    /// As the value appears in JSON: strings quoted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Input text can be long: quoted as error messages quote input.
            LiteralValue::Str(text) => f.write_str(&crate::errors::quote(text)),
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
    pub fn describe_tags(&self) -> String {
        one_of(self.tags.iter().map(|(tag, _)| tag))
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
}

pub struct DictSpec {
    pub key: NodeId,
    pub value: NodeId,
    pub length: LengthBounds,
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
    /// The attribute (or TypedDict key) name, interned.
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
    pub post_init: bool,
    /// Some field is set through a descriptor defined in Python (its `__set__` is Python
    /// code), so setting fields runs user code (see `py::user_code`).
    pub user_setattr: bool,
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
}

impl RecordSpec {
    /// The index of the field with this wire name.
    pub fn field_index(&self, wire_name: &[u8]) -> Option<usize> {
        self.find_wire_field(wire_name, 0)
            .map(|position| self.wire_fields[position])
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

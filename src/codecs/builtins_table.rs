//! The compact field tables `to_builtins`'s direct walk ([`super::builtins::walk`]) reads records from.
//!
//! A record's fields, as the plan holds them ([`Field`](crate::plan::Field), about 80 bytes
//! each, plus the node of each field), spread one record over some twenty cache lines; a deep
//! value (the ten-level hierarchy) then reads more plan than the first-level data cache holds
//! next to the value itself, and each call misses on the plan again. The table keeps what the
//! walk reads per field in one 32-byte entry (the attribute name and the key objects, the node,
//! and what kind of value the node takes, so that the common kinds are converted without
//! reading their node), and per record one row (the class, the entries, whether the walk
//! writes it itself), all in two arrays.
//!
//! Built once per JSON codec, when it is opened ([`Table::build`]: the form `to_builtins`
//! writes is JSON's), and kept in its state, not in the plan; the plan's own records stay the
//! reference (for every error, tag and slow path).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};

use crate::plan::{EnumSpec, Field, LiteralValue, Node, NodeId, Plan, RecordKind, RecordLayout};
use crate::py::cpython::{self, DictTemplate};

/// What a field's node takes, as far as the walk converts it without reading the node.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Str,
    Int,
    /// Exact floats and exact ints.
    Float,
    Bool,
    DateTime,
    Date,
    Decimal,
    /// A record: [`Entry::child`] is its row.
    Record,
    /// An enum: [`Entry::child`] is where its members start in [`Table::members`].
    Enum,
    /// Any other node: the walk dispatches on it.
    Other,
}

/// One field of a record, in the order its dict is written.
pub struct Entry {
    /// The attribute name (the plan's interned str).
    pub name: Py<PyString>,
    /// The dict key written (the plan's interned wire name).
    pub key: Py<PyString>,
    /// The node the value is converted as: for an `Optional[X]` of a kind other than
    /// [`Kind::Other`] or [`Kind::DateTime`], the node of `X` (None is checked first, by
    /// [`Entry::nullable`]).
    pub node: u32,
    /// For [`Kind::Record`], the child record's row; for [`Kind::Enum`], the first of its
    /// members in [`Table::members`].
    pub child: u32,
    /// The field's index in its record.
    pub index: u32,
    pub kind: Kind,
    /// `Optional[...]`: None is written as itself.
    pub nullable: bool,
}

/// How the walk writes a record. `Plain` and `Tagged` come first: the walk tells them from
/// the others with one comparison.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Mode {
    /// A dataclass with no tag, written from its entries.
    Plain,
    /// A tagged-union variant, or a class with a tag of its own: its tag is written first.
    Tagged,
    /// Every other record (a tag whose `Literal` allows several values, an `array_like`
    /// TypedDict): the shared encoder writes it.
    General,
    /// A dict whose fields may be left out (`RecordLayout::Sparse`: `omit_defaults`, UNSET, a
    /// TypedDict), tag first for a tagged one.
    Sparse,
    /// A list (`RecordLayout::Array`: `array_like`, a NamedTuple), tag first for a tagged one.
    Array,
}

/// A tagged-union variant's tag, or a class's own tag, when its `Literal` allows one exact str
/// or int: written as the record's first entry.
pub struct RowTag {
    /// The tag field's index (`usize::MAX` for a class tag, which no field holds).
    pub index: usize,
    /// Its dict key.
    pub key: Py<PyString>,
    /// The one object the `Literal` allows.
    pub object: Py<PyAny>,
    /// The `Literal` node, for a field value that is not `object` itself.
    pub literal: NodeId,
}

/// One record of the plan.
pub struct Row {
    /// The record's class, for the exact-type check (`dict` for a TypedDict, whose values are
    /// dicts).
    pub type_addr: usize,
    /// Its entries: `entries[start..end]`.
    pub start: u32,
    pub end: u32,
    pub mode: Mode,
    /// The tag, for [`Mode::Tagged`].
    pub tag: Option<RowTag>,
    /// For [`Mode::Plain`] and [`Mode::Tagged`], the record's dict with `None` for every value
    /// (the tag's key first, then the entries'), which the walk copies and fills by position;
    /// `None` where dicts are filled key by key (see `py::cpython::dicts`).
    pub template: Option<DictTemplate>,
}

/// An enum member whose value is an exact str or int (its JSON form is that object itself).
pub struct Member {
    /// The member's address (members are compared by identity); 0 ends an enum's members.
    pub addr: usize,
    /// The member's `.value` (`None` for the end).
    pub value: Py<PyAny>,
}

/// The tables of every record of a plan.
#[derive(Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub entries: Vec<Entry>,
    /// The members of each enum an entry takes, each enum's ended by a member of address 0.
    pub members: Vec<Member>,
    /// Each node's row (`u32::MAX` for a node that is not a record).
    pub row_of: Vec<u32>,
}

impl Table {
    /// The row of record node `id`.
    #[inline(always)]
    pub fn row(&self, id: NodeId) -> Option<u32> {
        match self.row_of.get(id) {
            Some(&row) if row != u32::MAX => Some(row),
            _ => None,
        }
    }

    pub fn build(py: Python<'_>, plan: &Plan) -> Table {
        let mut row_of = vec![u32::MAX; plan.nodes.len()];
        let mut count = 0u32;
        for (id, node) in plan.nodes.iter().enumerate() {
            if let Node::Record(_) = node {
                row_of[id] = count;
                count += 1;
            }
        }
        let mut rows = Vec::with_capacity(count as usize);
        let mut entries = Vec::new();
        let mut members = Vec::new();
        for node in &plan.nodes {
            let Node::Record(spec) = node else {
                continue;
            };
            let start = entries.len() as u32;
            for &index in &spec.wire_fields {
                let field = &spec.fields[index];
                let (kind, nullable, target) = classify(plan, field.node);
                let child = match (kind, plan.node(target)) {
                    (Kind::Record, _) => row_of[target],
                    (Kind::Enum, Node::Enum(spec)) => {
                        let start = members.len() as u32;
                        members.extend(enum_members(py, spec));
                        start
                    }
                    _ => u32::MAX,
                };
                entries.push(Entry {
                    name: field.name.clone_ref(py),
                    key: field.wire_key.clone_ref(py),
                    node: target as u32,
                    child,
                    index: index as u32,
                    kind,
                    nullable,
                });
            }
            let tag = match (&spec.tag, spec.class_tag()) {
                (Some((index, _)), _) => fixed_tag(py, plan, &spec.fields[*index], *index),
                (None, Some(class_tag)) => fixed_tag(py, plan, &class_tag.field, usize::MAX),
                (None, None) => None,
            };
            let tagged = spec.tag.is_some() || spec.class_tag().is_some();
            let mode = match spec.layout {
                // A tag whose `Literal` allows more than one object: the shared encoder.
                _ if tagged && tag.is_none() => Mode::General,
                RecordLayout::Full if tagged => Mode::Tagged,
                RecordLayout::Full => Mode::Plain,
                RecordLayout::Sparse => Mode::Sparse,
                RecordLayout::Array => Mode::Array,
                RecordLayout::General => Mode::General,
            };
            let template = match mode {
                Mode::General | Mode::Sparse | Mode::Array => None,
                Mode::Plain | Mode::Tagged => {
                    let tag_index = tag.as_ref().map(|t| t.index);
                    let keys: Vec<_> = tag
                        .iter()
                        .map(|t| t.key.bind(py).clone())
                        .chain(
                            entries[start as usize..]
                                .iter()
                                .filter(|e| Some(e.index as usize) != tag_index)
                                .map(|e| e.key.bind(py).clone()),
                        )
                        .collect();
                    cpython::dict_template(py, &keys)
                }
            };
            let type_addr = match spec.kind {
                RecordKind::TypedDict => std::ptr::addr_of_mut!(pyo3::ffi::PyDict_Type) as usize,
                _ => spec.type_addr,
            };
            rows.push(Row {
                type_addr,
                start,
                end: entries.len() as u32,
                mode,
                tag,
                template,
            });
        }
        Table {
            rows,
            entries,
            members,
            row_of,
        }
    }
}

/// The tag whose field (`index`, `usize::MAX` for a class tag) has a `Literal` of one exact
/// str or int.
fn fixed_tag(py: Python<'_>, plan: &Plan, field: &Field, index: usize) -> Option<RowTag> {
    let Node::Literal(literal) = plan.node(field.node) else {
        return None;
    };
    let [(_, object)] = literal.values.as_slice() else {
        return None;
    };
    let bound = object.bind(py);
    let plain = bound.is_exact_instance_of::<PyString>()
        || (bound.is_exact_instance_of::<PyInt>() && !bound.is_exact_instance_of::<PyBool>());
    plain.then(|| RowTag {
        index,
        key: field.wire_key.clone_ref(py),
        object: object.clone_ref(py),
        literal: field.node,
    })
}

/// The members of `spec` whose value is an exact str or int (as the walk's generic enum path
/// returns those values themselves), then the end.
fn enum_members(py: Python<'_>, spec: &EnumSpec) -> Vec<Member> {
    let mut members: Vec<Member> = spec
        .members
        .iter()
        .filter(|m| {
            let object = m.value_object.bind(py);
            match m.value {
                LiteralValue::Str(_) => object.is_exact_instance_of::<PyString>(),
                LiteralValue::Int(_) => object.is_exact_instance_of::<PyInt>(),
                _ => false,
            }
        })
        .map(|m| Member {
            addr: m.member.as_ptr() as usize,
            value: m.value_object.clone_ref(py),
        })
        .collect();
    members.push(Member {
        addr: 0,
        value: py.None(),
    });
    members
}

/// The kind of node `id`, whether it is `Optional[...]` of that kind, and the node the value
/// is converted as.
fn classify(plan: &Plan, id: NodeId) -> (Kind, bool, NodeId) {
    fn kind(node: &Node) -> Kind {
        match node {
            Node::Str(_) => Kind::Str,
            Node::Int(_) => Kind::Int,
            Node::Float(_) => Kind::Float,
            Node::Bool => Kind::Bool,
            Node::DateTime(_) => Kind::DateTime,
            Node::Date => Kind::Date,
            Node::Decimal(_) => Kind::Decimal,
            Node::Record(_) => Kind::Record,
            Node::Enum(_) => Kind::Enum,
            _ => Kind::Other,
        }
    }
    if let Node::Union(spec) = plan.node(id) {
        if let Some(other) = spec.optional_member() {
            return match kind(plan.node(other)) {
                Kind::Other => (Kind::Other, false, id),
                // The shared encoder takes the `Optional` for a datetime the walk leaves to it
                // (as the walk's plain rule does).
                Kind::DateTime => (Kind::DateTime, true, id),
                found => (found, true, other),
            };
        }
        return (Kind::Other, false, id);
    }
    (kind(plan.node(id)), false, id)
}

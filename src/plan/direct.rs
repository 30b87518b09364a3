//! Each record's fields as `from_builtins`' direct walk reads them (see
//! `codecs::builtins::direct`): one small entry per wire field, in wire order, holding the key
//! object `to_builtins` writes and what the field's value takes, so the walk matches a key and
//! handles the common values without reading the field or its node (nodes are large, and a
//! record touches one per field).

use super::{FloatBounds, IntBounds, Node, NodeId, Plan, RecordKind, SequenceKind, TzRule};

/// What a field's value takes, as far as the direct walk handles it without its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectKind {
    /// Anything else: the walk reads the field's node.
    Other,
    /// An unconstrained str: an exact str is its own result.
    Str,
    /// A str with length bounds only (`node` is the str): an exact ASCII str whose length
    /// passes them is its own result.
    StrBounded,
    /// An int without bounds: an exact int that fits in 64 bits is its own result.
    Int,
    /// An int with bounds (`node` is the int): an exact int that fits in 64 bits and passes
    /// them is its own result.
    IntBounded,
    /// A float without bounds: an exact finite float is its own result.
    Float,
    /// An exact bool is its own result.
    Bool,
    /// A datetime, read from its str form.
    DateTime(TzRule),
    /// A date, read from its str form.
    Date,
    /// An enum (`node` is the enum), read from its str value.
    Enum,
    /// A Decimal (`node`), read from its str form.
    Text,
    /// A UUID, read from its str form.
    Uuid,
    /// A Literal (`node`), read from its str form (never `nullable`).
    Literal,
    /// A record (`node`) read from a dict's entries.
    Record,
    /// A tagged union (`node`) read from a dict.
    Tagged,
    /// A list without length bounds; `node` is its item's node.
    List,
}

/// One wire field of a record, for the direct walk (16 bytes).
#[derive(Clone, Copy, Debug)]
pub struct DirectField {
    /// The address of the field's `wire_key` str, the key `to_builtins` writes (compared by
    /// pointer; the field keeps the str alive).
    pub key: usize,
    /// The node `kind` refers to: the field's node, the `Optional`'s other member when
    /// `nullable`, or a list's item node.
    pub node: u32,
    /// The field's position in `RecordSpec::fields`.
    pub index: u16,
    pub kind: DirectKind,
    /// The field is `Optional[...]` of `kind`: None is its own result.
    pub nullable: bool,
}

/// Fills `RecordSpec::direct` for every record of the plan. A record whose field positions or
/// node ids do not fit an entry gets no table; the walk hands such records to the shared decoder.
pub(super) fn resolve_direct_fields(plan: &mut Plan) {
    for id in 0..plan.nodes.len() {
        let table = match &plan.nodes[id] {
            Node::Record(spec) => spec
                .wire_fields
                .iter()
                .map(|&index| {
                    let field = &spec.fields[index];
                    let (kind, node, nullable) = classify(plan, field.node);
                    Some(DirectField {
                        key: field.wire_key.as_ptr() as usize,
                        node: u32::try_from(node).ok()?,
                        index: u16::try_from(index).ok()?,
                        kind,
                        nullable,
                    })
                })
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default(),
            _ => continue,
        };
        if let Node::Record(spec) = &mut plan.nodes[id] {
            spec.direct = table.into_boxed_slice();
        }
    }
}

/// The kind of node `id`, the node the kind refers to, and whether None is accepted too.
fn classify(plan: &Plan, id: NodeId) -> (DirectKind, NodeId, bool) {
    let Node::Union(union) = plan.node(id) else {
        let (kind, node) = kind(plan, id);
        return (kind, node, false);
    };
    let Some(member) = union.optional_member() else {
        return (DirectKind::Other, id, false);
    };
    let (kind, node) = kind(plan, member);
    // The union must send the values the kind takes to that member, as the shared decoder
    // resolves them (then the member's reading is the union's).
    let routed = match kind {
        DirectKind::Str
        | DirectKind::StrBounded
        | DirectKind::DateTime(_)
        | DirectKind::Date
        | DirectKind::Enum
        | DirectKind::Text
        | DirectKind::Uuid => union.str,
        DirectKind::Int | DirectKind::IntBounded => union.int,
        DirectKind::Float => union.float,
        DirectKind::Bool => union.bool,
        DirectKind::Record | DirectKind::Tagged => union.object,
        DirectKind::List => union.array,
        DirectKind::Other | DirectKind::Literal => None,
    };
    if routed == Some(member) {
        (kind, node, true)
    } else {
        (DirectKind::Other, id, false)
    }
}

/// The kind of node `id` (not a union) and the node it refers to.
fn kind(plan: &Plan, id: NodeId) -> (DirectKind, NodeId) {
    let kind = match plan.node(id) {
        Node::Str(spec) if spec.is_unconstrained() => DirectKind::Str,
        Node::Str(spec) if spec.pattern.is_none() => DirectKind::StrBounded,
        Node::Int(bounds) if *bounds == IntBounds::default() => DirectKind::Int,
        Node::Int(_) => DirectKind::IntBounded,
        Node::Float(bounds) if *bounds == FloatBounds::default() => DirectKind::Float,
        Node::Bool => DirectKind::Bool,
        Node::DateTime(rule) => DirectKind::DateTime(*rule),
        Node::Date => DirectKind::Date,
        Node::Enum(_) => DirectKind::Enum,
        Node::Decimal(_) => DirectKind::Text,
        Node::Uuid => DirectKind::Uuid,
        Node::Literal(_) => DirectKind::Literal,
        Node::Record(spec) if !spec.array_like && spec.kind != RecordKind::NamedTuple => {
            DirectKind::Record
        }
        Node::TaggedUnion(_) => DirectKind::Tagged,
        Node::Sequence(spec) if spec.kind == SequenceKind::List && spec.length.is_unbounded() => {
            return (DirectKind::List, spec.item);
        }
        _ => DirectKind::Other,
    };
    (kind, id)
}

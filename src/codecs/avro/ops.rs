//! The programs an Avro codec runs: write ops per plan node (from the binding of the plan to
//! the codec's schema, `python/polycodec/_avro/bind.py`, turned from tuples into Rust enums so
//! the hot path never looks anything up by name), and decoder programs of read ops (from
//! resolving a writer schema against the codec's, `resolve.rs`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::plan::{Node, NodeId, Plan, RecordKind};
use polycodec_formats::avro::schema::{
    encode_default, Node as SchemaNode, NodeId as SchemaId, Schema,
};

/// The stack the recursive walks over a program keep free, and what they add when less is left.
const GROW_RED_ZONE: usize = 32 * 1024;
const GROW_SEGMENT: usize = 1024 * 1024;

/// How one plan node is written (the plan node itself says what Python value to expect).
#[derive(Debug)]
pub enum WriteOp {
    Null,
    Boolean,
    Long,
    /// A 32-bit Avro int: values outside the range are an EncodeError.
    Int,
    Double,
    Float,
    String,
    Bytes,
    Fixed(usize),
    Decimal {
        scale: u32,
        size: Option<usize>,
        precision: u32,
    },
    DecimalString,
    Timestamp {
        unit: i64,
        local: bool,
    },
    Date,
    Time {
        unit: i64,
    },
    UuidString,
    UuidFixed,
    /// Symbol index per enum member (in the plan's member order).
    Enum(Vec<u32>),
    Array,
    Map,
    /// What each schema field is written from, in schema order.
    Record(Vec<Slot>),
    /// Branch index per union variant; `None` for a tagged-union variant, which writes its own.
    Union(Vec<Option<u32>>),
    /// Branch index per entry of the tagged union's `tags`.
    Tagged(Vec<u32>),
    /// An extension type: its `encode` result is written by the wire node's own op.
    Extension,
}

/// Where a record's schema field is written from.
#[derive(Debug, PartialEq)]
pub enum Slot {
    /// The class field at this index.
    Field(usize),
    /// A schema field the class lacks: its default, encoded once.
    Default(Box<[u8]>),
}

impl Slot {
    /// The class field, if the slot is one.
    pub fn field(&self) -> Option<usize> {
        match self {
            Slot::Field(index) => Some(*index),
            Slot::Default(_) => None,
        }
    }
}

/// One step of a decoder program. `plan` is the node the value is built as (never a union).
#[derive(Debug)]
pub enum ReadOp {
    Null,
    /// Null read as a record field's UNSET alternative: `polycodec.UNSET`.
    Unset,
    Boolean(NodeId),
    Long(NodeId),
    Float(NodeId),
    Double(NodeId),
    /// Length-prefixed bytes read as a str-like or bytes node (Avro string and bytes).
    Text(NodeId),
    Fixed(usize, NodeId),
    Decimal {
        scale: u32,
        size: Option<usize>,
        plan: NodeId,
    },
    UuidFixed(NodeId),
    Date(NodeId),
    Time {
        unit: i64,
        plan: NodeId,
    },
    Timestamp {
        unit: i64,
        local: bool,
        plan: NodeId,
    },
    /// Writer symbol index -> plan member index (`None`: not in the reader's enum).
    Enum {
        plan: NodeId,
        members: Vec<Option<usize>>,
        symbols: Vec<String>,
    },
    Array {
        item: usize,
        plan: NodeId,
    },
    Map {
        value: usize,
        plan: NodeId,
    },
    /// Writer fields in order: the plan field index it fills (`None`: skipped) and its op.
    /// `direct`: a dataclass whose every field comes from the writer, so the instance is
    /// created first and each field set as it is read, with no defaults to fill in.
    Record {
        plan: NodeId,
        fields: Vec<(Option<usize>, usize)>,
        direct: bool,
    },
    Union(Vec<usize>),
    /// An extension type (plan node `plan`): the wire value read by op `inner`, then passed
    /// to the extension's `decode`.
    Extension {
        inner: usize,
        plan: NodeId,
    },
    /// A writer branch the reader cannot take: reading it is an error.
    Error(String),
    SkipFixed(usize),
    SkipVarint,
    SkipBytes,
    /// A string skipped: checked as UTF-8 as a read one is.
    SkipString,
    SkipArray(usize),
    SkipMap(usize),
    SkipRecord(Vec<usize>),
    SkipUnion(Vec<usize>),
}

/// A compiled decoder: ops, the root op, and the fewest bytes each op's value can take (to bound
/// item counts against the remaining input).
pub struct Program {
    pub ops: Vec<ReadOp>,
    pub root: usize,
    pub min_size: Vec<usize>,
    /// For an op whose value takes no bytes: how many values decoding it builds (a record of
    /// such records counts them all, saturating), charged against the per-call budget.
    pub empty_weight: Vec<usize>,
    /// For a skip op whose encoding has the same size whatever the data (fixed-size values and
    /// records made only of them): that size, so skipping it is one step however deep it nests.
    pub skip_width: Vec<Option<usize>>,
    /// For a boolean, long, double or string op: whether its plan node takes every value of
    /// the wire type as it is (`bool`, `int` and `float` without bounds, `str` without
    /// constraints), so the decoder builds the object with no check, decided here once.
    pub plain: Vec<bool>,
    /// CRC-64-AVRO fingerprint of the writer schema's canonical form.
    pub fingerprint: u64,
}

/// Item `i` of an op tuple as a `T`: one out-of-line function per type rather than an extraction
/// inlined at every op kind (the program is built once per codec; docs/benchmarks.md, "Installed
/// size").
#[inline(never)]
fn field<'py, T: for<'a> FromPyObject<'a, 'py>>(
    tuple: &Bound<'py, PyTuple>,
    i: usize,
) -> PyResult<T> {
    tuple.get_item(i)?.extract().map_err(Into::into)
}

fn bad(what: &str) -> PyErr {
    PyValueError::new_err(format!("internal: malformed Avro op {what}"))
}

/// The write ops from their tuples; `schema` is the schema they were bound to (whose field
/// defaults a record writes for the fields its class lacks).
/// A record's slots: the class field of each schema field, or the field's default, encoded.
fn record_slots(order: &[i64], schema: &Schema, record: SchemaId) -> PyResult<Vec<Slot>> {
    let fields = match schema.nodes.get(record as usize) {
        Some(SchemaNode::Record(node)) => &node.fields,
        _ => return Err(bad("record")),
    };
    if fields.len() != order.len() {
        return Err(bad("record"));
    }
    let mut slots = Vec::with_capacity(order.len());
    for (&index, field) in order.iter().zip(fields.iter()) {
        slots.push(match usize::try_from(index) {
            Ok(index) => Slot::Field(index),
            Err(_) => {
                let default = schema.default_of(field).ok_or_else(|| bad("default"))?;
                let mut bytes = Vec::new();
                encode_default(schema, field.schema, default, &mut bytes)
                    .map_err(PyValueError::new_err)?;
                Slot::Default(bytes.into_boxed_slice())
            }
        });
    }
    Ok(slots)
}

pub fn write_ops(list: &Bound<'_, PyAny>, schema: &Schema) -> PyResult<Vec<Option<WriteOp>>> {
    let list = list.cast::<PyList>()?;
    let mut out = Vec::with_capacity(list.len());
    for item in list.iter() {
        if item.is_none() {
            out.push(None);
            continue;
        }
        let tuple = item.cast::<PyTuple>()?;
        let name: String = tuple.get_item(0)?.extract()?;
        out.push(Some(match name.as_str() {
            "null" => WriteOp::Null,
            "boolean" => WriteOp::Boolean,
            "long" => WriteOp::Long,
            "int" => WriteOp::Int,
            "double" => WriteOp::Double,
            "float" => WriteOp::Float,
            "string" => WriteOp::String,
            "bytes" => WriteOp::Bytes,
            "fixed" => WriteOp::Fixed(field(tuple, 1)?),
            "decimal" => {
                let size: i64 = field(tuple, 2)?;
                WriteOp::Decimal {
                    scale: field(tuple, 1)?,
                    size: usize::try_from(size).ok(),
                    precision: field(tuple, 3)?,
                }
            }
            "decimal_string" => WriteOp::DecimalString,
            "timestamp" => WriteOp::Timestamp {
                unit: field(tuple, 1)?,
                local: field(tuple, 2)?,
            },
            "date" => WriteOp::Date,
            "time" => WriteOp::Time {
                unit: field(tuple, 1)?,
            },
            "uuid_string" => WriteOp::UuidString,
            "uuid_fixed" => WriteOp::UuidFixed,
            "enum" => WriteOp::Enum(field(tuple, 1)?),
            "array" => WriteOp::Array,
            "map" => WriteOp::Map,
            "record" => {
                let order: Vec<i64> = field(tuple, 1)?;
                let record: SchemaId = field(tuple, 2)?;
                WriteOp::Record(record_slots(&order, schema, record)?)
            }
            "union" => {
                let indices: Vec<i64> = field(tuple, 1)?;
                WriteOp::Union(indices.iter().map(|&i| u32::try_from(i).ok()).collect())
            }
            "tagged" => WriteOp::Tagged(field(tuple, 1)?),
            "extension" => WriteOp::Extension,
            other => return Err(bad(other)),
        }));
    }
    Ok(out)
}

impl Program {
    /// A program from resolved ops (see `resolve.rs`): every index is checked to point inside
    /// the program and the plan, so the decoder can index freely, and the per-op tables the
    /// decoder bounds its work by are computed.
    pub fn new(ops: Vec<ReadOp>, root: usize, fingerprint: u64, plan: &Plan) -> PyResult<Program> {
        let plan_len = plan.nodes.len();
        let mut ops = ops;
        for op in &mut ops {
            if let ReadOp::Record {
                plan: plan_id,
                fields,
                direct,
            } = op
            {
                *direct = match plan.nodes.get(*plan_id) {
                    Some(Node::Record(spec)) if spec.kind == RecordKind::Dataclass => {
                        let mut seen = vec![false; spec.fields.len()];
                        for field in fields.iter().filter_map(|(f, _)| *f) {
                            if let Some(slot) = seen.get_mut(field) {
                                *slot = true;
                            }
                        }
                        let set = fields.iter().filter(|(f, _)| f.is_some()).count();
                        set == spec.fields.len() && seen.iter().all(|s| *s)
                    }
                    _ => false,
                };
            }
            if let ReadOp::Extension { plan: plan_id, .. } = op {
                if !matches!(plan.nodes.get(*plan_id), Some(Node::Extension(_))) {
                    return Err(bad("extension"));
                }
            }
        }
        let count = ops.len();
        let valid = ops.iter().all(|op| op_indices_valid(op, count, plan_len));
        if !valid || root >= count {
            return Err(bad("index"));
        }
        let min_size = min_sizes(&ops);
        let empty_weight = empty_weights(&ops, &min_size);
        let skip_width = skip_widths(&ops);
        let plain = ops.iter().map(|op| is_plain(op, plan)).collect();
        Ok(Program {
            ops,
            root,
            min_size,
            empty_weight,
            skip_width,
            plain,
            fingerprint,
        })
    }
}

/// Whether `op` reads its value straight into the Python object its plan node wants.
fn is_plain(op: &ReadOp, plan: &Plan) -> bool {
    match op {
        ReadOp::Boolean(p) => matches!(plan.node(*p), Node::Bool),
        ReadOp::Long(p) => matches!(plan.node(*p), Node::Int(b) if *b == Default::default()),
        ReadOp::Double(p) => matches!(plan.node(*p), Node::Float(b) if *b == Default::default()),
        ReadOp::Text(p) => matches!(plan.node(*p), Node::Str(spec) if spec.is_unconstrained()),
        _ => false,
    }
}

fn op_indices_valid(op: &ReadOp, count: usize, plan_len: usize) -> bool {
    let plan_ok = |p: &NodeId| *p < plan_len;
    let op_ok = |o: &usize| *o < count;
    match op {
        ReadOp::Boolean(p)
        | ReadOp::Long(p)
        | ReadOp::Float(p)
        | ReadOp::Double(p)
        | ReadOp::Text(p)
        | ReadOp::Fixed(_, p)
        | ReadOp::UuidFixed(p)
        | ReadOp::Date(p) => plan_ok(p),
        ReadOp::Decimal { plan, .. }
        | ReadOp::Time { plan, .. }
        | ReadOp::Timestamp { plan, .. }
        | ReadOp::Enum { plan, .. } => plan_ok(plan),
        ReadOp::Array { item, plan } => plan_ok(plan) && op_ok(item),
        ReadOp::Map { value, plan } => plan_ok(plan) && op_ok(value),
        ReadOp::Extension { inner, plan } => plan_ok(plan) && op_ok(inner),
        ReadOp::Record { plan, fields, .. } => {
            plan_ok(plan) && fields.iter().all(|(_, o)| op_ok(o))
        }
        ReadOp::Union(ops) | ReadOp::SkipRecord(ops) | ReadOp::SkipUnion(ops) => {
            ops.iter().all(op_ok)
        }
        ReadOp::SkipArray(o) | ReadOp::SkipMap(o) => op_ok(o),
        ReadOp::Null
        | ReadOp::Unset
        | ReadOp::Error(_)
        | ReadOp::SkipFixed(_)
        | ReadOp::SkipVarint
        | ReadOp::SkipBytes
        | ReadOp::SkipString => true,
    }
}

/// The fewest input bytes a value of each op takes. Records sum their fields; a record met
/// again while its own size is being computed (recursion, always through a union or array,
/// which take at least one byte) counts as 0.
fn min_sizes(ops: &[ReadOp]) -> Vec<usize> {
    fn size(
        ops: &[ReadOp],
        index: usize,
        memo: &mut Vec<Option<usize>>,
        busy: &mut [bool],
    ) -> usize {
        if let Some(known) = memo[index] {
            return known;
        }
        if busy[index] {
            return 0;
        }
        busy[index] = true;
        // A writer schema's chain of named types (a record whose field is the one before it,
        // thousands long) is as deep: the stack grows as it needs.
        let result = stacker::maybe_grow(GROW_RED_ZONE, GROW_SEGMENT, || match &ops[index] {
            ReadOp::Null | ReadOp::Unset | ReadOp::Error(_) => 0,
            ReadOp::SkipFixed(n) | ReadOp::Fixed(n, _) => *n,
            ReadOp::Float(_) => 4,
            ReadOp::Double(_) => 8,
            ReadOp::UuidFixed(_) => 16,
            ReadOp::Decimal { size: Some(n), .. } => *n,
            ReadOp::Record { fields, .. } => fields
                .iter()
                .map(|(_, op)| size(ops, *op, memo, busy))
                .fold(0usize, usize::saturating_add),
            ReadOp::SkipRecord(fields) => fields
                .iter()
                .map(|op| size(ops, *op, memo, busy))
                .fold(0usize, usize::saturating_add),
            ReadOp::Extension { inner, .. } => size(ops, *inner, memo, busy),
            _ => 1,
        });
        busy[index] = false;
        memo[index] = Some(result);
        result
    }
    let mut memo = vec![None; ops.len()];
    let mut busy = vec![false; ops.len()];
    (0..ops.len())
        .map(|i| size(ops, i, &mut memo, &mut busy))
        .collect()
}

/// How many values each zero-size op builds when decoded. A named type referenced twice per
/// level makes this grow exponentially with the schema's depth, while the input stays empty:
/// the decoder charges it against its budget before building anything. Skip ops count 1,
/// since a zero-size skip is one step ([`skip_widths`]). Ops that take bytes count 0.
fn empty_weights(ops: &[ReadOp], min_size: &[usize]) -> Vec<usize> {
    // Zero-size ops only contain zero-size ops (records of records, nulls, empty fixed), and a
    // zero-size record cannot contain itself, so the memo fills in one pass per op.
    fn weight(
        ops: &[ReadOp],
        min_size: &[usize],
        index: usize,
        memo: &mut [Option<usize>],
    ) -> usize {
        if min_size[index] != 0 {
            return 0;
        }
        if let Some(known) = memo[index] {
            return known;
        }
        // A guard against a cycle (impossible for zero-size ops, but the program comes from
        // Python): count the op once.
        memo[index] = Some(1);
        let result = stacker::maybe_grow(GROW_RED_ZONE, GROW_SEGMENT, || match &ops[index] {
            ReadOp::Record { fields, .. } => fields
                .iter()
                .map(|(_, op)| weight(ops, min_size, *op, memo))
                .fold(1usize, usize::saturating_add),
            _ => 1,
        });
        memo[index] = Some(result);
        result
    }
    let mut memo = vec![None; ops.len()];
    (0..ops.len())
        .map(|i| weight(ops, min_size, i, &mut memo))
        .collect()
}

/// The encoded size of each skip op whose size does not depend on the data.
fn skip_widths(ops: &[ReadOp]) -> Vec<Option<usize>> {
    fn width(ops: &[ReadOp], index: usize, memo: &mut [Option<Option<usize>>]) -> Option<usize> {
        if let Some(known) = memo[index] {
            return known;
        }
        // A record met again while its own width is computed varies (recursion goes through
        // a union or an array).
        memo[index] = Some(None);
        let result = stacker::maybe_grow(GROW_RED_ZONE, GROW_SEGMENT, || match &ops[index] {
            ReadOp::SkipFixed(n) => Some(*n),
            ReadOp::SkipRecord(fields) => fields
                .iter()
                .try_fold(0usize, |sum, op| sum.checked_add(width(ops, *op, memo)?)),
            _ => None,
        });
        memo[index] = Some(result);
        result
    }
    let mut memo = vec![None; ops.len()];
    (0..ops.len()).map(|i| width(ops, i, &mut memo)).collect()
}

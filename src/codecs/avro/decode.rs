//! The Avro decoder: runs a [`Program`] (the writer schema resolved against the codec's plan)
//! over the input, building Python objects directly. Every count and length is checked against
//! the remaining input before anything is allocated for it.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use super::ops::{Program, ReadOp};
use super::wire::{civil_from_days, Input, MAX_DAYS, MIN_DAYS};
use crate::errors::{Code, Error, Result};
use crate::plan::{LiteralValue, Node, NodeId, SequenceKind};
use crate::py::{self, temporal, Obj};
use crate::values::{mismatch, nested, Decoding, RecordBuilder, Token, MAX_DEPTH};
use polycodec_formats::text;
use polycodec_formats::text::temporal::{Date, DateTime, Time, TimeOfDay};

/// What a failed growth of an array's item buffer says (a MemoryError).
const ITEMS: &str = "the items of an Avro array";

/// Values that take no input bytes (nulls, empty records, records of them) are limited per
/// call (all blocks of a container count together), since the input cannot bound how many a
/// count or a schema asks for.
pub const MAX_EMPTY_ITEMS: usize = 1 << 20;

/// An array or map block's header: its item count and, for a block that declares its size,
/// (where the block starts, where its items start, the size).
struct Block {
    count: usize,
    sized: Option<(usize, usize, usize)>,
}

/// A skipped string or map key is refused when it is not UTF-8, as a read one is.
#[inline]
fn skipped_utf8(data: &[u8], what: &str, end: usize) -> Result<()> {
    if !data.is_ascii() && std::str::from_utf8(data).is_err() {
        return Err(Error::decode(
            Code::AvroInvalid,
            format!("malformed Avro: {what} is not valid UTF-8 (before byte {end})"),
        ));
    }
    Ok(())
}

pub struct Decoder<'a, 'p, 'py> {
    pub input: Input<'a>,
    pub ctx: Decoding<'p, 'py>,
    pub program: &'p Program,
    pub depth: usize,
    /// Zero-size values charged so far in this call (see [`MAX_EMPTY_ITEMS`]).
    pub empty_items: usize,
    /// Inside a zero-size value already charged (by its count or its enclosing record).
    paid: bool,
}

impl<'a, 'p, 'py> Decoder<'a, 'p, 'py> {
    pub fn new(
        py: Python<'py>,
        plan: &'p crate::plan::Plan,
        program: &'p Program,
        data: &'a [u8],
    ) -> Self {
        Decoder {
            input: Input::new(data),
            ctx: Decoding {
                py,
                plan,
                strict: true,
            },
            program,
            depth: 0,
            empty_items: 0,
            paid: false,
        }
    }

    pub fn root(&mut self) -> Result<Obj<'py>> {
        self.value(self.program.root)
    }

    /// Checks an item count against the remaining input (`op`'s smallest value size).
    pub fn check_count(&mut self, count: usize, op: usize) -> Result<()> {
        let min = self.program.min_size[op];
        if min == 0 {
            self.charge(count.saturating_mul(self.program.empty_weight[op]))?;
        } else if count > self.input.remaining() / min {
            return Err(Error::decode(
                Code::AvroInvalid,
                format!(
                    "malformed Avro: count {count} at byte {} exceeds what the remaining {} bytes \
                 can hold",
                    self.input.pos,
                    self.input.remaining()
                ),
            ));
        }
        Ok(())
    }

    /// Counts `values` zero-size values against the per-call budget.
    fn charge(&mut self, values: usize) -> Result<()> {
        self.empty_items = self.empty_items.saturating_add(values);
        if self.empty_items > MAX_EMPTY_ITEMS {
            return Err(Error::decode(
                Code::AvroInvalid,
                format!("malformed Avro: more than {MAX_EMPTY_ITEMS} values that take no bytes"),
            ));
        }
        Ok(())
    }

    /// Marks the items of an array or a map block about to be decoded as already charged by
    /// [`check_count`] when they take no bytes; returns the mark to restore with
    /// [`end_paid`]. (An error ends the whole decode, so it need not restore the mark.)
    #[inline(always)]
    pub fn begin_paid(&mut self, op: usize) -> bool {
        let was = self.paid;
        if self.program.min_size[op] == 0 {
            self.paid = true;
        }
        was
    }

    #[inline(always)]
    pub fn end_paid(&mut self, was: bool) {
        self.paid = was;
    }

    /// Reads a block count of an array or map: 0 ends; a negative count is followed by the
    /// block's size in bytes, which [`Decoder::block_end`] then holds its items to.
    fn block_count(&mut self, op: usize) -> Result<Block> {
        let start = self.input.pos;
        let count = self.input.long()?;
        let (count, sized) = if count < 0 {
            let size = self.input.length("block size")?;
            let count = count.checked_neg().ok_or_else(|| {
                Error::decode(
                    Code::AvroInvalid,
                    format!("malformed Avro: bad block count at byte {start}"),
                )
            })?;
            (count, Some((start, self.input.pos, size)))
        } else {
            (count, None)
        };
        let count = count as usize;
        self.check_count(count, op)?;
        Ok(Block { count, sized })
    }

    /// Checks that a block's items took exactly the bytes its header declared.
    #[inline]
    fn block_end(&self, block: &Block) -> Result<()> {
        match block.sized {
            Some((start, data, size)) if self.input.pos - data != size => Err(Error::decode(
                Code::AvroInvalid,
                format!(
                    "malformed Avro: the block at byte {start} declares {size} bytes, but its \
                     {} items take {}",
                    block.count,
                    self.input.pos - data
                ),
            )),
            _ => Ok(()),
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::decode(
                Code::RecursionLoop,
                format!("Avro value nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    pub fn value(&mut self, index: usize) -> Result<Obj<'py>> {
        let program = self.program;
        let py = self.ctx.py;
        match &program.ops[index] {
            ReadOp::Null => Ok(py.None().into_bound(py)),
            ReadOp::Unset => match &self.ctx.plan.unset {
                Some(unset) => Ok(unset.bind(py).clone()),
                None => Ok(py.None().into_bound(py)),
            },
            ReadOp::Boolean(plan) => {
                let flag = self.input.boolean()?;
                if program.plain[index] {
                    return Ok(pyo3::types::PyBool::new(py, flag).to_owned().into_any());
                }
                self.ctx.boolean(*plan, flag)
            }
            ReadOp::Long(plan) => {
                let number = self.input.long()?;
                if program.plain[index] {
                    return Ok(py::new_int(py, number)?);
                }
                self.ctx.int(*plan, number)
            }
            ReadOp::Float(plan) => {
                let number = self.input.float()?;
                self.ctx.float(*plan, f64::from(number), None)
            }
            ReadOp::Double(plan) => {
                let number = self.input.double()?;
                if program.plain[index] {
                    return Ok(py::new_float(py, number)?);
                }
                self.ctx.float(*plan, number, None)
            }
            ReadOp::Text(plan) => {
                let data = self.input.bytes()?;
                if program.plain[index] {
                    let ascii = data.is_ascii();
                    if ascii || std::str::from_utf8(data).is_ok() {
                        return Ok(py::new_str(py, data, ascii)?);
                    }
                }
                self.text(*plan, data)
            }
            ReadOp::Fixed(size, plan) => {
                let data = self.input.fixed(*size)?;
                self.text(*plan, data)
            }
            ReadOp::Decimal { scale, size, plan } => {
                let data = match size {
                    Some(size) => self.input.fixed(*size)?,
                    None => self.input.bytes()?,
                };
                self.decimal(*plan, data, *scale)
            }
            ReadOp::UuidFixed(_)
            | ReadOp::Date(_)
            | ReadOp::Time { .. }
            | ReadOp::Timestamp { .. }
            | ReadOp::Enum { .. } => self.logical(index),
            ReadOp::Array { item, plan } => nested(self.depth, || self.array(*item, *plan)),
            ReadOp::Map { value, plan } => nested(self.depth, || self.map(*value, *plan)),
            ReadOp::Record {
                plan,
                fields,
                direct,
            } => {
                if !self.paid && program.min_size[index] == 0 {
                    // A record of records that take no bytes: the whole tree is charged at
                    // once, before any of it is built.
                    self.charge(program.empty_weight[index])?;
                    self.paid = true;
                    let value = self.value(index);
                    self.paid = false;
                    return value;
                }
                nested(self.depth, || {
                    if *direct {
                        self.direct_record(*plan, fields)
                    } else {
                        self.record(*plan, fields)
                    }
                })
            }
            ReadOp::Union(branches) => {
                let start = self.input.pos;
                let branch = self.input.long()?;
                let Some(&op) = usize::try_from(branch).ok().and_then(|b| branches.get(b)) else {
                    return Err(Error::decode(
                        Code::AvroInvalid,
                        format!(
                            "malformed Avro: union branch {branch} out of range at byte {start}"
                        ),
                    ));
                };
                self.value(op)
            }
            // The writer schema cannot be read as the reader's here (see `_avro.Resolver`).
            ReadOp::Error(message) => Err(Error::validation(Code::ValueError, message.clone())),
            ReadOp::Extension { inner, plan } => self.extension(*inner, *plan),
            _ => {
                self.skip(index)?;
                Ok(py.None().into_bound(py))
            }
        }
    }

    /// An extension type's value: the wire value, then the extension's `decode`.
    #[inline(never)]
    fn extension(&mut self, inner: usize, plan: NodeId) -> Result<Obj<'py>> {
        let wire = self.value(inner)?;
        match self.ctx.plan.node(plan) {
            Node::Extension(spec) => spec.decode_value(wire),
            _ => Err(Error::decode(
                Code::DecodeError,
                "internal: Avro extension op without its plan node",
            )),
        }
    }

    /// The ops that build a Python object from a number (dates, times, enum members, UUIDs),
    /// kept out of `value` so its frame stays small for the common ops.
    #[inline(never)]
    fn logical(&mut self, index: usize) -> Result<Obj<'py>> {
        let program = self.program;
        let py = self.ctx.py;
        match &program.ops[index] {
            ReadOp::UuidFixed(plan) => {
                let data = self.input.fixed(16)?;
                match self.ctx.plan.node(*plan) {
                    Node::Uuid => {
                        let mut raw = [0u8; 16];
                        raw.copy_from_slice(data);
                        Ok(py::new_uuid(py, u128::from_be_bytes(raw))?)
                    }
                    node => Err(mismatch(node, Token::Str)),
                }
            }
            ReadOp::Date(plan) => {
                let days = i64::from(self.input.int()?);
                if !(MIN_DAYS..=MAX_DAYS).contains(&days) {
                    return Err(Error::validation(
                        Code::DateRange,
                        format!("Avro date {days} is out of the range of datetime.date"),
                    ));
                }
                let (year, month, day) = civil_from_days(days);
                match self.ctx.plan.node(*plan) {
                    Node::Date => Ok(temporal::new_date(
                        py,
                        &Date {
                            year: year as u16,
                            month,
                            day,
                        },
                    )?),
                    node => Err(mismatch(node, Token::Int)),
                }
            }
            ReadOp::Time { unit, plan } => {
                let raw = self.input.long()?;
                let micros = raw.checked_mul(*unit).unwrap_or(-1);
                if !(0..86_400_000_000).contains(&micros) {
                    return Err(Error::validation(
                        Code::TimeRange,
                        format!("Avro time {raw} is out of the range of a day"),
                    ));
                }
                match self.ctx.plan.node(*plan) {
                    Node::Time(_) => Ok(temporal::new_time(
                        py,
                        &TimeOfDay {
                            time: time_of_day(micros),
                            offset_seconds: None,
                        },
                    )?),
                    node => Err(mismatch(node, Token::Int)),
                }
            }
            ReadOp::Timestamp { unit, local, plan } => {
                let raw = self.input.long()?;
                let micros = raw.checked_mul(*unit).ok_or_else(|| out_of_range(raw))?;
                let days = micros.div_euclid(86_400_000_000);
                if !(MIN_DAYS..=MAX_DAYS).contains(&days) {
                    return Err(out_of_range(raw));
                }
                let (year, month, day) = civil_from_days(days);
                match self.ctx.plan.node(*plan) {
                    Node::DateTime(_) => Ok(temporal::new_datetime(
                        py,
                        &DateTime {
                            date: Date {
                                year: year as u16,
                                month,
                                day,
                            },
                            time: time_of_day(micros.rem_euclid(86_400_000_000)),
                            offset_seconds: if *local { None } else { Some(0) },
                        },
                    )?),
                    node => Err(mismatch(node, Token::Int)),
                }
            }
            ReadOp::Enum {
                plan,
                members,
                symbols,
            } => {
                let start = self.input.pos;
                let symbol = self.input.long()?;
                let Some(member) = usize::try_from(symbol).ok().and_then(|s| members.get(s)) else {
                    return Err(Error::decode(
                        Code::AvroInvalid,
                        format!("malformed Avro: enum index {symbol} out of range at byte {start}"),
                    ));
                };
                let Node::Enum(spec) = self.ctx.plan.node(*plan) else {
                    return Err(Error::decode(
                        Code::DecodeError,
                        "internal: enum op on a non-enum node",
                    ));
                };
                match member {
                    Some(member) => Ok(spec.members[*member].member.bind(py).clone()),
                    None => Err(Error::validation(
                        Code::Enum,
                        format!(
                            "enum symbol {} is not a member of {}",
                            crate::errors::quote(&symbols[symbol as usize]),
                            spec.name
                        ),
                    )),
                }
            }
            _ => Err(Error::decode(
                Code::DecodeError,
                "internal: not a logical-type op",
            )),
        }
    }

    /// Avro string, bytes or fixed data for a str-like or bytes node.
    fn text(&mut self, plan: NodeId, data: &[u8]) -> Result<Obj<'py>> {
        let py = self.ctx.py;
        if let Node::Bytes(spec) = self.ctx.plan.node(plan) {
            spec.length
                .check(data.len(), crate::plan::LengthUnit::Bytes)?;
            return Ok(spec.new_value(py, data)?);
        }
        let ascii = data.is_ascii();
        if !ascii && std::str::from_utf8(data).is_err() {
            return Err(Error::decode(
                Code::AvroInvalid,
                format!(
                    "malformed Avro: string is not valid UTF-8 (before byte {})",
                    self.input.pos
                ),
            ));
        }
        match self.ctx.plan.node(plan) {
            Node::Str(spec) if spec.is_unconstrained() => Ok(py::new_str(py, data, ascii)?),
            // A tag field: compare the bytes with the allowed values, no text is built.
            Node::Literal(spec) => spec
                .values
                .iter()
                .find(|(value, _)| matches!(value, LiteralValue::Str(s) if s.as_bytes() == data))
                .map(|(_, obj)| obj.bind(py).clone())
                .ok_or_else(|| {
                    Error::validation(
                        Code::LiteralError,
                        format!(
                            "expected {}, got {}",
                            spec.describe_values(),
                            crate::errors::quote_bytes(data)
                        ),
                    )
                }),
            Node::Decimal(spec)
                if spec.max_digits.is_none()
                    && spec.decimal_places.is_none()
                    && spec.bounds.is_unbounded() =>
            {
                let text = py::new_str(py, data, ascii)?;
                py::new_from_one_arg(py::stdlib(py).decimal.bind(py), text).map_err(|_| {
                    Error::validation(
                        Code::DecimalParsing,
                        format!("invalid decimal {}", crate::errors::quote_bytes(data)),
                    )
                })
            }
            _ => self.ctx.string(plan, data, ascii),
        }
    }

    fn decimal(&mut self, plan: NodeId, data: &[u8], scale: u32) -> Result<Obj<'py>> {
        let Node::Decimal(spec) = self.ctx.plan.node(plan) else {
            return Err(mismatch(self.ctx.plan.node(plan), Token::Str));
        };
        if !data.is_empty() && data.len() <= 8 {
            // Up to 64 bits (18 digits and more): the text in plain notation, which
            // `Decimal(str)` reads fastest, written without 128-bit division.
            let fill = if data[0] & 0x80 != 0 { 0xff } else { 0 };
            let mut raw = [fill; 8];
            raw[8 - data.len()..].copy_from_slice(data);
            let mut text = Vec::with_capacity(24 + scale as usize);
            text::decimal::write_scaled(i64::from_be_bytes(raw), scale, &mut text);
            // The text is ASCII digits, a sign and a point.
            return self
                .ctx
                .decimal(spec, std::str::from_utf8(&text).unwrap_or_default());
        }
        let digits = if data.is_empty() {
            "0".to_owned()
        } else if data.len() <= 16 {
            let fill = if data[0] & 0x80 != 0 { 0xff } else { 0 };
            let mut raw = [fill; 16];
            raw[16 - data.len()..].copy_from_slice(data);
            i128::from_be_bytes(raw).to_string()
        } else {
            let py = self.ctx.py;
            let kwargs = PyDict::new(py);
            kwargs.set_item("signed", true)?;
            let number = py.get_type::<pyo3::types::PyInt>().call_method(
                "from_bytes",
                (crate::py::new_bytes(py, data)?, "big"),
                Some(&kwargs),
            )?;
            number.str()?.to_string()
        };
        let text = if scale == 0 {
            digits
        } else {
            format!("{digits}E-{scale}")
        };
        let value = self.ctx.decimal(spec, &text)?;
        Ok(value)
    }

    fn array(&mut self, item: usize, plan: NodeId) -> Result<Obj<'py>> {
        let Node::Sequence(spec) = self.ctx.plan.node(plan) else {
            return Err(mismatch(self.ctx.plan.node(plan), Token::Array));
        };
        self.enter()?;
        let py = self.ctx.py;
        let value = if spec.kind == SequenceKind::List {
            // Lists are filled in place: the first block's count sizes the list.
            let mut block = self.block_count(item)?;
            let mut list = py::builders::ListFill::new(py, block.count)?;
            while block.count > 0 {
                let paid = self.begin_paid(item);
                for _ in 0..block.count {
                    let index = list.count();
                    list.push(self.value(item).map_err(|e| e.at_index(index))?)?;
                }
                self.end_paid(paid);
                self.block_end(&block)?;
                block = self.block_count(item)?;
            }
            spec.length
                .check(list.count(), crate::plan::LengthUnit::Items)?;
            list.filled()
                .ok_or_else(|| Error::decode(Code::DecodeError, "internal: Avro list not filled"))?
                .into_any()
        } else {
            let mut items: Vec<Obj<'py>> = Vec::new();
            loop {
                let block = self.block_count(item)?;
                if block.count == 0 {
                    break;
                }
                crate::errors::reserve(&mut items, block.count.min(4096), ITEMS)?;
                let paid = self.begin_paid(item);
                for _ in 0..block.count {
                    let index = items.len();
                    let value = self.value(item).map_err(|e| e.at_index(index))?;
                    crate::errors::reserve(&mut items, 1, ITEMS)?;
                    items.push(value);
                }
                self.end_paid(paid);
                self.block_end(&block)?;
            }
            spec.length
                .check(items.len(), crate::plan::LengthUnit::Items)?;
            match spec.kind {
                SequenceKind::VarTuple => crate::py::new_tuple(py, items.into_iter())?.into_any(),
                SequenceKind::Set => {
                    py::user_code(py, || crate::values::new_set(py, false, items))?
                }
                _ => py::user_code(py, || crate::values::new_set(py, true, items))?,
            }
        };
        self.depth -= 1;
        Ok(value)
    }

    fn map(&mut self, value: usize, plan: NodeId) -> Result<Obj<'py>> {
        let Node::Dict(spec) = self.ctx.plan.node(plan) else {
            return Err(mismatch(self.ctx.plan.node(plan), Token::Object));
        };
        self.enter()?;
        let dict = py::new_dict(self.ctx.py)?;
        loop {
            let block = self.block_count(value)?;
            if block.count == 0 {
                break;
            }
            // Each entry also has a key of at least one byte.
            if block.count > self.input.remaining() {
                return Err(Error::decode(
                    Code::AvroInvalid,
                    "malformed Avro: map count exceeds the input",
                ));
            }
            let paid = self.begin_paid(value);
            for _ in 0..block.count {
                let key = self.input.bytes()?;
                let ascii = key.is_ascii();
                if !ascii && std::str::from_utf8(key).is_err() {
                    return Err(Error::decode(
                        Code::AvroInvalid,
                        "malformed Avro: map key is not valid UTF-8",
                    ));
                }
                let key_obj = self.ctx.key_string(spec.key, key, ascii)?;
                let item = self
                    .value(value)
                    .map_err(|e| e.at_key(std::str::from_utf8(key).unwrap_or_default()))?;
                self.ctx
                    .store_entry(&dict, spec.key, spec.value, key_obj, item)?;
            }
            self.end_paid(paid);
            self.block_end(&block)?;
        }
        self.depth -= 1;
        spec.length
            .check(dict.len(), crate::plan::LengthUnit::Items)?;
        Ok(dict.into_any())
    }

    fn record(&mut self, plan: NodeId, fields: &[(Option<usize>, usize)]) -> Result<Obj<'py>> {
        let Node::Record(spec) = self.ctx.plan.node(plan) else {
            return Err(mismatch(self.ctx.plan.node(plan), Token::Object));
        };
        self.enter()?;
        let mut builder = RecordBuilder::new(spec);
        for &(target, op) in fields {
            match target {
                Some(field) => {
                    let value = self
                        .value(op)
                        .map_err(|e| e.at_field(&spec.fields[field].wire_name))?;
                    builder.set(field, value);
                }
                None => self.skip(op)?,
            }
        }
        self.depth -= 1;
        builder.finish(self.ctx.py, spec)
    }

    /// A dataclass whose fields all come from the input: the instance is created first and
    /// each field stored as it is read, as the generated `__init__` would.
    fn direct_record(
        &mut self,
        plan: NodeId,
        fields: &[(Option<usize>, usize)],
    ) -> Result<Obj<'py>> {
        let Node::Record(spec) = self.ctx.plan.node(plan) else {
            return Err(mismatch(self.ctx.plan.node(plan), Token::Object));
        };
        self.enter()?;
        let py = self.ctx.py;
        let cls = spec.cls.bind(py).cast::<PyType>().map_err(PyErr::from)?;
        let instance = spec.access.new_instance(cls)?;
        if spec.user_setattr {
            crate::values::before_fill(spec, &instance)?;
        }
        for &(target, op) in fields {
            match target {
                Some(index) => {
                    let field = &spec.fields[index];
                    let value = self.value(op).map_err(|e| e.at_field(&field.wire_name))?;
                    let store = || {
                        spec.access
                            .store(&instance, index, field.name.bind(py), value)
                    };
                    if spec.user_setattr {
                        py::user_code(py, store)?;
                    } else {
                        store()?;
                    }
                }
                None => self.skip(op)?,
            }
        }
        self.depth -= 1;
        if spec.post_init {
            crate::values::post_init(spec, &instance)?;
        }
        Ok(instance)
    }

    /// Reads past a value the reader does not keep (a field removed from the reader's schema).
    fn skip(&mut self, index: usize) -> Result<()> {
        let program = self.program;
        if let Some(width) = program.skip_width[index] {
            // Fixed-size data (however deeply its records nest) is skipped in one step.
            self.input.fixed(width)?;
            return Ok(());
        }
        match &program.ops[index] {
            ReadOp::SkipFixed(size) => {
                self.input.fixed(*size)?;
            }
            ReadOp::SkipVarint => {
                self.input.long()?;
            }
            ReadOp::SkipBytes => {
                self.input.bytes()?;
            }
            ReadOp::SkipString => {
                let data = self.input.bytes()?;
                skipped_utf8(data, "string", self.input.pos)?;
            }
            ReadOp::SkipArray(item) => {
                self.enter()?;
                loop {
                    let block = self.block_count(*item)?;
                    if block.count == 0 {
                        break;
                    }
                    for _ in 0..block.count {
                        self.skip(*item)?;
                    }
                    self.block_end(&block)?;
                }
                self.depth -= 1;
            }
            ReadOp::SkipMap(value) => {
                self.enter()?;
                loop {
                    let block = self.block_count(*value)?;
                    if block.count == 0 {
                        break;
                    }
                    for _ in 0..block.count {
                        let key = self.input.bytes()?;
                        skipped_utf8(key, "map key", self.input.pos)?;
                        self.skip(*value)?;
                    }
                    self.block_end(&block)?;
                }
                self.depth -= 1;
            }
            ReadOp::SkipRecord(fields) => {
                self.enter()?;
                for &field in fields {
                    self.skip(field)?;
                }
                self.depth -= 1;
            }
            ReadOp::SkipUnion(branches) => {
                let branch = self.input.long()?;
                let Some(&op) = usize::try_from(branch).ok().and_then(|b| branches.get(b)) else {
                    return Err(Error::decode(
                        Code::AvroInvalid,
                        format!("malformed Avro: union branch {branch} out of range"),
                    ));
                };
                self.enter()?;
                self.skip(op)?;
                self.depth -= 1;
            }
            _ => {
                self.value(index)?;
            }
        }
        Ok(())
    }
}

fn time_of_day(micros: i64) -> Time {
    let seconds = micros / 1_000_000;
    Time {
        hour: (seconds / 3600) as u8,
        minute: (seconds / 60 % 60) as u8,
        second: (seconds % 60) as u8,
        microsecond: (micros % 1_000_000) as u32,
    }
}

#[cold]
fn out_of_range(raw: i64) -> Error {
    Error::validation(
        Code::DatetimeRange,
        format!("Avro timestamp {raw} is out of the range of datetime.datetime"),
    )
}

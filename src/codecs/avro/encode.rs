//! The Avro encoder: walks the plan and the Python object together, writing the binary datum
//! straight into the output buffer, guided by the write op of each plan node.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDate, PyDateTime, PyDict, PyFloat, PyInt, PyString, PyTime};

use super::ops::{Slot, WriteOp};
use super::wire::{days_from_civil, write_bytes, write_long, MAX_DAYS, MIN_DAYS};
use crate::errors::{Code, Error, ErrorKind, Result};
use crate::plan::{EnumSpec, LiteralValue, Node, NodeId, Plan, RecordSpec};
use crate::py::{self, temporal, Obj};
use crate::shape;
use crate::values::nested;
use polycodec_formats::text;

pub struct Encoder<'p, 'o> {
    pub plan: &'p Plan,
    pub ops: &'p [Option<WriteOp>],
    pub out: &'o mut Vec<u8>,
    pub depth: usize,
}

fn mismatch(node: &Node, value: &Obj<'_>) -> Error {
    Error::expected(
        ErrorKind::Encode,
        Code::EncodeError,
        node.describe(),
        &crate::py::type_name(value),
    )
}

#[cold]
fn unbound() -> Error {
    Error::encode("internal: plan node without an Avro write op")
}

impl Encoder<'_, '_> {
    pub fn value(&mut self, id: NodeId, value: &Obj<'_>) -> Result<()> {
        let node = self.plan.node(id);
        let Some(op) = &self.ops[id] else {
            return Err(unbound());
        };
        match (node, op) {
            (Node::Str(_), WriteOp::String) => match value.cast::<PyString>() {
                Ok(text) => {
                    write_bytes(self.out, py::str_utf8(text)?.as_bytes());
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            (Node::Int(_), WriteOp::Long | WriteOp::Int) => {
                let number = self.int(node, value)?;
                self.int_of_op(op, number)
            }
            (Node::Float(_), WriteOp::Double | WriteOp::Float) => {
                let number = if let Ok(float) = value.cast_exact::<PyFloat>() {
                    float.value()
                } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
                    value.extract::<f64>()?
                } else if let Ok(float) = value.cast::<PyFloat>() {
                    float.value()
                } else {
                    return Err(mismatch(node, value));
                };
                if matches!(op, WriteOp::Float) {
                    let narrow = number as f32;
                    // A finite value past a 32-bit float's range (or so small it would become
                    // 0) is refused, not written as infinity or zero.
                    if number.is_finite()
                        && (narrow.is_infinite() || (narrow == 0.0) != (number == 0.0))
                    {
                        return Err(Error::encode(format!(
                            "{number} is out of range for an Avro float (32 bits)"
                        )));
                    }
                    self.out.extend_from_slice(&narrow.to_le_bytes());
                } else {
                    self.out.extend_from_slice(&number.to_le_bytes());
                }
                Ok(())
            }
            (Node::Bool, WriteOp::Boolean) => match value.cast::<PyBool>() {
                Ok(flag) => {
                    self.out.push(u8::from(flag.is_true()));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            (Node::None, WriteOp::Null) => {
                if value.is_none() {
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            (Node::Unset, WriteOp::Null) => {
                if self.plan.is_unset(value) {
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            (Node::Record(spec), WriteOp::Record(order)) => {
                nested(self.depth, || self.record(spec, order, value))
            }
            (Node::Sequence(spec), WriteOp::Array) => {
                nested(self.depth, || self.array(node, spec.item, value))
            }
            (Node::Dict(spec), WriteOp::Map) => match value.cast::<PyDict>() {
                Ok(dict) => nested(self.depth, || self.map(spec.value, dict)),
                Err(_) => Err(mismatch(node, value)),
            },
            (Node::Union(spec), WriteOp::Union(branches)) => {
                let variant = shape::pick_variant(self.plan, spec, value)
                    .ok_or_else(|| mismatch(node, value))?;
                let position = spec
                    .variants
                    .iter()
                    .position(|&v| v == variant)
                    .unwrap_or(0);
                if let Some(Some(branch)) = branches.get(position) {
                    write_long(self.out, i64::from(*branch));
                }
                self.value(variant, value)
            }
            (Node::Extension(spec), WriteOp::Extension) => {
                self.value(spec.wire, &spec.encode_value(value)?)
            }
            (Node::TaggedUnion(spec), WriteOp::Tagged(branches)) => {
                for ((_, record_id), branch) in spec.tags.iter().zip(branches) {
                    if let Node::Record(record) = self.plan.node(*record_id) {
                        if shape::is_record(record, value) {
                            write_long(self.out, i64::from(*branch));
                            return self.value(*record_id, value);
                        }
                    }
                }
                Err(mismatch(node, value))
            }
            (Node::Enum(spec), WriteOp::Enum(symbols)) => self.enum_value(spec, symbols, value),
            // A Flag is its int value (any combination of its members, which no Avro enum
            // symbol could name).
            (Node::Enum(spec), WriteOp::Long | WriteOp::Int) if spec.flag => {
                let literal = match shape::enum_member_index(spec, value) {
                    Some(index) => spec.members[index].value.clone(),
                    None => shape::flag_value(spec, value)?.0,
                };
                match literal {
                    LiteralValue::Int(number) => self.int_of_op(op, number)?,
                    _ => return Err(unbound()),
                }
                Ok(())
            }
            (Node::Literal(spec), _) => {
                let literal = shape::allowed_literal(spec, value)?;
                match (literal, op) {
                    (LiteralValue::Str(text), WriteOp::String) => {
                        write_bytes(self.out, text.as_bytes())
                    }
                    (LiteralValue::Int(number), WriteOp::Long | WriteOp::Int) => {
                        self.int_of_op(op, number)?
                    }
                    (LiteralValue::Bool(flag), WriteOp::Boolean) => self.out.push(u8::from(flag)),
                    _ => return Err(unbound()),
                }
                Ok(())
            }
            (Node::Bytes(_), WriteOp::Bytes | WriteOp::Fixed(_)) => {
                let data = shape::bytes_like(value).ok_or_else(|| mismatch(node, value))?;
                if let WriteOp::Fixed(size) = op {
                    if data.len() != *size {
                        return Err(Error::encode(format!(
                            "expected exactly {size} bytes for an Avro fixed, got {}",
                            data.len()
                        )));
                    }
                    self.out.extend_from_slice(&data);
                } else {
                    write_bytes(self.out, &data);
                }
                Ok(())
            }
            (Node::Decimal(_), _) => {
                if !shape::is_decimal(value) {
                    return Err(mismatch(node, value));
                }
                self.decimal(op, value)
            }
            (Node::DateTime(_), WriteOp::Timestamp { unit, local }) => {
                let datetime = value
                    .cast_exact::<PyDateTime>()
                    .or_else(|_| value.cast::<PyDateTime>())
                    .map_err(|_| mismatch(node, value))?;
                let parts = temporal::datetime_parts(datetime).map_err(encode_error)?;
                let offset =
                    match (parts.offset_seconds, local) {
                        (Some(offset), false) => i64::from(offset),
                        (None, true) => 0,
                        (None, false) => return Err(Error::encode(
                            "a naive datetime cannot be written as Avro timestamp (UTC); give it \
                             a tzinfo, or annotate the field with Meta(tz=False) for a \
                             local-timestamp",
                        )),
                        (Some(_), true) => {
                            return Err(Error::encode(
                                "an aware datetime cannot be written as an Avro local-timestamp",
                            ))
                        }
                    };
                let days = days_from_civil(
                    i64::from(parts.date.year),
                    i64::from(parts.date.month),
                    i64::from(parts.date.day),
                );
                let seconds = days * 86_400
                    + i64::from(parts.time.hour) * 3600
                    + i64::from(parts.time.minute) * 60
                    + i64::from(parts.time.second)
                    - offset;
                let micros = seconds * 1_000_000 + i64::from(parts.time.microsecond);
                // Near year 1 or 9999 an offset can move the UTC instant out of the datetime
                // range, which the decoder (and Python) cannot represent: refused here.
                if !(MIN_DAYS..=MAX_DAYS).contains(&micros.div_euclid(86_400_000_000)) {
                    return Err(Error::encode(
                        "aware datetime is outside years 1-9999 in UTC, so its Avro timestamp \
                         could not be decoded again",
                    ));
                }
                // Sub-millisecond digits are dropped toward negative infinity (floor), as
                // fastavro and the Java writer (Instant.toEpochMilli) do.
                write_long(self.out, micros.div_euclid(*unit));
                Ok(())
            }
            (Node::Date, WriteOp::Date) => {
                let date = match value.cast_exact::<PyDate>() {
                    Ok(date) => date.clone(),
                    Err(_) if !value.is_instance_of::<PyDateTime>() => value
                        .cast::<PyDate>()
                        .map_err(|_| mismatch(node, value))?
                        .clone(),
                    Err(_) => return Err(mismatch(node, value)),
                };
                let parts = temporal::date_parts(&date);
                write_long(
                    self.out,
                    days_from_civil(
                        i64::from(parts.year),
                        i64::from(parts.month),
                        i64::from(parts.day),
                    ),
                );
                Ok(())
            }
            (Node::Time(_), WriteOp::Time { unit }) => {
                let time = value.cast::<PyTime>().map_err(|_| mismatch(node, value))?;
                let parts = temporal::time_parts(time).map_err(encode_error)?;
                if parts.offset_seconds.is_some() {
                    return Err(Error::encode(
                        "an aware time cannot be written as Avro time (it has no UTC offset)",
                    ));
                }
                let t = parts.time;
                let micros = ((i64::from(t.hour) * 60 + i64::from(t.minute)) * 60
                    + i64::from(t.second))
                    * 1_000_000
                    + i64::from(t.microsecond);
                // Never negative, so this truncation is the same floor as for timestamps.
                write_long(self.out, micros.div_euclid(*unit));
                Ok(())
            }
            (Node::Uuid, WriteOp::UuidString | WriteOp::UuidFixed) => {
                if !shape::is_uuid(value) {
                    return Err(mismatch(node, value));
                }
                let bits = py::uuid_value(value)?;
                if matches!(op, WriteOp::UuidFixed) {
                    self.out.extend_from_slice(&bits.to_be_bytes());
                } else {
                    let mut text = Vec::with_capacity(36);
                    text::uuid::write_uuid(&mut text, bits);
                    write_bytes(self.out, &text);
                }
                Ok(())
            }
            _ => Err(unbound()),
        }
    }

    /// Writes an int as a long, or as a 32-bit Avro int when `op` says so (a value outside 32
    /// bits is an EncodeError, never truncated).
    fn int_of_op(&mut self, op: &WriteOp, number: i64) -> Result<()> {
        if matches!(op, WriteOp::Int) && i32::try_from(number).is_err() {
            return Err(Error::encode(format!(
                "{number} is out of range for an Avro int (32 bits)"
            )));
        }
        write_long(self.out, number);
        Ok(())
    }

    fn int(&mut self, node: &Node, value: &Obj<'_>) -> Result<i64> {
        if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
            return Err(mismatch(node, value));
        }
        py::int_as_i64(value).ok_or_else(|| {
            Error::encode(format!(
                "{} is out of range for an Avro long (64 bits)",
                value.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        })
    }

    fn enum_value(&mut self, spec: &EnumSpec, symbols: &[u32], value: &Obj<'_>) -> Result<()> {
        match shape::enum_member_index(spec, value) {
            Some(index) => {
                write_long(self.out, i64::from(symbols[index]));
                Ok(())
            }
            None => Err(Error::encode(format!(
                "expected a member of {}.{} (one of {}), got {}",
                spec.module,
                spec.name,
                spec.members
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                value
                    .repr()
                    .map(|r| crate::errors::cut(&r.to_string()).into_owned())
                    .unwrap_or_default()
            ))),
        }
    }

    fn decimal(&mut self, op: &WriteOp, value: &Obj<'_>) -> Result<()> {
        match op {
            WriteOp::DecimalString => {
                let text = value.str()?;
                write_bytes(self.out, py::str_utf8(&text)?.as_bytes());
                Ok(())
            }
            WriteOp::Decimal {
                scale,
                size,
                precision,
            } => {
                let bytes = decimal_unscaled_bytes(value, *scale, *precision)?;
                match size {
                    None => write_bytes(self.out, &bytes),
                    Some(size) => {
                        // A fixed is sign-extended to its size anyway: start from the shortest
                        // form, so −128 fits in one byte.
                        let redundant = bytes
                            .windows(2)
                            .take_while(|pair| {
                                (pair[0] == 0 && pair[1] & 0x80 == 0)
                                    || (pair[0] == 0xff && pair[1] & 0x80 != 0)
                            })
                            .count();
                        let bytes = &bytes[redundant..];
                        if bytes.len() > *size {
                            return Err(Error::encode(format!(
                                "decimal {} does not fit in an Avro fixed of {size} bytes",
                                value.str()?
                            )));
                        }
                        let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
                            0xff
                        } else {
                            0
                        };
                        self.out
                            .extend(std::iter::repeat_n(fill, size - bytes.len()));
                        self.out.extend_from_slice(bytes);
                    }
                }
                Ok(())
            }
            _ => Err(unbound()),
        }
    }

    fn enter(&mut self) -> Result<()> {
        shape::enter_nested(&mut self.depth)
    }

    fn array(&mut self, node: &Node, item: NodeId, value: &Obj<'_>) -> Result<()> {
        if !shape::is_array_like(value) {
            return Err(mismatch(node, value));
        }
        let count = value.len()?;
        self.enter()?;
        if count > 0 {
            write_long(self.out, count as i64);
            let mut index = 0;
            shape::for_each_item(value, |element| {
                if index >= count {
                    return Err(Error::encode("sequence changed size while being encoded"));
                }
                crate::errors::output_room(self.out)?;
                let result = self.value(item, element).map_err(|e| e.at_index(index));
                index += 1;
                result
            })?;
            if index != count {
                return Err(Error::encode("sequence changed size while being encoded"));
            }
        }
        self.out.push(0);
        self.depth -= 1;
        Ok(())
    }

    fn map(&mut self, value_node: NodeId, dict: &Bound<'_, PyDict>) -> Result<()> {
        self.enter()?;
        let count = dict.len();
        if count > 0 {
            write_long(self.out, count as i64);
            let mut position = 0;
            let mut written = 0;
            while let Some((key, item)) = py::next_entry(dict, &mut position) {
                crate::errors::output_room(self.out)?;
                let Ok(text) = key.cast::<PyString>() else {
                    return Err(Error::encode(format!(
                        "expected a str dict key, got {}",
                        crate::py::type_name(&key)
                    )));
                };
                let text = py::str_utf8(text)?;
                write_bytes(self.out, text.as_bytes());
                self.value(value_node, &item)
                    .map_err(|err| err.at_key(text))?;
                written += 1;
            }
            if written != count {
                return Err(Error::encode("dict changed size while being encoded"));
            }
        }
        self.out.push(0);
        self.depth -= 1;
        Ok(())
    }

    fn record(&mut self, spec: &RecordSpec, order: &[Slot], value: &Obj<'_>) -> Result<()> {
        // The plan spec promises namedtuples are frozen; Avro builds them positionally.
        debug_assert!(spec.kind != crate::plan::RecordKind::NamedTuple || spec.frozen);
        if !shape::is_record(spec, value) {
            return Err(Error::encode(format!(
                "expected {}.{}, got {}",
                spec.module,
                spec.qualname,
                crate::py::type_name(value)
            )));
        }
        if let Some(own) = shape::subclass_plan(self.plan, spec, value)? {
            subclass_fits(spec, &own, value)?;
        }
        self.enter()?;
        let mut source = spec.access.reader(value);
        for slot in order {
            crate::errors::output_room(self.out)?;
            let index = match slot {
                Slot::Field(index) => *index,
                Slot::Default(bytes) => {
                    self.out.extend_from_slice(bytes);
                    continue;
                }
            };
            let field = &spec.fields[index];
            let item = match source.get(value, index, field.name.bind(value.py())) {
                Ok(Some(item)) => item,
                Ok(None) => {
                    return Err(Error::encode(format!(
                        "missing key `{}` (Avro records have every field)",
                        field.wire_name
                    )))
                }
                Err(err) => return Err(Error::from(err).at_field(&field.wire_name)),
            };
            self.value(field.node, &item)
                .map_err(|e| e.at_field(&field.wire_name))?;
        }
        self.depth -= 1;
        Ok(())
    }
}

/// A subclass instance is written by its record's schema, which has no room for fields the
/// subclass adds (msgspec would write them): refused, with their names, rather than dropped.
#[cold]
#[inline(never)]
fn subclass_fits(spec: &RecordSpec, own: &Plan, value: &Obj<'_>) -> Result<()> {
    let Node::Record(sub) = own.node(own.root) else {
        return Ok(());
    };
    let py = value.py();
    let written = |record: &RecordSpec| -> Vec<String> {
        record
            .wire_fields
            .iter()
            .map(|&index| record.fields[index].name.bind(py).to_string())
            .collect()
    };
    let known = written(spec);
    let extra: Vec<String> = written(sub)
        .into_iter()
        .filter(|name| !known.contains(name))
        .collect();
    if extra.is_empty() {
        return Ok(());
    }
    Err(Error::encode(format!(
        "{} is a subclass of {} with fields the Avro schema's record has no room for ({}): \
         an Avro record has the fields of its schema; give the field the subclass's type to \
         write them",
        crate::py::type_name(value),
        spec.qualname,
        extra.join(", ")
    )))
}

/// The two's-complement big-endian bytes of a Decimal's unscaled value at `scale`, refusing
/// values with more decimal places than the scale or more digits than the precision.
fn decimal_unscaled_bytes(value: &Obj<'_>, scale: u32, precision: u32) -> Result<Vec<u8>> {
    // The digits and exponent from `str(value)`, C code that builds one str, rather than from
    // `as_tuple()`, which builds a tuple of one int per digit (thousands of instructions more
    // per value); a NaN or an infinity has no plain text and goes the `as_tuple` way.
    let text = value.str()?;
    if let Some(parts) = text::decimal::parse(py::str_utf8(&text)?.as_bytes()) {
        let digits = parts.significant().map(|d| d - b'0').collect();
        return scaled_bytes(
            value,
            parts.negative,
            digits,
            parts.exponent(),
            scale,
            precision,
        );
    }
    let (sign, digits, exponent): (i32, Vec<u8>, Obj<'_>) =
        value.call_method0("as_tuple")?.extract()?;
    let Ok(exponent) = exponent.extract::<i64>() else {
        return Err(Error::encode(format!(
            "decimal {} is not finite, so it has no Avro decimal form",
            text
        )));
    };
    scaled_bytes(value, sign == 1, digits, exponent, scale, precision)
}

/// The bytes of the Decimal `value` (coefficient `digits`, one per byte, and `exponent`)
/// scaled to `scale`, refusing more places than the scale or more digits than the precision.
fn scaled_bytes(
    value: &Obj<'_>,
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
    scale: u32,
    precision: u32,
) -> Result<Vec<u8>> {
    let shown = || value.str().map(|s| s.to_string()).unwrap_or_default();
    let shift = exponent + i64::from(scale);
    let mut digits = digits;
    if shift >= 0 {
        if shift > 4096 {
            return Err(Error::encode(format!(
                "decimal {} has more than {precision} digits",
                shown()
            )));
        }
        digits.resize(digits.len() + shift as usize, 0);
    } else {
        let drop = (-shift) as usize;
        let keep = digits.len().saturating_sub(drop);
        if digits[keep..].iter().any(|&d| d != 0) {
            return Err(Error::encode(format!(
                "decimal {} has more than {scale} decimal places",
                shown()
            )));
        }
        digits.truncate(keep);
    }
    let first = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    let significant = &digits[first..];
    if significant.len() > precision as usize {
        return Err(Error::encode(format!(
            "decimal {} has more than {precision} digits",
            shown()
        )));
    }
    if significant.len() <= 38 {
        let mut unscaled: i128 = 0;
        for &d in significant {
            unscaled = unscaled * 10 + i128::from(d);
        }
        if negative {
            unscaled = -unscaled;
        }
        return Ok(twos_complement(unscaled));
    }
    // Beyond 38 digits: let Python's int do the arithmetic.
    let py = value.py();
    let text: String = significant.iter().map(|d| char::from(b'0' + d)).collect();
    let mut number = py.get_type::<PyInt>().call1((text,))?;
    if negative {
        number = number.neg()?;
    }
    let bits: usize = number.call_method0("bit_length")?.extract()?;
    let length = bits / 8 + 1;
    let kwargs = PyDict::new(py);
    kwargs.set_item("signed", true)?;
    let bytes = number.call_method("to_bytes", (length, "big"), Some(&kwargs))?;
    Ok(bytes.extract::<Vec<u8>>()?)
}

/// The big-endian two's-complement bytes of `value`, `bit_length(|value|) / 8 + 1` of them: the
/// length fastavro and apache avro write, so the bytes match theirs (−128 takes two bytes,
/// `ff 80`, where the shortest form would be one).
fn twos_complement(value: i128) -> Vec<u8> {
    let bits = 128 - value.unsigned_abs().leading_zeros() as usize;
    let length = bits / 8 + 1;
    value.to_be_bytes()[16 - length..].to_vec()
}

fn encode_error(err: PyErr) -> Error {
    Error::encode(err.to_string())
}

#[cfg(test)]
mod tests {
    use super::twos_complement;

    #[test]
    fn twos_complement_has_the_python_peers_length() {
        assert_eq!(twos_complement(0), vec![0]);
        assert_eq!(twos_complement(127), vec![0x7f]);
        assert_eq!(twos_complement(128), vec![0, 0x80]);
        assert_eq!(twos_complement(-1), vec![0xff]);
        assert_eq!(twos_complement(-127), vec![0x81]);
        assert_eq!(twos_complement(-128), vec![0xff, 0x80]);
        assert_eq!(twos_complement(-129), vec![0xff, 0x7f]);
        assert_eq!(twos_complement(-32768), vec![0xff, 0x80, 0]);
    }
}

//! The Avro schema layer, on the `apache-avro` crate: parsing and validating every schema that
//! enters (`schema=`, a container header's schema, a registry's writer schema), the Parsing
//! Canonical Form, the CRC-64-AVRO (Rabin) fingerprint, and the reader/writer compatibility
//! check made before a resolution is built. `python/polycodec/_avro.py` calls these once per
//! codec or per new writer schema, never per record.
//!
//! The crate's parser, canonical form and compatibility checker recurse once per nesting level
//! of the schema's JSON, so each call first measures that depth (a byte scan, no recursion),
//! refuses schemas nested deeper than [`MAX_DEPTH`], and runs on a stack sized for the depth:
//! a deep schema is an exception, never a stack overflow (which would abort the process).

use apache_avro::rabin::Rabin;
use apache_avro::schema::{InnerDecimalSchema, UnionSchema, UuidSchema};
use apache_avro::schema_compatibility::SchemaCompatibility;
use apache_avro::Schema;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The deepest JSON nesting accepted in a schema. A record nested in a record takes three
/// levels (`{"fields": [{"type": {...`), so this allows about 1300 nested records.
pub const MAX_DEPTH: usize = 4000;

/// Stack reserved per JSON nesting level: generous for the crate's parser (serde_json's
/// `Value` deserializer, the schema parser, `canonical_form`, the compatibility checker and the
/// recursive drops), measured at well under half of this.
const STACK_PER_LEVEL: usize = 24 * 1024;

/// The JSON nesting depth of `text` (objects and arrays), counted without recursion.
fn json_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in text.as_bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Runs `work` over the parsed JSON of each of `texts` on a stack large enough for their
/// nesting, after refusing nesting deeper than [`MAX_DEPTH`].
///
/// One non-generic body (`work` is a `dyn` closure that leaves its result in a variable of its
/// caller): the stack switch and the JSON parse are compiled once, not once per result type.
fn with_json<T>(
    texts: &[&str],
    work: impl FnOnce(&[serde_json::Value]) -> Result<T, String>,
) -> Result<T, String> {
    let mut work = Some(work);
    let mut result = None;
    with_json_dyn(texts, &mut |values| {
        if let Some(work) = work.take() {
            result = Some(work(values)?);
        }
        Ok(())
    })?;
    result.ok_or_else(|| "the schema layer ran no work".to_string())
}

fn with_json_dyn(
    texts: &[&str],
    work: &mut dyn FnMut(&[serde_json::Value]) -> Result<(), String>,
) -> Result<(), String> {
    let mut deepest = 0;
    for text in texts {
        let depth = json_depth(text);
        if depth > MAX_DEPTH {
            return Err(format!(
                "the schema nests {depth} levels deep in JSON, more than the {MAX_DEPTH} \
                 supported"
            ));
        }
        deepest = deepest.max(depth);
    }
    let stack = 256 * 1024 + deepest * STACK_PER_LEVEL;
    stacker::maybe_grow(stack, stack, || {
        let mut values = Vec::with_capacity(texts.len());
        for text in texts {
            let mut reader = serde_json::Deserializer::from_str(text);
            // The depth was checked above and the stack sized for it.
            reader.disable_recursion_limit();
            let value = serde::Deserialize::deserialize(&mut reader)
                .and_then(|value: serde_json::Value| reader.end().map(|()| value))
                .map_err(|err| format!("the schema is not valid JSON: {err}"))?;
            values.push(value);
        }
        work(&values)
    })
}

/// The crate's parse error with its causes, as one line.
fn explain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[inline(never)]
fn parse(value: &serde_json::Value) -> Result<Schema, String> {
    check_fixed_sizes(value)?;
    // The crate is not ours to audit line by line: a panic inside it (it unwraps in places) is
    // a refused schema, never an exception that escapes as a PanicException.
    std::panic::catch_unwind(|| Schema::parse(value))
        .map_err(|_| "the schema layer (apache-avro) could not read this schema".to_string())?
        .map_err(|err| explain(&err))
}

/// The largest `fixed` size, as the reference implementation reads it (a Java int).
const MAX_FIXED_SIZE: u64 = i32::MAX as u64;

/// Refuses a `fixed` whose size is beyond [`MAX_FIXED_SIZE`] before the crate sees it: 0.22's
/// canonical form unwraps the size as an i64 and would panic on 2^63 and above.
fn check_fixed_sizes(value: &serde_json::Value) -> Result<(), String> {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            serde_json::Value::Object(object) => {
                if object.get("type").and_then(|t| t.as_str()) == Some("fixed") {
                    if let Some(size) = object.get("size").filter(|size| size.is_number()) {
                        if size.as_u64().is_none_or(|size| size > MAX_FIXED_SIZE) {
                            let name = object.get("name").and_then(|n| n.as_str()).unwrap_or("");
                            return Err(format!(
                                "fixed {name:?} has size {size}, more than {MAX_FIXED_SIZE}"
                            ));
                        }
                    }
                }
                pending.extend(object.values());
            }
            serde_json::Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    Ok(())
}

/// The specification's Parsing Canonical Form of `schema`.
///
/// `Schema::canonical_form` of apache-avro 0.22 disagrees with the specification's [STRIP] rule
/// in three ways: it keeps a field's `order`, a decimal's `precision` and `scale`, and writes a
/// primitive with a logical type as `{"type":"long"}` instead of `"long"`. So the crate's form
/// is taken of the schema reduced to what the canonical form keeps: logical types replaced by
/// their underlying type and extra attributes dropped (tests/test_avro_schema.py pins these
/// cases). Reduced in place: a copy would double the memory a large writer schema costs.
fn canonical(mut schema: Schema) -> String {
    reduce(&mut schema);
    schema.canonical_form()
}

/// Drops from `schema` what the Parsing Canonical Form strips (see [`canonical`]).
fn reduce(schema: &mut Schema) {
    let base = match schema {
        Schema::Record(record) => {
            record.attributes.clear();
            for field in &mut record.fields {
                field.custom_attributes.clear();
                reduce(&mut field.schema);
            }
            return;
        }
        Schema::Enum(inner) => {
            inner.attributes.clear();
            return;
        }
        Schema::Fixed(inner) => {
            inner.attributes.clear();
            return;
        }
        Schema::Array(array) => {
            array.attributes.clear();
            reduce(&mut array.items);
            return;
        }
        Schema::Map(map) => {
            map.attributes.clear();
            reduce(&mut map.types);
            return;
        }
        Schema::Union(union) => {
            let mut variants = union.variants().to_vec();
            variants.iter_mut().for_each(reduce);
            if let Ok(reduced) = UnionSchema::new(variants) {
                *union = reduced;
            }
            return;
        }
        Schema::Date | Schema::TimeMillis => Schema::Int,
        Schema::TimeMicros
        | Schema::TimestampMillis
        | Schema::TimestampMicros
        | Schema::TimestampNanos
        | Schema::LocalTimestampMillis
        | Schema::LocalTimestampMicros
        | Schema::LocalTimestampNanos => Schema::Long,
        Schema::BigDecimal | Schema::Uuid(UuidSchema::Bytes) => Schema::Bytes,
        Schema::Uuid(UuidSchema::String) => Schema::String,
        Schema::Uuid(UuidSchema::Fixed(fixed)) | Schema::Duration(fixed) => {
            Schema::Fixed(fixed.clone())
        }
        Schema::Decimal(decimal) => match &decimal.inner {
            InnerDecimalSchema::Bytes => Schema::Bytes,
            InnerDecimalSchema::Fixed(fixed) => Schema::Fixed(fixed.clone()),
        },
        _ => return,
    };
    *schema = base;
    reduce(schema);
}

/// The CRC-64-AVRO fingerprint of `data`, as an unsigned int.
fn rabin(data: &[u8]) -> u64 {
    use digest::Digest;
    let mut digest = Rabin::new();
    digest.update(data);
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&digest.finalize());
    u64::from_le_bytes(raw)
}

/// Parses and validates a schema (JSON text): its Parsing Canonical Form and that form's
/// CRC-64-AVRO fingerprint. An invalid schema raises `ValueError` with the crate's reason.
#[pyfunction]
pub fn _avro_parse(text: &str) -> PyResult<(String, u64)> {
    with_json(&[text], |values| {
        let schema = parse(&values[0])?;
        let canonical = std::panic::catch_unwind(|| canonical(schema))
            .map_err(|_| "the schema layer (apache-avro) could not read this schema".to_string())?;
        let fingerprint = rabin(canonical.as_bytes());
        Ok((canonical, fingerprint))
    })
    .map_err(PyValueError::new_err)
}

/// The CRC-64-AVRO fingerprint of `data` (a canonical form's UTF-8), unsigned.
#[pyfunction]
pub fn _avro_fingerprint(data: &[u8]) -> u64 {
    rabin(data)
}

/// Whether data written with `writer` can be read with `reader` (both JSON text) by the Avro
/// resolution rules, as the crate sees it: `None` when compatible (fully, or for some values of a
/// union or enum), else the crate's explanation. An invalid schema raises `ValueError`.
#[pyfunction]
pub fn _avro_compatible(reader: &str, writer: &str) -> PyResult<Option<String>> {
    with_json(&[reader, writer], |values| {
        let reader = parse(&values[0])?;
        let writer = parse(&values[1])?;
        let verdict = std::panic::catch_unwind(|| SchemaCompatibility::can_read(&writer, &reader))
            .map_err(|_| "the schema layer (apache-avro) could not compare these schemas")?;
        Ok(verdict.err().map(|err| explain(&err)))
    })
    .map_err(PyValueError::new_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested_records(depth: usize) -> String {
        let mut text = String::from("\"long\"");
        for level in (0..depth).rev() {
            text = format!(
                r#"{{"type":"record","name":"R{level}","fields":[{{"name":"f","type":{text}}}]}}"#
            );
        }
        text
    }

    #[test]
    fn depth_counts_objects_and_arrays_outside_strings() {
        assert_eq!(json_depth(r#""long""#), 0);
        assert_eq!(json_depth(r#"{"a":["{[{["]}"#), 2);
        assert_eq!(json_depth(r#"{"a\"{":[{}]}"#), 3);
    }

    #[test]
    fn fingerprint_of_the_empty_schema_vectors() {
        // The specification's vectors: "null" and "int".
        assert_eq!(rabin(br#""null""#) as i64, 7195948357588979594);
        assert_eq!(rabin(br#""int""#) as i64, 8247732601305521295);
    }

    #[test]
    fn five_hundred_nested_records_parse_on_a_small_thread_stack() {
        let text = nested_records(500);
        let run = move || {
            with_json(&[&text, &text], |values| {
                let reader = parse(&values[0])?;
                let writer = parse(&values[1])?;
                let canonical = canonical(reader.clone());
                assert!(SchemaCompatibility::can_read(&writer, &reader).is_ok());
                Ok(canonical.len())
            })
        };
        let handle = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(run)
            .unwrap();
        assert!(handle.join().unwrap().unwrap() > 0);
    }

    #[test]
    fn schemas_nested_past_the_limit_are_refused() {
        let text = nested_records(MAX_DEPTH / 3 + 1);
        let err = with_json(&[&text], |_| Ok(())).unwrap_err();
        assert!(err.contains("levels deep"), "{err}");
    }
}

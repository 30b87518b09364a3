//! The Avro schema layer as Python sees it: every schema that enters (`schema=`, a derived
//! schema, a container header's schema, a registry's writer schema) is parsed once by the byte
//! layer (`polycodec_formats::avro::schema`, linear in the text) into an arena kept in Rust,
//! with its Parsing Canonical Form and CRC-64-AVRO fingerprint. `python/polycodec/_avro/`
//! binds the codec's plan to the codec's own schema from [`ParsedSchema::nodes`]; writer
//! schemas are resolved against it in Rust (`resolve.rs`) and never cross into Python.

use std::sync::Arc;

use polycodec_formats::avro::schema::{Logical, Node, Schema, Sharing};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The stack a schema parse needs at the deepest nesting `MAX_DEPTH` allows, with a wide
/// margin; a thread with less left gets a new stack of `PARSE_STACK` for the parse.
const PARSE_RED_ZONE: usize = 1024 * 1024;
const PARSE_STACK: usize = 8 * 1024 * 1024;

/// A parsed, validated schema.
#[pyclass(module = "polycodec._polycodec", frozen)]
pub struct ParsedSchema {
    pub schema: Arc<Schema>,
    pub canonical: String,
    pub fingerprint: u64,
}

/// Parses a schema's JSON text; a bare primitive name (`long`, not `"long"`) is taken as that
/// type, as `schema=` has always taken it. The parser recurses once per nesting level of the
/// schema, at most `MAX_DEPTH` levels: it runs on a stack with room for that many, whatever
/// thread calls.
pub fn parse_schema(text: &[u8], sharing: Sharing) -> Result<Schema, String> {
    let trimmed = text.trim_ascii();
    let quoted;
    let text = if trimmed.first().is_some_and(u8::is_ascii_alphabetic) {
        quoted = [b"\"", trimmed, b"\""].concat();
        &quoted[..]
    } else {
        text
    };
    stacker::maybe_grow(PARSE_RED_ZONE, PARSE_STACK, || {
        Schema::parse(text, sharing).map_err(|err| err.0)
    })
}

/// A parsed schema's Parsing Canonical Form (on a stack with room for its depth, as
/// [`parse_schema`]).
pub fn canonical_form(schema: &Schema) -> String {
    stacker::maybe_grow(PARSE_RED_ZONE, PARSE_STACK, || schema.canonical_form())
}

/// The CRC-64-AVRO fingerprint of a parsed schema's canonical form (on a stack with room for
/// its depth, as [`parse_schema`]).
pub fn fingerprint(schema: &Schema) -> u64 {
    stacker::maybe_grow(PARSE_RED_ZONE, PARSE_STACK, || schema.fingerprint())
}

impl ParsedSchema {
    /// A codec's own schema (each of its unions a node of its own, to be bound where it is).
    pub fn parse(text: &[u8]) -> Result<ParsedSchema, String> {
        let schema = parse_schema(text, Sharing::None)?;
        let canonical =
            stacker::maybe_grow(PARSE_RED_ZONE, PARSE_STACK, || schema.canonical_form());
        let fingerprint = polycodec_formats::avro::schema::rabin(canonical.as_bytes());
        Ok(ParsedSchema {
            schema: Arc::new(schema),
            canonical,
            fingerprint,
        })
    }
}

/// A field default (JSON) as the Python value `json.loads` would give.
fn json_value<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => flag.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(int), _) => int.into_pyobject(py)?.into_any(),
            (None, Some(int)) => int.into_pyobject(py)?.into_any(),
            _ => number
                .as_f64()
                .unwrap_or(f64::NAN)
                .into_pyobject(py)?
                .into_any(),
        },
        Value::String(text) => text.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, json_value(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

#[pymethods]
impl ParsedSchema {
    #[getter]
    fn canonical(&self) -> &str {
        &self.canonical
    }

    #[getter]
    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    #[getter]
    fn root(&self) -> u32 {
        self.schema.root
    }

    /// The nodes as dicts (`type`, `logical`, and per kind `name`, `aliases`, `fields`,
    /// `symbols`, `default`, `size`, `precision`, `scale`, `items`, `values`, `branches`), for
    /// the binding of a plan to the codec's own schema.
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let schema = &*self.schema;
        let out = PyList::empty(py);
        for (id, node) in schema.nodes.iter().enumerate() {
            let dict = PyDict::new(py);
            dict.set_item("type", node.type_name())?;
            let logical = node.logical().name();
            dict.set_item("logical", (!logical.is_empty()).then_some(logical))?;
            if let Logical::Decimal { precision, scale } = node.logical() {
                dict.set_item("precision", precision)?;
                dict.set_item("scale", scale)?;
            }
            if let Some(named) = node.named() {
                dict.set_item("name", schema.fullname(id as u32))?;
                let aliases: Vec<&str> = named.aliases.iter().map(|a| schema.text(*a)).collect();
                dict.set_item("aliases", aliases)?;
            }
            match node {
                Node::Fixed(fixed) => dict.set_item("size", fixed.size)?,
                Node::Enum(inner) => {
                    let symbols: Vec<&str> =
                        inner.symbols.iter().map(|s| schema.text(*s)).collect();
                    dict.set_item("default", inner.default.map(|i| symbols[i as usize]))?;
                    dict.set_item("symbols", symbols)?;
                }
                Node::Array(items) => dict.set_item("items", items)?,
                Node::Map(values) => dict.set_item("values", values)?,
                Node::Union(branches) => dict.set_item("branches", branches.to_vec())?,
                Node::Record(record) => {
                    let list = PyList::empty(py);
                    for field in record.fields.iter() {
                        let entry = PyDict::new(py);
                        entry.set_item("name", schema.text(field.name))?;
                        entry.set_item("type", field.schema)?;
                        let default = schema.default_of(field);
                        entry.set_item("has_default", default.is_some())?;
                        let default = match default {
                            Some(value) => json_value(py, value)?,
                            None => py.None().into_bound(py),
                        };
                        entry.set_item("default", default)?;
                        let aliases: Vec<&str> = schema
                            .aliases_of(field)
                            .iter()
                            .map(|a| schema.text(*a))
                            .collect();
                        entry.set_item("aliases", aliases)?;
                        list.append(entry)?;
                    }
                    dict.set_item("fields", list)?;
                }
                _ => {}
            }
            out.append(dict)?;
        }
        Ok(out)
    }
}

/// Parses and validates a schema (JSON text, str or bytes). An invalid schema raises
/// `ValueError` with the reason.
#[pyfunction]
pub fn _avro_parse(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<ParsedSchema> {
    let data: Vec<u8> = match text.cast::<pyo3::types::PyString>() {
        Ok(text) => text.to_str()?.as_bytes().to_vec(),
        Err(_) => text.extract()?,
    };
    py.detach(|| ParsedSchema::parse(&data))
        .map_err(PyValueError::new_err)
}

/// The CRC-64-AVRO fingerprint of `data` (a canonical form's UTF-8), unsigned.
#[pyfunction]
pub fn _avro_fingerprint(data: &[u8]) -> u64 {
    polycodec_formats::avro::schema::rabin(data)
}

//! One folder per wire format. Each format reads and writes its own bytes and walks the shared
//! plan; the byte-level parts (readers, writers) have no Python in them.
//!
//! A format plugs into `Codec` through [`WireFormat`]: `open` builds a format's per-codec state
//! (a JSON codec has none; an Avro codec holds its schema and framing) from the plan and the
//! format's own keyword options, and the four entry points dispatch to it.
//!
//! JSON and MessagePack share one plan-walking encoder, [`encoder::Encoder`], generic over each
//! format's [`encoder::WireWriter`] (implemented in `json/encode.rs` and `msgpack/encode.rs`).
//! They also share one decoder, [`decoder::Decoder`], generic over the format's reader: each
//! format implements [`decoder::WireReader`] for it (in `json/decode.rs` and
//! `msgpack/decode.rs`) with its value dispatch and token reading. A writer holds its own
//! output and a reader is any input that answers the walk's questions, so `builtins/` (the
//! JSON form as Python objects: `to_builtins` / `from_builtins`) is one more writer and reader
//! of the same walks rather than a walk of its own.

pub mod avro;
pub mod builtins;
pub mod decoder;
pub mod encoder;
pub mod json;
pub mod msgpack;
pub mod pickle;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{PyTraverseError, PyVisit};

use crate::errors::Result;
use crate::plan::Plan;
use crate::py::Obj;

/// The names `Codec(format=...)` accepts, in the order error messages list them.
pub const FORMAT_NAMES: [&str; 4] = ["json", "msgpack", "avro", "pickle"];

/// Everything a format needs when a codec is built.
pub struct OpenArgs<'a, 'py> {
    pub plan: &'a Plan,
    /// The plan spec from `polycodec._plan.compile_spec` (`(nodes, root)`), for formats that
    /// derive something in Python from it (the Avro schema).
    pub spec: &'a Bound<'py, PyAny>,
    /// The type the codec was built for.
    pub target: &'a Bound<'py, PyAny>,
    /// The keyword options specific to this format (those `Codec()` itself does not know).
    /// A format must reject the keys it does not understand with [`unexpected_option`].
    pub options: &'a Bound<'py, PyDict>,
}

/// One wire format's encoder and decoder, bound to one codec's plan.
pub trait WireFormat: Send + Sync {
    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()>;

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()>;

    /// `writer_schema` is only ever passed to formats whose `takes_writer_schema` is true.
    fn decode_one<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
        writer_schema: Option<&Bound<'py, PyAny>>,
    ) -> Result<Obj<'py>>;

    fn decode_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Result<Obj<'py>>;

    /// Whether `decode_one` accepts a `str` (JSON text) besides bytes-like input.
    fn accepts_str(&self) -> bool {
        false
    }

    /// Whether `decode_one` accepts `writer_schema=` (schema resolution).
    fn takes_writer_schema(&self) -> bool {
        false
    }

    /// The format's schema for `Codec.schema`, if the format has schemas.
    fn schema<'py>(&self, _py: Python<'py>) -> PyResult<Option<Obj<'py>>> {
        Ok(None)
    }

    /// Reports the Python objects the format state holds to the garbage collector.
    fn traverse(&self, _visit: &PyVisit<'_>) -> std::result::Result<(), PyTraverseError> {
        Ok(())
    }
}

/// Builds the format named `name` for one codec.
pub fn open(name: &str, args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    match name {
        "json" => json::open(args),
        "msgpack" => msgpack::open(args),
        "avro" => avro::open(args),
        "pickle" => pickle::open(args),
        other => Err(PyValueError::new_err(format!(
            "unknown format {other:?}; this build supports: {}",
            FORMAT_NAMES
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The error for a keyword option the format does not take.
pub fn unexpected_option(format: &str, options: &Bound<'_, PyDict>) -> PyErr {
    let names: Vec<String> = options.keys().iter().map(|k| k.to_string()).collect();
    PyTypeError::new_err(format!(
        "Codec() got unexpected keyword argument(s) for format {format:?}: {}",
        names.join(", ")
    ))
}

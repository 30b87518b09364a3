//! One folder per wire format. Each format walks the shared plan for Python objects over its
//! readers and writers, which live in the byte-layer crate (`formats/`, `polycodec_formats`:
//! no Python, no `unsafe`); each format's module re-exports them under its own name (e.g.
//! `json::read`).
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
//! of the same walks; `to_builtins` runs a direct walk of its own first (`builtins/walk.rs`),
//! which falls back to the shared encoder for the shapes it leaves out and for every error.

pub mod avro;
pub mod builtins;
pub mod builtins_table;
pub mod collect;
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

/// One wire format as the rest of the crate and the Python side see it: the name
/// `Codec(format=...)` accepts, how a codec opens it, and the capabilities the plan compiler asks
/// about (through `_polycodec.FORMATS`).
pub struct FormatEntry {
    pub name: &'static str,
    pub open: fn(&OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>>,
    /// Whether records sharing a union need a tag field to be told apart. Formats whose wire
    /// says which alternative follows (Avro's branch index, pickle's class reference) do not.
    pub unions_need_tag: bool,
    /// Whether a value can be kept as its encoded bytes (`polycodec.Raw`) and written back as
    /// they are: each value of the format delimits itself (JSON, MessagePack).
    pub keeps_raw: bool,
}

/// Every format this build implements, in the order error messages list them: the one list of
/// formats. `FORMAT_NAMES`, [`open`], `_polycodec.FORMATS` (and from it the compiler's union
/// rule and the runtime `polycodec.Format`) all derive from it.
pub const FORMATS: [FormatEntry; 4] = [
    FormatEntry {
        name: "json",
        open: json::open,
        unions_need_tag: true,
        keeps_raw: true,
    },
    FormatEntry {
        name: "msgpack",
        open: msgpack::open,
        unions_need_tag: true,
        keeps_raw: true,
    },
    FormatEntry {
        name: "avro",
        open: avro::open,
        unions_need_tag: false,
        keeps_raw: false,
    },
    FormatEntry {
        name: "pickle",
        open: pickle::open,
        unions_need_tag: false,
        keeps_raw: false,
    },
];

/// The names `Codec(format=...)` accepts, in the order error messages list them.
pub const FORMAT_NAMES: [&str; FORMATS.len()] = format_names();

const fn format_names() -> [&'static str; FORMATS.len()] {
    let mut names = [""; FORMATS.len()];
    let mut i = 0;
    while i < FORMATS.len() {
        names[i] = FORMATS[i].name;
        i += 1;
    }
    names
}

/// Adds `FORMATS` to the extension module: a read-only mapping from each format's name (in
/// [`FORMATS`] order) to a read-only mapping of its capabilities, e.g.
/// `{"json": {"unions_need_tag": True, "keeps_raw": True}, ...}`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let proxy = py.import("types")?.getattr("MappingProxyType")?;
    let formats = PyDict::new(py);
    for entry in &FORMATS {
        let capabilities = PyDict::new(py);
        capabilities.set_item("unions_need_tag", entry.unions_need_tag)?;
        capabilities.set_item("keeps_raw", entry.keeps_raw)?;
        formats.set_item(entry.name, proxy.call1((capabilities,))?)?;
    }
    module.add("FORMATS", proxy.call1((formats,))?)
}

/// Everything a format needs when a codec is built.
pub struct OpenArgs<'a, 'py> {
    pub plan: &'a Plan,
    /// The plan spec from `polycodec._plan.compile_spec` (`(nodes, root)`), for formats that
    /// derive something in Python from it (the Avro schema).
    pub spec: &'a Bound<'py, PyAny>,
    /// The keyword options specific to this format (those `Codec()` itself does not know).
    /// A format must reject the keys it does not understand with [`unexpected_option`].
    pub options: &'a Bound<'py, PyDict>,
    /// What the format's Python side derived for this codec (`polycodec._build` makes it:
    /// Avro's `_avro.AvroState`, the schema bound to the plan), or None.
    pub state: Option<&'a Bound<'py, PyAny>>,
}

/// The output an `encode_many_streamed` collects before it hands it over: small enough to stay
/// in the L1 data cache until it is copied.
pub const STRETCH: usize = 2 * 1024;

/// Where [`WireFormat::encode_many_streamed`] hands its output over: a `bytes` object under
/// construction (`py::output::BytesBuilder`) or a caller's `bytearray`
/// (`py::bytearray::BytearrayOutput`).
pub trait OutputSink {
    /// Takes the next stretch of output.
    fn append(&mut self, stretch: &[u8]) -> Result<()>;
    /// Replaces the first `old_length` bytes taken with `front`: a MessagePack array header
    /// written for the expected count, when the count written differs (an iterable without a
    /// length, a list that user code resized while it was encoded).
    fn replace_front(&mut self, old_length: usize, front: &[u8]) -> Result<()>;
}

impl OutputSink for crate::py::output::BytesBuilder<'_> {
    #[inline]
    fn append(&mut self, stretch: &[u8]) -> Result<()> {
        Ok(crate::py::output::BytesBuilder::append(self, stretch)?)
    }

    fn replace_front(&mut self, old_length: usize, front: &[u8]) -> Result<()> {
        Ok(crate::py::output::BytesBuilder::replace_front(
            self, old_length, front,
        )?)
    }
}

impl OutputSink for crate::py::bytearray::BytearrayOutput<'_, '_> {
    #[inline]
    fn append(&mut self, stretch: &[u8]) -> Result<()> {
        Ok(crate::py::bytearray::BytearrayOutput::append(
            self, stretch,
        )?)
    }

    fn replace_front(&mut self, old_length: usize, front: &[u8]) -> Result<()> {
        Ok(crate::py::bytearray::BytearrayOutput::replace_front(
            self, old_length, front,
        )?)
    }
}

/// One wire format's encoder and decoder, bound to one codec's plan.
pub trait WireFormat: Send + Sync {
    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()>;

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()>;

    /// `encode_many` that may hand its output over to `sink` as it goes, a stretch of at least
    /// [`STRETCH`] bytes at a time (between two values), leaving the rest in `out` (what
    /// follows the stretches): the API copies each stretch into the `bytes` object while it is
    /// still in the cache (see `py::output`). By default everything stays in `out`.
    fn encode_many_streamed(
        &self,
        plan: &Plan,
        values: &Obj<'_>,
        out: &mut Vec<u8>,
        _sink: &mut dyn OutputSink,
    ) -> Result<()> {
        self.encode_many(plan, values, out)
    }

    /// Whether `encode_many_streamed` hands its output over as it goes.
    fn streams_many(&self) -> bool {
        false
    }

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

    /// `errors="all"`: decodes `input` again, recording every validation error (see
    /// `decoder::CollectAll`); `None` for a format that reports the first error only.
    fn collect_one<'py>(
        &self,
        _py: Python<'py>,
        _plan: &Plan,
        _strict: bool,
        _input: &[u8],
    ) -> Option<Result<decoder::Collected<'py>>> {
        None
    }

    /// `errors="all"` for `decode_many`, as [`Self::collect_one`].
    fn collect_many<'py>(
        &self,
        _py: Python<'py>,
        _plan: &Plan,
        _strict: bool,
        _input: &[u8],
    ) -> Option<Result<decoder::Collected<'py>>> {
        None
    }

    /// Whether `decode_one` accepts a `str` (JSON text) besides bytes-like input.
    fn accepts_str(&self) -> bool {
        false
    }

    /// Whether `decode_one` accepts `writer_schema=` (schema resolution).
    fn takes_writer_schema(&self) -> bool {
        false
    }

    /// The Avro codec behind this format, for the stream API (`src/python_api/stream.rs`), which reads and
    /// writes container files block by block.
    fn as_avro(&self) -> Option<&avro::Avro> {
        None
    }

    /// The records' field tables of `to_builtins`'s direct walk, which the JSON codec (the
    /// one whose form `to_builtins` writes) builds from its plan.
    fn builtins_table(&self) -> Option<&builtins_table::Table> {
        None
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
    match FORMATS.iter().find(|entry| entry.name == name) {
        Some(entry) => (entry.open)(args),
        None => Err(unknown_format(name)),
    }
}

/// The error for a format name this build does not implement.
pub fn unknown_format(name: &str) -> PyErr {
    PyValueError::new_err(format!(
        "unknown format {name:?}; this build supports: {}",
        FORMAT_NAMES
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The error for a keyword option the format does not take.
pub fn unexpected_option(format: &str, options: &Bound<'_, PyDict>) -> PyErr {
    let names: Vec<String> = options.keys().iter().map(|k| k.to_string()).collect();
    PyTypeError::new_err(format!(
        "Codec() got unexpected keyword argument(s) for format {format:?}: {}",
        names.join(", ")
    ))
}

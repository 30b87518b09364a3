//! The `Codec` object's fields (its compiled plan and format state, its options and size
//! hints) and what the stream API (`stream.rs`) needs of them; its Python methods are in
//! `codec.rs`, which uses the stream API in turn.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::codecs::WireFormat;
use crate::errors::Error;
use crate::plan::Plan;
use crate::py::Obj;

/// Encodes and decodes values of one type in one format.
///
/// The type's plan is compiled once, at construction; a codec is immutable afterwards, so it is
/// safe to share between threads.
#[pyclass(frozen, module = "polycodec")]
pub struct Codec {
    pub(crate) plan: Arc<Plan>,
    pub(crate) format: &'static str,
    pub(crate) wire: Arc<dyn WireFormat>,
    pub(crate) strict: bool,
    /// `errors="all"`: a decode that fails on a validation error decodes the input again,
    /// recording every one (nothing else changes, and nothing at all until a decode fails).
    pub(super) all_errors: bool,
    /// Owns `plan` and `wire` for the garbage collector: they may be shared with other codecs
    /// (see `Compiled`), so this codec reports the one object that holds them, not their
    /// contents, which would be counted once per codec.
    pub(super) compiled: Py<Compiled>,
    pub(super) target: Py<PyAny>,
    pub(super) options: Py<PyDict>,
    /// The size of the last output, to reserve the next buffer in one step.
    pub(super) size_hint: AtomicUsize,
    /// The size of the last `encode_many` output, to allocate the next one's `bytes` at once.
    pub(super) many_hint: AtomicUsize,
    /// The longest stretch of the last `encode_many` output its buffer held before handing it
    /// over (about its largest item), to size the next one's buffer at once.
    pub(super) many_stretch_hint: AtomicUsize,
    /// `json_schema()`'s derived schemas by `ref_template` (None or a str), derived once:
    /// each call returns a deep copy.
    pub(super) json_schemas: Py<PyDict>,
}

/// The compiled part of a codec: its plan and its format's state, built once per type, format
/// and options and shared by every codec of them (`polycodec._cache` keeps it).
#[pyclass(frozen, module = "polycodec._polycodec", name = "_Compiled")]
pub struct Compiled {
    pub(super) plan: Arc<Plan>,
    pub(super) wire: Arc<dyn WireFormat>,
}

impl Codec {
    /// Decodes one complete unit of a stream (a JSON line, a MessagePack value, a pickle).
    pub(crate) fn decode_unit<'py>(&self, py: Python<'py>, unit: &[u8]) -> Result<Obj<'py>, Error> {
        self.wire
            .decode_one(py, &self.plan, self.strict, unit, None)
    }
}

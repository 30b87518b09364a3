//! The Python face of the extension: `Codec`, which compiles a plan once and exposes the four
//! entry points for one format.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use super::codec_object::{Codec, Compiled};
use super::stream;
use crate::codecs::decoder::Collected;
use crate::codecs::{self, OpenArgs};
use crate::errors::{Code, Error, ErrorKind};
use crate::plan::build_plan;
use crate::py::entry::ShortCalls;
use crate::py::{GcPause, Obj};

#[pymethods]
impl Compiled {
    /// Builds the plan of `spec` (from `polycodec._plan.compile_spec`, compiled with
    /// `compile_options`) and opens `format` on it with the state the format's Python side made
    /// (`state`: Avro's `AvroState`, None for the other formats). Called by
    /// `polycodec._build.compiled_state` only.
    #[new]
    fn new(
        spec: Bound<'_, PyAny>,
        format: &str,
        format_options: Bound<'_, PyDict>,
        compile_options: Bound<'_, PyDict>,
        state: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut plan = build_plan(&spec)?;
        plan.compile_options = Some(compile_options.unbind());
        let wire = codecs::open(
            format,
            &OpenArgs {
                plan: &plan,
                spec: &spec,
                options: &format_options,
                state: state.as_ref(),
            },
        )?;
        Ok(Compiled {
            plan: Arc::new(plan),
            wire: Arc::from(wire),
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.wire.traverse(&visit)?;
        self.plan.traverse(&visit)
    }
}

/// `polycodec._build.compiled_state`, imported once: the one call into Python that gives a
/// codec its compiled state (found in the cache, or compiled, bound to its format and stored).
fn compiled_state_function(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static FUNCTION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let function = FUNCTION.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("polycodec._build")?
            .getattr("compiled_state")?
            .unbind())
    })?;
    Ok(function.bind(py))
}

/// How many `ref_template`s a codec keeps the JSON Schema of.
const JSON_SCHEMAS_KEPT: usize = 8;

#[pymethods]
impl Codec {
    #[new]
    #[pyo3(signature = (r#type, format = "json", *, rename = None, omit_defaults = false,
                        forbid_unknown_fields = false, strict = true, array_like = false,
                        extensions = None, errors = "first", **format_options))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        r#type: Bound<'_, PyAny>,
        format: &str,
        rename: Option<Bound<'_, PyAny>>,
        omit_defaults: bool,
        forbid_unknown_fields: bool,
        strict: bool,
        array_like: bool,
        extensions: Option<Bound<'_, PyAny>>,
        errors: &str,
        format_options: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let all_errors = match errors {
            "first" => false,
            "all" => true,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "errors must be \"first\" or \"all\", not {other:?}"
                )))
            }
        };
        let options = PyDict::new(py);
        options.set_item("rename", rename.as_ref())?;
        options.set_item("omit_defaults", omit_defaults)?;
        options.set_item("forbid_unknown_fields", forbid_unknown_fields)?;
        options.set_item("array_like", array_like)?;
        options.set_item("extensions", extensions.as_ref())?;
        // The format decides which unions are allowed (Avro tells records apart by branch).
        let compile_options = options.copy()?;
        compile_options.set_item("format", format)?;
        options.set_item("strict", strict)?;
        options.set_item("errors", errors)?;
        let format_options = format_options.unwrap_or_else(|| PyDict::new(py));
        options.update(format_options.as_mapping())?;
        let format = codecs::FORMAT_NAMES
            .into_iter()
            .find(|name| *name == format)
            .ok_or_else(|| codecs::unknown_format(format))?;
        // A codec of the same type, format and options made before shares its compiled plan
        // and wire state: `polycodec._build.compiled_state` finds it in the cache, or compiles
        // it and stores it, in one call.
        let compiled = compiled_state_function(py)?
            .call1((&r#type, format, &options, &compile_options, &format_options))?
            .cast_into::<Compiled>()?;
        let shared = compiled.get();
        Ok(Codec {
            plan: shared.plan.clone(),
            format,
            wire: shared.wire.clone(),
            strict,
            all_errors,
            compiled: compiled.clone().unbind(),
            target: r#type.unbind(),
            options: options.unbind(),
            size_hint: AtomicUsize::new(64),
            many_hint: AtomicUsize::new(0),
            many_stretch_hint: AtomicUsize::new(0),
            json_schemas: PyDict::new(py).unbind(),
        })
    }

    /// The type this codec encodes and decodes.
    #[getter]
    fn r#type(&self, py: Python<'_>) -> Py<PyAny> {
        self.target.clone_ref(py)
    }

    /// The wire format name.
    #[getter]
    fn format(&self) -> &'static str {
        self.format
    }

    /// The format's schema (Avro: the schema as a JSON-compatible dict).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Obj<'py>> {
        self.wire.schema(py)?.ok_or_else(|| {
            PyAttributeError::new_err(format!("format {:?} has no schema", self.format))
        })
    }

    /// The JSON Schema (2020-12) of this codec's JSON form, as a new dict on every call
    /// (derived in `polycodec._jsonschema` from the plan, with the codec's own options, once
    /// per `ref_template`; each call returns a deep copy the caller may change).
    #[pyo3(signature = (*, ref_template = None))]
    fn json_schema<'py>(
        &self,
        py: Python<'py>,
        ref_template: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Obj<'py>> {
        let module = py.import("polycodec._jsonschema")?;
        // Only None and exact strs are keys; anything else is derived (and refused) each time.
        let key = match &ref_template {
            None => Some(py.None().into_bound(py)),
            Some(template) if template.is_exact_instance_of::<PyString>() => Some(template.clone()),
            Some(_) => None,
        };
        let schemas = self.json_schemas.bind(py);
        let cached = match &key {
            Some(key) => schemas.get_item(key)?,
            None => None,
        };
        let schema = match cached {
            Some(schema) => schema,
            None => {
                let schema = module.getattr("codec_json_schema")?.call1((
                    self.target.bind(py),
                    self.format,
                    self.options.bind(py).copy()?,
                    ref_template,
                ))?;
                if let Some(key) = key {
                    if schemas.len() >= JSON_SCHEMAS_KEPT {
                        schemas.clear();
                    }
                    schemas.set_item(key, &schema)?;
                }
                schema
            }
        };
        py.import("copy")?.getattr("deepcopy")?.call1((schema,))
    }

    /// How each record class in the plan has its fields read and stored, as
    /// `{qualname: access}` (`"dict"`, `"slot offsets"`, `"slot descriptors"`, `"getattr"`,
    /// `"mapping"`, `"tuple"`). For tests and diagnosis, not a stable API.
    fn _field_access<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for node in &self.plan.nodes {
            if let crate::plan::Node::Record(spec) = node {
                out.set_item(&spec.qualname, spec.access.describe())?;
            }
        }
        Ok(out)
    }

    /// The JSON form of `value` as Python objects (dicts, lists, str, int, float, bool, None):
    /// what `json.loads(codec.encode_one(value))` gives, built without bytes. The types in
    /// `builtin_types` (bytes, bytearray, datetime, date, time, timedelta, UUID, Decimal) stay
    /// as they are. JSON codecs only: other formats raise TypeError.
    #[pyo3(signature = (value, /, *, builtin_types = None))]
    fn to_builtins<'py>(
        &self,
        value: &Bound<'py, PyAny>,
        builtin_types: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.json_form("to_builtins")?;
        let py = value.py();
        let keep = codecs::builtins::Keep::from_option(builtin_types)?;
        let Some(table) = self.wire.builtins_table() else {
            return Err(PyTypeError::new_err(
                "to_builtins() works with the JSON form",
            ));
        };
        codecs::builtins::to_builtins(&self.plan, table, value, keep)
            .map_err(|e| e.into_pyerr(py, ErrorKind::Encode))
    }

    /// A value of the codec's type from its JSON form given as Python objects (as
    /// `json.loads` returns them), with `decode_one`'s validation, errors and paths; values of
    /// the `builtin_types` are also accepted as themselves. JSON codecs only.
    /// With `from_attributes`, a record (dataclass or attrs class) may also be given as any
    /// object whose attributes hold its fields (an ORM row, a `SimpleNamespace`), at any depth.
    #[pyo3(signature = (data, /, *, builtin_types = None, from_attributes = false))]
    #[allow(clippy::wrong_self_convention)] // the Python method's name
    fn from_builtins<'py>(
        &self,
        data: &Bound<'py, PyAny>,
        builtin_types: Option<&Bound<'py, PyAny>>,
        from_attributes: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.json_form("from_builtins")?;
        let py = data.py();
        let keep = match builtin_types {
            None if from_attributes => codecs::builtins::Keep::every(),
            types => codecs::builtins::Keep::from_option(types)?,
        };
        let _pause = GcPause::new(py);
        codecs::builtins::from_builtins(py, &self.plan, self.strict, data, keep, from_attributes)
            .or_else(|error| {
                self.decode_failed(py, error, || {
                    Some(codecs::builtins::collect(
                        py,
                        &self.plan,
                        self.strict,
                        data,
                        keep,
                        from_attributes,
                    ))
                })
            })
    }

    /// Encodes one value.
    #[pyo3(signature = (value, /))]
    fn encode_one<'py>(&self, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        self.encode_to_bytes(value.py(), |out| {
            self.wire.encode_one(&self.plan, value, out)
        })
    }

    /// Encodes a sequence of values as one message: a JSON or MessagePack array, an Avro object
    /// container file, a pickled list.
    #[pyo3(signature = (values, /))]
    fn encode_many<'py>(&self, values: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        self.encode_many_to_bytes(values.py(), values)
    }

    /// Encodes one value into `buffer` (a bytearray) from `offset` on (-1: its end), leaving
    /// the buffer ending where the output ends, as msgspec's `Encoder.encode_into` does: a
    /// producer that reuses one buffer allocates no `bytes` per message.
    #[pyo3(signature = (value, buffer, /, offset = 0))]
    fn encode_into(
        &self,
        value: &Bound<'_, PyAny>,
        buffer: &Bound<'_, PyAny>,
        offset: isize,
    ) -> PyResult<()> {
        let py = value.py();
        let buffer = crate::py::bytearray::bytearray_argument(buffer)?;
        let target = crate::py::bytearray::BytearrayOutput::new(buffer, offset)?;
        let mut out =
            crate::py::output::buffer_for(OUTPUT.take(), self.size_hint.load(Ordering::Relaxed));
        let result = match self.wire.encode_one(&self.plan, value, &mut out) {
            Ok(()) => {
                self.size_hint.store(out.len(), Ordering::Relaxed);
                target.finish(&out).map_err(Error::from)
            }
            Err(e) => Err(e),
        };
        if out.capacity() <= OUTPUT_KEPT {
            OUTPUT.set(out);
        }
        result.map_err(|e| e.into_pyerr(py, ErrorKind::Encode))
    }

    /// `encode_many` into `buffer` from `offset` on, as `encode_into`: formats that stream
    /// their output hand it to the buffer a stretch at a time.
    #[pyo3(signature = (values, buffer, /, offset = 0))]
    fn encode_many_into(
        &self,
        values: &Bound<'_, PyAny>,
        buffer: &Bound<'_, PyAny>,
        offset: isize,
    ) -> PyResult<()> {
        let py = values.py();
        let buffer = crate::py::bytearray::bytearray_argument(buffer)?;
        let mut target = crate::py::bytearray::BytearrayOutput::new(buffer, offset)?;
        let hint = if self.wire.streams_many() {
            self.many_stretch_hint.load(Ordering::Relaxed)
        } else {
            self.size_hint.load(Ordering::Relaxed)
        };
        let mut out = crate::py::output::buffer_for(OUTPUT.take(), hint);
        let result = if self.wire.streams_many() {
            self.wire
                .encode_many_streamed(&self.plan, values, &mut out, &mut target)
        } else {
            self.wire.encode_many(&self.plan, values, &mut out)
        };
        let result = match result {
            Ok(()) => target.finish(&out).map_err(Error::from),
            Err(e) => {
                target.abandon();
                Err(e)
            }
        };
        if out.capacity() <= OUTPUT_KEPT {
            OUTPUT.set(out);
        }
        result.map_err(|e| e.into_pyerr(py, ErrorKind::Encode))
    }

    /// Decodes one value from bytes, bytearray, memoryview (or, for JSON, str). Avro also takes
    /// the schema the datum was written with, to resolve it against the codec's own.
    #[pyo3(signature = (buf, /, *, writer_schema = None))]
    fn decode_one<'py>(
        &self,
        buf: &Bound<'py, PyAny>,
        writer_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = buf.py();
        if writer_schema.is_some() && !self.wire.takes_writer_schema() {
            return Err(PyTypeError::new_err(format!(
                "writer_schema= applies to format \"avro\" only, not {:?}",
                self.format
            )));
        }
        let input = input_bytes(buf, self.wire.accepts_str())?;
        let _pause = GcPause::for_input(py, input.len());
        self.with_raw_source(buf, || {
            self.wire
                .decode_one(py, &self.plan, self.strict, &input, writer_schema)
                .or_else(|error| {
                    // A resolved Avro datum has no second pass: its first error is the one.
                    let collect = || match writer_schema {
                        None => self.wire.collect_one(py, &self.plan, self.strict, &input),
                        Some(_) => None,
                    };
                    self.decode_failed(py, error, collect)
                })
        })
    }

    /// Decodes a message written by `encode_many` into a list.
    #[pyo3(signature = (buf, /))]
    fn decode_many<'py>(&self, buf: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = buf.py();
        let input = input_bytes(buf, self.wire.accepts_str())?;
        let _pause = GcPause::new(py);
        self.with_raw_source(buf, || {
            self.wire.decode_many(py, &self.plan, self.strict, &input)
        })
        .map_err(|e: Error| e.into_pyerr(py, ErrorKind::Validation))
    }

    /// Encodes any iterable of values in the format's stream form (see `src/python_api/stream.rs`).
    #[pyo3(signature = (values, /))]
    fn encode_stream<'py>(&self, values: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        stream::encode_stream(self, values)
            .map_err(|e| e.into_pyerr(values.py(), ErrorKind::Encode))
    }

    /// A decoder for one stream fed in chunks.
    fn stream_decoder(slf: &Bound<'_, Self>) -> stream::StreamDecoder {
        stream::StreamDecoder::create(slf.clone().unbind())
    }

    /// Writes the stream form of `values` to a binary file object as it goes; returns the count.
    /// Avro: `metadata` entries go into a new container's header; `append` writes new blocks
    /// after an existing container's last.
    #[pyo3(signature = (fp, values, /, *, sync_interval = None, metadata = None, append = false))]
    fn write_file(
        &self,
        fp: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
        sync_interval: Option<usize>,
        metadata: Option<&Bound<'_, PyAny>>,
        append: bool,
    ) -> PyResult<usize> {
        let py = fp.py();
        let avro_only = [
            ("sync_interval=", sync_interval.is_some()),
            ("metadata=", metadata.is_some()),
            ("append=True", append),
        ];
        if let Some((name, _)) = avro_only.iter().find(|(_, given)| *given) {
            if self.wire.as_avro().is_none() {
                return Err(PyTypeError::new_err(format!(
                    "{name} applies to format \"avro\" only, not {:?}",
                    self.format
                )));
            }
        }
        if append && metadata.is_some() {
            return Err(PyTypeError::new_err(
                "metadata= cannot be given with append=True: the existing header is kept",
            ));
        }
        let sync_interval = sync_interval.unwrap_or(stream::DEFAULT_SYNC_INTERVAL);
        if sync_interval == 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "sync_interval must be at least 1",
            ));
        }
        let entries = match metadata {
            Some(metadata) => user_metadata(metadata)?,
            None => Vec::new(),
        };
        let entries: Vec<(&[u8], &[u8])> = entries
            .iter()
            .map(|(key, value)| (key.as_bytes(), value.as_slice()))
            .collect();
        // Its write() would refuse the bytes, which would read as an error in the values.
        if fp.is_instance(&py.import("io")?.getattr("TextIOBase")?)? {
            return Err(PyTypeError::new_err(
                "write_file needs a file opened in binary mode (open(path, \"wb\")), \
                 not a text file",
            ));
        }
        let existing = match append {
            true => stream::existing_container(self, fp)?,
            false => None,
        };
        let target = match existing {
            Some(container) => stream::AvroTarget::Append(container),
            None => stream::AvroTarget::New(&entries),
        };
        stream::write_file(self, fp, values, sync_interval, target)
            .map_err(|e| e.into_pyerr(py, ErrorKind::Encode))
    }

    /// Iterates over the values of a stream read lazily from a binary file object.
    #[pyo3(signature = (fp, /, *, chunk_size = stream::DEFAULT_CHUNK_SIZE))]
    fn iter_file(
        slf: &Bound<'_, Self>,
        fp: &Bound<'_, PyAny>,
        chunk_size: usize,
    ) -> PyResult<stream::FileIter> {
        // Refused before anything is read: a text file would decode the bytes (and fail deep
        // inside, or hand over str chunks).
        if fp.is_instance(&fp.py().import("io")?.getattr("TextIOBase")?)? {
            return Err(PyTypeError::new_err(
                "iter_file needs a file opened in binary mode (open(path, \"rb\")), \
                 not a text file",
            ));
        }
        stream::FileIter::create(slf.clone().unbind(), fp.clone().unbind(), chunk_size)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.target)?;
        visit.call(&self.options)?;
        visit.call(&self.json_schemas)?;
        visit.call(&self.compiled)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let target = self.target.bind(py);
        let name = match target.getattr("__qualname__") {
            Ok(name) => name.to_string(),
            Err(_) => target.repr()?.to_string(),
        };
        let mut shown = format!("Codec({name}, format='{}'", self.format);
        for (key, value) in self.options.bind(py).iter() {
            let default = match key.extract::<&str>()? {
                "strict" => value.is_truthy()?,
                "errors" => value.extract::<&str>()? == "first",
                "rename" | "extensions" => value.is_none(),
                "omit_defaults" | "forbid_unknown_fields" | "array_like" => !value.is_truthy()?,
                _ => false,
            };
            if !default {
                shown.push_str(&format!(", {key}={}", value.repr()?));
            }
        }
        shown.push(')');
        Ok(shown)
    }

    /// Codecs pickle as their type, format and options, and compile again when loaded.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let rebuild = py
            .import("polycodec._polycodec")?
            .getattr("rebuild_codec")?;
        let args = (
            self.target.clone_ref(py),
            self.format,
            self.options.bind(py).copy()?,
        );
        PyTuple::new(py, [rebuild.into_any(), args.into_pyobject(py)?.into_any()])
    }
}

/// The calls the short entries in src/py/ make (and the PyO3 methods too).
impl ShortCalls for Codec {
    /// `encode_one` on a value (shared by the PyO3 method and the short entry in src/py/).
    #[inline(always)]
    fn encode_one_value<'py>(
        &self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let out = self.encode_to_bytes(py, |out| self.wire.encode_one(&self.plan, value, out))?;
        Ok(out.into_any())
    }

    /// `encode_many` on a sequence of values.
    #[inline(always)]
    fn encode_many_values<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.encode_many_to_bytes(py, values)?.into_any())
    }

    /// `decode_one` on a `bytes` object, without a writer schema.
    #[inline(always)]
    fn decode_one_bytes<'py>(
        &self,
        py: Python<'py>,
        buf: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = buf.as_bytes();
        let _pause = GcPause::for_input(py, input.len());
        self.with_raw_source(buf.as_any(), || {
            self.wire
                .decode_one(py, &self.plan, self.strict, input, None)
                .or_else(|error| {
                    self.decode_failed(py, error, || {
                        self.wire.collect_one(py, &self.plan, self.strict, input)
                    })
                })
        })
    }

    /// `decode_many` on a `bytes` object.
    #[inline(always)]
    fn decode_many_bytes<'py>(
        &self,
        py: Python<'py>,
        buf: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _pause = GcPause::new(py);
        let input = buf.as_bytes();
        self.with_raw_source(buf.as_any(), || {
            self.wire
                .decode_many(py, &self.plan, self.strict, input)
                .or_else(|error| {
                    self.decode_failed(py, error, || {
                        self.wire.collect_many(py, &self.plan, self.strict, input)
                    })
                })
        })
    }
}

impl Codec {
    /// Runs a decode of `buf`; for a plan with a `Raw` node, with `buf` (or the bytes a `Raw`
    /// given as input refers to) as what its `Raw` values may refer to instead of copying.
    #[inline(always)]
    fn with_raw_source<T>(&self, buf: &Bound<'_, PyAny>, decode: impl FnOnce() -> T) -> T {
        if !self.plan.has_raw {
            return decode();
        }
        match crate::raw::source_of(buf) {
            Some(source) => crate::raw::with_input(&source, decode),
            None => decode(),
        }
    }

    /// The exception of a failed decode: `error` itself, or with `errors="all"` and a
    /// validation error, every validation error of the input, which `collect` finds by
    /// decoding it again (the value, should the second pass succeed: user code may answer
    /// differently the second time). Only ever reached once a decode has failed, so a codec
    /// that decodes pays nothing for the option.
    #[cold]
    #[inline(never)]
    fn decode_failed<'py>(
        &self,
        py: Python<'py>,
        error: Error,
        collect: impl FnOnce() -> Option<Result<Collected<'py>, Error>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !self.all_errors || !error.is_recorded(py) {
            return Err(error.into_pyerr(py, ErrorKind::Validation));
        }
        match collect() {
            None => Err(error.into_pyerr(py, ErrorKind::Validation)),
            Some(Ok(Collected::Value(value))) => Ok(value),
            Some(Ok(Collected::Errors(errors))) => {
                Err(crate::errors::collected_to_pyerr(py, errors))
            }
            Some(Err(fatal)) => Err(fatal.into_pyerr(py, ErrorKind::Validation)),
        }
    }
}

thread_local! {
    /// The encoders' output buffer, reused from call to call on this thread (a nested encode,
    /// from user code run by an outer one, finds it taken and starts a buffer of its own).
    static OUTPUT: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The largest output buffer kept for the next encode on the thread; a larger one is freed.
const OUTPUT_KEPT: usize = 1 << 16;

impl Codec {
    /// Runs an encoder into the thread's output buffer and returns its bytes: no allocation
    /// beyond the `bytes` object once the buffer has grown to the codec's output size.
    #[inline]
    fn encode_to_bytes<'py>(
        &self,
        py: Python<'py>,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), Error>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut out =
            crate::py::output::buffer_for(OUTPUT.take(), self.size_hint.load(Ordering::Relaxed));
        let result = match encode(&mut out) {
            Ok(()) => {
                self.size_hint.store(out.len(), Ordering::Relaxed);
                crate::py::new_bytes(py, &out)
            }
            Err(e) => Err(e.into_pyerr(py, ErrorKind::Encode)),
        };
        if out.capacity() <= OUTPUT_KEPT {
            OUTPUT.set(out);
        }
        result
    }

    /// `encode_many`: as [`Self::encode_to_bytes`], except that a format that streams its output
    /// hands each finished stretch of it straight to the `bytes` object (`py::output`), so the
    /// thread's buffer holds one stretch, not the whole output.
    fn encode_many_to_bytes<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if !self.wire.streams_many() {
            return self.encode_to_bytes(py, |out| self.wire.encode_many(&self.plan, values, out));
        }
        // Sized for the longest stretch of the previous call: an item larger than the buffer
        // the thread keeps is then written without regrowing the buffer on every call.
        let mut out = crate::py::output::buffer_for(
            OUTPUT.take(),
            self.many_stretch_hint.load(Ordering::Relaxed),
        );
        let hint = self.many_hint.load(Ordering::Relaxed);
        let mut bytes = crate::py::output::BytesBuilder::new(py, hint);
        let result = self
            .wire
            .encode_many_streamed(&self.plan, values, &mut out, &mut bytes);
        let result = match result {
            Ok(()) => {
                self.many_hint
                    .store(bytes.taken() + out.len(), Ordering::Relaxed);
                self.many_stretch_hint
                    .store(bytes.longest().max(out.len()), Ordering::Relaxed);
                bytes.finish(&out)
            }
            Err(e) => Err(e.into_pyerr(py, ErrorKind::Encode)),
        };
        if out.capacity() <= OUTPUT_KEPT {
            OUTPUT.set(out);
        }
        result
    }

    /// `to_builtins` and `from_builtins` describe the JSON form, as `json_schema` does: other
    /// formats refuse them.
    fn json_form(&self, method: &str) -> PyResult<()> {
        if self.format == "json" {
            return Ok(());
        }
        Err(PyTypeError::new_err(format!(
            "{method}() works with the JSON form, and this codec's format is {:?}; use \
             Codec(type, 'json', ...) or polycodec.{method}(...) for the same type",
            self.format
        )))
    }
}

/// Recreates a pickled `Codec`.
#[pyfunction]
pub fn rebuild_codec<'py>(
    py: Python<'py>,
    r#type: Bound<'py, PyAny>,
    format: &str,
    options: Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    py.get_type::<Codec>()
        .call((r#type, format), Some(&options))
}

/// Encodes `value` as JSON by the plan spec `(nodes, root)`: the JSON Schema derivation
/// writes a field's default in the exact form the codec writes it, through the field's node.
#[pyfunction]
pub fn encode_json_spec<'py>(
    py: Python<'py>,
    spec: Bound<'py, PyAny>,
    value: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let plan = build_plan(&spec)?;
    let keys = codecs::json::keys(&plan);
    let mut writer = codecs::json::encode::JsonWriter::new(Vec::new(), &plan, &keys);
    crate::errors::output_result(|| codecs::encoder::encode_one(&plan, &value, &mut writer))
        .map_err(|e| e.into_pyerr(py, ErrorKind::Encode))?;
    Ok(PyBytes::new(py, &writer.out))
}

/// The input bytes: borrowed from immutable `bytes` and `str`, copied from mutable buffers
/// (user code such as `__post_init__` could resize them while the decoder reads).
#[inline]
fn input_bytes<'a>(buf: &'a Bound<'_, PyAny>, accepts_str: bool) -> PyResult<Cow<'a, [u8]>> {
    // Exact bytes, the common input, by one type comparison and without a call.
    if let Ok(bytes) = buf.cast_exact::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    other_input_bytes(buf, accepts_str)
}

/// [`input_bytes`] for everything but exact `bytes`: subclasses, str, bytearray, memoryview.
fn other_input_bytes<'a>(buf: &'a Bound<'_, PyAny>, accepts_str: bool) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = buf.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(text) = buf.cast::<PyString>() {
        if accepts_str {
            return match text.to_str() {
                Ok(text) => Ok(Cow::Borrowed(text.as_bytes())),
                // A lone surrogate has no UTF-8 form: the text is not JSON (RFC 8259 is
                // Unicode text, and a surrogate half is no Unicode scalar value).
                Err(err) => {
                    let py = buf.py();
                    let at = err
                        .value(py)
                        .getattr("start")
                        .and_then(|start| start.extract::<usize>())
                        .unwrap_or(0);
                    Err(Error::decode(
                        Code::JsonInvalid,
                        format!("malformed JSON: the str holds a lone surrogate at index {at}"),
                    )
                    .into_pyerr(py, ErrorKind::Decode))
                }
            };
        }
    }
    if let Some(bytes) = crate::raw::bytes_of(buf) {
        return Ok(Cow::Borrowed(bytes));
    }
    if let Ok(array) = buf.cast::<PyByteArray>() {
        return Ok(Cow::Owned(array.to_vec()));
    }
    if buf.is_instance_of::<PyMemoryView>() {
        let bytes = buf.call_method0("tobytes")?;
        return Ok(Cow::Owned(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    let accepted = if accepts_str {
        "bytes, bytearray, memoryview or str"
    } else {
        "bytes, bytearray or memoryview"
    };
    Err(PyTypeError::new_err(format!(
        "expected {accepted}, got {}",
        buf.get_type().qualname()?
    )))
}

/// The user's metadata entries for a container header: a dict of str keys (not the reserved
/// `avro.` ones) to bytes values.
fn user_metadata(metadata: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Vec<u8>)>> {
    let Ok(metadata) = metadata.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "metadata must be a dict of str keys to bytes values, not {}",
            metadata.get_type().name()?
        )));
    };
    let mut entries = Vec::with_capacity(metadata.len());
    for (key, value) in metadata.iter() {
        let Ok(key) = key.extract::<String>() else {
            return Err(PyTypeError::new_err(format!(
                "metadata keys must be str, not {}",
                key.get_type().name()?
            )));
        };
        if key.starts_with("avro.") {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "metadata key {key:?} is reserved: the Avro specification keeps keys starting \
                 with \"avro.\" for itself"
            )));
        }
        let Ok(value) = value.cast::<PyBytes>() else {
            return Err(PyTypeError::new_err(format!(
                "metadata[{key:?}] must be bytes, not {}",
                value.get_type().name()?
            )));
        };
        entries.push((key, value.as_bytes().to_vec()));
    }
    Ok(entries)
}

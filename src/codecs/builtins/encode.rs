//! The writer behind `to_builtins`: the shared encoder's walk, with each value made into the
//! Python object `json.loads` would give for the JSON codec's output (kept types aside).

use pyo3::prelude::*;
use std::cell::Cell;

use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyString};

use super::Keep;
use crate::codecs::encoder::{KeyStart, Temporal, WireWriter};
use crate::codecs::json::encode::{big_int_text, non_finite};
use crate::codecs::json::write::write_f64;
use crate::errors::{Error, Result};
use crate::plan::{Field, LiteralValue, NodeId, Plan};
use crate::py::builders::{presized_dict, ListFill};
use crate::py::fields::PlainValue;
use crate::py::{self, Obj};
use polycodec_formats::text;
use polycodec_formats::text::temporal::DateTime;

/// A container being filled.
pub enum Frame<'py> {
    /// None open: the value written next is the root.
    Root,
    /// A list allocated at the expected length, its slots set as the items come.
    List(ListFill<'py>),
    /// A dict and the key of the entry whose value comes next (`None`: the key comes next).
    Map(Bound<'py, PyDict>, Option<Obj<'py>>),
}

thread_local! {
    /// The text buffer of the last writer, reused so that a call allocates none.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A new str of the ASCII text `write` produces (the shared text forms), written into the
/// thread's scratch buffer.
pub fn ascii_str<'py>(py: Python<'py>, write: impl FnOnce(&mut Vec<u8>)) -> PyResult<Obj<'py>> {
    let mut scratch = SCRATCH.with(Cell::take);
    scratch.clear();
    write(&mut scratch);
    let text = py::new_str(py, &scratch, true);
    SCRATCH.with(|cell| cell.set(scratch));
    text
}

/// Builds the JSON form of the values the encoder walks as Python objects.
pub struct ObjectWriter<'py> {
    py: Python<'py>,
    keep: Keep,
    /// The innermost open container. The ones around it are held by the encoder's walk, as
    /// the `Open` value of each container it has begun.
    top: Frame<'py>,
    /// The finished root value.
    result: Option<Obj<'py>>,
    /// The first error met where the writer's methods cannot return one (a failed dict
    /// insertion), raised when the walk ends.
    failed: Option<PyErr>,
    /// Text written by the shared text forms (dates, UUIDs, base64) before it becomes a str.
    scratch: Vec<u8>,
}

impl<'py> ObjectWriter<'py> {
    pub fn new(py: Python<'py>, keep: Keep) -> Self {
        ObjectWriter {
            py,
            keep,
            top: Frame::Root,
            result: None,
            failed: None,
            scratch: SCRATCH.with(Cell::take),
        }
    }

    /// The root value, once the encoder has written it.
    pub fn finish(mut self) -> Result<Obj<'py>> {
        if let Some(err) = self.failed.take() {
            return Err(err.into());
        }
        Ok(self
            .result
            .take()
            .unwrap_or_else(|| self.py.None().into_bound(self.py)))
    }

    /// The dict key `key` of node `key_node` as the str its JSON form has, by the shared
    /// encoder's key rules (for a key the direct walk does not cover: not an exact str).
    pub fn dict_key(
        py: Python<'py>,
        keep: Keep,
        plan: &Plan,
        key_node: NodeId,
        key: &Obj<'py>,
        depth: usize,
    ) -> Result<Obj<'py>> {
        let mut writer = ObjectWriter::new(py, keep);
        writer.top = Frame::Map(PyDict::new(py), None);
        crate::codecs::encoder::encode_key(plan, key_node, key, &mut writer, depth)?;
        if let Some(err) = writer.failed.take() {
            return Err(err.into());
        }
        match &mut writer.top {
            Frame::Map(_, written) => written.take(),
            _ => None,
        }
        .ok_or_else(|| Error::encode("internal error: to_builtins key not written"))
    }

    #[cold]
    fn fail(&mut self, err: PyErr) {
        self.failed.get_or_insert(err);
    }

    /// Places a finished value: the next item of the innermost list, the key or value of the
    /// innermost dict's next entry, or the root.
    #[inline]
    fn emit(&mut self, value: Obj<'py>) {
        let placed = match &mut self.top {
            Frame::Map(dict, key) => match key.take() {
                Some(key) => py::dict_set(dict, &key, &value),
                None => {
                    *key = Some(value);
                    return;
                }
            },
            Frame::List(items) => items.push(value),
            Frame::Root => {
                self.result = Some(value);
                return;
            }
        };
        if let Err(err) = placed {
            self.fail(err);
        }
    }

    /// Opens `frame` inside the current container, returning the parent for the walk to hold.
    #[inline]
    fn open(&mut self, frame: Frame<'py>) -> Frame<'py> {
        std::mem::replace(&mut self.top, frame)
    }

    /// Closes the innermost container, returning it; its parent is current again.
    #[inline]
    fn close(&mut self, parent: Frame<'py>) -> Frame<'py> {
        std::mem::replace(&mut self.top, parent)
    }

    /// Whether a value of a kept type (`flag`) stays an object: not as a dict key, which the
    /// JSON form always makes a str.
    #[inline]
    fn keeps(&self, flag: bool) -> bool {
        flag && !matches!(self.top, Frame::Map(_, None))
    }

    fn text(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        self.scratch.clear();
        write(&mut self.scratch);
        // The shared text forms are ASCII.
        match py::new_str(self.py, &self.scratch, true) {
            Ok(value) => self.emit(value),
            Err(err) => self.fail(err),
        }
    }

    /// A dict key as JSON text: what the JSON writer's key quoting gives.
    fn key_text(&mut self, key: &Obj<'py>) -> Result<Obj<'py>> {
        let py = self.py;
        if key.is_instance_of::<PyString>() {
            return Ok(key.clone());
        }
        let text = if key.is_none() {
            "null".to_owned()
        } else if let Ok(flag) = key.cast::<PyBool>() {
            (if flag.is_true() { "true" } else { "false" }).to_owned()
        } else if key.is_instance_of::<PyInt>() {
            big_int_text(key)?
        } else if let Ok(float) = key.cast::<PyFloat>() {
            let mut out = Vec::new();
            write_f64(&mut out, float.value()).map_err(|_| non_finite(float.value()))?;
            String::from_utf8(out).unwrap_or_default()
        } else {
            // A key written as an array or object under `Any`: its compact JSON text.
            let dumps = py.import("json")?.getattr("dumps")?;
            let kwargs = pyo3::types::PyDict::new(py);
            kwargs.set_item("separators", (",", ":"))?;
            kwargs.set_item("ensure_ascii", false)?;
            dumps.call((key,), Some(&kwargs))?.extract::<String>()?
        };
        Ok(PyString::new(py, &text).into_any())
    }
}

impl Drop for ObjectWriter<'_> {
    fn drop(&mut self) {
        let scratch = std::mem::take(&mut self.scratch);
        SCRATCH.with(|cell| cell.set(scratch));
    }
}

impl<'py> WireWriter for ObjectWriter<'py> {
    /// The container open around the one begun.
    type Open = Frame<'py>;

    #[inline]
    fn none(&mut self) {
        self.emit(self.py.None().into_bound(self.py));
    }

    #[inline]
    fn boolean(&mut self, value: bool) {
        self.emit(PyBool::new(self.py, value).to_owned().into_any());
    }

    #[inline]
    fn int(&mut self, value: i64) {
        let Ok(number) = value.into_pyobject(self.py);
        self.emit(number.into_any());
    }

    /// An exact int is its own JSON form (ints are immutable): kept, not made again.
    #[inline]
    fn int_object(&mut self, number: i64, value: &Obj<'_>) {
        if value.is_exact_instance_of::<PyInt>() {
            self.emit(value.clone().unbind().into_bound(self.py));
        } else {
            self.int(number);
        }
    }

    /// An exact finite float is kept as it is.
    #[inline]
    fn float_object(&mut self, value: &Bound<'_, PyFloat>) -> Result<()> {
        let number = value.value();
        if !number.is_finite() {
            return Err(non_finite(number));
        }
        self.emit(value.clone().into_any().unbind().into_bound(self.py));
        Ok(())
    }

    /// `json.loads` gives a plain int.
    fn big_int(&mut self, value: &Obj<'_>) -> Result<()> {
        let exact = if value.is_exact_instance_of::<PyInt>() {
            value.clone()
        } else {
            self.py.get_type::<PyInt>().call1((value,))?
        };
        self.emit(exact.into_any().unbind().into_bound(self.py));
        Ok(())
    }

    /// JSON numbers are finite, so NaN and the infinities are refused as the JSON codec does.
    #[inline]
    fn float(&mut self, value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(non_finite(value));
        }
        self.emit(PyFloat::new(self.py, value).into_any());
        Ok(())
    }

    /// Short ASCII texts (enum and literal values, dict keys) come from the shared key cache.
    #[inline]
    fn str(&mut self, text: &str) {
        match py::dict_key_str(self.py, text.as_bytes(), text.is_ascii()) {
            Ok(value) => self.emit(value),
            Err(err) => self.fail(err),
        }
    }

    /// A str literal or enum value is the plan's own exact str (no cache lookup, no new str);
    /// an int one the plan's exact int.
    #[inline]
    fn literal_object(&mut self, literal: &LiteralValue, object: &Obj<'_>) {
        match literal {
            LiteralValue::Str(_) if object.is_exact_instance_of::<PyString>() => {
                self.emit(object.clone().unbind().into_bound(self.py))
            }
            LiteralValue::Int(_) if object.is_exact_instance_of::<PyInt>() => {
                self.emit(object.clone().unbind().into_bound(self.py))
            }
            LiteralValue::Str(text) => self.str(text),
            LiteralValue::Int(number) => self.int(*number),
            LiteralValue::Bool(flag) => self.boolean(*flag),
        }
    }

    /// A str is kept as it is (a subclass becomes a plain str, as through JSON).
    #[inline]
    fn py_str(&mut self, text: &Bound<'_, PyString>) -> Result<()> {
        if text.is_exact_instance_of::<PyString>() {
            self.emit(text.clone().into_any().unbind().into_bound(self.py));
        } else {
            self.str(py::str_utf8(text)?);
        }
        Ok(())
    }

    /// A plain str, datetime, float or int outside CPython's small-int cache is left to the
    /// general path, which keeps the object itself rather than making an equal one.
    #[inline]
    fn plain(&mut self, value: PlainValue<'_>) -> bool {
        match value {
            PlainValue::None => self.none(),
            PlainValue::Bool(flag) => self.boolean(flag),
            PlainValue::Int(number) if (-5..=256).contains(&number) => self.int(number),
            PlainValue::Int(_)
            | PlainValue::Float(_)
            | PlainValue::Ascii(_)
            | PlainValue::DateTime(_) => return false,
        }
        true
    }

    fn ascii_text(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        self.text(write);
    }

    fn datetime(&mut self, parts: &DateTime, value: &Obj<'_>) -> Result<()> {
        if self.keeps(self.keep.datetime) {
            self.emit(value.clone().unbind().into_bound(self.py));
        } else {
            self.text(|out| text::temporal::write_datetime(out, parts));
        }
        Ok(())
    }

    fn temporal(
        &mut self,
        kind: Temporal,
        value: &Obj<'_>,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        let kept = match kind {
            Temporal::Date => self.keep.date,
            Temporal::Time => self.keep.time,
            Temporal::TimeDelta => self.keep.timedelta,
        };
        if self.keeps(kept) {
            self.emit(value.clone().unbind().into_bound(self.py));
        } else {
            self.text(write);
        }
        Ok(())
    }

    fn uuid(&mut self, value: &Obj<'_>) -> Result<()> {
        if self.keeps(self.keep.uuid) {
            self.emit(value.clone().unbind().into_bound(self.py));
        } else {
            let bits = py::uuid_value(value)?;
            self.text(|out| text::uuid::write_uuid(out, bits));
        }
        Ok(())
    }

    fn decimal_value(&mut self, value: &Obj<'_>) -> Result<()> {
        let kept = if self.keeps(self.keep.decimal) {
            value.clone()
        } else {
            value.str()?.into_any()
        };
        self.emit(kept.unbind().into_bound(self.py));
        Ok(())
    }

    fn decimal(&mut self, text: &str) {
        self.str(text);
    }

    /// A Raw holds the bytes of a wire format, which the builtins form has no place for.
    fn raw(&mut self, _data: &[u8]) -> Result<()> {
        Err(Error::encode(
            "a Raw value has no builtins form: it holds encoded bytes (decode them, or encode \
             the value with encode_one)",
        ))
    }

    fn bytes(&mut self, data: &[u8], value: &Obj<'_>) -> Result<()> {
        let kept = (self.keep.bytes && value.is_exact_instance_of::<PyBytes>())
            || (self.keep.bytearray && value.is_exact_instance_of::<PyByteArray>());
        if self.keeps(kept) {
            self.emit(value.clone().unbind().into_bound(self.py));
        } else {
            self.text(|out| text::base64::encode(out, data));
        }
        Ok(())
    }

    #[inline]
    fn begin_array(&mut self, length: impl FnOnce() -> Result<usize>) -> Result<Frame<'py>> {
        let length = length()?;
        let items = ListFill::new(self.py, length)?;
        Ok(self.open(Frame::List(items)))
    }

    fn end_array(&mut self, open: Frame<'py>, _count: usize) -> Result<()> {
        match self.close(open) {
            Frame::List(items) => {
                let list = items.finish()?;
                self.emit(list.into_any());
                Ok(())
            }
            _ => Err(Error::encode(
                "internal error: unbalanced to_builtins array",
            )),
        }
    }

    /// Sized for its entries, so that filling it never resizes it.
    #[inline]
    fn begin_map(&mut self, length: usize) -> Frame<'py> {
        let dict = presized_dict(self.py, length).unwrap_or_else(|err| {
            self.fail(err);
            PyDict::new(self.py)
        });
        self.open(Frame::Map(dict, None))
    }

    fn end_map(&mut self, open: Frame<'py>, _count: usize) -> Result<()> {
        match self.close(open) {
            Frame::Map(dict, _) => {
                self.emit(dict.into_any());
                Ok(())
            }
            _ => Err(Error::encode(
                "internal error: unbalanced to_builtins object",
            )),
        }
    }

    #[inline(always)]
    fn separator(&mut self, _index: usize) {}

    #[inline(always)]
    fn key_separator(&mut self) {}

    #[inline(always)]
    fn key_start(&self) -> KeyStart {
        0
    }

    /// JSON object keys are strings: the key written is made the str JSON would quote.
    fn finish_key(&mut self, _start: KeyStart) -> Result<()> {
        let key = match &mut self.top {
            Frame::Map(_, key) => key.take(),
            _ => None,
        };
        let Some(key) = key else {
            return Ok(());
        };
        let text = self.key_text(&key)?;
        if let Frame::Map(_, slot) = &mut self.top {
            *slot = Some(text);
        }
        Ok(())
    }

    type Names = ();

    #[inline(always)]
    fn record_names(&self, _plan: &Plan, _id: NodeId) {}

    /// The wire name as the plan's interned str (the attribute name itself when the same), so
    /// no str is made and its hash is known.
    #[inline]
    fn field_name(&mut self, _names: (), _index: usize, field: &Field, _first: bool) {
        if let Frame::Map(_, slot) = &mut self.top {
            *slot = Some(field.wire_key.bind(self.py).clone().into_any());
        }
    }
}

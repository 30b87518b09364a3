//! `polycodec.Raw`: a value kept as its encoded bytes, undecoded, and written back as they are
//! (msgspec's `Raw`): a router forwards a payload it does not understand.
//!
//! A decoded `Raw` refers to the input itself when the input was an exact `bytes` (the common
//! case): it holds that object and the value's offsets, so no byte is copied and no other object
//! is made. The decoders learn which `bytes` object they read through [`with_input`], set only
//! for plans that hold a `Raw` node (`Plan::has_raw`); other input (a `bytearray`, a
//! `memoryview`, a `str`, a stream's buffer) is copied, since it may change or go away.

use std::cell::RefCell;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PySlice, PyString, PyTuple};

use crate::errors::Result;
use crate::py::Obj;

/// Encoded bytes kept as they are: a view of the decoder's input (`source[start..end]`) or
/// bytes of its own.
#[pyclass(frozen, module = "polycodec", name = "Raw")]
pub struct Raw {
    source: Py<PyBytes>,
    start: usize,
    end: usize,
}

impl Raw {
    /// The bytes.
    pub fn bytes<'a>(&'a self, py: Python<'a>) -> &'a [u8] {
        self.source
            .bind(py)
            .as_bytes()
            .get(self.start..self.end)
            .unwrap_or_default()
    }

    fn owning(source: Bound<'_, PyBytes>) -> Raw {
        let end = source.as_bytes().len();
        Raw {
            source: source.unbind(),
            start: 0,
            end,
        }
    }

    fn is_whole(&self, py: Python<'_>) -> bool {
        self.start == 0 && self.end == self.source.bind(py).as_bytes().len()
    }
}

#[pymethods]
impl Raw {
    /// `Raw(data=b"")`: `data` is bytes (kept as they are), a bytearray or memoryview (copied),
    /// a str (its UTF-8), or another Raw.
    #[new]
    #[pyo3(signature = (data = None, /))]
    fn new(py: Python<'_>, data: Option<&Bound<'_, PyAny>>) -> PyResult<Raw> {
        let Some(data) = data else {
            return Ok(Raw::owning(PyBytes::new(py, b"")));
        };
        if let Ok(bytes) = data.cast_exact::<PyBytes>() {
            return Ok(Raw::owning(bytes.clone()));
        }
        if let Ok(raw) = data.cast::<Raw>() {
            let raw = raw.get();
            return Ok(Raw {
                source: raw.source.clone_ref(py),
                start: raw.start,
                end: raw.end,
            });
        }
        if let Ok(text) = data.cast::<PyString>() {
            return Ok(Raw::owning(PyBytes::new(py, text.to_str()?.as_bytes())));
        }
        if data.is_instance_of::<PyBytes>()
            || data.is_instance_of::<PyByteArray>()
            || data.is_instance_of::<PyMemoryView>()
        {
            let copied = py
                .get_type::<PyBytes>()
                .call1((data,))?
                .cast_into::<PyBytes>()?;
            return Ok(Raw::owning(copied));
        }
        Err(PyTypeError::new_err(format!(
            "Raw() takes bytes, bytearray, memoryview, str or Raw, not {}",
            data.get_type().qualname()?
        )))
    }

    /// The bytes, as a `bytes` object (the one held when the Raw spans it whole).
    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        if self.is_whole(py) {
            return self.source.bind(py).clone();
        }
        PyBytes::new(py, self.bytes(py))
    }

    fn __len__(&self) -> usize {
        self.end - self.start
    }

    /// Equal to another Raw with the same bytes.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        match other.cast::<Raw>() {
            Ok(other) => Ok(
                pyo3::types::PyBool::new(py, self.bytes(py) == other.get().bytes(py))
                    .to_owned()
                    .into_any()
                    .unbind(),
            ),
            Err(_) => Ok(py.NotImplemented()),
        }
    }

    /// A memoryview of the bytes, without a copy.
    fn view<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let whole = PyMemoryView::from(self.source.bind(py).as_any())?;
        whole.get_item(PySlice::new(py, self.start as isize, self.end as isize, 1))
    }

    /// A Raw with bytes of its own: keeps the value without keeping the whole input it was
    /// decoded from alive.
    fn copy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let raw = slf.get();
        if raw.is_whole(py) {
            return Ok(slf.clone());
        }
        Bound::new(py, Raw::owning(PyBytes::new(py, raw.bytes(py))))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        const SHOWN: usize = 60;
        let bytes = self.bytes(py);
        let head = PyBytes::new(py, &bytes[..bytes.len().min(SHOWN)]).repr()?;
        Ok(if bytes.len() > SHOWN {
            format!("Raw({head}... ({} bytes))", bytes.len())
        } else {
            format!("Raw({head})")
        })
    }

    /// Pickled as `Raw(bytes)`: the bytes only, not the input they were read from.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let bytes = slf.get().__bytes__(py);
        PyTuple::new(
            py,
            [
                slf.get_type().into_any(),
                PyTuple::new(py, [bytes])?.into_any(),
            ],
        )
    }
}

thread_local! {
    /// The `bytes` object the running decode reads, while a plan with a `Raw` node decodes it.
    static INPUT: RefCell<Option<Py<PyBytes>>> = const { RefCell::new(None) };
}

/// Runs `decode` with `input` as the object a decoded `Raw` may refer to (restored after, even
/// when `decode` unwinds, so a decode run by user code inside another keeps the outer one's).
pub fn with_input<T>(input: &Bound<'_, PyBytes>, decode: impl FnOnce() -> T) -> T {
    /// Puts the outer decode's input back when dropped.
    struct Restore(Option<Py<PyBytes>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            INPUT.with(|cell| *cell.borrow_mut() = outer);
        }
    }
    let _restore = Restore(INPUT.with(|cell| cell.replace(Some(input.clone().unbind()))));
    decode()
}

/// A `Raw` of `bytes`, a part of the decoder's input: a view of the input object when it is
/// the one [`with_input`] names (found by address, so any other slice is copied).
pub fn decoded<'py>(py: Python<'py>, bytes: &[u8]) -> Result<Obj<'py>> {
    let view = INPUT.with(|cell| {
        let input = cell.borrow();
        let source = input.as_ref()?;
        let whole = source.bind(py).as_bytes();
        let base = whole.as_ptr() as usize;
        let at = bytes.as_ptr() as usize;
        (at >= base && at + bytes.len() <= base + whole.len()).then(|| Raw {
            source: source.clone_ref(py),
            start: at - base,
            end: at - base + bytes.len(),
        })
    });
    let raw = match view {
        Some(raw) => raw,
        None => Raw::owning(PyBytes::new(py, bytes)),
    };
    Ok(Bound::new(py, raw)?.into_any())
}

/// The `bytes` object a decode of `buf` reads, when a `Raw` may refer to it: `buf` itself
/// when it is exact `bytes`, or the one a `Raw` given as input refers to.
pub fn source_of<'py>(buf: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
    if let Ok(bytes) = buf.cast_exact::<PyBytes>() {
        return Some(bytes.clone());
    }
    let raw = buf.cast::<Raw>().ok()?;
    Some(raw.get().source.bind(buf.py()).clone())
}

/// The bytes of `value` when it is a `Raw`.
#[inline]
pub fn bytes_of<'a>(value: &'a Bound<'_, PyAny>) -> Option<&'a [u8]> {
    let raw = value.cast::<Raw>().ok()?;
    Some(raw.get().bytes(value.py()))
}

//! A str's `state` bits, read without a call: is it compact ASCII (its characters are its UTF-8
//! bytes, stored right after the `PyASCIIObject` header)?
//!
//! The bits are a C bit-field in `PyASCIIObject.state` (`Include/cpython/unicodeobject.h`):
//! `interned:2, kind:3, compact:1, ascii:1`, then `ready:1` on 3.11 and `statically_allocated:1`
//! on 3.12 and later, the same order in the 3.11, 3.13, 3.14 and 3.15 headers. GCC and Clang
//! allocate bit-fields from the least significant bit on little-endian targets, so `compact` is
//! bit 5 and `ascii` bit 6 of the 32-bit word. From 3.14 on pyo3-ffi no longer reads these bits
//! (CPython makes `PyUnicode_DATA` an exported function there), so the word is read here for
//! every version alike. A free-threaded build makes `interned` a whole byte, which moves the
//! other bits: the build refuses free-threaded interpreters (`build.rs`). Big-endian targets
//! take the portable path.

use pyo3::ffi;
use pyo3::prelude::*;

use super::{layout_in_use, Layout};

/// The bits of `PyASCIIObject.state` this module reads.
const COMPACT_BIT: u32 = 1 << 5;
const ASCII_BIT: u32 = 1 << 6;

/// The UTF-8 bytes of `text` when it is a compact ASCII str (of any str type), else `None`.
///
/// # Safety
/// `text` is a live str (`PyUnicode_Check` holds); the returned bytes live as long as it does.
#[inline(always)]
pub unsafe fn compact_ascii<'a>(text: *mut ffi::PyObject) -> Option<&'a [u8]> {
    if layout_in_use(Layout::StrState) {
        // SAFETY: a live str starts with a PyASCIIObject, whose state word is always set.
        let state = unsafe { (*text.cast::<ffi::PyASCIIObject>()).state };
        if state & (COMPACT_BIT | ASCII_BIT) != COMPACT_BIT | ASCII_BIT {
            return None;
        }
        // SAFETY: a compact ASCII str keeps exactly `length` ASCII bytes (and a NUL) right
        // after its PyASCIIObject header, for as long as the str lives.
        return Some(unsafe {
            std::slice::from_raw_parts(
                fresh_ascii_buffer(text),
                (*text.cast::<ffi::PyASCIIObject>()).length as usize,
            )
        });
    }
    // SAFETY: the caller's live str; `text` and `&mut size` are valid for the call.
    unsafe { portable_ascii(text) }
}

/// Through the public API: a str whose UTF-8 form is as long as it is in code points is ASCII.
/// (Its compactness does not matter here: every caller only needs the bytes.)
///
/// # Safety
/// As [`compact_ascii`].
#[cold]
unsafe fn portable_ascii<'a>(text: *mut ffi::PyObject) -> Option<&'a [u8]> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: a live str; CPython caches the UTF-8 form on the str, so it lives as long.
    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(text, &mut size) };
    if data.is_null() {
        // SAFETY: the error a lone surrogate raises is dropped: such a str is not ASCII.
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    // SAFETY: the call just returned it, so `text` is a live str.
    if size != unsafe { ffi::PyUnicode_GetLength(text) } {
        return None;
    }
    // SAFETY: `size` bytes at `data`, owned by the str.
    Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) })
}

/// Where a compact ASCII str's characters are: right after its `PyASCIIObject` header (for a
/// fresh `PyUnicode_New(n, 127)` too, whose buffer may then be written before it is shared).
///
/// # Safety
/// `text` is a live compact ASCII str.
#[inline(always)]
pub unsafe fn fresh_ascii_buffer(text: *mut ffi::PyObject) -> *mut u8 {
    // SAFETY: the header is followed by the character buffer in the same allocation.
    unsafe { text.cast::<ffi::PyASCIIObject>().add(1).cast::<u8>() }
}

/// Compares what the state bits say with what the interpreter says, for an ASCII str, a
/// non-ASCII one and a str subclass instance (not compact); `Err` says what differed.
pub fn agrees(py: Python<'_>) -> Result<(), String> {
    let ascii = pyo3::types::PyString::new(py, "polycodec");
    let wide = pyo3::types::PyString::new(py, "polycod\u{e9}c");
    let subclass = py
        .eval(c"type('S', (str,), {})('polycodec')", None, None)
        .map_err(|err| err.to_string())?;
    let read = |text: &Bound<'_, PyAny>| {
        // SAFETY: a live str's first word of state.
        let state = unsafe { (*text.as_ptr().cast::<ffi::PyASCIIObject>()).state };
        (state & COMPACT_BIT != 0, state & ASCII_BIT != 0)
    };
    for (what, text, expected) in [
        ("an ASCII str", ascii.as_any(), (true, true)),
        ("a non-ASCII str", wide.as_any(), (true, false)),
        ("a str subclass's ASCII instance", &subclass, (false, true)),
    ] {
        if read(text) != expected {
            return Err(format!(
                "{what} reads as (compact, ascii) = {:?}, not {expected:?}",
                read(text)
            ));
        }
    }
    // SAFETY: `ascii` is a live compact ASCII str, as just checked.
    let here = unsafe { fresh_ascii_buffer(ascii.as_ptr()) }.cast_const();
    // SAFETY: as above.
    match unsafe { portable_ascii(ascii.as_ptr()) } {
        Some(bytes) if bytes == b"polycodec" && std::ptr::eq(bytes.as_ptr(), here) => Ok(()),
        _ => Err("an ASCII str's characters are not right after its header".to_owned()),
    }
}

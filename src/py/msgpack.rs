//! MessagePack's fast path for dataclass fields: a field whose value is a plain scalar (an
//! exact str, int, float, bool or None) is written straight from the instance dict's borrowed
//! reference, with no reference count traffic. Nothing here runs Python code while it holds a
//! borrowed reference, so the dict cannot change under it; every other value is handed back as
//! an owned reference for the general encoder.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use super::Obj;
use crate::formats::msgpack::write;

/// Which plain values a field's plan node lets the fast path write itself.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Plain {
    Str,
    Int,
    /// A float field: exact floats, and exact ints (written as ints, as the encoder does).
    Float,
    Bool,
}

/// A plain kind, optionally also accepting None (`Optional[...]`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PlainRule {
    pub kind: Plain,
    pub nullable: bool,
}

/// What [`FieldCursor::next`] did with the next dict entry.
pub enum Next<'py> {
    /// The value was written to the output.
    Written,
    /// The entry is the field, but its value needs the general encoder.
    Value(Obj<'py>),
    /// The next entry is not this field (or the dict has ended): look the field up instead.
    Elsewhere,
}

/// Walks a dataclass instance `__dict__` in insertion order (the order `__init__` set the
/// fields in).
pub struct FieldCursor<'py> {
    dict: Bound<'py, PyDict>,
    position: ffi::Py_ssize_t,
}

impl<'py> FieldCursor<'py> {
    pub fn new(dict: Bound<'py, PyDict>) -> Self {
        FieldCursor { dict, position: 0 }
    }

    pub fn dict(&self) -> &Bound<'py, PyDict> {
        &self.dict
    }

    /// Takes the next entry if its key is `name` (the same interned object): a plain value that
    /// `rule` allows is written to `out`, anything else is returned.
    #[inline]
    pub fn next(
        &mut self,
        name: &Bound<'py, PyString>,
        rule: Option<PlainRule>,
        out: &mut Vec<u8>,
    ) -> Next<'py> {
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: the dict is live; PyDict_Next bounds-checks the position against the current
        // size and returns borrowed references.
        let found = unsafe {
            ffi::PyDict_Next(self.dict.as_ptr(), &mut self.position, &mut key, &mut value)
        };
        if found == 0 || key != name.as_ptr() {
            return Next::Elsewhere;
        }
        if let Some(rule) = rule {
            // SAFETY: `value` is a live borrowed reference; write_plain only reads it and runs
            // no Python code, so the dict (which keeps it alive) cannot change meanwhile.
            if unsafe { write_plain(value, rule, out) } {
                return Next::Written;
            }
        }
        // SAFETY: a borrowed reference from the dict, increfed at once.
        Next::Value(unsafe { Bound::from_borrowed_ptr(self.dict.py(), value) })
    }
}

/// Writes `value` when it is a plain value `rule` allows; false (and nothing written) otherwise.
///
/// # Safety
/// `value` must be a live object for the duration of the call.
#[inline]
unsafe fn write_plain(value: *mut ffi::PyObject, rule: PlainRule, out: &mut Vec<u8>) -> bool {
    if rule.nullable && value == ffi::Py_None() {
        write::write_nil(out);
        return true;
    }
    match rule.kind {
        Plain::Str => {
            if ffi::PyUnicode_CheckExact(value) != 0 && ffi::PyUnicode_IS_COMPACT_ASCII(value) != 0
            {
                // A compact ASCII str stores exactly `length` ASCII bytes at PyUnicode_DATA.
                let bytes = std::slice::from_raw_parts(
                    ffi::PyUnicode_DATA(value) as *const u8,
                    ffi::PyUnicode_GET_LENGTH(value) as usize,
                );
                write::write_str(out, std::str::from_utf8_unchecked(bytes));
                return true;
            }
            false
        }
        Plain::Int => write_exact_int(value, out),
        Plain::Float => {
            if ffi::PyFloat_CheckExact(value) != 0 {
                write::write_f64(out, ffi::PyFloat_AS_DOUBLE(value));
                return true;
            }
            write_exact_int(value, out)
        }
        Plain::Bool => {
            if value == ffi::Py_True() {
                write::write_bool(out, true);
                true
            } else if value == ffi::Py_False() {
                write::write_bool(out, false);
                true
            } else {
                false
            }
        }
    }
}

/// An exact int that fits in i64 (for an exact int, CPython's conversion calls no Python code).
///
/// # Safety
/// `value` must be a live object.
#[inline]
unsafe fn write_exact_int(value: *mut ffi::PyObject, out: &mut Vec<u8>) -> bool {
    if ffi::PyLong_CheckExact(value) == 0 {
        return false;
    }
    let mut overflow = 0;
    let number = ffi::PyLong_AsLongLongAndOverflow(value, &mut overflow);
    if overflow != 0 {
        return false;
    }
    write::write_i64(out, number);
    true
}

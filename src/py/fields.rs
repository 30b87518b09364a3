//! The encoders' fast path for dataclass fields: a field whose value is a plain scalar (an exact
//! str, int, float, bool or None) is handed to the format's writer straight from the instance
//! dict's borrowed reference, with no reference count traffic. The writer is plain Rust that runs
//! no Python code while it holds the borrowed value, so the dict cannot change under it; every
//! other value is handed back as an owned reference for the general encoder.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use super::Obj;
use crate::plan::{Plain, PlainRule};

/// A plain value, borrowed from the instance dict for the duration of one write.
#[derive(Clone, Copy)]
pub enum PlainValue<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// An ASCII str's text.
    Ascii(&'a str),
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

    /// Takes the next entry if its key is `name` (the same interned object). A plain value that
    /// `rule` allows is passed to `write`, which returns false when it would rather leave the
    /// value to the general encoder (JSON and a NaN, say); anything else is returned.
    #[inline]
    pub fn next(
        &mut self,
        name: &Bound<'py, PyString>,
        rule: Option<PlainRule>,
        write: impl FnOnce(PlainValue<'_>) -> bool,
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
            // SAFETY: `value` is a live borrowed reference; `write` is Rust code that runs no
            // Python code, so the dict (which keeps the value alive) cannot change meanwhile.
            if let Some(plain) = unsafe { plain_value(value, rule) } {
                if write(plain) {
                    return Next::Written;
                }
            }
        }
        // SAFETY: a borrowed reference from the dict, increfed at once.
        Next::Value(unsafe { Bound::from_borrowed_ptr(self.dict.py(), value) })
    }
}

/// `value` as a plain value when `rule` allows it.
///
/// # Safety
/// `value` must be a live object for as long as the returned value is used.
#[inline]
unsafe fn plain_value<'a>(value: *mut ffi::PyObject, rule: PlainRule) -> Option<PlainValue<'a>> {
    if rule.nullable && value == ffi::Py_None() {
        return Some(PlainValue::None);
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
                return Some(PlainValue::Ascii(std::str::from_utf8_unchecked(bytes)));
            }
            None
        }
        Plain::Int => exact_int(value),
        Plain::Float => {
            if ffi::PyFloat_CheckExact(value) != 0 {
                return Some(PlainValue::Float(ffi::PyFloat_AS_DOUBLE(value)));
            }
            exact_int(value)
        }
        Plain::Bool => {
            if value == ffi::Py_True() {
                Some(PlainValue::Bool(true))
            } else if value == ffi::Py_False() {
                Some(PlainValue::Bool(false))
            } else {
                None
            }
        }
    }
}

/// An exact int that fits in i64 (for an exact int, CPython's conversion calls no Python code).
///
/// # Safety
/// `value` must be a live object.
#[inline]
unsafe fn exact_int<'a>(value: *mut ffi::PyObject) -> Option<PlainValue<'a>> {
    if ffi::PyLong_CheckExact(value) == 0 {
        return None;
    }
    let mut overflow = 0;
    let number = ffi::PyLong_AsLongLongAndOverflow(value, &mut overflow);
    if overflow != 0 {
        return None;
    }
    Some(PlainValue::Int(number))
}

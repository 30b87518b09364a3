//! Whether an object is already in its JSON form: exact dicts with exact str keys, lists,
//! exact strs and ints, bools, `None` and finite floats, at most [`MAX_DEPTH`] levels deep.
//! `from_builtins` returns such a value as itself where it reads `Any` (reading it would make
//! an equal copy), and reads any other value into new containers or refuses it.
//!
//! The walk reads every value once and is the whole cost of such a call, so it is a loop over
//! object pointers: a value's type is compared with the exact type objects, the scalars that
//! need nothing more (str, int, bool, `None`) are decided in the loop without a call, a list's
//! items are read from its item array, and a dict whose table holds only exact str keys (the
//! room's `dict_entries` layout: CPython keeps a `DICT_KEYS_UNICODE` table only while that is
//! true) has only its values looked at. No Python code runs during the walk (it takes no
//! reference and calls nothing that could run any), so nothing can change a container while
//! its items are read.

use pyo3::ffi;
use pyo3::prelude::*;
use std::ptr::addr_of_mut;

use super::cpython;
use crate::depth::{nested, MAX_DEPTH};

/// Whether `value`, at nesting level `depth`, is already in its JSON form (see the module).
pub fn is_json_value(value: &Bound<'_, PyAny>, depth: usize) -> bool {
    // SAFETY: a live object under the GIL (the `Bound`); the walk runs no Python code.
    unsafe { value_is_json(value.as_ptr(), depth) }
}

/// Whether `item` is a str, an int, a bool or `None`: in its JSON form with nothing more to
/// look at.
///
/// # Safety
/// `item` is a live object and the GIL is held.
#[inline(always)]
unsafe fn is_plain_scalar(item: *mut ffi::PyObject) -> bool {
    // SAFETY: the caller's live object; only the static type objects' addresses are taken.
    unsafe {
        let tp = ffi::Py_TYPE(item);
        tp == addr_of_mut!(ffi::PyUnicode_Type)
            || tp == addr_of_mut!(ffi::PyLong_Type)
            || tp == addr_of_mut!(ffi::PyBool_Type)
            || item == ffi::Py_None()
    }
}

/// [`is_json_value`] on a pointer.
///
/// # Safety
/// `value` is a live object, the GIL is held, and no Python code runs during the walk.
unsafe fn value_is_json(value: *mut ffi::PyObject, depth: usize) -> bool {
    // SAFETY: the caller's live object; a float's value and a container's items are read
    // only once its exact type is known.
    unsafe {
        if is_plain_scalar(value) {
            return true;
        }
        let tp = ffi::Py_TYPE(value);
        if tp == addr_of_mut!(ffi::PyFloat_Type) {
            return ffi::PyFloat_AS_DOUBLE(value).is_finite();
        }
        if depth >= MAX_DEPTH {
            return false;
        }
        if tp == addr_of_mut!(ffi::PyList_Type) {
            return nested(depth, || list_is_json(value, depth + 1));
        }
        if tp == addr_of_mut!(ffi::PyDict_Type) {
            return nested(depth, || dict_is_json(value, depth + 1));
        }
        false
    }
}

/// Whether `item`, one level down, is in its JSON form: a plain scalar without a call.
///
/// # Safety
/// As [`value_is_json`].
#[inline(always)]
unsafe fn item_is_json(item: *mut ffi::PyObject, depth: usize) -> bool {
    // SAFETY: the caller's live object, under the GIL, no Python code running.
    unsafe { is_plain_scalar(item) || value_is_json(item, depth) }
}

/// Whether every item of the exact list `list` is in its JSON form at level `depth`.
///
/// # Safety
/// `list` is a live exact list, the GIL is held, and no Python code runs during the walk (so
/// its size and item array stay as read).
unsafe fn list_is_json(list: *mut ffi::PyObject, depth: usize) -> bool {
    // SAFETY: the list's first `size` items are live references it holds.
    unsafe {
        let size = ffi::PyList_GET_SIZE(list) as usize;
        let items = (*list.cast::<ffi::PyListObject>()).ob_item;
        for index in 0..size {
            if !item_is_json(*items.add(index), depth) {
                return false;
            }
        }
        true
    }
}

/// Whether every key of the exact dict `dict` is an exact str and every value is in its JSON
/// form at level `depth`.
///
/// # Safety
/// `dict` is a live exact dict, the GIL is held, and no Python code runs during the walk.
unsafe fn dict_is_json(dict: *mut ffi::PyObject, depth: usize) -> bool {
    // SAFETY: the caller's live exact dict; its table's entries below the count are read, a
    // NULL value (a deleted entry) passed over; `PyDict_Next` otherwise.
    unsafe {
        if let Some((entries, count)) = cpython::str_keyed_entries(dict) {
            for index in 0..count {
                let [_, value] = *entries.add(index);
                if !value.is_null() && !item_is_json(value, depth) {
                    return false;
                }
            }
            return true;
        }
        let mut position: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        while ffi::PyDict_Next(dict, &mut position, &mut key, &mut value) != 0 {
            if ffi::Py_TYPE(key) != addr_of_mut!(ffi::PyUnicode_Type) || !item_is_json(value, depth)
            {
                return false;
            }
        }
        true
    }
}

//! CPython helpers for the pickle format.

use pyo3::ffi;

use super::Obj;

/// The object's reference count. The pickle encoder memoizes only objects that may be met
/// again in the same pickle, which an object with a single reference (its container's) cannot.
#[inline]
pub fn reference_count(value: &Obj<'_>) -> isize {
    // SAFETY: `value` is a live object for the duration of the borrow; this only reads its
    // reference count field.
    unsafe { ffi::Py_REFCNT(value.as_ptr()) }
}

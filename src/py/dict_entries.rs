//! A dict's next entry read straight from CPython 3.11's table, for the walks that read every
//! entry of many small dicts (`from_builtins`): `PyDict_Next` is a call and about sixty
//! instructions per entry (split tables, bounds, the key's hash), where a combined table
//! (`DICT_KEYS_GENERAL`, what `_PyDict_NewPresized` makes, or `DICT_KEYS_UNICODE`, a dict built
//! key by key from exact str keys) takes a few loads.
//!
//! The layout is private to CPython 3.11 (3.12 changed it), so this is compiled only for 3.11;
//! there, a split table (an instance `__dict__`) takes `PyDict_Next`, and so
//! does every other interpreter. The table is read again at every step, as `PyDict_Next` does,
//! so a walk stays in bounds even if the dict changed in between.

use pyo3::ffi;

/// The next entry at or after `position` in `dict`'s table as borrowed pointers (key, value),
/// `position` moved past it, as `PyDict_Next` gives it; `Some(None)` at the end; `None` when
/// the dict's table is not one this reads (the caller then calls `PyDict_Next`).
///
/// # Safety
/// `dict` is a live dict (or subclass) and the GIL is held.
#[cfg(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy)))]
#[inline(always)]
#[allow(clippy::type_complexity)]
pub unsafe fn next_unicode_entry(
    dict: *mut ffi::PyObject,
    position: &mut ffi::Py_ssize_t,
) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>> {
    use crate::py::dict_layout::{
        entries, DictObject, GeneralEntry, UnicodeEntry, DICT_KEYS_GENERAL, DICT_KEYS_UNICODE,
    };

    /// The next entry of a table of `count` entries of type `E` at or after `position`.
    #[inline(always)]
    unsafe fn scan<E>(
        entries: *const E,
        count: ffi::Py_ssize_t,
        position: &mut ffi::Py_ssize_t,
        parts: impl Fn(&E) -> (*mut ffi::PyObject, *mut ffi::PyObject),
    ) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        let mut at = *position;
        if at < 0 {
            return None;
        }
        while at < count {
            // SAFETY: `at` is below the table's count of entries in use.
            let (key, value) = parts(unsafe { &*entries.offset(at) });
            at += 1;
            if !value.is_null() {
                *position = at;
                return Some((key, value));
            }
        }
        // At the end `position` stays as it was, as with `PyDict_Next`.
        None
    }

    let dict = dict as *const DictObject;
    // SAFETY: `dict` is a live dict (the caller's contract), whose head has this layout on
    // 3.11; its keys object is live while the dict is; the entries follow the index table
    // (`DK_ENTRIES`), `dk_nentries` of them in use, each read only below that count.
    unsafe {
        if !(*dict).ma_values.is_null() {
            return None;
        }
        let keys = (*dict).ma_keys;
        let first = entries(keys);
        let count = (*keys).dk_nentries;
        match (*keys).dk_kind {
            DICT_KEYS_GENERAL => Some(scan(
                first as *const GeneralEntry,
                count,
                position,
                |entry| (entry.me_key, entry.me_value),
            )),
            DICT_KEYS_UNICODE => Some(scan(
                first as *const UnicodeEntry,
                count,
                position,
                |entry| (entry.me_key, entry.me_value),
            )),
            _ => None,
        }
    }
}

/// Never reads: this interpreter's dict layout is not known (see the module's doc).
///
/// # Safety
/// None needed; kept `unsafe` to match the 3.11 version.
#[cfg(not(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy))))]
#[inline(always)]
#[allow(clippy::type_complexity)]
pub unsafe fn next_unicode_entry(
    _dict: *mut ffi::PyObject,
    _position: &mut ffi::Py_ssize_t,
) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>> {
    None
}

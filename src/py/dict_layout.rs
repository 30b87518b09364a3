//! CPython 3.11's private dict layout, declared once for the three fast paths that read it:
//! [`crate::py::dict_entries`] (a dict's entries without `PyDict_Next`),
//! [`crate::py::dict_template`] (a record's dict copied from a template and filled by
//! position) and [`crate::py::inline_values`] (a class's shared keys). 3.12 changed this layout,
//! so the module exists only for 3.11 builds, and each user keeps its portable path for every
//! other interpreter.

use pyo3::ffi;

/// The head of `PyDictObject` (`Include/cpython/dictobject.h`).
#[repr(C)]
pub struct DictObject {
    pub ob_base: ffi::PyObject,
    pub ma_used: ffi::Py_ssize_t,
    pub ma_version_tag: u64,
    pub ma_keys: *mut DictKeysHead,
    /// Non-null only for a split table (an instance `__dict__` sharing its class's keys).
    pub ma_values: *mut ffi::PyObject,
}

/// The head of `PyDictKeysObject` (`Include/internal/pycore_dict.h`): the index table of
/// `1 << dk_log2_index_bytes` bytes follows it, then the entries.
#[repr(C)]
pub struct DictKeysHead {
    pub dk_refcnt: ffi::Py_ssize_t,
    pub dk_log2_size: u8,
    pub dk_log2_index_bytes: u8,
    pub dk_kind: u8,
    pub dk_version: u32,
    pub dk_usable: ffi::Py_ssize_t,
    pub dk_nentries: ffi::Py_ssize_t,
}

/// `PyDictUnicodeEntry`: an entry of a `DICT_KEYS_UNICODE` table.
#[repr(C)]
pub struct UnicodeEntry {
    pub me_key: *mut ffi::PyObject,
    pub me_value: *mut ffi::PyObject,
}

/// `PyDictKeyEntry`: an entry of a `DICT_KEYS_GENERAL` table.
#[repr(C)]
pub struct GeneralEntry {
    pub me_hash: ffi::Py_hash_t,
    pub me_key: *mut ffi::PyObject,
    pub me_value: *mut ffi::PyObject,
}

/// `DICT_KEYS_GENERAL`: a combined table of any keys, entries with their hashes (what
/// `_PyDict_NewPresized` makes, whatever the keys).
pub const DICT_KEYS_GENERAL: u8 = 0;
/// `DICT_KEYS_UNICODE`: a combined table of exact str keys, entries without hashes.
pub const DICT_KEYS_UNICODE: u8 = 1;

/// The first entry of `keys` (`DK_ENTRIES`), to be cast to the entry type of its kind.
///
/// # Safety
/// `keys` is a live keys object.
#[inline(always)]
pub unsafe fn entries(keys: *const DictKeysHead) -> *mut u8 {
    // SAFETY: the entries follow the head and the index table inside the same allocation.
    unsafe {
        (keys as *mut u8)
            .add(std::mem::size_of::<DictKeysHead>() + (1usize << (*keys).dk_log2_index_bytes))
    }
}

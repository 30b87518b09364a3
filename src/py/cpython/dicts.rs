//! CPython's dict layout, the same in the 3.11, 3.13, 3.14 and 3.15 headers (with the GIL:
//! a free-threaded build adds a lock to the keys object, and is refused by `src/lib.rs`), and
//! the two fast paths that read it: a dict's next entry without `PyDict_Next`
//! ([`next_entry`]), and a record's dict copied from a template and filled by position
//! ([`DictTemplate`]).
//!
//! **Entries.** `from_builtins` reads every entry of many small dicts: `PyDict_Next` is a call
//! and about sixty instructions per entry (split tables, bounds, the key's hash), where a
//! combined table (`DICT_KEYS_GENERAL`, what `_PyDict_NewPresized` makes, or
//! `DICT_KEYS_UNICODE`, a dict built key by key from exact str keys) takes a few loads. A split
//! table (an instance `__dict__`) takes `PyDict_Next`. The table is read again at every step, as
//! `PyDict_Next` does, so a walk stays in bounds even if the dict changed in between.
//!
//! **Templates.** `to_builtins`'s record dicts: one dict per record row, holding the record's
//! keys (in the order its dict is written) with `None` for every value, is copied with
//! `PyDict_Copy`, and each field's converted value then replaces its `None` in the copy's entry
//! table, by position. Filling an empty dict with `PyDict_SetItem` costs a hash table lookup,
//! an insertion and (for small dicts) a first table allocation per key, about 170 instructions
//! each; the copy is one allocation and a `memcpy` of the template's table (`PyDict_Copy` of an
//! exact, combined, fully used dict clones its keys object in every known version), and a value
//! then costs one store. The dicts are the same: same keys (the template's own interned strs),
//! same order, same table. Every template is checked when it is made (an exact dict, a combined
//! table of str keys holding exactly the keys given, in order) and every copy before it is
//! filled (the same table size and entry count). The copy is tracked by the garbage collector
//! as `PyDict_Copy` leaves it (on 3.11 and 3.13 a dict of strs and `None` is not tracked, and is
//! tracked once a container is stored, as `PyDict_SetItem` would; from 3.14 on every dict is
//! tracked from its creation): every entry holds a valid reference at every moment of the
//! filling, so a collection meanwhile traverses it safely.
//!
//! `to_builtins`'s untyped dicts are copied the same way from the dict they convert
//! ([`copy_of`]: `PyDict_Copy` of a full, combined table of exact str keys), and only the
//! values that are not their own JSON form (containers) replaced by position.
//!
//! Both are checked against the running interpreter when the module loads (`super::probe`).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::py::Obj;

/// The head of `PyDictObject` (`Include/cpython/dictobject.h`; 3.11's `ma_version_tag` is
/// `_ma_watcher_tag` from 3.14 on, the same word).
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

/// The next entry at or after `position` in `dict`'s table as borrowed pointers (key, value),
/// `position` moved past it, as `PyDict_Next` gives it; `Some(None)` at the end; `None` when
/// the dict's table is not one this reads (the caller then calls `PyDict_Next`).
///
/// # Safety
/// `dict` is a live dict (or subclass) and the GIL is held.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub unsafe fn next_entry(
    dict: *mut ffi::PyObject,
    position: &mut ffi::Py_ssize_t,
) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>> {
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
    // SAFETY: `dict` is a live dict (the caller's contract), whose head has this layout in
    // every known family; its keys object is live while the dict is; the entries follow the index table
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

/// `dict`'s entries as (key, value) pointer pairs and their count (`dk_nentries`; a deleted
/// entry's value is NULL), when its table is a combined one of exact str keys
/// (`DICT_KEYS_UNICODE`: CPython keeps that kind only while every key is an exact str);
/// `None` for any other table.
///
/// # Safety
/// `dict` is a live exact dict and the GIL is held; the entries are read only while no Python
/// code runs (nothing may change the dict meanwhile).
#[inline(always)]
pub unsafe fn str_keyed_entries(
    dict: *mut ffi::PyObject,
) -> Option<(*const [*mut ffi::PyObject; 2], usize)> {
    // SAFETY: the caller's live dict, whose head and keys object have this layout in every
    // known family; a unicode entry is two pointers (key, value), `#[repr(C)]`.
    unsafe {
        let (keys, values) = table(dict);
        if keys.is_null() || !values.is_null() || (*keys).dk_kind != DICT_KEYS_UNICODE {
            return None;
        }
        let first = entries(keys) as *const [*mut ffi::PyObject; 2];
        Some((first, (*keys).dk_nentries as usize))
    }
}

/// A record's dict with `None` for every value.
pub struct DictTemplate {
    dict: Py<PyDict>,
    /// The number of keys.
    len: usize,
    /// The table's size (`dk_log2_size`), which a copy keeps.
    log2_size: u8,
    /// The byte offset of the first entry from the start of the table.
    entries: usize,
}

/// The table of a live dict.
///
/// # Safety
/// `dict` must be a live exact dict.
#[inline(always)]
unsafe fn table(dict: *mut ffi::PyObject) -> (*mut DictKeysHead, *mut ffi::PyObject) {
    let dict = dict.cast::<DictObject>();
    ((*dict).ma_keys, (*dict).ma_values)
}

impl super::DictTemplateLayout for DictTemplate {
    type Filling<'py> = Filling<'py>;

    /// The template of a dict of `keys` (exact, distinct strs), or `None` when the made
    /// dict is not the combined str-keyed table the copies are filled through.
    fn build(py: Python<'_>, keys: &[Bound<'_, PyString>]) -> Option<DictTemplate> {
        if keys.is_empty() || keys.iter().any(|k| !k.is_exact_instance_of::<PyString>()) {
            return None;
        }
        let dict = PyDict::new(py);
        for key in keys {
            dict.set_item(key, py.None()).ok()?;
        }
        if dict.len() != keys.len() {
            return None;
        }
        let raw = dict.as_ptr();
        // SAFETY: a live exact dict; its table header and entries are read within the
        // table's bounds (entry `i < dk_nentries`), and only while no Python code runs.
        unsafe {
            let (keys_table, values) = table(raw);
            if keys_table.is_null() || !values.is_null() {
                return None;
            }
            let header = &*keys_table;
            if header.dk_kind != DICT_KEYS_UNICODE
                || header.dk_nentries != keys.len() as ffi::Py_ssize_t
                || header.dk_refcnt != 1
            {
                return None;
            }
            let entries =
                std::mem::size_of::<DictKeysHead>() + (1usize << header.dk_log2_index_bytes);
            let first = keys_table
                .cast::<u8>()
                .add(entries)
                .cast::<*mut ffi::PyObject>();
            for (index, key) in keys.iter().enumerate() {
                let entry_key = *first.add(2 * index);
                let entry_value = *first.add(2 * index + 1);
                if entry_key != key.as_ptr() || entry_value != ffi::Py_None() {
                    return None;
                }
            }
            Some(DictTemplate {
                len: keys.len(),
                log2_size: header.dk_log2_size,
                entries,
                dict: dict.unbind(),
            })
        }
    }

    /// A copy of the template, to be filled.
    #[inline(always)]
    fn copy<'py>(&self, py: Python<'py>) -> PyResult<Filling<'py>> {
        // SAFETY: PyDict_Copy returns a new reference or NULL with an exception set. The
        // copy of an exact, combined, fully used dict is a fresh table cloned from the
        // template's (3.11's fast copy), checked here before its entries are addressed:
        // the same table size and entry count, so the same layout.
        unsafe {
            let copy = ffi::PyDict_Copy(self.dict.as_ptr());
            let copy = Bound::from_owned_ptr_or_err(py, copy)?;
            let (keys_table, values) = table(copy.as_ptr());
            if keys_table.is_null()
                || !values.is_null()
                || (*keys_table).dk_log2_size != self.log2_size
                || (*keys_table).dk_nentries != self.len as ffi::Py_ssize_t
                || (*keys_table).dk_kind != DICT_KEYS_UNICODE
            {
                return Err(pyo3::exceptions::PySystemError::new_err(
                    "to_builtins: a record dict's copy has an unexpected layout",
                ));
            }
            let first = keys_table
                .cast::<u8>()
                .add(self.entries)
                .cast::<*mut ffi::PyObject>();
            Ok(Filling {
                dict: copy,
                first,
                len: self.len,
                gc: false,
            })
        }
    }

    #[inline]
    fn copy_of<'py>(dict: &Bound<'py, PyDict>) -> Option<PyResult<Filling<'py>>> {
        copy_of(dict)
    }
}

/// Whether the live dict `dict` has a combined table of exact str keys with every entry in
/// use (no deleted entries): one whose copy `PyDict_Copy` clones, entries in the same order.
///
/// # Safety
/// `dict` is a live exact dict, and the GIL is held.
#[inline(always)]
unsafe fn full_str_table(dict: *mut ffi::PyObject) -> Option<(*mut DictKeysHead, usize)> {
    // SAFETY: the caller's live exact dict; its head and keys object are read in bounds.
    unsafe {
        let (keys, values) = table(dict);
        let used = (*dict.cast::<DictObject>()).ma_used;
        if keys.is_null()
            || !values.is_null()
            || (*keys).dk_kind != DICT_KEYS_UNICODE
            || (*keys).dk_nentries != used
        {
            return None;
        }
        Some((keys, used as usize))
    }
}

/// A copy of an exact dict of str keys, for [`DictTemplateLayout::copy_of`]: `PyDict_Copy`
/// when the dict's table is a full, combined one of exact str keys, whose copy (checked too)
/// is a clone of it, entries in the same order.
pub fn copy_of<'py>(dict: &Bound<'py, PyDict>) -> Option<PyResult<Filling<'py>>> {
    if !dict.is_exact_instance_of::<PyDict>() {
        return None;
    }
    // SAFETY: a live exact dict under the GIL (the `Bound`); the copy is checked before its
    // entries are addressed: a full combined table of str keys, as many entries as the
    // original's, so entry `i` holds the original's entry `i`.
    unsafe {
        let (_, len) = full_str_table(dict.as_ptr())?;
        let copy = match Bound::from_owned_ptr_or_err(dict.py(), ffi::PyDict_Copy(dict.as_ptr())) {
            Ok(copy) => copy,
            Err(err) => return Some(Err(err)),
        };
        let (keys, copied) = full_str_table(copy.as_ptr())?;
        if copied != len {
            return None;
        }
        Some(Ok(Filling {
            first: entries(keys).cast::<*mut ffi::PyObject>(),
            dict: copy,
            len,
            gc: false,
        }))
    }
}

/// A copy of a template whose values are being replaced.
pub struct Filling<'py> {
    dict: Obj<'py>,
    /// The copy's first entry's key slot.
    first: *mut *mut ffi::PyObject,
    len: usize,
    /// Whether a value of a garbage-collected type was stored.
    gc: bool,
}

impl<'py> super::FillingLayout<'py> for Filling<'py> {
    /// Stores `value` as the value of the entry at `position` (in the template's key
    /// order); the value the entry held is released.
    #[inline(always)]
    fn put(&mut self, position: usize, value: Obj<'py>) {
        assert!(position < self.len);
        // SAFETY: `first` addresses the copy's entry table, which only this filling sees
        // (the copy is not handed out before `finish`), so no Python code can resize it;
        // entry `position` is within the `len` entries checked in `copy`. The entry takes
        // `value`'s reference and the one it held (the template's `None`, or an earlier
        // value) is released.
        unsafe {
            let raw = value.into_ptr();
            self.gc |= ffi::PyType_HasFeature(ffi::Py_TYPE(raw), ffi::Py_TPFLAGS_HAVE_GC) != 0;
            let slot = self.first.add(2 * position + 1);
            let old = *slot;
            *slot = raw;
            ffi::Py_DECREF(old);
        }
    }

    /// The filled dict, tracked by the garbage collector when a value may be a container
    /// (as `PyDict_SetItem` would have tracked it).
    #[inline(always)]
    fn finish(self) -> Obj<'py> {
        if self.gc {
            // SAFETY: a live dict, tracked at most once (only when it is not yet).
            unsafe {
                if ffi::PyObject_GC_IsTracked(self.dict.as_ptr()) == 0 {
                    ffi::PyObject_GC_Track(self.dict.as_ptr().cast());
                }
            }
        }
        self.dict
    }

    /// The dict being filled (for an entry to delete, a field that is absent).
    fn dict(&self) -> &Obj<'py> {
        &self.dict
    }

    #[inline(always)]
    fn entry(&self, position: usize) -> (Obj<'py>, Obj<'py>) {
        assert!(position < self.len);
        // SAFETY: entry `position` is within the `len` entries checked when the copy was made,
        // in a table only this filling sees; both slots hold live references (new ones are
        // returned).
        unsafe {
            let slot = self.first.add(2 * position);
            let py = self.dict.py();
            (
                Bound::from_borrowed_ptr(py, *slot),
                Bound::from_borrowed_ptr(py, *slot.add(1)),
            )
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }
}

//! `to_builtins`'s record dicts made by copying a template: one dict per record row, holding the
//! record's keys (in the order its dict is written) with `None` for every value, is copied with
//! `PyDict_Copy`, and each field's converted value then replaces its `None` in the copy's entry
//! table, by position.
//!
//! Filling an empty dict with `PyDict_SetItem` costs a hash table lookup, an insertion and (for
//! small dicts) a first table allocation per key, about 170 instructions each; the copy is one
//! allocation and a `memcpy` of the template's table, and a value then costs one store. The
//! dicts are the same: same keys (the template's own interned strs), same order, same table.
//!
//! The entry table's layout (`PyDictKeysObject`, entries of `{key, value}` for a table of str
//! keys) is private to CPython 3.11 (3.12 and 3.13 changed the dict internals), so this is
//! compiled only for 3.11; every template is checked when it is made (an exact dict, a combined
//! table of str keys holding exactly the keys given, in order, and not tracked by the garbage
//! collector) and every copy before it is filled (the same table size and entry count).
//! Elsewhere, or where `POLYCODEC_PORTABLE_DICTS=1` is set when the plan is built, or for any
//! check that fails, the walk fills a presized dict with `PyDict_SetItem`, which tests compare
//! against.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// The environment variable that makes plans built afterwards fill record dicts with
/// `PyDict_SetItem` (the portable path) instead of copying a template, so tests can run both.
pub const PORTABLE_DICTS_ENV: &str = "POLYCODEC_PORTABLE_DICTS";

#[cfg(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy)))]
mod imp {
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::{PyDict, PyString};

    use crate::py::dict_layout::{DictKeysHead, DictObject, DICT_KEYS_UNICODE};
    use crate::py::Obj;

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

    impl DictTemplate {
        /// The template of a dict of `keys` (exact, distinct strs), or `None` when the made
        /// dict is not the combined str-keyed table the copies are filled through.
        pub fn new(py: Python<'_>, keys: &[Bound<'_, PyString>]) -> Option<DictTemplate> {
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
                if ffi::PyObject_GC_IsTracked(raw) != 0 {
                    return None;
                }
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
        pub fn copy<'py>(&self, py: Python<'py>) -> PyResult<Filling<'py>> {
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

    impl<'py> Filling<'py> {
        /// Stores `value` as the value of the entry at `position` (in the template's key
        /// order); the value the entry held is released.
        #[inline(always)]
        pub fn put(&mut self, position: usize, value: Obj<'py>) {
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
        pub fn finish(self) -> Obj<'py> {
            if self.gc {
                // SAFETY: a live dict, tracked at most once (the copy of an untracked
                // template is untracked, checked again here).
                unsafe {
                    if ffi::PyObject_GC_IsTracked(self.dict.as_ptr()) == 0 {
                        ffi::PyObject_GC_Track(self.dict.as_ptr().cast());
                    }
                }
            }
            self.dict
        }

        /// The dict being filled (for an entry to delete, a field that is absent).
        pub fn dict(&self) -> &Obj<'py> {
            &self.dict
        }
    }
}

#[cfg(not(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy))))]
mod imp {
    use pyo3::prelude::*;
    use pyo3::types::PyString;

    use crate::py::Obj;

    /// Never made: this interpreter's dict layout is not known.
    pub enum DictTemplate {}

    impl DictTemplate {
        pub fn new(_py: Python<'_>, _keys: &[Bound<'_, PyString>]) -> Option<DictTemplate> {
            None
        }

        pub fn copy<'py>(&self, _py: Python<'py>) -> PyResult<Filling<'py>> {
            match *self {}
        }
    }

    /// Never made.
    pub enum Filling<'py> {
        #[allow(dead_code)]
        Never(std::convert::Infallible, std::marker::PhantomData<Obj<'py>>),
    }

    impl<'py> Filling<'py> {
        pub fn put(&mut self, _position: usize, _value: Obj<'py>) {
            match *self {
                Filling::Never(never, _) => match never {},
            }
        }

        pub fn finish(self) -> Obj<'py> {
            match self {
                Filling::Never(never, _) => match never {},
            }
        }

        pub fn dict(&self) -> &Obj<'py> {
            match *self {
                Filling::Never(never, _) => match never {},
            }
        }
    }
}

pub use imp::{DictTemplate, Filling};

/// The template of a record dict of `keys`, unless `POLYCODEC_PORTABLE_DICTS` is set or this
/// interpreter's dicts are not the layout copies are filled through.
pub fn template(py: Python<'_>, keys: &[Bound<'_, PyString>]) -> Option<DictTemplate> {
    let portable = std::env::var_os(PORTABLE_DICTS_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    if portable {
        return None;
    }
    DictTemplate::new(py, keys)
}

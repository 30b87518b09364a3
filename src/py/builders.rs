//! Containers filled in place, for `to_builtins` and the Avro decoder: a list allocated at its
//! expected length whose slots are set as the items come (no Rust vector in between), and a
//! dict allocated for the number of entries a record will have (no resizes while its fields
//! are inserted).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::Obj;

/// A new empty dict with room for `entries` entries, so that inserting them never resizes it.
#[inline]
pub fn presized_dict(py: Python<'_>, entries: usize) -> PyResult<Bound<'_, PyDict>> {
    presized(py, entries)
}

#[cfg(all(not(Py_LIMITED_API), not(PyPy), not(GraalPy)))]
#[inline]
fn presized(py: Python<'_>, entries: usize) -> PyResult<Bound<'_, PyDict>> {
    extern "C" {
        // CPython's own presizing constructor (exported by every CPython 3.x, used by its
        // BUILD_MAP); PyO3 does not declare it.
        fn _PyDict_NewPresized(minused: ffi::Py_ssize_t) -> *mut ffi::PyObject;
    }
    // SAFETY: returns a new reference to an empty dict, or NULL with an exception set.
    let dict = unsafe {
        Bound::from_owned_ptr_or_err(py, _PyDict_NewPresized(entries as ffi::Py_ssize_t))?
    };
    // SAFETY: the constructor returned a dict.
    Ok(unsafe { dict.cast_into_unchecked() })
}

#[cfg(not(all(not(Py_LIMITED_API), not(PyPy), not(GraalPy))))]
#[inline]
fn presized(py: Python<'_>, _entries: usize) -> PyResult<Bound<'_, PyDict>> {
    Ok(PyDict::new(py))
}

/// A dict of `pairs`, given as key, value, key, value...: made at its final size, then each
/// entry inserted in order (a later key replaces an earlier equal one, as in a dict display).
/// The keys must be objects whose hashing and comparison run no Python code (strs, ints,
/// floats, bools, None, bytes, datetimes, tuples of these).
#[inline]
pub fn dict_from_pairs<'py>(
    py: Python<'py>,
    mut pairs: impl ExactSizeIterator<Item = Obj<'py>>,
) -> PyResult<Obj<'py>> {
    let dict = presized_dict(py, pairs.len() / 2)?;
    while let (Some(key), Some(value)) = (pairs.next(), pairs.next()) {
        // SAFETY: a live dict and two live objects; SetItem takes its own references (ours are
        // released when `key` and `value` drop) and returns -1 with an exception set on failure.
        if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(dict.into_any())
}

/// A list being filled: allocated with `length` empty slots, set one by one; items past
/// `length` are appended, and slots left empty are cut off by [`ListFill::finish`]. The list
/// is not seen by Python code until it is finished (its empty slots are NULL, which only the
/// garbage collector's traversal and deallocation meet, and both accept).
pub struct ListFill<'py> {
    list: Bound<'py, PyList>,
    filled: usize,
    length: usize,
}

impl<'py> ListFill<'py> {
    #[inline]
    pub fn new(py: Python<'py>, length: usize) -> PyResult<Self> {
        // SAFETY: a new list with NULL slots, or NULL with an exception set.
        let list = unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyList_New(length as ffi::Py_ssize_t))?
                .cast_into_unchecked::<PyList>()
        };
        Ok(ListFill {
            list,
            filled: 0,
            length,
        })
    }

    /// Places the next item.
    #[inline]
    pub fn push(&mut self, item: Obj<'py>) -> PyResult<()> {
        if self.filled < self.length {
            // SAFETY: slot `filled` is in bounds and still NULL; SET_ITEM takes over the
            // reference.
            unsafe {
                ffi::PyList_SET_ITEM(
                    self.list.as_ptr(),
                    self.filled as ffi::Py_ssize_t,
                    item.into_ptr(),
                )
            };
        } else {
            self.list.append(item)?;
        }
        self.filled += 1;
        Ok(())
    }

    /// The number of items placed so far.
    #[inline]
    pub fn count(&self) -> usize {
        self.filled
    }

    /// The list, only if every preallocated slot was filled (`None` otherwise, so a list with
    /// empty slots never reaches Python code): for callers that were told the length up front.
    #[inline]
    pub fn filled(self) -> Option<Bound<'py, PyList>> {
        (self.filled >= self.length).then_some(self.list)
    }

    /// The list, without the slots no item came for.
    #[inline]
    pub fn finish(self) -> PyResult<Bound<'py, PyList>> {
        if self.filled < self.length {
            // SAFETY: the list is ours and not yet shared; SetSlice drops the NULL slots
            // (it XDECREFs what it removes).
            let status = unsafe {
                ffi::PyList_SetSlice(
                    self.list.as_ptr(),
                    self.filled as ffi::Py_ssize_t,
                    self.length as ffi::Py_ssize_t,
                    std::ptr::null_mut(),
                )
            };
            if status < 0 {
                return Err(PyErr::fetch(self.list.py()));
            }
        }
        Ok(self.list)
    }
}

/// `tuple.__new__(cls, items)` for a tuple subclass `cls` (a named tuple), called in C: the
/// instance the `__new__` that `collections.namedtuple` generates returns for these items,
/// without that Python function's frame or `type.__call__`'s lookups.
pub fn tuple_subclass_instance<'py>(
    cls: &Bound<'py, pyo3::types::PyType>,
    items: Bound<'py, pyo3::types::PyTuple>,
) -> PyResult<Obj<'py>> {
    let py = cls.py();
    let args = super::new_tuple(py, std::iter::once(items.into_any()))?;
    // SAFETY: `tuple`'s static type object has a `tp_new`; it is called as `tuple.__new__`
    // is, with a subtype of tuple (the caller's named tuple class), one positional argument
    // and no keywords, and returns a new reference or NULL with an exception set.
    unsafe {
        let tuple_type = std::ptr::addr_of_mut!(ffi::PyTuple_Type);
        let Some(new) = (*tuple_type).tp_new else {
            return Err(pyo3::exceptions::PySystemError::new_err(
                "tuple has no tp_new",
            ));
        };
        Bound::from_owned_ptr_or_err(
            py,
            new(cls.as_type_ptr(), args.as_ptr(), std::ptr::null_mut()),
        )
    }
}

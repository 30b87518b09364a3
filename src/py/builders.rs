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

/// `tuple.__new__(cls, items)` for a tuple subclass `cls` (a named tuple) whose `__new__` is
/// namedtuple's own: the instance that `__new__` returns for these items, without that Python
/// function's frame or `type.__call__`'s lookups. Made as `tuple.__new__` makes one for a
/// subtype (the class's `tp_alloc` at the length, each slot set), without the exact tuple and
/// the argument tuple it goes through.
pub fn tuple_subclass_instance<'py>(
    cls: &Bound<'py, pyo3::types::PyType>,
    items: impl ExactSizeIterator<Item = Obj<'py>>,
) -> PyResult<Obj<'py>> {
    subclass_instance(cls, items)
}

#[cfg(all(not(Py_LIMITED_API), not(PyPy), not(GraalPy)))]
#[inline]
fn subclass_instance<'py>(
    cls: &Bound<'py, pyo3::types::PyType>,
    items: impl ExactSizeIterator<Item = Obj<'py>>,
) -> PyResult<Obj<'py>> {
    let py = cls.py();
    let length = items.len();
    let type_ptr = cls.as_type_ptr();
    // SAFETY: a live type object (a subclass of tuple, so a variable-size object of the tuple
    // layout); its allocator returns a new, zero-filled instance with `length` item slots and
    // its size set, or NULL with an exception set.
    let instance = unsafe {
        let Some(alloc) = (*type_ptr).tp_alloc else {
            return Err(pyo3::exceptions::PySystemError::new_err(
                "tuple subclass has no tp_alloc",
            ));
        };
        Bound::from_owned_ptr_or_err(py, alloc(type_ptr, length as ffi::Py_ssize_t))?
    };
    let mut filled = 0;
    for item in items.take(length) {
        // SAFETY: slot `filled` of the new instance is in bounds and empty; SET_ITEM takes
        // over the reference, as tuple.__new__ fills a subtype's instance.
        unsafe {
            ffi::PyTuple_SET_ITEM(
                instance.as_ptr(),
                filled as ffi::Py_ssize_t,
                item.into_ptr(),
            )
        };
        filled += 1;
    }
    // The cached hash "not computed yet", as tuple.__new__ leaves it (the allocator's zero
    // would read as a computed hash of 0).
    #[cfg(Py_3_14)]
    // SAFETY: the new instance has the tuple layout, whose hash cache is written only here.
    unsafe {
        (*instance.as_ptr().cast::<ffi::PyTupleObject>()).ob_hash = -1;
    }
    if filled < length {
        // An iterator shorter than it said: the instance, whose empty slots tuple_dealloc
        // accepts, is dropped unseen.
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "internal: tuple items fewer than announced",
        ));
    }
    Ok(instance)
}

#[cfg(not(all(not(Py_LIMITED_API), not(PyPy), not(GraalPy))))]
fn subclass_instance<'py>(
    cls: &Bound<'py, pyo3::types::PyType>,
    items: impl ExactSizeIterator<Item = Obj<'py>>,
) -> PyResult<Obj<'py>> {
    let items = super::new_tuple(cls.py(), items)?;
    let new = cls
        .py()
        .get_type::<pyo3::types::PyTuple>()
        .getattr("__new__")?;
    new.call1((cls, items))
}

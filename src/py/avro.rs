//! CPython helpers for the Avro decoder: lists filled in place once their length is known.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// A list of `length` empty slots, to be filled with [`ListFiller::push`]. Avro states each
/// block's item count up front, so the list is allocated once, at its final size.
pub struct ListFiller<'py> {
    list: Bound<'py, PyList>,
    filled: usize,
    length: usize,
}

impl<'py> ListFiller<'py> {
    /// The caller has checked `length` against the input that remains, so the allocation is
    /// what the input justifies.
    pub fn new(py: Python<'py>, length: usize) -> PyResult<Self> {
        // SAFETY: PyList_New returns a new reference or NULL with an exception set; its slots
        // are NULL until set, which list_dealloc accepts if the list is dropped unfilled.
        let raw = unsafe { ffi::PyList_New(length as ffi::Py_ssize_t) };
        // SAFETY: a new reference (or NULL, turned into the pending exception).
        let list = unsafe { Bound::from_owned_ptr_or_err(py, raw)? };
        Ok(ListFiller {
            list: list.cast_into::<PyList>()?,
            filled: 0,
            length,
        })
    }

    /// Stores the next item; past the preallocated length the list grows by appending.
    #[inline]
    pub fn push(&mut self, item: Bound<'py, PyAny>) -> PyResult<()> {
        if self.filled < self.length {
            // SAFETY: the slot at `filled` is in bounds and still NULL; SET_ITEM takes over the
            // reference that `into_ptr` gives up.
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

    /// The number of items stored so far.
    pub fn count(&self) -> usize {
        self.filled
    }

    /// The list, once every preallocated slot has been filled (`None` otherwise, so a list with
    /// empty slots never reaches Python code).
    pub fn finish(self) -> Option<Bound<'py, PyList>> {
        (self.filled >= self.length).then_some(self.list)
    }
}

//! CPython 3.13's layouts: a plain instance's values right after its object header
//! ([`super::embedded`]), and big ints from their digits (after `lv_tag`, as `_PyLong_New`
//! makes them). The dict layout, instance creation and slot offsets are the shared ones
//! ([`super::dicts`], [`super::objects`]).

use std::os::raw::c_ulong;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

use super::embedded::{self, Placement};
use super::objects;
use super::{Family, Layout};
use crate::py::Obj;

/// The family's items.
pub struct Layouts;

/// The words `PyObject_GC_New` places before a 3.13 object: the managed dict's and the
/// managed weakref list's.
const PREHEADER: c_ulong = ffi::Py_TPFLAGS_MANAGED_DICT | ffi::Py_TPFLAGS_MANAGED_WEAKREF;

/// 3.13 keeps a plain instance's values right after the object header, for classes whose
/// basic size is that header (`_PyObject_InlineValues`).
pub struct AfterHeader;

impl Placement for AfterHeader {
    #[inline(always)]
    unsafe fn offset(_tp: *mut ffi::PyTypeObject) -> usize {
        std::mem::size_of::<ffi::PyObject>()
    }

    #[inline(always)]
    fn placed(basic_size: ffi::Py_ssize_t) -> bool {
        basic_size as usize == std::mem::size_of::<ffi::PyObject>()
    }
}

impl Family for Layouts {
    const NAME: &'static str = "CPython 3.13";
    const KNOWN: &'static [Layout] = &Layout::ALL;
    type InlineValues = embedded::InlineValues<AfterHeader>;
    type DictTemplate = super::dicts::DictTemplate;

    #[inline(always)]
    fn allocate_plain<'py>(
        py: Python<'py>,
        type_ptr: *mut ffi::PyTypeObject,
    ) -> Option<PyResult<Obj<'py>>> {
        objects::allocate_plain(py, type_ptr)
    }

    #[inline(always)]
    fn create_slotted<'py>(
        cls: &Bound<'py, PyType>,
        offsets: &[usize],
        values: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>> {
        objects::create_slotted(cls, offsets, values, PREHEADER)
    }

    unsafe fn member_offset(
        cls: &Bound<'_, PyType>,
        descriptor: &Bound<'_, PyAny>,
        name: &Bound<'_, PyString>,
    ) -> Option<usize> {
        // SAFETY: the caller's member descriptor.
        unsafe { objects::member_offset(cls, descriptor, name) }
    }

    #[inline(always)]
    unsafe fn next_dict_entry(
        dict: *mut ffi::PyObject,
        position: &mut ffi::Py_ssize_t,
    ) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>> {
        // SAFETY: the caller's live dict, under the GIL.
        unsafe { super::dicts::next_entry(dict, position) }
    }

    #[inline(always)]
    unsafe fn str_keyed_entries(
        dict: *mut ffi::PyObject,
    ) -> Option<(*const [*mut ffi::PyObject; 2], usize)> {
        // SAFETY: the caller's live exact dict, under the GIL, no Python code running.
        unsafe { super::dicts::str_keyed_entries(dict) }
    }

    fn wide_int(py: Python<'_>, value: u128) -> Option<PyResult<Obj<'_>>> {
        // SAFETY: 3.13's ints keep their digits after the object header and `lv_tag` (one
        // word), 30 bits in 32 (checked at module load).
        unsafe {
            objects::wide_int_from_new(
                py,
                value,
                std::mem::size_of::<ffi::PyObject>() + std::mem::size_of::<usize>(),
            )
        }
    }

    #[inline(always)]
    unsafe fn int_digits(value: *mut ffi::PyObject) -> Option<i64> {
        // SAFETY: the caller's int, of this interpreter.
        unsafe { super::ints::tagged_int(value) }
    }
}

//! CPython 3.14's and 3.15's layouts (their headers agree on every item here): a plain
//! instance's values after its basic size ([`super::embedded`]), and big ints through the public
//! `PyLongWriter` API (new in 3.14). The dict layout, instance creation and slot offsets are the
//! shared ones ([`super::dicts`], [`super::objects`]).

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

/// The words `PyObject_GC_New` places before a 3.14 object: the managed dict's and the
/// managed weakref list's.
const PREHEADER: c_ulong = ffi::Py_TPFLAGS_MANAGED_DICT | ffi::Py_TPFLAGS_MANAGED_WEAKREF;

/// 3.14 and 3.15 keep a plain instance's values after the class's basic size
/// (`_PyObject_InlineValues`), a whole number of words.
pub struct AfterBasicSize;

impl Placement for AfterBasicSize {
    #[inline(always)]
    unsafe fn offset(tp: *mut ffi::PyTypeObject) -> usize {
        // SAFETY: the caller's live type object.
        unsafe { (*tp).tp_basicsize as usize }
    }

    #[inline(always)]
    fn placed(basic_size: ffi::Py_ssize_t) -> bool {
        basic_size as usize >= std::mem::size_of::<ffi::PyObject>()
            && (basic_size as usize).is_multiple_of(std::mem::size_of::<usize>())
    }
}

impl Family for Layouts {
    const NAME: &'static str = "CPython 3.14-3.15";
    const KNOWN: &'static [Layout] = &Layout::ALL;
    type InlineValues = embedded::InlineValues<AfterBasicSize>;
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

    /// Through `PyLongWriter_Create`, whose digits are the native layout's
    /// (`PyLong_GetNativeLayout`: 30 bits in 32, least significant first, checked at module
    /// load), and `PyLongWriter_Finish`, which normalises the int.
    #[inline(always)]
    unsafe fn str_keyed_entries(
        dict: *mut ffi::PyObject,
    ) -> Option<(*const [*mut ffi::PyObject; 2], usize)> {
        // SAFETY: the caller's live exact dict, under the GIL, no Python code running.
        unsafe { super::dicts::str_keyed_entries(dict) }
    }

    fn wide_int(py: Python<'_>, value: u128) -> Option<PyResult<Obj<'_>>> {
        const MASK: u128 = (1 << 30) - 1;
        let size = (128 - value.leading_zeros()).div_ceil(30) as usize;
        let mut digits: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: a writer of `size` digits for a positive int, or NULL with an exception set
        // (checked); its `size` 32-bit digits are all written before it is finished, which
        // hands out a new reference (or NULL with an exception set).
        unsafe {
            let writer = ffi::PyLongWriter_Create(0, size as ffi::Py_ssize_t, &mut digits);
            if writer.is_null() {
                return Some(Err(PyErr::fetch(py)));
            }
            let digits = digits.cast::<u32>();
            for index in 0..size {
                *digits.add(index) = ((value >> (30 * index)) & MASK) as u32;
            }
            Some(Bound::from_owned_ptr_or_err(
                py,
                ffi::PyLongWriter_Finish(writer),
            ))
        }
    }

    #[inline(always)]
    unsafe fn int_digits(value: *mut ffi::PyObject) -> Option<i64> {
        // SAFETY: the caller's int, of this interpreter.
        unsafe { super::ints::tagged_int(value) }
    }
}

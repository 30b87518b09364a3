//! Object creation and slot offsets, the same in every known family (CPython 3.11, 3.13, 3.14,
//! 3.15, with the GIL): what `object.__new__` does for a class without an instance dict, a
//! `slots=True` instance written in one step, and a member descriptor's slot offset.
//!
//! The type slots read here (`tp_new`, `tp_alloc`, `tp_flags`, `tp_basicsize`, ...) are public;
//! what is private is what `object.__new__` does with them, which differs by version only in
//! the flags of words placed before the object (its preheader), a parameter of
//! [`create_slotted`]; and `PyMemberDescrObject`'s layout, from pyo3-ffi's per-version
//! declarations. The families call these; nothing else does.

use std::ffi::CStr;
use std::os::raw::c_ulong;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

use crate::py::Obj;

/// Whether instances of type `tp` come from `object.__new__` with the generic allocator: no
/// user code runs, and a fresh instance is laid out as CPython's own creation leaves it. The
/// shared check of the direct creations (slotted, inline values, and the probe of the latter),
/// since a class can gain a `__new__` or an allocator later.
///
/// # Safety
/// `tp` is a live type object.
#[inline(always)]
pub unsafe fn made_by_object_new(tp: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: the caller's live type object; `object`'s slot is never written after startup.
    let (new, alloc, object_new) = unsafe {
        (
            (*tp).tp_new,
            (*tp).tp_alloc,
            (*std::ptr::addr_of!(ffi::PyBaseObject_Type)).tp_new,
        )
    };
    let generic = ffi::PyType_GenericAlloc as *const () as usize;
    matches!((new, object_new), (Some(new), Some(object_new))
            if std::ptr::fn_addr_eq(new, object_new))
        && alloc.map(|f| f as usize) == Some(generic)
}

/// What `object.__new__(cls)` does for a class without an instance dict (a `slots=True`
/// dataclass, `uuid.UUID`), done directly: refuse an abstract class (left to `object.__new__`,
/// which words the error), then the type's `tp_alloc`; 3.11's `object_new` then initialises the
/// instance dict, a no-op where `tp_dictoffset` is 0 (3.13's and later `object_new` is
/// `tp_alloc` alone). Skips the argument tuple and `object_new`'s checks of it. `None`: take
/// `object.__new__`. The caller has checked that the class's `tp_new` is `object.__new__`.
#[inline(always)]
pub fn allocate_plain<'py>(
    py: Python<'py>,
    type_ptr: *mut ffi::PyTypeObject,
) -> Option<PyResult<Obj<'py>>> {
    // SAFETY: a live type object (the caller's class); three of its slots are read.
    let (dict_offset, flags, alloc) = unsafe {
        (
            (*type_ptr).tp_dictoffset,
            (*type_ptr).tp_flags,
            (*type_ptr).tp_alloc,
        )
    };
    if dict_offset != 0 || flags & ffi::Py_TPFLAGS_IS_ABSTRACT != 0 {
        return None;
    }
    // SAFETY: the type's own allocator with no items, as object_new calls it; it returns a
    // new reference or NULL with an exception set.
    Some(unsafe { Bound::from_owned_ptr_or_err(py, alloc?(type_ptr, 0)) })
}

/// A new instance of `cls`, a class whose every field is an object slot at `offsets` (by field
/// index), holding `values` (taken; an absent one leaves its slot unset): what
/// `object.__new__(cls)` and one store per slot make, done in one step. `preheader` is the
/// family's flags of words `PyObject_GC_New` would place before the object (3.11:
/// `Py_TPFLAGS_MANAGED_DICT`; 3.12 and later also `_MANAGED_WEAKREF`): such a class is
/// refused.
///
/// `object.__new__` of such a class is `tp_alloc` alone, and `PyType_GenericAlloc` is
/// `PyObject_GC_New`, a zeroed body and `PyObject_GC_Track`: here the body is written with the
/// values instead of zeroed first (so no slot holds an old value to release), and the instance
/// is tracked once it is complete. Checked on every call, since a class can gain a `__new__`
/// later: `object.__new__` and the generic allocator, collected, not abstract, no instance dict
/// and no items, no preheader, and a body that is exactly the slots (no weakref list or other
/// word left to zero). `None`: take `new_instance` and the stores.
#[inline(always)]
pub fn create_slotted<'py>(
    cls: &Bound<'py, PyType>,
    offsets: &[usize],
    values: &mut [Option<Obj<'py>>],
    preheader: c_ulong,
) -> Option<PyResult<Obj<'py>>> {
    let py = cls.py();
    let type_ptr = cls.as_type_ptr();
    // SAFETY: a live type object; four of its slots are read, and two by the shared check.
    let (flags, dict_offset, item_size, basic_size, object_made) = unsafe {
        (
            (*type_ptr).tp_flags,
            (*type_ptr).tp_dictoffset,
            (*type_ptr).tp_itemsize,
            (*type_ptr).tp_basicsize,
            made_by_object_new(type_ptr),
        )
    };
    let word = std::mem::size_of::<*mut ffi::PyObject>();
    let dense = basic_size as usize == std::mem::size_of::<ffi::PyObject>() + offsets.len() * word
        && values.len() == offsets.len();
    let refused = ffi::Py_TPFLAGS_IS_ABSTRACT | preheader;
    let plain = object_made
        && flags & (ffi::Py_TPFLAGS_HAVE_GC | refused) == ffi::Py_TPFLAGS_HAVE_GC
        && dict_offset == 0
        && item_size == 0;
    if !(dense && plain) {
        return None;
    }
    // SAFETY: a collected type with no items: GC_New allocates its basic size (with the GC
    // header, linked but untracked), sets the type (a reference for a heap type) and the
    // reference count, and returns NULL with an exception set when memory runs out.
    let raw = unsafe { ffi::PyObject_GC_New::<ffi::PyObject>(type_ptr) };
    if raw.is_null() {
        return Some(Err(PyErr::fetch(py)));
    }
    let base = raw.cast::<u8>();
    for (value, &offset) in values.iter_mut().zip(offsets) {
        let item = value.take().map_or(std::ptr::null_mut(), Bound::into_ptr);
        // SAFETY: `offset` is an object slot of exactly this class (from its member
        // descriptor, inside the basic size), and the slots cover the whole body, so every
        // word of it is written once; the slot takes the value's reference.
        unsafe { *base.add(offset).cast::<*mut ffi::PyObject>() = item };
    }
    // SAFETY: the instance is complete (every word of its body set) and not yet tracked.
    unsafe { ffi::PyObject_GC_Track(raw.cast()) };
    // SAFETY: the new reference GC_New returned.
    Some(Ok(unsafe { Bound::from_owned_ptr(py, raw) }))
}

/// The byte offset a member descriptor records, read from CPython's `PyMemberDescrObject`, when
/// it is a writable object slot named `name` inside the class's basic size.
///
/// # Safety
/// `descriptor`'s type is exactly the member descriptor type (`PyMemberDescr_Type`).
pub unsafe fn member_offset(
    cls: &Bound<'_, PyType>,
    descriptor: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
) -> Option<usize> {
    let name = crate::py::str_utf8(name).ok()?;
    // SAFETY: the caller's member descriptor, a PyMemberDescrObject; d_member points at the
    // class's static PyMemberDef, which lives as long as the class. Only its fields are read.
    let member = unsafe {
        let object = descriptor.as_ptr().cast::<ffi::PyMemberDescrObject>();
        let member = (*object).d_member.cast::<ffi::PyMemberDef>();
        if member.is_null() || (*member).name.is_null() {
            return None;
        }
        if CStr::from_ptr((*member).name).to_bytes() != name.as_bytes() {
            return None;
        }
        *member
    };
    // SAFETY: a live type object; its basic size is read.
    let basic_size = unsafe { (*cls.as_type_ptr()).tp_basicsize };
    let fits = member.offset > 0
        && (member.offset as usize) + std::mem::size_of::<*mut ffi::PyObject>()
            <= basic_size as usize;
    let plain = member.type_code == ffi::Py_T_OBJECT_EX && member.flags & ffi::Py_READONLY == 0;
    (fits && plain).then_some(member.offset as usize)
}

#[cfg(any(polycodec_room = "v3_11", polycodec_room = "v3_13"))]
unsafe extern "C" {
    /// CPython's allocator of an int of `size` digits (exported, declared in
    /// `Include/cpython/longintrepr.h` of 3.11 and 3.13), its digits left to the caller.
    fn _PyLong_New(size: ffi::Py_ssize_t) -> *mut ffi::PyObject;
}

/// The int of `value` (at least 2**64) written 30 bits a digit into a fresh `_PyLong_New` int,
/// whose digits are 32-bit words at byte `digits_at` of the object (after 3.11's `ob_size`, or
/// 3.13's `lv_tag`, which `_PyLong_New` sets for a positive int of that many digits).
///
/// # Safety
/// The running interpreter's ints have 30-bit digits in 32 bits (checked at module load) at
/// `digits_at`.
#[cfg(any(polycodec_room = "v3_11", polycodec_room = "v3_13"))]
pub unsafe fn wide_int_from_new(
    py: Python<'_>,
    value: u128,
    digits_at: usize,
) -> Option<PyResult<Obj<'_>>> {
    const MASK: u128 = (1 << 30) - 1;
    // 2**64 <= value < 2**128: 3 to 5 digits of 30 bits, the top one nonzero.
    let size = (128 - value.leading_zeros()).div_ceil(30) as usize;
    // SAFETY: `_PyLong_New` returns a new int of `size` digits (or NULL with an exception set,
    // checked); each of its `size` 32-bit digits is written below 2**30, the top one nonzero
    // (a normalised int), before the int is handed out.
    unsafe {
        let raw = _PyLong_New(size as ffi::Py_ssize_t);
        if raw.is_null() {
            return Some(Err(PyErr::fetch(py)));
        }
        let digits = raw.cast::<u8>().add(digits_at).cast::<u32>();
        for index in 0..size {
            *digits.add(index) = ((value >> (30 * index)) & MASK) as u32;
        }
        Some(Ok(Bound::from_owned_ptr(py, raw)))
    }
}

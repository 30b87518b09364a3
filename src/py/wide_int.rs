//! A Python int from a 128-bit value (a UUID's `int`), made without `_PyLong_FromByteArray`'s
//! byte-by-byte loop (some 260 instructions for 16 bytes).
//!
//! A value below 2**64 is `PyLong_FromUnsignedLongLong`'s. A wider one, on CPython 3.11 with
//! 30-bit digits (checked once at run time through `sys.int_info`), is written digit by digit
//! into a fresh `_PyLong_New` int; the int layout (`ob_size` digits after the variable-size
//! header) is private and changed in 3.12, so this part is compiled only for 3.11, and every
//! other interpreter or digit size takes PyO3's conversion (`_PyLong_FromByteArray`).

use pyo3::prelude::*;

use crate::py::Obj;

/// The int of value `value`.
#[inline]
pub fn int_from_u128(py: Python<'_>, value: u128) -> PyResult<Obj<'_>> {
    if let Ok(narrow) = u64::try_from(value) {
        return Ok(narrow.into_pyobject(py)?.into_any());
    }
    if let Some(int) = imp::wide(py, value) {
        return int;
    }
    Ok(value.into_pyobject(py)?.into_any())
}

#[cfg(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy)))]
mod imp {
    use std::sync::OnceLock;

    use pyo3::ffi;
    use pyo3::prelude::*;

    use crate::py::Obj;

    unsafe extern "C" {
        /// CPython's allocator of an int of `size` digits (exported, declared in
        /// `Include/cpython/longintrepr.h`), its digits left to the caller.
        fn _PyLong_New(size: ffi::Py_ssize_t) -> *mut ffi::PyObject;
    }

    /// CPython 3.11's `PyLongObject` head: the digits follow it.
    #[repr(C)]
    struct LongHead {
        ob_base: ffi::PyVarObject,
    }

    /// Whether this interpreter's ints have 30-bit digits stored in 32 bits (the default build;
    /// `--enable-big-digits=15` makes 15-bit ones) and the portable path was not asked for
    /// (`POLYCODEC_PORTABLE_VALUES=1`, read once, so that tests can run the fallback on 3.11).
    static THIRTY_BIT_DIGITS: OnceLock<bool> = OnceLock::new();

    fn thirty_bit_digits(py: Python<'_>) -> bool {
        *THIRTY_BIT_DIGITS.get_or_init(|| {
            if crate::py::fields::env_flag(crate::py::fields::PORTABLE_VALUES_ENV) {
                return false;
            }
            let info = || -> PyResult<bool> {
                let info = py.import("sys")?.getattr("int_info")?;
                let bits: u32 = info.getattr("bits_per_digit")?.extract()?;
                let size: u32 = info.getattr("sizeof_digit")?.extract()?;
                Ok(bits == 30 && size == 4)
            };
            info().unwrap_or(false)
        })
    }

    /// The int of `value` (at least 2**64), or `None` where the digit size is not 30 bits.
    pub fn wide(py: Python<'_>, value: u128) -> Option<PyResult<Obj<'_>>> {
        if !thirty_bit_digits(py) {
            return None;
        }
        const MASK: u128 = (1 << 30) - 1;
        // 2**64 <= value < 2**128: 3 to 5 digits of 30 bits, the top one nonzero.
        let size = (128 - value.leading_zeros()).div_ceil(30) as usize;
        // SAFETY: `_PyLong_New` returns a new int of `size` digits (or NULL with an exception
        // set, checked); each of its `size` 32-bit digits is written below 2**30, the top one
        // nonzero (a normalised int), before the int is handed out.
        unsafe {
            let raw = _PyLong_New(size as ffi::Py_ssize_t);
            if raw.is_null() {
                return Some(Err(PyErr::fetch(py)));
            }
            let digits = (raw as *mut u8).add(std::mem::size_of::<LongHead>()) as *mut u32;
            for index in 0..size {
                *digits.add(index) = ((value >> (30 * index)) & MASK) as u32;
            }
            Some(Ok(Bound::from_owned_ptr(py, raw)))
        }
    }
}

#[cfg(not(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy))))]
mod imp {
    use pyo3::prelude::*;

    use crate::py::Obj;

    /// Never: this interpreter's int layout is not known (see the module's doc).
    #[inline(always)]
    pub fn wide(_py: Python<'_>, _value: u128) -> Option<PyResult<Obj<'_>>> {
        None
    }
}

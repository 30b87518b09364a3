//! An int's value read from its digits (`int_digits`), without a call to
//! `PyLong_AsLongLongAndOverflow` (some 25 instructions and a call for every int field, list
//! item and dict value an encoder writes).
//!
//! Every known header keeps an int's 30-bit digits (least significant first, in 32-bit words)
//! right after one word that follows the object header: 3.11's `ob_size` (`PyObject_VAR_HEAD`:
//! the number of digits, negative for a negative int, 0 for zero) and 3.12+'s `lv_tag`
//! (`_PyLongValue`: the number of digits above its three low bits, the sign in the lowest two,
//! 0 positive, 1 zero, 2 negative; the third is a flag). Every int has room for at least one
//! digit, 0 for zero. An int of one or two digits (below 2**60 in magnitude) is read here; a
//! longer one returns `None` and the caller asks the API, which also says whether it fits 64
//! bits. The probe checks the reads against the API at module load (ints at and around each
//! digit boundary, both signs, bools, an int subclass) and that digits are 30 bits in 32.

use pyo3::ffi;

/// Where the first digit is: after the object header and the size (or tag) word.
const DIGITS_AT: usize = std::mem::size_of::<ffi::PyObject>() + std::mem::size_of::<usize>();

/// The bits of one digit.
const SHIFT: u32 = 30;

/// The size (or tag) word and the first two digits of `value` (the second is read only when
/// the int has it: `two`).
///
/// # Safety
/// `value` is a live int (of any int type) with at least `1 + two` digit words.
#[inline(always)]
unsafe fn magnitude(value: *mut ffi::PyObject, two: bool) -> i64 {
    // SAFETY: the caller's int, whose digits start at `DIGITS_AT` (see the module comment).
    unsafe {
        let digits = value.cast::<u8>().add(DIGITS_AT).cast::<u32>();
        let low = i64::from(*digits);
        if two {
            low | (i64::from(*digits.add(1)) << SHIFT)
        } else {
            low
        }
    }
}

/// The word after the object header.
///
/// # Safety
/// `value` is a live int.
#[inline(always)]
unsafe fn size_word(value: *mut ffi::PyObject) -> usize {
    // SAFETY: every int has the word right after its object header.
    unsafe {
        *value
            .cast::<u8>()
            .add(std::mem::size_of::<ffi::PyObject>())
            .cast::<usize>()
    }
}

/// 3.11: `ob_size` is the signed number of digits.
///
/// # Safety
/// `value` is a live int of a 3.11 interpreter with 30-bit digits.
#[cfg(polycodec_room = "v3_11")]
#[inline(always)]
pub unsafe fn signed_size_int(value: *mut ffi::PyObject) -> Option<i64> {
    // SAFETY: the caller's int.
    let size = unsafe { size_word(value) } as isize;
    match size {
        // SAFETY: one digit word (zero's is 0).
        -1..=1 => Some(size as i64 * unsafe { magnitude(value, false) }),
        // SAFETY: two digit words.
        2 => Some(unsafe { magnitude(value, true) }),
        // SAFETY: two digit words.
        -2 => Some(-unsafe { magnitude(value, true) }),
        _ => None,
    }
}

/// 3.12 and later: `lv_tag` holds the number of digits above three flag bits and the sign in
/// the lowest two.
///
/// # Safety
/// `value` is a live int of a 3.13, 3.14 or 3.15 interpreter with 30-bit digits.
#[cfg(any(polycodec_room = "v3_13", polycodec_room = "v3_14"))]
#[inline(always)]
pub unsafe fn tagged_int(value: *mut ffi::PyObject) -> Option<i64> {
    const SIGN_MASK: usize = 3;
    const NON_SIZE_BITS: u32 = 3;
    // SAFETY: the caller's int.
    let tag = unsafe { size_word(value) };
    // 1 positive, 0 zero, -1 negative.
    let sign = 1 - (tag & SIGN_MASK) as i64;
    match tag >> NON_SIZE_BITS {
        // SAFETY: one digit word (zero's is 0, and its sign 0 anyway).
        0 | 1 => Some(sign * unsafe { magnitude(value, false) }),
        // SAFETY: two digit words.
        2 => Some(sign * unsafe { magnitude(value, true) }),
        _ => None,
    }
}

//! The dict key cache: the strs of recently decoded short dict keys, so that the same key read
//! again (every object of a JSON array of objects repeats its keys) is the same str, with its
//! hash already computed, which the dict insertion reuses. orjson keeps such a cache (2,048
//! entries), jiter one too.
//!
//! The cache is direct-mapped: a key's bytes pick one of [`SLOTS`] entries, which holds the
//! bytes of the key it caches (up to [`MAX_LEN`], padded with zeros) and the str. A lookup is a
//! hash of at most three 8-byte words and a comparison of as many: no call, no thread-local
//! access. The table is one static, used only with the GIL held (its functions take the
//! `Python` token): polycodec refuses free-threaded builds (`src/lib.rs`) and, as every PyO3
//! module, loads in the main interpreter only, so one table serves every thread in turn.

use std::cell::UnsafeCell;

use pyo3::ffi;
use pyo3::prelude::*;

use super::Obj;

/// The number of entries (a power of two).
const SLOTS: usize = 2048;
/// The longest key cached, in bytes.
pub const MAX_LEN: usize = 24;

/// One cached key: its UTF-8 bytes and its str (a strong reference), or an empty entry.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Entry {
    /// The key's bytes, zeros after its length.
    bytes: [u8; MAX_LEN],
    /// The key's length in bytes; 0 for an empty entry (an empty key is never cached).
    len: u32,
    key: *mut ffi::PyObject,
}

const EMPTY: Entry = Entry {
    bytes: [0; MAX_LEN],
    len: 0,
    key: std::ptr::null_mut(),
};

struct Table(UnsafeCell<[Entry; SLOTS]>);

// SAFETY: the table is only read and written by `cached_key`, with the GIL held (it takes the
// `Python` token); polycodec builds refuse free-threaded interpreters, so the GIL serialises
// every access.
unsafe impl Sync for Table {}

static TABLE: Table = Table(UnsafeCell::new([EMPTY; SLOTS]));

/// 8 bytes of `bytes` from `at` as a little-endian word (the caller keeps `at + 8` in bounds).
#[inline(always)]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut eight = [0u8; 8];
    eight.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(eight)
}

/// Up to three words that hold every byte of `bytes` (2 to [`MAX_LEN`] long), by overlapping
/// loads: two keys of the same length are equal exactly when their words are.
#[inline(always)]
fn words(bytes: &[u8]) -> [u64; 3] {
    let len = bytes.len();
    if len >= 8 {
        let middle = if len > 16 { word(bytes, 8) } else { 0 };
        return [word(bytes, 0), word(bytes, len - 8), middle];
    }
    if len >= 4 {
        let half = |at: usize| {
            let mut four = [0u8; 4];
            four.copy_from_slice(&bytes[at..at + 4]);
            u64::from(u32::from_le_bytes(four))
        };
        return [half(0), half(len - 4), 0];
    }
    // 2 or 3 bytes: the first, the second and the last.
    let small = u64::from(bytes[0]) | u64::from(bytes[1]) << 8 | u64::from(bytes[len - 1]) << 16;
    [small, 0, 0]
}

/// The str of dict key `bytes` (valid UTF-8, `ascii` when every byte is), from the cache when
/// the same key was cached, else made and cached.
#[inline]
pub fn cached_key<'py>(py: Python<'py>, bytes: &[u8], ascii: bool) -> PyResult<Obj<'py>> {
    let len = bytes.len();
    if !(2..=MAX_LEN).contains(&len) {
        // An empty or one-character key is one of CPython's shared strs already.
        return super::new_str(py, bytes, ascii);
    }
    let [a, b, c] = words(bytes);
    let mixed = (a ^ b.rotate_left(29) ^ c.rotate_left(47) ^ (len as u64) << 56)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let slot = (mixed >> (64 - SLOTS.trailing_zeros())) as usize;
    // SAFETY: the GIL is held (the `Python` token) and no Python code runs while the entry is
    // read, so nothing else touches the table; `slot` is below SLOTS (the top bits of a u64).
    let entry = unsafe { *TABLE.0.get().cast::<Entry>().add(slot) };
    if entry.len as usize == len && words(&entry.bytes[..len]) == [a, b, c] {
        // SAFETY: the entry holds a strong reference to a live str; the new one is returned.
        return Ok(unsafe { Bound::from_borrowed_ptr(py, entry.key) });
    }
    let key = super::new_str(py, bytes, ascii)?;
    let mut fresh = Entry {
        bytes: [0; MAX_LEN],
        len: len as u32,
        key: key.clone().into_ptr(),
    };
    fresh.bytes[..len].copy_from_slice(bytes);
    // SAFETY: as above; making the str may have run the garbage collector (and so any Python
    // code, even a decode that used the table), so the entry is read again here, replaced
    // with no Python code in between, and its old str released only after.
    let old = unsafe {
        let slot = TABLE.0.get().cast::<Entry>().add(slot);
        std::mem::replace(&mut *slot, fresh)
    };
    if !old.key.is_null() {
        // SAFETY: the reference the entry held, now no longer in the table.
        unsafe { ffi::Py_DECREF(old.key) };
    }
    Ok(key)
}

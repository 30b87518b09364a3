//! The dict key cache: the strs of recently decoded short dict keys, so that the same key read
//! again (every object of a JSON array of objects repeats its keys) is the same str, with its
//! hash already computed, which the dict insertion reuses. orjson keeps such a cache (2,048
//! entries), jiter one too.
//!
//! The cache is two-way set-associative: a key's bytes pick a pair of its [`SLOTS`] entries
//! (in a direct-mapped table of this size, two of eighty keys share an entry more often than
//! not, and evict each other on every object), and an entry holds the key it caches (up to [`MAX_LEN`] bytes, as three
//! words) and the str. A lookup is a hash of
//! those words and a comparison of as many, inline: no call, no thread-local access. The table is one static, used only with the GIL held (its functions take the
//! `Python` token): polycodec refuses free-threaded builds (`src/lib.rs`) and, as every PyO3
//! module, loads in the main interpreter only, so one table serves every thread in turn.

use std::cell::UnsafeCell;

use pyo3::ffi;
use pyo3::prelude::*;

use super::Obj;

/// The number of entries (a power of two).
const SLOTS: usize = 4096;
/// The longest key cached, in bytes.
pub const MAX_LEN: usize = 24;

/// One cached key: its bytes as [`words`] gives them, its length and its str (a strong
/// reference), or an empty entry.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    words: [u64; 3],
    /// The key's length in bytes; 0 for an empty entry (an empty key is never cached).
    len: usize,
    key: *mut ffi::PyObject,
}

const EMPTY: Entry = Entry {
    words: [0; 3],
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
#[inline(always)]
pub fn cached_key<'py>(py: Python<'py>, bytes: &[u8], ascii: bool) -> PyResult<Obj<'py>> {
    let len = bytes.len();
    if !(2..=MAX_LEN).contains(&len) {
        // An empty or one-character key is one of CPython's shared strs already.
        return super::new_str(py, bytes, ascii);
    }
    let words = words(bytes);
    let [a, b, c] = words;
    // Each word multiplied by its own odd constant, then the high bits folded down and mixed
    // again, so that every byte of a short key moves the top bits the set is taken from.
    let mixed = (a ^ (len as u64) << 56).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ c.wrapping_mul(0x1656_67B1_9E37_79F9);
    let mixed = (mixed ^ mixed >> 29).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    // The pair of entries the key may be in.
    let set = (mixed >> (64 - SLOTS.trailing_zeros())) as usize & !1;
    // SAFETY: the GIL is held (the `Python` token) and no Python code runs while the entries
    // are read, so nothing else touches the table; `set + 1` is below SLOTS.
    let pair = unsafe { &*TABLE.0.get().cast::<[Entry; 2]>().add(set / 2) };
    for entry in pair {
        if entry.len == len && entry.words == words {
            // SAFETY: the entry holds a strong reference to a live str; a new one is returned.
            return Ok(unsafe { Bound::from_borrowed_ptr(py, entry.key) });
        }
    }
    cache_key(py, bytes, ascii, set, words)
}

/// Makes the str of a key the cache lacks, and caches it first in the pair of entries at
/// `set` (the entry there moves second, and the second one leaves the cache).
#[cold]
#[inline(never)]
fn cache_key<'py>(
    py: Python<'py>,
    bytes: &[u8],
    ascii: bool,
    set: usize,
    words: [u64; 3],
) -> PyResult<Obj<'py>> {
    let key = super::new_str(py, bytes, ascii)?;
    let fresh = Entry {
        words,
        len: bytes.len(),
        key: key.clone().into_ptr(),
    };
    // SAFETY: as in `cached_key`; making the str may have run the garbage collector (and so
    // any Python code, even a decode that used the table), so the entries are read again here,
    // replaced with no Python code in between, and the str leaving released only after.
    let old = unsafe {
        let pair = &mut *TABLE.0.get().cast::<[Entry; 2]>().add(set / 2);
        let first = std::mem::replace(&mut pair[0], fresh);
        std::mem::replace(&mut pair[1], first)
    };
    if !old.key.is_null() {
        // SAFETY: the reference the entry held, now no longer in the table.
        unsafe { ffi::Py_DECREF(old.key) };
    }
    Ok(key)
}

//! Room in an output buffer for a large write, made fallibly by writers that return nothing:
//! a failed `Vec` growth would abort the process (`handle_alloc_error`). No Python here: the
//! extension turns the flag it leaves into a MemoryError.

use std::cell::Cell;

std::thread_local! {
    /// Set when an output buffer could not grow; taken after each encode by
    /// `errors::output_result`, which turns it into a MemoryError.
    static OUTPUT_FAILED: Cell<bool> = const { Cell::new(false) };
}

/// From this size on, writers that otherwise let the buffer grow as it goes reserve fallibly.
pub const LARGE: usize = 4096;

/// Makes room in `out` for `additional` more bytes (one str's or bytes' worth: called once per
/// large write, not per byte). `false` when it could not grow: the writer then writes nothing
/// and the encode ends in a MemoryError.
#[inline]
pub fn output_room(out: &mut Vec<u8>, additional: usize) -> bool {
    if out.capacity() - out.len() >= additional {
        return true;
    }
    output_grow(out, additional)
}

#[cold]
#[inline(never)]
fn output_grow(out: &mut Vec<u8>, additional: usize) -> bool {
    if out.try_reserve(additional).is_ok() {
        return true;
    }
    OUTPUT_FAILED.with(|flag| flag.set(true));
    false
}

/// Whether an output buffer could not grow since the last call (and clears the flag).
pub fn take_output_failure() -> bool {
    OUTPUT_FAILED.with(|flag| flag.replace(false))
}

//! How deep a value may nest, and how each level gets the stack it needs: a leaf that every
//! layer (the CPython helpers, the codecs, the value conversions) uses without depending on
//! each other.

/// The nesting depth past which decoders and encoders stop with an error.
pub const MAX_DEPTH: usize = 1024;

/// Runs the nesting level at `depth` of a decoder or encoder. A level takes 1-2 KiB of stack, so
/// 1024 of them do not fit every thread (Windows gives its main thread 1 MiB). Every 16 levels
/// the remaining stack is checked, and when less than a red zone (room for well over 16 more
/// levels) is left, the deeper levels continue on a stack segment allocated on the heap.
/// Shallow values, the common case, never pay for the check.
///
/// Under AddressSanitizer (`scripts/asan`) frames are several times larger (every local gets
/// redzones), and 16 levels of the pickle decoder overflowed a 128 KiB red zone on the 8 MiB
/// main stack: that build keeps 1 MiB.
#[inline]
pub fn nested<R>(depth: usize, level: impl FnOnce() -> R) -> R {
    const RED_ZONE: usize = if cfg!(polycodec_asan) {
        1024 * 1024
    } else {
        128 * 1024
    };
    const SEGMENT: usize = 2 * 1024 * 1024;
    if nested_runs_directly(depth) {
        return level();
    }
    stacker::maybe_grow(RED_ZONE, SEGMENT, level)
}

/// Whether [`nested`] runs the level at `depth` directly, with no stack check: a caller that
/// keeps the check out of line calls `nested` only when this is false.
#[inline(always)]
pub fn nested_runs_directly(depth: usize) -> bool {
    const CHECK_EVERY: usize = 16;
    depth % CHECK_EVERY != CHECK_EVERY - 1
}

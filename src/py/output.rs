//! A `bytes` object filled in pieces, for encoders whose output is large.
//!
//! The byte encoders write into a reused per-thread `Vec` and copy the finished output into a
//! new `bytes` object. For a large output (`encode_many` of a hundred records: 100-200 KB) that
//! copy reads the whole buffer back, long after it left the L1 cache, and a buffer over the
//! kept size is even allocated afresh for every call: about 4,000 read and 6,000 write misses
//! per call of the hierarchy model's `encode_many`. [`BytesBuilder`] takes the output a
//! stretch at a time instead (the encoder hands over each ~2 KiB it has finished, between
//! two values), so what is copied is still in the cache and the `Vec` stays small; the
//! `bytes` object is allocated at the size of the codec's previous output and grown like
//! msgspec's (`_PyBytes_Resize`, by half) when that is short. The object is never seen by
//! anyone before [`BytesBuilder::finish`] returns it: dropped unfinished (an encode error), it
//! is freed.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::Fault;

type Result<T> = std::result::Result<T, Fault>;

extern "C" {
    /// CPython's own resize of a `bytes` object nobody else references (public in its C API
    /// headers, not exported by pyo3-ffi): 0, or -1 with the object freed, the pointer set to
    /// NULL and MemoryError raised.
    fn _PyBytes_Resize(bytes: *mut *mut ffi::PyObject, size: ffi::Py_ssize_t) -> std::ffi::c_int;
}

/// A `bytes` object under construction (none allocated until the first [`Self::append`]).
pub struct BytesBuilder<'py> {
    py: Python<'py>,
    /// The object, owned here (refcount 1, never exposed), or null.
    object: *mut ffi::PyObject,
    /// Bytes written into `object` so far.
    len: usize,
    /// Its size as allocated (its `ob_size` until [`Self::finish`] sets the real one).
    capacity: usize,
    /// The size to allocate first.
    hint: usize,
    /// The longest stretch taken (the finishing tail included): what the encoder's buffer had
    /// to hold, to size the next call's buffer in one step ([`buffer_for`]).
    longest: usize,
}

impl<'py> BytesBuilder<'py> {
    /// A builder whose object will first be allocated for `hint` bytes (or what the first
    /// stretch needs, if more).
    pub fn new(py: Python<'py>, hint: usize) -> Self {
        BytesBuilder {
            py,
            object: std::ptr::null_mut(),
            len: 0,
            capacity: 0,
            hint,
            longest: 0,
        }
    }

    /// Bytes taken so far.
    pub fn taken(&self) -> usize {
        self.len
    }

    /// The longest stretch taken so far.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Appends `data` to the object, allocating or growing it first when it is short.
    pub fn append(&mut self, data: &[u8]) -> Result<()> {
        let needed = self
            .len
            .checked_add(data.len())
            .ok_or(Fault::OutOfMemory("the encoded output"))?;
        if needed > self.capacity {
            self.grow(needed)?;
        }
        // SAFETY: `object` is a bytes object of `capacity` >= `len + data.len()` bytes that only
        // this builder references; `data` cannot overlap it (the object was never exposed).
        unsafe {
            let start = ffi::PyBytes_AS_STRING(self.object)
                .cast_mut()
                .cast::<u8>()
                .add(self.len);
            std::ptr::copy_nonoverlapping(data.as_ptr(), start, data.len());
        }
        self.len = needed;
        self.longest = self.longest.max(data.len());
        Ok(())
    }

    /// Makes room for `needed` bytes: the first object at the hint (or `needed`), a later one
    /// half as large again (or `needed`), as msgspec grows its output.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, needed: usize) -> Result<()> {
        let size = if self.object.is_null() {
            needed.max(self.hint)
        } else {
            needed.max(self.capacity.saturating_add(self.capacity / 2))
        };
        let size = ffi::Py_ssize_t::try_from(size)
            .map_err(|_| Fault::OutOfMemory("the encoded output"))?;
        if self.object.is_null() {
            // SAFETY: a new, uninitialised bytes object of `size` bytes, or NULL with an
            // exception set.
            let object = unsafe { ffi::PyBytes_FromStringAndSize(std::ptr::null(), size) };
            if object.is_null() {
                return Err(Fault::Python(PyErr::fetch(self.py)));
            }
            self.object = object;
        } else {
            // SAFETY: `object` is a bytes object this builder alone references (refcount 1), as
            // `_PyBytes_Resize` requires; on failure it frees the object, sets the pointer to
            // NULL and raises MemoryError.
            if unsafe { _PyBytes_Resize(&mut self.object, size) } != 0 {
                self.object = std::ptr::null_mut();
                return Err(Fault::Python(PyErr::fetch(self.py)));
            }
        }
        self.capacity = size as usize;
        Ok(())
    }

    /// The finished object: what was taken, then `tail`; at its exact size (shrunk when the
    /// allocation was larger).
    pub fn finish(mut self, tail: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        if self.object.is_null() {
            return super::new_bytes(self.py, tail);
        }
        self.append(tail).map_err(|e| e.into_pyerr(self.py))?;
        if self.len != self.capacity {
            // SAFETY: as in `grow` (refcount 1, never exposed); shrinking to `len` keeps the
            // bytes written.
            if unsafe { _PyBytes_Resize(&mut self.object, self.len as ffi::Py_ssize_t) } != 0 {
                self.object = std::ptr::null_mut();
                return Err(PyErr::fetch(self.py));
            }
        }
        let object = std::mem::replace(&mut self.object, std::ptr::null_mut());
        // SAFETY: a bytes object whose every byte has been written, owned here: its reference
        // passes to the caller.
        Ok(unsafe { Bound::from_owned_ptr(self.py, object).cast_into_unchecked() })
    }
}

/// An encoder's output buffer for `capacity` bytes: `kept` (the thread's reused buffer),
/// emptied, when it is that large already, else a new one of that size in one allocation (not
/// `reserve`, which would copy the old contents; nor growth by doubling as the encoder writes,
/// which copies the output again at every step). `capacity` is what the codec's previous call
/// needed, so a codec whose output (or `encode_many` item) is larger than the buffer the thread
/// keeps allocates once per call instead of regrowing.
#[inline]
pub fn buffer_for(mut kept: Vec<u8>, capacity: usize) -> Vec<u8> {
    kept.clear();
    if kept.capacity() < capacity {
        return Vec::with_capacity(capacity);
    }
    kept
}

impl BytesBuilder<'_> {
    /// Replaces the first `old_length` bytes taken with `front`, moving what follows when the
    /// new front is longer or shorter (rare: see `codecs::OutputSink`).
    #[cold]
    #[inline(never)]
    pub fn replace_front(&mut self, old_length: usize, front: &[u8]) -> Result<()> {
        assert!(old_length <= self.len, "the front was handed over");
        let rest = self.len - old_length;
        let needed = front
            .len()
            .checked_add(rest)
            .ok_or(Fault::OutOfMemory("the encoded output"))?;
        if needed > self.capacity {
            self.grow(needed)?;
        }
        // SAFETY: `object` holds `len` written bytes and room for `capacity >= needed`; the
        // rest moves within that allocation (`copy` allows overlap), then the front is written
        // before it. Only this builder references the object.
        unsafe {
            let data = ffi::PyBytes_AS_STRING(self.object).cast_mut().cast::<u8>();
            std::ptr::copy(data.add(old_length), data.add(front.len()), rest);
            std::ptr::copy_nonoverlapping(front.as_ptr(), data, front.len());
        }
        self.len = needed;
        Ok(())
    }
}

impl Drop for BytesBuilder<'_> {
    /// An unfinished object (the encode failed) is freed.
    fn drop(&mut self) {
        if !self.object.is_null() {
            // SAFETY: the builder's own reference to an object never exposed; the GIL is held
            // (`py`).
            unsafe { ffi::Py_DECREF(self.object) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_for_keeps_a_large_enough_buffer_emptied() {
        let mut kept = Vec::with_capacity(4096);
        kept.extend_from_slice(b"old output");
        let pointer = kept.as_ptr();
        let buffer = buffer_for(kept, 1000);
        assert!(buffer.is_empty());
        assert_eq!(buffer.as_ptr(), pointer);
    }

    #[test]
    fn buffer_for_a_large_item_allocates_it_once_and_never_regrows() {
        // The thread keeps at most 64 KiB; an encode_many item of 100 KB needs more. Sized from
        // the previous call, the buffer holds the whole item without moving.
        let kept = Vec::with_capacity(1 << 16);
        let mut buffer = buffer_for(kept, 100_000);
        assert!(buffer.capacity() >= 100_000);
        let pointer = buffer.as_ptr();
        for _ in 0..100 {
            buffer.extend_from_slice(&[b'x'; 1000]);
        }
        assert_eq!(buffer.as_ptr(), pointer, "the buffer regrew");
        assert_eq!(buffer.len(), 100_000);
    }

    #[test]
    fn bytes_builder_reports_the_longest_stretch_and_the_whole_output() {
        Python::initialize();
        Python::attach(|py| {
            let mut builder = BytesBuilder::new(py, 16);
            builder.append(&[b'a'; 3000]).unwrap();
            builder.append(&[b'b'; 70_000]).unwrap();
            builder.append(&[b'c'; 2500]).unwrap();
            assert_eq!(builder.longest(), 70_000);
            assert_eq!(builder.taken(), 75_500);
            let bytes = builder.finish(b"]").unwrap();
            let data = bytes.as_bytes();
            assert_eq!(data.len(), 75_501);
            assert!(data[..3000].iter().all(|&b| b == b'a'));
            assert!(data[3000..73_000].iter().all(|&b| b == b'b'));
            assert!(data[73_000..75_500].iter().all(|&b| b == b'c'));
            assert_eq!(data[75_500], b']');
        });
    }
}

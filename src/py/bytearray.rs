//! A caller's `bytearray` as an encoder's output (`Codec.encode_into`, `encode_many_into`): the
//! encoded bytes go into it from an offset on, and it ends at their end, as msgspec's
//! `Encoder.encode_into` leaves it. The buffer is only grown while output arrives (never shrunk
//! and grown again, which would reallocate it), and set to its exact length once, at the end.
//!
//! User code run by the encoder (an extension's `encode`, a `__str__`) may resize the buffer,
//! export it (a memoryview) or start another `encode_into` on it in the meantime. The buffer's
//! length and storage are checked before every write: a buffer changed by anyone else since
//! the call's last write is a `BufferError` (its bytes from the offset on are not the output,
//! and growing it again would expose uninitialised memory), and so is a second call on a buffer
//! one is writing; a resize the buffer refuses is the `BufferError` CPython raises.

use std::sync::Mutex;

use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;

use super::Fault;

type Result<T> = std::result::Result<T, Fault>;

/// The buffers an `encode_into` or `encode_many_into` call is writing now, by address.
static IN_USE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// The output of one `encode_into` call.
pub struct BytearrayOutput<'a, 'py> {
    buffer: &'a Bound<'py, PyByteArray>,
    /// Where the output starts in the buffer.
    start: usize,
    /// Bytes of output written so far, from `start` on.
    written: usize,
    /// The buffer's length before the call, which a failed call leaves it at.
    original: usize,
    /// The buffer's length and storage as this call last left them.
    length: usize,
    storage: *mut u8,
}

impl<'a, 'py> BytearrayOutput<'a, 'py> {
    /// Output into `buffer` from `offset` on: `-1` is the buffer's end; past the end, the gap
    /// is filled with zero bytes, as msgspec fills it.
    pub fn new(buffer: &'a Bound<'py, PyByteArray>, offset: isize) -> PyResult<Self> {
        let original = buffer.len();
        let start = match offset {
            -1 => original,
            offset if offset >= 0 => offset as usize,
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "offset must be >= -1",
                ))
            }
        };
        let address = buffer.as_ptr() as usize;
        let mut in_use = IN_USE.lock().expect("buffers in use");
        if in_use.contains(&address) {
            return Err(PyBufferError::new_err(
                "the bytearray is being written by another encode_into or encode_many_into \
                 call (from code that call ran): one call at a time per buffer",
            ));
        }
        in_use.push(address);
        Ok(BytearrayOutput {
            buffer,
            start,
            written: 0,
            original,
            length: original,
            storage: buffer.data(),
        })
    }

    /// Refuses a buffer that someone else resized or reallocated since this call last wrote.
    fn unchanged(&self) -> Result<()> {
        if self.buffer.len() == self.length && self.buffer.data() == self.storage {
            return Ok(());
        }
        Err(Fault::Python(PyBufferError::new_err(
            "the bytearray was resized while encode_into or encode_many_into wrote to it (by \
             code the encoder ran, such as an extension's encode): the output is abandoned",
        )))
    }

    /// The buffer's storage, at least `needed` bytes long (grown, never shrunk, here), with
    /// any gap between its old end and `start` zeroed.
    fn storage(&mut self, needed: usize) -> Result<*mut u8> {
        self.unchanged()?;
        let length = self.length;
        if length < needed {
            self.buffer.resize(needed)?;
            if length < self.start {
                // SAFETY: the buffer now holds `needed > start` bytes (the GIL is held and no
                // Python code runs between the resize and this write); the bytes between its
                // old end and `start` are new and uninitialised.
                unsafe {
                    std::ptr::write_bytes(self.buffer.data().add(length), 0, self.start - length)
                };
            }
            self.length = needed;
            self.storage = self.buffer.data();
        }
        Ok(self.storage)
    }

    /// Appends `data` to the output.
    pub fn append(&mut self, data: &[u8]) -> Result<()> {
        let end = self.start + self.written;
        let needed = end
            .checked_add(data.len())
            .ok_or(Fault::OutOfMemory("the encoded output"))?;
        let storage = self.storage(needed)?;
        // SAFETY: the buffer holds at least `needed` bytes (checked by `storage`, with its
        // length and storage as this call left them, and no Python code run since), and `data`
        // is the encoder's own memory, not the buffer's.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), storage.add(end), data.len()) };
        self.written += data.len();
        Ok(())
    }

    /// Appends `tail` and sets the buffer's length to the output's end (or, when the buffer
    /// refuses, back to its length before the call).
    pub fn finish(mut self, tail: &[u8]) -> Result<()> {
        let result = self.append(tail).and_then(|()| {
            // An output that starts past a buffer's end still needs its zero gap when it
            // wrote nothing: `storage` makes it.
            self.storage(self.start)?;
            Ok(self.buffer.resize(self.start + self.written)?)
        });
        if result.is_err() {
            self.abandon();
        }
        result
    }

    /// Gives the buffer its length from before the call back (after a failed encode; the bytes
    /// from `start` on may have been overwritten). Only ever shrinks it: a buffer that user
    /// code made shorter meanwhile keeps its length, since growing it would add bytes nobody
    /// wrote.
    pub fn abandon(self) {
        if self.buffer.len() > self.original {
            // A buffer that cannot be resized now (exported by user code meanwhile) keeps its
            // length: the encode's own error is the one raised.
            let _ = self.buffer.resize(self.original);
        }
    }
}

impl Drop for BytearrayOutput<'_, '_> {
    fn drop(&mut self) {
        let address = self.buffer.as_ptr() as usize;
        let mut in_use = IN_USE.lock().expect("buffers in use");
        if let Some(at) = in_use.iter().position(|&a| a == address) {
            in_use.swap_remove(at);
        }
    }
}

impl BytearrayOutput<'_, '_> {
    /// Replaces the first `old_length` bytes written with `front`, moving what follows when the
    /// new front is longer or shorter (rare: see `codecs::OutputSink`).
    #[cold]
    #[inline(never)]
    pub fn replace_front(&mut self, old_length: usize, front: &[u8]) -> Result<()> {
        assert!(old_length <= self.written, "the front was handed over");
        let rest = self.written - old_length;
        let needed = front
            .len()
            .checked_add(rest)
            .and_then(|length| length.checked_add(self.start))
            .ok_or(Fault::OutOfMemory("the encoded output"))?;
        let storage = self.storage(needed)?;
        // SAFETY: the buffer holds the `written` bytes from `start` on (`storage` checked that
        // nobody else changed it since they were written) and room for `needed` (no Python code
        // run since); the rest moves within it (`copy` allows overlap), then the front is
        // written before it.
        unsafe {
            let data = storage.add(self.start);
            std::ptr::copy(data.add(old_length), data.add(front.len()), rest);
            std::ptr::copy_nonoverlapping(front.as_ptr(), data, front.len());
        }
        self.written = needed - self.start;
        Ok(())
    }
}

/// A `bytearray` argument, or the `TypeError` msgspec raises for anything else.
pub fn bytearray_argument<'a, 'py>(
    buffer: &'a Bound<'py, PyAny>,
) -> PyResult<&'a Bound<'py, PyByteArray>> {
    buffer.cast::<PyByteArray>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "buffer must be a bytearray, got {}",
            buffer
                .get_type()
                .qualname()
                .map(|name| name.to_string())
                .unwrap_or_default()
        ))
    })
}

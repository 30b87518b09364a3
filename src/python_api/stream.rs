//! Streams: values one after another in each format's stream form, decoded as their bytes
//! arrive in chunks that may split anywhere.
//!
//! | format  | stream form                                                  | a unit ends at     |
//! |---------|--------------------------------------------------------------|--------------------|
//! | json    | JSON Lines: one compact value per line, `\n` after each      | the next `\n`      |
//! | msgpack | values back to back                                          | its last item      |
//! | pickle  | pickles back to back (each loadable by `pickle.load` in turn) | its STOP opcode    |
//! | avro    | an object container file                                     | the header / block |
//!
//! The core is a [`Framer`] per format: a resumable finder of where the next unit ends that
//! never decodes anything, so a unit's bytes are only decoded once complete, and a decoder fed
//! one byte at a time returns exactly what one call with the whole buffer returns.
//!
//! Bytes are read in place from the caller's `bytes` chunk; only the tail of an incomplete unit
//! is copied into the decoder's buffer. Once the buffer holds bytes, later chunks are appended
//! to it (each byte is copied once) and decoded from it in place. The buffer grows with the
//! bytes that arrive, never with a length the input declares (a declared length is a promise
//! of the sender's, not a size), and fallibly: memory running out is a MemoryError.

use std::collections::VecDeque;

use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyString};
use pyo3::{PyTraverseError, PyVisit};

use polycodec_formats::avro::frame::{self, Extent};
use polycodec_formats::frame::{Fault, Malformed};
use polycodec_formats::msgpack::frame::ValueFramer;
use polycodec_formats::pickle::frame::PickleFramer;

use super::codec_object::Codec;
use crate::codecs::avro::stream::{Container, OpenBlock, StreamHeader};
use crate::errors::{self, Code, Error, ErrorKind, Failure, Result};
use crate::py::{GcPause, Obj};
use crate::shape;

/// Values per Avro block in `write_file` unless `sync_interval=` says otherwise.
pub const DEFAULT_SYNC_INTERVAL: usize = 4000;

/// Bytes `iter_file` asks the file for at a time.
pub const DEFAULT_CHUNK_SIZE: usize = 64 * 1024;

/// The fewest values one `feed` or `finish` call may build from Avro blocks; a call may build
/// one per byte it is given beyond that. A block's records past the call's budget stay in the
/// block, undecoded, for the next call (issue 38, item 13: 261 KB of deflate blocks of
/// `boolean` records are 268M values).
pub const VALUES_PER_CALL: usize = 65_536;

/// The most room a decoder keeps in its buffer between values.
const KEPT_CAPACITY: usize = 64 * 1024;

/// `write_file` hands the file its bytes once this many have been encoded (Avro: after every
/// block).
const WRITE_CHUNK: usize = 64 * 1024;

/// What a framer found at the start of the unconsumed input.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// The unit is not complete yet.
    Need,
    /// `n` bytes that hold no value (a blank line).
    Skip(usize),
    /// One value of `n` bytes.
    Value(usize),
    /// Avro: the container header, `n` bytes.
    Header(usize),
    /// Avro: one block of `n` bytes.
    Block(usize),
}

type Framed = std::result::Result<Step, Malformed>;

/// A resumable finder of unit boundaries. Its state is relative to the start of the current
/// unit, which is where the caller's data starts on every call.
enum Framer {
    /// JSON Lines: how far the current line has been searched for `\n`.
    Lines { scanned: usize },
    /// MessagePack: the byte layer's framer.
    MessagePack(ValueFramer),
    /// Pickle: the byte layer's framer.
    Pickle(PickleFramer),
    /// Avro container: the header once read; `wait`, a length the unit is known to need.
    Avro {
        header: Option<StreamHeader>,
        wait: usize,
    },
}

impl Framer {
    fn for_format(format: &str) -> Framer {
        match format {
            "json" => Framer::Lines { scanned: 0 },
            "msgpack" => Framer::MessagePack(ValueFramer::default()),
            "pickle" => Framer::Pickle(PickleFramer::default()),
            _ => Framer::Avro {
                header: None,
                wait: 0,
            },
        }
    }

    fn next(&mut self, data: &[u8]) -> Framed {
        match self {
            Framer::Lines { scanned } => {
                let from = (*scanned).min(data.len());
                match data[from..].iter().position(|&b| b == b'\n') {
                    None => {
                        *scanned = data.len();
                        Ok(Step::Need)
                    }
                    Some(found) => {
                        let end = from + found + 1;
                        *scanned = 0;
                        Ok(if is_blank(&data[..end]) {
                            Step::Skip(end)
                        } else {
                            Step::Value(end)
                        })
                    }
                }
            }
            Framer::MessagePack(framer) => Ok(framer.next(data)?.map_or(Step::Need, Step::Value)),
            Framer::Pickle(framer) => Ok(framer.next(data)?.map_or(Step::Need, Step::Value)),
            Framer::Avro { header, wait } => {
                if data.len() < *wait {
                    return Ok(Step::Need);
                }
                let found = if header.is_none() {
                    frame::header_len(data)?
                } else {
                    frame::block_len(data)?
                };
                match found {
                    Extent::Short(at_least) => {
                        *wait = at_least;
                        Ok(Step::Need)
                    }
                    Extent::Complete(n) => {
                        *wait = 0;
                        Ok(if header.is_none() {
                            Step::Header(n)
                        } else {
                            Step::Block(n)
                        })
                    }
                }
            }
        }
    }
}

impl Framer {
    /// The code of the DecodeError for bytes this framer refused.
    fn code(&self, fault: Fault) -> Code {
        match (self, fault) {
            (_, Fault::NotTheFormat) => Code::DecodeError,
            (Framer::Lines { .. }, Fault::Malformed) => Code::JsonInvalid,
            (Framer::MessagePack(_), Fault::Malformed) => Code::MsgpackInvalid,
            (Framer::Pickle(_), Fault::Malformed) => Code::PickleInvalid,
            (Framer::Avro { .. }, Fault::Malformed) => Code::AvroInvalid,
        }
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// Why decoding stopped before the end of the data.
struct Stop {
    /// Bytes consumed (past the failed value when the stream can go on).
    consumed: usize,
    error: Error,
    index: u64,
    offset: u64,
    /// The stream cannot go on (malformed framing, a broken Avro block, truncation).
    fatal: bool,
}

impl Stop {
    /// A stop the stream cannot go on from: `error` at byte `offset` of the stream, after
    /// `index` values, with `consumed` bytes of the chunk taken.
    fn fatal(consumed: usize, error: Error, index: u64, offset: u64) -> Self {
        Stop {
            consumed,
            error,
            index,
            offset,
            fatal: true,
        }
    }
}

/// Decodes a stream fed in chunks: `feed` returns every value its chunk completes, `finish`
/// what remains at the end of the input. One per stream; not thread-safe.
#[pyclass(module = "polycodec")]
pub struct StreamDecoder {
    codec: Py<Codec>,
    framer: Framer,
    /// The bytes of the unit not complete yet, from `buf_start` on (the bytes before it are
    /// consumed, and dropped when the next chunk is appended).
    buf: Vec<u8>,
    buf_start: usize,
    /// The stream offset of the first byte not yet consumed.
    offset: u64,
    /// The values met so far (decoded or failed).
    index: u64,
    /// Set once the stream cannot go on: the message every later call raises.
    broken: Option<String>,
    finished: bool,
    /// Avro in `iter_file`: a block is opened, not decoded, and framing pauses until its
    /// records are taken one at a time ([`StreamDecoder::next_in_block`]).
    lazy_blocks: bool,
    /// The open block and its stream offset.
    block: Option<(OpenBlock, u64)>,
    /// The last call stopped at its budget of values with more ready (see [`VALUES_PER_CALL`]).
    ready: bool,
}

/// What one `feed` or `finish` call may still build from Avro blocks.
struct CallBudget {
    /// Values.
    values: usize,
    /// What the compressed blocks it opened have decompressed to (see
    /// `Avro::stream_budget`).
    decompressed: usize,
}

/// What the open block of a lazy decoder gave.
enum InBlock<'py> {
    Value(Obj<'py>),
    Failed(PyErr),
    /// The block has just been read to its end: the buffered bytes may hold more units.
    Ended,
    NoBlock,
}

impl StreamDecoder {
    /// The Avro container header, once read.
    fn header(&self) -> Option<&StreamHeader> {
        match &self.framer {
            Framer::Avro {
                header: Some(header),
                ..
            } => Some(header),
            _ => None,
        }
    }

    /// An AttributeError for a header property of a stream that has no header.
    fn avro_only(&self) -> PyResult<()> {
        match self.framer {
            Framer::Avro { .. } => Ok(()),
            _ => Err(PyAttributeError::new_err(format!(
                "only an Avro container file has a header; this is a {:?} stream",
                self.codec.get().format
            ))),
        }
    }

    fn read_header_first(&self) -> PyResult<&StreamHeader> {
        self.header()
            .ok_or_else(|| PyValueError::new_err("the Avro container header has not been read"))
    }

    fn writer_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let header = self.read_header_first()?;
        // The header's schema was parsed when it was read: valid JSON, or a bare primitive
        // name (`long`), which the schema layer takes as that type.
        let text = String::from_utf8_lossy(header.schema());
        let trimmed = text.trim();
        if trimmed.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Ok(PyString::new(py, trimmed).into_any());
        }
        py.import("json")?.call_method1("loads", (text,))
    }

    fn container_codec(&self) -> PyResult<&'static str> {
        Ok(self.read_header_first()?.compression_name())
    }

    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let header = self.read_header_first()?;
        let dict = PyDict::new(py);
        for (key, value) in header.metadata() {
            dict.set_item(String::from_utf8_lossy(key), PyBytes::new(py, value))?;
        }
        Ok(dict)
    }

    pub fn create(codec: Py<Codec>) -> StreamDecoder {
        let framer = Framer::for_format(codec.get().format);
        StreamDecoder {
            codec,
            framer,
            buf: Vec::new(),
            buf_start: 0,
            offset: 0,
            index: 0,
            broken: None,
            finished: false,
            lazy_blocks: false,
            block: None,
            ready: false,
        }
    }

    /// Takes the open block's records into `out` while `budget` allows (not for a lazy
    /// decoder, whose records are taken one at a time): true once the block has ended, false
    /// when the budget ran out first. `consumed` is what the call has consumed, for a stop.
    #[allow(clippy::result_large_err)]
    fn drain_block<'py>(
        &mut self,
        py: Python<'py>,
        codec: &Codec,
        out: &mut Vec<Obj<'py>>,
        budget: &mut CallBudget,
        consumed: usize,
    ) -> std::result::Result<bool, Stop> {
        let Some((block, offset)) = &mut self.block else {
            return Ok(true);
        };
        let offset = *offset;
        let (
            Some(avro),
            Framer::Avro {
                header: Some(header),
                ..
            },
        ) = (codec.wire.as_avro(), &self.framer)
        else {
            unreachable!("only an Avro decoder opens blocks");
        };
        let ended = loop {
            // A block whose records are all taken is closed (and checked) at once, so that
            // `ready` never promises values that are not there.
            if block.left() == 0 {
                break avro
                    .stream_block_next(py, &codec.plan, header, block)
                    .map(|_| true);
            }
            if budget.values == 0 {
                break Ok(false);
            }
            let before = out.len();
            let taken = avro.stream_block_take(py, &codec.plan, header, block, budget.values, out);
            self.index += (out.len() - before) as u64;
            budget.values -= out.len() - before;
            if let Err(error) = taken {
                break Err(error);
            }
        };
        match ended {
            Ok(false) => {
                self.ready = true;
                Ok(false)
            }
            Ok(true) => {
                self.block = None;
                Ok(true)
            }
            Err(error) => {
                self.block = None;
                Err(Stop::fatal(consumed, error, self.index, offset))
            }
        }
    }

    /// The next record of the open block (lazy decoders only).
    fn next_in_block<'py>(&mut self, py: Python<'py>) -> InBlock<'py> {
        let Some((block, offset)) = &mut self.block else {
            return InBlock::NoBlock;
        };
        let offset = *offset;
        let codec_ref = self.codec.clone_ref(py);
        let codec = codec_ref.get();
        let (
            Some(avro),
            Framer::Avro {
                header: Some(header),
                ..
            },
        ) = (codec.wire.as_avro(), &self.framer)
        else {
            unreachable!("only an Avro decoder opens blocks");
        };
        let _pause = GcPause::new(py);
        match avro.stream_block_next(py, &codec.plan, header, block) {
            Ok(Some(value)) => {
                self.index += 1;
                InBlock::Value(value)
            }
            Ok(None) => {
                self.block = None;
                InBlock::Ended
            }
            Err(error) => {
                self.block = None;
                let stop = Stop::fatal(0, error, self.index, offset);
                InBlock::Failed(self.raise(py, stop))
            }
        }
    }

    /// Decodes every complete unit at the start of `data`; the number of bytes consumed.
    // A stop happens at most once per call, so its size costs nothing on the value path.
    #[allow(clippy::result_large_err)]
    fn run<'py>(
        &mut self,
        py: Python<'py>,
        codec: &Codec,
        data: &[u8],
        out: &mut Vec<Obj<'py>>,
        budget: &mut CallBudget,
    ) -> std::result::Result<usize, Stop> {
        let mut pos = 0usize;
        loop {
            let at = self.offset + pos as u64;
            let step = self.framer.next(&data[pos..]).map_err(|bad| {
                let offset = at + bad.offset as u64;
                Stop::fatal(
                    pos,
                    Error::decode(self.framer.code(bad.fault), bad.message),
                    self.index,
                    offset,
                )
            })?;
            match step {
                Step::Need => return Ok(pos),
                Step::Skip(n) => pos += n,
                Step::Value(n) => {
                    let unit = &data[pos..pos + n];
                    pos += n;
                    let index = self.index;
                    self.index += 1;
                    match codec.decode_unit(py, unit) {
                        Ok(value) => out.push(value),
                        Err(error) => {
                            return Err(Stop {
                                consumed: pos,
                                error,
                                index,
                                offset: at,
                                fatal: false,
                            })
                        }
                    }
                }
                Step::Header(n) => {
                    let unit = &data[pos..pos + n];
                    let avro = codec.wire.as_avro().expect("only Avro frames headers");
                    match avro.stream_header(&codec.plan, unit) {
                        Ok(read) => {
                            if let Framer::Avro { header, .. } = &mut self.framer {
                                *header = Some(read);
                            }
                        }
                        Err(error) => return Err(Stop::fatal(pos, error, self.index, at)),
                    }
                    pos += n;
                }
                Step::Block(n) => {
                    let unit = &data[pos..pos + n];
                    let avro = codec.wire.as_avro().expect("only Avro frames blocks");
                    let Framer::Avro {
                        header: Some(header),
                        ..
                    } = &self.framer
                    else {
                        unreachable!("a block is framed after the header");
                    };
                    if budget.values == 0 {
                        // The call's values are spent: the block waits, framed again next call.
                        self.ready = true;
                        return Ok(pos);
                    }
                    let limit = if self.lazy_blocks {
                        avro.block_budget()
                    } else {
                        avro.stream_budget(budget.decompressed)
                    };
                    let opened = avro.stream_block_open(py, &codec.plan, header, unit, limit);
                    pos += n;
                    match opened {
                        Ok(block) => {
                            budget.decompressed += block.inflated();
                            self.block = Some((block, at));
                        }
                        Err(error) => return Err(Stop::fatal(pos, error, self.index, at)),
                    }
                    if self.lazy_blocks || !self.drain_block(py, codec, out, budget, pos)? {
                        return Ok(pos);
                    }
                }
            }
        }
    }

    fn usable(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(message) = &self.broken {
            return Err(decode_error(
                py,
                format!("the stream cannot go on after: {message}"),
            ));
        }
        if self.finished {
            return Err(PyValueError::new_err("the stream decoder was finished"));
        }
        Ok(())
    }

    /// Feeds one chunk: the values it completes, and the error that stopped decoding, if any.
    pub fn feed_inner<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &[u8],
    ) -> (Vec<Obj<'py>>, Option<PyErr>) {
        if let Err(err) = self.usable(py) {
            return (Vec::new(), Some(err));
        }
        let codec_ref = self.codec.clone_ref(py);
        let codec = codec_ref.get();
        let _pause = GcPause::new(py);
        let mut out = Vec::new();
        let mut budget = CallBudget {
            values: chunk.len().max(VALUES_PER_CALL),
            decompressed: 0,
        };
        self.ready = false;
        // The records of a block an earlier call left open come first; when they spend the
        // budget, the chunk is only kept.
        let held = if self.lazy_blocks {
            Ok(true)
        } else {
            self.drain_block(py, codec, &mut out, &mut budget, 0)
        };
        let go_on = match held {
            Ok(go_on) => go_on,
            Err(stop) => return (out, Some(self.raise(py, stop))),
        };
        let mut buf = std::mem::take(&mut self.buf);
        let (result, kept) = if self.buf_start == buf.len() && go_on {
            if buf.capacity() > KEPT_CAPACITY {
                // A long value's room is given back once it is decoded.
                buf = Vec::new();
            }
            buf.clear();
            self.buf_start = 0;
            let result = self.run(py, codec, chunk, &mut out, &mut budget);
            let tail = &chunk[consumed(&result)..];
            (result, append(&mut buf, tail))
        } else {
            buf.drain(..self.buf_start);
            let kept = append(&mut buf, chunk);
            let result = match kept {
                Ok(()) if go_on => self.run(py, codec, &buf, &mut out, &mut budget),
                _ => Ok(0),
            };
            self.buf_start = consumed(&result);
            (result, kept)
        };
        self.offset += consumed(&result) as u64;
        self.buf = buf;
        let error = match (result, kept) {
            (Err(stop), Ok(())) => Some(self.raise(py, stop)),
            (_, Err(err)) => {
                // The chunk's bytes could not be kept: the stream has lost them.
                let message = "cannot allocate memory for the stream buffer".to_owned();
                self.broken = Some(message);
                self.buf = Vec::new();
                self.buf_start = 0;
                Some(err.into_pyerr(py, ErrorKind::Decode))
            }
            (Ok(_), Ok(())) => None,
        };
        (out, error)
    }

    /// The bytes held for the unit not complete yet.
    fn pending(&self) -> &[u8] {
        &self.buf[self.buf_start..]
    }

    /// The end of the input: the values that remain, and the error if a partial value is left.
    pub fn finish_inner<'py>(&mut self, py: Python<'py>) -> (Vec<Obj<'py>>, Option<PyErr>) {
        let (mut out, error) = self.feed_inner(py, b"");
        if error.is_none() && self.ready {
            // Nothing is lost: the values stay in the decoder, and this call's travel on the
            // error.
            let error = PyValueError::new_err(
                "more values are ready than one call returns (an Avro block of many records): \
                 take them with feed(b\"\") while the decoder's `ready` is true, then call \
                 finish()",
            );
            return (out, Some(error));
        }
        if error.is_some() || self.block.is_some() {
            // A lazy decoder's open block is read before the end is checked.
            return (out, error);
        }
        let codec_ref = self.codec.clone_ref(py);
        let codec = codec_ref.get();
        let mut rest = std::mem::take(&mut self.buf);
        rest.drain(..self.buf_start);
        self.buf_start = 0;
        let at = self.offset;
        let stop = match &self.framer {
            Framer::Lines { .. } if is_blank(&rest) => None,
            Framer::Lines { .. } => {
                // The last line may lack its newline.
                let _pause = GcPause::new(py);
                let index = self.index;
                self.index += 1;
                match codec.decode_unit(py, &rest) {
                    Ok(value) => {
                        out.push(value);
                        None
                    }
                    // The input has ended: nothing after it to go on with, so the stream
                    // ends here as it does for every format's truncation.
                    Err(error) => Some(Stop::fatal(rest.len(), error, index, at)),
                }
            }
            Framer::Avro { header: None, .. } if rest.is_empty() => {
                let error = Error::decode(
                    Code::DecodeError,
                    "empty input: an Avro object container file starts with Obj\\x01",
                );
                Some(Stop::fatal(0, error, self.index, at))
            }
            _ if rest.is_empty() => None,
            Framer::Avro { header: None, .. } => {
                // What `decode_many` says of the same bytes.
                let error = crate::codecs::avro::stream::header_error(&rest);
                Some(Stop::fatal(0, error, self.index, at))
            }
            _ => {
                let error = Error::decode(
                    Code::DecodeError,
                    format!(
                        "truncated stream: it ends {} bytes into a value",
                        rest.len()
                    ),
                );
                Some(Stop::fatal(0, error, self.index, at))
            }
        };
        self.offset += rest.len() as u64;
        match stop {
            None => {
                self.finished = true;
                (out, None)
            }
            Some(stop) => {
                let err = self.raise(py, stop);
                (out, Some(err))
            }
        }
    }

    /// The exception for `stop`; a fatal stop breaks the stream.
    fn raise(&mut self, py: Python<'_>, stop: Stop) -> PyErr {
        let mut error = stop.error;
        if let Failure::Message(_, _, message) = &mut error.failure {
            message.push_str(&format!(
                "; stream value {} at byte {}",
                stop.index, stop.offset
            ));
        }
        let err = error.into_pyerr(py, ErrorKind::Validation);
        let instance = err.value(py);
        let _ = instance.setattr("index", stop.index);
        let _ = instance.setattr("offset", stop.offset);
        if stop.fatal {
            // Without its " (at $...)": the later errors say where they are themselves.
            let text = instance.to_string();
            let path = instance
                .getattr("path")
                .map(|path| path.to_string())
                .unwrap_or_default();
            let message = text.strip_suffix(&format!(" (at {path})")).unwrap_or(&text);
            self.broken = Some(message.to_owned());
            self.ready = false;
            self.buf = Vec::new();
            self.buf_start = 0;
        }
        err
    }
}

/// Appends `bytes` to the stream buffer, growing it (amortised) only by what has arrived: a
/// MemoryError instead of an abort.
fn append(buf: &mut Vec<u8>, bytes: &[u8]) -> Result<()> {
    errors::reserve(buf, bytes.len(), "the stream buffer")?;
    buf.extend_from_slice(bytes);
    Ok(())
}

fn consumed(result: &std::result::Result<usize, Stop>) -> usize {
    match result {
        Ok(n) => *n,
        Err(stop) => stop.consumed,
    }
}

/// A `polycodec.DecodeError` with `message`.
fn decode_error(py: Python<'_>, message: String) -> PyErr {
    Error::decode(Code::DecodeError, message).into_pyerr(py, ErrorKind::Decode)
}

/// The bytes of a chunk: `bytes` in place, other bytes-like objects through `bytes(chunk)`.
fn chunk_bytes<'py>(chunk: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(bytes) = chunk.cast::<PyBytes>() {
        return Ok(bytes.clone());
    }
    if chunk.is_instance_of::<PyByteArray>() || chunk.is_instance_of::<PyMemoryView>() {
        let copied = chunk.py().get_type::<PyBytes>().call1((chunk,))?;
        return Ok(copied.cast_into::<PyBytes>()?);
    }
    Err(PyTypeError::new_err(format!(
        "expected bytes, bytearray or memoryview, got {}",
        chunk.get_type().qualname()?
    )))
}

/// The values completed before an error travel on it as `values`.
fn with_values<'py>(py: Python<'py>, err: PyErr, values: Vec<Obj<'py>>) -> PyErr {
    if let Ok(list) = value_list(py, values) {
        let _ = err.value(py).setattr("values", list);
    }
    err
}

/// The list `feed` and `finish` return. A list too large to allocate is a MemoryError (PyO3's
/// `PyList::new` panics), as a chunk of compressed Avro blocks can complete millions of values.
fn value_list<'py>(py: Python<'py>, values: Vec<Obj<'py>>) -> PyResult<Bound<'py, PyList>> {
    Ok(crate::py::new_list(py, values.into_iter())?.cast_into::<PyList>()?)
}

#[pymethods]
impl StreamDecoder {
    #[new]
    fn new(codec: Py<Codec>) -> Self {
        StreamDecoder::create(codec)
    }

    /// Decodes a chunk of the stream; returns every value it completes. Chunks may split the
    /// stream anywhere. An error carries the values completed before it as `values`.
    #[pyo3(signature = (chunk, /))]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let chunk = chunk_bytes(chunk)?;
        let (values, error) = self.feed_inner(py, chunk.as_bytes());
        match error {
            Some(err) => Err(with_values(py, err, values)),
            None => value_list(py, values),
        }
    }

    /// Ends the input: returns the values that remain; DecodeError if a partial value is left.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let (values, error) = self.finish_inner(py);
        match error {
            Some(err) => Err(with_values(py, err, values)),
            None => value_list(py, values),
        }
    }

    /// The codec this decoder decodes with.
    #[getter]
    fn codec(&self, py: Python<'_>) -> Py<Codec> {
        self.codec.clone_ref(py)
    }

    /// The bytes consumed so far (the stream offset of the first byte still buffered).
    #[getter]
    fn offset(&self) -> u64 {
        self.offset
    }

    /// The values met so far, decoded or failed.
    #[getter]
    fn index(&self) -> u64 {
        self.index
    }

    /// The bytes held for a value that is not complete yet.
    #[getter]
    fn buffered(&self) -> usize {
        self.pending().len()
    }

    /// Whether the last call stopped at its budget of values (an Avro block of many records)
    /// with more ready: `feed(b"")` returns them.
    #[getter]
    fn ready(&self) -> bool {
        self.ready
    }

    /// The writer schema of the Avro container header, as JSON values; None until the header
    /// has been fed.
    #[getter(writer_schema)]
    fn py_writer_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.avro_only()?;
        match self.header() {
            Some(_) => self.writer_schema(py),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The container's codec name; None until the header has been fed.
    #[getter(container_codec)]
    fn py_container_codec(&self) -> PyResult<Option<&'static str>> {
        self.avro_only()?;
        Ok(self.header().map(StreamHeader::compression_name))
    }

    /// The container's user metadata; None until the header has been fed.
    #[getter(metadata)]
    fn py_metadata<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.avro_only()?;
        match self.header() {
            Some(_) => self.metadata(py).map(Some),
            None => Ok(None),
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> std::result::Result<(), PyTraverseError> {
        visit.call(&self.codec)
    }
}

/// The iterator `Codec.iter_file` returns: reads the file a chunk at a time as values are
/// taken, so at most one chunk's (Avro: one block's) values are held.
#[pyclass(module = "polycodec")]
pub struct FileIter {
    decoder: StreamDecoder,
    fp: Py<PyAny>,
    chunk_size: usize,
    pending: VecDeque<Py<PyAny>>,
    error: Option<PyErr>,
    done: bool,
}

impl FileIter {
    pub fn create(codec: Py<Codec>, fp: Py<PyAny>, chunk_size: usize) -> PyResult<FileIter> {
        if chunk_size == 0 {
            return Err(PyValueError::new_err("chunk_size must be at least 1"));
        }
        let mut decoder = StreamDecoder::create(codec);
        decoder.lazy_blocks = true;
        Ok(FileIter {
            decoder,
            fp,
            chunk_size,
            pending: VecDeque::new(),
            error: None,
            done: false,
        })
    }
}

#[pymethods]
impl FileIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> std::result::Result<(), PyTraverseError> {
        visit.call(&self.decoder.codec)?;
        visit.call(&self.fp)?;
        for value in &self.pending {
            visit.call(value)?;
        }
        Ok(())
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        loop {
            if let Some(value) = self.pending.pop_front() {
                return Ok(Some(value));
            }
            if let Some(err) = self.error.take() {
                return Err(err);
            }
            match self.decoder.next_in_block(py) {
                InBlock::Value(value) => return Ok(Some(value.unbind())),
                InBlock::Failed(err) => {
                    self.done = true;
                    return Err(err);
                }
                InBlock::Ended => {
                    // The units already buffered come before the file's next chunk.
                    let (values, error) = if self.done {
                        self.decoder.finish_inner(py)
                    } else {
                        self.decoder.feed_inner(py, b"")
                    };
                    self.pending.extend(values.into_iter().map(Bound::unbind));
                    self.error = error;
                    continue;
                }
                InBlock::NoBlock => {}
            }
            if self.done {
                return Ok(None);
            }
            self.read_chunk(py)?;
        }
    }

    /// The writer schema of the file's Avro container header (the header is read now if no
    /// value has been taken yet), as JSON values.
    #[getter]
    fn writer_schema<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.read_header(py)?;
        self.decoder.writer_schema(py)
    }

    /// The name of the file's container codec: "null", "deflate", "snappy" or "zstandard".
    #[getter]
    fn codec(&mut self, py: Python<'_>) -> PyResult<&'static str> {
        self.read_header(py)?;
        self.decoder.container_codec()
    }

    /// The file's user metadata (the header's entries other than avro.schema and avro.codec).
    #[getter]
    fn metadata<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.read_header(py)?;
        self.decoder.metadata(py)
    }
}

impl FileIter {
    /// Reads the file's next chunk into the decoder, keeping the values it completes.
    fn read_chunk(&mut self, py: Python<'_>) -> PyResult<()> {
        let fp = self.fp.bind(py);
        let chunk = if fp.hasattr("read1")? {
            fp.call_method1("read1", (self.chunk_size,))?
        } else {
            fp.call_method1("read", (self.chunk_size,))?
        };
        if chunk.is_none() {
            return Err(PyTypeError::new_err(
                "the file's read returned None (a non-blocking file with no data ready)",
            ));
        }
        if chunk.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "iter_file needs a file opened in binary mode: the file's read returned str",
            ));
        }
        let chunk = chunk_bytes(&chunk)?;
        let (values, error) = if chunk.as_bytes().is_empty() {
            let (values, error) = self.decoder.finish_inner(py);
            self.done = error.is_none() || self.decoder.broken.is_some();
            (values, error)
        } else {
            self.decoder.feed_inner(py, chunk.as_bytes())
        };
        self.pending.extend(values.into_iter().map(Bound::unbind));
        self.error = error;
        Ok(())
    }

    /// Reads chunks until an Avro file's header is read; an error met on the way is raised
    /// (and kept for the iteration when values came before it).
    fn read_header(&mut self, py: Python<'_>) -> PyResult<()> {
        self.decoder.avro_only()?;
        while self.decoder.header().is_none() {
            if let Some(err) = self.error.take() {
                self.done = true;
                return Err(err);
            }
            if self.done {
                return Err(PyValueError::new_err(
                    "the file ended before its Avro container header",
                ));
            }
            self.read_chunk(py)?;
        }
        Ok(())
    }
}

/// Where `write_file` writes an Avro container's blocks.
pub enum AvroTarget<'a> {
    /// A new file: its header, with these user metadata entries, comes first.
    New(&'a [(&'a [u8], &'a [u8])]),
    /// After the last block of an existing file, with its codec and sync marker.
    Append(Container),
}

/// Encodes `values` in the stream form, handing the bytes to `flush` whenever `threshold`
/// bytes are ready (and at the end); returns the number of values.
fn write_values(
    codec: &Codec,
    values: &Obj<'_>,
    sync_interval: usize,
    threshold: usize,
    target: AvroTarget<'_>,
    mut flush: impl FnMut(&[u8]) -> Result<()>,
) -> Result<usize> {
    let plan = &codec.plan;
    let mut out = Vec::with_capacity(threshold.min(WRITE_CHUNK) + 1024);
    let mut count = 0usize;
    if let Some(avro) = codec.wire.as_avro() {
        let sync = match target {
            AvroTarget::New(metadata) => avro.stream_begin(&mut out, metadata),
            AvroTarget::Append(container) => container,
        };
        let mut block = Vec::new();
        let mut in_block = 0usize;
        shape::for_each_item(values, |item| {
            avro.stream_record(plan, item, &mut block)
                .map_err(|e| e.at_index(count))?;
            count += 1;
            in_block += 1;
            if in_block >= sync_interval {
                avro.stream_flush(&mut out, in_block, &block, &sync)?;
                block.clear();
                in_block = 0;
                flush(&out)?;
                out.clear();
            }
            Ok(())
        })?;
        if in_block > 0 {
            avro.stream_flush(&mut out, in_block, &block, &sync)?;
        }
    } else {
        let lines = codec.format == "json";
        shape::for_each_item(values, |item| {
            codec
                .wire
                .encode_one(plan, item, &mut out)
                .map_err(|e| e.at_index(count))?;
            if lines {
                out.push(b'\n');
            }
            count += 1;
            if out.len() >= threshold {
                flush(&out)?;
                out.clear();
            }
            Ok(())
        })?;
    }
    if !out.is_empty() {
        flush(&out)?;
    }
    Ok(count)
}

/// `Codec.encode_stream`: the stream form of any iterable, as one `bytes`.
pub fn encode_stream<'py>(codec: &Codec, values: &Obj<'py>) -> Result<Bound<'py, PyBytes>> {
    let py = values.py();
    let mut all = Vec::new();
    if codec.wire.as_avro().is_some() {
        // The same container file `encode_many` writes.
        codec.wire.encode_many(&codec.plan, values, &mut all)?;
    } else {
        write_values(
            codec,
            values,
            usize::MAX,
            usize::MAX,
            AvroTarget::New(&[]),
            |bytes| {
                all.extend_from_slice(bytes);
                Ok(())
            },
        )?;
    }
    Ok(crate::py::new_bytes(py, &all)?)
}

/// The container `write_file(..., append=True)` continues: the header at the start of `fp`
/// (read back, checked and its sync marker kept), the file then positioned at its end. `None`
/// for an empty file, which gets a new header. A header that cannot be read is a DecodeError,
/// one whose writer schema is not the codec's a ValueError; the file is not written to then.
pub fn existing_container(codec: &Codec, fp: &Obj<'_>) -> PyResult<Option<Container>> {
    let py = fp.py();
    let Some(avro) = codec.wire.as_avro() else {
        unreachable!("append= is refused for other formats before")
    };
    let decode_error = |error: Error| error.into_pyerr(py, ErrorKind::Decode);
    fp.call_method1("seek", (0, 0))?;
    let mut framer = Framer::for_format("avro");
    let mut head = Vec::new();
    let end = loop {
        match framer.next(&head) {
            Ok(Step::Header(end)) => break end,
            Ok(_) => {}
            Err(malformed) => {
                let code = framer.code(malformed.fault);
                return Err(decode_error(Error::decode(code, malformed.message)));
            }
        }
        let chunk = fp.call_method1("read", (DEFAULT_CHUNK_SIZE,))?;
        if chunk.is_none() {
            return Err(PyTypeError::new_err(
                "the file's read returned None (a non-blocking file with no data ready)",
            ));
        }
        let chunk = chunk_bytes(&chunk)?;
        if chunk.as_bytes().is_empty() {
            if head.is_empty() {
                fp.call_method1("seek", (0, 2))?;
                return Ok(None);
            }
            return Err(decode_error(crate::codecs::avro::stream::header_error(
                &head,
            )));
        }
        head.extend_from_slice(chunk.as_bytes());
    };
    let (container, same) = avro.stream_append(&head[..end]).map_err(decode_error)?;
    if !same {
        return Err(PyValueError::new_err(
            "cannot append: the file's writer schema is not the codec's schema (their Parsing \
             Canonical Forms differ), and the codec writes records as its own schema says",
        ));
    }
    fp.call_method1("seek", (0, 2))?;
    Ok(Some(container))
}

/// `Codec.write_file`: writes the stream form to a binary file object as it goes; an Avro
/// container gets the user's `metadata` entries in a new header, or with `append` its new
/// blocks go after an existing file's last.
pub fn write_file(
    codec: &Codec,
    fp: &Obj<'_>,
    values: &Obj<'_>,
    sync_interval: usize,
    target: AvroTarget<'_>,
) -> Result<usize> {
    let py = fp.py();
    let write = fp.getattr("write")?;
    write_values(codec, values, sync_interval, WRITE_CHUNK, target, |bytes| {
        let mut done = 0;
        while done < bytes.len() {
            let written = write.call1((crate::py::new_bytes(py, &bytes[done..])?,))?;
            if written.is_none() {
                return Err(Error::from(PyTypeError::new_err(
                    "the file's write returned None (a non-blocking file that is full)",
                )));
            }
            let n: usize = written.extract()?;
            if n == 0 {
                return Err(Error::from(PyValueError::new_err(
                    "the file's write wrote nothing",
                )));
            }
            done += n;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `unit` to a fresh framer one more byte at a time (as a growing buffer does):
    /// every proper prefix needs more, and the whole unit is framed as `expected`.
    fn frame(format: &str, unit: &[u8], expected: Step) {
        let mut framer = Framer::for_format(format);
        for end in 0..unit.len() {
            assert_eq!(
                framer.next(&unit[..end]).expect("well-formed"),
                Step::Need,
                "{format} prefix of {end} bytes of {unit:?}"
            );
        }
        assert_eq!(framer.next(unit).expect("well-formed"), expected);
        // The framer starts afresh after a unit.
        assert_eq!(framer.next(&unit[..0]).expect("empty"), Step::Need);
    }

    #[test]
    fn json_lines_end_at_newlines() {
        frame("json", b"{\"a\":1}\n", Step::Value(8));
        frame("json", b"[1,2]\r\n", Step::Value(7));
        frame("json", b" \r\n", Step::Skip(3));
        let mut framer = Framer::for_format("json");
        assert_eq!(framer.next(b"1\n2\n").unwrap(), Step::Value(2));
    }

    /// Each format's framer is the byte layer's (tested there, `formats/*/frame.rs`): one
    /// unit of each, and the code of what each refuses.
    #[test]
    fn each_format_frames_with_its_byte_layer_framer() {
        frame("msgpack", &[0x92, 0x01, 0xa1, b'x'], Step::Value(4));
        frame("pickle", b"\x80\x02K\x01.", Step::Value(5));
        let mut header = b"Obj\x01\x02\x04ab\x02c\x00".to_vec();
        header.extend_from_slice(&[7u8; 16]);
        frame("avro", &header, Step::Header(header.len()));
        let refused = |format: &str, data: &[u8]| {
            let mut framer = Framer::for_format(format);
            let bad = framer.next(data).expect_err("refused");
            framer.code(bad.fault)
        };
        assert_eq!(refused("msgpack", &[0x91, 0xc1]), Code::MsgpackInvalid);
        assert_eq!(refused("pickle", b"\x80\x02\xff"), Code::PickleInvalid);
        assert_eq!(refused("avro", b"Ob!"), Code::DecodeError);
    }
}

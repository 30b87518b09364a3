//! polycodec's byte layer: what the bytes of each wire format are, with no Python in them.
//!
//! Readers take a `&[u8]` and writers append to a caller-owned `Vec<u8>`; nothing here knows
//! about Python objects or polycodec's type plans. The extension (the workspace root, `src/`)
//! walks its plans over these readers and writers in `src/codecs/`, and turns this crate's
//! errors into Python exceptions there. The compiler keeps the split honest: this crate does not
//! depend on PyO3 and forbids `unsafe`.
//!
//! - [`json`]: the strict RFC 8259 pull reader and the JSON writer.
//! - [`msgpack`]: the MessagePack reader and writer, and timestamp-extension arithmetic.
//! - [`avro`]: Avro's binary primitives and object container files.
//! - [`pickle`]: the pickle opcodes and the inert pickle machine.
//! - [`text`]: RFC 3339 / ISO 8601 temporal forms, UUIDs and base64.
//! - [`frame`]: where values end in bytes that arrive in pieces (each format's framer is
//!   beside its reader), for the stream decoders.
//! - [`growth`]: fallible growth of in output buffers for large writes.
//! - [`pieces`]: short byte strings appended in fixed-size pieces.
//! - [`quote`]: input quoted in error messages, bounded in length.

#![forbid(unsafe_code)]

pub mod avro;
pub mod frame;
pub mod growth;
pub mod json;
pub mod msgpack;
pub mod pickle;
pub mod pieces;
pub mod quote;
pub mod text;

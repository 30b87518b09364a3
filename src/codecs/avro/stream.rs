//! The Avro half of the stream API (`src/python_api/stream.rs`): an object container file read block by
//! block as its bytes arrive, and written block by block as values come.
//!
//! The byte-level framing (where the header and each block end) lives with the other formats'
//! in `src/python_api/stream.rs`; this module holds what needs the codec's schema and programs.

use std::sync::Arc;

use polycodec_formats::avro::schema::Sharing;

use pyo3::prelude::*;

use super::container::{self, Compression};
use super::decode::Decoder;
use super::ops::Program;
use super::schema;
use super::wire::Input;
use super::Avro;
use crate::errors::{Code, Error, Result};
use crate::plan::Plan;
use crate::py::Obj;

/// A decompressed block whose records are handed out one at a time (`iter_file`, and `feed`
/// within its call's budget).
pub struct OpenBlock {
    data: Vec<u8>,
    /// Where the next record starts in `data`.
    pos: usize,
    /// The records not read yet.
    left: usize,
    /// Zero-size values charged so far in this block.
    empty_items: usize,
    /// The bytes it decompressed to (0 when it is not compressed: its bytes are the input's).
    inflated: usize,
}

impl OpenBlock {
    /// The bytes the block decompressed to, 0 for a block that is not compressed.
    pub fn inflated(&self) -> usize {
        self.inflated
    }

    /// The records not read yet.
    pub fn left(&self) -> usize {
        self.left
    }
}

/// A container file's header, read once per stream, with the program that decodes its records.
pub struct StreamHeader {
    schema: Vec<u8>,
    compression: Compression,
    /// The user's metadata entries, in the file's order.
    metadata: Vec<(Vec<u8>, Vec<u8>)>,
    sync: [u8; 16],
    program: Arc<Program>,
}

impl StreamHeader {
    /// The writer schema's JSON text, as the header has it.
    pub fn schema(&self) -> &[u8] {
        &self.schema
    }

    /// The name of the file's compression (`"null"`, `"deflate"`, ...).
    pub fn compression_name(&self) -> &'static str {
        self.compression.name()
    }

    /// The entries other than `avro.schema` and `avro.codec`.
    pub fn metadata(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.metadata
    }
}

/// Where a container being written stands: the compression and sync marker its blocks take (a new
/// file's, or those of the file being appended to).
pub struct Container {
    compression: Compression,
    sync: [u8; 16],
}

/// Why `data`, the start of a container header that the stream ended in, is not a header: the
/// error `decode_many` raises for the same bytes.
pub fn header_error(data: &[u8]) -> Error {
    match container::read_header(&mut Input::new(data)) {
        Err(error) => error.into(),
        Ok(_) => Error::decode(
            Code::DecodeError,
            "internal: a complete Avro header was left unframed",
        ),
    }
}

impl Avro {
    /// Reads a complete header (`unit` holds exactly its bytes) and resolves its schema against
    /// the codec's.
    pub fn stream_header(&self, plan: &Plan, unit: &[u8]) -> Result<StreamHeader> {
        let mut input = Input::new(unit);
        let header = container::read_header(&mut input)?;
        let program = self.program_for(plan, header.schema)?;
        Ok(StreamHeader {
            schema: header.schema.to_vec(),
            compression: header.compression,
            metadata: header
                .metadata
                .iter()
                .map(|(key, value)| (key.to_vec(), value.to_vec()))
                .collect(),
            sync: header.sync,
            program,
        })
    }

    /// What the next block opened by a `feed` call may decompress to, when the call's earlier
    /// blocks decompressed to `decompressed`: as in `decode_many`, all the compressed blocks one
    /// call opens are held to `max_decompressed_size` together (and each to `max_block_size`).
    pub fn stream_budget(&self, decompressed: usize) -> usize {
        self.max_block
            .min(self.max_decompressed.saturating_sub(decompressed))
    }

    /// What one block opened by `iter_file` may decompress to (`max_block_size`).
    pub fn block_budget(&self) -> usize {
        self.max_block
    }

    /// Opens one complete block (`unit` holds exactly its bytes, sync marker included) for its
    /// records to be decoded one at a time: only the decompressed bytes (at most `budget`) are
    /// held, never all its values.
    pub fn stream_block_open(
        &self,
        py: Python<'_>,
        plan: &Plan,
        header: &StreamHeader,
        unit: &[u8],
        budget: usize,
    ) -> Result<OpenBlock> {
        let mut input = Input::new(unit);
        let borrowed = container::Header {
            schema: &header.schema,
            compression: header.compression,
            metadata: Vec::new(),
            sync: header.sync,
        };
        let Some((count, data)) = container::read_block(&mut input, &borrowed, budget)? else {
            return Err(Error::decode(
                Code::DecodeError,
                "internal: empty Avro block unit",
            ));
        };
        let mut decoder = Decoder::new(py, plan, &header.program, &data);
        decoder.check_count(count, header.program.root)?;
        let empty_items = decoder.empty_items;
        let inflated = if header.compression == Compression::Null {
            0
        } else {
            data.len()
        };
        Ok(OpenBlock {
            data: data.into_owned(),
            pos: 0,
            left: count,
            empty_items,
            inflated,
        })
    }

    /// The next record of an open block, `None` once all are read (an error if bytes are
    /// left over then).
    pub fn stream_block_next<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        header: &StreamHeader,
        block: &mut OpenBlock,
    ) -> Result<Option<Obj<'py>>> {
        if block.left == 0 {
            let left_over = block.data.len() - block.pos;
            if left_over != 0 {
                return Err(Error::decode(
                    Code::AvroInvalid,
                    format!("malformed Avro: {left_over} bytes left over in a block"),
                ));
            }
            return Ok(None);
        }
        let mut decoder = Decoder::new(py, plan, &header.program, &block.data[block.pos..]);
        decoder.empty_items = block.empty_items;
        let value = decoder.root()?;
        block.pos += decoder.input.pos;
        block.empty_items = decoder.empty_items;
        block.left -= 1;
        Ok(Some(value))
    }

    /// Decodes up to `most` records of an open block into `out` with one decoder (as many as
    /// are left, at most); returns how many. On an error, the records decoded before it are
    /// in `out`.
    pub fn stream_block_take<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        header: &StreamHeader,
        block: &mut OpenBlock,
        most: usize,
        out: &mut Vec<Obj<'py>>,
    ) -> Result<usize> {
        let count = most.min(block.left);
        crate::errors::reserve(out, count, "the values of an Avro block")?;
        let mut decoder = Decoder::new(py, plan, &header.program, &block.data[block.pos..]);
        decoder.empty_items = block.empty_items;
        let mut taken = 0;
        let result = loop {
            if taken == count {
                break Ok(count);
            }
            match decoder.root() {
                Ok(value) => {
                    out.push(value);
                    taken += 1;
                }
                Err(error) => break Err(error),
            }
        };
        block.pos += decoder.input.pos;
        block.empty_items = decoder.empty_items;
        block.left -= taken;
        result
    }

    /// Writes a new container file's header, with the user's `metadata` entries, into `out`.
    pub fn stream_begin(&self, out: &mut Vec<u8>, metadata: &[(&[u8], &[u8])]) -> Container {
        let sync = self.next_sync();
        container::write_header(out, &self.schema_json, self.compression, metadata, &sync);
        Container {
            compression: self.compression,
            sync,
        }
    }

    /// The container an existing file's header (`unit`, exactly its bytes) starts, for new
    /// blocks written after its last (they take the file's compression and sync marker), and whether
    /// its writer schema is the codec's schema (by Parsing Canonical Form): the records are
    /// written as the codec's schema says, so appending is refused unless it is.
    pub fn stream_append(&self, unit: &[u8]) -> Result<(Container, bool)> {
        let header = container::read_header(&mut Input::new(unit))?;
        let theirs = schema::parse_schema(header.schema, Sharing::Unions).map_err(|reason| {
            Error::decode(
                Code::AvroInvalid,
                format!("invalid Avro writer schema: {reason}"),
            )
        })?;
        let same = schema::canonical_form(&theirs) == schema::canonical_form(&self.reader);
        let file = Container {
            compression: header.compression,
            sync: header.sync,
        };
        Ok((file, same))
    }

    /// Appends one record's datum to a block being built.
    pub fn stream_record(&self, plan: &Plan, value: &Obj<'_>, block: &mut Vec<u8>) -> Result<()> {
        crate::errors::output_result(|| self.encoder(plan, block).value(plan.root, value))
    }

    /// Appends a finished block of `count` records to `out`: a MemoryError when `out` cannot
    /// grow to hold it.
    pub fn stream_flush(
        &self,
        out: &mut Vec<u8>,
        count: usize,
        block: &[u8],
        file: &Container,
    ) -> Result<()> {
        crate::errors::output_result(|| {
            container::write_block(out, count, block, file.compression, &file.sync);
            Ok(())
        })
    }
}

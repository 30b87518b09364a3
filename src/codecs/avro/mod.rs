//! Avro: binary datums, single-object and Confluent framing, object container files, and
//! schema resolution.
//!
//! The schema work runs once per compression, and once per new writer schema: every schema is parsed
//! once, in Rust ([`schema`]); deriving the schema from the plan and binding the plan to it
//! (the write ops) are `python/polycodec/_avro/`; resolving a writer schema against the codec's
//! (the decoder programs, [`resolve`]) is Rust and never calls Python. The per-record work
//! here walks the plan with those programs ([`ops`]) and reads and writes bytes directly.

mod decode;
mod encode;
mod ops;
pub mod resolve;
pub mod schema;
pub mod stream;

use polycodec_formats::avro::{container, wire};

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use pyo3::{PyTraverseError, PyVisit};

use super::{OpenArgs, WireFormat};
use crate::errors::{Code, Error, Result};
use crate::plan::{NodeId, Plan};
use crate::py::{self, Obj};
use crate::shape;
use container::Compression;
use decode::Decoder;
use encode::Encoder;
use ops::{Program, WriteOp};
use polycodec_formats::avro::schema::{NodeId as SchemaId, Schema, Sharing};
use resolve::{Binding, Resolver};
use schema::ParsedSchema;

/// A writer schema's text as the cache of resolved programs knows it: its length and two
/// 64-bit SipHash values under keys drawn for the compression, so a cached schema (which may be
/// megabytes) is not kept twice, and no text can be made to look like another without the
/// keys (two different texts share a key with a chance of 2^-128).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct SchemaKey {
    len: usize,
    hashes: [u64; 2],
}

/// How `encode_one` frames a datum and `decode_one` expects it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Raw,
    /// `C3 01`, the 8-byte little-endian CRC-64-AVRO fingerprint, the datum.
    SingleObject,
    /// Magic byte 0, the 4-byte big-endian schema id, the datum.
    Confluent(u32),
}

/// Writer schemas kept resolved per compression; past this many, the cache starts again.
const RESOLVED_LIMIT: usize = 64;

pub struct Avro {
    /// `polycodec._avro.AvroState`: the options and the schema as Python sees them.
    state: Py<PyAny>,
    /// The codec's (reader) schema, parsed.
    reader: Arc<Schema>,
    /// For each union of the reader schema: the plan node each branch is read as.
    branch_plan: HashMap<SchemaId, Vec<Option<NodeId>>>,
    write_ops: Vec<Option<WriteOp>>,
    /// The decoder for data written with the codec's own schema.
    own: Arc<Program>,
    schema_json: Vec<u8>,
    framing: Framing,
    compression: Compression,
    /// The most one container block may decompress to (`max_block_size`).
    max_block: usize,
    /// The most the compressed blocks of one `decode_many` call, or of one stream decoder
    /// `feed`/`finish` call, may decompress to together (`max_decompressed_size`).
    max_decompressed: usize,
    /// Random bytes drawn once per compression; each container file gets its own sync marker from
    /// them and a counter (see `next_sync`), as the spec asks for a marker per file.
    sync_seed: [u8; 16],
    files_written: AtomicU64,
    /// Programs of the writer schemas met, by [`SchemaKey`] of their text.
    resolved: Mutex<HashMap<SchemaKey, Arc<Program>>>,
    /// The two keyed hashes of [`SchemaKey`], with keys drawn for this compression.
    key_hashers: [RandomState; 2],
}

pub fn open(args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    let state = args
        .state
        .ok_or_else(|| PyValueError::new_err("internal: an Avro codec needs its AvroState"))?
        .clone();
    let parsed = state.getattr("parsed")?;
    let parsed = parsed.cast::<ParsedSchema>()?.get();
    let reader = parsed.schema.clone();
    let write_ops = ops::write_ops(&state.getattr("write_ops")?, &reader)?;
    if write_ops.len() < args.plan.nodes.len() - 1 {
        return Err(PyValueError::new_err(
            "internal: Avro write ops do not cover the plan",
        ));
    }
    let branch_plan: HashMap<SchemaId, Vec<Option<NodeId>>> =
        state.getattr("branch_plan")?.extract()?;
    let binding = Binding {
        plan: args.plan,
        reader: &reader,
        write_ops: &write_ops,
        branch_plan: &branch_plan,
    };
    let mut resolver = Resolver::new(&binding, &reader);
    let root = resolver
        .root(args.plan.root)
        .map_err(|refusal| PyTypeError::new_err(refusal.message()))?;
    let own = Program::new(resolver.ops, root, parsed.fingerprint, args.plan)?;
    let framing = match state.getattr("framing")?.extract::<String>()?.as_str() {
        "single-object" => Framing::SingleObject,
        "confluent" => Framing::Confluent(state.getattr("schema_id")?.extract()?),
        _ => Framing::Raw,
    };
    let compression_name: String = state.getattr("compression")?.extract()?;
    let compression = Compression::from_name(compression_name.as_bytes()).ok_or_else(|| {
        PyValueError::new_err(format!(
            "compression {compression_name:?} is not available (null, deflate, snappy, zstandard)"
        ))
    })?;
    let sync_bytes: Vec<u8> = state.getattr("sync")?.extract()?;
    let mut sync_seed = [0u8; 16];
    sync_seed.copy_from_slice(&sync_bytes);
    let schema_json: Vec<u8> = state.getattr("schema_json")?.extract()?;
    let max_block = state.getattr("max_block_size")?.extract()?;
    let max_decompressed = state.getattr("max_decompressed_size")?.extract()?;
    Ok(Box::new(Avro {
        state: state.unbind(),
        reader,
        branch_plan,
        write_ops,
        own: Arc::new(own),
        schema_json,
        framing,
        compression,
        max_block,
        max_decompressed,
        sync_seed,
        files_written: AtomicU64::new(0),
        resolved: Mutex::new(HashMap::new()),
        key_hashers: [RandomState::new(), RandomState::new()],
    }))
}

impl Avro {
    /// A sync marker for the next container file: the seed mixed with a SplitMix64 step of a
    /// per-compression counter, so every file's marker differs and none can be guessed.
    fn next_sync(&self) -> [u8; 16] {
        let count = self.files_written.fetch_add(1, Ordering::Relaxed);
        let mut z = count.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let mut sync = self.sync_seed;
        for (i, byte) in sync.iter_mut().enumerate() {
            *byte ^= (z >> ((i % 8) * 8)) as u8;
        }
        sync
    }

    fn encoder<'o>(&'o self, plan: &'o Plan, out: &'o mut Vec<u8>) -> Encoder<'o, 'o> {
        Encoder {
            plan,
            ops: &self.write_ops,
            out,
            depth: 0,
        }
    }

    /// The program for data written with the writer schema whose JSON text is `text`,
    /// resolved against the codec's schema once and then cached. An invalid or incompatible
    /// writer schema is a DecodeError (located where the schemas disagree).
    fn program_for(&self, plan: &Plan, text: &[u8]) -> Result<Arc<Program>> {
        if text == self.schema_json.as_slice() {
            return Ok(self.own.clone());
        }
        let key = SchemaKey {
            len: text.len(),
            hashes: self
                .key_hashers
                .each_ref()
                .map(|hasher| hasher.hash_one(text)),
        };
        if let Some(found) = self.resolved.lock().expect("avro cache").get(&key) {
            return Ok(found.clone());
        }
        let program = Arc::new(self.resolve(plan, text)?);
        let mut cache = self.resolved.lock().expect("avro cache");
        if cache.len() >= RESOLVED_LIMIT {
            cache.clear();
        }
        cache.insert(key, program.clone());
        Ok(program)
    }

    /// Parses a writer schema and resolves it against the codec's: Rust only, so it runs with
    /// the GIL released.
    fn resolve(&self, plan: &Plan, text: &[u8]) -> Result<Program> {
        let writer = schema::parse_schema(text, Sharing::Unions).map_err(|reason| {
            Error::decode(
                Code::AvroInvalid,
                format!("invalid Avro writer schema: {reason}"),
            )
        })?;
        let binding = Binding {
            plan,
            reader: &self.reader,
            write_ops: &self.write_ops,
            branch_plan: &self.branch_plan,
        };
        let mut resolver = Resolver::new(&binding, &writer);
        let root = resolver.root(plan.root).map_err(|r| r.into_error())?;
        // Only single-object framing compares the writer schema's fingerprint.
        let fingerprint = match self.framing {
            Framing::SingleObject => schema::fingerprint(&writer),
            _ => 0,
        };
        Program::new(resolver.ops, root, fingerprint, plan).map_err(Error::from)
    }

    fn decode_datum<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        program: &Program,
        data: &[u8],
    ) -> Result<Obj<'py>> {
        let mut decoder = Decoder::new(py, plan, program, data);
        let value = decoder.root()?;
        if decoder.input.remaining() != 0 {
            return Err(Error::decode(
                Code::AvroInvalid,
                format!(
                    "malformed Avro: {} bytes left after the datum",
                    decoder.input.remaining()
                ),
            ));
        }
        Ok(value)
    }
}

impl Avro {
    /// The container file of `encode_many`, its blocks encoded and compressed in turn.
    fn encode_blocks(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let sync = self.next_sync();
        container::write_header(out, &self.schema_json, self.compression, &[], &sync);
        let mut block = Vec::with_capacity(1024);
        let mut count = 0usize;
        let mut index = 0usize;
        shape::for_each_item(values, |item| {
            self.encoder(plan, &mut block)
                .value(plan.root, item)
                .map_err(|e| e.at_index(index))?;
            index += 1;
            count += 1;
            if block.len() >= container::BLOCK_BYTES {
                container::write_block(out, count, &block, self.compression, &sync);
                block.clear();
                count = 0;
            }
            Ok(())
        })?;
        if count > 0 {
            container::write_block(out, count, &block, self.compression, &sync);
        }
        Ok(())
    }
}

impl WireFormat for Avro {
    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        match self.framing {
            Framing::Raw => {}
            Framing::SingleObject => {
                out.extend_from_slice(&[0xC3, 0x01]);
                out.extend_from_slice(&self.own.fingerprint.to_le_bytes());
            }
            Framing::Confluent(id) => {
                out.push(0);
                out.extend_from_slice(&id.to_be_bytes());
            }
        }
        crate::errors::output_result(|| self.encoder(plan, out).value(plan.root, value))
    }

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        crate::errors::output_result(|| self.encode_blocks(plan, values, out))
    }

    fn decode_one<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        _strict: bool,
        input: &[u8],
        writer_schema: Option<&Bound<'py, PyAny>>,
    ) -> Result<Obj<'py>> {
        let program = match writer_schema {
            None => self.own.clone(),
            Some(writer) => {
                if let Ok(text) = writer.cast::<PyString>() {
                    self.program_for(plan, py::str_utf8(text)?.as_bytes())?
                } else if let Ok(data) = writer.cast::<PyBytes>() {
                    self.program_for(plan, data.as_bytes())?
                } else {
                    // JSON-compatible data: its JSON text, from Python's json module.
                    let key = crate::py::user_code(py, || {
                        self.state.bind(py).call_method1("writer_key", (writer,))
                    })
                    .map_err(|err| Error::decode(Code::DecodeError, err.value(py).to_string()))?;
                    let key = key.cast::<PyBytes>().map_err(PyErr::from)?;
                    self.program_for(plan, key.as_bytes())?
                }
            }
        };
        let data = match self.framing {
            Framing::Raw => input,
            Framing::SingleObject => {
                if input.len() < 10 || input[..2] != [0xC3, 0x01] {
                    return Err(Error::decode(
                        Code::DecodeError,
                        "not Avro single-object encoding (it must start with C3 01 and an \
                         8-byte fingerprint)",
                    ));
                }
                let mut raw = [0u8; 8];
                raw.copy_from_slice(&input[2..10]);
                let found = u64::from_le_bytes(raw);
                if found != program.fingerprint {
                    return Err(Error::decode(
                        Code::AvroInvalid,
                        format!(
                            "Avro single-object fingerprint {found:#018x} does not match the \
                         schema's {:#018x}",
                            program.fingerprint
                        ),
                    ));
                }
                &input[10..]
            }
            Framing::Confluent(id) => {
                if input.len() < 5 || input[0] != 0 {
                    return Err(Error::decode(
                        Code::DecodeError,
                        "not Confluent schema-registry framing (it must start with byte 0 and \
                         a 4-byte schema id)",
                    ));
                }
                let found = u32::from_be_bytes([input[1], input[2], input[3], input[4]]);
                // With `writer_schema=`, that schema describes the message and the frame's id
                // is the writer's registry id, not the codec's: it is not compared.
                if writer_schema.is_none() && found != id {
                    return Err(Error::decode(
                        Code::DecodeError,
                        format!("Confluent schema id {found} does not match the codec's {id}"),
                    ));
                }
                &input[5..]
            }
        };
        self.decode_datum(py, plan, &program, data)
    }

    fn decode_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        _strict: bool,
        input: &[u8],
    ) -> Result<Obj<'py>> {
        let mut reader = wire::Input::new(input);
        let header = container::read_header(&mut reader)?;
        let program = self.program_for(plan, header.schema)?;
        let mut items: Option<crate::py::builders::ListFill<'py>> = None;
        // The budget of values that take no bytes is for the whole call, not per block.
        let mut empty_items = 0;
        let mut decompressed = 0usize;
        loop {
            // A compressed block may decompress to what is left of the call's budget, so a
            // container refused for its total is refused while inflating, not after.
            let budget = self.max_block.min(self.max_decompressed - decompressed);
            let Some((count, data)) = container::read_block(&mut reader, &header, budget)? else {
                break;
            };
            if header.compression != Compression::Null {
                decompressed += data.len();
            }
            let mut decoder = Decoder::new(py, plan, &program, &data);
            decoder.empty_items = empty_items;
            decoder.check_count(count, program.root)?;
            // The first block's count sizes the list; later blocks append.
            let list = match &mut items {
                Some(list) => list,
                None => items.insert(crate::py::builders::ListFill::new(py, count)?),
            };
            let paid = decoder.begin_paid(program.root);
            for _ in 0..count {
                let index = list.count();
                list.push(decoder.root().map_err(|e| e.at_index(index))?)?;
            }
            decoder.end_paid(paid);
            empty_items = decoder.empty_items;
            if decoder.input.remaining() != 0 {
                return Err(Error::decode(
                    Code::AvroInvalid,
                    format!(
                        "malformed Avro: {} bytes left over in a block",
                        decoder.input.remaining()
                    ),
                ));
            }
        }
        match items {
            Some(list) => Ok(list
                .filled()
                .ok_or_else(|| Error::decode(Code::DecodeError, "internal: Avro list not filled"))?
                .into_any()),
            None => Ok(PyList::empty(py).into_any()),
        }
    }

    fn takes_writer_schema(&self) -> bool {
        true
    }

    fn as_avro(&self) -> Option<&Avro> {
        Some(self)
    }

    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Option<Obj<'py>>> {
        Ok(Some(self.state.bind(py).call_method0("schema_copy")?))
    }

    fn traverse(&self, visit: &PyVisit<'_>) -> std::result::Result<(), PyTraverseError> {
        visit.call(&self.state)
    }
}

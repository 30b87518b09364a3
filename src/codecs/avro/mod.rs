//! Avro: binary datums, single-object and Confluent framing, object container files, and
//! schema resolution.
//!
//! The schema work (deriving the schema from the plan, parsing `.avsc`, canonical form,
//! fingerprints, binding the plan to a schema, resolving a writer schema) runs once per codec in
//! `python/polycodec/_avro.py`, which hands back small programs ([`ops`]). The per-record work
//! here walks the plan with those programs and reads and writes bytes directly.

mod decode;
mod encode;
mod ops;
pub mod schema;
pub mod stream;

use polycodec_formats::avro::{container, wire};

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use pyo3::{PyTraverseError, PyVisit};

use super::{OpenArgs, WireFormat};
use crate::errors::{Code, Error, Result};
use crate::plan::Plan;
use crate::py::Obj;
use crate::shape;
use container::Codec;
use decode::Decoder;
use encode::Encoder;
use ops::{Program, WriteOp};

/// How `encode_one` frames a datum and `decode_one` expects it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Raw,
    /// `C3 01`, the 8-byte little-endian CRC-64-AVRO fingerprint, the datum.
    SingleObject,
    /// Magic byte 0, the 4-byte big-endian schema id, the datum.
    Confluent(u32),
}

/// Writer schemas kept resolved per codec; past this many, the cache starts again.
const RESOLVED_LIMIT: usize = 64;

pub struct Avro {
    /// `polycodec._avro.AvroState`: the schema and what resolves writer schemas.
    state: Py<PyAny>,
    write_ops: Vec<Option<WriteOp>>,
    /// The decoder for data written with the codec's own schema.
    own: Arc<Program>,
    schema_json: Vec<u8>,
    framing: Framing,
    codec: Codec,
    /// The most one container block may decompress to (`max_block_size`).
    max_block: usize,
    /// The most the compressed blocks of one `decode_many` call, or of one stream decoder
    /// `feed`/`finish` call, may decompress to together (`max_decompressed_size`).
    max_decompressed: usize,
    /// Random bytes drawn once per codec; each container file gets its own sync marker from
    /// them and a counter (see `next_sync`), as the spec asks for a marker per file.
    sync_seed: [u8; 16],
    files_written: AtomicU64,
    resolved: Mutex<HashMap<Vec<u8>, Arc<Program>>>,
}

pub fn open(args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    let py = args.options.py();
    let state = py
        .import("polycodec._avro")?
        .getattr("open_codec")?
        .call1((args.spec, args.target, args.options))?;
    let write_ops = ops::write_ops(&state.getattr("write_ops")?)?;
    if write_ops.len() < args.plan.nodes.len() - 1 {
        return Err(PyValueError::new_err(
            "internal: Avro write ops do not cover the plan",
        ));
    }
    let fingerprint: u64 = state.getattr("fingerprint")?.extract()?;
    let own = ops::program(
        &state.getattr("read_ops")?,
        state.getattr("read_root")?.extract()?,
        fingerprint,
        args.plan,
    )?;
    let framing = match state.getattr("framing")?.extract::<String>()?.as_str() {
        "single-object" => Framing::SingleObject,
        "confluent" => Framing::Confluent(state.getattr("schema_id")?.extract()?),
        _ => Framing::Raw,
    };
    let codec_name: String = state.getattr("compression")?.extract()?;
    let codec = Codec::from_name(codec_name.as_bytes()).ok_or_else(|| {
        PyValueError::new_err(format!(
            "compression {codec_name:?} is not available (null, deflate, snappy, zstandard)"
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
        write_ops,
        own: Arc::new(own),
        schema_json,
        framing,
        codec,
        max_block,
        max_decompressed,
        sync_seed,
        files_written: AtomicU64::new(0),
        resolved: Mutex::new(HashMap::new()),
    }))
}

/// A schema problem met while decoding (an unreadable or incompatible writer schema) is a
/// DecodeError; anything else from Python passes through.
fn schema_error(py: Python<'_>, err: PyErr) -> Error {
    if !(err.is_instance_of::<PyValueError>(py) || err.is_instance_of::<PyTypeError>(py)) {
        return err.into();
    }
    let value = err.value(py);
    // A resolution error says where in the schemas it is (`$.readings[].temp`): that is the
    // error's path, and its message is the reason alone.
    let located = value
        .getattr("where")
        .and_then(|w| w.extract::<String>())
        .and_then(|w| Ok((w, value.getattr("reason")?.extract::<String>()?)));
    let Ok((place, reason)) = located else {
        return Error::decode(Code::DecodeError, value.to_string());
    };
    let mut steps = Vec::new();
    let mut rest = place.strip_prefix('$').unwrap_or(&place);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("[]") {
            steps.push(None);
            rest = after;
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            steps.push(Some(&after[..end]));
            rest = &after[end..];
        } else {
            return Error::decode(Code::DecodeError, value.to_string());
        }
    }
    steps.into_iter().rev().fold(
        Error::decode(
            Code::DecodeError,
            format!("cannot read the writer schema: {reason}"),
        ),
        |error, step| match step {
            Some(name) => error.at_field(name),
            None => error.at_items(),
        },
    )
}

impl Avro {
    /// A sync marker for the next container file: the seed mixed with a SplitMix64 step of a
    /// per-codec counter, so every file's marker differs and none can be guessed.
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

    /// The program for data written with `writer` (schema JSON text, as bytes), resolved
    /// against the codec's schema once and then cached.
    fn program_for(
        &self,
        py: Python<'_>,
        plan: &Plan,
        key: &[u8],
        writer: &Bound<'_, PyAny>,
    ) -> Result<Arc<Program>> {
        if key == self.schema_json.as_slice() {
            return Ok(self.own.clone());
        }
        if let Some(found) = self.resolved.lock().expect("avro cache").get(key) {
            return Ok(found.clone());
        }
        // Resolution is Python code (see `py::user_code`).
        let resolved = crate::py::user_code(py, || {
            self.state.bind(py).call_method1("resolve", (writer,))
        })
        .map_err(|err| schema_error(py, err))?;
        let (ops, root, fingerprint): (Bound<'_, PyList>, usize, u64) = resolved.extract()?;
        let program = Arc::new(ops::program(&ops, root, fingerprint, plan)?);
        let mut cache = self.resolved.lock().expect("avro cache");
        if cache.len() >= RESOLVED_LIMIT {
            cache.clear();
        }
        cache.insert(key.to_vec(), program.clone());
        Ok(program)
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
        container::write_header(out, &self.schema_json, self.codec, &sync);
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
                container::write_block(out, count, &block, self.codec, &sync);
                block.clear();
                count = 0;
            }
            Ok(())
        })?;
        if count > 0 {
            container::write_block(out, count, &block, self.codec, &sync);
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
                let key = crate::py::user_code(py, || {
                    self.state.bind(py).call_method1("writer_key", (writer,))
                })
                .map_err(|err| schema_error(py, err))?;
                let key = key.cast::<PyBytes>().map_err(PyErr::from)?.as_bytes();
                self.program_for(py, plan, key, writer)?
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
        let program = if header.schema == self.schema_json.as_slice() {
            self.own.clone()
        } else {
            let text = std::str::from_utf8(header.schema).map_err(|_| {
                Error::decode(
                    Code::AvroInvalid,
                    "Avro container schema is not valid UTF-8",
                )
            })?;
            self.program_for(
                py,
                plan,
                header.schema,
                &crate::py::new_str(py, text.as_bytes(), false)?,
            )?
        };
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
            if header.codec != Codec::Null {
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

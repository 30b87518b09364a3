//! JSON (RFC 8259): compact UTF-8 output, strict parsing.

pub mod decode;
pub mod encode;
pub mod read;
pub mod write;

use pyo3::prelude::*;

use super::decoder::Decoder;
use super::{encoder, unexpected_option, OpenArgs, WireFormat};
use crate::errors::Result;
use crate::plan::{Node, NodeId, Plan};
use crate::py::Obj;

/// One codec's JSON state: what JSON precomputes from the plan.
pub struct Json {
    keys: Keys,
}

/// Each record field's JSON member prefix `,"wire_name":` (the name escaped and quoted once,
/// when the codec is built), indexed by the record's node id, then by the field's index in
/// `RecordSpec::fields`. Without its leading comma it is the first member written and the
/// bytes the decoder matches a key against.
pub struct Keys {
    records: Vec<Box<[Box<[u8]>]>>,
}

impl Keys {
    pub fn new(plan: &Plan) -> Keys {
        let records = plan
            .nodes
            .iter()
            .map(|node| match node {
                Node::Record(spec) => spec
                    .fields
                    .iter()
                    .map(|field| member(&field.wire_name).into_boxed_slice())
                    .collect(),
                _ => Box::default(),
            })
            .collect();
        Keys { records }
    }

    /// The members of record node `id`, one per field (empty for any other node).
    #[inline(always)]
    pub fn record(&self, id: NodeId) -> &[Box<[u8]>] {
        &self.records[id]
    }
}

/// `,"wire_name":` as JSON bytes.
pub fn member(wire_name: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(wire_name.len() + 4);
    bytes.push(b',');
    write::write_str(&mut bytes, wire_name);
    bytes.push(b':');
    bytes
}

pub fn open(args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    if !args.options.is_empty() {
        return Err(unexpected_option("json", args.options));
    }
    Ok(Box::new(Json {
        keys: Keys::new(args.plan),
    }))
}

impl WireFormat for Json {
    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer = encode::JsonWriter::new(std::mem::take(out), plan, &self.keys);
        let result = crate::errors::output_result(|| encoder::encode_one(plan, value, &mut writer));
        *out = writer.out;
        result
    }

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer = encode::JsonWriter::new(std::mem::take(out), plan, &self.keys);
        let result =
            crate::errors::output_result(|| encoder::encode_many(plan, values, &mut writer));
        *out = writer.out;
        result
    }

    fn decode_one<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
        _writer_schema: Option<&Bound<'py, PyAny>>,
    ) -> Result<Obj<'py>> {
        Decoder::new(py, plan, strict, decode::JsonInput::new(input, &self.keys)).decode_one()
    }

    fn decode_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Result<Obj<'py>> {
        Decoder::new(py, plan, strict, decode::JsonInput::new(input, &self.keys)).decode_many()
    }

    fn accepts_str(&self) -> bool {
        true
    }
}

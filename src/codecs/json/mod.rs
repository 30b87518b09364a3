//! JSON (RFC 8259): compact UTF-8 output, strict parsing.

pub mod decode;
pub mod encode;
pub use polycodec_formats::json::{read, write};

use pyo3::prelude::*;

use super::decoder::Decoder;
use super::{encoder, unexpected_option, OpenArgs, WireFormat};
use crate::errors::Result;
use crate::plan::Plan;
use crate::py::Obj;

/// JSON needs no per-codec state: everything it precomputes lives in the plan.
pub struct Json;

pub fn open(args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    if !args.options.is_empty() {
        return Err(unexpected_option("json", args.options));
    }
    Ok(Box::new(Json))
}

impl WireFormat for Json {
    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer = encode::JsonWriter {
            out: std::mem::take(out),
        };
        let result = crate::errors::output_result(|| encoder::encode_one(plan, value, &mut writer));
        *out = writer.out;
        result
    }

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer = encode::JsonWriter {
            out: std::mem::take(out),
        };
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
        Decoder::new(py, plan, strict, read::Reader::new(input)).decode_one()
    }

    fn decode_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Result<Obj<'py>> {
        Decoder::new(py, plan, strict, read::Reader::new(input)).decode_many()
    }

    fn accepts_str(&self) -> bool {
        true
    }
}

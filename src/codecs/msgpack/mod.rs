//! MessagePack, with the wire mapping of msgspec's defaults so that each side decodes the
//! other's output into equal objects: records as maps keyed by wire name (arrays with
//! `array_like`), ints in their smallest form, floats as float64, bytes as bin, aware
//! datetimes as the timestamp extension (-1), and the other temporal types, UUID and Decimal as
//! strs. The reader and writer are hand-written: the plan-driven walk needs one head at a time,
//! which is all a MessagePack reader is. `benches/msgpack_wire.rs` (`cargo bench --bench
//! msgpack_wire`) measures both against `rmp` and `rmp-serde`, the crates they stand in for.

pub mod decode;
pub mod encode;
pub use polycodec_formats::msgpack::{epoch, read, write};

use pyo3::prelude::*;

use super::decoder::Decoder;
use super::encoder;
use super::{unexpected_option, OpenArgs, WireFormat};
use crate::errors::{Code, Error, ErrorKind, Failure, Result};
use crate::plan::Plan;
use crate::py::Obj;
use decode::{DecodeTables, MsgpackInput};

/// A value of the wrong shape in bytes that are malformed further on is reported as the
/// malformation (a DecodeError), whatever the decoder met first: the answer does not depend on
/// how far the decoder read, nor on whether the bytes came in one call or through a stream.
#[cold]
fn malformed_first(input: &[u8], error: Error) -> Error {
    if !matches!(error.failure, Failure::Message(ErrorKind::Validation, ..)) {
        return error;
    }
    match polycodec_formats::msgpack::frame::malformed_one(input) {
        Some(bad) => Error::decode(
            Code::MsgpackInvalid,
            format_args!("{} at byte {}", bad.message, bad.offset),
        ),
        None => error,
    }
}

/// `polycodec.Ext`, the value of an extension type other than the timestamp under `Any`.
pub fn ext_class(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    static EXT: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> = pyo3::sync::PyOnceLock::new();
    EXT.import(py, "polycodec._msgpack_ext", "Ext")
}

/// One codec's MessagePack state: what MessagePack precomputes from the plan.
pub struct MessagePack {
    tables: DecodeTables,
}

pub fn open(args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    if !args.options.is_empty() {
        return Err(unexpected_option("msgpack", args.options));
    }
    Ok(Box::new(MessagePack {
        tables: DecodeTables::new(args.plan, encode::names(args.plan)),
    }))
}

impl WireFormat for MessagePack {
    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer =
            encode::MessagePackWriter::new(std::mem::take(out), plan, &self.tables.names);
        let result = crate::errors::output_result(|| encoder::encode_one(plan, value, &mut writer));
        *out = writer.out;
        result
    }

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer =
            encode::MessagePackWriter::new(std::mem::take(out), plan, &self.tables.names);
        let result = crate::errors::output_result(|| {
            encoder::encode_many(plan, values, &mut writer, |_| Ok(()))
        });
        *out = writer.out;
        result
    }

    /// The array header goes out for the expected count (the sequence's length); when the count
    /// written differs, the header is rewritten where it is, in `out` or in the stretches
    /// already handed over.
    fn encode_many_streamed(
        &self,
        plan: &Plan,
        values: &Obj<'_>,
        out: &mut Vec<u8>,
        sink: &mut dyn super::OutputSink,
    ) -> Result<()> {
        let mut writer =
            encode::MessagePackWriter::new(std::mem::take(out), plan, &self.tables.names);
        let result = crate::errors::output_result(|| {
            let expected = values.len().unwrap_or(0);
            let start = writer.out.len();
            write::write_container(&mut writer.out, write::Container::Array, expected);
            let header = writer.out.len() - start;
            let mut handed = false;
            let count = encoder::encode_items(plan, values, &mut writer, |w| {
                if w.out.len() >= super::STRETCH {
                    sink.append(&w.out)?;
                    w.out.clear();
                    handed = true;
                }
                Ok(())
            })?;
            if count != expected {
                let mut front = Vec::with_capacity(5);
                write::write_container(&mut front, write::Container::Array, count);
                if handed {
                    sink.replace_front(header, &front)?;
                } else {
                    writer.out.splice(start..start + header, front);
                }
            }
            Ok(())
        });
        *out = writer.out;
        result
    }

    fn streams_many(&self) -> bool {
        true
    }

    fn collect_one<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Option<Result<super::decoder::Collected<'py>>> {
        let reader = MsgpackInput::new(input, &self.tables);
        let result = Decoder::collecting(py, plan, strict, reader).collect_one();
        Some(result.map_err(|error| malformed_first(input, error)))
    }

    fn collect_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Option<Result<super::decoder::Collected<'py>>> {
        let reader = MsgpackInput::new(input, &self.tables);
        let result = Decoder::collecting(py, plan, strict, reader).collect_many();
        Some(result.map_err(|error| malformed_first(input, error)))
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.1entry")]
    fn decode_one<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
        _writer_schema: Option<&Bound<'py, PyAny>>,
    ) -> Result<Obj<'py>> {
        Decoder::new(py, plan, strict, MsgpackInput::new(input, &self.tables))
            .decode_one()
            .map_err(|error| malformed_first(input, error))
    }

    fn decode_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Result<Obj<'py>> {
        Decoder::new(py, plan, strict, MsgpackInput::new(input, &self.tables))
            .decode_many()
            .map_err(|error| malformed_first(input, error))
    }
}

//! JSON (RFC 8259): compact UTF-8 output, strict parsing.

pub mod decode;
pub mod encode;
pub use polycodec_formats::json::{read, write};

use pyo3::prelude::*;

use super::decoder::Decoder;
use super::encoder::{self, NameTable};
use super::{unexpected_option, OpenArgs, WireFormat};
use crate::errors::Result;
use crate::plan::{LiteralValue, Node, Plan};
use crate::py::Obj;

/// One codec's JSON state: what JSON precomputes from the plan.
pub struct Json {
    keys: Keys,
    tags: TagEntries,
    plain: decode::PlainTable,
    builtins: super::builtins_table::Table,
}

/// For each tagged union node, each of its tags' whole entry as polycodec writes it first in
/// the object, `,"tag_field":"tag"` (str tags only: an int's digits could continue past the
/// entry), by the tag's position in `TaggedUnionSpec::tags`. The decoder matches the input
/// against these to pick the variant in one comparison, without reading the tag as a string.
/// Empty for every other node.
pub type TagEntries = Vec<Box<[Option<Box<[u8]>>]>>;

/// The codec's [`TagEntries`] for `plan`.
pub fn tag_entries(plan: &Plan) -> TagEntries {
    plan.nodes
        .iter()
        .map(|node| match node {
            Node::TaggedUnion(spec) => spec
                .tags
                .iter()
                .map(|(tag, _)| match tag {
                    LiteralValue::Str(value) => {
                        let mut entry = member(&spec.tag_field);
                        write::write_str(&mut entry, value);
                        Some(entry.into_boxed_slice())
                    }
                    _ => None,
                })
                .collect(),
            _ => Box::default(),
        })
        .collect()
}

/// Each record field's JSON member prefix `,"wire_name":` (the name escaped and quoted once,
/// when the codec is built), and each fixed tag's entry `"tag_field":"tag"`. Without its
/// leading comma a member is the first one written. The decoder matches keys against the same
/// members packed per record in its own table (`decode::PlainTable`).
pub type Keys = NameTable;

/// The codec's [`Keys`] for `plan`.
pub fn keys(plan: &Plan) -> Keys {
    NameTable::new(
        plan,
        member,
        |member, tag| {
            let mut entry = member[1..].to_vec();
            entry.extend_from_slice(&literal(tag));
            entry
        },
        literal,
    )
}

/// A literal or enum value as JSON bytes.
fn literal(value: &LiteralValue) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        LiteralValue::Str(text) => write::write_str(&mut out, text),
        LiteralValue::Int(number) => write::write_i64(&mut out, *number),
        LiteralValue::Bool(flag) => out.extend_from_slice(if *flag { b"true" } else { b"false" }),
    }
    out
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
        keys: keys(args.plan),
        tags: tag_entries(args.plan),
        plain: decode::plain_table(args.spec.py(), args.plan),
        builtins: super::builtins_table::Table::build(args.spec.py(), args.plan),
    }))
}

impl WireFormat for Json {
    fn builtins_table(&self) -> Option<&super::builtins_table::Table> {
        Some(&self.builtins)
    }

    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer = encode::JsonWriter::new(std::mem::take(out), plan, &self.keys);
        let result = crate::errors::output_result(|| encoder::encode_one(plan, value, &mut writer));
        *out = writer.out;
        result
    }

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        let mut writer = encode::JsonWriter::new(std::mem::take(out), plan, &self.keys);
        let result = crate::errors::output_result(|| {
            encoder::encode_many(plan, values, &mut writer, |_| Ok(()))
        });
        *out = writer.out;
        result
    }

    fn encode_many_streamed(
        &self,
        plan: &Plan,
        values: &Obj<'_>,
        out: &mut Vec<u8>,
        sink: &mut dyn super::OutputSink,
    ) -> Result<()> {
        let mut writer = encode::JsonWriter::new(std::mem::take(out), plan, &self.keys);
        let result = crate::errors::output_result(|| {
            encoder::encode_many(plan, values, &mut writer, |w| {
                if w.out.len() >= super::STRETCH {
                    sink.append(&w.out)?;
                    w.out.clear();
                }
                Ok(())
            })
        });
        *out = writer.out;
        result
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
        Decoder::new(
            py,
            plan,
            strict,
            decode::JsonInput::new(input, &self.tags, &self.plain),
        )
        .decode_one()
    }

    fn decode_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Result<Obj<'py>> {
        Decoder::new(
            py,
            plan,
            strict,
            decode::JsonInput::new(input, &self.tags, &self.plain),
        )
        .decode_many()
    }

    fn collect_one<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Option<Result<super::decoder::Collected<'py>>> {
        let reader = decode::JsonInput::new(input, &self.tags, &self.plain);
        Some(Decoder::collecting(py, plan, strict, reader).collect_one())
    }

    fn collect_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Option<Result<super::decoder::Collected<'py>>> {
        let reader = decode::JsonInput::new(input, &self.tags, &self.plain);
        Some(Decoder::collecting(py, plan, strict, reader).collect_many())
    }

    fn accepts_str(&self) -> bool {
        true
    }

    fn streams_many(&self) -> bool {
        true
    }
}

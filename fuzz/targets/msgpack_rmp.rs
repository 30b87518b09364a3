//! Differential: the MessagePack reader against rmp-serde. Whatever rmp-serde reads from a
//! prefix of the input, the reader reads from the same bytes as the same value.
#![no_main]

use std::fmt;

use libfuzzer_sys::fuzz_target;
use polycodec_formats::msgpack::read::Reader;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

#[path = "msgpack_tree.rs"]
#[allow(dead_code)]
mod msgpack_tree;
use msgpack_tree::Mp;

/// rmp-serde's view of a value: strs and bins both arrive as bytes or text, ext as a newtype.
#[derive(Debug)]
enum Theirs {
    Nil,
    Bool(bool),
    Int(i128),
    Float(f64),
    Text(String),
    Bytes(Vec<u8>),
    Array(Vec<Theirs>),
    Map(Vec<(Theirs, Theirs)>),
    Ext(i8, Vec<u8>),
}

struct TheirsVisitor;

impl<'de> Visitor<'de> for TheirsVisitor {
    type Value = Theirs;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any MessagePack value")
    }
    fn visit_unit<E>(self) -> Result<Theirs, E> {
        Ok(Theirs::Nil)
    }
    fn visit_none<E>(self) -> Result<Theirs, E> {
        Ok(Theirs::Nil)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Theirs, E> {
        Ok(Theirs::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Theirs, E> {
        Ok(Theirs::Int(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Theirs, E> {
        Ok(Theirs::Int(v.into()))
    }
    fn visit_f32<E>(self, v: f32) -> Result<Theirs, E> {
        Ok(Theirs::Float(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Theirs, E> {
        Ok(Theirs::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Theirs, E> {
        Ok(Theirs::Text(v.to_owned()))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Theirs, E> {
        Ok(Theirs::Bytes(v.to_vec()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Theirs, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Theirs>()? {
            items.push(item);
        }
        Ok(Theirs::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Theirs, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<Theirs, Theirs>()? {
            entries.push(entry);
        }
        Ok(Theirs::Map(entries))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Theirs, D::Error> {
        // rmp-serde hands an ext over as the newtype `_ExtStruct((i8, bytes))`.
        let (kind, payload) = <(i8, serde_bytes_buf::Buf)>::deserialize(d)?;
        Ok(Theirs::Ext(kind, payload.0))
    }
}

/// Bytes through serde whichever way they are handed over.
mod serde_bytes_buf {
    use super::*;
    pub struct Buf(pub Vec<u8>);
    impl<'de> Deserialize<'de> for Buf {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Buf, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Buf;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, v: &[u8]) -> Result<Buf, E> {
                    Ok(Buf(v.to_vec()))
                }
            }
            d.deserialize_bytes(V)
        }
    }
}

impl<'de> Deserialize<'de> for Theirs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Theirs, D::Error> {
        d.deserialize_any(TheirsVisitor)
    }
}

fn same(ours: &Mp, theirs: &Theirs) -> bool {
    match (ours, theirs) {
        (Mp::Nil, Theirs::Nil) => true,
        (Mp::Bool(a), Theirs::Bool(b)) => a == b,
        (Mp::Int(a), Theirs::Int(b)) => a == b,
        (Mp::Float(a), Theirs::Float(b)) => a.to_bits() == b.to_bits(),
        (Mp::Str(a), Theirs::Text(b)) => a == b.as_bytes(),
        // rmp-serde hands over a str that is not UTF-8 as bytes.
        (Mp::Str(a) | Mp::Bin(a), Theirs::Bytes(b)) => a == b,
        (Mp::Array(a), Theirs::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Mp::Map(a), Theirs::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((k, v), (l, w))| same(k, l) && same(v, w))
        }
        (Mp::Ext(a, p), Theirs::Ext(b, q)) => a == b && p == q,
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut de = rmp_serde::Deserializer::from_read_ref(data);
    let theirs = Theirs::deserialize(&mut de);
    let mut r = Reader::new(data);
    let ours = msgpack_tree::read(&mut r, 0);
    match (ours, theirs) {
        (Ok(Some(ours)), Ok(theirs)) => assert!(same(&ours, &theirs), "{ours:?} != {theirs:?}"),
        // rmp-serde's own depth limit (1024) is above ours: past 64 levels we only skip.
        (Ok(None), _) => {}
        (Err(_), Err(_)) => {}
        (Ok(Some(ours)), Err(err)) => panic!("rmp-serde refuses ({err}) what we read: {ours:?}"),
        (Err(err), Ok(theirs)) => panic!("we refuse ({err}) what rmp-serde reads: {theirs:?}"),
    }
});

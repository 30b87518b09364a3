//! polycodec's MessagePack reader and writer against `rmp` (and `rmp-serde`), the crates the
//! MessagePack issue names, on the same documents and into or from the same in-memory tree, so
//! the choice of a hand-written reader and writer is measured rather than assumed.
//!
//! Two documents, written by polycodec's writer and checked byte for byte against `rmp`'s: 100
//! record-shaped maps (str, int, float, bool, nil, bin, timestamp, arrays of strs and of small
//! maps), and 20 ten-level nested maps shaped like the benchmark's `hierarchy` model. Rows:
//! every head read in turn with no tree built (the reader's own work), a tree built from them
//! (what a decoder does: the allocations dominate), a validating skip (unknown fields), and
//! writing the tree. `rmp` is used the way `rmp-serde` uses it: `read_marker`, then the
//! marker's length or payload through `RmpRead`'s `read_data_*`, strs and bins borrowed from
//! the input (`rmp-serde`'s `ReadSlice`), reading from `&[u8]` (as `rmp-serde` does) and from
//! `rmp::decode::Bytes`.
//!
//! Run: `cargo bench --bench msgpack_wire`. Each line prints the median of 21 samples for both
//! implementations and the median ratio of back-to-back pairs (above 1.00x polycodec is faster).

use std::fmt;
use std::hint::black_box;
use std::time::Instant;

use polycodec_formats::msgpack::{read, write};
use read::{Head, Reader};
use rmp::decode::{Bytes, RmpRead};
use rmp::encode::{ByteBuf, RmpWrite};
use rmp::Marker;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use write::Container;

/// The tree every reader builds and every writer writes: what a decoder driven by either
/// library would produce. Timestamps are the extension type -1, as polycodec writes datetimes.
#[derive(Debug, PartialEq)]
enum Tree {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    /// Seconds since the epoch and nanoseconds.
    Timestamp(i64, u32),
    Array(Vec<Tree>),
    Map(Vec<(String, Tree)>),
}

fn text(bytes: &[u8]) -> String {
    std::str::from_utf8(bytes).expect("UTF-8").to_owned()
}

fn timestamp(kind: i64, payload: &[u8]) -> Tree {
    assert_eq!(kind, -1, "only timestamps in the document");
    let (seconds, nanoseconds) = read::timestamp(payload).expect("a timestamp payload");
    Tree::Timestamp(seconds, nanoseconds)
}

// ---- polycodec --------------------------------------------------------------------------------

fn read_tree(reader: &mut Reader<'_>) -> Tree {
    match reader.next().expect("valid MessagePack") {
        Head::Nil => Tree::Nil,
        Head::False => Tree::Bool(false),
        Head::True => Tree::Bool(true),
        Head::Int(value) => Tree::Int(value),
        Head::BigUint(_) => panic!("no uint64 above i64::MAX in the document"),
        Head::Float(value) => Tree::Float(value),
        Head::Str(bytes) => Tree::Str(text(bytes)),
        Head::Bin(bytes) => Tree::Bin(bytes.to_vec()),
        Head::Array(count) => {
            let mut items = Vec::with_capacity(count);
            for _ in 0..count {
                items.push(read_tree(reader));
            }
            Tree::Array(items)
        }
        Head::Map(count) => {
            let mut members = Vec::with_capacity(count);
            for _ in 0..count {
                let key = match reader.next().expect("a key") {
                    Head::Str(bytes) => text(bytes),
                    other => panic!("a {} key", other.describe()),
                };
                members.push((key, read_tree(reader)));
            }
            Tree::Map(members)
        }
        Head::Ext(kind, payload) => timestamp(kind, payload),
    }
}

/// Reads every head in order (a container's items follow its head, so this visits every value)
/// and folds them into a checksum: the reader's own work, with no tree allocated.
fn read_heads(reader: &mut Reader<'_>) -> u64 {
    let mut sum = 0u64;
    while !reader.at_end() {
        sum = sum.wrapping_add(match reader.next().expect("valid MessagePack") {
            Head::Nil | Head::False => 0,
            Head::True => 1,
            Head::Int(value) => value as u64,
            Head::BigUint(value) => value,
            Head::Float(value) => value.to_bits(),
            Head::Str(bytes) => std::str::from_utf8(bytes).expect("UTF-8").len() as u64,
            Head::Bin(bytes) => bytes.len() as u64,
            Head::Array(count) | Head::Map(count) => count as u64,
            Head::Ext(kind, payload) => {
                assert_eq!(kind, -1, "only timestamps in the document");
                read::timestamp(payload).expect("a timestamp").0 as u64
            }
        });
    }
    sum
}

fn write_tree(out: &mut Vec<u8>, tree: &Tree) {
    match tree {
        Tree::Nil => write::write_nil(out),
        Tree::Bool(value) => write::write_bool(out, *value),
        Tree::Int(value) => write::write_i64(out, *value),
        Tree::Float(value) => write::write_f64(out, *value),
        Tree::Str(value) => write::write_str(out, value),
        Tree::Bin(value) => write::write_bin(out, value),
        Tree::Timestamp(seconds, nanoseconds) => {
            write::write_timestamp(out, *seconds, *nanoseconds)
        }
        Tree::Array(items) => {
            write::write_container(out, Container::Array, items.len());
            for item in items {
                write_tree(out, item);
            }
        }
        Tree::Map(members) => {
            write::write_container(out, Container::Map, members.len());
            for (key, value) in members {
                write::write_str(out, key);
                write_tree(out, value);
            }
        }
    }
}

// ---- rmp: the marker API ----------------------------------------------------------------------

/// What `rmp-serde` adds to `RmpRead` for an in-memory input (its `ReadSlice`): payloads
/// borrowed from the input instead of copied out of it.
trait Input<'a>: RmpRead {
    fn left(&self) -> usize;
    fn take(&mut self, length: usize) -> &'a [u8];
}

impl<'a> Input<'a> for &'a [u8] {
    #[inline]
    fn left(&self) -> usize {
        self.len()
    }

    #[inline]
    fn take(&mut self, length: usize) -> &'a [u8] {
        assert!(length <= self.len(), "truncated input");
        let (taken, rest) = self.split_at(length);
        *self = rest;
        taken
    }
}

impl<'a> Input<'a> for Bytes<'a> {
    #[inline]
    fn left(&self) -> usize {
        self.remaining_slice().len()
    }

    #[inline]
    fn take(&mut self, length: usize) -> &'a [u8] {
        let slice = self.remaining_slice();
        assert!(length <= slice.len(), "truncated input");
        let (taken, rest) = slice.split_at(length);
        *self = Bytes::new(rest);
        taken
    }
}

/// An item count, refused (as polycodec's reader does) when even one byte per item would not
/// fit in what is left, so that reserving room for the items is safe.
#[inline]
fn count<'a, R: Input<'a>>(input: &R, count: u32, per_item: usize) -> usize {
    let count = count as usize;
    assert!(count * per_item <= input.left(), "container too long");
    count
}

fn rmp_read_tree<'a, R: Input<'a>>(input: &mut R) -> Tree {
    let marker = rmp::decode::read_marker(input).expect("a marker");
    match marker {
        Marker::Null => Tree::Nil,
        Marker::False => Tree::Bool(false),
        Marker::True => Tree::Bool(true),
        Marker::FixPos(value) => Tree::Int(value.into()),
        Marker::FixNeg(value) => Tree::Int(value.into()),
        Marker::U8 => Tree::Int(input.read_data_u8().expect("u8").into()),
        Marker::U16 => Tree::Int(input.read_data_u16().expect("u16").into()),
        Marker::U32 => Tree::Int(input.read_data_u32().expect("u32").into()),
        Marker::U64 => {
            let value = input.read_data_u64().expect("u64");
            Tree::Int(i64::try_from(value).expect("no uint64 above i64::MAX in the document"))
        }
        Marker::I8 => Tree::Int(input.read_data_i8().expect("i8").into()),
        Marker::I16 => Tree::Int(input.read_data_i16().expect("i16").into()),
        Marker::I32 => Tree::Int(input.read_data_i32().expect("i32").into()),
        Marker::I64 => Tree::Int(input.read_data_i64().expect("i64")),
        Marker::F32 => Tree::Float(input.read_data_f32().expect("f32").into()),
        Marker::F64 => Tree::Float(input.read_data_f64().expect("f64")),
        Marker::FixStr(length) => Tree::Str(text(input.take(length.into()))),
        Marker::Str8 | Marker::Str16 | Marker::Str32 => {
            let length = rmp_length(input, marker);
            Tree::Str(text(input.take(length)))
        }
        Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => {
            let length = rmp_length(input, marker);
            Tree::Bin(input.take(length).to_vec())
        }
        Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => {
            let length = rmp_array_length(input, marker);
            let length = count(input, length, 1);
            let mut items = Vec::with_capacity(length);
            for _ in 0..length {
                items.push(rmp_read_tree(input));
            }
            Tree::Array(items)
        }
        Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => {
            let length = rmp::decode::marker_to_len(input, marker).expect("a map length");
            let length = count(input, length, 2);
            let mut members = Vec::with_capacity(length);
            for _ in 0..length {
                let key_length = rmp::decode::read_str_len(input).expect("a str key");
                let key = text(input.take(key_length as usize));
                members.push((key, rmp_read_tree(input)));
            }
            Tree::Map(members)
        }
        Marker::FixExt1
        | Marker::FixExt2
        | Marker::FixExt4
        | Marker::FixExt8
        | Marker::FixExt16
        | Marker::Ext8
        | Marker::Ext16
        | Marker::Ext32 => {
            let length = rmp_ext_length(input, marker);
            let kind = input.read_data_i8().expect("an ext type");
            timestamp(kind.into(), input.take(length))
        }
        Marker::Reserved => panic!("reserved byte 0xc1"),
    }
}

/// [`read_heads`] with the marker API.
fn rmp_read_heads<'a, R: Input<'a>>(input: &mut R) -> u64 {
    let mut sum = 0u64;
    while input.left() > 0 {
        let marker = rmp::decode::read_marker(input).expect("a marker");
        sum = sum.wrapping_add(match marker {
            Marker::Null | Marker::False => 0,
            Marker::True => 1,
            Marker::FixPos(value) => value.into(),
            Marker::FixNeg(value) => value as u64,
            Marker::U8 => input.read_data_u8().expect("u8").into(),
            Marker::U16 => input.read_data_u16().expect("u16").into(),
            Marker::U32 => input.read_data_u32().expect("u32").into(),
            Marker::U64 => input.read_data_u64().expect("u64"),
            Marker::I8 => input.read_data_i8().expect("i8") as u64,
            Marker::I16 => input.read_data_i16().expect("i16") as u64,
            Marker::I32 => input.read_data_i32().expect("i32") as u64,
            Marker::I64 => input.read_data_i64().expect("i64") as u64,
            Marker::F32 => f64::from(input.read_data_f32().expect("f32")).to_bits(),
            Marker::F64 => input.read_data_f64().expect("f64").to_bits(),
            Marker::FixStr(length) => {
                let bytes = input.take(length.into());
                std::str::from_utf8(bytes).expect("UTF-8").len() as u64
            }
            Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                let length = rmp_length(input, marker);
                std::str::from_utf8(input.take(length))
                    .expect("UTF-8")
                    .len() as u64
            }
            Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => {
                let length = rmp_length(input, marker);
                input.take(length).len() as u64
            }
            Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => {
                let length = rmp_array_length(input, marker);
                count(input, length, 1) as u64
            }
            Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => {
                let length = rmp::decode::marker_to_len(input, marker).expect("a map length");
                count(input, length, 2) as u64
            }
            Marker::FixExt1
            | Marker::FixExt2
            | Marker::FixExt4
            | Marker::FixExt8
            | Marker::FixExt16
            | Marker::Ext8
            | Marker::Ext16
            | Marker::Ext32 => {
                let length = rmp_ext_length(input, marker);
                let kind = input.read_data_i8().expect("an ext type");
                assert_eq!(kind, -1, "only timestamps in the document");
                read::timestamp(input.take(length)).expect("a timestamp").0 as u64
            }
            Marker::Reserved => panic!("reserved byte 0xc1"),
        });
    }
    sum
}

/// Skips one complete value with the marker API: the loop of polycodec's `skip_value` (open
/// containers on a stack, at most `max_depth`), each head read the way [`rmp_read_tree`] reads
/// it. (rmp's own `MessageLen`, which measures a message's length, cannot stand in: in rmp
/// 0.8.15 it panics with `todo!()` on any extension, so on every document with a timestamp.)
fn rmp_skip<'a, R: Input<'a>>(input: &mut R, max_depth: usize) {
    let mut pending: Vec<usize> = Vec::new();
    let mut remaining = 1usize;
    loop {
        while remaining == 0 {
            match pending.pop() {
                Some(outer) => remaining = outer,
                None => return,
            }
        }
        remaining -= 1;
        let marker = rmp::decode::read_marker(input).expect("a marker");
        let items = match marker {
            Marker::FixPos(_) | Marker::FixNeg(_) | Marker::Null | Marker::True | Marker::False => {
                0
            }
            Marker::U8 | Marker::I8 => {
                input.take(1);
                0
            }
            Marker::U16 | Marker::I16 => {
                input.take(2);
                0
            }
            Marker::U32 | Marker::I32 | Marker::F32 => {
                input.take(4);
                0
            }
            Marker::U64 | Marker::I64 | Marker::F64 => {
                input.take(8);
                0
            }
            Marker::FixStr(length) => {
                input.take(length.into());
                0
            }
            Marker::Str8
            | Marker::Str16
            | Marker::Str32
            | Marker::Bin8
            | Marker::Bin16
            | Marker::Bin32 => {
                let length = rmp_length(input, marker);
                input.take(length);
                0
            }
            Marker::FixExt1
            | Marker::FixExt2
            | Marker::FixExt4
            | Marker::FixExt8
            | Marker::FixExt16
            | Marker::Ext8
            | Marker::Ext16
            | Marker::Ext32 => {
                let length = rmp_ext_length(input, marker);
                input.take(1 + length);
                0
            }
            Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => {
                let length = rmp_array_length(input, marker);
                count(input, length, 1)
            }
            Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => {
                let length = rmp::decode::marker_to_len(input, marker).expect("a map length");
                count(input, length, 2) * 2
            }
            Marker::Reserved => panic!("reserved byte 0xc1"),
        };
        if items > 0 {
            assert!(pending.len() < max_depth, "nesting deeper than the limit");
            pending.push(remaining);
            remaining = items;
        }
    }
}

#[inline]
fn rmp_array_length<'a, R: Input<'a>>(input: &mut R, marker: Marker) -> u32 {
    match marker {
        Marker::FixArray(length) => length.into(),
        Marker::Array16 => input.read_data_u16().expect("u16").into(),
        _ => input.read_data_u32().expect("u32"),
    }
}

#[inline]
fn rmp_ext_length<'a, R: Input<'a>>(input: &mut R, marker: Marker) -> usize {
    match marker {
        Marker::FixExt1 => 1,
        Marker::FixExt2 => 2,
        Marker::FixExt4 => 4,
        Marker::FixExt8 => 8,
        Marker::FixExt16 => 16,
        _ => rmp_length(input, marker),
    }
}

/// The length after a str, bin or ext marker of the 8, 16 or 32-bit form.
#[inline]
fn rmp_length<'a, R: Input<'a>>(input: &mut R, marker: Marker) -> usize {
    match marker {
        Marker::Str8 | Marker::Bin8 | Marker::Ext8 => input.read_data_u8().expect("u8").into(),
        Marker::Str16 | Marker::Bin16 | Marker::Ext16 => input.read_data_u16().expect("u16").into(),
        _ => input.read_data_u32().expect("u32") as usize,
    }
}

fn rmp_write_tree<W: RmpWrite>(out: &mut W, tree: &Tree) {
    use rmp::encode;
    match tree {
        Tree::Nil => encode::write_nil(out).expect("written"),
        Tree::Bool(value) => encode::write_bool(out, *value).expect("written"),
        Tree::Int(value) => {
            encode::write_sint(out, *value).expect("written");
        }
        Tree::Float(value) => encode::write_f64(out, *value).expect("written"),
        Tree::Str(value) => encode::write_str(out, value).expect("written"),
        Tree::Bin(value) => encode::write_bin(out, value).expect("written"),
        Tree::Timestamp(seconds, nanoseconds) => {
            // rmp has no timestamp writer: its users build the smallest payload themselves.
            let (payload, length) = timestamp_payload(*seconds, *nanoseconds);
            encode::write_ext_meta(out, length as u32, -1).expect("written");
            out.write_bytes(&payload[..length]).expect("written");
        }
        Tree::Array(items) => {
            encode::write_array_len(out, items.len() as u32).expect("written");
            for item in items {
                rmp_write_tree(out, item);
            }
        }
        Tree::Map(members) => {
            encode::write_map_len(out, members.len() as u32).expect("written");
            for (key, value) in members {
                encode::write_str(out, key).expect("written");
                rmp_write_tree(out, value);
            }
        }
    }
}

/// The timestamp extension's payload in its smallest form (32, 64 or 96-bit) and its length.
#[inline]
fn timestamp_payload(seconds: i64, nanoseconds: u32) -> ([u8; 12], usize) {
    let mut payload = [0u8; 12];
    if seconds >> 34 == 0 {
        let combined = (u64::from(nanoseconds) << 34) | seconds as u64;
        if combined >> 32 == 0 {
            payload[..4].copy_from_slice(&(combined as u32).to_be_bytes());
            (payload, 4)
        } else {
            payload[..8].copy_from_slice(&combined.to_be_bytes());
            (payload, 8)
        }
    } else {
        payload[..4].copy_from_slice(&nanoseconds.to_be_bytes());
        payload[4..].copy_from_slice(&seconds.to_be_bytes());
        (payload, 12)
    }
}

// ---- rmp-serde: the same tree through serde -----------------------------------------------------

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a MessagePack value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Tree, E> {
        Ok(Tree::Nil)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tree, E> {
        Ok(Tree::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tree, E> {
        i64::try_from(v)
            .map(Tree::Int)
            .map_err(|_| E::custom("no uint64 above i64::MAX in the document"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tree, E> {
        Ok(Tree::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Tree, E> {
        Ok(Tree::Str(v.to_owned()))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Tree, E> {
        Ok(Tree::Bin(v.to_vec()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((key, value)) = map.next_entry::<String, Tree>()? {
            members.push((key, value));
        }
        Ok(Tree::Map(members))
    }
    /// rmp-serde hands an extension over as a newtype holding (type, payload).
    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Tree, D::Error> {
        let (kind, payload): (i8, &'de [u8]) = Deserialize::deserialize(deserializer)?;
        Ok(timestamp(kind.into(), payload))
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tree, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

// ---- the documents ------------------------------------------------------------------------------

struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const WORDS: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
];

fn word(random: &mut Random) -> Tree {
    Tree::Str(WORDS[(random.next() % 8) as usize].to_owned())
}

fn field(name: &str, value: Tree) -> (String, Tree) {
    (name.to_owned(), value)
}

/// A datetime with microseconds in 2024: the 64-bit timestamp form.
fn instant(random: &mut Random) -> Tree {
    Tree::Timestamp(
        1_704_067_200 + (random.next() % 31_536_000) as i64,
        (random.next() % 1_000_000) as u32 * 1000,
    )
}

/// 100 maps shaped like the benchmark's `record` model (its wire form in polycodec), plus a
/// negative int and a 20-byte digest as bin.
fn record_document() -> Tree {
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let random = &mut random;
    let records = (0..100i64)
        .map(|id| {
            let tags = (0..(random.next() % 4))
                .map(|_| {
                    Tree::Map(vec![
                        field("name", word(random)),
                        field(
                            "weight",
                            Tree::Float((random.next() % 10_000) as f64 / 997.0),
                        ),
                        field("pinned", Tree::Bool(random.next().is_multiple_of(2))),
                    ])
                })
                .collect();
            let digest = (0..20).map(|_| random.next() as u8).collect();
            let last_login = if random.next().is_multiple_of(3) {
                Tree::Nil
            } else {
                instant(random)
            };
            let nickname = if random.next().is_multiple_of(2) {
                Tree::Nil
            } else {
                word(random)
            };
            Tree::Map(vec![
                field("id", Tree::Int(id * 7919)),
                field("username", word(random)),
                field("email", Tree::Str(format!("user{id}@example.com"))),
                field(
                    "score",
                    Tree::Float((random.next() % 1_000_000) as f64 / 1013.0),
                ),
                field("active", Tree::Bool(!random.next().is_multiple_of(3))),
                field("status", Tree::Str("active".into())),
                field("created_at", instant(random)),
                field("last_login", last_login),
                field("nickname", nickname),
                field("age", Tree::Int((random.next() % 90) as i64)),
                field("balance", Tree::Int(-((random.next() % 1_000_000) as i64))),
                field("avatar_sha1", Tree::Bin(digest)),
                field("tags", Tree::Array(tags)),
                field("roles", Tree::Array(vec![word(random), word(random)])),
            ])
        })
        .collect();
    Tree::Array(records)
}

/// 20 chains of ten nested maps shaped like the benchmark's `hierarchy` model: each level has
/// a name, an int, a Decimal and a date (strs on the wire), a timestamp, an enum value, an
/// optional str and the next level.
fn nested_document() -> Tree {
    let mut random = Random(0x2545_F491_4F6C_DD1D);
    let random = &mut random;
    let chains = (0..20)
        .map(|_| {
            let mut level = Tree::Map(vec![
                field("name", word(random)),
                field("passed", Tree::Bool(random.next().is_multiple_of(2))),
                field(
                    "measured",
                    Tree::Str(format!("{}.25", random.next() % 1000)),
                ),
                field("checked_on", Tree::Str("2024-05-17".into())),
                field("checked_at", instant(random)),
                field("priority", Tree::Str("normal".into())),
                field("comment", Tree::Nil),
            ]);
            for depth in 0..9 {
                let note = if random.next().is_multiple_of(2) {
                    Tree::Nil
                } else {
                    Tree::Str(format!("reviewed at level {depth}"))
                };
                level = Tree::Map(vec![
                    field("name", word(random)),
                    field("order", Tree::Int((random.next() % 500) as i64)),
                    field(
                        "budget",
                        Tree::Str(format!("{}.50", random.next() % 100_000)),
                    ),
                    field("due", Tree::Str("2024-09-30".into())),
                    field("created_at", instant(random)),
                    field("status", Tree::Str("pending".into())),
                    field("note", note),
                    field("child", level),
                ]);
            }
            level
        })
        .collect();
    Tree::Array(chains)
}

// ---- timing -------------------------------------------------------------------------------------

/// Times `ours` and `theirs` in alternating samples of about 2 ms each, 21 of each (which one
/// goes first alternates too), and returns the median seconds per call of each and the median
/// of the per-pair ratios (theirs / ours). Alternating and pairing keep load from other
/// processes on a shared machine from falling on one side only: each ratio compares two samples
/// taken back to back.
fn measure(mut ours: impl FnMut(), mut theirs: impl FnMut()) -> (f64, f64, f64) {
    let start = Instant::now();
    let mut warmup = 0u32;
    while start.elapsed().as_secs_f64() < 0.02 {
        ours();
        theirs();
        warmup += 1;
    }
    let calls = (f64::from(warmup) * 0.002 / start.elapsed().as_secs_f64() * 2.0).ceil() as u32;
    let sample = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..calls {
            f();
        }
        start.elapsed().as_secs_f64() / f64::from(calls)
    };
    let (mut a, mut b): (Vec<f64>, Vec<f64>) = (0..21)
        .map(|i| {
            if i % 2 == 0 {
                let a = sample(&mut ours);
                (a, sample(&mut theirs))
            } else {
                let b = sample(&mut theirs);
                (sample(&mut ours), b)
            }
        })
        .unzip();
    let mut ratios: Vec<f64> = a.iter().zip(&b).map(|(a, b)| b / a).collect();
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    (median(&mut a), median(&mut b), median(&mut ratios))
}

fn report(name: &str, peer: &str, (ours, theirs, ratio): (f64, f64, f64), bytes: usize) {
    let mb = bytes as f64 / 1e6;
    println!(
        "  {name:<17} polycodec {:>6.0} MB/s   {peer:<23} {:>6.0} MB/s   {ratio:.2}x",
        mb / ours,
        mb / theirs,
    );
}

fn bench(title: &str, tree: &Tree) {
    let mut document = Vec::new();
    write_tree(&mut document, tree);
    let mut rmp_bytes = Vec::new();
    rmp_write_tree(&mut rmp_bytes, tree);
    assert_eq!(rmp_bytes, document, "rmp writes the same bytes");

    let mut reader = Reader::new(&document);
    assert_eq!(&read_tree(&mut reader), tree);
    reader.finish().expect("nothing after");
    let mut slice = &document[..];
    assert_eq!(&rmp_read_tree(&mut slice), tree);
    assert!(slice.is_empty());
    let mut bytes = Bytes::new(&document);
    assert_eq!(&rmp_read_tree(&mut bytes), tree);
    assert!(bytes.remaining_slice().is_empty());
    assert_eq!(
        &rmp_serde::from_slice::<Tree>(&document).expect("valid"),
        tree
    );
    let mut slice = &document[..];
    rmp_skip(&mut slice, 1024);
    assert!(slice.is_empty());

    let heads = read_heads(&mut Reader::new(&document));
    assert_eq!(rmp_read_heads(&mut &document[..]), heads);
    assert_eq!(rmp_read_heads(&mut Bytes::new(&document)), heads);

    println!("{title} ({} bytes)", document.len());
    let bytes = document.len();
    let line = |name: &str, peer: &str, timed| report(name, peer, timed, bytes);

    let ours = || {
        black_box(read_heads(&mut Reader::new(black_box(&document))));
    };
    let theirs = || {
        black_box(rmp_read_heads(&mut black_box(&document[..])));
    };
    line(
        "read every head",
        "rmp marker API, &[u8]",
        measure(ours, theirs),
    );
    let theirs = || {
        black_box(rmp_read_heads(&mut Bytes::new(black_box(&document))));
    };
    line(
        "read every head",
        "rmp marker API, Bytes",
        measure(ours, theirs),
    );

    let ours = || {
        let mut reader = Reader::new(black_box(&document));
        black_box(read_tree(&mut reader));
        reader.finish().expect("nothing after");
    };
    let theirs = || {
        let mut input = black_box(&document[..]);
        black_box(rmp_read_tree(&mut input));
        assert!(input.is_empty());
    };
    line(
        "read into a tree",
        "rmp marker API, &[u8]",
        measure(ours, theirs),
    );
    let theirs = || {
        let mut input = Bytes::new(black_box(&document));
        black_box(rmp_read_tree(&mut input));
        assert!(input.remaining_slice().is_empty());
    };
    line(
        "read into a tree",
        "rmp marker API, Bytes",
        measure(ours, theirs),
    );
    let theirs = || {
        black_box(rmp_serde::from_slice::<Tree>(black_box(&document)).expect("valid"));
    };
    line("read into a tree", "rmp-serde", measure(ours, theirs));

    let ours = || {
        let mut reader = Reader::new(black_box(&document));
        reader.skip_value(1024).expect("valid");
        reader.finish().expect("nothing after");
    };
    let theirs = || {
        let mut input = black_box(&document[..]);
        rmp_skip(&mut input, 1024);
        assert!(input.is_empty());
    };
    line(
        "validate (skip)",
        "rmp marker API, &[u8]",
        measure(ours, theirs),
    );
    let theirs = || {
        let mut input = Bytes::new(black_box(&document));
        rmp_skip(&mut input, 1024);
        assert!(input.remaining_slice().is_empty());
    };
    line(
        "validate (skip)",
        "rmp marker API, Bytes",
        measure(ours, theirs),
    );
    let theirs = || {
        rmp_serde::from_slice::<IgnoredAny>(black_box(&document)).expect("valid");
    };
    line(
        "validate (skip)",
        "rmp-serde IgnoredAny",
        measure(ours, theirs),
    );

    let mut ours_out = Vec::with_capacity(bytes);
    let mut theirs_out = Vec::with_capacity(bytes);
    let mut buffer = ByteBuf::with_capacity(bytes);
    let timed = measure(
        || {
            ours_out.clear();
            write_tree(&mut ours_out, black_box(tree));
            black_box(&ours_out);
        },
        || {
            theirs_out.clear();
            rmp_write_tree(&mut theirs_out, black_box(tree));
            black_box(&theirs_out);
        },
    );
    line("write the tree", "rmp::encode, Vec<u8>", timed);
    let timed = measure(
        || {
            ours_out.clear();
            write_tree(&mut ours_out, black_box(tree));
            black_box(&ours_out);
        },
        || {
            buffer.as_mut_vec().clear();
            rmp_write_tree(&mut buffer, black_box(tree));
            black_box(buffer.as_slice());
        },
    );
    line("write the tree", "rmp::encode, ByteBuf", timed);
}

fn main() {
    bench("100 record maps", &record_document());
    bench("20 ten-level nested maps", &nested_document());
}

//! polycodec's JSON reader against serde_json, on the same document and into the same in-memory
//! tree, so the choice of a hand-written pull reader is measured rather than assumed. (The
//! writer uses serde_json's string escaper, which measured as fast as a hand-written one.)
//!
//! Run: `cargo bench --bench json_wire`. Each line prints the median of 15 samples for both
//! implementations and their ratio (above 1.00x polycodec is faster).

use std::fmt;
use std::hint::black_box;
use std::time::Instant;

use polycodec_formats::json::read::{Number, Reader, ValueKind};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The tree both sides build: what a decoder driven by either library would produce.
#[derive(Debug, PartialEq)]
enum Tree {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

fn read_tree(reader: &mut Reader<'_>) -> Tree {
    match reader.peek_kind().expect("valid JSON") {
        ValueKind::Null => {
            reader.read_null().expect("null");
            Tree::Null
        }
        ValueKind::True => {
            reader.read_true().expect("true");
            Tree::Bool(true)
        }
        ValueKind::False => {
            reader.read_false().expect("false");
            Tree::Bool(false)
        }
        ValueKind::Number => match reader.read_number().expect("number") {
            Number::Int(value) => Tree::Int(value),
            Number::BigInt(text) => Tree::Float(text.parse().expect("digits")),
            Number::Float { value, .. } => Tree::Float(value),
        },
        ValueKind::String => Tree::Str(reader.read_str().expect("string").text().to_owned()),
        ValueKind::Array => {
            reader.begin_array().expect("array");
            let mut items = Vec::new();
            let mut first = true;
            while reader.next_element(first).expect("element") {
                first = false;
                items.push(read_tree(reader));
            }
            Tree::Array(items)
        }
        ValueKind::Object => {
            reader.begin_object().expect("object");
            let mut members = Vec::new();
            let mut first = true;
            while let Some(key) = reader.next_key(first).expect("key") {
                first = false;
                let key = key.text().to_owned();
                members.push((key, read_tree(reader)));
            }
            Tree::Object(members)
        }
    }
}

/// Writes the benchmark document (not timed).
fn write_tree(out: &mut Vec<u8>, tree: &Tree) {
    match tree {
        Tree::Null => out.extend_from_slice(b"null"),
        Tree::Bool(true) => out.extend_from_slice(b"true"),
        Tree::Bool(false) => out.extend_from_slice(b"false"),
        Tree::Int(value) => out.extend_from_slice(value.to_string().as_bytes()),
        Tree::Float(value) => out.extend_from_slice(format!("{value:?}").as_bytes()),
        Tree::Str(text) => serde_json::to_writer(&mut *out, text).expect("a str"),
        Tree::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_tree(out, item);
            }
            out.push(b']');
        }
        Tree::Object(members) => {
            out.push(b'{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("a str");
                out.push(b':');
                write_tree(out, value);
            }
            out.push(b'}');
        }
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tree, E> {
        Ok(Tree::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tree, E> {
        Ok(i64::try_from(v).map_or(Tree::Float(v as f64), Tree::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tree, E> {
        Ok(Tree::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Tree, E> {
        Ok(Tree::Str(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Tree>()? {
            members.push((key, value));
        }
        Ok(Tree::Object(members))
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tree, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

/// A deterministic document shaped like the benchmark's `record` model: 1,000 API records
/// with strings, ints, floats, bools, nulls, timestamps and nested lists.
fn record_document() -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    let mut records = Vec::new();
    for id in 0..1000i64 {
        let word = |n: u64| Tree::Str(words[(n % 8) as usize].to_owned());
        let tags = (0..(next() % 4))
            .map(|_| {
                Tree::Object(vec![
                    ("name".into(), word(next())),
                    (
                        "weight".into(),
                        Tree::Float((next() % 10_000) as f64 / 997.0),
                    ),
                    ("pinned".into(), Tree::Bool(next() % 2 == 0)),
                ])
            })
            .collect();
        records.push(Tree::Object(vec![
            ("id".into(), Tree::Int(id * 7919)),
            ("username".into(), word(next())),
            ("email".into(), Tree::Str(format!("user{id}@example.com"))),
            (
                "score".into(),
                Tree::Float((next() % 1_000_000) as f64 / 1013.0),
            ),
            ("active".into(), Tree::Bool(next() % 3 != 0)),
            ("status".into(), Tree::Str("active".into())),
            (
                "created_at".into(),
                Tree::Str("2024-05-17T09:41:23.123456Z".into()),
            ),
            ("nickname".into(), Tree::Null),
            ("age".into(), Tree::Int((next() % 90) as i64)),
            ("tags".into(), Tree::Array(tags)),
            (
                "roles".into(),
                Tree::Array(vec![word(next()), word(next())]),
            ),
            (
                "bio".into(),
                Tree::Str("line one\nline \"two\" — naïve café".into()),
            ),
        ]));
    }
    let mut out = Vec::new();
    write_tree(&mut out, &Tree::Array(records));
    out
}

/// Median seconds per call over 15 samples of `calls` calls each.
fn median_seconds(calls: u32, mut f: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..15)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_secs_f64() / f64::from(calls)
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn report(name: &str, ours: f64, serde: f64, bytes: usize) {
    let mb = bytes as f64 / 1e6;
    println!(
        "{name:<28} polycodec {:>8.1} MB/s   serde_json {:>8.1} MB/s   {:.2}x",
        mb / ours,
        mb / serde,
        serde / ours
    );
}

fn main() {
    let document = record_document();
    let tree: Tree = serde_json::from_slice(&document).expect("serde_json parses it");
    assert_eq!(read_tree(&mut Reader::new(&document)), tree);
    let calls = 20;

    let ours = median_seconds(calls, || {
        let mut reader = Reader::new(black_box(&document));
        reader.skip_value(1024).expect("valid");
        reader.finish().expect("nothing after");
    });
    let serde = median_seconds(calls, || {
        black_box(serde_json::from_slice::<IgnoredAny>(black_box(&document)).expect("valid"));
    });
    report("validate (skip)", ours, serde, document.len());

    let ours = median_seconds(calls, || {
        black_box(read_tree(&mut Reader::new(black_box(&document))));
    });
    let serde = median_seconds(calls, || {
        black_box(serde_json::from_slice::<Tree>(black_box(&document)).expect("valid"));
    });
    report("parse into a tree", ours, serde, document.len());
}

//! Differential: the JSON reader against serde_json (RFC 8259 both, floats rounded exactly).
//! They must agree on which documents are JSON and on what each one holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[path = "json_tree.rs"]
#[allow(dead_code)]
mod json_tree;
use json_tree::{document, Json};

fn same(ours: &Json, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Json::Null, Value::Null) => true,
        (Json::Bool(a), Value::Bool(b)) => a == b,
        (Json::Int(a), Value::Number(b)) => match b.as_i64() {
            Some(b) => *a == b,
            // serde_json reads `-0` as the float -0.0.
            None => *a == 0 && b.as_f64() == Some(0.0),
        },
        (Json::BigInt(text), Value::Number(b)) => match b.as_u64() {
            Some(b) => text.parse::<u64>() == Ok(b),
            // Past u64 serde_json keeps the nearest float.
            None => b.as_f64() == text.parse::<f64>().ok(),
        },
        (Json::Float(a), Value::Number(b)) => b.as_f64().map(f64::to_bits) == Some(a.to_bits()),
        (Json::Str(a), Value::String(b)) => a == b,
        (Json::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Json::Object(members), Value::Object(map)) => {
            // serde_json keeps the last of duplicate keys.
            let mut last = std::collections::BTreeMap::new();
            for (key, value) in members {
                last.insert(key.as_str(), value);
            }
            last.len() == map.len()
                && last
                    .iter()
                    .all(|(key, value)| map.get(*key).is_some_and(|theirs| same(value, theirs)))
        }
        _ => false,
    }
}

/// Whether a tree holds a number too large for f64 (serde_json refuses those).
fn overflows(value: &Json) -> bool {
    match value {
        Json::Float(v) => v.is_infinite(),
        Json::BigInt(text) => text.parse::<f64>().map_or(true, f64::is_infinite),
        Json::Array(items) => items.iter().any(overflows),
        Json::Object(members) => members.iter().any(|(_, v)| overflows(v)),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let ours = document(data);
    let theirs = serde_json::from_slice::<Value>(data);
    match (&ours, &theirs) {
        (Ok(None), _) => {}
        (Ok(Some(tree)), Ok(value)) => assert!(same(tree, value), "{tree:?} != {value:?}"),
        (Err(_), Err(_)) => {}
        (Ok(Some(tree)), Err(err)) => {
            assert!(
                overflows(tree) || err.to_string().contains("recursion limit"),
                "serde_json refuses what we read ({err}): {tree:?}"
            );
        }
        (Err(ours), Ok(value)) => panic!("we refuse ({ours}) what serde_json reads: {value:?}"),
    }
});

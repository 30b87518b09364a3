//! Differential: the inert pickle machine against serde-pickle. Where both read a pickle of
//! plain values (no globals), they read the same value.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use libfuzzer_sys::fuzz_target;
use num_bigint::BigInt;
use polycodec_formats::pickle::vm;
use serde_pickle::{DeOptions, HashableValue, Value};

#[path = "pickle_tree.rs"]
#[allow(dead_code)]
mod pickle_tree;
use pickle_tree::Tree;

/// Our tree as serde-pickle's value; `None` when it holds what serde-pickle has no value for
/// (globals, calls, an unhashable key, text that is not UTF-8, NaN, which equals nothing).
fn convert(tree: Tree) -> Option<Value> {
    Some(match tree {
        Tree::None => Value::None,
        Tree::Bool(v) => Value::Bool(v),
        Tree::Int(v) => Value::I64(v),
        Tree::BigInt(bytes) => {
            let n = BigInt::from_signed_bytes_le(&bytes);
            match i64::try_from(&n) {
                Ok(v) => Value::I64(v),
                Err(_) => Value::Int(n),
            }
        }
        Tree::Float(v) if v.is_nan() => return None,
        Tree::Float(v) => Value::F64(v),
        Tree::Str(bytes) => Value::String(String::from_utf8(bytes).ok()?),
        Tree::Bytes(bytes) => Value::Bytes(bytes),
        Tree::List(items) => Value::List(items.into_iter().map(convert).collect::<Option<_>>()?),
        Tree::Tuple(items) => Value::Tuple(items.into_iter().map(convert).collect::<Option<_>>()?),
        Tree::Set(items) => Value::Set(hashables(items)?),
        Tree::FrozenSet(items) => Value::FrozenSet(hashables(items)?),
        Tree::Dict(pairs) => {
            let mut map = BTreeMap::new();
            for (key, value) in pairs {
                map.insert(convert(key)?.into_hashable().ok()?, convert(value)?);
            }
            Value::Dict(map)
        }
        Tree::Opaque => return None,
    })
}

fn hashables(items: Vec<Tree>) -> Option<BTreeSet<HashableValue>> {
    items
        .into_iter()
        .map(|item| convert(item)?.into_hashable().ok())
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok((arena, root)) = vm::run(data) else {
        return;
    };
    let Some(ours) = pickle_tree::expand(&arena, root, &mut 10_000, &mut Vec::new()) else {
        return;
    };
    let Some(ours) = convert(ours) else {
        return;
    };
    if let Ok(theirs) = serde_pickle::value_from_slice(data, DeOptions::new()) {
        assert_eq!(ours, theirs);
    }
});

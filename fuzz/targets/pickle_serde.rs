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

/// Whether a memo index is stored twice (`BINPUT 5` ... `BINPUT 5`, or a `MEMOIZE` landing on
/// an index a PUT took), or the opcodes cannot be followed. serde-pickle loses the value first
/// stored under such an index (`[... 'x' BINPUT 113 BINPUT 113 ...]` loads without its `'x'`,
/// where `pickle.loads` and the machine keep it), so those pickles are not compared.
fn memo_reused(data: &[u8]) -> bool {
    use polycodec_formats::pickle::ops::*;
    let mut keys = std::collections::HashSet::new();
    let mut pos = 0;
    let le = |at: usize, n: usize| -> Option<usize> {
        let bytes = data.get(at..at + n)?;
        Some(
            bytes
                .iter()
                .rev()
                .fold(0usize, |acc, &b| (acc << 8) | usize::from(b)),
        )
    };
    while let Some(&op) = data.get(pos) {
        pos += 1;
        let (skip, key) = match op {
            PROTO | BININT1 | BINGET | EXT1 => (1, None),
            BININT2 | EXT2 => (2, None),
            BININT | LONG_BINGET | EXT4 => (4, None),
            FRAME | BINFLOAT => (8, None),
            BINPUT => (1, le(pos, 1)),
            LONG_BINPUT => (4, le(pos, 4)),
            MEMOIZE => (0, Some(keys.len())),
            LONG1 | SHORT_BINSTRING | SHORT_BINUNICODE | SHORT_BINBYTES => {
                let Some(n) = le(pos, 1) else { return true };
                (1 + n, None)
            }
            LONG4 | BINSTRING | BINUNICODE | BINBYTES => {
                let Some(n) = le(pos, 4) else { return true };
                (4 + n, None)
            }
            BINUNICODE8 | BINBYTES8 | BYTEARRAY8 => {
                let Some(n) = le(pos, 8) else { return true };
                (8 + n, None)
            }
            INT | LONG | FLOAT | STRING | UNICODE | GET | PUT | GLOBAL | INST | PERSID => {
                return true;
            }
            _ => (0, None),
        };
        if let Some(key) = key {
            if !keys.insert(key) {
                return true;
            }
        }
        pos = match pos.checked_add(skip) {
            Some(next) => next,
            None => return true,
        };
    }
    false
}

fuzz_target!(|data: &[u8]| {
    let Ok((arena, root)) = vm::run(data) else {
        return;
    };
    // serde-pickle copies a value where a pickle refers to it again (DUP, a memo get), so a
    // list, dict or set changed after that differs between its copies; pickle.loads and the
    // machine share one object. Only pickles without shared containers are compared.
    let shared_container = arena
        .values
        .iter()
        .zip(&arena.shared)
        .any(|(value, &shared)| {
            shared
                && matches!(
                    value,
                    vm::Value::List(_) | vm::Value::Dict(_) | vm::Value::Set(_)
                )
        });
    if shared_container {
        return;
    }
    let Some(ours) = pickle_tree::expand(&arena, root, &mut 10_000, &mut Vec::new()) else {
        return;
    };
    let Some(ours) = convert(ours) else {
        return;
    };
    if let Ok(theirs) = serde_pickle::value_from_slice(data, DeOptions::new()) {
        if ours != theirs {
            assert!(memo_reused(data), "{ours:?} != {theirs:?}");
        }
    }
});

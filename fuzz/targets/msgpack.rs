//! The MessagePack reader on any bytes: no panic, errors inside the input, the tree walk and
//! `skip_value` agree, what it reads written back by the writer reads again the same, and the
//! timestamp payload decoder holds its range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polycodec_formats::msgpack::read::{timestamp, Reader};
use polycodec_formats::msgpack::write;

#[path = "msgpack_tree.rs"]
#[allow(dead_code)]
mod msgpack_tree;
use msgpack_tree::{document, Mp};

fn write(out: &mut Vec<u8>, value: &Mp) {
    match value {
        Mp::Nil => write::write_nil(out),
        Mp::Bool(v) => write::write_bool(out, *v),
        Mp::Int(v) => match i64::try_from(*v) {
            Ok(v) => write::write_i64(out, v),
            Err(_) => write::write_u64(out, *v as u64),
        },
        Mp::Float(v) => write::write_f64(out, *v),
        Mp::Str(bytes) => {
            write::write_str_header(out, bytes.len());
            out.extend_from_slice(bytes);
        }
        Mp::Bin(bytes) => write::write_bin(out, bytes),
        Mp::Array(items) => {
            write::write_container(out, write::Container::Array, items.len());
            items.iter().for_each(|item| write(out, item));
        }
        Mp::Map(entries) => {
            write::write_container(out, write::Container::Map, entries.len());
            for (key, value) in entries {
                write(out, key);
                write(out, value);
            }
        }
        Mp::Ext(kind, payload) => {
            // fixext or ext 8/16/32, as the spec lays them out.
            let n = payload.len();
            match n {
                1 => out.push(0xd4),
                2 => out.push(0xd5),
                4 => out.push(0xd6),
                8 => out.push(0xd7),
                16 => out.push(0xd8),
                _ if n < 256 => out.extend_from_slice(&[0xc7, n as u8]),
                _ if n < 65536 => {
                    out.push(0xc8);
                    out.extend_from_slice(&(n as u16).to_be_bytes());
                }
                _ => {
                    out.push(0xc9);
                    out.extend_from_slice(&(n as u32).to_be_bytes());
                }
            }
            out.push(*kind as u8);
            out.extend_from_slice(payload);
        }
    }
}

/// Floats compared by bits, so NaN payloads and -0.0 count.
fn same(a: &Mp, b: &Mp) -> bool {
    match (a, b) {
        (Mp::Float(x), Mp::Float(y)) => x.to_bits() == y.to_bits(),
        (Mp::Array(x), Mp::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Mp::Map(x), Mp::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, v), (l, w))| same(k, l) && same(v, w))
        }
        _ => a == b,
    }
}

fn check_timestamps(value: &Mp) {
    match value {
        Mp::Ext(-1, payload) => {
            if let Some((seconds, nanoseconds)) = timestamp(payload) {
                assert!(nanoseconds < 1_000_000_000);
                if payload.len() != 12 {
                    assert!(seconds >= 0);
                }
                let mut out = Vec::new();
                write::write_timestamp(&mut out, seconds, nanoseconds);
                let Ok(Some(Mp::Ext(-1, again))) = document(&out) else {
                    panic!("write_timestamp wrote {out:?}");
                };
                assert_eq!(timestamp(&again), Some((seconds, nanoseconds)));
            }
        }
        Mp::Array(items) => items.iter().for_each(check_timestamps),
        Mp::Map(entries) => entries.iter().for_each(|(k, v)| {
            check_timestamps(k);
            check_timestamps(v)
        }),
        _ => {}
    }
}

/// Whether every str in `value` is UTF-8 and every timestamp extension well formed.
fn checked(value: &Mp) -> bool {
    match value {
        Mp::Str(bytes) => std::str::from_utf8(bytes).is_ok(),
        Mp::Ext(-1, payload) => timestamp(payload).is_some(),
        Mp::Array(items) => items.iter().all(checked),
        Mp::Map(entries) => entries.iter().all(|(k, v)| checked(k) && checked(v)),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let walked = document(data);
    let mut skipper = Reader::new(data);
    let skipped = skipper
        .skip_value(msgpack_tree::MAX_DEPTH)
        .and_then(|()| skipper.finish());
    match (&walked, &skipped) {
        (Err(walk), Err(skip)) => {
            assert!(walk.offset <= data.len() && skip.offset <= data.len());
        }
        // skip_value checks what a read checks later, when it makes the value: a str's UTF-8
        // and a timestamp's payload; the walk keeps their bytes.
        (Ok(Some(tree)), Ok(())) if checked(tree) => {}
        (Ok(Some(tree)), Err(skip)) if !checked(tree) => assert!(skip.offset <= data.len()),
        (Ok(None), _) => {}
        _ => panic!("walk {walked:?} and skip_value {skipped:?} disagree"),
    }
    if let Ok(Some(tree)) = walked {
        check_timestamps(&tree);
        let mut again = Vec::new();
        write(&mut again, &tree);
        let reread = document(&again).expect("the writer's output reads back");
        assert!(
            reread.as_ref().is_some_and(|r| same(r, &tree)),
            "{tree:?} != {reread:?}"
        );
        // Canonical forms are a fixed point: writing what was read gives the same bytes.
        let mut third = Vec::new();
        write(&mut third, reread.as_ref().unwrap());
        assert_eq!(again, third);
    }
});

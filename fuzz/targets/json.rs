//! The JSON reader on any bytes: it never panics, its errors point inside the input, the tree
//! walk and `skip_value` agree on what is a document, and what it reads, written back by the
//! JSON writer, reads again as the same tree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polycodec_formats::json::read::Reader;
use polycodec_formats::json::write;

#[path = "json_tree.rs"]
#[allow(dead_code)]
mod json_tree;
use json_tree::{document, Json};

fn write(out: &mut Vec<u8>, value: &Json) {
    match value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Int(v) => write::write_i64(out, *v),
        Json::BigInt(text) => out.extend_from_slice(text.as_bytes()),
        Json::Float(v) => {
            if write::write_f64(out, *v).is_err() {
                // An overflowing literal reads as infinity, which JSON cannot write.
                out.extend_from_slice(if *v > 0.0 { b"1e999" } else { b"-1e999" });
            }
        }
        Json::Str(s) => write::write_str(out, s),
        Json::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(out, item);
            }
            out.push(b']');
        }
        Json::Object(members) => {
            out.push(b'{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write::write_str(out, key);
                out.push(b':');
                write(out, item);
            }
            out.push(b'}');
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let walked = document(data);
    let mut skipper = Reader::new(data);
    let skipped = skipper
        .skip_value(json_tree::MAX_DEPTH)
        .and_then(|()| skipper.finish());
    match (&walked, &skipped) {
        (Err(walk), Err(skip)) => {
            assert!(walk.offset <= data.len() && skip.offset <= data.len());
        }
        (Ok(Some(_)), Ok(())) | (Ok(None), _) => {}
        _ => panic!("walk {walked:?} and skip_value {skipped:?} disagree"),
    }
    if let Ok(Some(tree)) = walked {
        let mut again = Vec::new();
        write(&mut again, &tree);
        let reread = document(&again).expect("the writer's output reads back");
        assert_eq!(
            reread,
            Some(tree),
            "round trip through {:?}",
            String::from_utf8_lossy(&again)
        );
    }
});

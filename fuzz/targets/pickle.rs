//! The inert pickle machine on any bytes: it never panics, its errors point inside the input,
//! and the arena it leaves is well formed (every id inside it, `shared` covering it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use polycodec_formats::pickle::vm;

#[path = "pickle_tree.rs"]
#[allow(dead_code)]
mod pickle_tree;

fuzz_target!(|data: &[u8]| {
    match vm::run(data) {
        Ok((arena, root)) => {
            pickle_tree::check(&arena, root);
            // Every opcode makes at most one value.
            assert!(arena.values.len() <= data.len());
        }
        Err(err) => {
            assert!(err.offset <= data.len());
            assert!(!err.message.is_empty());
        }
    }
});

//! Avro's binary primitives on any bytes: a program of reads (the first byte says how many
//! of the following bytes are the program) over the rest. No read panics or moves past the
//! end, a failed read is reported, what is read is written back the same way, and the
//! calendar arithmetic round-trips over Python's date range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polycodec_formats::avro::wire::{
    civil_from_days, days_from_civil, write_bytes, write_long, Input, MAX_DAYS, MIN_DAYS,
};

fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let (program, payload) = rest.split_at(usize::from(count).min(rest.len()));
    let mut input = Input::new(payload);
    for &op in program {
        let before = input.pos;
        let ok = match op % 8 {
            0 => input.long().map(|value| {
                let mut out = Vec::new();
                write_long(&mut out, value);
                // The shortest form: never longer than what was read.
                assert!(out.len() <= input.pos - before);
                assert_eq!(Input::new(&out).long().unwrap(), value);
                let days = value.rem_euclid(MAX_DAYS - MIN_DAYS + 1) + MIN_DAYS;
                let (y, m, d) = civil_from_days(days);
                assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days);
                assert!((1..=9999).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d));
            }),
            1 => input.int().map(|value| {
                let mut out = Vec::new();
                write_long(&mut out, i64::from(value));
                assert!(out.len() <= 5);
            }),
            2 => input.length("length").map(|_| ()),
            3 => input.fixed(usize::from(op >> 3)).map(|bytes| {
                assert_eq!(bytes.len(), usize::from(op >> 3));
            }),
            4 => input.bytes().map(|bytes| {
                let mut out = Vec::new();
                write_bytes(&mut out, bytes);
                assert_eq!(Input::new(&out).bytes().unwrap(), bytes);
            }),
            5 => input.boolean().map(|_| ()),
            6 => input.float().map(|_| ()),
            _ => input.double().map(|_| ()),
        };
        assert!(input.pos <= payload.len());
        if ok.is_err() {
            assert!(!ok.unwrap_err().message().is_empty());
            break;
        }
        assert!(input.pos > before || matches!(op % 8, 3 if op >> 3 == 0));
    }
});

//! The stream framers of the byte layer (`formats/*/frame.rs`) on any bytes: no panic, and
//! resumable: a framer given the bytes one more at a time, as a stream's buffer grows, answers
//! what a fresh framer given them all at once answers (the stream decoders' promise that
//! feeding byte by byte returns what one call returns). The first byte picks the format.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polycodec_formats::avro::frame::{block_len, header_len, Extent};
use polycodec_formats::frame::Malformed;
use polycodec_formats::msgpack::frame::{malformed_one, ValueFramer};
use polycodec_formats::pickle::frame::PickleFramer;

/// `next` over every prefix in turn, then the whole: each prefix before the answer needs more.
fn resumes<F: Default>(data: &[u8], next: fn(&mut F, &[u8]) -> Result<Option<usize>, Malformed>) {
    let whole = next(&mut F::default(), data);
    let mut framer = F::default();
    for end in 0..=data.len() {
        let answer = next(&mut framer, &data[..end]);
        match answer {
            Ok(None) => continue,
            Ok(Some(_)) | Err(_) => {
                // A unit ends (or is refused) at the first prefix that holds it, and the
                // whole input gives the same answer.
                assert_eq!(answer, whole, "prefix of {end} bytes");
                if let Ok(Some(length)) = answer {
                    assert!(length <= end);
                }
                return;
            }
        }
    }
    assert_eq!(whole, Ok(None));
}

/// An Avro extent: complete where the whole input says, and short of no more than it lacks.
fn avro_extent(data: &[u8], extent: fn(&[u8]) -> Result<Extent, Malformed>) {
    let Ok(whole) = extent(data) else { return };
    if let Extent::Complete(length) = whole {
        assert!(length <= data.len());
        assert_eq!(extent(&data[..length]), Ok(Extent::Complete(length)));
    }
    for end in 0..data.len() {
        if let Ok(Extent::Short(at_least)) = extent(&data[..end]) {
            assert!(at_least > end);
            if let Extent::Complete(length) = whole {
                assert!(at_least <= length, "prefix {end}: {at_least} > {length}");
            }
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&format, data)) = input.split_first() else {
        return;
    };
    // Framing is linear per call; quadratic over every prefix, so keep inputs short.
    let data = &data[..data.len().min(512)];
    match format % 3 {
        0 => {
            resumes::<ValueFramer>(data, ValueFramer::next);
            if let Some(bad) = malformed_one(data) {
                assert!(bad.offset <= data.len());
            }
        }
        1 => resumes::<PickleFramer>(data, PickleFramer::next),
        _ => {
            avro_extent(data, header_len);
            avro_extent(data, block_len);
        }
    }
});

//! The text forms on any bytes: RFC 3339 datetimes, dates, times, ISO 8601 durations, UUIDs
//! and base64. The first byte picks the parser; whatever parses is written back in the
//! canonical form, which parses to the same value and is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polycodec_formats::text::{base64, temporal, uuid};

fn fixed_point<T: PartialEq + std::fmt::Debug>(
    value: T,
    write: impl Fn(&mut Vec<u8>, &T),
    parse: impl Fn(&[u8]) -> Result<T, temporal::TextError>,
) {
    let mut out = Vec::new();
    write(&mut out, &value);
    let again = parse(&out).unwrap_or_else(|err| {
        panic!(
            "{:?} (from {value:?}) does not parse: {err}",
            String::from_utf8_lossy(&out)
        )
    });
    assert_eq!(again, value, "{:?}", String::from_utf8_lossy(&out));
    let mut twice = Vec::new();
    write(&mut twice, &again);
    assert_eq!(out, twice);
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    match pick % 7 {
        0 => {
            if let Some(fast) = temporal::canonical_utc(text) {
                assert_eq!(temporal::parse_datetime(text).ok(), Some(fast));
            }
            if let Ok(dt) = temporal::parse_datetime(text) {
                fixed_point(dt, temporal::write_datetime, temporal::parse_datetime);
                let mut buf = [0u8; temporal::DATETIME_MAX_LEN];
                let n = temporal::format_datetime(&mut buf, &dt);
                let mut out = Vec::new();
                temporal::write_datetime(&mut out, &dt);
                assert_eq!(&buf[..n], &out[..]);
            }
        }
        1 => {
            if let Ok(d) = temporal::parse_date(text) {
                fixed_point(d, temporal::write_date, temporal::parse_date);
                assert!(d.day <= temporal::days_in_month(d.year, d.month));
            }
        }
        2 => {
            if let Ok(t) = temporal::parse_time(text) {
                fixed_point(t, temporal::write_time, temporal::parse_time);
            }
        }
        3 => {
            if let Ok(d) = temporal::parse_duration(text) {
                assert!(d.seconds < 86_400 && d.microseconds < 1_000_000);
                assert!(d.days.abs() <= temporal::MAX_DURATION_DAYS);
                fixed_point(d, temporal::write_duration, temporal::parse_duration);
            }
        }
        4 => {
            if let Ok(v) = uuid::parse_uuid(text) {
                fixed_point(v, |out, v| uuid::write_uuid(out, *v), uuid::parse_uuid);
                assert_eq!(&uuid::format_uuid(v)[..], {
                    let mut out = Vec::new();
                    uuid::write_uuid(&mut out, v);
                    out
                });
            }
        }
        5 => {
            let mut plain = Vec::new();
            if base64::decode(text, &mut plain).is_ok() {
                assert!(plain.len() <= base64::decoded_len_hint(text));
                let mut slice = vec![0u8; base64::decoded_len_hint(text)];
                let n = base64::decode_to_slice(text, &mut slice).expect("both decoders agree");
                assert_eq!(&slice[..n], &plain[..]);
                let mut encoded = Vec::new();
                base64::encode(&mut encoded, &plain);
                assert_eq!(encoded.len(), base64::encoded_len(plain.len()));
                let mut back = Vec::new();
                base64::decode(&encoded, &mut back).expect("our encoding decodes");
                assert_eq!(back, plain);
            }
        }
        _ => {
            // Encoding any bytes and decoding them back is the identity.
            let mut encoded = Vec::new();
            base64::encode(&mut encoded, text);
            let mut slice = vec![0u8; base64::encoded_len(text.len())];
            base64::encode_to_slice(text, &mut slice);
            assert_eq!(slice, encoded);
            let mut back = Vec::new();
            base64::decode(&encoded, &mut back).expect("our encoding decodes");
            assert_eq!(back, text);
        }
    }
});

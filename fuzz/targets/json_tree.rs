//! A JSON document read through `formats::json::Reader` into a tree, as the decoders walk it
//! (shared by the JSON targets through `#[path]`).

use polycodec_formats::json::read::{Number, Reader, SyntaxError, ValueKind};

/// Nesting the targets follow; deeper documents are only skipped (`skip_value`).
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside i64: its exact text.
    BigInt(String),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// Reads one value, or `Ok(None)` past `MAX_DEPTH` levels.
pub fn read(r: &mut Reader<'_>, depth: usize) -> Result<Option<Json>, SyntaxError> {
    Ok(Some(match r.peek_kind()? {
        ValueKind::Object => {
            if depth >= MAX_DEPTH {
                return Ok(None);
            }
            r.begin_object()?;
            let mut members = Vec::new();
            let mut first = true;
            loop {
                let key = match r.next_key(first)? {
                    Some(key) => {
                        assert_eq!(key.ascii, key.bytes.is_ascii());
                        std::str::from_utf8(key.bytes)
                            .expect("the reader hands out UTF-8 only")
                            .to_owned()
                    }
                    None => break,
                };
                first = false;
                let Some(value) = read(r, depth + 1)? else {
                    return Ok(None);
                };
                members.push((key, value));
            }
            Json::Object(members)
        }
        ValueKind::Array => {
            if depth >= MAX_DEPTH {
                return Ok(None);
            }
            r.begin_array()?;
            let mut items = Vec::new();
            let mut first = true;
            while r.next_element(first)? {
                first = false;
                let Some(value) = read(r, depth + 1)? else {
                    return Ok(None);
                };
                items.push(value);
            }
            Json::Array(items)
        }
        ValueKind::String => {
            let s = r.read_str()?;
            assert_eq!(s.ascii, s.bytes.is_ascii());
            Json::Str(
                std::str::from_utf8(s.bytes)
                    .expect("the reader hands out UTF-8 only")
                    .to_owned(),
            )
        }
        ValueKind::Number => match r.read_number()? {
            Number::Int(v) => Json::Int(v),
            Number::BigInt(text) => {
                let digits = text.strip_prefix('-').unwrap_or(text);
                assert!(!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
                assert!(text.parse::<i64>().is_err(), "{text} fits in i64");
                Json::BigInt(text.to_owned())
            }
            Number::Float { value, text } => {
                let text = std::str::from_utf8(text).expect("a number literal is ASCII");
                let parsed: f64 = text.parse().expect("a JSON float literal is a Rust one");
                assert_eq!(
                    parsed.to_bits(),
                    value.to_bits(),
                    "{text} not rounded correctly"
                );
                Json::Float(value)
            }
        },
        ValueKind::True => {
            r.read_true()?;
            Json::Bool(true)
        }
        ValueKind::False => {
            r.read_false()?;
            Json::Bool(false)
        }
        ValueKind::Null => {
            r.read_null()?;
            Json::Null
        }
    }))
}

/// The whole document: one value and only whitespace after it.
pub fn document(data: &[u8]) -> Result<Option<Json>, SyntaxError> {
    let mut r = Reader::new(data);
    let Some(value) = read(&mut r, 0)? else {
        return Ok(None);
    };
    r.finish()?;
    Ok(Some(value))
}

//! A MessagePack value read through `formats::msgpack::Reader` into a tree (shared by the
//! MessagePack targets through `#[path]`).

use polycodec_formats::msgpack::read::{Head, ReadError, Reader};

/// Nesting the targets follow; deeper values are only skipped (`skip_value`).
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Mp {
    Nil,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(Vec<u8>),
    Bin(Vec<u8>),
    Array(Vec<Mp>),
    Map(Vec<(Mp, Mp)>),
    Ext(i8, Vec<u8>),
}

pub fn read(r: &mut Reader<'_>, depth: usize) -> Result<Option<Mp>, ReadError> {
    let start = r.offset();
    let head = r.next()?;
    assert!(r.offset() > start);
    Ok(Some(match head {
        Head::Nil => Mp::Nil,
        Head::False => Mp::Bool(false),
        Head::True => Mp::Bool(true),
        Head::Int(v) => Mp::Int(i128::from(v)),
        Head::BigUint(v) => {
            assert!(v > i64::MAX as u64, "{v} fits in Int");
            Mp::Int(i128::from(v))
        }
        Head::Float(v) => Mp::Float(v),
        Head::Str(bytes) => Mp::Str(bytes.to_vec()),
        Head::Bin(bytes) => Mp::Bin(bytes.to_vec()),
        Head::Ext(kind, payload) => Mp::Ext(
            i8::try_from(kind).expect("ext types are i8"),
            payload.to_vec(),
        ),
        Head::Array(n) => {
            if depth >= MAX_DEPTH {
                return Ok(None);
            }
            let mut items = Vec::new();
            for _ in 0..n {
                let Some(item) = read(r, depth + 1)? else {
                    return Ok(None);
                };
                items.push(item);
            }
            Mp::Array(items)
        }
        Head::Map(n) => {
            if depth >= MAX_DEPTH {
                return Ok(None);
            }
            let mut entries = Vec::new();
            for _ in 0..n {
                let (Some(key), Some(value)) = (read(r, depth + 1)?, read(r, depth + 1)?) else {
                    return Ok(None);
                };
                entries.push((key, value));
            }
            Mp::Map(entries)
        }
    }))
}

pub fn document(data: &[u8]) -> Result<Option<Mp>, ReadError> {
    let mut r = Reader::new(data);
    let Some(value) = read(&mut r, 0)? else {
        return Ok(None);
    };
    r.finish()?;
    Ok(Some(value))
}

//! Where an Avro object container file's header and each of its blocks end in bytes that may
//! stop anywhere (see [`crate::frame`]), by the lengths and counts they declare: the header's
//! metadata map, a block's count and byte size, and the 16-byte sync marker after each. The
//! reader of whole headers and blocks is [`super::container`]; nothing is decoded here.

use crate::frame::{malformed, Fault, Malformed, Result};

/// How far a unit extends: complete with its length, or short: at least this many bytes in all,
/// always more than were given (a varint cut anywhere needs one more byte at the least).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    Short(usize),
    Complete(usize),
}

/// The sync marker after the header and after each block.
const SYNC: usize = 16;

/// A zigzag varint at `pos`: its value and the position after it, `None` when incomplete.
/// More than 10 bytes is malformed (a whole reader, [`super::wire::Input::long`], also
/// refuses a 10-byte one that overflows; framing only needs to know where it ends).
pub fn varint(data: &[u8], pos: usize) -> Result<Option<(i64, usize)>> {
    let mut value = 0u64;
    for i in 0..10 {
        let Some(&byte) = data.get(pos + i) else {
            return Ok(None);
        };
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            let decoded = ((value >> 1) as i64) ^ -((value & 1) as i64);
            return Ok(Some((decoded, pos + i + 1)));
        }
    }
    malformed(pos, "malformed Avro: varint longer than 10 bytes")
}

/// A length (or count) varint, refused when negative.
pub fn length(data: &[u8], pos: usize, what: &str) -> Result<Option<(usize, usize)>> {
    match varint(data, pos)? {
        None => Ok(None),
        Some((n, _)) if n < 0 => malformed(pos, format!("malformed Avro: negative {what}")),
        Some((n, next)) => Ok(Some((n as usize, next))),
    }
}

/// The extent of the container header `data` starts with: the magic, the metadata map (in
/// blocks, a negative count followed by the block's byte size) and the sync marker.
pub fn header_len(data: &[u8]) -> Result<Extent> {
    let magic = b"Obj\x01";
    let known = data.len().min(4);
    if data[..known] != magic[..known] {
        return Err(Malformed {
            offset: 0,
            fault: Fault::NotTheFormat,
            message: "not an Avro object container file (it must start with Obj\\x01)".into(),
        });
    }
    if data.len() < 4 {
        // The next byte is checked against the magic as soon as it arrives, as one call with
        // the same bytes checks it.
        return Ok(Extent::Short(data.len() + 1));
    }
    let mut pos = 4;
    loop {
        let Some((count, next)) = varint(data, pos)? else {
            return Ok(Extent::Short(data.len() + 1));
        };
        pos = next;
        if count == 0 {
            break;
        }
        if count < 0 {
            let Some((_, next)) = varint(data, pos)? else {
                return Ok(Extent::Short(data.len() + 1));
            };
            pos = next;
        }
        for _ in 0..count.unsigned_abs() {
            for what in ["metadata key", "metadata value"] {
                let Some((len, next)) = length(data, pos, what)? else {
                    return Ok(Extent::Short(data.len() + 1));
                };
                pos = next.saturating_add(len);
                if pos > data.len() {
                    return Ok(Extent::Short(pos));
                }
            }
        }
    }
    pos += SYNC;
    Ok(if pos > data.len() {
        Extent::Short(pos)
    } else {
        Extent::Complete(pos)
    })
}

/// The extent of the data block `data` starts with: its count, its byte size, its bytes and
/// the sync marker.
pub fn block_len(data: &[u8]) -> Result<Extent> {
    let Some((_, pos)) = length(data, 0, "block count")? else {
        return Ok(Extent::Short(data.len() + 1));
    };
    let Some((size, pos)) = length(data, pos, "block size")? else {
        return Ok(Extent::Short(data.len() + 1));
    };
    let end = pos.saturating_add(size).saturating_add(SYNC);
    Ok(if end > data.len() {
        Extent::Short(end)
    } else {
        Extent::Complete(end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avro::wire::{write_long, Input};

    /// Each proper prefix of `unit` is short, and by no more than it lacks; the whole is
    /// complete.
    fn frames(extent: fn(&[u8]) -> Result<Extent>, unit: &[u8]) {
        for end in 0..unit.len() {
            match extent(&unit[..end]) {
                Ok(Extent::Short(at_least)) => {
                    assert!(
                        at_least > end && at_least <= unit.len(),
                        "{end}: {at_least}"
                    )
                }
                other => panic!("{unit:02x?} to {end}: {other:?}"),
            }
        }
        assert_eq!(extent(unit), Ok(Extent::Complete(unit.len())));
    }

    #[test]
    fn a_varint_cut_inside_needs_more_than_was_given() {
        // One metadata entry whose value length is a varint cut after its first byte (the
        // committed fuzz seed 378f52272e963ac3 stops so).
        let mut header = b"Obj\x01\x02\x16avro.schema".to_vec();
        header.push(0x88);
        assert_eq!(header_len(&header), Ok(Extent::Short(header.len() + 1)));
        assert_eq!(block_len(&[0x82]), Ok(Extent::Short(2)));
        assert_eq!(block_len(&[0x02, 0x80]), Ok(Extent::Short(3)));
    }

    #[test]
    fn headers_and_blocks_end_after_their_sync_marker() {
        let mut header = b"Obj\x01\x02\x04ab\x02c\x00".to_vec();
        header.extend_from_slice(&[7u8; 16]);
        frames(header_len, &header);
        // A metadata block with a negative count carries its byte size.
        let mut sized = b"Obj\x01\x01\x0a\x04ab\x02c\x00".to_vec();
        sized.extend_from_slice(&[7u8; 16]);
        frames(header_len, &sized);
        let mut block = vec![0x02, 0x06, 1, 2, 3];
        block.extend_from_slice(&[7u8; 16]);
        frames(block_len, &block);
    }

    #[test]
    fn the_framing_agrees_with_the_container_writer_and_reader() {
        use crate::avro::container::{read_header, write_block, write_header, Compression};
        let mut file = Vec::new();
        write_header(&mut file, b"\"long\"", Compression::Null, &[], &[9u8; 16]);
        let header_end = file.len();
        write_block(&mut file, 3, &[2, 4, 6], Compression::Null, &[9u8; 16]);
        let mut input = Input::new(&file);
        read_header(&mut input).expect("a header");
        assert_eq!(input.pos, header_end);
        assert_eq!(header_len(&file), Ok(Extent::Complete(header_end)));
        assert_eq!(
            block_len(&file[header_end..]),
            Ok(Extent::Complete(file.len() - header_end))
        );
    }

    #[test]
    fn varints_agree_with_the_wire_reader() {
        for value in [0i64, 1, -1, 63, -64, 64, 300, -300, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            write_long(&mut out, value);
            assert_eq!(varint(&out, 0), Ok(Some((value, out.len()))));
            assert_eq!(Input::new(&out).long(), Ok(value));
            assert_eq!(varint(&out[..out.len() - 1], 0), Ok(None));
        }
    }

    #[test]
    fn what_cannot_be_framed() {
        let not_avro = header_len(b"Ob!").unwrap_err();
        assert_eq!(not_avro.fault, Fault::NotTheFormat);
        let negative = block_len(&[0x01]).unwrap_err();
        assert_eq!(
            (negative.fault, negative.message.as_str()),
            (Fault::Malformed, "malformed Avro: negative block count")
        );
        assert_eq!(varint(&[0xff; 11], 0).unwrap_err().offset, 0);
        // A declared size is not room: a block of 2^62 bytes is short, not an overflow.
        let mut huge = vec![0x02];
        write_long(&mut huge, i64::MAX / 2);
        assert!(matches!(block_len(&huge), Ok(Extent::Short(_))));
    }
}

//! Where a MessagePack value ends in bytes that may stop anywhere (see [`crate::frame`]): each
//! head says its own size and how many items follow it, so a value ends when the heads read
//! have no items left to wait for. Nothing is decoded.

use crate::frame::{malformed, Malformed, Result};

/// A resumable finder of where one value ends: the end of the heads read so far, and the items
/// still to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueFramer {
    pos: usize,
    remaining: u64,
}

impl Default for ValueFramer {
    fn default() -> Self {
        ValueFramer {
            pos: 0,
            remaining: 1,
        }
    }
}

impl ValueFramer {
    /// The length of the value `data` starts with, or `None` while it is not complete; called
    /// again with the same bytes and more, it reads on from the heads it has read. After a
    /// value it starts afresh.
    pub fn next(&mut self, data: &[u8]) -> Result<Option<usize>> {
        loop {
            if self.remaining == 0 {
                let end = self.pos;
                *self = ValueFramer::default();
                return Ok(Some(end));
            }
            let Some((size, items)) = head(data, self.pos)? else {
                return Ok(None);
            };
            if data.len() - self.pos < size {
                return Ok(None);
            }
            self.pos += size;
            self.remaining = (self.remaining - 1).saturating_add(items);
        }
    }
}

/// Where `data`, meant to hold exactly one value, is malformed, as the framing finds it: a
/// byte no head starts with, bytes after the value, or an end inside it. `None` when `data`
/// is one whole value (whose contents may still be wrong: only their framing is checked).
pub fn malformed_one(data: &[u8]) -> Option<Malformed> {
    match ValueFramer::default().next(data) {
        Err(bad) => Some(bad),
        Ok(Some(end)) if end < data.len() => {
            malformed::<()>(end, "malformed MessagePack: trailing bytes after the value").err()
        }
        Ok(Some(_)) => None,
        Ok(None) => malformed::<()>(
            data.len(),
            "malformed MessagePack: the input ends inside a value",
        )
        .err(),
    }
}

/// The size of the head at `pos` with its payload, and how many items follow it (a
/// container's), or `None` when the head itself is not complete.
pub fn head(data: &[u8], pos: usize) -> Result<Option<(usize, u64)>> {
    let Some(&byte) = data.get(pos) else {
        return Ok(None);
    };
    // The big-endian length of `width` bytes after the marker.
    let length = |width: usize| -> Option<u64> {
        let field = data.get(pos + 1..pos + 1 + width)?;
        Some(field.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b)))
    };
    let sized = |width: usize, extra: usize| -> Option<(usize, u64)> {
        length(width).map(|n| (1 + width + extra + n as usize, 0))
    };
    Ok(match byte {
        0x00..=0x7f | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff => Some((1, 0)),
        0x80..=0x8f => Some((1, 2 * u64::from(byte & 0x0f))),
        0x90..=0x9f => Some((1, u64::from(byte & 0x0f))),
        0xa0..=0xbf => Some((1 + usize::from(byte & 0x1f), 0)),
        0xc1 => return malformed(pos, "malformed MessagePack: reserved byte 0xc1"),
        0xc4 | 0xd9 => sized(1, 0),
        0xc5 | 0xda => sized(2, 0),
        0xc6 | 0xdb => sized(4, 0),
        0xc7 => sized(1, 1),
        0xc8 => sized(2, 1),
        0xc9 => sized(4, 1),
        0xca | 0xce | 0xd2 => Some((5, 0)),
        0xcb | 0xcf | 0xd3 => Some((9, 0)),
        0xcc | 0xd0 => Some((2, 0)),
        0xcd | 0xd1 => Some((3, 0)),
        0xd4 => Some((3, 0)),
        0xd5 => Some((4, 0)),
        0xd6 => Some((6, 0)),
        0xd7 => Some((10, 0)),
        0xd8 => Some((18, 0)),
        0xdc => length(2).map(|n| (3, n)),
        0xdd => length(4).map(|n| (5, n)),
        0xde => length(2).map(|n| (3, 2 * n)),
        0xdf => length(4).map(|n| (5, 2 * n)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack::read::Reader;

    /// Every value of the MessagePack specification's formats, one of each head.
    const UNITS: &[&[u8]] = &[
        &[0x01],
        &[0xe0],
        &[0xc0],
        &[0x92, 0x01, 0xa1, b'x'],
        &[0x81, 0xa1, b'k', 0x90],
        &[0xc4, 0x02, b'a', b'b'],
        &[0xc5, 0x00, 0x01, b'a'],
        &[0xc6, 0x00, 0x00, 0x00, 0x01, b'a'],
        &[0xc7, 0x01, 0x05, b'z'],
        &[0xc8, 0x00, 0x01, 0x05, b'z'],
        &[0xc9, 0x00, 0x00, 0x00, 0x01, 0x05, b'z'],
        &[0xd4, 0x01, 0x00],
        &[0xd5, 0x01, 0x00, 0x00],
        &[0xd6, 0xff, 0, 0, 0, 0],
        &[0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 0],
        &[0xd8, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        &[0xde, 0x00, 0x01, 0xa1, b'k', 0xc0],
        &[0xdf, 0x00, 0x00, 0x00, 0x01, 0xa1, b'k', 0xc3],
        &[0xdc, 0x00, 0x02, 0x01, 0x02],
        &[0xdd, 0x00, 0x00, 0x00, 0x02, 0x01, 0x02],
        &[0xd9, 0x01, b'q'],
        &[0xda, 0x00, 0x01, b'q'],
        &[0xdb, 0x00, 0x00, 0x00, 0x01, b'q'],
        &[0xca, 0, 0, 0, 0],
        &[0xcb, 0, 0, 0, 0, 0, 0, 0, 0],
        &[0xcc, 0xff],
        &[0xcd, 0xff, 0xff],
        &[0xce, 0, 0, 0, 0],
        &[0xcf, 0, 0, 0, 0, 0, 0, 0, 0],
        &[0xd0, 0x80],
        &[0xd1, 0, 0],
        &[0xd2, 0, 0, 0, 0],
        &[0xd3, 0, 0, 0, 0, 0, 0, 0, 0],
        &[0x93, 0x91, 0x90, 0x80, 0xa0],
    ];

    #[test]
    fn values_end_after_their_items_whatever_the_bytes_given() {
        for unit in UNITS {
            let mut framer = ValueFramer::default();
            // One more byte at a time, as a growing buffer gives them.
            for end in 0..unit.len() {
                assert_eq!(framer.next(&unit[..end]), Ok(None), "{unit:02x?} to {end}");
            }
            assert_eq!(framer.next(unit), Ok(Some(unit.len())), "{unit:02x?}");
            // Afresh after a value: the next one starts at the caller's new start.
            assert_eq!(framer, ValueFramer::default());
            assert_eq!(malformed_one(unit), None);
        }
    }

    #[test]
    fn the_framing_agrees_with_the_reader() {
        // The reader skips exactly the bytes the framer says the value takes.
        for unit in UNITS {
            let mut data = unit.to_vec();
            data.push(0xc0);
            let mut reader = Reader::new(&data);
            reader.skip_value(64).expect("a whole value");
            assert_eq!(reader.offset(), unit.len(), "{unit:02x?}");
            assert_eq!(ValueFramer::default().next(&data), Ok(Some(unit.len())));
        }
    }

    #[test]
    fn malformed_bytes_say_where() {
        let bad = ValueFramer::default().next(&[0x91, 0xc1]).unwrap_err();
        assert_eq!(bad.offset, 1);
        assert_eq!(bad.message, "malformed MessagePack: reserved byte 0xc1");
        let trailing = malformed_one(&[0x01, 0x02]).expect("trailing byte");
        assert_eq!(trailing.offset, 1);
        assert!(trailing.message.contains("trailing bytes"));
        let short = malformed_one(&[0x92, 0x01]).expect("short");
        assert_eq!(short.offset, 2);
        assert!(short.message.contains("ends inside a value"));
    }

    #[test]
    fn a_declared_length_is_not_trusted_as_room() {
        // A 4 GiB str head with no payload: incomplete, nothing allocated, no overflow.
        assert_eq!(
            ValueFramer::default().next(&[0xdb, 0xff, 0xff, 0xff, 0xff]),
            Ok(None)
        );
        // An array of 2^32-1 nils: the count saturates rather than overflowing.
        let mut framer = ValueFramer::default();
        assert_eq!(framer.next(&[0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0]), Ok(None));
    }
}

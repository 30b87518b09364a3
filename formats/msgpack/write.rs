//! MessagePack byte writers: every value in its smallest encoding, as msgspec and msgpack-python
//! write it (non-negative ints as uint, negative ones as int, floats always float64, strs as
//! fixstr/str8/16/32, bytes as bin8/16/32). No Python here.

use crate::growth::{output_room, LARGE};

#[inline]
pub fn write_nil(out: &mut Vec<u8>) {
    out.push(0xc0);
}

#[inline]
pub fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.push(if value { 0xc3 } else { 0xc2 });
}

#[inline]
pub fn write_u64(out: &mut Vec<u8>, value: u64) {
    if value < 128 {
        out.push(value as u8);
    } else if value <= u64::from(u8::MAX) {
        out.extend_from_slice(&[0xcc, value as u8]);
    } else if value <= u64::from(u16::MAX) {
        out.push(0xcd);
        out.extend_from_slice(&(value as u16).to_be_bytes());
    } else if value <= u64::from(u32::MAX) {
        out.push(0xce);
        out.extend_from_slice(&(value as u32).to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&value.to_be_bytes());
    }
}

#[inline]
pub fn write_i64(out: &mut Vec<u8>, value: i64) {
    if value >= 0 {
        write_u64(out, value as u64);
    } else if value >= -32 {
        out.push(value as u8);
    } else if value >= i64::from(i8::MIN) {
        out.extend_from_slice(&[0xd0, value as u8]);
    } else if value >= i64::from(i16::MIN) {
        out.push(0xd1);
        out.extend_from_slice(&(value as i16).to_be_bytes());
    } else if value >= i64::from(i32::MIN) {
        out.push(0xd2);
        out.extend_from_slice(&(value as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&value.to_be_bytes());
    }
}

#[inline]
pub fn write_f64(out: &mut Vec<u8>, value: f64) {
    out.push(0xcb);
    out.extend_from_slice(&value.to_bits().to_be_bytes());
}

/// A str header and its UTF-8 bytes. Short strs (field names, most values) reserve once for
/// both the one-byte header and the text.
#[inline]
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    if bytes.len() < 32 {
        // The header, and the few bytes a short str's last piece writes past its end.
        out.reserve(bytes.len() + 5);
        out.push(0xa0 | bytes.len() as u8);
        crate::pieces::append(out, bytes);
    } else if bytes.len() < LARGE {
        write_str_header(out, bytes.len());
        out.extend_from_slice(bytes);
    } else {
        write_large_str(out, bytes);
    }
}

/// A large str, kept out of line so the common path stays as small as it was: one fallible
/// reserve of exactly the header and the text (exact, so a buffer sized by the previous output
/// does not grow). A str too large for the memory left ends the encode in a MemoryError (see
/// `errors::output_result`), not an abort.
#[cold]
#[inline(never)]
fn write_large_str(out: &mut Vec<u8>, bytes: &[u8]) {
    if output_room(out, bytes.len() + header_size(bytes.len())) {
        write_str_header(out, bytes.len());
        out.extend_from_slice(bytes);
    }
}

#[inline]
pub fn write_str_header(out: &mut Vec<u8>, length: usize) {
    if length < 32 {
        out.push(0xa0 | length as u8);
    } else if length <= usize::from(u8::MAX) {
        out.extend_from_slice(&[0xd9, length as u8]);
    } else if length <= usize::from(u16::MAX) {
        out.push(0xda);
        out.extend_from_slice(&(length as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(length as u32).to_be_bytes());
    }
}

/// The size of a str8/16/32 or bin8/16/32 header for `length` bytes.
#[inline]
fn header_size(length: usize) -> usize {
    if length <= usize::from(u8::MAX) {
        2
    } else if length <= usize::from(u16::MAX) {
        3
    } else {
        5
    }
}

#[inline]
pub fn write_bin(out: &mut Vec<u8>, data: &[u8]) {
    let length = data.len();
    if length >= LARGE && !output_room(out, length + header_size(length)) {
        return;
    }
    if length <= usize::from(u8::MAX) {
        out.extend_from_slice(&[0xc4, length as u8]);
    } else if length <= usize::from(u16::MAX) {
        out.push(0xc5);
        out.extend_from_slice(&(length as u16).to_be_bytes());
    } else {
        out.push(0xc6);
        out.extend_from_slice(&(length as u32).to_be_bytes());
    }
    out.extend_from_slice(data);
}

/// Whether a container header is for an array or a map.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Container {
    Array,
    Map,
}

/// The header of an array or map of `count` items (pairs for a map), in its smallest form.
#[inline]
fn container_header(kind: Container, count: usize) -> ([u8; 5], usize) {
    let (fix, sixteen, thirty_two) = match kind {
        Container::Array => (0x90u8, 0xdcu8, 0xddu8),
        Container::Map => (0x80, 0xde, 0xdf),
    };
    let mut header = [0u8; 5];
    if count < 16 {
        header[0] = fix | count as u8;
        (header, 1)
    } else if count <= usize::from(u16::MAX) {
        header[0] = sixteen;
        header[1..3].copy_from_slice(&(count as u16).to_be_bytes());
        (header, 3)
    } else {
        header[0] = thirty_two;
        header[1..5].copy_from_slice(&(count as u32).to_be_bytes());
        (header, 5)
    }
}

#[inline]
pub fn write_container(out: &mut Vec<u8>, kind: Container, count: usize) {
    if count < 16 {
        out.push(
            match kind {
                Container::Array => 0x90,
                Container::Map => 0x80,
            } | count as u8,
        );
    } else {
        let (header, length) = container_header(kind, count);
        out.extend_from_slice(&header[..length]);
    }
}

/// A container header written before its items are counted: the header for the expected count
/// goes out at once, and [`Pending::finish`] rewrites it if the real count differs (fields left
/// out by `omit_defaults`, a list that user code resized while it was being encoded).
pub struct Pending {
    kind: Container,
    start: usize,
    expected: usize,
}

impl Pending {
    #[inline]
    pub fn begin(out: &mut Vec<u8>, kind: Container, expected: usize) -> Self {
        let start = out.len();
        write_container(out, kind, expected);
        Pending {
            kind,
            start,
            expected,
        }
    }

    #[inline]
    pub fn finish(self, out: &mut Vec<u8>, count: usize) {
        if count != self.expected {
            self.rewrite(out, count);
        }
    }

    /// The header rewritten for `count` items: in place when it keeps its size (a record map
    /// with fields left out stays a fixmap: `omit_defaults`, UNSET), else moved.
    #[inline]
    fn rewrite(self, out: &mut Vec<u8>, count: usize) {
        let (_, old_length) = container_header(self.kind, self.expected);
        let (header, length) = container_header(self.kind, count);
        if length == old_length {
            out[self.start..self.start + length].copy_from_slice(&header[..length]);
            return;
        }
        Self::moved(out, self.start, old_length, &header[..length]);
    }

    /// A header of another size than the one written (`splice` moves the items after it).
    #[cold]
    #[inline(never)]
    fn moved(out: &mut Vec<u8>, start: usize, old_length: usize, header: &[u8]) {
        out.splice(start..start + old_length, header.iter().copied());
    }
}

/// An extension value of type `code` in its smallest form: fixext 1, 2, 4, 8 or 16 when the
/// payload has one of those sizes, else ext 8, 16 or 32 (as msgspec and msgpack-python write
/// it). The caller checks that `data` fits in 2^32 - 1 bytes.
#[inline]
pub fn write_ext(out: &mut Vec<u8>, code: i8, data: &[u8]) {
    let length = data.len();
    if length >= LARGE && !output_room(out, length + 6) {
        return;
    }
    let fixed = match length {
        1 => Some(0xd4),
        2 => Some(0xd5),
        4 => Some(0xd6),
        8 => Some(0xd7),
        16 => Some(0xd8),
        _ => None,
    };
    if let Some(head) = fixed {
        out.push(head);
    } else if length <= usize::from(u8::MAX) {
        out.extend_from_slice(&[0xc7, length as u8]);
    } else if length <= usize::from(u16::MAX) {
        out.push(0xc8);
        out.extend_from_slice(&(length as u16).to_be_bytes());
    } else {
        out.push(0xc9);
        out.extend_from_slice(&(length as u32).to_be_bytes());
    }
    out.push(code as u8);
    out.extend_from_slice(data);
}

/// The timestamp extension (type -1) in its smallest form: 32-bit seconds when there are no
/// nanoseconds and the seconds fit, 64-bit (30-bit nanoseconds, 34-bit seconds) when the
/// seconds are non-negative and below 2^34, else 96-bit.
#[inline]
pub fn write_timestamp(out: &mut Vec<u8>, seconds: i64, nanoseconds: u32) {
    if seconds >> 34 == 0 {
        let combined = (u64::from(nanoseconds) << 34) | seconds as u64;
        if combined >> 32 == 0 {
            out.extend_from_slice(&[0xd6, 0xff]);
            out.extend_from_slice(&(combined as u32).to_be_bytes());
        } else {
            out.extend_from_slice(&[0xd7, 0xff]);
            out.extend_from_slice(&combined.to_be_bytes());
        }
    } else {
        out.extend_from_slice(&[0xc7, 12, 0xff]);
        out.extend_from_slice(&nanoseconds.to_be_bytes());
        out.extend_from_slice(&seconds.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut out);
        out
    }

    #[test]
    fn ints_take_the_smallest_form() {
        assert_eq!(bytes(|o| write_i64(o, 0)), [0x00]);
        assert_eq!(bytes(|o| write_i64(o, 128)), [0xcc, 0x80]);
        assert_eq!(bytes(|o| write_i64(o, -32)), [0xe0]);
        assert_eq!(bytes(|o| write_i64(o, -33)), [0xd0, 0xdf]);
        assert_eq!(bytes(|o| write_i64(o, 65536)), [0xce, 0, 1, 0, 0]);
        assert_eq!(bytes(|o| write_u64(o, u64::MAX))[0], 0xcf);
    }

    #[test]
    fn pending_headers_are_rewritten_when_the_count_changes() {
        let mut out = vec![0xaa];
        let pending = Pending::begin(&mut out, Container::Map, 20);
        out.push(1);
        pending.finish(&mut out, 3);
        assert_eq!(out, [0xaa, 0x83, 1]);
    }

    #[test]
    fn extensions_take_the_smallest_form() {
        assert_eq!(bytes(|o| write_ext(o, 5, b"")), [0xc7, 0, 5]);
        assert_eq!(bytes(|o| write_ext(o, -3, b"a")), [0xd4, 0xfd, b'a']);
        assert_eq!(
            bytes(|o| write_ext(o, 1, b"abc")),
            [0xc7, 3, 1, b'a', b'b', b'c']
        );
        assert_eq!(bytes(|o| write_ext(o, 1, &[0; 16]))[..2], [0xd8, 1]);
        assert_eq!(bytes(|o| write_ext(o, 1, &[0; 17]))[..3], [0xc7, 17, 1]);
        assert_eq!(bytes(|o| write_ext(o, 1, &[0; 256]))[..4], [0xc8, 1, 0, 1]);
        assert_eq!(
            bytes(|o| write_ext(o, 1, &[0; 65536]))[..6],
            [0xc9, 0, 1, 0, 0, 1]
        );
    }

    #[test]
    fn timestamps_use_the_three_forms() {
        assert_eq!(
            bytes(|o| write_timestamp(o, 1, 0)),
            [0xd6, 0xff, 0, 0, 0, 1]
        );
        assert_eq!(bytes(|o| write_timestamp(o, 1, 1))[0], 0xd7);
        assert_eq!(bytes(|o| write_timestamp(o, -1, 0))[..3], [0xc7, 12, 0xff]);
    }
}

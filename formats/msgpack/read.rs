//! A bounds-checked MessagePack reader: one head (type byte plus its payload or length) at a
//! time, never past the end of the input. Lengths are checked against the bytes left, so no
//! length in the input can make a caller allocate more than the input justifies. No Python here.

use std::fmt;

/// One MessagePack value head. Strs, bins and exts carry their payload; arrays and maps only
/// their item count (pairs for a map), with the items following.
///
/// Every payload is a whole machine word (no `bool`, `i8` or `f32` packed next to the tag):
/// a head is returned in registers or written and read back word by word, so building one
/// never stalls on a narrow store followed by a wide load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Head<'a> {
    Nil,
    False,
    True,
    Int(i64),
    /// A uint64 above `i64::MAX`.
    BigUint(u64),
    /// float32 or float64 (a float32 widened exactly).
    Float(f64),
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(usize),
    Map(usize),
    /// The extension type (-128..=127) and its payload.
    Ext(i64, &'a [u8]),
}

impl Head<'_> {
    /// The token's name in error messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Head::Nil => "nil",
            Head::False | Head::True => "bool",
            Head::Int(_) | Head::BigUint(_) => "int",
            Head::Float(_) => "float",
            Head::Str(_) => "str",
            Head::Bin(_) => "bin",
            Head::Array(_) => "array",
            Head::Map(_) => "map",
            Head::Ext(..) => "ext",
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct ReadError {
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

pub struct Reader<'a> {
    input: &'a [u8],
    pos: usize,
}

type ReadResult<T> = Result<T, ReadError>;

impl<'a> Reader<'a> {
    #[inline]
    pub fn new(input: &'a [u8]) -> Self {
        Reader { input, pos: 0 }
    }

    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The input from `start` (an offset this reader returned before) to where it is now.
    #[inline]
    pub fn taken_since(&self, start: usize) -> &'a [u8] {
        self.input.get(start..self.pos).unwrap_or_default()
    }

    /// Moves back (or forward) to an offset this reader returned before.
    #[inline]
    pub fn rewind(&mut self, offset: usize) {
        self.pos = offset;
    }

    #[cold]
    fn error(&self, offset: usize, message: &'static str) -> ReadError {
        ReadError { offset, message }
    }

    /// The next `n` bytes.
    #[inline]
    fn take(&mut self, n: usize) -> ReadResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.input.len());
        match end {
            Some(end) => {
                let slice = &self.input[self.pos..end];
                self.pos = end;
                Ok(slice)
            }
            None => Err(self.error(self.pos, "truncated input")),
        }
    }

    #[inline]
    fn array_of<const N: usize>(&mut self) -> ReadResult<[u8; N]> {
        let bytes = self.take(N)?;
        let mut array = [0u8; N];
        array.copy_from_slice(bytes);
        Ok(array)
    }

    #[inline]
    fn length(&mut self, width: usize) -> ReadResult<usize> {
        Ok(match width {
            1 => usize::from(self.take(1)?[0]),
            2 => usize::from(u16::from_be_bytes(self.array_of()?)),
            _ => u32::from_be_bytes(self.array_of()?) as usize,
        })
    }

    /// A container's item count, refused when even one byte per item would not fit in what is
    /// left (`per_item` is 2 for maps: a key and a value).
    #[inline]
    fn count(&mut self, start: usize, count: usize, per_item: usize) -> ReadResult<usize> {
        if count.saturating_mul(per_item) > self.input.len() - self.pos {
            return Err(self.error(start, "container length exceeds the remaining input"));
        }
        Ok(count)
    }

    /// Whether all the input has been read.
    #[inline]
    pub fn at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    #[inline]
    pub fn finish(&self) -> ReadResult<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error(self.pos, "trailing bytes after the value"))
        }
    }

    /// Reads the next head. Always inlined: returned through memory, the head's tag is read
    /// back before its store has retired, a store-forwarding stall on every value.
    #[inline(always)]
    // Not an `Iterator`: every read can fail, and the walk, not the reader, knows where a
    // document ends.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> ReadResult<Head<'a>> {
        let start = self.pos;
        let Some(&byte) = self.input.get(self.pos) else {
            return Err(self.error(start, "truncated input"));
        };
        self.pos += 1;
        Ok(match byte {
            0x00..=0x7f => Head::Int(i64::from(byte)),
            0x80..=0x8f => Head::Map(self.count(start, usize::from(byte & 0x0f), 2)?),
            0x90..=0x9f => Head::Array(self.count(start, usize::from(byte & 0x0f), 1)?),
            0xa0..=0xbf => Head::Str(self.take(usize::from(byte & 0x1f))?),
            0xc0 => Head::Nil,
            0xc1 => return Err(self.error(start, "reserved byte 0xc1")),
            0xc2 => Head::False,
            0xc3 => Head::True,
            0xc4 => {
                let n = self.length(1)?;
                Head::Bin(self.take(n)?)
            }
            0xc5 => {
                let n = self.length(2)?;
                Head::Bin(self.take(n)?)
            }
            0xc6 => {
                let n = self.length(4)?;
                Head::Bin(self.take(n)?)
            }
            0xc7 => {
                let n = self.length(1)?;
                self.ext(n)?
            }
            0xc8 => {
                let n = self.length(2)?;
                self.ext(n)?
            }
            0xc9 => {
                let n = self.length(4)?;
                self.ext(n)?
            }
            0xca => Head::Float(f64::from(f32::from_be_bytes(self.array_of()?))),
            0xcb => Head::Float(f64::from_be_bytes(self.array_of()?)),
            0xcc => Head::Int(i64::from(self.take(1)?[0])),
            0xcd => Head::Int(i64::from(u16::from_be_bytes(self.array_of()?))),
            0xce => Head::Int(i64::from(u32::from_be_bytes(self.array_of()?))),
            0xcf => {
                let value = u64::from_be_bytes(self.array_of()?);
                match i64::try_from(value) {
                    Ok(value) => Head::Int(value),
                    Err(_) => Head::BigUint(value),
                }
            }
            0xd0 => Head::Int(i64::from(self.take(1)?[0] as i8)),
            0xd1 => Head::Int(i64::from(i16::from_be_bytes(self.array_of()?))),
            0xd2 => Head::Int(i64::from(i32::from_be_bytes(self.array_of()?))),
            0xd3 => Head::Int(i64::from_be_bytes(self.array_of()?)),
            0xd4 => self.ext(1)?,
            0xd5 => self.ext(2)?,
            0xd6 => self.ext(4)?,
            0xd7 => self.ext(8)?,
            0xd8 => self.ext(16)?,
            0xd9 => {
                let n = self.length(1)?;
                Head::Str(self.take(n)?)
            }
            0xda => {
                let n = self.length(2)?;
                Head::Str(self.take(n)?)
            }
            0xdb => {
                let n = self.length(4)?;
                Head::Str(self.take(n)?)
            }
            0xdc => {
                let n = self.length(2)?;
                Head::Array(self.count(start, n, 1)?)
            }
            0xdd => {
                let n = self.length(4)?;
                Head::Array(self.count(start, n, 1)?)
            }
            0xde => {
                let n = self.length(2)?;
                Head::Map(self.count(start, n, 2)?)
            }
            0xdf => {
                let n = self.length(4)?;
                Head::Map(self.count(start, n, 2)?)
            }
            0xe0..=0xff => Head::Int(i64::from(byte as i8)),
        })
    }

    #[inline]
    fn ext(&mut self, length: usize) -> ReadResult<Head<'a>> {
        let kind = i64::from(self.take(1)?[0] as i8);
        Ok(Head::Ext(kind, self.take(length)?))
    }

    /// [`Reader::take_entry`] for an entry of at most 16 bytes, as one masked comparison of
    /// the next 16 bytes of input whatever the entry's length (no branch on the length, which
    /// changes from field to field). `None` when the entry is longer or fewer than 16 bytes
    /// are left: `take_entry` decides.
    #[inline(always)]
    pub fn take_short_entry(&mut self, entry: &ShortEntry) -> Option<bool> {
        if entry.len == 0 {
            return None;
        }
        let window: [u8; 16] = self.input.get(self.pos..self.pos + 16)?.try_into().ok()?;
        let matched = (u128::from_le_bytes(window) ^ entry.word) & entry.mask == 0;
        if matched {
            self.pos += entry.len;
        }
        Some(matched)
    }

    /// [`Reader::take_short_entry`] for several entries, the input's 16 bytes loaded once:
    /// consumes the first of `entries` the input continues with and returns `Some(Some(its
    /// position))`; `Some(None)`, with nothing consumed, when none of those of at most 16
    /// bytes matches (longer ones are never tried here); `None` when fewer than 16 bytes are
    /// left (`take_entry` decides).
    #[inline(always)]
    pub fn take_short_entries<'e>(
        &mut self,
        entries: impl Iterator<Item = &'e ShortEntry>,
    ) -> Option<Option<usize>> {
        let window: [u8; 16] = self.input.get(self.pos..self.pos + 16)?.try_into().ok()?;
        let window = u128::from_le_bytes(window);
        for (position, entry) in entries.enumerate() {
            if entry.len != 0 && (window ^ entry.word) & entry.mask == 0 {
                self.pos += entry.len;
                return Some(Some(position));
            }
        }
        Some(None)
    }

    /// Whether this entry is compared by [`Reader::take_short_entries`] (1 to 16 bytes).
    #[inline(always)]
    pub fn is_short(entry: &ShortEntry) -> bool {
        entry.len != 0
    }

    /// If the input continues with `entry` (bytes precomputed from the plan: a field name's
    /// whole str, header included, or a variant's whole leading tag entry), consumes it and
    /// returns true; otherwise consumes nothing. A str written in a longer header form than
    /// the shortest does not match and takes the general path.
    #[inline(always)]
    pub fn take_entry(&mut self, entry: &[u8]) -> bool {
        let end = self.pos + entry.len();
        match self.input.get(self.pos..end) {
            Some(candidate) if same_bytes(candidate, entry) => {
                self.pos = end;
                true
            }
            _ => false,
        }
    }

    /// Skips one complete value. Iterative, with at most `max_depth` open containers.
    pub fn skip_value(&mut self, max_depth: usize) -> ReadResult<()> {
        let mut pending: Vec<usize> = Vec::new();
        let mut remaining = 1usize;
        loop {
            while remaining == 0 {
                match pending.pop() {
                    Some(outer) => remaining = outer,
                    None => return Ok(()),
                }
            }
            remaining -= 1;
            let start = self.pos;
            let items = match self.next()? {
                Head::Array(n) => n,
                Head::Map(n) => n * 2,
                // A skipped value is checked as a read one is: what the decoder refuses as
                // malformed, it refuses here too.
                Head::Str(bytes) if !bytes.is_ascii() && std::str::from_utf8(bytes).is_err() => {
                    return Err(self.error(start, "str is not valid UTF-8"));
                }
                Head::Ext(-1, payload) if timestamp(payload).is_none() => {
                    return Err(self.error(start, "invalid timestamp extension payload"));
                }
                _ => continue,
            };
            if items > 0 {
                if pending.len() >= max_depth {
                    return Err(self.error(start, "nesting deeper than the limit"));
                }
                pending.push(remaining);
                remaining = items;
            }
        }
    }
}

/// A name entry of 1 to 16 bytes as one little-endian word and the mask of its bytes, for
/// [`Reader::take_short_entry`]; a longer (or empty) entry has length 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShortEntry {
    word: u128,
    mask: u128,
    len: usize,
}

impl ShortEntry {
    pub fn new(entry: &[u8]) -> ShortEntry {
        if entry.is_empty() || entry.len() > 16 {
            return ShortEntry::default();
        }
        let mut bytes = [0u8; 16];
        bytes[..entry.len()].copy_from_slice(entry);
        let mask = match entry.len() {
            16 => u128::MAX,
            len => (1u128 << (8 * len)) - 1,
        };
        ShortEntry {
            word: u128::from_le_bytes(bytes),
            mask,
            len: entry.len(),
        }
    }
}

/// Whether two byte strings are equal: for the short ones field names and tag entries are, two
/// (possibly overlapping) word loads a side instead of `memcmp`. Kept out of line: inlined into
/// the record walk it cost more than the call (about 5,000 instructions more on a tree decode).
#[inline(never)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    fn word8(s: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    }
    fn word4(s: &[u8], at: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_le_bytes(w)
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => (word4(a, 0) ^ word4(b, 0)) | (word4(a, n - 4) ^ word4(b, n - 4)) == 0,
        8..=16 => (word8(a, 0) ^ word8(b, 0)) | (word8(a, n - 8) ^ word8(b, n - 8)) == 0,
        _ => a == b,
    }
}

/// Decodes a timestamp extension's payload (type -1) into seconds since the epoch and
/// nanoseconds; `None` for a payload of another length or nanoseconds of a second or more.
#[inline]
pub fn timestamp(payload: &[u8]) -> Option<(i64, u32)> {
    let (seconds, nanoseconds) = match payload.len() {
        4 => (i64::from(u32::from_be_bytes(payload.try_into().ok()?)), 0),
        8 => {
            let combined = u64::from_be_bytes(payload.try_into().ok()?);
            ((combined & ((1 << 34) - 1)) as i64, (combined >> 34) as u32)
        }
        12 => (
            i64::from_be_bytes(payload[4..].try_into().ok()?),
            u32::from_be_bytes(payload[..4].try_into().ok()?),
        ),
        _ => return None,
    };
    (nanoseconds < 1_000_000_000).then_some((seconds, nanoseconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_int_width() {
        for input in [
            &[0x05][..],
            &[0xcc, 5],
            &[0xcd, 0, 5],
            &[0xce, 0, 0, 0, 5],
            &[0xd0, 5],
            &[0xd3, 0, 0, 0, 0, 0, 0, 0, 5],
        ] {
            assert_eq!(Reader::new(input).next(), Ok(Head::Int(5)));
        }
        assert_eq!(
            Reader::new(&[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).next(),
            Ok(Head::BigUint(u64::MAX))
        );
    }

    #[test]
    fn refuses_truncation_and_impossible_lengths() {
        assert!(Reader::new(&[0xd9, 5, b'a']).next().is_err());
        assert!(Reader::new(&[0xdd, 0xff, 0xff, 0xff, 0xff]).next().is_err());
        assert!(Reader::new(&[0xc1]).next().is_err());
        assert!(Reader::new(&[]).next().is_err());
    }

    #[test]
    fn take_short_entry_agrees_with_take_entry() {
        let input: Vec<u8> = (0..48u8).map(|b| b.wrapping_mul(37)).collect();
        for len in 0..=20 {
            for start in 0..input.len() {
                let end = (start + len).min(input.len());
                let mut entries = vec![input[start..end].to_vec()];
                for at in 0..end - start {
                    let mut other = input[start..end].to_vec();
                    other[at] ^= 0x01;
                    entries.push(other);
                }
                for entry in entries {
                    for pos in [start, 0] {
                        let mut whole = Reader::new(&input);
                        whole.rewind(pos);
                        let expected = whole.take_entry(&entry);
                        let mut short = Reader::new(&input);
                        short.rewind(pos);
                        match short.take_short_entry(&ShortEntry::new(&entry)) {
                            Some(taken) => {
                                assert!(!entry.is_empty() && entry.len() <= 16);
                                assert!(pos + 16 <= input.len());
                                assert_eq!(taken, expected, "{entry:?} at {pos}");
                                assert_eq!(short.offset(), whole.offset());
                            }
                            None => {
                                let short_one = !entry.is_empty() && entry.len() <= 16;
                                assert!(!short_one || pos + 16 > input.len());
                                assert_eq!(short.offset(), pos);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn take_entry_consumes_only_an_exact_match() {
        let input = [
            0xa4, b'k', b'i', b'n', b'd', 0xa6, b'b', b'r', b'a', b'n', b'c', b'h', 0x01,
        ];
        for len in 0..input.len() {
            // Every prefix matches; one changed byte anywhere does not.
            let mut reader = Reader::new(&input);
            assert!(reader.take_entry(&input[..len]));
            assert_eq!(reader.offset(), len);
            for at in 0..len {
                let mut other = input[..len].to_vec();
                other[at] ^= 0x20;
                let mut reader = Reader::new(&input);
                assert!(!reader.take_entry(&other));
                assert_eq!(reader.offset(), 0);
            }
        }
        // Past the end of the input: no match.
        let mut reader = Reader::new(&input[..3]);
        assert!(!reader.take_entry(&input[..5]));
        assert_eq!(reader.offset(), 0);
        let long: Vec<u8> = (0..40).collect();
        assert!(Reader::new(&long).take_entry(&long[..33]));
        assert!(!Reader::new(&long).take_entry(&long[1..34]));
    }

    #[test]
    fn skips_nested_values_with_a_depth_limit() {
        let mut reader = Reader::new(&[0x92, 0x81, 0xa1, b'k', 0x91, 0x01, 0xc0, 0x07]);
        reader.skip_value(8).unwrap();
        assert_eq!(reader.next(), Ok(Head::Int(7)));
        let deep = [0x91u8; 10];
        assert!(Reader::new(&deep).skip_value(4).is_err());
    }
}

//! Strict RFC 8259 pull reader over a byte slice.
//!
//! The reader is built for a recursive-descent, plan-driven decoder: the
//! decoder asks what kind of value comes next ([`Reader::peek_kind`]) and then
//! consumes exactly that value with the matching `read_*` / `begin_*` call.
//! No tree is built and nothing is allocated in the common case: strings
//! without escapes are borrowed from the input, strings with escapes are
//! decoded into one reusable scratch buffer, numbers are parsed in place.
//!
//! Strictness (everything below is a [`SyntaxError`]):
//! - a leading UTF-8 byte order mark (RFC 8259 §8.1 says senders MUST NOT add
//!   one; we reject it rather than silently skip it);
//! - whitespace other than space, `\t`, `\n`, `\r`;
//! - in strings: raw control characters (< 0x20), unknown escapes, malformed
//!   `\uXXXX`, invalid UTF-8 (overlong forms, UTF-8-encoded surrogates,
//!   truncated sequences, code points above U+10FFFF), and lone surrogate
//!   escapes such as `"\ud800"` (a Rust `str` cannot hold one; surrogate
//!   pairs are combined into one code point);
//! - numbers outside the exact RFC grammar: leading zeros, `+1`, `.5`, `1.`,
//!   `1e`, `NaN`, `Infinity`, ...;
//! - trailing commas, missing separators, non-string keys, trailing data.
//!
//! Number literals whose magnitude overflows `f64` (e.g. `1e400`) are
//! accepted and yield [`Number::Float`] with an infinite `value`; the exact
//! `text` is available for callers that want to reject or keep it.
//!
//! The reader never panics, never reads out of bounds and never recurses:
//! nesting depth is the caller's business for `begin_*`, and
//! [`Reader::skip_value`] is iterative with an explicit depth limit.

use std::fmt;

/// A syntax error: what was wrong and the byte offset where it was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset into the input (equal to the input length for errors at
    /// end of input).
    pub offset: usize,
    /// Short, specific description, e.g. `"invalid escape"`.
    pub message: &'static str,
}

impl SyntaxError {
    #[inline]
    fn new(offset: usize, message: &'static str) -> Self {
        SyntaxError { offset, message }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for SyntaxError {}

/// The kind of the next value, as decided by its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `{`
    Object,
    /// `[`
    Array,
    /// `"`
    String,
    /// `-` or a digit (the literal itself is validated by `read_number`).
    Number,
    /// `t`
    True,
    /// `f`
    False,
    /// `n`
    Null,
}

/// A parsed number literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number<'a> {
    /// An integer literal (no fraction, no exponent) that fits in `i64`.
    /// `-0` yields `Int(0)`.
    Int(i64),
    /// An integer literal outside the `i64` range: its exact text, including
    /// a leading `-` if any (always valid for Python's `int()`).
    BigInt(&'a str),
    /// A literal with a fraction and/or exponent. `value` is correctly
    /// rounded (it is infinite if the magnitude overflows `f64`, and may be
    /// `±0.0` on underflow); `text` is the exact literal, ASCII (kept as bytes: most
    /// consumers want only the value, and a `&str` view costs a UTF-8 check).
    Float { value: f64, text: &'a [u8] },
}

/// A decoded string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Str<'s> {
    /// The decoded text (escapes resolved) as UTF-8 bytes, already validated: the bytes, not a
    /// `&str`, so the common ASCII case pays for no second validation pass.
    pub bytes: &'s [u8],
    /// True if every byte is < 0x80, so a Python `str` can be built from it with a plain copy.
    pub ascii: bool,
}

impl<'s> Str<'s> {
    /// The text as `&str`, for the less common consumers (messages, number parsing).
    #[inline]
    pub fn text(&self) -> &'s str {
        std::str::from_utf8(self.bytes).unwrap_or_default()
    }
}

/// Where `scan_string` left the decoded string.
enum Scanned<'a> {
    /// No escapes: the text is a slice of the input.
    Borrowed(&'a [u8]),
    /// Escapes were decoded into `Reader::scratch`.
    Scratch,
    /// Validated only (`decode == false`).
    Skipped,
}

/// Pull reader over a complete JSON document held in memory.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    scratch: Vec<u8>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl<'a> Reader<'a> {
    /// Creates a reader positioned at the start of `bytes`. Nothing is
    /// checked yet; a leading UTF-8 BOM is reported by the first read.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            pos: 0,
            scratch: Vec::new(),
        }
    }

    /// Current byte offset (after the last consumed token; whitespace before
    /// the next token may or may not have been skipped yet).
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The input from `start` (an offset this reader returned before) to where it is now.
    #[inline]
    pub fn taken_since(&self, start: usize) -> &'a [u8] {
        self.bytes.get(start..self.pos).unwrap_or_default()
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// Error for an unexpected byte (or end of input) at the current position.
    #[cold]
    fn unexpected(&self, message: &'static str) -> SyntaxError {
        if self.pos >= self.bytes.len() {
            SyntaxError::new(self.bytes.len(), "unexpected end of input")
        } else if self.pos == 0 && self.bytes.starts_with(BOM) {
            SyntaxError::new(0, "UTF-8 BOM is not allowed")
        } else {
            SyntaxError::new(self.pos, message)
        }
    }

    /// Skips whitespace (space, `\t`, `\n`, `\r` only) and tells what kind of
    /// value starts at the next byte, without consuming it.
    #[inline]
    pub fn peek_kind(&mut self) -> Result<ValueKind, SyntaxError> {
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b'{') => Ok(ValueKind::Object),
            Some(b'[') => Ok(ValueKind::Array),
            Some(b'"') => Ok(ValueKind::String),
            Some(b'-' | b'0'..=b'9') => Ok(ValueKind::Number),
            Some(b't') => Ok(ValueKind::True),
            Some(b'f') => Ok(ValueKind::False),
            Some(b'n') => Ok(ValueKind::Null),
            _ => Err(self.unexpected("expected JSON value")),
        }
    }

    /// Consumes `{` (after optional whitespace). Follow with
    /// [`Reader::next_key`]`(true)`, then `next_key(false)` after each value.
    #[inline]
    pub fn begin_object(&mut self) -> Result<(), SyntaxError> {
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'{') {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected("expected '{'"))
        }
    }

    /// Returns the next key of the current object, or `None` once the closing
    /// `}` has been consumed. Pass `first = true` right after `begin_object`
    /// and `false` after each member value: then a `,` is required before the
    /// key, and a trailing comma is rejected. The `:` after the key is
    /// consumed, so the member value comes next.
    #[inline]
    pub fn next_key(&mut self, first: bool) -> Result<Option<Str<'_>>, SyntaxError> {
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b'}') => {
                self.pos += 1;
                return Ok(None);
            }
            Some(b'"') if first => {}
            Some(b',') if !first => {
                self.pos += 1;
                self.skip_ws();
                match self.bytes.get(self.pos) {
                    Some(b'"') => {}
                    Some(b'}') => {
                        return Err(SyntaxError::new(self.pos, "trailing comma in object"))
                    }
                    _ => return Err(self.unexpected("expected string key")),
                }
            }
            _ if first => return Err(self.unexpected("expected string key or '}'")),
            _ => return Err(self.unexpected("expected ',' or '}' after object member")),
        }
        // The common key, ASCII without escapes and followed by its colon, ends at the first
        // special byte: one scan, borrowed, with none of the general scanner's bookkeeping.
        let bytes = self.bytes;
        let start = self.pos + 1;
        let end = find_special::<true>(bytes, start);
        if bytes.get(end) == Some(&b'"') && bytes.get(end + 1) == Some(&b':') {
            self.pos = end + 2;
            return Ok(Some(Str {
                bytes: &bytes[start..end],
                ascii: true,
            }));
        }
        let scanned = self.scan_string(true)?;
        self.expect_colon()?;
        self.make_str(scanned).map(Some)
    }

    /// Consumes the next member's key and its colon if they are exactly `quoted_key` (the JSON
    /// string and `:`, as polycodec writes a field name), returning false and consuming nothing
    /// otherwise. Decoders try the field they expect next this way before reading the key,
    /// which for input in declaration order skips key scanning and matching entirely.
    #[inline]
    pub fn take_key(&mut self, first: bool, quoted_key: &[u8]) -> bool {
        let start = self.pos;
        self.skip_ws();
        if !first {
            if self.bytes.get(self.pos) != Some(&b',') {
                self.pos = start;
                return false;
            }
            self.pos += 1;
            self.skip_ws();
        }
        match self.bytes.get(self.pos..self.pos + quoted_key.len()) {
            Some(candidate) if same_bytes(candidate, quoted_key) => {
                self.pos += quoted_key.len();
                true
            }
            _ => {
                self.pos = start;
                false
            }
        }
    }

    #[inline(always)]
    fn expect_colon(&mut self) -> Result<(), SyntaxError> {
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b':') {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected("expected ':' after object key"))
        }
    }

    /// Consumes `[` (after optional whitespace). Follow with
    /// [`Reader::next_element`]`(true)`, then `next_element(false)` after
    /// each element.
    #[inline]
    pub fn begin_array(&mut self) -> Result<(), SyntaxError> {
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'[') {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected("expected '['"))
        }
    }

    /// Returns `true` if another element follows (consuming the `,` before it
    /// when `first` is false), or `false` once the closing `]` has been
    /// consumed. Trailing commas are rejected.
    #[inline]
    pub fn next_element(&mut self, first: bool) -> Result<bool, SyntaxError> {
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b']') => {
                self.pos += 1;
                Ok(false)
            }
            Some(_) if first => Ok(true),
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b']') {
                    Err(SyntaxError::new(self.pos, "trailing comma in array"))
                } else {
                    Ok(true)
                }
            }
            _ => Err(self.unexpected("expected ',' or ']' after array element")),
        }
    }

    /// Reads a string value. The text is borrowed from the input when the
    /// string has no escapes, otherwise decoded into an internal scratch
    /// buffer (valid until the next call on this reader).
    #[inline(always)]
    pub fn read_str(&mut self) -> Result<Str<'_>, SyntaxError> {
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b'"') {
            return Err(self.unexpected("expected string"));
        }
        self.read_str_peeked()
    }

    /// [`Reader::read_str`] where the caller has just peeked the string's opening quote
    /// ([`Reader::peek_byte`] returned `"`): no whitespace to skip, no quote to check again.
    /// Only for that case: anywhere else the byte at the position would be taken for the
    /// quote (the reader still never reads out of bounds).
    #[inline(always)]
    pub fn read_str_peeked(&mut self) -> Result<Str<'_>, SyntaxError> {
        // The common string, ASCII without escapes, ends at the first special byte: one scan,
        // borrowed, with none of the general scanner's bookkeeping.
        let bytes = self.bytes;
        let start = self.pos + 1;
        let end = find_special::<true>(bytes, start);
        if bytes.get(end) == Some(&b'"') {
            self.pos = end + 1;
            return Ok(Str {
                bytes: &bytes[start..end],
                ascii: true,
            });
        }
        let scanned = self.scan_string(true)?;
        self.make_str(scanned)
    }

    /// Reads the string at the current position (its quote is next) without scanning it, when
    /// its text is `len` bytes that `accept` takes: `accept` must take only bytes none of which
    /// is a quote, a backslash or a control character, so the quote after them ends the string.
    /// `None`, with nothing consumed, otherwise.
    #[inline(always)]
    pub fn take_str_of<T>(
        &mut self,
        len: usize,
        accept: impl FnOnce(&[u8]) -> Option<T>,
    ) -> Option<T> {
        let start = self.pos + 1;
        if self.bytes.get(start + len) != Some(&b'"') {
            return None;
        }
        let value = accept(self.bytes.get(start..start + len)?)?;
        self.pos = start + len + 1;
        Some(value)
    }

    /// Skips whitespace and returns the next byte without consuming it (`None` at the end of
    /// the input): a decoder that knows what type it wants dispatches on it once.
    #[inline(always)]
    pub fn peek_byte(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// Consumes `byte` if it is next (after whitespace).
    #[inline(always)]
    pub fn take_byte(&mut self, byte: u8) -> bool {
        if self.peek_byte() == Some(byte) {
            self.pos += 1;
            return true;
        }
        false
    }

    /// The error [`Reader::peek_kind`] gives where no value starts.
    #[cold]
    pub fn expected_value(&self) -> SyntaxError {
        self.unexpected("expected JSON value")
    }

    /// Consumes the next member's key and colon if they are exactly `member`'s, where `member`
    /// is the key as written after another member: `,"name":` (from `first` on, the comma is
    /// left out). Input written without whitespace matches with one comparison; otherwise this
    /// is [`Reader::take_key`]. Returns false and consumes nothing when the key differs.
    #[inline(always)]
    pub fn take_member(&mut self, first: bool, member: &[u8]) -> bool {
        let expected = if first {
            member.get(1..).unwrap_or(member)
        } else {
            member
        };
        let pos = self.pos;
        if let Some(candidate) = self.bytes.get(pos..pos + expected.len()) {
            if same_bytes(candidate, expected) {
                self.pos = pos + expected.len();
                return true;
            }
        }
        // Only whitespace before the key or after its comma makes the general path match.
        let space = |i: usize| matches!(self.bytes.get(i), Some(b' ' | b'\n' | b'\r' | b'\t'));
        if space(pos) || (!first && space(pos + 1)) {
            return self.take_key(first, member.get(1..).unwrap_or(member));
        }
        false
    }

    /// [`Reader::take_member`] for a member of at most 16 bytes, as one masked comparison of
    /// the next 16 bytes of input whatever the member's length (no branch on the length,
    /// which changes from field to field). With `first` the window starts one byte earlier,
    /// at the `{` or whitespace before the key, and the comma's byte is masked out, so the
    /// member's one word serves both. `None` when the member is longer or fewer than 16 bytes
    /// are left: `take_member` decides. A mismatch still gives whitespace before the key its
    /// general path, as `take_member` does.
    #[inline(always)]
    pub fn take_member_word(&mut self, first: bool, member: &MemberWord) -> Option<bool> {
        if member.len == 0 {
            return None;
        }
        let start = self.pos.checked_sub(usize::from(first))?;
        let window: [u8; 16] = self.bytes.get(start..start + 16)?.try_into().ok()?;
        let mask = if first {
            member.mask & !0xff
        } else {
            member.mask
        };
        if (u128::from_le_bytes(window) ^ member.word) & mask == 0 {
            self.pos = start + member.len;
            return Some(true);
        }
        let space = |byte: u8| matches!(byte, b' ' | b'\n' | b'\r' | b'\t');
        if space(window[usize::from(first)]) || (!first && space(window[1])) {
            return None;
        }
        Some(false)
    }

    /// [`Reader::take_member_word`] for several members, the input's 16 bytes loaded once:
    /// consumes the first member of `members` the input continues with and returns its
    /// position; `None`, with nothing consumed, when none matches, when fewer than 16 bytes
    /// are left, or when the key is written after whitespace (the general path's).
    #[inline(always)]
    pub fn take_member_words(
        &mut self,
        first: bool,
        members: impl Iterator<Item = MemberWord>,
    ) -> Option<usize> {
        let start = self.pos.checked_sub(usize::from(first))?;
        let window: [u8; 16] = self.bytes.get(start..start + 16)?.try_into().ok()?;
        let space = |byte: u8| matches!(byte, b' ' | b'\n' | b'\r' | b'\t');
        if space(window[usize::from(first)]) || (!first && space(window[1])) {
            return None;
        }
        let window = u128::from_le_bytes(window);
        let comma = if first { !0xff } else { u128::MAX };
        for (position, member) in members.enumerate() {
            if member.len != 0 && (window ^ member.word) & member.mask & comma == 0 {
                self.pos = start + member.len;
                return Some(position);
            }
        }
        None
    }

    #[inline(always)]
    fn make_str(&self, scanned: (Scanned<'a>, bool)) -> Result<Str<'_>, SyntaxError> {
        let (scanned, ascii) = scanned;
        match scanned {
            Scanned::Borrowed(bytes) => Ok(Str { bytes, ascii }),
            // The scratch buffer holds validated raw runs plus UTF-8 encoded
            // escapes, so this cannot fail; the check costs one fast pass.
            Scanned::Skipped => Ok(Str { bytes: b"", ascii }),
            Scanned::Scratch => match std::str::from_utf8(&self.scratch) {
                Ok(_) => Ok(Str {
                    bytes: &self.scratch,
                    ascii,
                }),
                Err(_) => Err(SyntaxError::new(self.pos, "invalid UTF-8 in string")),
            },
        }
    }

    /// Scans the string starting at `self.pos` (which must be a `"`), leaving
    /// `pos` after the closing quote. With `decode`, escapes are resolved into
    /// `scratch` (and the result says so); without, the string is validated
    /// only. Returns the location of the text and whether it is all ASCII.
    #[inline]
    fn scan_string(&mut self, decode: bool) -> Result<(Scanned<'a>, bool), SyntaxError> {
        let bytes = self.bytes;
        let start = self.pos + 1;
        let mut i = start;
        let mut raw_non_ascii = false;
        let mut escaped = false;
        let mut escaped_non_ascii = false;
        let mut run_start = start;
        loop {
            i = if raw_non_ascii {
                find_special::<false>(bytes, i)
            } else {
                find_special::<true>(bytes, i)
            };
            let Some(&b) = bytes.get(i) else {
                return Err(SyntaxError::new(bytes.len(), "unterminated string"));
            };
            if b == b'"' {
                break;
            } else if b == b'\\' {
                if decode {
                    if !escaped {
                        self.scratch.clear();
                    }
                    // Room for the run and the escape's at most 4 bytes: one check per escape.
                    scratch_room(&mut self.scratch, i - run_start + 4, i)?;
                    self.scratch.extend_from_slice(&bytes[run_start..i]);
                }
                escaped = true;
                i = unescape(bytes, i, decode, &mut self.scratch, &mut escaped_non_ascii)?;
                run_start = i;
            } else if b >= 0x80 {
                raw_non_ascii = true;
                i += 1;
            } else {
                return Err(SyntaxError::new(i, "unescaped control character in string"));
            }
        }
        // `i` is the closing quote.
        self.pos = i + 1;
        let raw = &bytes[start..i];
        let ascii = !raw_non_ascii && !escaped_non_ascii;
        // Escape sequences are ASCII in the input, so the raw span is valid
        // UTF-8 exactly when every raw run is; one check gives a precise
        // offset. ASCII-only spans need no check.
        if raw_non_ascii {
            if let Err(e) = std::str::from_utf8(raw) {
                return Err(SyntaxError::new(
                    start + e.valid_up_to(),
                    "invalid UTF-8 in string",
                ));
            }
        }
        if !decode {
            Ok((Scanned::Skipped, ascii))
        } else if escaped {
            scratch_room(&mut self.scratch, i - run_start, i)?;
            self.scratch.extend_from_slice(&bytes[run_start..i]);
            Ok((Scanned::Scratch, ascii))
        } else {
            Ok((Scanned::Borrowed(raw), ascii))
        }
    }

    /// Reads a number literal, enforcing the exact RFC 8259 grammar.
    #[inline]
    pub fn read_number(&mut self) -> Result<Number<'a>, SyntaxError> {
        self.skip_ws();
        match self.short_number() {
            Some(number) => Ok(number),
            None => self.any_number(),
        }
    }

    /// [`Reader::read_number`] for a caller that has just peeked the number's first byte
    /// ([`Reader::peek_byte`] skipped the whitespace): the one-pass short literal inlined at the
    /// call site, the general reader out of line.
    #[inline(always)]
    pub fn read_number_peeked(&mut self) -> Result<Number<'a>, SyntaxError> {
        match self.short_number() {
            Some(number) => Ok(number),
            None => self.any_number(),
        }
    }

    /// The common literal in one pass: `-?[1-9][0-9]*` or `-?0`, optionally with a fraction,
    /// no exponent, at most 18 significant digits, and (for a fraction) a value Clinger's fast
    /// path gives exactly. `None`, with nothing consumed, for every other literal, valid or
    /// not: [`Reader::any_number`] reads it (and words any error).
    #[inline(always)]
    fn short_number(&mut self) -> Option<Number<'a>> {
        let bytes = self.bytes;
        let start = self.pos;
        let neg = bytes.get(start) == Some(&b'-');
        let digits = start + usize::from(neg);
        let (mut i, mut mant) = accumulate_digits(bytes, digits, 0);
        let int_digits = i - digits;
        // No digits, a leading zero followed by more, or too many for `mant`.
        if int_digits == 0 || int_digits > 18 || (int_digits > 1 && bytes[digits] == b'0') {
            return None;
        }
        match bytes.get(i) {
            Some(b'.') => {}
            Some(b'e' | b'E') => return None,
            _ => {
                self.pos = i;
                // Below 10^18: fits in an i64 either way.
                let value = mant as i64;
                return Some(Number::Int(if neg { value.wrapping_neg() } else { value }));
            }
        }
        let point = i;
        (i, mant) = accumulate_digits(bytes, i + 1, mant);
        let fraction_digits = i - point - 1;
        if fraction_digits == 0
            || int_digits + fraction_digits > 18
            || fraction_digits > 22
            || mant > 1 << 53
            || matches!(bytes.get(i), Some(b'e' | b'E'))
        {
            return None;
        }
        // Both operands exact, so one IEEE division gives the correctly rounded value.
        let magnitude = mant as f64 / POW10[fraction_digits];
        self.pos = i;
        Some(Number::Float {
            value: if neg { -magnitude } else { magnitude },
            text: &bytes[start..i],
        })
    }

    /// Reads any number literal at the current position (whitespace skipped).
    #[inline(never)]
    fn any_number(&mut self) -> Result<Number<'a>, SyntaxError> {
        let bytes = self.bytes;
        let start = self.pos;
        let mut i = start;
        let neg = bytes.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        // Decimal significand accumulated while it stays below 10^19;
        // `truncated` records that further significant digits were dropped.
        let mut mant: u64 = 0;
        let mut truncated = false;
        match bytes.get(i) {
            Some(b'0') => {
                i += 1;
                if matches!(bytes.get(i), Some(b'0'..=b'9')) {
                    return Err(SyntaxError::new(i - 1, "leading zeros are not allowed"));
                }
            }
            Some(b'1'..=b'9') => {
                while let Some(&d @ b'0'..=b'9') = bytes.get(i) {
                    if mant < 1_000_000_000_000_000_000 {
                        mant = mant * 10 + u64::from(d - b'0');
                    } else {
                        truncated = true;
                    }
                    i += 1;
                }
            }
            _ => {
                self.pos = i;
                return Err(if neg {
                    self.unexpected("expected digit after '-'")
                } else {
                    self.unexpected("expected number")
                });
            }
        }
        let int_end = i;
        let mut is_float = false;
        // Decimal exponent correction from accumulated fraction digits, and
        // from integer digits dropped by truncation.
        let mut exp10: i64 = 0;
        if bytes.get(i) == Some(&b'.') {
            is_float = true;
            i += 1;
            if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
                self.pos = i;
                return Err(self.unexpected("expected digit after decimal point"));
            }
            while let Some(&d @ b'0'..=b'9') = bytes.get(i) {
                if mant < 1_000_000_000_000_000_000 {
                    mant = mant * 10 + u64::from(d - b'0');
                    exp10 -= 1;
                } else {
                    truncated = true;
                }
                i += 1;
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            is_float = true;
            i += 1;
            let exp_neg = match bytes.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
                self.pos = i;
                return Err(self.unexpected("expected digit in exponent"));
            }
            let mut e: i64 = 0;
            while let Some(&d @ b'0'..=b'9') = bytes.get(i) {
                // Saturate: anything this large is out of f64 range anyway
                // and takes the exact slow path below.
                e = (e * 10 + i64::from(d - b'0')).min(1_000_000);
                i += 1;
            }
            exp10 += if exp_neg { -e } else { e };
        }
        self.pos = i;
        if !is_float {
            debug_assert_eq!(int_end, i);
            if !truncated {
                if neg {
                    if mant <= 1 << 63 {
                        return Ok(Number::Int((mant as i64).wrapping_neg()));
                    }
                } else if mant <= i64::MAX as u64 {
                    return Ok(Number::Int(mant as i64));
                }
            }
            return Ok(Number::BigInt(ascii_str(&bytes[start..i])));
        }
        let text = &bytes[start..i];
        // Clinger's fast path: both operands exact, so one IEEE operation
        // gives the correctly rounded result.
        if !truncated && mant <= 1 << 53 && (-22..=22).contains(&exp10) {
            let m = mant as f64;
            let v = if exp10 >= 0 {
                m * POW10[exp10 as usize]
            } else {
                m / POW10[(-exp10) as usize]
            };
            let value = if neg { -v } else { v };
            return Ok(Number::Float { value, text });
        }
        match ascii_str(text).parse::<f64>() {
            Ok(value) => Ok(Number::Float { value, text }),
            Err(_) => Err(SyntaxError::new(start, "invalid number")),
        }
    }

    #[inline(always)]
    fn literal(&mut self, lit: &'static [u8], message: &'static str) -> Result<(), SyntaxError> {
        self.skip_ws();
        match self.bytes.get(self.pos..self.pos + lit.len()) {
            Some(s) if s == lit => {
                self.pos += lit.len();
                Ok(())
            }
            _ => Err(self.unexpected(message)),
        }
    }

    /// Consumes the literal `true`.
    #[inline]
    pub fn read_true(&mut self) -> Result<(), SyntaxError> {
        self.literal(b"true", "expected 'true'")
    }

    /// Consumes the literal `false`.
    #[inline]
    pub fn read_false(&mut self) -> Result<(), SyntaxError> {
        self.literal(b"false", "expected 'false'")
    }

    /// Consumes the literal `null`.
    #[inline]
    pub fn read_null(&mut self) -> Result<(), SyntaxError> {
        self.literal(b"null", "expected 'null'")
    }

    /// Validates and skips one complete value without decoding it (strings
    /// are checked but not unescaped, numbers are checked but not parsed).
    /// `max_depth` is the number of container levels allowed inside the
    /// skipped value (0 allows scalars only); deeper nesting fails with
    /// "maximum nesting depth exceeded". Iterative: no recursion at all; the
    /// first 128 levels are tracked in a register, deeper ones on the heap.
    pub fn skip_value(&mut self, max_depth: usize) -> Result<(), SyntaxError> {
        // Open containers, one bit per level (1 = object); `in_obj` is the
        // innermost one's, re-read from them only when a container closes.
        let mut inline: u128 = 0;
        let mut spill: Vec<bool> = Vec::new();
        let mut depth: usize = 0;
        let mut in_obj = false;
        'value: loop {
            // A value is expected here.
            self.skip_ws();
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.unexpected("expected JSON value"));
            };
            match b {
                b'"' => self.skip_string()?,
                b'-' | b'0'..=b'9' => self.skip_number()?,
                b'{' | b'[' => {
                    if depth >= max_depth {
                        return Err(SyntaxError::new(self.pos, "maximum nesting depth exceeded"));
                    }
                    let is_obj = b == b'{';
                    self.pos += 1;
                    self.skip_ws();
                    let close = if is_obj { b'}' } else { b']' };
                    if self.bytes.get(self.pos) == Some(&close) {
                        // Empty container: a complete value.
                        self.pos += 1;
                    } else {
                        if depth < 128 {
                            let bit = 1u128 << depth;
                            inline = if is_obj { inline | bit } else { inline & !bit };
                        } else {
                            spill.push(is_obj);
                        }
                        depth += 1;
                        in_obj = is_obj;
                        if is_obj {
                            self.skip_key(true)?;
                        }
                        continue 'value;
                    }
                }
                b't' => self.read_true()?,
                b'f' => self.read_false()?,
                b'n' => self.read_null()?,
                _ => return Err(self.unexpected("expected JSON value")),
            }
            // A value is complete: close containers until one continues.
            loop {
                if depth == 0 {
                    return Ok(());
                }
                self.skip_ws();
                match self.bytes.get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        if in_obj {
                            self.skip_key(false)?;
                        } else {
                            self.skip_ws();
                            if self.bytes.get(self.pos) == Some(&b']') {
                                return Err(SyntaxError::new(self.pos, "trailing comma in array"));
                            }
                        }
                        continue 'value;
                    }
                    Some(b'}') if in_obj => {}
                    Some(b']') if !in_obj => {}
                    _ if in_obj => {
                        return Err(self.unexpected("expected ',' or '}' after object member"))
                    }
                    _ => return Err(self.unexpected("expected ',' or ']' after array element")),
                }
                self.pos += 1;
                if depth > 128 {
                    spill.pop();
                }
                depth -= 1;
                in_obj = if depth == 0 {
                    false
                } else if depth <= 128 {
                    (inline >> (depth - 1)) & 1 == 1
                } else {
                    spill.last().copied().unwrap_or(false)
                };
            }
        }
    }

    /// Skips `"key" :` (validating the key) for `skip_value`.
    #[inline(always)]
    fn skip_key(&mut self, first: bool) -> Result<(), SyntaxError> {
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b'"') => {}
            Some(b'}') if !first => {
                return Err(SyntaxError::new(self.pos, "trailing comma in object"))
            }
            _ if first => return Err(self.unexpected("expected string key or '}'")),
            _ => return Err(self.unexpected("expected string key")),
        }
        self.skip_string()?;
        self.expect_colon()
    }

    /// Skips the string at `self.pos` (a `"`) for `skip_value`: a string of
    /// printable ASCII without escapes, the common case, is one
    /// [`find_special`] scan to its closing quote; any other string is
    /// scanned again from its start by [`Reader::scan_string`] (out of
    /// line), so what is checked and every error stay exactly its.
    #[inline(always)]
    fn skip_string(&mut self) -> Result<(), SyntaxError> {
        let end = find_special::<true>(self.bytes, self.pos + 1);
        if self.bytes.get(end) == Some(&b'"') {
            self.pos = end + 1;
            Ok(())
        } else {
            self.skip_string_slow()
        }
    }

    #[inline(never)]
    fn skip_string_slow(&mut self) -> Result<(), SyntaxError> {
        self.scan_string(false).map(|_| ())
    }

    /// Validates a number literal without converting it (same grammar and
    /// errors as `read_number`).
    fn skip_number(&mut self) -> Result<(), SyntaxError> {
        let bytes = self.bytes;
        let mut i = self.pos;
        let neg = bytes.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        match bytes.get(i) {
            Some(b'0') => {
                i += 1;
                if matches!(bytes.get(i), Some(b'0'..=b'9')) {
                    return Err(SyntaxError::new(i - 1, "leading zeros are not allowed"));
                }
            }
            Some(b'1'..=b'9') => i = skip_digits(bytes, i + 1),
            _ => {
                self.pos = i;
                return Err(self.unexpected(if neg {
                    "expected digit after '-'"
                } else {
                    "expected number"
                }));
            }
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
                self.pos = i;
                return Err(self.unexpected("expected digit after decimal point"));
            }
            i = skip_digits(bytes, i);
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
                self.pos = i;
                return Err(self.unexpected("expected digit in exponent"));
            }
            i = skip_digits(bytes, i);
        }
        self.pos = i;
        Ok(())
    }

    /// Moves back to an offset this reader returned from [`Reader::offset`] earlier, to read a
    /// stretch of input twice (a tagged union looks ahead for its tag, then decodes the object).
    #[inline]
    pub fn rewind(&mut self, offset: usize) {
        debug_assert!(offset <= self.bytes.len());
        self.pos = offset.min(self.bytes.len());
    }

    /// Checks that only whitespace remains after the top-level value.
    #[inline]
    pub fn finish(&mut self) -> Result<(), SyntaxError> {
        self.skip_ws();
        if self.pos < self.bytes.len() {
            Err(SyntaxError::new(
                self.pos,
                "trailing characters after JSON value",
            ))
        } else {
            Ok(())
        }
    }
}

/// An object member `,"name":` of 1 to 16 bytes as one little-endian word and the mask of its
/// bytes, for [`Reader::take_member_word`]; a longer (or empty) member has length 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemberWord {
    word: u128,
    mask: u128,
    len: usize,
}

impl MemberWord {
    pub fn new(member: &[u8]) -> MemberWord {
        if member.is_empty() || member.len() > 16 {
            return MemberWord::default();
        }
        let mut bytes = [0u8; 16];
        bytes[..member.len()].copy_from_slice(member);
        let mask = match member.len() {
            16 => u128::MAX,
            len => (1u128 << (8 * len)) - 1,
        };
        MemberWord {
            word: u128::from_le_bytes(bytes),
            mask,
            len: member.len(),
        }
    }
}

/// Whether two byte strings of the same length are equal, compared a word at a time: keys and
/// tags are short, and a call to `memcmp` costs more than comparing them.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if word(a, i) != word(b, i) {
                return false;
            }
            i += 8;
        }
        return word(a, n - 8) == word(b, n - 8);
    }
    if n >= 4 {
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// The 8 bytes at `bytes[i..]` (the caller checked they exist) as one word.
#[inline(always)]
fn word(bytes: &[u8], i: usize) -> u64 {
    let mut arr = [0u8; 8];
    arr.copy_from_slice(&bytes[i..i + 8]);
    u64::from_le_bytes(arr)
}

/// The 4 bytes at `bytes[i..]` (the caller checked they exist) as one word.
#[inline(always)]
fn half(bytes: &[u8], i: usize) -> u32 {
    let mut arr = [0u8; 4];
    arr.copy_from_slice(&bytes[i..i + 4]);
    u32::from_le_bytes(arr)
}

#[inline(always)]
fn skip_digits(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b'0'..=b'9')) {
        i += 1;
    }
    i
}

/// `&str` view of bytes the scanner has already proven to be ASCII. The check cannot fail; it
/// stays (at a measured cost of up to a third of `read_str`'s raw throughput) because `unsafe` is
/// reserved for the modules that talk to CPython.
#[inline(always)]
fn ascii_str(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// Exact powers of ten representable in `f64` (10^0 ..= 10^22).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True for bytes that end a run of plain string bytes: `"`, `\`, < 0x20,
/// and (when `HIGH`) >= 0x80.
#[inline(always)]
fn is_special<const HIGH: bool>(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20 || (HIGH && b >= 0x80)
}

/// Index of the first special byte at or after `i` (or `bytes.len()`).
/// Eight bytes at a time: the classic "has zero byte" trick flags `"` and
/// `\`, `(w - 0x20..) & !w` flags bytes below 0x20, and `w` itself flags
/// non-ASCII bytes (when `HIGH`). Borrows only propagate upwards from a
/// flagged byte, so the lowest flag is exact.
#[inline(always)]
fn find_special<const HIGH: bool>(bytes: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut arr = [0u8; 8];
        arr.copy_from_slice(chunk);
        let w = u64::from_le_bytes(arr);
        let q = w ^ (ONES * u64::from(b'"'));
        let bs = w ^ (ONES * u64::from(b'\\'));
        let mut m = (q.wrapping_sub(ONES) & !q)
            | (bs.wrapping_sub(ONES) & !bs)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        if HIGH {
            m |= w;
        }
        m &= HIGHS;
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if is_special::<HIGH>(b) {
            break;
        }
        i += 1;
    }
    i
}

/// Value of four hex digits at `bytes[i..i + 4]`, if they are hex digits.
#[inline]
fn hex4(bytes: &[u8], i: usize) -> Option<u32> {
    let s = bytes.get(i..i + 4)?;
    let mut v = 0u32;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u32::from(d);
    }
    Some(v)
}

/// The message of a string whose unescaped text could not be allocated: the decoder raises
/// it as a MemoryError.
pub const OUT_OF_MEMORY: &str = "out of memory for an unescaped string";

/// Makes room for `additional` bytes of unescaped text, fallibly (a failed `Vec` growth
/// would abort the process).
#[inline(always)]
fn scratch_room(scratch: &mut Vec<u8>, additional: usize, at: usize) -> Result<(), SyntaxError> {
    if scratch.capacity() - scratch.len() < additional {
        return scratch_grow(scratch, additional, at);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn scratch_grow(scratch: &mut Vec<u8>, additional: usize, at: usize) -> Result<(), SyntaxError> {
    scratch
        .try_reserve(additional)
        .map_err(|_| SyntaxError::new(at, OUT_OF_MEMORY))
}

/// Decodes the escape sequence whose backslash is at `bytes[i]`, appending
/// it to `out` when `decode`. Returns the index just past the sequence.
fn unescape(
    bytes: &[u8],
    i: usize,
    decode: bool,
    out: &mut Vec<u8>,
    non_ascii: &mut bool,
) -> Result<usize, SyntaxError> {
    let Some(&c) = bytes.get(i + 1) else {
        return Err(SyntaxError::new(bytes.len(), "unterminated string"));
    };
    let simple = match c {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => return unescape_u(bytes, i, decode, out, non_ascii),
        _ => return Err(SyntaxError::new(i, "invalid escape")),
    };
    if decode {
        out.push(simple);
    }
    Ok(i + 2)
}

#[inline]
fn unescape_u(
    bytes: &[u8],
    i: usize,
    decode: bool,
    out: &mut Vec<u8>,
    non_ascii: &mut bool,
) -> Result<usize, SyntaxError> {
    let Some(hi) = hex4(bytes, i + 2) else {
        return Err(bad_u_escape(bytes, i));
    };
    let (cp, end) = match hi {
        0xD800..=0xDBFF => {
            if bytes.get(i + 6) != Some(&b'\\') || bytes.get(i + 7) != Some(&b'u') {
                return Err(SyntaxError::new(i, "lone surrogate in \\u escape"));
            }
            let Some(lo) = hex4(bytes, i + 8) else {
                return Err(bad_u_escape(bytes, i + 6));
            };
            if !(0xDC00..=0xDFFF).contains(&lo) {
                return Err(SyntaxError::new(i, "lone surrogate in \\u escape"));
            }
            (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), i + 12)
        }
        0xDC00..=0xDFFF => return Err(SyntaxError::new(i, "lone surrogate in \\u escape")),
        _ => (hi, i + 6),
    };
    if cp >= 0x80 {
        *non_ascii = true;
    }
    if decode {
        let ch = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }
    Ok(end)
}

#[cold]
fn bad_u_escape(bytes: &[u8], i: usize) -> SyntaxError {
    let digits = bytes.get(i + 2..).unwrap_or(&[]);
    if digits.len() < 4 && digits.iter().all(u8::is_ascii_hexdigit) {
        SyntaxError::new(bytes.len(), "unterminated string")
    } else {
        SyntaxError::new(i, "invalid \\u escape")
    }
}

/// Reads the ASCII digits from `i` on into `mant` (wrapping: callers bound the digit count):
/// the position after the last digit, and the new `mant`.
#[inline(always)]
fn accumulate_digits(bytes: &[u8], mut i: usize, mut mant: u64) -> (usize, u64) {
    while let Some(&b) = bytes.get(i) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        mant = mant.wrapping_mul(10).wrapping_add(u64::from(digit));
        i += 1;
    }
    (i, mant)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generic recursive walker over the public API, as a decoder would use
    /// it. Returns a canonical rendering so tests can check what was read.
    fn walk(r: &mut Reader<'_>, depth: usize, out: &mut String) -> Result<(), SyntaxError> {
        match r.peek_kind()? {
            ValueKind::Object => {
                if depth >= 1024 {
                    return Err(SyntaxError::new(r.offset(), "too deep"));
                }
                r.begin_object()?;
                out.push('{');
                let mut first = true;
                while let Some(k) = r.next_key(first)? {
                    if !first {
                        out.push(',');
                    }
                    out.push_str(&format!("{:?}:", k.text()));
                    first = false;
                    walk(r, depth + 1, out)?;
                }
                out.push('}');
            }
            ValueKind::Array => {
                if depth >= 1024 {
                    return Err(SyntaxError::new(r.offset(), "too deep"));
                }
                r.begin_array()?;
                out.push('[');
                let mut first = true;
                while r.next_element(first)? {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    walk(r, depth + 1, out)?;
                }
                out.push(']');
            }
            ValueKind::String => {
                let s = r.read_str()?;
                assert_eq!(s.ascii, s.text().is_ascii());
                out.push_str(&format!("{:?}", s.text()));
            }
            ValueKind::Number => match r.read_number()? {
                Number::Int(v) => out.push_str(&v.to_string()),
                Number::BigInt(t) => out.push_str(&format!("big:{t}")),
                Number::Float { value, .. } => out.push_str(&format!("{value:?}")),
            },
            ValueKind::True => {
                r.read_true()?;
                out.push_str("true");
            }
            ValueKind::False => {
                r.read_false()?;
                out.push_str("false");
            }
            ValueKind::Null => {
                r.read_null()?;
                out.push_str("null");
            }
        }
        Ok(())
    }

    /// The one-pass reader of short literals gives what the general reader gives, value,
    /// text and end, or leaves the literal to it.
    #[test]
    fn short_numbers_read_as_any_number_reads_them() {
        let literals: &[&[u8]] = &[
            b"0",
            b"-0",
            b"7,",
            b"-7]",
            b"123456789012345678",
            b"-999999999999999999",
            b"1234567890123456789",
            b"0.5",
            b"-0.5}",
            b"5.482",
            b"456.976",
            b"0.1",
            b"12345678.123456789",
            b"9007199254740993.0",
            b"9007199254740992.0",
            b"0.0000000000000000000001",
            b"0.00000000000000000000001",
            b"1.5e3",
            b"01",
            b"-",
            b"1.",
            b"1.e5",
            b"-01.5",
            b"00",
            b"0x",
            b"-a",
        ];
        for &literal in literals {
            let mut short = Reader::new(literal);
            let mut general = Reader::new(literal);
            let expected = general.any_number();
            assert_eq!(short.read_number(), expected, "{literal:?}");
            assert_eq!(short.offset(), general.offset(), "{literal:?}");
        }
    }

    fn parse(input: &[u8]) -> Result<String, SyntaxError> {
        let mut r = Reader::new(input);
        let mut out = String::new();
        walk(&mut r, 0, &mut out)?;
        r.finish()?;
        Ok(out)
    }

    fn skip(input: &[u8], max_depth: usize) -> Result<(), SyntaxError> {
        let mut r = Reader::new(input);
        r.skip_value(max_depth)?;
        r.finish()
    }

    /// Parses with the walker and with `skip_value`; both must agree on
    /// success or on the exact error.
    fn both(input: &[u8]) -> Result<String, SyntaxError> {
        let walked = parse(input);
        let skipped = skip(input, 1024);
        match (&walked, &skipped) {
            (Ok(_), Ok(())) => {}
            (Err(a), Err(b)) if a.message == "too deep" => {
                assert_eq!(b.message, "maximum nesting depth exceeded")
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "walker vs skip on {:?}", lossy(input)),
            _ => panic!(
                "walker {walked:?} vs skip {skipped:?} on {:?}",
                lossy(input)
            ),
        }
        walked
    }

    fn lossy(b: &[u8]) -> String {
        String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned()
    }

    fn err(input: &str) -> SyntaxError {
        match both(input.as_bytes()) {
            Ok(v) => panic!("{input:?} parsed as {v}"),
            Err(e) => e,
        }
    }

    fn ok(input: &str) -> String {
        both(input.as_bytes()).unwrap_or_else(|e| panic!("{input:?}: {e}"))
    }

    fn suite_dir() -> std::path::PathBuf {
        let rel = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/conformance/JSONTestSuite/test_parsing");
        if rel.is_dir() {
            return rel;
        }
        let abs = std::path::PathBuf::from("/work/shared/conformance/JSONTestSuite/test_parsing");
        assert!(
            abs.is_dir(),
            "JSONTestSuite not found at {rel:?} or {abs:?}"
        );
        abs
    }

    #[test]
    fn json_test_suite() {
        // The test walker recurses up to 1024 levels with big debug frames.
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(json_test_suite_inner)
            .unwrap()
            .join()
            .unwrap();
    }

    fn json_test_suite_inner() {
        let mut counts = [0usize; 3];
        let mut entries: Vec<_> = std::fs::read_dir(suite_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".json") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let result = both(&data);
            match name.as_bytes()[0] {
                b'y' => {
                    assert!(result.is_ok(), "{name} rejected: {result:?}");
                    counts[0] += 1;
                }
                b'n' => {
                    assert!(result.is_err(), "{name} accepted: {result:?}");
                    counts[1] += 1;
                }
                b'i' => counts[2] += 1,
                _ => {}
            }
        }
        assert_eq!(counts, [95, 188, 35]);
    }

    #[test]
    fn structure_errors() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "unexpected end of input"),
            ("   ", 3, "unexpected end of input"),
            ("\u{feff}{}", 0, "UTF-8 BOM is not allowed"),
            ("\u{feff}", 0, "UTF-8 BOM is not allowed"),
            ("x", 0, "expected JSON value"),
            ("\u{c}1", 0, "expected JSON value"),
            ("[1 2]", 3, "expected ',' or ']' after array element"),
            ("[1,]", 3, "trailing comma in array"),
            ("[1", 2, "unexpected end of input"),
            ("[", 1, "unexpected end of input"),
            ("[,1]", 1, "expected JSON value"),
            ("{\"a\":1,}", 7, "trailing comma in object"),
            (
                "{\"a\":1 \"b\":2}",
                7,
                "expected ',' or '}' after object member",
            ),
            ("{\"a\" 1}", 5, "expected ':' after object key"),
            ("{1:1}", 1, "expected string key or '}'"),
            ("{\"a\":1,1:1}", 7, "expected string key"),
            ("{\"a\":}", 5, "expected JSON value"),
            ("{", 1, "unexpected end of input"),
            ("{\"a\"", 4, "unexpected end of input"),
            ("{\"a\":1", 6, "unexpected end of input"),
            ("1 2", 2, "trailing characters after JSON value"),
            ("{} x", 3, "trailing characters after JSON value"),
            ("tru", 0, "expected 'true'"),
            ("trUe", 0, "expected 'true'"),
            ("fals", 0, "expected 'false'"),
            ("nul", 0, "expected 'null'"),
            ("truex", 4, "trailing characters after JSON value"),
            ("[nulll]", 5, "expected ',' or ']' after array element"),
        ];
        for &(input, offset, message) in cases {
            assert_eq!(err(input), SyntaxError { offset, message }, "{input:?}");
        }
    }

    #[test]
    fn display() {
        let e = err("[1,]");
        assert_eq!(e.to_string(), "trailing comma in array at byte 3");
    }

    #[test]
    fn structures() {
        assert_eq!(
            ok(" { \"a\" : [ 1 , 2 ] , \"b\" : { } , \"c\" : [ ] } "),
            r#"{"a":[1,2],"b":{},"c":[]}"#
        );
        assert_eq!(ok("\t\r\n[true,false,null]\n"), "[true,false,null]");
        assert_eq!(ok("\"top\""), "\"top\"");
        assert_eq!(ok("-12"), "-12");
        assert_eq!(ok("[[[[]]]]"), "[[[[]]]]");
        assert_eq!(
            ok("{\"a\":{\"b\":{\"c\":[{}]}}}"),
            r#"{"a":{"b":{"c":[{}]}}}"#
        );
    }

    #[test]
    fn peek_and_typed_reads() {
        let mut r = Reader::new(b"  {\"k\": \"v\"}");
        assert_eq!(r.peek_kind(), Ok(ValueKind::Object));
        assert_eq!(r.offset(), 2);
        assert_eq!(r.read_str().unwrap_err().message, "expected string");
        assert_eq!(r.begin_array().unwrap_err().message, "expected '['");
        assert_eq!(r.read_number().unwrap_err().message, "expected number");
        r.begin_object().unwrap();
        assert_eq!(r.next_key(true).unwrap().unwrap().text(), "k");
        assert_eq!(
            r.begin_object().unwrap_err(),
            SyntaxError::new(8, "expected '{'")
        );
        assert_eq!(r.read_str().unwrap().text(), "v");
        assert_eq!(r.next_key(false), Ok(None));
        r.finish().unwrap();
        for (input, kind) in [
            ("[", ValueKind::Array),
            ("\"", ValueKind::String),
            ("-", ValueKind::Number),
            ("7", ValueKind::Number),
            ("t", ValueKind::True),
            ("f", ValueKind::False),
            ("n", ValueKind::Null),
        ] {
            assert_eq!(Reader::new(input.as_bytes()).peek_kind(), Ok(kind));
        }
    }

    fn num(input: &str) -> Result<Number<'_>, SyntaxError> {
        let mut r = Reader::new(input.as_bytes());
        let n = r.read_number()?;
        r.finish()?;
        Ok(n)
    }

    fn float(input: &str) -> f64 {
        match num(input) {
            Ok(Number::Float { value, text }) => {
                assert_eq!(text, input.as_bytes());
                value
            }
            other => panic!("{input}: {other:?}"),
        }
    }

    #[test]
    fn integers() {
        assert_eq!(num("0"), Ok(Number::Int(0)));
        assert_eq!(num("-0"), Ok(Number::Int(0)));
        assert_eq!(num("7"), Ok(Number::Int(7)));
        assert_eq!(num("-7"), Ok(Number::Int(-7)));
        assert_eq!(num("9223372036854775807"), Ok(Number::Int(i64::MAX)));
        assert_eq!(num("-9223372036854775808"), Ok(Number::Int(i64::MIN)));
        assert_eq!(
            num("9223372036854775808"),
            Ok(Number::BigInt("9223372036854775808"))
        );
        assert_eq!(
            num("-9223372036854775809"),
            Ok(Number::BigInt("-9223372036854775809"))
        );
        assert_eq!(
            num("9999999999999999999"),
            Ok(Number::BigInt("9999999999999999999"))
        );
        assert_eq!(
            num("18446744073709551616"),
            Ok(Number::BigInt("18446744073709551616"))
        );
        let huge = format!("-{}", "9".repeat(400));
        assert_eq!(num(&huge), Ok(Number::BigInt(huge.as_str())));
        assert_eq!(
            num("1000000000000000000"),
            Ok(Number::Int(1_000_000_000_000_000_000))
        );
        assert_eq!(
            num("999999999999999999"),
            Ok(Number::Int(999_999_999_999_999_999))
        );
    }

    #[test]
    fn floats() {
        assert_eq!(float("0.0").to_bits(), 0f64.to_bits());
        assert_eq!(float("-0.0").to_bits(), (-0f64).to_bits());
        assert_eq!(float("-0e5").to_bits(), (-0f64).to_bits());
        assert_eq!(float("1.5"), 1.5);
        assert_eq!(float("0.1"), 0.1);
        assert_eq!(float("1e2"), 100.0);
        assert_eq!(float("1E2"), 100.0);
        assert_eq!(float("1e+2"), 100.0);
        assert_eq!(float("1e-2"), 0.01);
        assert_eq!(float("-1.25e-3"), -0.00125);
        assert_eq!(float("1.7976931348623157e308"), f64::MAX);
        assert_eq!(float("5e-324"), 5e-324);
        assert_eq!(float("1e400"), f64::INFINITY);
        assert_eq!(float("-1e400"), f64::NEG_INFINITY);
        assert_eq!(float("1e-400"), 0.0);
        assert_eq!(float("1e99999999999999999999999"), f64::INFINITY);
        assert_eq!(
            float("123456789012345678901234567890.5"),
            1.2345678901234568e29
        );
        assert_eq!(float("0.000000000000000000000000000001"), 1e-30);
        assert_eq!(float("9007199254740993.0"), 9007199254740992.0);
        assert_eq!(float("1.000000000000000005"), 1.0);
        assert_eq!(float("2.2250738585072011e-308"), 2.225073858507201e-308);
        assert_eq!(float("0.30000000000000004"), 0.30000000000000004);
    }

    #[test]
    fn number_errors() {
        let cases: &[(&str, usize, &str)] = &[
            ("01", 0, "leading zeros are not allowed"),
            ("-01", 1, "leading zeros are not allowed"),
            ("00.5", 0, "leading zeros are not allowed"),
            ("+1", 0, "expected JSON value"),
            (".5", 0, "expected JSON value"),
            ("-", 1, "unexpected end of input"),
            ("-a", 1, "expected digit after '-'"),
            ("- 1", 1, "expected digit after '-'"),
            ("1.", 2, "unexpected end of input"),
            ("1.e5", 2, "expected digit after decimal point"),
            ("1e", 2, "unexpected end of input"),
            ("1e+", 3, "unexpected end of input"),
            ("1ex", 2, "expected digit in exponent"),
            ("1e+-1", 3, "expected digit in exponent"),
            ("NaN", 0, "expected JSON value"),
            ("-Infinity", 1, "expected digit after '-'"),
            ("Infinity", 0, "expected JSON value"),
            ("0x10", 1, "trailing characters after JSON value"),
            ("1.5.5", 3, "trailing characters after JSON value"),
            ("[1.0e]", 5, "expected digit in exponent"),
        ];
        for &(input, offset, message) in cases {
            assert_eq!(err(input), SyntaxError { offset, message }, "{input:?}");
        }
    }

    /// Deterministic xorshift generator for the randomized tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn floats_match_std_parse() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200_000 {
            let digits = 1 + (rng.next() % 20) as u32;
            let mant = rng.next() % 10u64.pow(digits.min(19));
            let frac = (rng.next() % 25) as usize;
            let exp = (rng.next() % 60) as i64 - 30;
            let mut s = mant.to_string();
            if frac > 0 {
                while s.len() <= frac {
                    s.insert(0, '0');
                }
                s.insert(s.len() - frac, '.');
            }
            match rng.next() % 3 {
                0 => s.push_str(&format!("e{exp}")),
                1 if s.contains('.') => {}
                _ => s.push_str(&format!("E+{}", exp.abs())),
            }
            if rng.next().is_multiple_of(2) {
                s.insert(0, '-');
            }
            let expected: f64 = s.parse().unwrap();
            assert_eq!(float(&s).to_bits(), expected.to_bits(), "{s}");
        }
    }

    fn string(input: &str) -> (String, bool) {
        let mut r = Reader::new(input.as_bytes());
        let s = r.read_str().unwrap_or_else(|e| panic!("{input:?}: {e}"));
        let out = (s.text().to_owned(), s.ascii);
        r.finish().unwrap();
        // skip_value must accept it too.
        skip(input.as_bytes(), 0).unwrap();
        out
    }

    #[test]
    fn strings() {
        assert_eq!(string(r#""""#), (String::new(), true));
        assert_eq!(string(r#""abc""#), ("abc".into(), true));
        assert_eq!(
            string(r#""a long ascii string over eight bytes""#).0,
            "a long ascii string over eight bytes"
        );
        assert_eq!(
            string(r#""\"\\\/\b\f\n\r\t""#),
            ("\"\\/\u{8}\u{c}\n\r\t".into(), true)
        );
        assert_eq!(string(r#""\u0041\u00e9\u00E9""#), ("Aéé".into(), false));
        assert_eq!(string(r#""\u0000""#), ("\0".into(), true));
        assert_eq!(string(r#""\ud83d\ude00""#), ("😀".into(), false));
        assert_eq!(string(r#""\uD834\uDD1E x""#), ("𝄞 x".into(), false));
        assert_eq!(
            string(r#""\uffff\uFFFE""#),
            ("\u{ffff}\u{fffe}".into(), false)
        );
        assert_eq!(
            string("\"héllo wörld, ünïcode\""),
            ("héllo wörld, ünïcode".into(), false)
        );
        assert_eq!(
            string("\"日本語のテキスト\\n改行\""),
            ("日本語のテキスト\n改行".into(), false)
        );
        assert_eq!(
            string("\"\u{7f}\u{10ffff}\""),
            ("\u{7f}\u{10ffff}".into(), false)
        );
        assert_eq!(string(r#""ab\ncd\tef""#), ("ab\ncd\tef".into(), true));
        // Escapes at every position relative to an 8-byte chunk.
        for n in 0..20 {
            let body = "x".repeat(n);
            let input = format!("\"{body}\\n{body}\"");
            assert_eq!(string(&input).0, format!("{body}\n{body}"));
            let input = format!("\"{body}é{body}\"");
            assert_eq!(string(&input), (format!("{body}é{body}"), false));
        }
    }

    #[test]
    fn borrowed_vs_scratch() {
        let input = br#"["plain", "esc\naped", "plain2"]"#;
        let mut r = Reader::new(input);
        r.begin_array().unwrap();
        assert!(r.next_element(true).unwrap());
        let s = r.read_str().unwrap();
        let range = input.as_ptr_range();
        assert!(
            range.contains(&s.bytes.as_ptr()),
            "unescaped string is borrowed"
        );
        assert!(r.next_element(false).unwrap());
        let s = r.read_str().unwrap();
        assert!(
            !range.contains(&s.bytes.as_ptr()),
            "escaped string is decoded"
        );
        assert_eq!(s.text(), "esc\naped");
        assert!(r.next_element(false).unwrap());
        assert_eq!(r.read_str().unwrap().text(), "plain2");
        assert!(!r.next_element(false).unwrap());
        r.finish().unwrap();
    }

    #[test]
    fn keys_with_escapes() {
        assert_eq!(
            ok(r#"{"a\nb":1,"\u00e9":2,"":3}"#),
            "{\"a\\nb\":1,\"é\":2,\"\":3}"
        );
    }

    fn str_err(input: &[u8]) -> SyntaxError {
        let mut r = Reader::new(input);
        let e = r.read_str().map(|s| s.text().to_owned()).unwrap_err();
        let mut r = Reader::new(input);
        assert_eq!(r.skip_value(0), Err(e), "skip_value on {input:?}");
        e
    }

    #[test]
    fn string_errors() {
        let cases: &[(&[u8], usize, &str)] = &[
            (b"\"abc", 4, "unterminated string"),
            (b"\"", 1, "unterminated string"),
            (b"\"abc\\", 5, "unterminated string"),
            (b"\"a\tb\"", 2, "unescaped control character in string"),
            (b"\"a\nb\"", 2, "unescaped control character in string"),
            (b"\"a\x00b\"", 2, "unescaped control character in string"),
            (
                b"\"0123456789\x1f\"",
                11,
                "unescaped control character in string",
            ),
            (
                b"\"\xc3\xa9\x01\"",
                3,
                "unescaped control character in string",
            ),
            (b"\"\\x\"", 1, "invalid escape"),
            (b"\"\\a\"", 1, "invalid escape"),
            (b"\"\\'\"", 1, "invalid escape"),
            (b"\"\\\x00\"", 1, "invalid escape"),
            (b"\"ab\\U0041\"", 3, "invalid escape"),
            (b"\"\\u12\"", 1, "invalid \\u escape"),
            (b"\"\\u12G4\"", 1, "invalid \\u escape"),
            (b"\"\\u12", 5, "unterminated string"),
            (b"\"\\u", 3, "unterminated string"),
            (b"\"\\ud800\"", 1, "lone surrogate in \\u escape"),
            (b"\"\\udc00\"", 1, "lone surrogate in \\u escape"),
            (b"\"\\ud800\\n\"", 1, "lone surrogate in \\u escape"),
            (b"\"\\ud800\\u0041\"", 1, "lone surrogate in \\u escape"),
            (b"\"\\ud800\\ud800\"", 1, "lone surrogate in \\u escape"),
            (b"\"\\udc00\\ud800\"", 1, "lone surrogate in \\u escape"),
            (b"\"\\ud800\\u12\"", 7, "invalid \\u escape"),
            (b"\"\\ud800\\u", 9, "unterminated string"),
            (b"\"\xff\"", 1, "invalid UTF-8 in string"),
            (b"\"ab\x80\"", 3, "invalid UTF-8 in string"),
            (b"\"\xc3\"", 1, "invalid UTF-8 in string"),
            (b"\"\xc0\xaf\"", 1, "invalid UTF-8 in string"),
            (b"\"\xe0\x80\xaf\"", 1, "invalid UTF-8 in string"),
            (b"\"\xed\xa0\x80\"", 1, "invalid UTF-8 in string"),
            (b"\"\xf4\x90\x80\x80\"", 1, "invalid UTF-8 in string"),
            (b"\"\xf8\x88\x80\x80\x80\"", 1, "invalid UTF-8 in string"),
            (b"\"ok \\n then \xe2\x82\"", 12, "invalid UTF-8 in string"),
            (b"\"\xe2\x82\\u00ac\"", 1, "invalid UTF-8 in string"),
        ];
        for &(input, offset, message) in cases {
            assert_eq!(str_err(input), SyntaxError { offset, message }, "{input:?}");
        }
    }

    #[test]
    fn skip_value_depth() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(skip(b"1", 0), Ok(()));
        assert_eq!(skip(b"[]", 1), Ok(()));
        assert_eq!(
            skip(b"[]", 0),
            Err(SyntaxError::new(0, "maximum nesting depth exceeded"))
        );
        for n in [1usize, 2, 127, 128, 129, 130, 300, 5000] {
            let s = nested(n);
            assert_eq!(skip(s.as_bytes(), n), Ok(()), "{n}");
            assert_eq!(
                skip(s.as_bytes(), n - 1),
                Err(SyntaxError::new(n - 1, "maximum nesting depth exceeded"))
            );
        }
        // Mixed containers beyond the inline 128 levels, closed in order.
        let open: String = (0..400)
            .map(|i| if i % 3 == 0 { "{\"k\":" } else { "[" })
            .collect();
        let close: String = (0..400)
            .rev()
            .map(|i| if i % 3 == 0 { "}" } else { "]" })
            .collect();
        let doc = format!("{open}1{close}");
        assert_eq!(skip(doc.as_bytes(), 400), Ok(()));
        let bad = format!("{open}1{}", &close[1..]);
        assert!(skip(bad.as_bytes(), 400).is_err());
        // Mismatched closer deep inside.
        let doc = format!("{}{}", "[".repeat(200), "}".repeat(200));
        assert_eq!(
            skip(doc.as_bytes(), 1000),
            Err(SyntaxError::new(200, "expected JSON value"))
        );
        let doc = format!("{}1{}", "[".repeat(200), "}".repeat(200));
        assert_eq!(
            skip(doc.as_bytes(), 1000),
            Err(SyntaxError::new(
                201,
                "expected ',' or ']' after array element"
            ))
        );
        // Huge unclosed nesting fails fast without recursion.
        let deep = "[".repeat(1_000_000);
        assert_eq!(
            skip(deep.as_bytes(), usize::MAX),
            Err(SyntaxError::new(1_000_000, "unexpected end of input"))
        );
    }

    #[test]
    fn skip_value_in_stream() {
        let input = br#"{"skip": {"a": [1, -2.5e3, "x\u00e9", true, false, null, {}]}, "keep": 7}"#;
        let mut r = Reader::new(input);
        r.begin_object().unwrap();
        assert_eq!(r.next_key(true).unwrap().unwrap().text(), "skip");
        let start = r.offset();
        r.skip_value(8).unwrap();
        assert_eq!(
            &input[start..r.offset()],
            br#" {"a": [1, -2.5e3, "x\u00e9", true, false, null, {}]}"#
        );
        assert_eq!(r.next_key(false).unwrap().unwrap().text(), "keep");
        assert_eq!(r.read_number(), Ok(Number::Int(7)));
        assert_eq!(r.next_key(false), Ok(None));
        r.finish().unwrap();
    }

    #[test]
    fn take_key_consumes_only_an_exact_match() {
        let mut r = Reader::new(br#"{"a":1, "bb" :2,"c":3}"#);
        r.begin_object().unwrap();
        assert!(!r.take_key(true, br#""b":"#));
        assert!(r.take_key(true, br#""a":"#));
        assert_eq!(r.read_number(), Ok(Number::Int(1)));
        // Whitespace before the colon: no exact match, and nothing consumed.
        assert!(!r.take_key(false, br#""bb":"#));
        assert_eq!(r.next_key(false).unwrap().unwrap().text(), "bb");
        assert_eq!(r.read_number(), Ok(Number::Int(2)));
        assert!(!r.take_key(false, br#""c"#.as_slice().repeat(2).as_slice()));
        assert!(r.take_key(false, br#""c":"#));
        assert_eq!(r.read_number(), Ok(Number::Int(3)));
        assert!(!r.take_key(false, br#""d":"#));
        assert_eq!(r.next_key(false), Ok(None));
        r.finish().unwrap();
    }

    #[test]
    fn find_special_matches_naive() {
        // The unchecked ASCII conversion relies on this being exact.
        let mut rng = Rng(777);
        let alphabet = [
            b'a', b'"', b'\\', 0x1f, 0x20, 0x7f, 0x80, 0xff, 0x00, b'!', 0x5b, 0x5d,
        ];
        for _ in 0..20_000 {
            let len = (rng.next() % 40) as usize;
            let dense = rng.next().is_multiple_of(4);
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let r = rng.next();
                    if dense || r.is_multiple_of(8) {
                        alphabet[(r >> 8) as usize % alphabet.len()]
                    } else if r % 8 == 1 {
                        (r >> 16) as u8
                    } else {
                        b'x'
                    }
                })
                .collect();
            for start in 0..=len {
                let naive_hi = (start..len)
                    .find(|&j| is_special::<true>(bytes[j]))
                    .unwrap_or(len);
                let naive_lo = (start..len)
                    .find(|&j| is_special::<false>(bytes[j]))
                    .unwrap_or(len);
                assert_eq!(
                    find_special::<true>(&bytes, start),
                    naive_hi,
                    "{bytes:?} {start}"
                );
                assert_eq!(
                    find_special::<false>(&bytes, start),
                    naive_lo,
                    "{bytes:?} {start}"
                );
            }
        }
    }

    #[test]
    fn no_panic_on_truncations() {
        let doc = br#"{"a": [1, 2.5e-3, -0, "s\u00e9\ud83d\ude00\n", true, false, null], "b": {"c": "d\u00"}}"#;
        for end in 0..=doc.len() {
            let _ = both(&doc[..end]);
        }
        let mut rng = Rng(12345);
        for _ in 0..20_000 {
            let mut d = doc.to_vec();
            for _ in 0..3 {
                let i = (rng.next() as usize) % d.len();
                d[i] = rng.next() as u8;
            }
            let _ = both(&d);
        }
    }
}

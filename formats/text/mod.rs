//! Text forms shared by the JSON and MessagePack codecs.
//!
//! Pure Rust, no PyO3: every parser reads a `&[u8]` and every writer appends
//! to a caller-owned `Vec<u8>`, allocating nothing else. The wire forms match
//! what msgspec writes byte for byte, and the parsers accept everything
//! msgspec accepts plus Python's `isoformat()` output.
//!
//! - [`temporal`]: RFC 3339 datetimes, dates and times; ISO 8601 durations.
//! - [`uuid`]: canonical hyphenated UUIDs.
//! - [`base64`]: standard-alphabet, padded base64 (RFC 4648 section 4).
//! - [`decimal`]: a decimal number's sign, digits and exponent, as `Decimal.as_tuple()` has
//!   them.
//! - [`lax`]: what lax mode reads from a string (numbers, `null`, `true`, `false`) and its
//!   number-to-datetime and number-to-duration conversions.
//!
//! All failures are a [`temporal::TextError`], whose `message()` is a short
//! static reason.

pub mod base64;
pub mod decimal;
pub mod lax;
pub mod temporal;
pub mod uuid;

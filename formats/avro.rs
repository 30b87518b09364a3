//! Avro: the binary primitives ([`wire`]: varints, zigzag, lengths, floats, calendar
//! arithmetic), object container files ([`container`]: header, blocks, codecs), where a
//! container's header and blocks end in bytes that arrive in pieces ([`frame`]) and schemas
//! ([`schema`]: parsing, validation, canonical form, fingerprints).

pub mod container;
pub mod frame;
pub mod schema;
#[cfg(test)]
mod schema_oracle;
pub mod wire;

use std::fmt;

/// Why Avro bytes could not be read. The extension raises each kind as its Python exception,
/// with the message unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Malformed input: `polycodec.DecodeError` (code `avro_invalid`).
    Decode(String),
    /// Input that is not what polycodec reads, rather than broken Avro (no container file, a
    /// compression codec it does not read): `polycodec.DecodeError` (code `decode_error`).
    Refused(String),
    /// A buffer for inflated data could not be allocated: `MemoryError`.
    OutOfMemory(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn decode(message: impl Into<String>) -> Self {
        Error::Decode(message.into())
    }

    pub fn refused(message: impl Into<String>) -> Self {
        Error::Refused(message.into())
    }

    pub fn message(&self) -> &str {
        match self {
            Error::Decode(message) | Error::Refused(message) | Error::OutOfMemory(message) => {
                message
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

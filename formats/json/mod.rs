//! JSON (RFC 8259): compact UTF-8 output, strict parsing.

pub mod decode;
pub mod encode;
pub mod read;
pub mod write;

//! JSON (RFC 8259): the strict pull reader ([`read`]) and the compact writer ([`write`]).

pub mod read;
pub mod write;

//! MessagePack: the one-head-at-a-time reader ([`read`]), the writer ([`write`]), the
//! timestamp extension's arithmetic ([`epoch`]), and where a value ends in bytes that arrive in
//! pieces ([`frame`]). `benches/msgpack_wire.rs` measures the reader
//! and writer against `rmp` and `rmp-serde`.

pub mod epoch;
pub mod frame;
pub mod read;
pub mod write;

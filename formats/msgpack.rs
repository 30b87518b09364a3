//! MessagePack: the one-head-at-a-time reader ([`read`]), the writer ([`write`]), and the
//! timestamp extension's arithmetic ([`epoch`]). `benches/msgpack_wire.rs` measures the reader
//! and writer against `rmp` and `rmp-serde`.

pub mod epoch;
pub mod read;
pub mod write;

//! Framing: where a value (or an Avro container's header or block) ends in bytes that arrive in
//! pieces, found without decoding it, so that a stream decoder decodes each unit once it is
//! complete. Each format's framer lives beside its reader: [`crate::msgpack::frame`],
//! [`crate::pickle::frame`], [`crate::avro::frame`]. A framer's state is relative to the start
//! of the current unit, and it is resumable: given the same bytes with more appended, it goes
//! on from where it stopped and answers what one call with all of them answers.

/// Bytes that cannot be split into values: the stream cannot go on past them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// Where, from the start of the unit.
    pub offset: usize,
    pub fault: Fault,
    pub message: String,
}

/// What is wrong with bytes a framer refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Bytes of the format that break its rules (a reserved byte, an unknown opcode).
    Malformed,
    /// Bytes that are not the format at all (a file without an Avro container's magic).
    NotTheFormat,
}

pub type Result<T> = std::result::Result<T, Malformed>;

/// Refuses the bytes at `offset`.
#[cold]
pub fn malformed<T>(offset: usize, message: impl Into<String>) -> Result<T> {
    Err(Malformed {
        offset,
        fault: Fault::Malformed,
        message: message.into(),
    })
}

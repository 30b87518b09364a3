//! Pickle: the opcodes ([`ops`]) and the inert pickle machine ([`vm`]), which executes a pickle
//! over an arena of plain values without importing or calling anything it names; and where a
//! pickle ends in bytes that arrive in pieces ([`frame`]).

pub mod frame;
pub mod ops;
pub mod vm;

//! Pickle: the opcodes ([`ops`]) and the inert pickle machine ([`vm`]), which executes a pickle
//! over an arena of plain values without importing or calling anything it names.

pub mod ops;
pub mod vm;

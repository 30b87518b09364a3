//! One folder per wire format. Each format reads and writes its own bytes and walks the shared
//! plan; the byte-level parts (readers, writers) have no Python in them.

pub mod json;

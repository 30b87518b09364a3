//! Avro object container files: the header (magic, metadata with the schema and compression, sync
//! marker) and blocks of records, each compressed with the file's compression.

use super::{Error, Result};

use super::wire::{write_bytes, write_long, Input};

pub const MAGIC: &[u8; 4] = b"Obj\x01";

/// Records are flushed into a new block once the block's uncompressed data reaches this size.
pub const BLOCK_BYTES: usize = 64 * 1024;

/// Deflate cannot expand data more than about 1032 times, so a block whose compressed size is
/// n inflates to at most this many times n (plus slack for tiny blocks).
const MAX_INFLATE_RATIO: usize = 1040;

/// The default most a block may inflate to, whatever its ratio (the compression option
/// `max_block_size`): writers flush blocks long before (Java every 64 KiB by default), and a
/// hostile file could otherwise ask for ~1000x its size.
pub const DEFAULT_MAX_BLOCK_BYTES: usize = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Null,
    Deflate,
    /// Raw snappy data followed by the big-endian CRC-32 of the uncompressed bytes.
    Snappy,
    /// One Zstandard frame per block.
    Zstandard,
}

impl Compression {
    pub fn from_name(name: &[u8]) -> Option<Compression> {
        match name {
            b"null" => Some(Compression::Null),
            b"deflate" => Some(Compression::Deflate),
            b"snappy" => Some(Compression::Snappy),
            b"zstandard" => Some(Compression::Zstandard),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Null => "null",
            Compression::Deflate => "deflate",
            Compression::Snappy => "snappy",
            Compression::Zstandard => "zstandard",
        }
    }
}

/// Writes a header: the schema, the compression and the user's `metadata` entries (whose keys the
/// caller has checked are not the reserved `avro.` ones), then the sync marker.
pub fn write_header(
    out: &mut Vec<u8>,
    schema_json: &[u8],
    compression: Compression,
    metadata: &[(&[u8], &[u8])],
    sync: &[u8; 16],
) {
    out.extend_from_slice(MAGIC);
    write_long(out, 2 + metadata.len() as i64);
    write_bytes(out, b"avro.schema");
    write_bytes(out, schema_json);
    write_bytes(out, b"avro.codec");
    write_bytes(out, compression.name().as_bytes());
    for (key, value) in metadata {
        write_bytes(out, key);
        write_bytes(out, value);
    }
    out.push(0);
    out.extend_from_slice(sync);
}

/// Appends one block: record count, size, the (compressed) data, the sync marker.
pub fn write_block(
    out: &mut Vec<u8>,
    count: usize,
    data: &[u8],
    compression: Compression,
    sync: &[u8; 16],
) {
    write_long(out, count as i64);
    match compression {
        Compression::Null => write_bytes(out, data),
        Compression::Deflate => {
            let packed = miniz_oxide::deflate::compress_to_vec(data, 6);
            write_bytes(out, &packed);
        }
        Compression::Snappy => {
            let mut packed = snap::raw::Encoder::new()
                .compress_vec(data)
                .expect("snappy compresses any input below 4 GiB");
            packed.extend_from_slice(&crc32(data).to_be_bytes());
            write_bytes(out, &packed);
        }
        Compression::Zstandard => {
            let packed = ruzstd::encoding::compress_to_vec(
                data,
                ruzstd::encoding::CompressionLevel::Fastest,
            );
            write_bytes(out, &packed);
        }
    }
    out.extend_from_slice(sync);
}

pub struct Header<'a> {
    pub schema: &'a [u8],
    pub compression: Compression,
    /// The entries other than `avro.schema` and `avro.codec`, in the file's order.
    pub metadata: Vec<(&'a [u8], &'a [u8])>,
    pub sync: [u8; 16],
}

pub fn read_header<'a>(input: &mut Input<'a>) -> Result<Header<'a>> {
    if input.data.len() < 4 || &input.data[..4] != MAGIC {
        return Err(Error::refused(
            "not an Avro object container file (it must start with Obj\\x01)",
        ));
    }
    input.pos = 4;
    let mut schema = None;
    let mut compression = Compression::Null;
    let mut metadata = Vec::new();
    loop {
        let count = input.long()?;
        if count == 0 {
            break;
        }
        let count = if count < 0 {
            input.length("metadata block size")?;
            count.unsigned_abs()
        } else {
            count as u64
        };
        // Each entry takes at least two bytes (two empty lengths).
        if count > (input.remaining() / 2) as u64 {
            return Err(Error::decode(
                "malformed Avro: metadata entry count exceeds the input",
            ));
        }
        for _ in 0..count {
            let key = input.bytes()?;
            let value = input.bytes()?;
            match key {
                b"avro.schema" => schema = Some(value),
                b"avro.codec" => {
                    compression = Compression::from_name(value).ok_or_else(|| {
                        Error::refused(format!(
                            "unsupported Avro codec {} (polycodec reads null, deflate, snappy \
                             and zstandard)",
                            crate::quote::quote_bytes(value)
                        ))
                    })?
                }
                _ => metadata.push((key, value)),
            }
        }
    }
    let schema = schema.ok_or_else(|| Error::decode("Avro container header has no avro.schema"))?;
    let mut sync = [0u8; 16];
    sync.copy_from_slice(input.fixed(16)?);
    Ok(Header {
        schema,
        compression,
        metadata,
        sync,
    })
}

/// Reads the next block (`None` at the end of the input): its record count and its data,
/// decompressed to at most `max_block` bytes, after checking its sync marker.
pub fn read_block<'a>(
    input: &mut Input<'a>,
    header: &Header<'_>,
    max_block: usize,
) -> Result<Option<(usize, std::borrow::Cow<'a, [u8]>)>> {
    if input.remaining() == 0 {
        return Ok(None);
    }
    let start = input.pos;
    let count = input.length("block count")?;
    let data = input.bytes()?;
    let marker = input.fixed(16)?;
    if marker != header.sync {
        return Err(Error::decode(format!(
            "malformed Avro: the sync marker after the block at byte {start} does not match \
             the header's"
        )));
    }
    let data = match header.compression {
        Compression::Null => std::borrow::Cow::Borrowed(data),
        Compression::Deflate => {
            let limit = inflate_limit(data, max_block);
            std::borrow::Cow::Owned(inflate(data, limit, start)?)
        }
        Compression::Snappy => std::borrow::Cow::Owned(unsnappy(data, start, max_block)?),
        Compression::Zstandard => std::borrow::Cow::Owned(unzstd(data, start, max_block)?),
    };
    Ok(Some((count, data)))
}

/// Where a decompression limit comes from, for the message that refuses a block.
const LIMITS: &str = " (max_block_size; max_decompressed_size in one decode_many or feed call)";

/// The most `data` may decompress to: deflate's maximum ratio, held to `max_block`.
fn inflate_limit(data: &[u8], max_block: usize) -> usize {
    data.len()
        .saturating_mul(MAX_INFLATE_RATIO)
        .max(4096)
        .min(max_block)
}

/// The MemoryError for an output buffer that could not be allocated (Rust's own allocation
/// failure would abort the process).
fn out_of_memory(bytes: usize) -> Error {
    Error::OutOfMemory(format!(
        "cannot allocate {bytes} bytes for an inflated Avro block"
    ))
}

/// Inflates a raw deflate block into a buffer grown fallibly, refusing output past `limit`.
fn inflate(data: &[u8], limit: usize, start: usize) -> Result<Vec<u8>> {
    use miniz_oxide::inflate::stream::{inflate, InflateState};
    use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};
    let fail = |why: String| {
        Error::decode(format!(
            "malformed Avro: block at byte {start} does not inflate: {why}"
        ))
    };
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut plain: Vec<u8> = Vec::new();
    let mut input = data;
    loop {
        let step = inflate(&mut state, input, &mut chunk, MZFlush::None);
        input = &input[step.bytes_consumed..];
        if plain.len() + step.bytes_written > limit {
            return Err(fail(format!(
                "it inflates to more than {limit} bytes{LIMITS}"
            )));
        }
        plain
            .try_reserve(step.bytes_written)
            .map_err(|_| out_of_memory(plain.len() + step.bytes_written))?;
        plain.extend_from_slice(&chunk[..step.bytes_written]);
        match step.status {
            Ok(MZStatus::StreamEnd) => return Ok(plain),
            Ok(_) if step.bytes_consumed == 0 && step.bytes_written == 0 => {
                return Err(fail("the deflate stream is truncated".to_owned()))
            }
            Ok(_) => {}
            // The error's kind only: nothing of the output goes into the message.
            Err(MZError::Buf) => return Err(fail("the deflate stream is truncated".to_owned())),
            Err(MZError::Data) => return Err(fail("the deflate data is corrupt".to_owned())),
            Err(_) => return Err(fail("the deflate stream is corrupt".to_owned())),
        }
    }
}

fn unsnappy(data: &[u8], start: usize, max_block: usize) -> Result<Vec<u8>> {
    let corrupt = |what: &str| {
        Error::decode(format!(
            "malformed Avro: snappy block at byte {start} {what}"
        ))
    };
    if data.len() < 4 {
        return Err(corrupt("has no CRC-32"));
    }
    let (packed, checksum) = data.split_at(data.len() - 4);
    let size = snap::raw::decompress_len(packed).map_err(|_| corrupt("is corrupt"))?;
    // The snappy header states the inflated size: checked against deflate's bounds before
    // anything is allocated.
    let limit = inflate_limit(packed, max_block);
    if size > limit {
        return Err(corrupt(&format!(
            "claims to inflate to {size} bytes, past the limit of {limit}{LIMITS}"
        )));
    }
    let mut plain = Vec::new();
    plain
        .try_reserve_exact(size)
        .map_err(|_| out_of_memory(size))?;
    plain.resize(size, 0);
    let written = snap::raw::Decoder::new()
        .decompress(packed, &mut plain)
        .map_err(|_| corrupt("is corrupt"))?;
    plain.truncate(written);
    let expected = u32::from_be_bytes([checksum[0], checksum[1], checksum[2], checksum[3]]);
    if crc32(&plain) != expected {
        return Err(corrupt("fails its CRC-32 check"));
    }
    Ok(plain)
}

fn unzstd(data: &[u8], start: usize, max_block: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let corrupt = |what: &str| {
        Error::decode(format!(
            "malformed Avro: zstandard block at byte {start} {what}"
        ))
    };
    let limit = inflate_limit(data, max_block);
    // The decoder reserves the frame's declared window up front, so the declaration is checked
    // first: a single-segment frame's window is its content size, held to the block limit;
    // other frames get the 8 MiB that RFC 8878 asks every decoder to support.
    match zstd_window_size(data) {
        Some((window, true)) if window <= limit as u64 => {}
        Some((window, false)) if window <= MAX_ZSTD_WINDOW => {}
        Some((window, _)) => {
            return Err(corrupt(&format!(
                "declares a window past the limit ({window} bytes)"
            )))
        }
        None => return Err(corrupt("is corrupt")),
    }
    let mut source = data;
    let decoder =
        ruzstd::decoding::StreamingDecoder::new(&mut source).map_err(|_| corrupt("is corrupt"))?;
    let mut plain = Vec::new();
    decoder
        .take(limit as u64 + 1)
        .read_to_end(&mut plain)
        .map_err(|err| match err.kind() {
            // read_to_end grows the buffer fallibly and reports a failure as this kind.
            std::io::ErrorKind::OutOfMemory => out_of_memory(plain.len()),
            _ => corrupt("is corrupt"),
        })?;
    if plain.len() > limit {
        return Err(corrupt(&format!(
            "inflates to more than {limit} bytes{LIMITS}"
        )));
    }
    Ok(plain)
}

const MAX_ZSTD_WINDOW: u64 = 8 << 20;

/// The window size a Zstandard frame header declares (RFC 8878, section 3.1.1.1) and whether
/// the frame is a single segment (its window is then its content size), or `None` when the
/// header is not a frame header.
fn zstd_window_size(data: &[u8]) -> Option<(u64, bool)> {
    if data.len() < 5 || data[..4] != [0x28, 0xB5, 0x2F, 0xFD] {
        return None;
    }
    let descriptor = data[4];
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let window = *data.get(5)?;
        let log = 10 + u64::from(window >> 3);
        let base = 1u64 << log;
        return Some((base + (base / 8) * u64::from(window & 7), false));
    }
    // Single segment: the window is the frame content size, after the dictionary id.
    let dict_bytes = [0usize, 1, 2, 4][usize::from(descriptor & 3)];
    let size_bytes = [1usize, 2, 4, 8][usize::from(descriptor >> 6)];
    let start = 5 + dict_bytes;
    let field = data.get(start..start + size_bytes)?;
    let mut size = 0u64;
    for (i, byte) in field.iter().enumerate() {
        size |= u64::from(*byte) << (8 * i);
    }
    Some((if size_bytes == 2 { size + 256 } else { size }, true))
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it), which Avro appends to snappy blocks.
pub fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [0u32; 256];
        for (i, slot) in table.iter_mut().enumerate() {
            let mut crc = i as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
            *slot = crc;
        }
        table
    });
    let mut crc = !0u32;
    for &byte in data {
        crc = (crc >> 8) ^ table[((crc ^ u32::from(byte)) & 0xff) as usize];
    }
    !crc
}

#[cfg(test)]
mod tests {
    #[test]
    fn zstd_window_sizes() {
        let frame = ruzstd::encoding::compress_to_vec(
            &b"hello hello hello"[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let window = super::zstd_window_size(&frame).expect("a frame header");
        assert!((17..=super::MAX_ZSTD_WINDOW).contains(&window.0));
        // Window descriptor 0xF8: 2^41 bytes.
        assert_eq!(
            super::zstd_window_size(&[0x28, 0xB5, 0x2F, 0xFD, 0x00, 0xF8]),
            Some((1 << 41, false))
        );
        assert_eq!(super::zstd_window_size(b"nope!"), None);
    }

    #[test]
    fn user_metadata_reads_back_after_the_reserved_entries() {
        let entries: &[(&[u8], &[u8])] = &[(b"origin", b"web-1"), (b"empty", b"")];
        let mut file = Vec::new();
        super::write_header(
            &mut file,
            b"\"long\"",
            super::Compression::Deflate,
            entries,
            &[9; 16],
        );
        let mut input = super::Input::new(&file);
        let header = super::read_header(&mut input).expect("our header reads back");
        assert_eq!(header.schema, b"\"long\"");
        assert_eq!(header.compression, super::Compression::Deflate);
        assert_eq!(header.metadata, entries);
        assert_eq!(header.sync, [9; 16]);
        assert_eq!(input.pos, file.len());
    }

    #[test]
    fn crc32_matches_the_check_value() {
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
    }
}

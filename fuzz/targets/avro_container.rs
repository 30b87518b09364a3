//! Avro object container files on any bytes: the header and every block are read (and
//! decompressed) without a panic, within the default block bound; and the input's tail, written as a
//! block with each compression, reads back as itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polycodec_formats::avro::container::{
    read_block, read_header, write_block, write_header, Compression, DEFAULT_MAX_BLOCK_BYTES,
};
use polycodec_formats::avro::wire::Input;

const COMPRESSIONS: [Compression; 4] = [
    Compression::Null,
    Compression::Deflate,
    Compression::Snappy,
    Compression::Zstandard,
];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    if let Ok(header) = read_header(&mut input) {
        assert!(input.pos <= data.len());
        while let Ok(Some((_, block))) = read_block(&mut input, &header, DEFAULT_MAX_BLOCK_BYTES) {
            assert!(block.len() <= DEFAULT_MAX_BLOCK_BYTES);
            assert!(input.pos <= data.len());
        }
    }
    // Round trip: the first byte picks the compression, the rest is the block's data.
    let Some((&pick, plain)) = data.split_first() else {
        return;
    };
    let compression = COMPRESSIONS[usize::from(pick % 4)];
    let sync = [pick; 16];
    let mut file = Vec::new();
    // The data's first bytes are a user metadata entry too, which reads back.
    let entry: &[(&[u8], &[u8])] = &[(b"user.key", &plain[..plain.len().min(8)])];
    write_header(&mut file, b"\"bytes\"", compression, entry, &sync);
    write_block(&mut file, 1, plain, compression, &sync);
    let mut input = Input::new(&file);
    let header = read_header(&mut input).expect("our header reads back");
    assert_eq!(header.compression, compression);
    assert_eq!(header.schema, b"\"bytes\"");
    assert_eq!(header.metadata, entry);
    let (count, block) = read_block(&mut input, &header, DEFAULT_MAX_BLOCK_BYTES)
        .unwrap_or_else(|err| panic!("{compression:?} block does not read back: {err}"))
        .expect("one block");
    assert_eq!(count, 1);
    assert_eq!(&*block, plain, "{compression:?} block changed");
    assert!(matches!(
        read_block(&mut input, &header, DEFAULT_MAX_BLOCK_BYTES),
        Ok(None)
    ));
});

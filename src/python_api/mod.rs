//! What Python sees of the extension: the `Codec` class, its stream decoder and file iterator,
//! and the functions the `polycodec` package calls to build codecs.

pub mod codec;
pub mod codec_object;
pub mod stream;

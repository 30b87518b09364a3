//! polycodec's extension module: one type plan per Python type, driving a separate encoder and
//! decoder for each wire format (`codecs/`) over the byte layer's readers and writers (the
//! `polycodec-formats` crate in `formats/`, which has no Python in it).

mod codecs;
mod depth;
mod errors;
mod plan;
mod py;
mod python_api;
mod raw;
mod shape;
mod values;

#[cfg(test)]
mod oracles;

use pyo3::prelude::*;

// The CPython layouts in `py::cpython` are those of the interpreters with the GIL; a
// free-threaded build lays out objects differently and has not been tested.
#[cfg(Py_GIL_DISABLED)]
compile_error!(
    "polycodec does not support free-threaded CPython builds yet (3.13t, 3.14t): \
     build it with an interpreter that has the GIL"
);

// Not under AddressSanitizer (`scripts/asan`): its arenas would hide Rust's heap from it.
#[cfg(not(polycodec_asan))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _polycodec(module: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::reserve_spare();
    py::cpython::check_layouts(module.py())?;
    // The version of Cargo.toml's [workspace.package], the one place it is written (maturin
    // gives the same to the wheel's metadata); polycodec.__version__ re-exports it.
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_function(wrap_pyfunction!(py::cpython::_layouts, module)?)?;
    module.add_class::<python_api::codec_object::Codec>()?;
    module.add_class::<python_api::codec_object::Compiled>()?;
    module.add_class::<raw::Raw>()?;
    py::entry::install::<python_api::codec_object::Codec>(
        &module.py().get_type::<python_api::codec_object::Codec>(),
    )?;
    module.add_class::<python_api::stream::StreamDecoder>()?;
    module.add_class::<python_api::stream::FileIter>()?;
    module.add_function(wrap_pyfunction!(python_api::codec::rebuild_codec, module)?)?;
    module.add_function(wrap_pyfunction!(
        python_api::codec::encode_json_spec,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(shape::_options_changed, module)?)?;
    codecs::register(module)?;
    module.add_function(wrap_pyfunction!(py::floor::_floor_create, module)?)?;
    module.add_function(wrap_pyfunction!(codecs::avro::schema::_avro_parse, module)?)?;
    module.add_function(wrap_pyfunction!(
        codecs::avro::schema::_avro_fingerprint,
        module
    )?)?;
    module.add_class::<codecs::avro::schema::ParsedSchema>()?;
    Ok(())
}

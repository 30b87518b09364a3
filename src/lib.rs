//! polycodec's extension module: one type plan per Python type, driving a separate encoder and
//! decoder for each wire format.

#[path = "../formats/mod.rs"]
mod formats;

mod api;
mod errors;
mod plan;
mod py;
mod room;
mod shape;
mod stream;
mod text;
mod values;

#[cfg(test)]
mod oracles;

use pyo3::prelude::*;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _polycodec(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<api::Codec>()?;
    module.add_class::<stream::StreamDecoder>()?;
    module.add_class::<stream::FileIter>()?;
    module.add_function(wrap_pyfunction!(api::rebuild_codec, module)?)?;
    module.add_function(wrap_pyfunction!(api::encode_json_spec, module)?)?;
    formats::register(module)?;
    module.add_function(wrap_pyfunction!(py::floor::_floor_create, module)?)?;
    module.add_function(wrap_pyfunction!(
        formats::avro::schema::_avro_parse,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        formats::avro::schema::_avro_fingerprint,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        formats::avro::schema::_avro_compatible,
        module
    )?)?;
    Ok(())
}

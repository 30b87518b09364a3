//! Avro: not built yet (issue 4).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::{OpenArgs, WireFormat};

pub fn open(_args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    Err(PyValueError::new_err(
        "format \"avro\" is not implemented in this build yet",
    ))
}

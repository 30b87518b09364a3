//! What polycodec reads of CPython's own object layouts, declared once per interpreter version
//! from that version's headers, under compile-time version guards, and checked against the
//! running interpreter when the module loads (a layout that reads differently from the public
//! API is not used: the portable path runs instead).

pub mod str_state;

use pyo3::prelude::*;

/// Checks every layout of this module against the running interpreter; called once, from the
/// module's initialisation, before any codec exists.
pub fn check_layouts(py: Python<'_>) -> PyResult<()> {
    str_state::check(py)
}

/// Which of this module's layouts the running interpreter passed the check of (and so are read
/// directly), by name; for the tests. Not an API.
#[pyfunction]
pub fn _layouts(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let layouts = pyo3::types::PyDict::new(py);
    layouts.set_item("str_state", str_state::in_use())?;
    Ok(layouts)
}

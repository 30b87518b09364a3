//! Emits pyo3's `Py_3_*`, `Py_LIMITED_API`, `PyPy` and `GraalPy` cfgs for this crate, so code
//! that reads a CPython-private object layout (`src/py/fields.rs`: slot offsets from member
//! descriptors) is compiled only for the interpreters whose layout it knows.
fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}

//! Emits pyo3's `Py_3_*`, `Py_LIMITED_API`, `PyPy` and `GraalPy` cfgs for this crate, and
//! `polycodec_room`: the family of interpreters whose private object layouts the CPython room
//! (`src/py/cpython/`) reads for the interpreter being built for, `portable` where it knows
//! none.
use pyo3_build_config::{PythonAbiKind, PythonImplementation};

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
    let config = pyo3_build_config::get();
    let version = config.version();
    let version = (version.major, version.minor);
    let family = match config.implementation() {
        PythonImplementation::CPython
            if matches!(
                config.target_abi().kind(),
                PythonAbiKind::VersionSpecific(_)
            ) =>
        {
            match version {
                (3, 11) => "v3_11",
                (3, 13) => "v3_13",
                (3, 14) | (3, 15) => "v3_14",
                _ => "portable",
            }
        }
        _ => "portable",
    };
    println!("cargo:rustc-cfg=polycodec_room=\"{family}\"");
}

//! A diagnostic for the decode-floor micro-benchmark (`benches/floor.py`): creates instances of
//! a dataclass from ready field values exactly as the decoders' record builder does (the class's
//! [`FieldAccess`] and its `create`, with the collector paused), and nothing else. Its
//! time per instance is the floor a decoder's instance creation cannot go below. Not an API.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple, PyType};
use smallvec::SmallVec;

use super::fields::{FieldAccess, RecordKind};
use super::{GcPause, Obj};

/// `[cls-instance made from row for row in rows]`, each row a tuple of the field values in the
/// order of `names` (the dataclass's field names), created the way the decoders create records.
/// `portable` stores a plain dataclass's fields the portable way (`object.__setattr__`'s), as
/// where the `inline_values` layout is not in use, so that both are measured in one process.
#[pyfunction]
#[pyo3(signature = (cls, names, rows, /, *, portable = false))]
pub fn _floor_create<'py>(
    cls: &Bound<'py, PyType>,
    names: Vec<Bound<'py, PyString>>,
    rows: &Bound<'py, PyList>,
    portable: bool,
) -> PyResult<Bound<'py, PyList>> {
    let py = cls.py();
    let mut interned: Vec<Py<PyString>> = Vec::with_capacity(names.len());
    for name in &names {
        interned.push(PyString::intern(py, super::str_utf8(name)?).unbind());
    }
    let access = match FieldAccess::for_class(RecordKind::Dataclass, cls.as_any(), &interned)? {
        FieldAccess::Dict(Some(_)) if portable => FieldAccess::Dict(None),
        access => access,
    };
    let out = PyList::empty(py);
    let _pause = GcPause::new(py);
    for row in rows.iter() {
        let row = row.cast_into::<PyTuple>()?;
        if row.len() != interned.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "each row must hold one value per field name",
            ));
        }
        let mut values: SmallVec<[Option<Obj<'py>>; 16]> = row.iter().map(Some).collect();
        let instance = access.create(cls, &interned, &mut values)?;
        out.append(instance)?;
    }
    Ok(out)
}

//! `to_builtins` / `from_builtins`: the JSON form as Python objects (dicts, lists, str, int,
//! float, bool, None), built from the plan with no bytes in between.
//!
//! They are one more writer and one more reader for the shared walks: [`encode::ObjectWriter`]
//! is a [`WireWriter`](super::encoder::WireWriter) whose output is Python objects, and
//! [`decode::ObjectInput`] is a reader that answers the shared decoder's questions (what is the
//! next value, the next key, is there another item) from existing Python objects. So both follow
//! the JSON codec's rules, options, constraints, errors and paths by construction.
//!
//! `to_builtins` runs [`walk::Walk`], a direct walk that returns each value's object (no
//! writer in between) for the common shapes and hands each other value, alone, to the shared
//! encoder with the `ObjectWriter`; it raises the shared encoder's errors and paths itself, so
//! every value is read once (user code such as an extension's hook runs once per value).
//!
//! [`Keep`] is the `builtin_types=` option: value types left as Python objects on the way out
//! and accepted as themselves on the way in.

pub mod decode;
pub mod direct;
pub mod encode;
pub mod walk;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDate, PyDateTime, PyDelta, PyTime, PyType};

use crate::errors::Result;
use crate::plan::Plan;
use crate::py::{self, Obj};

/// The value types `builtin_types=` keeps as objects.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Keep {
    pub bytes: bool,
    pub bytearray: bool,
    pub datetime: bool,
    pub date: bool,
    pub time: bool,
    pub timedelta: bool,
    pub uuid: bool,
    pub decimal: bool,
}

/// The names `builtin_types=` accepts, for its error message.
const KEEP_NAMES: &str = "bytes, bytearray, datetime.datetime, datetime.date, datetime.time, \
                          datetime.timedelta, uuid.UUID, decimal.Decimal";

impl Keep {
    /// Every type `builtin_types=` may hold: what `from_builtins(..., from_attributes=True)`
    /// takes as itself when `builtin_types` is not given (an object's attributes hold Python
    /// values, not their JSON text).
    pub fn every() -> Keep {
        Keep {
            bytes: true,
            bytearray: true,
            datetime: true,
            date: true,
            time: true,
            timedelta: true,
            uuid: true,
            decimal: true,
        }
    }

    /// Reads `builtin_types=`: `None` or an iterable of the classes [`KEEP_NAMES`] lists.
    pub fn from_option(types: Option<&Bound<'_, PyAny>>) -> PyResult<Keep> {
        let mut keep = Keep::default();
        let Some(types) = types.filter(|t| !t.is_none()) else {
            return Ok(keep);
        };
        let py = types.py();
        let lib = py::stdlib(py);
        let iter = types.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "builtin_types must be a collection of types, not {}",
                types
                    .get_type()
                    .qualname()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        for item in iter {
            let item = item?;
            let is = |cls: &Bound<'_, PyType>| item.is(cls);
            if is(&py.get_type::<PyBytes>()) {
                keep.bytes = true;
            } else if is(&py.get_type::<PyByteArray>()) {
                keep.bytearray = true;
            } else if is(&py.get_type::<PyDateTime>()) {
                keep.datetime = true;
            } else if is(&py.get_type::<PyDate>()) {
                keep.date = true;
            } else if is(&py.get_type::<PyTime>()) {
                keep.time = true;
            } else if is(&py.get_type::<PyDelta>()) {
                keep.timedelta = true;
            } else if is(lib.uuid.bind(py)) {
                keep.uuid = true;
            } else if is(lib.decimal.bind(py)) {
                keep.decimal = true;
            } else {
                return Err(PyTypeError::new_err(format!(
                    "builtin_types may hold only {KEEP_NAMES}; got {}",
                    item.repr()?
                )));
            }
        }
        Ok(keep)
    }
}

/// `value` as the JSON form of the plan's root type, as Python objects.
pub fn to_builtins<'py>(
    plan: &Plan,
    table: &crate::codecs::builtins_table::Table,
    value: &Obj<'py>,
    keep: Keep,
) -> Result<Obj<'py>> {
    walk::Walk::new(plan, table, value.py(), keep)
        .value(plan.root, value.clone())
        .map_err(|err| *err)
}

/// A value of the plan's root type from its JSON form given as Python objects; with
/// `from_attributes`, a record may also come as any object whose attributes hold its fields.
pub fn from_builtins<'py>(
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    data: &Obj<'py>,
    keep: Keep,
    from_attributes: bool,
) -> Result<Obj<'py>> {
    // The direct walk, where reading a value twice is invisible (no Python code with side
    // effects; a kept Decimal is read through its `__str__`; attributes are read by the shared
    // decoder alone); when it gives up (an error to report), the shared decoder does it all.
    if plan.decode_is_pure && !keep.decimal && !from_attributes {
        let input = decode::ObjectInput::new(data.clone(), keep, false);
        let mut decoder = super::decoder::Decoder::new(py, plan, strict, input);
        if let Ok(value) = decoder.direct(plan.root, data) {
            return Ok(value);
        }
    }
    let input = decode::ObjectInput::new(data.clone(), keep, from_attributes);
    super::decoder::Decoder::new(py, plan, strict, input).decode_one()
}

/// `errors="all"`: [`from_builtins`] again, recording every validation error.
pub fn collect<'py>(
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    data: &Obj<'py>,
    keep: Keep,
    from_attributes: bool,
) -> Result<super::decoder::Collected<'py>> {
    let input = decode::ObjectInput::new(data.clone(), keep, from_attributes);
    super::decoder::Decoder::collecting(py, plan, strict, input).collect_one()
}

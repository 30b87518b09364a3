//! What polycodec reads of CPython's own object layouts, declared once per interpreter version
//! from that version's headers, under compile-time version guards, and checked against the
//! running interpreter when the module loads (a layout that reads differently from the public
//! API is not used: the portable path runs instead).
//!
//! The layouts checked here, by the name `_layouts()` reports:
//! - `str_state`: a str's state bits ([`str_state`]);
//! - `slotted_creation`: a `slots=True` instance made by `PyObject_GC_New` with its slots
//!   written ([`crate::py::create_slotted`]; CPython 3.11 and 3.13+);
//! - `inline_values`: a plain instance's inline values, written when it is made and read when
//!   it is encoded ([`crate::py::inline_values`] on 3.11, [`inline_values`] on 3.13+).
//!
//! `POLYCODEC_PORTABLE` (read once, at module load) turns layouts off: `all`, or a comma list
//! of the names above.

#[cfg(all(Py_3_13, not(Py_LIMITED_API), not(PyPy), not(GraalPy)))]
pub mod inline_values;
pub mod str_state;

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The layouts checked at module load besides the str state bits (which keep their own flag,
/// read on every str).
#[derive(Clone, Copy)]
pub enum Layout {
    SlottedCreation,
    InlineValues,
}

impl Layout {
    const ALL: [Layout; 2] = [Layout::SlottedCreation, Layout::InlineValues];

    /// The name `_layouts()` and `POLYCODEC_PORTABLE` use.
    pub fn name(self) -> &'static str {
        match self {
            Layout::SlottedCreation => "slotted_creation",
            Layout::InlineValues => "inline_values",
        }
    }
}

/// Whether each [`Layout`] passed its check (set once by [`check_layouts`]).
static IN_USE: [AtomicBool; 2] = [const { AtomicBool::new(false) }; 2];

/// Whether `layout` is read directly (it is compiled for this interpreter, passed its check at
/// module load and was not turned off by `POLYCODEC_PORTABLE`).
#[inline(always)]
pub fn layout_in_use(layout: Layout) -> bool {
    IN_USE[layout as usize].load(Ordering::Relaxed)
}

/// Whether `POLYCODEC_PORTABLE` turns the layout `name` off.
pub(crate) fn turned_off(name: &str) -> bool {
    std::env::var("POLYCODEC_PORTABLE").is_ok_and(|value| {
        value
            .split(',')
            .map(str::trim)
            .any(|item| item == "all" || item == name)
    })
}

/// Checks every layout of this module against the running interpreter; called once, from the
/// module's initialisation, before any codec exists.
pub fn check_layouts(py: Python<'_>) -> PyResult<()> {
    str_state::check(py)?;
    for layout in Layout::ALL {
        IN_USE[layout as usize].store(false, Ordering::Relaxed);
        let passed = !turned_off(layout.name()) && probe::agrees(py, layout)?;
        IN_USE[layout as usize].store(passed, Ordering::Relaxed);
    }
    Ok(())
}

/// Which of this module's layouts the running interpreter passed the check of (and so are read
/// directly), by name; for the tests. Not an API.
#[pyfunction]
pub fn _layouts(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let layouts = PyDict::new(py);
    layouts.set_item("str_state", str_state::in_use())?;
    for layout in Layout::ALL {
        layouts.set_item(layout.name(), layout_in_use(layout))?;
    }
    Ok(layouts)
}

/// The checks: known objects built through the layouts and through the public API, compared.
#[cfg(all(
    any(all(Py_3_11, not(Py_3_12)), Py_3_13),
    not(Py_LIMITED_API),
    not(PyPy),
    not(GraalPy)
))]
mod probe {
    use pyo3::prelude::*;
    use pyo3::types::{PyDict, PyList, PyString, PyType};

    use super::Layout;
    use crate::py::inline_values::InlineValues;

    /// The classes the checks build, made as users make them.
    const SUBJECTS: &std::ffi::CStr = c"
import dataclasses, gc
@dataclasses.dataclass(slots=True)
class Slotted:
    a: object
    b: object
    c: object
@dataclasses.dataclass
class Plain:
    a: object
    b: object
    c: object
";

    /// Whether `layout` reads, for the subjects, what the public API says.
    pub fn agrees(py: Python<'_>, layout: Layout) -> PyResult<bool> {
        let namespace = PyDict::new(py);
        py.run(SUBJECTS, Some(&namespace), None)?;
        let class = |name: &str| -> PyResult<Bound<'_, PyType>> {
            Ok(namespace.get_item(name)?.unwrap().cast_into::<PyType>()?)
        };
        let names: Vec<Py<PyString>> = ["a", "b", "c"]
            .iter()
            .map(|name| PyString::intern(py, name).unbind())
            .collect();
        // Distinct values, each its own object.
        let values = PyList::new(
            py,
            [PyList::empty(py), PyList::empty(py), PyList::empty(py)],
        )?;
        let tracked = namespace.get_item("gc")?.unwrap().getattr("is_tracked")?;
        // Each field of `instance` is exactly the value made for it, and the collector tracks it.
        let holds = |instance: &Bound<'_, PyAny>, count: usize| -> PyResult<bool> {
            for (k, name) in names.iter().enumerate() {
                let value = instance.getattr(name.bind(py));
                if k >= count {
                    if value.is_ok() {
                        return Ok(false);
                    }
                    continue;
                }
                if !value?.is(&values.get_item(k)?) {
                    return Ok(false);
                }
            }
            tracked.call1((instance,))?.is_truthy()
        };
        let items = |count: usize| -> PyResult<Vec<Option<Bound<'_, PyAny>>>> {
            (0..3)
                .map(|k| (k < count).then(|| values.get_item(k)).transpose())
                .collect()
        };
        match layout {
            Layout::SlottedCreation => {
                let cls = class("Slotted")?;
                let Some(offsets) = ["a", "b", "c"]
                    .iter()
                    .map(|name| crate::py::fields::slot_offset(&cls, name))
                    .collect::<Option<Vec<usize>>>()
                else {
                    return Ok(false);
                };
                for count in [3, 2] {
                    let mut fields = items(count)?;
                    let Some(made) = crate::py::create_slotted(&cls, &offsets, &mut fields) else {
                        return Ok(false);
                    };
                    if !holds(&made?, count)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Layout::InlineValues => {
                let cls = class("Plain")?;
                let Some(inline) = InlineValues::probe_layout(&cls, &names)? else {
                    return Ok(false);
                };
                // Read: an instance made by `__init__`, before and after `vars()` materialises
                // its dict.
                let made = cls.call1((
                    values.get_item(0)?,
                    values.get_item(1)?,
                    values.get_item(2)?,
                ))?;
                for materialise in [false, true] {
                    if materialise {
                        made.getattr("__dict__")?;
                    }
                    let Some(slots) = inline.readable_values(&made) else {
                        return Ok(false);
                    };
                    for k in 0..3 {
                        // SAFETY: the slots of `made`, just found; no Python code ran since.
                        let item = unsafe { inline.read_from(slots, k) };
                        if item != Some(values.get_item(k)?.as_ptr()) {
                            return Ok(false);
                        }
                    }
                }
                // Write: instances made here, all fields or some, then read the public way
                // (attributes, and `vars()` in field order).
                for count in [3, 2] {
                    let mut fields = items(count)?;
                    let Some(made) = inline.create(&cls, &mut fields) else {
                        return Ok(false);
                    };
                    let made = made?;
                    if !holds(&made, count)? {
                        return Ok(false);
                    }
                    let keys: Vec<String> = made
                        .getattr("__dict__")?
                        .call_method0("keys")?
                        .try_iter()?
                        .map(|key| key?.extract())
                        .collect::<PyResult<_>>()?;
                    if keys != ["a", "b", "c"][..count] {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }
}

/// This interpreter's layouts are not known: every layout is off.
#[cfg(not(all(
    any(all(Py_3_11, not(Py_3_12)), Py_3_13),
    not(Py_LIMITED_API),
    not(PyPy),
    not(GraalPy)
)))]
mod probe {
    use pyo3::prelude::*;

    pub fn agrees(_py: Python<'_>, _layout: super::Layout) -> PyResult<bool> {
        Ok(false)
    }
}

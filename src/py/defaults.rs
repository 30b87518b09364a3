//! How `omit_defaults` compares a field's value with its default, decided once when the plan is
//! built ([`DefaultTest::of_value`], [`DefaultTest::of_factory`]) rather than per value.
//!
//! A value is left out when it would be written and read back as the default: the default
//! object itself, or a copy of it of the same exact type (see `shape::equals_default`, the
//! reference). For the common defaults that question is answered by pointers and plain
//! numbers: None and the bools (singletons), an exact int that fits 64 bits, an exact float
//! (by its bits, so `-0.0` and `0.0` differ and a NaN default matches the same NaN), an exact
//! str (by its text), an enum member whose class compares by identity, and a default factory
//! of an empty builtin container (as msgspec does: a value of that exact type and empty). Any
//! other default is compared by identity first and by `shape::equals_default` only when that
//! fails, out of the hot loop.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple};

/// How a field's value is compared with its default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultTest {
    /// The field is never left out (no default, the tag, or a record without
    /// `omit_defaults`).
    Never,
    /// The default object alone: nothing else is written as it (None, True, False, an enum
    /// member of a class that compares by identity).
    Same(usize),
    /// The default object, or an exact int of this value.
    Int(usize, i64),
    /// The default object, or an exact float of these bits.
    Float(usize, u64),
    /// The default object (an exact str), or an exact str of the same text.
    Str(usize),
    /// An exact list, dict, set, frozenset or tuple that is empty (a default factory of that
    /// builtin type, or an empty tuple or frozenset as the default value).
    Empty(EmptyKind),
    /// The default object, else the general comparison (`shape::equals_default`).
    Ask(usize),
}

/// The builtin container of [`DefaultTest::Empty`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyKind {
    List,
    Dict,
    Set,
    FrozenSet,
    Tuple,
}

/// What [`DefaultTest::check`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Default,
    Other,
    /// Only the general comparison can tell.
    Ask,
}

impl DefaultTest {
    /// The test for a default value.
    pub fn of_value(default: &Bound<'_, PyAny>) -> PyResult<DefaultTest> {
        let addr = default.as_ptr() as usize;
        if default.is_none() || default.is_exact_instance_of::<PyBool>() {
            return Ok(DefaultTest::Same(addr));
        }
        if default.is_exact_instance_of::<PyInt>() {
            return Ok(match default.extract::<i64>() {
                Ok(number) => DefaultTest::Int(addr, number),
                Err(_) => DefaultTest::Ask(addr),
            });
        }
        if let Ok(float) = default.cast_exact::<PyFloat>() {
            return Ok(DefaultTest::Float(addr, float.value().to_bits()));
        }
        if default.is_exact_instance_of::<PyString>() {
            return Ok(DefaultTest::Str(addr));
        }
        if let Ok(tuple) = default.cast_exact::<PyTuple>() {
            if tuple.is_empty() {
                return Ok(DefaultTest::Empty(EmptyKind::Tuple));
            }
        }
        if let Ok(set) = default.cast_exact::<PyFrozenSet>() {
            if set.is_empty() {
                return Ok(DefaultTest::Empty(EmptyKind::FrozenSet));
            }
        }
        if identity_enum_member(default)? {
            return Ok(DefaultTest::Same(addr));
        }
        Ok(DefaultTest::Ask(addr))
    }

    /// The test for a default factory: an empty builtin container for the builtin container
    /// types, else the general comparison (which calls the factory).
    pub fn of_factory(factory: &Bound<'_, PyAny>) -> DefaultTest {
        let py = factory.py();
        let kinds = [
            (py.get_type::<PyList>(), EmptyKind::List),
            (py.get_type::<PyDict>(), EmptyKind::Dict),
            (py.get_type::<PySet>(), EmptyKind::Set),
            (py.get_type::<PyFrozenSet>(), EmptyKind::FrozenSet),
            (py.get_type::<PyTuple>(), EmptyKind::Tuple),
        ];
        match kinds.iter().find(|(cls, _)| factory.is(cls)) {
            Some((_, kind)) => DefaultTest::Empty(*kind),
            None => DefaultTest::Ask(0),
        }
    }

    /// Whether `value` is the default, by the test alone (no Python code runs).
    #[inline(always)]
    pub fn check(&self, value: &Bound<'_, PyAny>) -> Verdict {
        // SAFETY: `value` is a live object for the call.
        unsafe { self.check_ptr(value.as_ptr()) }
    }

    /// [`DefaultTest::check`] of a borrowed object.
    ///
    /// # Safety
    /// `value` must be a live object for the call.
    #[inline(always)]
    pub(crate) unsafe fn check_ptr(&self, value: *mut ffi::PyObject) -> Verdict {
        let addr = value as usize;
        let verdict = |same: bool| {
            if same {
                Verdict::Default
            } else {
                Verdict::Other
            }
        };
        match *self {
            DefaultTest::Never => Verdict::Other,
            DefaultTest::Same(default) => verdict(addr == default),
            DefaultTest::Int(default, number) => {
                if addr == default {
                    return Verdict::Default;
                }
                if ffi::PyLong_CheckExact(value) == 0 {
                    return Verdict::Other;
                }
                verdict(super::cpython::int_value(value) == Some(number))
            }
            DefaultTest::Float(default, bits) => verdict(
                addr == default
                    || (ffi::PyFloat_CheckExact(value) != 0
                        && ffi::PyFloat_AS_DOUBLE(value).to_bits() == bits),
            ),
            DefaultTest::Str(default) => verdict(
                addr == default
                    || (ffi::PyUnicode_CheckExact(value) != 0
                        && ffi::PyUnicode_GET_LENGTH(value)
                            == ffi::PyUnicode_GET_LENGTH(default as *mut ffi::PyObject)
                        && ffi::PyUnicode_Compare(value, default as *mut ffi::PyObject) == 0),
            ),
            DefaultTest::Empty(kind) => verdict(match kind {
                EmptyKind::List => {
                    ffi::PyList_CheckExact(value) != 0 && ffi::PyList_GET_SIZE(value) == 0
                }
                EmptyKind::Dict => {
                    ffi::PyDict_CheckExact(value) != 0 && ffi::PyDict_Size(value) == 0
                }
                EmptyKind::Set => {
                    ffi::Py_TYPE(value) == std::ptr::addr_of_mut!(ffi::PySet_Type)
                        && ffi::PySet_GET_SIZE(value) == 0
                }
                EmptyKind::FrozenSet => {
                    ffi::PyFrozenSet_CheckExact(value) != 0 && ffi::PySet_GET_SIZE(value) == 0
                }
                EmptyKind::Tuple => {
                    ffi::PyTuple_CheckExact(value) != 0 && ffi::PyTuple_GET_SIZE(value) == 0
                }
            }),
            DefaultTest::Ask(default) => {
                if addr == default {
                    Verdict::Default
                } else {
                    Verdict::Ask
                }
            }
        }
    }
}

/// Whether `value` is a member of an enum class (not a flag) whose members compare by identity:
/// its `__eq__` is `object`'s, `int`'s or `str`'s, so a member other than the default (members
/// with equal values are the same object) is never equal to it.
fn identity_enum_member(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = value.py();
    let lib = super::stdlib(py);
    if !value.is_instance(lib.enum_type.bind(py))? {
        return Ok(false);
    }
    let flag = py.import("enum")?.getattr("Flag")?;
    if value.is_instance(&flag)? {
        return Ok(false);
    }
    let eq = value.get_type().getattr(pyo3::intern!(py, "__eq__"))?;
    let name = pyo3::intern!(py, "__eq__");
    for base in [
        py.get_type::<pyo3::types::PyAny>().into_any(),
        py.get_type::<PyInt>().into_any(),
        py.get_type::<PyString>().into_any(),
    ] {
        if eq.is(base.getattr(name)?) {
            return Ok(true);
        }
    }
    Ok(false)
}

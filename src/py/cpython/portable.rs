//! Any interpreter whose layouts are not known here (a CPython other than 3.11, 3.13, 3.14 and
//! 3.15, the limited API, PyPy, GraalPy): no layout is read, every fast path takes the portable
//! path, and the types of the layouts are never made.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};

use super::FieldName;
use super::{DictTemplateLayout, Family, FillingLayout, InlineValuesLayout, Layout};
use crate::py::Obj;

/// The family's items: none.
pub struct Layouts;

/// Never made: instance values are stored the portable way.
pub enum NoInlineValues {}

/// Never made: record dicts are filled key by key.
pub enum NoDictTemplate {}

/// Never made.
pub enum NoFilling<'py> {
    #[allow(dead_code)]
    Never(std::convert::Infallible, std::marker::PhantomData<Obj<'py>>),
}

impl Family for Layouts {
    const NAME: &'static str = "no known layouts";
    const KNOWN: &'static [Layout] = &[];
    type InlineValues = NoInlineValues;
    type DictTemplate = NoDictTemplate;

    fn allocate_plain<'py>(
        _py: Python<'py>,
        _type_ptr: *mut ffi::PyTypeObject,
    ) -> Option<PyResult<Obj<'py>>> {
        None
    }

    fn create_slotted<'py>(
        _cls: &Bound<'py, PyType>,
        _offsets: &[usize],
        _values: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>> {
        None
    }

    unsafe fn member_offset(
        _cls: &Bound<'_, PyType>,
        _descriptor: &Bound<'_, PyAny>,
        _name: &Bound<'_, PyString>,
    ) -> Option<usize> {
        None
    }

    unsafe fn next_dict_entry(
        _dict: *mut ffi::PyObject,
        _position: &mut ffi::Py_ssize_t,
    ) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>> {
        None
    }

    unsafe fn str_keyed_entries(
        _dict: *mut ffi::PyObject,
    ) -> Option<(*const [*mut ffi::PyObject; 2], usize)> {
        None
    }

    fn wide_int(_py: Python<'_>, _value: u128) -> Option<PyResult<Obj<'_>>> {
        None
    }

    unsafe fn int_digits(_value: *mut ffi::PyObject) -> Option<i64> {
        None
    }
}

impl InlineValuesLayout for NoInlineValues {
    fn probe_class(_cls: &Bound<'_, PyType>, _names: &[Py<PyString>]) -> PyResult<Option<Self>> {
        Ok(None)
    }

    fn create<'py>(
        &self,
        _cls: &Bound<'py, PyType>,
        _items: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>> {
        match *self {}
    }

    fn fill<'py>(
        &self,
        _instance: &Obj<'py>,
        _fields: &[impl FieldName],
        _values: &mut [Option<Obj<'py>>],
    ) -> PyResult<bool> {
        match *self {}
    }

    fn store<'py>(
        &self,
        _instance: &Obj<'py>,
        _index: usize,
        _value: Obj<'py>,
    ) -> Result<(), Obj<'py>> {
        match *self {}
    }

    fn readable_values(&self, _instance: &Obj<'_>) -> Option<*mut *mut ffi::PyObject> {
        match *self {}
    }

    unsafe fn read_from(
        &self,
        _values: *mut *mut ffi::PyObject,
        _index: usize,
    ) -> Option<*mut ffi::PyObject> {
        match *self {}
    }
}

impl DictTemplateLayout for NoDictTemplate {
    type Filling<'py> = NoFilling<'py>;

    fn build(_py: Python<'_>, _keys: &[Bound<'_, PyString>]) -> Option<Self> {
        None
    }

    fn copy<'py>(&self, _py: Python<'py>) -> PyResult<NoFilling<'py>> {
        match *self {}
    }

    fn copy_of<'py>(_dict: &Bound<'py, PyDict>) -> Option<PyResult<NoFilling<'py>>> {
        None
    }
}

impl<'py> FillingLayout<'py> for NoFilling<'py> {
    fn put(&mut self, _position: usize, _value: Obj<'py>) {
        match *self {
            NoFilling::Never(never, _) => match never {},
        }
    }

    fn finish(self) -> Obj<'py> {
        match self {
            NoFilling::Never(never, _) => match never {},
        }
    }

    fn entry(&self, _position: usize) -> (Obj<'py>, Obj<'py>) {
        match *self {
            NoFilling::Never(never, _) => match never {},
        }
    }

    fn len(&self) -> usize {
        match *self {
            NoFilling::Never(never, _) => match never {},
        }
    }

    fn dict(&self) -> &Obj<'py> {
        match *self {
            NoFilling::Never(never, _) => match never {},
        }
    }
}

//! How the codecs read a record's fields and fill a new instance: one [`FieldAccess`] per record
//! class, chosen once when the plan is built and used by every encoder and decoder.
//!
//! - A plain dataclass is read through its instance `__dict__`, walked in insertion order (the
//!   order `__init__` set the fields in), so most fields cost one pointer comparison. On CPython
//!   3.11 and 3.13+ a new instance is created with its inline values already written, each field at
//!   its index in the keys the class's instances share (found once per class, see
//!   [`InlineValues`]), or an existing one filled the same way; where the `inline_values` layout
//!   is not in use (`super::cpython`), each field is stored the way `object.__setattr__` stores
//!   it. An instance that still keeps its
//!   attributes there is read the same way, by index, instead of through its `__dict__`; so is
//!   one whose `__dict__` was materialised (by `vars()`, `pickle`, orjson) while that dict is
//!   still a split table over the class's shared keys, which keeps the same values array.
//! - A class whose every field is a plain slot (`slots=True`) is read and filled at the slots'
//!   byte offsets, taken once from the class's member descriptors. Where the `slot_offsets`
//!   layout is not in use, the same member descriptors are called through their
//!   `__get__`/`__set__` slots.
//! - Anything else (a field that is a property, a class with its own `__getattribute__` or
//!   `__getattr__`) goes through `getattr` and `object.__setattr__`.
//!
//! A field whose value is a plain scalar (an exact str, int, float, bool or None) is handed to
//! the format's writer straight from the borrowed reference, with no reference count traffic.
//! The writer is plain Rust that runs no Python code while it holds the borrowed value, so the
//! instance cannot change under it; every other value is handed back as an owned reference for
//! the general encoder.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};

pub use super::cpython::FieldName;
use super::cpython::{InlineValues, InlineValuesLayout};
use super::{temporal, Obj};
use polycodec_formats::text::temporal::DateTime;

/// What kind of class a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    Dataclass,
    TypedDict,
    NamedTuple,
}

/// Which plain scalars a field's node lets the encoders' borrowed-field fast path write itself
/// (the plan finds each field's rule: `PlainRule::for_node`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Plain {
    Str,
    Int,
    /// A float field: exact floats, and exact ints (which the encoders write as ints).
    Float,
    Bool,
    /// A datetime field: exact datetimes that are naive or in a fixed-offset `timezone`
    /// (`py::temporal::utc_or_naive_parts`), for the formats that write their parts.
    DateTime,
}

/// A plain kind, optionally also accepting None (`Optional[...]`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PlainRule {
    pub kind: Plain,
    pub nullable: bool,
}

/// How a record class's fields are read and stored.
pub enum FieldAccess {
    /// A dataclass instance's `__dict__`, walked in order; a field not found there (a class
    /// attribute, a slot of a base class) is asked for with `getattr`. Stores go through
    /// `object.__setattr__`, or (CPython 3.11 and 3.13+) written into the instance's inline
    /// values.
    Dict(Option<InlineValues>),
    /// Every field is a slot of the class: the byte offset of each (by field index) in an
    /// instance of exactly `type_addr`. Instances of subclasses are read with `getattr`, since
    /// a subclass may put a property over a slot.
    Offsets {
        type_addr: usize,
        offsets: Box<[usize]>,
        /// Whether a new instance is made in one step ([`super::cpython::create_slotted`]):
        /// the `slotted_creation` layout was in use when the plan was built.
        create_whole: bool,
    },
    /// Every field is a slot, read and stored through its member descriptor (by field index):
    /// the portable form of `Offsets`.
    Descriptors {
        type_addr: usize,
        descriptors: Box<[Py<PyAny>]>,
    },
    /// `getattr` for each field.
    Attributes,
    /// A TypedDict value.
    Mapping,
    /// A NamedTuple value.
    Tuple,
}

/// What one attribute of a class is, for the choice of access.
enum Found<'py> {
    /// Nothing in the class, or a plain class attribute (a default value, a method): an
    /// instance dict entry takes precedence over it.
    Shadowed,
    /// A plain object slot: its member descriptor and byte offset (when the layout is known).
    Slot(Bound<'py, PyAny>, Option<usize>),
    /// A descriptor that takes precedence over the instance dict (a property, say).
    DataDescriptor,
}

impl FieldAccess {
    /// The access for a record class whose fields are named `names` (in field order).
    pub fn for_class(
        kind: RecordKind,
        cls: &Bound<'_, PyAny>,
        names: &[Py<PyString>],
    ) -> PyResult<FieldAccess> {
        match kind {
            RecordKind::TypedDict => return Ok(FieldAccess::Mapping),
            RecordKind::NamedTuple => return Ok(FieldAccess::Tuple),
            RecordKind::Dataclass => {}
        }
        let py = cls.py();
        let Ok(cls) = cls.cast::<PyType>() else {
            return Ok(FieldAccess::Attributes);
        };
        let type_ptr = cls.as_type_ptr();
        // SAFETY: a live type object; only its attribute-lookup slot is read.
        let getattro = unsafe { (*type_ptr).tp_getattro };
        let generic = ffi::PyObject_GenericGetAttr as *const () as usize;
        if getattro.map(|f| f as usize) != Some(generic) {
            // Its own __getattribute__ or __getattr__ decides what a field reads as.
            return Ok(FieldAccess::Attributes);
        }
        let mut slots = Vec::with_capacity(names.len());
        for name in names {
            match lookup(cls, name.bind(py))? {
                Found::Slot(descriptor, offset) => slots.push((descriptor, offset)),
                Found::DataDescriptor => return Ok(FieldAccess::Attributes),
                Found::Shadowed => {}
            }
        }
        if slots.len() != names.len() || names.is_empty() {
            // Fields live in the instance dict (some perhaps in a base class's slots, which
            // the getattr fallback reads).
            return Ok(FieldAccess::Dict(super::cpython::inline_values(
                cls, names,
            )?));
        }
        let type_addr = type_ptr as usize;
        if slots.iter().all(|(_, offset)| offset.is_some()) {
            let offsets = slots
                .iter()
                .map(|(_, offset)| offset.unwrap_or(0))
                .collect();
            let create_whole =
                super::cpython::layout_in_use(super::cpython::Layout::SlottedCreation);
            return Ok(FieldAccess::Offsets {
                type_addr,
                offsets,
                create_whole,
            });
        }
        let descriptors = slots.into_iter().map(|(d, _)| d.unbind()).collect();
        Ok(FieldAccess::Descriptors {
            type_addr,
            descriptors,
        })
    }

    /// Reports the Python objects the access holds to the garbage collector.
    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let FieldAccess::Descriptors { descriptors, .. } = self {
            for descriptor in descriptors.iter() {
                visit.call(descriptor)?;
            }
        }
        Ok(())
    }

    /// The access's name, as `Codec._field_access` reports it to the tests.
    pub fn describe(&self) -> &'static str {
        match self {
            FieldAccess::Dict(None) => "dict",
            FieldAccess::Dict(Some(_)) => "inline values",
            FieldAccess::Offsets { .. } => "slot offsets",
            FieldAccess::Descriptors { .. } => "slot descriptors",
            FieldAccess::Attributes => "getattr",
            FieldAccess::Mapping => "mapping",
            FieldAccess::Tuple => "tuple",
        }
    }

    /// A reader of one record value's fields. `value` must be an instance of the record's
    /// class (for a TypedDict, a dict; for a NamedTuple, a tuple).
    #[inline(always)]
    pub fn reader<'a, 'py>(&'a self, value: &Obj<'py>) -> FieldReader<'a, 'py> {
        let exact = |type_addr: usize| value.get_type_ptr() as usize == type_addr;
        let mut values = std::ptr::null_mut();
        let (how, held) = match self {
            FieldAccess::Dict(Some(inline))
                if {
                    values = inline
                        .readable_values(value)
                        .unwrap_or(std::ptr::null_mut());
                    !values.is_null()
                } =>
            {
                (How::Inline(inline), None)
            }
            FieldAccess::Dict(_) => match super::instance_dict(value) {
                Some(dict) => (How::Dict(dict.as_ptr()), Some(dict.into_any())),
                None => (How::Attributes, None),
            },
            FieldAccess::Offsets {
                type_addr, offsets, ..
            } if exact(*type_addr) => (How::Offsets(offsets), None),
            FieldAccess::Descriptors {
                type_addr,
                descriptors,
            } if exact(*type_addr) => (How::Descriptors(descriptors), None),
            FieldAccess::Mapping if value.is_instance_of::<PyDict>() => {
                (How::Mapping, Some(value.clone()))
            }
            // The tuple is `value` itself, which the caller holds: no reference of its own.
            FieldAccess::Tuple if value.is_instance_of::<PyTuple>() => (How::Tuple, None),
            _ => (How::Attributes, None),
        };
        FieldReader {
            how,
            held,
            position: 0,
            values,
        }
    }

    /// A new instance of the dataclass `cls`, made by its `tp_new` without calling `__init__`;
    /// its fields are then stored with [`FieldAccess::store`].
    #[inline]
    pub fn new_instance<'py>(&self, cls: &Bound<'py, PyType>) -> PyResult<Obj<'py>> {
        super::new_instance(cls)
    }

    /// A new instance of the dataclass `cls` holding the values given (by field index; the
    /// values are taken, and an absent one leaves its field unset): [`FieldAccess::new_instance`]
    /// then [`FieldAccess::fill`], or on CPython 3.11 and 3.13+ the instance allocated with its fields
    /// written in one step: a `slots=True` class's slots ([`super::cpython::create_slotted`]), a plain
    /// class's inline values ([`InlineValues::create`]).
    #[inline]
    pub fn create<'py>(
        &self,
        cls: &Bound<'py, PyType>,
        fields: &[impl FieldName],
        values: &mut [Option<Obj<'py>>],
    ) -> PyResult<Obj<'py>> {
        match self {
            FieldAccess::Offsets {
                type_addr,
                offsets,
                create_whole: true,
            } if cls.as_type_ptr() as usize == *type_addr => {
                if let Some(instance) = super::cpython::create_slotted(cls, offsets, values) {
                    return instance;
                }
            }
            FieldAccess::Dict(Some(inline)) => {
                if let Some(instance) = inline.create(cls, values) {
                    return instance;
                }
            }
            _ => {}
        }
        let instance = self.new_instance(cls)?;
        self.fill(&instance, fields, values)?;
        Ok(instance)
    }

    /// Stores each value given (by field index) into an instance made by
    /// [`FieldAccess::new_instance`], as [`FieldAccess::store`] does; the values are taken.
    #[inline]
    pub fn fill<'py>(
        &self,
        instance: &Obj<'py>,
        fields: &[impl FieldName],
        values: &mut [Option<Obj<'py>>],
    ) -> PyResult<()> {
        if let FieldAccess::Offsets {
            type_addr, offsets, ..
        } = self
        {
            if instance.get_type_ptr() as usize == *type_addr {
                let base = instance.as_ptr().cast::<u8>();
                for (value, &offset) in values.iter_mut().zip(offsets.iter()) {
                    if let Some(value) = value.take() {
                        // SAFETY: as in `store`: an object pointer slot of exactly this class,
                        // which takes the value's reference; a value it held is released.
                        unsafe {
                            let slot = base.add(offset).cast::<*mut ffi::PyObject>();
                            let old = *slot;
                            *slot = value.into_ptr();
                            ffi::Py_XDECREF(old);
                        }
                    }
                }
                return Ok(());
            }
        }
        if let FieldAccess::Dict(Some(inline)) = self {
            if inline.fill(instance, fields, values)? {
                return Ok(());
            }
        }
        let py = instance.py();
        if let FieldAccess::Descriptors { .. } = self {
            for (index, (value, field)) in values.iter_mut().zip(fields).enumerate() {
                if let Some(value) = value.take() {
                    self.store(instance, index, field.field_name().bind(py), value)?;
                }
            }
            return Ok(());
        }
        for (value, field) in values.iter_mut().zip(fields) {
            if let Some(value) = value.take() {
                super::set_field(instance, field.field_name().bind(py), &value)?;
            }
        }
        Ok(())
    }

    /// Stores field `index` (named `name`) into an instance made by
    /// [`FieldAccess::new_instance`], past a frozen class's `__setattr__`, as the generated
    /// `__init__` does.
    #[inline]
    pub fn store(
        &self,
        instance: &Obj<'_>,
        index: usize,
        name: &Bound<'_, PyString>,
        value: Obj<'_>,
    ) -> PyResult<()> {
        match self {
            FieldAccess::Offsets {
                type_addr, offsets, ..
            } if instance.get_type_ptr() as usize == *type_addr => {
                // SAFETY: the instance is of exactly the class whose member descriptor gave
                // this offset (a T_OBJECT_EX member inside the class's basic size, checked when
                // the plan was built), so it addresses an object pointer slot. The slot takes
                // `value`'s reference; the value it held (NULL for a fresh instance) is
                // released after the store.
                unsafe {
                    let slot = instance
                        .as_ptr()
                        .cast::<u8>()
                        .add(offsets[index])
                        .cast::<*mut ffi::PyObject>();
                    let old = *slot;
                    *slot = value.into_ptr();
                    ffi::Py_XDECREF(old);
                }
                Ok(())
            }
            FieldAccess::Descriptors {
                type_addr,
                descriptors,
            } if instance.get_type_ptr() as usize == *type_addr => {
                let descriptor = descriptors[index].as_ptr();
                // SAFETY: a member descriptor (checked when the plan was built) and a live
                // instance of its class; its __set__ slot borrows both and the value, and
                // reports errors by -1 with an exception set.
                let status = unsafe {
                    match (*ffi::Py_TYPE(descriptor)).tp_descr_set {
                        Some(set) => set(descriptor, instance.as_ptr(), value.as_ptr()),
                        None => return super::set_field(instance, name, &value),
                    }
                };
                if status < 0 {
                    return Err(PyErr::fetch(instance.py()));
                }
                Ok(())
            }
            FieldAccess::Dict(Some(inline)) => match inline.store(instance, index, value) {
                Ok(()) => Ok(()),
                Err(value) => super::set_field(instance, name, &value),
            },
            _ => super::set_field(instance, name, &value),
        }
    }
}

/// Finds `name` in the class's MRO, as attribute lookup does, and says what it is.
fn lookup<'py>(cls: &Bound<'py, PyType>, name: &Bound<'py, PyString>) -> PyResult<Found<'py>> {
    let py = cls.py();
    for klass in cls.mro().iter() {
        let namespace = klass.getattr(pyo3::intern!(py, "__dict__"))?;
        let Ok(found) = namespace.get_item(name) else {
            continue;
        };
        let found_type = found.get_type_ptr();
        let member_type = std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type);
        if found_type == member_type {
            return Ok(match member_offset(cls, &found, name) {
                Some(offset) => Found::Slot(found, offset),
                // A member of another kind (read-only, or not an object pointer).
                None => Found::DataDescriptor,
            });
        }
        // SAFETY: a live type object; only its descriptor slot is read.
        let set = unsafe { (*found_type).tp_descr_set };
        return Ok(if set.is_some() {
            Found::DataDescriptor
        } else {
            Found::Shadowed
        });
    }
    Ok(Found::Shadowed)
}

/// The byte offset in an instance of `cls` of its slot `name`, when `cls.name` is a writable
/// object slot and the `slot_offsets` layout is in use (used for the stdlib's UUID).
pub fn slot_offset(cls: &Bound<'_, PyType>, name: &str) -> Option<usize> {
    match lookup(cls, &PyString::new(cls.py(), name)).ok()? {
        Found::Slot(_, offset) => offset,
        _ => None,
    }
}

/// For a member descriptor found on `cls` under `name`: `None` when it is not a writable object
/// slot of a base of `cls` (so getattr must serve it), else `Some` of its byte offset when this
/// `slot_offsets` layout is in use (`Some(None)` when it is not).
fn member_offset(
    cls: &Bound<'_, PyType>,
    descriptor: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
) -> Option<Option<usize>> {
    let py = cls.py();
    // The portable check: a member of a class `cls` derives from.
    let owner = descriptor.getattr(pyo3::intern!(py, "__objclass__")).ok()?;
    let owner = owner.cast::<PyType>().ok()?;
    if !cls.is_subclass(owner).ok()? {
        return None;
    }
    // SAFETY: `lookup` calls this for a descriptor of exactly the member descriptor type.
    Some(unsafe { super::cpython::member_offset(cls, descriptor, name) })
}

/// A plain value, borrowed from the instance for the duration of one write.
#[derive(Clone, Copy)]
pub enum PlainValue<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// An ASCII str's text.
    Ascii(&'a str),
    /// A datetime field's value, whose parts a writer may read with [`PlainDateTime::parts`].
    DateTime(PlainDateTime<'a>),
}

/// A borrowed value of a datetime field, not yet checked to be a datetime: a writer that
/// writes datetimes as their parts asks for them, one that keeps objects declines it.
#[derive(Clone, Copy)]
pub struct PlainDateTime<'a> {
    object: *mut ffi::PyObject,
    _borrowed: std::marker::PhantomData<&'a ffi::PyObject>,
}

impl PlainDateTime<'_> {
    /// The parts of an exact datetime that is naive or in a fixed-offset `timezone` (see
    /// `temporal::utc_or_naive_parts`); `None` leaves the value to the general encoder.
    #[inline(always)]
    pub fn parts(self) -> Option<DateTime> {
        // SAFETY: the object is live for the borrow `'a` (see `deliver`).
        unsafe { temporal::direct_parts(self.object) }
    }
}

/// What [`FieldReader::next`] did with a field.
pub enum Next<'py> {
    /// The value was written to the output.
    Written,
    /// The field's value, for the general encoder.
    Value(Obj<'py>),
    /// A TypedDict without the key (or a NamedTuple too short).
    Missing,
    /// Reading the field raised (an unset slot, a failing property).
    Failed(Box<PyErr>),
}

/// Reads one record value's fields, each by its index and name (the plan's interned str).
pub struct FieldReader<'a, 'py> {
    how: How<'a>,
    /// The instance dict (`How::Dict`) or the TypedDict (`How::Mapping`).
    held: Option<Obj<'py>>,
    /// Where the walk of the instance dict is.
    position: ffi::Py_ssize_t,
    /// The instance's inline values array (`How::Inline`), checked while no Python code has
    /// run since: null once the general encoder has had a value (which may run Python code),
    /// so that the next read checks the instance again.
    values: *mut *mut ffi::PyObject,
}

#[derive(Clone, Copy)]
enum How<'a> {
    /// The instance dict, which `held` owns.
    Dict(*mut ffi::PyObject),
    /// The instance's inline values (CPython 3.11 and 3.13+), read by each field's index.
    Inline(&'a InlineValues),
    Offsets(&'a [usize]),
    Descriptors(&'a [Py<PyAny>]),
    Attributes,
    Mapping,
    Tuple,
}

impl<'py> FieldReader<'_, 'py> {
    /// Field `index` of `value` (the instance the reader was made for). A plain value that
    /// `rule` allows is passed to `write`, which returns false when it would rather leave the
    /// value to the general encoder (JSON and a NaN, say).
    #[inline(always)]
    pub fn next(
        &mut self,
        value: &Obj<'py>,
        index: usize,
        name: &Bound<'py, PyString>,
        rule: Option<PlainRule>,
        write: impl FnOnce(PlainValue<'_>) -> bool,
    ) -> Next<'py> {
        let py = value.py();
        self.next_with(value, index, name, |item| {
            // SAFETY: a borrowed reference the instance (or its dict) keeps alive (see
            // `deliver`).
            unsafe { deliver(py, item, rule, write) }
        })
    }

    /// Field `index` of `value` when it is not `expected` (compared by identity, with no
    /// reference count traffic): `Next::Written` when it is `expected`. Used for a tagged
    /// record's tag field, whose value is nearly always the class's own tag object.
    #[inline(always)]
    pub fn next_unless(
        &mut self,
        value: &Obj<'py>,
        index: usize,
        name: &Bound<'py, PyString>,
        expected: &Py<PyAny>,
    ) -> Next<'py> {
        let py = value.py();
        self.next_with(value, index, name, |item| {
            if item == expected.as_ptr() {
                Next::Written
            } else {
                // SAFETY: a borrowed reference the instance (or its dict) keeps alive; it is
                // made an owned one at once.
                Next::Value(unsafe { Bound::from_borrowed_ptr(py, item) })
            }
        })
    }

    /// Field `index` of `value`, handed to `take` as a [`Borrowed`] value where the access
    /// reads a pointer (the instance dict walked in order, inline values, slot offsets, a
    /// TypedDict's entries, a NamedTuple's items), else returned as `Next::Value` without
    /// `take`. `take` runs no Python code while it holds the
    /// value, and returns `Next::Value` for one it hands on (for `omit_defaults`: a value left
    /// out is its own `Next::Missing`).
    #[inline(always)]
    pub fn next_item(
        &mut self,
        value: &Obj<'py>,
        index: usize,
        name: &Bound<'py, PyString>,
        take: impl FnOnce(Borrowed<'_>) -> Next<'py>,
    ) -> Next<'py> {
        self.next_with(value, index, name, |item| {
            take(Borrowed {
                ptr: item,
                _borrowed: std::marker::PhantomData,
            })
        })
    }

    /// Reads field `index` of `value` and hands a borrowed pointer to it to `take`, for the
    /// accesses that have one (the instance dict walked in order, inline values, slot offsets,
    /// a TypedDict's entries, a NamedTuple's items); the others return the value as an owned
    /// reference.
    #[inline(always)]
    fn next_with(
        &mut self,
        value: &Obj<'py>,
        index: usize,
        name: &Bound<'py, PyString>,
        take: impl FnOnce(*mut ffi::PyObject) -> Next<'py>,
    ) -> Next<'py> {
        // One call of `take` below, so it is inlined once.
        let item = match self.how {
            How::Dict(dict) => {
                let mut key: *mut ffi::PyObject = std::ptr::null_mut();
                let mut item: *mut ffi::PyObject = std::ptr::null_mut();
                let position = self.position;
                // SAFETY: `held` is the instance dict; PyDict_Next bounds-checks the position
                // against the current size and returns borrowed references.
                let found =
                    unsafe { ffi::PyDict_Next(dict, &mut self.position, &mut key, &mut item) };
                if found == 0 || key != name.as_ptr() {
                    // The entry stays for the next field: one field out of order (a tagged
                    // variant's tag, read first but set last) costs only its own lookup.
                    self.position = position;
                    return settle(self.not_next(value, name));
                }
                item
            }
            How::Inline(inline) => {
                if self.values.is_null() {
                    match inline.readable_values(value) {
                        Some(values) => self.values = values,
                        None => return settle(self.not_next(value, name)),
                    }
                }
                // SAFETY: `values` was checked for this instance with no Python code run
                // since: only plain values were written after it was (see `next`).
                match unsafe { inline.read_from(self.values, index) } {
                    Some(item) => item,
                    None => {
                        self.values = std::ptr::null_mut();
                        return settle(self.not_next(value, name));
                    }
                }
            }
            How::Offsets(offsets) => {
                // SAFETY: `value` is of exactly the class the offsets were read from (checked
                // when the reader was made), so the offset addresses an object pointer slot.
                let item = unsafe {
                    *value
                        .as_ptr()
                        .cast::<u8>()
                        .add(offsets[index])
                        .cast::<*mut ffi::PyObject>()
                };
                if item.is_null() {
                    return settle(unset(value, name));
                }
                item
            }
            // Out of line, so that the dataclass accesses' inlined reads stay as compact as
            // they were.
            How::Tuple => {
                let tuple = value.as_ptr();
                // SAFETY: `value` is a tuple (checked when the reader was made), whose items
                // cannot change: a borrowed item lives as long as the tuple, which the caller
                // holds. A shorter tuple (a subclass's own `__new__`) lacks the field.
                unsafe {
                    if index as ffi::Py_ssize_t >= ffi::PyTuple_GET_SIZE(tuple) {
                        return Next::Missing;
                    }
                    ffi::PyTuple_GET_ITEM(tuple, index as ffi::Py_ssize_t)
                }
            }
            How::Mapping => match self.mapping_item(value, index, name) {
                Ok(item) => item,
                Err(next) => return next,
            },
            _ => return settle(self.other(value, index, name)),
        };
        let next = take(item);
        if let Next::Value(_) = next {
            // The general encoder takes it from here and may run Python code.
            self.values = std::ptr::null_mut();
        }
        next
    }

    /// A TypedDict's field `index`, borrowed (see [`Self::next_with`]), or what the reader
    /// returns without one.
    #[inline(never)]
    fn mapping_item(
        &mut self,
        value: &Obj<'py>,
        index: usize,
        name: &Bound<'py, PyString>,
    ) -> Result<*mut ffi::PyObject, Next<'py>> {
        Ok(match self.how {
            How::Mapping => match &self.held {
                Some(dict) => {
                    // The dict's next entry first: a TypedDict made with its keys in field
                    // order (a call of the class, a decode) has each key, the field's interned
                    // name, where the walk is, and no lookup (hashing, probing) is needed.
                    let dict = dict.as_ptr();
                    let (mut key, mut item) = (std::ptr::null_mut(), std::ptr::null_mut());
                    let position = self.position;
                    // SAFETY: `held` is a dict (checked when the reader was made); PyDict_Next
                    // bounds-checks the position against the current size and returns
                    // borrowed references. A key compared equal by address is the field's
                    // name itself, which the plan keeps alive.
                    let found =
                        unsafe { ffi::PyDict_Next(dict, &mut self.position, &mut key, &mut item) };
                    if found != 0 && key == name.as_ptr() {
                        item
                    } else {
                        self.position = position;
                        Self::mapping_lookup(value, dict, name)?
                    }
                }
                None => return Err(Next::Missing),
            },
            _ => return Err(settle(self.other(value, index, name))),
        })
    }

    /// A TypedDict key that is not the dict's next entry (left out, or in another order): its
    /// borrowed value, or what the reader returns without one.
    #[inline(never)]
    fn mapping_lookup(
        value: &Obj<'py>,
        dict: *mut ffi::PyObject,
        name: &Bound<'py, PyString>,
    ) -> Result<*mut ffi::PyObject, Next<'py>> {
        // SAFETY: `dict` is the reader's held dict; the lookup returns a borrowed reference,
        // or NULL (with an exception set when the lookup failed: an unhashable or failing key
        // comparison).
        let item = unsafe { ffi::PyDict_GetItemWithError(dict, name.as_ptr()) };
        if item.is_null() {
            return Err(match PyErr::take(value.py()) {
                Some(err) => failed(err),
                None => Next::Missing,
            });
        }
        Ok(item)
    }

    /// A field that is not the dict's next entry: set out of order, or a class attribute, or a
    /// base class's slot.
    #[inline(never)]
    fn not_next(&self, value: &Obj<'py>, name: &Bound<'py, PyString>) -> PyResult<Next<'py>> {
        if let Some(dict) = &self.held {
            if let Some(item) = dict.cast::<PyDict>()?.get_item(name)? {
                return Ok(Next::Value(item));
            }
        }
        Ok(Next::Value(value.getattr(name)?))
    }

    /// The accesses without a plain-value fast path.
    #[inline(never)]
    fn other(
        &mut self,
        value: &Obj<'py>,
        index: usize,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Next<'py>> {
        let py = value.py();
        match (self.how, &self.held) {
            (How::Descriptors(descriptors), _) => {
                let descriptor = descriptors[index].as_ptr();
                // SAFETY: a member descriptor of the value's class; its __get__ slot returns a
                // new reference or NULL with an exception set (AttributeError for an unset
                // slot).
                let item = unsafe {
                    match (*ffi::Py_TYPE(descriptor)).tp_descr_get {
                        Some(get) => get(
                            descriptor,
                            value.as_ptr(),
                            value.get_type_ptr().cast::<ffi::PyObject>(),
                        ),
                        None => return Ok(Next::Value(value.getattr(name)?)),
                    }
                };
                // SAFETY: a new reference or NULL with an exception set.
                Ok(Next::Value(unsafe {
                    Bound::from_owned_ptr_or_err(py, item)?
                }))
            }
            (How::Mapping, Some(held)) => Ok(match held.cast::<PyDict>()?.get_item(name)? {
                Some(item) => Next::Value(item),
                None => Next::Missing,
            }),
            (How::Dict(_), _) => self.not_next(value, name),
            _ => Ok(Next::Value(value.getattr(name)?)),
        }
    }

    /// Field `index` of `value`; `None` when a TypedDict lacks the key.
    #[inline]
    pub fn get(
        &mut self,
        value: &Obj<'py>,
        index: usize,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Option<Obj<'py>>> {
        match self.next(value, index, name, None, |_| false) {
            Next::Value(item) => Ok(Some(item)),
            Next::Missing | Next::Written => Ok(None),
            Next::Failed(err) => Err(*err),
        }
    }
}

/// A field's value borrowed from the instance by [`FieldReader::next_item`], for the length of
/// one call of its `take`: no reference is taken, and the instance keeps it alive while no
/// Python code runs.
#[derive(Clone, Copy)]
pub struct Borrowed<'a> {
    ptr: *mut ffi::PyObject,
    _borrowed: std::marker::PhantomData<&'a ffi::PyObject>,
}

impl<'a> Borrowed<'a> {
    /// The object's address (for identity comparisons with objects the plan holds).
    #[inline(always)]
    pub fn addr(self) -> usize {
        self.ptr as usize
    }

    /// Whether the value is the field's default, by a test decided when the plan was built.
    #[inline(always)]
    pub fn default_verdict(self, test: &super::defaults::DefaultTest) -> super::defaults::Verdict {
        // SAFETY: the item is live for `'a` (see the type's comment).
        unsafe { test.check_ptr(self.ptr) }
    }

    /// The value as a plain value when `rule` allows it.
    #[inline(always)]
    pub fn plain(self, rule: PlainRule) -> Option<PlainValue<'a>> {
        // SAFETY: the item is live for `'a`, which the returned value borrows.
        unsafe { plain_value(self.ptr, rule) }
    }

    /// The value as an owned reference, for code that may run Python code.
    #[inline(always)]
    pub fn owned<'py>(self, py: Python<'py>) -> Obj<'py> {
        // SAFETY: a live object borrowed from the instance, made an owned reference here.
        unsafe { Bound::from_borrowed_ptr(py, self.ptr) }
    }
}

/// The outcome of a slow path as a [`Next`]; an error is boxed, so `Next` stays two words and
/// the hot path returns it in registers.
#[inline(always)]
fn settle(result: PyResult<Next<'_>>) -> Next<'_> {
    match result {
        Ok(next) => next,
        Err(err) => failed(err),
    }
}

#[cold]
fn failed<'py>(err: PyErr) -> Next<'py> {
    Next::Failed(Box::new(err))
}

/// An unset slot: getattr raises the AttributeError the generic path raises.
#[cold]
fn unset<'py>(value: &Obj<'py>, name: &Bound<'py, PyString>) -> PyResult<Next<'py>> {
    value.getattr(name).map(Next::Value)
}

/// Writes a borrowed field value with `write` when it is a plain value `rule` allows, else
/// returns it as an owned reference.
///
/// # Safety
/// `item` must be a live object, kept alive by the instance (or its dict) while `write` runs;
/// `write` runs no Python code, so the instance cannot change meanwhile.
#[inline(always)]
unsafe fn deliver<'py>(
    py: Python<'py>,
    item: *mut ffi::PyObject,
    rule: Option<PlainRule>,
    write: impl FnOnce(PlainValue<'_>) -> bool,
) -> Next<'py> {
    if let Some(rule) = rule {
        if let Some(plain) = plain_value(item, rule) {
            if write(plain) {
                return Next::Written;
            }
        }
    }
    Next::Value(Bound::from_borrowed_ptr(py, item))
}

/// `value` as a plain value when `rule` allows it.
///
/// # Safety
/// `value` must be a live object for as long as the returned value is used.
#[inline(always)]
unsafe fn plain_value<'a>(value: *mut ffi::PyObject, rule: PlainRule) -> Option<PlainValue<'a>> {
    if rule.nullable && value == ffi::Py_None() {
        return Some(PlainValue::None);
    }
    match rule.kind {
        Plain::Str => {
            if ffi::PyUnicode_CheckExact(value) == 0 {
                return None;
            }
            // ASCII is valid UTF-8, and the bytes live as long as the str.
            super::cpython::str_state::compact_ascii(value)
                .map(|bytes| PlainValue::Ascii(std::str::from_utf8_unchecked(bytes)))
        }
        Plain::Int => exact_int(value),
        Plain::Float => {
            if ffi::PyFloat_CheckExact(value) != 0 {
                return Some(PlainValue::Float(ffi::PyFloat_AS_DOUBLE(value)));
            }
            exact_int(value)
        }
        Plain::Bool => {
            if value == ffi::Py_True() {
                Some(PlainValue::Bool(true))
            } else if value == ffi::Py_False() {
                Some(PlainValue::Bool(false))
            } else {
                None
            }
        }
        Plain::DateTime => Some(PlainValue::DateTime(PlainDateTime {
            object: value,
            _borrowed: std::marker::PhantomData,
        })),
    }
}

/// `value` as a plain value when `rule` allows it, borrowed from `value` (a list's item, a
/// dict's value).
#[inline(always)]
pub fn plain_of<'a>(value: &'a Bound<'_, PyAny>, rule: PlainRule) -> Option<PlainValue<'a>> {
    // SAFETY: `value` is live for `'a`, which the returned value borrows.
    unsafe { plain_value(value.as_ptr(), rule) }
}

/// An exact int that fits in i64 (for an exact int, CPython's conversion calls no Python code).
///
/// # Safety
/// `value` must be a live object.
#[inline]
unsafe fn exact_int<'a>(value: *mut ffi::PyObject) -> Option<PlainValue<'a>> {
    if ffi::PyLong_CheckExact(value) == 0 {
        return None;
    }
    super::cpython::int_value(value).map(PlainValue::Int)
}

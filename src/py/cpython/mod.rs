//! The CPython room: everything polycodec reads or writes of CPython's own object layouts, in
//! one place. Nothing outside this module names an interpreter version.
//!
//! **Families.** The layouts are declared per *family* of interpreters whose headers agree,
//! one module each: [`v3_11`] (CPython 3.11), [`v3_13`] (3.13), [`v3_14`] (3.14 and 3.15) and
//! [`portable`] (anything else: no layout is read). `build.rs` picks the family from the
//! interpreter the extension is built for (`cfg(polycodec_room = "...")`), and each family
//! implements [`Family`], the contract: a family that lacks an item does not compile. What the
//! known families share is written once, in [`objects`] (instance creation, slot offsets),
//! [`dicts`] (the dict layout, the same in every known header) and [`str_state`]; where they
//! differ is their own module (3.11's values array before the object, 3.13's values after the
//! object header, 3.14's after the basic size: [`embedded`] for the latter two; big ints).
//!
//! **Layouts.** Each fast path is one [`Layout`], with a name (`_layouts()`, the switch):
//! `str_state`, `slot_offsets`, `slotted_creation`, `inline_values`, `dict_entries`,
//! `dict_template`, `wide_int`, `int_digits`. When the module loads, [`check_layouts`] runs the probe
//! ([`probe`]): for each layout the running interpreter's family knows, it builds known objects
//! through the layout and compares them with what the public API says (attributes, `vars()`,
//! `gc.is_tracked`, dict items and order, int values). A layout that disagrees is not used (the
//! portable path runs instead, never a misread), and why is recorded: `_layouts()` maps each
//! name to `"in use"` or the reason it is not.
//!
//! **The switch.** `POLYCODEC_PORTABLE` (read once, here, at module load: `all`, or a comma
//! list of layout names) turns layouts off, so that the tests can run every portable path on
//! an interpreter whose layouts pass.

#[cfg(not(polycodec_room = "portable"))]
pub mod dicts;
#[cfg(any(polycodec_room = "v3_13", polycodec_room = "v3_14"))]
pub mod embedded;
#[cfg(not(polycodec_room = "portable"))]
pub mod ints;
#[cfg(not(polycodec_room = "portable"))]
pub mod objects;
#[cfg(polycodec_room = "portable")]
pub mod portable;
mod probe;
pub mod str_state;
#[cfg(polycodec_room = "v3_11")]
pub mod v3_11;
#[cfg(polycodec_room = "v3_13")]
pub mod v3_13;
#[cfg(polycodec_room = "v3_14")]
pub mod v3_14;

#[cfg(polycodec_room = "portable")]
use portable as running;
#[cfg(polycodec_room = "v3_11")]
use v3_11 as running;
#[cfg(polycodec_room = "v3_13")]
use v3_13 as running;
#[cfg(polycodec_room = "v3_14")]
use v3_14 as running;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};

use crate::py::Obj;

/// Anything that names a record field by its interned attribute name: the plan's `Field`, or
/// the name itself (the floor diagnostic).
pub trait FieldName {
    fn field_name(&self) -> &Py<PyString>;
}

impl FieldName for Py<PyString> {
    #[inline(always)]
    fn field_name(&self) -> &Py<PyString> {
        self
    }
}

/// What one family of interpreters provides: every item a fast path needs, each either read
/// from the family's own layout or `None` (the portable path) where the family knows none.
pub trait Family {
    /// The interpreters the family's layouts come from, for `_layouts()`'s reasons.
    const NAME: &'static str;
    /// The layouts the family reads (the others are reported as unknown here).
    const KNOWN: &'static [Layout];
    /// A plain class's instance values (`inline_values`).
    type InlineValues: InlineValuesLayout;
    /// A record dict's template (`dict_template`).
    type DictTemplate: DictTemplateLayout;

    /// `object.__new__(cls)` for a class without an instance dict whose `tp_new` is
    /// `object.__new__`, done directly (`slotted_creation`); `None`: call `object.__new__`.
    fn allocate_plain<'py>(
        py: Python<'py>,
        type_ptr: *mut ffi::PyTypeObject,
    ) -> Option<PyResult<Obj<'py>>>;

    /// A `slots=True` instance made with its slots written (`slotted_creation`); `None`: take
    /// `object.__new__` and the stores.
    fn create_slotted<'py>(
        cls: &Bound<'py, PyType>,
        offsets: &[usize],
        values: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>>;

    /// The byte offset of the object slot a member descriptor describes (`slot_offsets`).
    ///
    /// # Safety
    /// `descriptor`'s type is exactly `PyMemberDescr_Type`.
    unsafe fn member_offset(
        cls: &Bound<'_, PyType>,
        descriptor: &Bound<'_, PyAny>,
        name: &Bound<'_, PyString>,
    ) -> Option<usize>;

    /// A dict's next entry read from its table (`dict_entries`), as [`dicts::next_entry`]
    /// gives it; `None`: call `PyDict_Next`.
    ///
    /// # Safety
    /// `dict` is a live dict (or subclass) and the GIL is held.
    #[allow(clippy::type_complexity)]
    unsafe fn next_dict_entry(
        dict: *mut ffi::PyObject,
        position: &mut ffi::Py_ssize_t,
    ) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>>;

    /// An exact dict's entries as (key, value) pairs and their count, when every key is an
    /// exact str (`dict_entries`, see [`dicts::str_keyed_entries`]); `None`: walk it entry by
    /// entry.
    ///
    /// # Safety
    /// `dict` is a live exact dict, the GIL is held, and no Python code runs while the
    /// entries are read.
    #[allow(clippy::type_complexity)]
    unsafe fn str_keyed_entries(
        dict: *mut ffi::PyObject,
    ) -> Option<(*const [*mut ffi::PyObject; 2], usize)>;

    /// The int of `value` (at least 2**64) made from its digits (`wide_int`); `None`: PyO3's
    /// conversion.
    fn wide_int(py: Python<'_>, value: u128) -> Option<PyResult<Obj<'_>>>;

    /// The value of an int of at most two digits, read from them (`int_digits`, see
    /// [`ints`]); `None`: a longer int, or a family that reads none (the caller asks the API).
    ///
    /// # Safety
    /// `value` is a live int (`PyLong_Check` holds) and the interpreter's digits are 30 bits
    /// in 32 (checked with the layout).
    unsafe fn int_digits(value: *mut ffi::PyObject) -> Option<i64>;
}

/// Where each field of a plain dataclass lives in its instances' values, per family.
pub trait InlineValuesLayout: Sized {
    /// The indices of `names` for instances of `cls` (found by storing into a probe instance),
    /// or `None` when the class does not keep them all where this layout reads them.
    fn probe_class(cls: &Bound<'_, PyType>, names: &[Py<PyString>]) -> PyResult<Option<Self>>;

    /// A new instance of `cls` holding `items` (by field index, taken; an absent one leaves its
    /// field unset), made in one step; `None`: take `object.__new__` and [`Self::fill`].
    fn create<'py>(
        &self,
        cls: &Bound<'py, PyType>,
        items: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>>;

    /// Stores the values given (by field index) into a new instance; false when the instance
    /// needs the portable path.
    fn fill<'py>(
        &self,
        instance: &Obj<'py>,
        fields: &[impl FieldName],
        values: &mut [Option<Obj<'py>>],
    ) -> PyResult<bool>;

    /// Stores field `index` of a new instance, or hands the value back for the portable path.
    fn store<'py>(
        &self,
        instance: &Obj<'py>,
        index: usize,
        value: Obj<'py>,
    ) -> Result<(), Obj<'py>>;

    /// The value slots of `instance` when its fields can be read with [`Self::read_from`].
    fn readable_values(&self, instance: &Obj<'_>) -> Option<*mut *mut ffi::PyObject>;

    /// Field `index`, borrowed from `values`; `None` when its slot is empty.
    ///
    /// # Safety
    /// `values` comes from [`Self::readable_values`] for the instance read, with no Python
    /// code run since.
    unsafe fn read_from(
        &self,
        values: *mut *mut ffi::PyObject,
        index: usize,
    ) -> Option<*mut ffi::PyObject>;
}

/// A record dict's template: a dict of the record's keys, copied and filled by position.
pub trait DictTemplateLayout: Sized + Send + Sync {
    /// A copy being filled.
    type Filling<'py>: FillingLayout<'py>;

    /// The template of a dict of `keys` (exact, distinct strs), or `None` when the made dict
    /// is not one whose copies this layout fills.
    fn build(py: Python<'_>, keys: &[Bound<'_, PyString>]) -> Option<Self>;

    /// A copy of the template, to be filled.
    fn copy<'py>(&self, py: Python<'py>) -> PyResult<Self::Filling<'py>>;

    /// A copy of `dict` (an exact dict of exact str keys), to have values replaced by position
    /// (in its entry order); `None` when `dict`'s table is not one whose copies this layout
    /// fills (the caller then fills a new dict key by key).
    fn copy_of<'py>(dict: &Bound<'py, PyDict>) -> Option<PyResult<Self::Filling<'py>>>;
}

/// A copy of a template whose values are being replaced.
pub trait FillingLayout<'py> {
    /// Stores `value` as the value of the entry at `position` (in the template's key order).
    fn put(&mut self, position: usize, value: Obj<'py>);
    /// The filled dict.
    fn finish(self) -> Obj<'py>;
    /// The dict being filled (for an entry to delete, a field that is absent).
    fn dict(&self) -> &Obj<'py>;
    /// The key and value of the entry at `position` (a copy's, before it is replaced).
    fn entry(&self, position: usize) -> (Obj<'py>, Obj<'py>);
    /// The number of entries.
    fn len(&self) -> usize;
}

/// The running family's layouts.
type Running = running::Layouts;

/// A plain class's instance values, as the running family lays them out.
pub type InlineValues = <Running as Family>::InlineValues;
/// A record dict's template, as the running family lays it out.
pub type DictTemplate = <Running as Family>::DictTemplate;
/// A copy of a [`DictTemplate`] being filled.
pub type Filling<'py> = <DictTemplate as DictTemplateLayout>::Filling<'py>;

/// A fast path that reads a private layout, by the name `_layouts()` and the switch use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A str's state bits and character buffer ([`str_state`]).
    StrState,
    /// A slot's byte offset, read from its member descriptor, and fields read and stored there.
    SlotOffsets,
    /// A `slots=True` instance allocated and written in one step.
    SlottedCreation,
    /// A plain instance's attribute values, written when it is made and read when encoded.
    InlineValues,
    /// A dict's entries read from its table (`from_builtins`).
    DictEntries,
    /// Record dicts copied from a template and filled by position (`to_builtins`).
    DictTemplate,
    /// An int beyond 64 bits made from its digits (a UUID's `int`).
    WideInt,
    /// An int's value read from its digits (every int an encoder writes).
    IntDigits,
}

impl Layout {
    /// Every layout, in `_layouts()`'s order.
    pub const ALL: [Layout; 8] = [
        Layout::StrState,
        Layout::SlotOffsets,
        Layout::SlottedCreation,
        Layout::InlineValues,
        Layout::DictEntries,
        Layout::DictTemplate,
        Layout::WideInt,
        Layout::IntDigits,
    ];

    /// The name `_layouts()` and `POLYCODEC_PORTABLE` use.
    pub fn name(self) -> &'static str {
        match self {
            Layout::StrState => "str_state",
            Layout::SlotOffsets => "slot_offsets",
            Layout::SlottedCreation => "slotted_creation",
            Layout::InlineValues => "inline_values",
            Layout::DictEntries => "dict_entries",
            Layout::DictTemplate => "dict_template",
            Layout::WideInt => "wide_int",
            Layout::IntDigits => "int_digits",
        }
    }
}

/// Whether each [`Layout`] is in use (set once by [`check_layouts`]).
static IN_USE: [AtomicBool; Layout::ALL.len()] =
    [const { AtomicBool::new(false) }; Layout::ALL.len()];

/// Why each layout that is not in use is not (set once by [`check_layouts`]).
static WHY_NOT: OnceLock<Vec<String>> = OnceLock::new();

/// Whether `layout` is read directly: the running family knows it, it passed its check at
/// module load and `POLYCODEC_PORTABLE` did not turn it off.
#[inline(always)]
pub fn layout_in_use(layout: Layout) -> bool {
    IN_USE[layout as usize].load(Ordering::Relaxed)
}

/// The layouts `POLYCODEC_PORTABLE` names, and the names it gives that are no layout's.
fn switch() -> (Vec<Layout>, Vec<String>) {
    let Ok(value) = std::env::var("POLYCODEC_PORTABLE") else {
        return (Vec::new(), Vec::new());
    };
    let mut off = Vec::new();
    let mut unknown = Vec::new();
    for item in value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
    {
        match Layout::ALL.iter().find(|layout| layout.name() == item) {
            _ if item == "all" => off.extend(Layout::ALL),
            Some(&layout) => off.push(layout),
            None => unknown.push(item.to_owned()),
        }
    }
    (off, unknown)
}

/// Reads `POLYCODEC_PORTABLE` and checks every layout the running family knows against the
/// running interpreter; called once, from the module's initialisation, before any codec
/// exists. A name the switch gives that is no layout's is warned about.
pub fn check_layouts(py: Python<'_>) -> PyResult<()> {
    let (off, unknown) = switch();
    if !unknown.is_empty() {
        let names: Vec<&str> = Layout::ALL.iter().map(|layout| layout.name()).collect();
        let message = format!(
            "POLYCODEC_PORTABLE names no layout {}: it takes \"all\" or a comma list of {}",
            unknown.join(", "),
            names.join(", ")
        );
        let message = std::ffi::CString::new(message).unwrap_or_default();
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(),
            &message,
            1,
        )?;
    }
    let mut reasons = Vec::with_capacity(Layout::ALL.len());
    let mut probe = None;
    for layout in Layout::ALL {
        IN_USE[layout as usize].store(false, Ordering::Relaxed);
        let verdict = if off.contains(&layout) {
            Err("turned off by POLYCODEC_PORTABLE".to_owned())
        } else if !<Running as Family>::KNOWN.contains(&layout) {
            Err(format!(
                "not known for this interpreter ({})",
                <Running as Family>::NAME
            ))
        } else if cfg!(target_endian = "big") {
            Err("not known for a big-endian machine".to_owned())
        } else {
            probe
                .get_or_insert_with(|| probe::Probe::new(py))
                .check(layout)
                .map_err(|why| format!("failed its check: {why}"))
        };
        IN_USE[layout as usize].store(verdict.is_ok(), Ordering::Relaxed);
        reasons.push(verdict.err().unwrap_or_default());
    }
    // Set once: a second initialisation (a subinterpreter) finds the same interpreter.
    let _ = WHY_NOT.set(reasons);
    Ok(())
}

/// Each layout's name and `"in use"`, or why it is not; for the tests. Not an API.
#[pyfunction]
pub fn _layouts(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let layouts = PyDict::new(py);
    let reasons = WHY_NOT.get();
    for layout in Layout::ALL {
        let why = match reasons.map(|all| all[layout as usize].as_str()) {
            _ if layout_in_use(layout) => "in use",
            Some(why) if !why.is_empty() => why,
            _ => "not checked",
        };
        layouts.set_item(layout.name(), why)?;
    }
    Ok(layouts)
}

// The fast paths as the rest of the crate calls them: each gated by its layout's check.

/// `object.__new__(cls)` done directly for a class without an instance dict whose `tp_new` is
/// `object.__new__` (see [`Family::allocate_plain`]); `None`: call `object.__new__`.
#[inline(always)]
pub fn allocate_plain<'py>(
    py: Python<'py>,
    type_ptr: *mut ffi::PyTypeObject,
) -> Option<PyResult<Obj<'py>>> {
    if !layout_in_use(Layout::SlottedCreation) {
        return None;
    }
    Running::allocate_plain(py, type_ptr)
}

/// A `slots=True` instance made with its slots written, for a plan built while
/// `slotted_creation` was in use (the field access records that); `None`: the stores.
#[inline(always)]
pub fn create_slotted<'py>(
    cls: &Bound<'py, PyType>,
    offsets: &[usize],
    values: &mut [Option<Obj<'py>>],
) -> Option<PyResult<Obj<'py>>> {
    Running::create_slotted(cls, offsets, values)
}

/// The byte offset of the object slot `name` a member descriptor of `cls` describes, when
/// `slot_offsets` is in use.
///
/// # Safety
/// `descriptor`'s type is exactly `PyMemberDescr_Type`.
#[inline]
pub unsafe fn member_offset(
    cls: &Bound<'_, PyType>,
    descriptor: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
) -> Option<usize> {
    if !layout_in_use(Layout::SlotOffsets) {
        return None;
    }
    // SAFETY: the caller's member descriptor.
    unsafe { Running::member_offset(cls, descriptor, name) }
}

/// The next entry of `dict` read from its table (see [`Family::next_dict_entry`]), when
/// `dict_entries` is in use; `None`: call `PyDict_Next`.
///
/// # Safety
/// `dict` is a live dict (or subclass) and the GIL is held.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub unsafe fn next_dict_entry(
    dict: *mut ffi::PyObject,
    position: &mut ffi::Py_ssize_t,
) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>> {
    if !layout_in_use(Layout::DictEntries) {
        return None;
    }
    // SAFETY: the caller's live dict, under the GIL.
    unsafe { Running::next_dict_entry(dict, position) }
}

/// An exact dict's (key, value) entries and their count when every key is an exact str,
/// when `dict_entries` is in use (see [`Family::str_keyed_entries`]).
///
/// # Safety
/// `dict` is a live exact dict, the GIL is held, and no Python code runs while the entries
/// are read.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub unsafe fn str_keyed_entries(
    dict: *mut ffi::PyObject,
) -> Option<(*const [*mut ffi::PyObject; 2], usize)> {
    if !layout_in_use(Layout::DictEntries) {
        return None;
    }
    // SAFETY: the caller's live exact dict, under the GIL, no Python code running.
    unsafe { Running::str_keyed_entries(dict) }
}

/// The int of `value` (at least 2**64) made from its digits, when `wide_int` is in use.
#[inline]
pub fn wide_int(py: Python<'_>, value: u128) -> Option<PyResult<Obj<'_>>> {
    if !layout_in_use(Layout::WideInt) {
        return None;
    }
    Running::wide_int(py, value)
}

/// The value of `value`, an int (of any int type), when it fits 64 bits: read from its digits
/// where `int_digits` is in use and the int has at most two, else through
/// `PyLong_AsLongLongAndOverflow`; `None` when it does not fit.
///
/// # Safety
/// `value` is a live int (`PyLong_Check` holds).
#[inline(always)]
pub unsafe fn int_value(value: *mut ffi::PyObject) -> Option<i64> {
    if layout_in_use(Layout::IntDigits) {
        // SAFETY: the caller's live int; the layout passed its check.
        if let Some(number) = unsafe { Running::int_digits(value) } {
            return Some(number);
        }
    }
    // SAFETY: the caller's live int.
    unsafe { api_int_value(value) }
}

/// [`int_value`] through the API.
///
/// # Safety
/// As [`int_value`].
#[inline(never)]
unsafe fn api_int_value(value: *mut ffi::PyObject) -> Option<i64> {
    let mut overflow = 0;
    // SAFETY: the caller's live int: the conversion reads its digits and runs no Python code
    // (it calls `__index__` only for a value that is not an int).
    let number = unsafe { ffi::PyLong_AsLongLongAndOverflow(value, &mut overflow) };
    (overflow == 0).then_some(number)
}

/// The inline values of a plain dataclass `cls` with fields `names`, when `inline_values` is
/// in use and the class keeps them there.
pub fn inline_values(
    cls: &Bound<'_, PyType>,
    names: &[Py<PyString>],
) -> PyResult<Option<InlineValues>> {
    if !layout_in_use(Layout::InlineValues) {
        return Ok(None);
    }
    InlineValues::probe_class(cls, names)
}

/// A copy of `dict` whose values are then replaced by position (see
/// [`DictTemplateLayout::copy_of`]), when `dict_template` is in use.
#[inline]
pub fn dict_copy_of<'py>(dict: &Bound<'py, PyDict>) -> Option<PyResult<Filling<'py>>> {
    if !layout_in_use(Layout::DictTemplate) {
        return None;
    }
    DictTemplate::copy_of(dict)
}

/// The template of a record dict of `keys`, when `dict_template` is in use.
pub fn dict_template(py: Python<'_>, keys: &[Bound<'_, PyString>]) -> Option<DictTemplate> {
    if !layout_in_use(Layout::DictTemplate) {
        return None;
    }
    DictTemplate::build(py, keys)
}

//! The CPython fast paths: the one place where polycodec calls the C API directly.
//!
//! Everything here is a small safe function over `Bound` objects; the `unsafe` blocks are kept to
//! what PyO3's safe API cannot do as fast (building an ASCII str with one copy, allocating an
//! instance without running `__init__`, setting an attribute past a frozen class's `__setattr__`).

pub mod ascii;
pub mod builders;
pub mod bytearray;
pub mod cpython;
pub mod defaults;
pub mod entry;
pub mod fields;
pub mod floor;
pub mod json_shape;
pub mod keys;
pub mod output;
pub mod shapes;
pub mod temporal;

use std::ptr::NonNull;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

/// An owned Python object.
pub type Obj<'py> = Bound<'py, PyAny>;

/// A new str of the ASCII text `buf[..length]`, for the short texts of the text forms (dates,
/// datetimes, UUIDs) written into a stack buffer: the copy into the str is made of fixed
/// 16-byte pieces (the last one overlapping the one before), with no call of `memcpy`.
/// `length` must be at least 16 and at most `N`; `buf[..length]` must be ASCII.
#[inline(always)]
pub fn ascii_str_from<'py, const N: usize>(
    py: Python<'py>,
    buf: &[u8; N],
    length: usize,
) -> PyResult<Obj<'py>> {
    const { assert!(N >= 16 && N <= 48) };
    debug_assert!((16..=N).contains(&length) && buf[..length].is_ascii());
    let length = length.clamp(16, N);
    // SAFETY: PyUnicode_New returns a new reference (or NULL with an exception set), checked.
    let raw = unsafe { ffi::PyUnicode_New(length as ffi::Py_ssize_t, 127) };
    let Some(raw) = NonNull::new(raw) else {
        return Err(PyErr::fetch(py));
    };
    // SAFETY: a fresh maxchar-127 str is compact ASCII: its 1-byte buffer of exactly `length`
    // bytes (plus its terminating NUL, already written) follows the PyASCIIObject header (as
    // PyUnicode_DATA finds it for such a str); each 16-byte piece lies within both `buf` and
    // that buffer, since 16 <= length <= N <= 48 (so three pieces cover it, the second only
    // past 32 bytes; a loop here would be made a call of `memcpy`); the caller's bytes are
    // ASCII.
    unsafe {
        let data = cpython::str_state::fresh_ascii_buffer(raw.as_ptr());
        std::ptr::copy_nonoverlapping(buf.as_ptr(), data, 16);
        if length > 32 {
            std::ptr::copy_nonoverlapping(buf.as_ptr().add(16), data.add(16), 16);
        }
        let last = length - 16;
        std::ptr::copy_nonoverlapping(buf.as_ptr().add(last), data.add(last), 16);
        Ok(Bound::from_owned_ptr(py, raw.as_ptr()))
    }
}

/// A new str of the ASCII text `buf` (of a fixed length, at least 2 bytes: a date, a UUID).
#[inline(always)]
pub fn ascii_str_exact<'py, const N: usize>(py: Python<'py>, buf: &[u8; N]) -> PyResult<Obj<'py>> {
    if N < 2 {
        return new_str(py, buf, true);
    }
    // SAFETY: PyUnicode_New returns a new reference (or NULL with an exception set), checked.
    let raw = unsafe { ffi::PyUnicode_New(N as ffi::Py_ssize_t, 127) };
    let Some(raw) = NonNull::new(raw) else {
        return Err(PyErr::fetch(py));
    };
    // SAFETY: a fresh maxchar-127 str of length N has a 1-byte buffer of N bytes; the
    // caller's bytes are ASCII.
    unsafe {
        std::ptr::copy_nonoverlapping(
            buf.as_ptr(),
            cpython::str_state::fresh_ascii_buffer(raw.as_ptr()),
            N,
        );
        Ok(Bound::from_owned_ptr(py, raw.as_ptr()))
    }
}

/// Builds a `str` from UTF-8 bytes a reader has validated. `ascii` (every byte < 0x80, known
/// to the reader) lets CPython's compact ASCII layout be filled with a single copy.
#[inline(always)]
pub fn new_str<'py>(py: Python<'py>, bytes: &[u8], ascii: bool) -> PyResult<Obj<'py>> {
    let length = bytes.len() as ffi::Py_ssize_t;
    if !ascii || bytes.len() <= 1 {
        // CPython's decoder returns its shared objects for "" and one-character strs.
        // SAFETY: the pointer and length describe `bytes`; CPython copies and validates them.
        let raw =
            unsafe { ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), length, std::ptr::null()) };
        // SAFETY: a new reference or NULL with an exception set.
        return unsafe { Bound::from_owned_ptr_or_err(py, raw) };
    }
    // SAFETY: PyUnicode_New returns a new reference (or NULL with an exception set), checked below.
    let raw = unsafe { ffi::PyUnicode_New(length, 127) };
    let Some(raw) = NonNull::new(raw) else {
        return Err(PyErr::fetch(py));
    };
    // SAFETY: a fresh maxchar-127 str has a 1-byte buffer of exactly `length` bytes, and the
    // bytes are ASCII; a short text is copied in pieces that write nothing past its length.
    unsafe {
        let buffer = cpython::str_state::fresh_ascii_buffer(raw.as_ptr());
        if bytes.len() <= ascii::SHORT {
            ascii::fill(buffer, bytes);
        } else {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer, bytes.len());
        }
        Ok(Bound::from_owned_ptr(py, raw.as_ptr()))
    }
}

/// `bytes` from input-sized data. PyO3's `PyBytes::new` panics when the allocation fails;
/// here a failed allocation is the MemoryError CPython set.
#[inline]
pub fn new_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    // SAFETY: the pointer and length describe `data`, which CPython copies.
    let raw = unsafe {
        ffi::PyBytes_FromStringAndSize(data.as_ptr().cast(), data.len() as ffi::Py_ssize_t)
    };
    // SAFETY: a new reference to a bytes object, or NULL with an exception set.
    Ok(unsafe { Bound::from_owned_ptr_or_err(py, raw)?.cast_into_unchecked() })
}

/// `bytearray` from input-sized data; a failed allocation is a MemoryError (see [`new_bytes`]).
#[inline]
pub fn new_bytearray<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Obj<'py>> {
    // SAFETY: the pointer and length describe `data`, which CPython copies.
    let raw = unsafe {
        ffi::PyByteArray_FromStringAndSize(data.as_ptr().cast(), data.len() as ffi::Py_ssize_t)
    };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, raw) }
}

/// An `int`; a failed allocation is a MemoryError (PyO3's conversion panics).
#[inline(always)]
pub fn new_int(py: Python<'_>, value: i64) -> PyResult<Obj<'_>> {
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromLongLong(value)) }
}

/// A `float`; a failed allocation is a MemoryError (PyO3's `PyFloat::new` panics).
#[inline(always)]
pub fn new_float(py: Python<'_>, value: f64) -> PyResult<Obj<'_>> {
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyFloat_FromDouble(value)) }
}

/// An empty `dict`; a failed allocation is a MemoryError (PyO3's `PyDict::new` panics).
#[inline]
pub fn new_dict(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    // SAFETY: a new reference to a dict, or NULL with an exception set.
    Ok(unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyDict_New())?.cast_into_unchecked() })
}

/// A new empty `list`; a failed allocation is a MemoryError.
#[inline]
pub fn new_empty_list(py: Python<'_>) -> PyResult<Obj<'_>> {
    // SAFETY: a new reference to an empty list, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(0)) }
}

/// A list holding `items`; a failed allocation is a MemoryError (PyO3's `PyList::new` panics).
#[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
pub fn new_list<'py>(
    py: Python<'py>,
    items: impl ExactSizeIterator<Item = Obj<'py>>,
) -> PyResult<Obj<'py>> {
    let length = items.len();
    // SAFETY: a new list with NULL slots, or NULL with an exception set.
    let list =
        unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(length as ffi::Py_ssize_t))? };
    let mut filled = 0;
    for item in items.take(length) {
        // SAFETY: slot `filled` is in bounds and empty; SET_ITEM takes over the reference.
        unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), filled as ffi::Py_ssize_t, item.into_ptr()) };
        filled += 1;
    }
    if filled < length {
        // An iterator shorter than it said: drop the empty slots (list_dealloc accepts them).
        // SAFETY: the list is ours and not yet shared; SetSlice shrinks it.
        let status = unsafe {
            ffi::PyList_SetSlice(
                list.as_ptr(),
                filled as ffi::Py_ssize_t,
                length as ffi::Py_ssize_t,
                std::ptr::null_mut(),
            )
        };
        if status < 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(list)
}

/// A tuple holding `items`; a failed allocation is a MemoryError (PyO3's `PyTuple::new` panics).
pub fn new_tuple<'py>(
    py: Python<'py>,
    items: impl ExactSizeIterator<Item = Obj<'py>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let length = items.len();
    // SAFETY: a new tuple with NULL slots, or NULL with an exception set.
    let tuple =
        unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(length as ffi::Py_ssize_t))? };
    let mut filled = 0;
    for item in items.take(length) {
        // SAFETY: slot `filled` is in bounds and empty; SET_ITEM takes over the reference.
        unsafe {
            ffi::PyTuple_SET_ITEM(tuple.as_ptr(), filled as ffi::Py_ssize_t, item.into_ptr())
        };
        filled += 1;
    }
    if filled < length {
        // An iterator shorter than it said (never for the Vecs the decoders pass): the tuple,
        // whose empty slots tuple_dealloc accepts, is dropped unseen.
        return Err(PyTypeError::new_err(
            "internal: tuple items fewer than announced",
        ));
    }
    // SAFETY: the object was created as a tuple just above.
    Ok(unsafe { tuple.cast_into_unchecked() })
}

/// A new empty set (with `frozen`, an empty frozenset, which [`set_add`] fills while it is
/// unshared).
pub fn new_empty_set(py: Python<'_>, frozen: bool) -> PyResult<Obj<'_>> {
    // SAFETY: a new empty set or frozenset, or NULL with an exception set.
    let raw = unsafe {
        if frozen {
            ffi::PyFrozenSet_New(std::ptr::null_mut())
        } else {
            ffi::PySet_New(std::ptr::null_mut())
        }
    };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, raw) }
}

/// Adds `item` to `set` (a set, or a frozenset made by [`new_empty_set`] and not yet shared).
/// Hashing the item may run Python code.
#[inline]
pub fn set_add(set: &Obj<'_>, item: &Obj<'_>) -> PyResult<()> {
    // SAFETY: both are live objects; PySet_Add fills a frozenset too while it is unshared.
    if unsafe { ffi::PySet_Add(set.as_ptr(), item.as_ptr()) } < 0 {
        return Err(PyErr::fetch(set.py()));
    }
    Ok(())
}

/// A str for a dict key, from the key cache ([`keys`]) when the same short key was seen.
#[inline]
pub fn dict_key_str<'py>(py: Python<'py>, bytes: &[u8], ascii: bool) -> PyResult<Obj<'py>> {
    keys::cached_key(py, bytes, ascii)
}

/// The exact builtin type of a value, for the untyped walks' dispatch (instances of
/// subclasses are `Other`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Builtin {
    Str,
    Int,
    Float,
    Bool,
    None,
    Dict,
    List,
    Other,
}

/// The exact builtin type of `value`, found by its type pointer, in the order untyped data
/// holds them most.
#[inline(always)]
pub fn builtin(value: &Bound<'_, PyAny>) -> Builtin {
    let tp = value.get_type_ptr();
    // SAFETY: only the addresses of CPython's static type objects are taken, never read.
    unsafe {
        if tp == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
            Builtin::Str
        } else if tp == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
            Builtin::Int
        } else if tp == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
            Builtin::Float
        } else if tp == std::ptr::addr_of_mut!(ffi::PyBool_Type) {
            Builtin::Bool
        } else if value.as_ptr() == ffi::Py_None() {
            Builtin::None
        } else if tp == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
            Builtin::Dict
        } else if tp == std::ptr::addr_of_mut!(ffi::PyList_Type) {
            Builtin::List
        } else {
            Builtin::Other
        }
    }
}

/// The characters of `text` when it is a compact ASCII str (its UTF-8 bytes), else `None`.
#[inline(always)]
pub fn ascii_bytes<'a>(text: &'a Bound<'_, PyString>) -> Option<&'a [u8]> {
    // SAFETY: a live str, borrowed for as long as the returned bytes.
    unsafe { cpython::str_state::compact_ascii(text.as_ptr()) }
}

/// The length of `text` when it is a compact ASCII str (then its length in characters is its
/// length in bytes, and it has no surrogates), else `None`.
#[inline(always)]
pub fn ascii_len(text: &Bound<'_, PyString>) -> Option<usize> {
    // SAFETY: a live str, borrowed for the call.
    unsafe { cpython::str_state::compact_ascii(text.as_ptr()) }.map(<[u8]>::len)
}

/// A str's UTF-8 view. A compact ASCII str is read straight from its buffer (the common case:
/// no call into CPython); any other str through CPython's cached UTF-8 form.
#[inline]
pub fn str_utf8<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    // SAFETY: a live str, borrowed for as long as the returned bytes.
    if let Some(bytes) = unsafe { cpython::str_state::compact_ascii(text.as_ptr()) } {
        // SAFETY: ASCII is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    text.to_str()
}

/// An item of a list by index, or `None` past its current end (user code may shrink a list
/// while it is being encoded, so the length is read again each time).
#[inline]
pub fn list_item<'py>(list: &Bound<'py, PyList>, index: usize) -> Option<Obj<'py>> {
    // SAFETY: `list` is a live list; its size is read before the item, under the GIL.
    unsafe {
        if index >= ffi::PyList_GET_SIZE(list.as_ptr()) as usize {
            return None;
        }
        let item = ffi::PyList_GET_ITEM(list.as_ptr(), index as ffi::Py_ssize_t);
        Some(Bound::from_borrowed_ptr(list.py(), item))
    }
}

/// Item `index` of `list`, borrowed from it (no reference taken), or `None` past its end. The
/// caller runs no Python code while it holds the item, so the list keeps it alive.
#[inline(always)]
pub fn list_item_borrowed<'a, 'py>(
    list: &'a Bound<'py, PyList>,
    index: usize,
) -> Option<pyo3::Borrowed<'a, 'py, PyAny>> {
    // SAFETY: `list` is a live list; its size is read before the item, under the GIL; the item
    // is a non-NULL reference the list holds for as long as `'a` keeps the list borrowed.
    unsafe {
        if index >= ffi::PyList_GET_SIZE(list.as_ptr()) as usize {
            return None;
        }
        let item = ffi::PyList_GET_ITEM(list.as_ptr(), index as ffi::Py_ssize_t);
        Some(pyo3::Borrowed::from_ptr(list.py(), item))
    }
}

/// Item `index` of `tuple`, borrowed from it (no reference taken), or `None` past its end. A
/// tuple's items cannot change, so the tuple keeps the item alive while the caller holds it.
#[inline(always)]
pub fn tuple_item_borrowed<'a, 'py>(
    tuple: &'a Bound<'py, PyTuple>,
    index: usize,
) -> Option<pyo3::Borrowed<'a, 'py, PyAny>> {
    // SAFETY: `tuple` is a live tuple; the index is checked against its size; the item is a
    // non-NULL reference the tuple holds for as long as `'a` keeps the tuple borrowed.
    unsafe {
        if index >= ffi::PyTuple_GET_SIZE(tuple.as_ptr()) as usize {
            return None;
        }
        let item = ffi::PyTuple_GET_ITEM(tuple.as_ptr(), index as ffi::Py_ssize_t);
        Some(pyo3::Borrowed::from_ptr(tuple.py(), item))
    }
}

/// The number of code points in a UTF-8 string (length constraints count characters, as Python does).
#[inline]
pub fn char_count(text: &str, ascii: bool) -> usize {
    if ascii {
        text.len()
    } else {
        text.chars().count()
    }
}

/// The type's qualified name, for error messages.
pub fn type_name(value: &Obj<'_>) -> String {
    value
        .get_type()
        .qualname()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

/// Reads an int as i64; `None` when it does not fit (the caller falls back to its text form).
#[inline]
pub fn int_as_i64(value: &Obj<'_>) -> Option<i64> {
    // SAFETY: a live object, checked to be an int (so no Python code runs).
    if unsafe { ffi::PyLong_Check(value.as_ptr()) } != 0 {
        // SAFETY: as above.
        return unsafe { cpython::int_value(value.as_ptr()) };
    }
    let mut overflow: std::os::raw::c_int = 0;
    // SAFETY: `value` is a live int (callers check PyLong first); the call only reads it.
    let result = unsafe { ffi::PyLong_AsLongLongAndOverflow(value.as_ptr(), &mut overflow) };
    if overflow != 0 {
        return None;
    }
    if result == -1 && PyErr::occurred(value.py()) {
        PyErr::take(value.py());
        return None;
    }
    Some(result)
}

/// The empty argument tuple `tp_new` is called with, made once (rather than a new reference
/// to CPython's empty tuple taken and released for every instance).
static EMPTY_ARGS: PyOnceLock<Py<PyTuple>> = PyOnceLock::new();

/// Creates an instance of `cls` without calling `__init__` (the type's `tp_new` with no arguments,
/// which for a dataclass is `object.__new__`). Fields are then set one by one.
#[inline]
pub fn new_instance<'py>(cls: &Bound<'py, PyType>) -> PyResult<Obj<'py>> {
    let py = cls.py();
    let type_ptr = cls.as_type_ptr();
    // SAFETY: type_ptr is a live type object; tp_new is read once.
    let Some(tp_new) = (unsafe { (*type_ptr).tp_new }) else {
        return Err(PyTypeError::new_err(
            "cannot create instances of this class",
        ));
    };
    let empty = EMPTY_ARGS.get_or_init(py, || PyTuple::empty(py).unbind());
    // SAFETY: tp_new is called with a valid type, an argument tuple (borrowed: the static keeps
    // it) and no keywords, and returns a new reference or NULL with an exception set.
    let create = || unsafe {
        Bound::from_owned_ptr_or_err(py, tp_new(type_ptr, empty.as_ptr(), std::ptr::null_mut()))
    };
    // SAFETY: reading a slot of the static base type `object`, never written after startup.
    let object_new = unsafe { (*std::ptr::addr_of!(ffi::PyBaseObject_Type)).tp_new };
    // CPython's own function pointers: equal exactly when the class did not override `__new__`.
    if object_new.is_some_and(|object_new| std::ptr::fn_addr_eq(tp_new, object_new)) {
        if let Some(instance) = cpython::allocate_plain(py, type_ptr) {
            return instance;
        }
        create()
    } else {
        new_instance_by_user_code(py, create)
    }
}

/// A class's own `__new__` is Python code (kept out of line: most classes have none).
#[cold]
#[inline(never)]
fn new_instance_by_user_code<'py>(
    py: Python<'py>,
    create: impl FnOnce() -> PyResult<Obj<'py>>,
) -> PyResult<Obj<'py>> {
    user_code(py, create)
}

/// Sets an attribute the way `object.__setattr__` does, so frozen dataclasses can be filled
/// (exactly what their generated `__init__` does) and slots are written through their descriptors.
#[inline]
pub fn set_field(instance: &Obj<'_>, name: &Bound<'_, PyString>, value: &Obj<'_>) -> PyResult<()> {
    // SAFETY: all three are live objects; GenericSetAttr borrows them and reports errors by -1.
    let status =
        unsafe { ffi::PyObject_GenericSetAttr(instance.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if status < 0 {
        Err(PyErr::fetch(instance.py()))
    } else {
        Ok(())
    }
}

/// The instance `__dict__` of an object that has one (created on first use, as attribute access
/// would), or `None` for slotted instances. Reading fields from it skips the per-attribute
/// descriptor lookup that `getattr` pays.
#[inline(always)]
pub fn instance_dict<'py>(value: &Obj<'py>) -> Option<Bound<'py, PyDict>> {
    // SAFETY: `value` is live; GenericGetDict returns a new reference or NULL with an exception.
    let raw = unsafe { ffi::PyObject_GenericGetDict(value.as_ptr(), std::ptr::null_mut()) };
    if raw.is_null() {
        PyErr::take(value.py());
        return None;
    }
    // SAFETY: a non-NULL result is a new reference to a dict.
    let dict = unsafe { Bound::from_owned_ptr(value.py(), raw) };
    dict.cast_into::<PyDict>().ok()
}

/// Pauses the cyclic garbage collector while it lives. Decoding allocates many container
/// objects that are all reachable from the result, so collections triggered halfway through
/// only traverse live objects; pausing saves that work.
///
/// The collector's state is shared by all threads, and another thread can run whenever this
/// one runs Python code (the GIL may switch there). So the pause is only in force while the
/// decoder runs its own Rust code: every call that may run Python code goes through
/// [`user_code`], which resumes the collector around it, and gives up the pause for good if
/// the collector was disabled meanwhile (by that code or another thread), so that the
/// decoder never re-enables a collector someone else disabled. An error gives up the pause
/// too ([`gc_give_up`]): unwinding drops partly built objects, whose `__del__` may run.
pub struct GcPause {
    /// Whether an enclosing decode on this thread held a pause (see [`user_code`]: it is
    /// never in force while a nested decode starts, but the flag is restored all the same).
    outer: bool,
}

thread_local! {
    /// Whether this thread's current decode paused the collector and owes its re-enabling.
    static GC_HELD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Inputs shorter than this decode with the collector left as it is ([`GcPause::for_input`]):
/// they build at most a few thousand objects, so a collection they trigger halfway costs about
/// what the one after the pause would, while pausing and resuming costs every call two calls
/// into CPython and four thread-local accesses (a tenth of a small record's decoding time).
pub const PAUSE_FROM_LEN: usize = 4096;

impl GcPause {
    /// A pause for decoding `len` bytes of input, or `None` for a short input (see
    /// [`PAUSE_FROM_LEN`]; without a pause, [`user_code`] and [`gc_give_up`] leave the collector
    /// alone, and a collection may run halfway, which decoding allows: objects under
    /// construction hold no dangling pointers, only null slots the collector skips).
    #[inline(always)]
    pub fn for_input(py: Python<'_>, len: usize) -> Option<Self> {
        if len < PAUSE_FROM_LEN {
            return None;
        }
        Some(GcPause::new(py))
    }

    #[cold]
    #[inline(never)]
    pub fn new(_py: Python<'_>) -> Self {
        let outer = GC_HELD.get();
        // SAFETY: the caller holds the GIL (the `Python` token); PyGC_Disable only flips a flag.
        let was_enabled = unsafe { ffi::PyGC_Disable() } == 1;
        GC_HELD.set(was_enabled);
        GcPause { outer }
    }
}

impl Drop for GcPause {
    #[cold]
    #[inline(never)]
    fn drop(&mut self) {
        if GC_HELD.get() {
            // SAFETY: created under the GIL and dropped in the same call, still holding it.
            unsafe { ffi::PyGC_Enable() };
        }
        GC_HELD.set(self.outer);
    }
}

/// Runs `call`, which may run Python code, with the collector as it would be without the
/// pause (see [`GcPause`]); the pause resumes afterwards unless the collector was disabled
/// meanwhile, in which case it is left disabled and this decode will not enable it.
#[inline]
pub fn user_code<R>(_py: Python<'_>, call: impl FnOnce() -> R) -> R {
    if !GC_HELD.get() {
        return call();
    }
    GC_HELD.set(false);
    // SAFETY: the GIL is held (the `Python` token); PyGC_Enable only flips a flag.
    unsafe { ffi::PyGC_Enable() };
    let result = call();
    // SAFETY: as above. 1: still enabled, so the pause resumes; 0: someone disabled it.
    if unsafe { ffi::PyGC_Disable() } == 1 {
        GC_HELD.set(true);
    }
    result
}

/// Why an operation of this layer failed where the crate's errors are made from it (the
/// output sinks of `output` and `bytearray`): a Python exception, or memory that ran out making
/// room for what it names. The crate's `errors::Error` takes either in as it is (`From`), the
/// same error as one made where the failure happened.
#[derive(Debug)]
pub enum Fault {
    Python(PyErr),
    OutOfMemory(&'static str),
}

impl From<PyErr> for Fault {
    #[cold]
    fn from(err: PyErr) -> Self {
        Fault::Python(err)
    }
}

impl Fault {
    /// The exception raised for it: the Python exception itself, or the MemoryError naming
    /// what memory ran out for ([`memory_error`]).
    #[cold]
    pub fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            Fault::Python(err) => err,
            Fault::OutOfMemory(what) => memory_error(py, what),
        }
    }
}

/// The MemoryError for memory that ran out making room for `what`: `cannot allocate memory for
/// <what>`, made by CPython, or when that finds no memory either, CPython's own preallocated
/// MemoryError. Nothing is allocated on the Rust heap, where memory has run out.
#[cold]
pub fn memory_error(py: Python<'_>, what: &str) -> PyErr {
    const PREFIX: &str = "cannot allocate memory for ";
    let made = new_str(py, PREFIX.as_bytes(), true)
        .and_then(|prefix| Ok((prefix, new_str(py, what.as_bytes(), what.is_ascii())?)))
        .and_then(|(prefix, what)| {
            // SAFETY: both are strs; Concat returns a new reference or NULL with an exception.
            let text = unsafe { ffi::PyUnicode_Concat(prefix.as_ptr(), what.as_ptr()) };
            // SAFETY: a new reference, or NULL with an exception set.
            let text = unsafe { Bound::from_owned_ptr_or_err(py, text)? };
            py.get_type::<pyo3::exceptions::PyMemoryError>()
                .call1((text,))
        });
    match made {
        Ok(error) => PyErr::from_value(error),
        Err(_) => {
            // SAFETY: sets CPython's error indicator to a MemoryError from its free list.
            unsafe { ffi::PyErr_NoMemory() };
            PyErr::fetch(py)
        }
    }
}

/// Ends this thread's pause for the rest of the decode (the collector is enabled again now):
/// called when an error starts unwinding, since the objects it drops may run `__del__`.
#[cold]
pub fn gc_give_up() {
    if GC_HELD.get() {
        GC_HELD.set(false);
        // SAFETY: a pause is only held by a decode running under the GIL on this thread,
        // and errors are created by that decode.
        unsafe { ffi::PyGC_Enable() };
    }
}

/// The next entry of a dict walk started at position 0, as owned references; `None` at the
/// end. Reading the entries with PyDict_Next directly skips the size checks PyO3's iterator
/// makes on every step; a dict changed by user code meanwhile ends or shortens the walk, it
/// never reads out of bounds.
#[inline]
pub fn next_entry<'py>(
    dict: &Bound<'py, PyDict>,
    position: &mut ffi::Py_ssize_t,
) -> Option<(Obj<'py>, Obj<'py>)> {
    next_entry_borrowed_key(dict, position).map(|(key, value)| (key.to_owned(), value))
}

/// The next entry of a dict walk started at position 0: its key borrowed (to be matched at
/// once, before any Python code can change the dict) and its value as an owned reference;
/// `None` at the end.
#[inline]
pub fn next_entry_borrowed_key<'a, 'py>(
    dict: &'a Bound<'py, PyDict>,
    position: &mut ffi::Py_ssize_t,
) -> Option<(pyo3::Borrowed<'a, 'py, PyAny>, Obj<'py>)> {
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: the dict is live; PyDict_Next bounds-checks `position` and returns borrowed
    // references; the value is increfed at once, the key stays borrowed from the dict.
    if unsafe { ffi::PyDict_Next(dict.as_ptr(), position, &mut key, &mut value) } == 0 {
        return None;
    }
    let py = dict.py();
    // SAFETY: both are non-NULL references held by the dict, which `'a` keeps borrowed.
    unsafe {
        Some((
            pyo3::Borrowed::from_ptr(py, key),
            Bound::from_borrowed_ptr(py, value),
        ))
    }
}

/// The next entry of a dict walk, key and value both borrowed from the dict (no references
/// taken); `None` at the end. The caller runs no Python code while it holds them, so the dict
/// keeps them alive.
#[inline(always)]
pub fn next_entry_borrowed<'a, 'py>(
    dict: &'a Bound<'py, PyDict>,
    position: &mut ffi::Py_ssize_t,
) -> Option<(
    pyo3::Borrowed<'a, 'py, PyAny>,
    pyo3::Borrowed<'a, 'py, PyAny>,
)> {
    let py = dict.py();
    // SAFETY: the dict is live and the GIL held (the `py` token).
    if let Some(found) = unsafe { cpython::next_dict_entry(dict.as_ptr(), position) } {
        let (key, value) = found?;
        // SAFETY: both are non-NULL references held by the dict's table.
        return unsafe {
            Some((
                pyo3::Borrowed::from_ptr(py, key),
                pyo3::Borrowed::from_ptr(py, value),
            ))
        };
    }
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: the dict is live; PyDict_Next bounds-checks `position` and returns borrowed
    // references, which stay valid while `'a` keeps the dict borrowed and unchanged.
    if unsafe { ffi::PyDict_Next(dict.as_ptr(), position, &mut key, &mut value) } == 0 {
        return None;
    }
    // SAFETY: both are non-NULL references held by the dict.
    unsafe {
        Some((
            pyo3::Borrowed::from_ptr(py, key),
            pyo3::Borrowed::from_ptr(py, value),
        ))
    }
}

/// The value of the dict entry at `position` when its key is `name` (the object itself, as
/// `to_builtins` writes it, or any str of text `text`), moving `position` past it; `None`, with
/// `position` unchanged, when that entry has another key or there is none. The key is compared
/// by pointer first and never increfed.
#[inline]
pub fn entry_named<'py>(
    dict: &Bound<'py, PyDict>,
    position: &mut ffi::Py_ssize_t,
    name: &Bound<'_, PyString>,
    text: &str,
) -> Option<Obj<'py>> {
    let mut next = *position;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: the dict is live; PyDict_Next bounds-checks `next` and returns borrowed
    // references, valid until the dict changes (no Python code runs before they are used).
    if unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut next, &mut key, &mut value) } == 0 {
        return None;
    }
    let matches = key == name.as_ptr() || {
        // SAFETY: `key` is a live object borrowed from the dict (see above).
        let key = unsafe { Bound::from_borrowed_ptr(dict.py(), key) };
        key.cast::<PyString>()
            .is_ok_and(|key| str_utf8(key).is_ok_and(|key| key == text))
    };
    if !matches {
        return None;
    }
    *position = next;
    // SAFETY: a borrowed reference from the dict, increfed here.
    Some(unsafe { Bound::from_borrowed_ptr(dict.py(), value) })
}

/// Whether `value`'s type is exactly `type_addr` (an address taken from the plan).
#[inline]
pub fn has_exact_type(value: &Obj<'_>, type_addr: usize) -> bool {
    value.get_type_ptr() as usize == type_addr
}

/// Classes from the standard library the codecs construct or recognise, imported once.
pub struct Stdlib {
    pub decimal: Py<PyType>,
    pub uuid: Py<PyType>,
    pub safe_uuid_unknown: Py<PyAny>,
    pub uuid_int: Py<PyString>,
    pub uuid_is_safe: Py<PyString>,
    /// Where `uuid.UUID` keeps its `int` and `is_safe` slots in an instance, when both are
    /// plain object slots (as in CPython): read and written there without attribute lookups.
    pub uuid_slots: Option<(isize, isize)>,
    pub enum_type: Py<PyType>,
    pub post_init: Py<PyString>,
}

static STDLIB: PyOnceLock<Stdlib> = PyOnceLock::new();

pub fn stdlib(py: Python<'_>) -> &Stdlib {
    STDLIB.get_or_init(py, || {
        let import = |module: &str, name: &str| -> Py<PyAny> {
            py.import(module)
                .and_then(|m| m.getattr(name))
                .unwrap_or_else(|err| panic!("the standard library lacks {module}.{name}: {err}"))
                .unbind()
        };
        let as_type = |obj: Py<PyAny>| -> Py<PyType> {
            obj.into_bound(py)
                .cast_into::<PyType>()
                .expect("a class")
                .unbind()
        };
        let uuid = as_type(import("uuid", "UUID"));
        let slot = |name| fields::slot_offset(uuid.bind(py), name).map(|at| at as isize);
        let uuid_slots = slot("int").zip(slot("is_safe"));
        Stdlib {
            decimal: as_type(import("decimal", "Decimal")),
            uuid,
            uuid_slots,
            safe_uuid_unknown: import("uuid", "SafeUUID")
                .bind(py)
                .getattr("unknown")
                .expect("SafeUUID.unknown")
                .unbind(),
            uuid_int: PyString::intern(py, "int").unbind(),
            uuid_is_safe: PyString::intern(py, "is_safe").unbind(),
            enum_type: as_type(import("enum", "Enum")),
            post_init: PyString::intern(py, "__post_init__").unbind(),
        }
    })
}

/// The int of value `value`: below 2**64 `PyLong_FromUnsignedLongLong`'s, a wider one made
/// from its digits where the `wide_int` layout is in use (instead of `_PyLong_FromByteArray`'s
/// byte-by-byte loop, some 260 instructions for 16 bytes), else PyO3's conversion.
#[inline]
pub fn int_from_u128(py: Python<'_>, value: u128) -> PyResult<Obj<'_>> {
    if let Ok(narrow) = u64::try_from(value) {
        return Ok(narrow.into_pyobject(py)?.into_any());
    }
    if let Some(int) = cpython::wide_int(py, value) {
        return int;
    }
    Ok(value.into_pyobject(py)?.into_any())
}

/// Builds a `uuid.UUID` from its 128-bit value without parsing text again.
pub fn new_uuid(py: Python<'_>, value: u128) -> PyResult<Obj<'_>> {
    let lib = stdlib(py);
    let instance = new_instance(lib.uuid.bind(py))?;
    let int = int_from_u128(py, value)?;
    if let Some((int_at, safe_at)) = lib.uuid_slots {
        // SAFETY: `instance` is a fresh UUID made by tp_new, whose object slots at these
        // offsets (read from the class's member descriptors) are still NULL; each slot takes
        // over one new reference.
        unsafe {
            let base = instance.as_ptr() as *mut u8;
            *(base.offset(int_at) as *mut *mut ffi::PyObject) = int.into_ptr();
            *(base.offset(safe_at) as *mut *mut ffi::PyObject) =
                lib.safe_uuid_unknown.clone_ref(py).into_ptr();
        }
        return Ok(instance);
    }
    set_field(&instance, lib.uuid_int.bind(py), &int)?;
    set_field(
        &instance,
        lib.uuid_is_safe.bind(py),
        lib.safe_uuid_unknown.bind(py),
    )?;
    Ok(instance)
}

/// The 128-bit value of a `uuid.UUID` (or subclass).
pub fn uuid_value(value: &Obj<'_>) -> PyResult<u128> {
    let py = value.py();
    let lib = stdlib(py);
    if let Some((int_at, _)) = lib.uuid_slots {
        if value.get_type_ptr() == lib.uuid.bind(py).as_type_ptr() {
            // SAFETY: `value` is exactly a UUID, so it has the object slot at `int_at`; the slot
            // holds NULL or a reference the instance owns, borrowed here while `value` lives.
            let int = unsafe {
                *((value.as_ptr() as *const u8).offset(int_at) as *const *mut ffi::PyObject)
            };
            if !int.is_null() {
                // SAFETY: a live object kept by the instance, borrowed for this call.
                return unsafe { Bound::from_borrowed_ptr(py, int) }.extract();
            }
        }
    }
    value.getattr(lib.uuid_int.bind(py))?.extract()
}

/// `cls(arg)` for a class whose instances are fully made by `tp_new` (such as
/// `decimal.Decimal`, whose `__init__` is `object.__init__`): calls `tp_new` with a fresh
/// one-item tuple, skipping the generic call machinery and the `__init__` call, which for these
/// classes does nothing.
pub fn new_from_one_arg<'py>(
    cls: &Bound<'py, PyType>,
    arg: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let type_ptr = cls.as_type_ptr();
    // SAFETY: PyTuple_New returns a new reference or NULL with an exception set.
    let args = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(1))? };
    // SAFETY: the fresh tuple's only slot is empty; SET_ITEM takes over `arg`'s reference.
    unsafe { ffi::PyTuple_SET_ITEM(args.as_ptr(), 0, arg.into_ptr()) };
    // SAFETY: `type_ptr` is a live type; its tp_new is read once and called with a valid
    // argument tuple and no keywords; it returns a new reference or NULL with an exception.
    unsafe {
        let Some(tp_new) = (*type_ptr).tp_new else {
            return Err(PyTypeError::new_err(
                "cannot create instances of this class",
            ));
        };
        Bound::from_owned_ptr_or_err(py, tp_new(type_ptr, args.as_ptr(), std::ptr::null_mut()))
    }
}

/// `decimal.Decimal(text)`, through `tp_new` directly (see [`new_from_one_arg`]).
#[inline]
pub fn new_decimal<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let text = new_str(py, text.as_bytes(), text.is_ascii())?;
    new_from_one_arg(stdlib(py).decimal.bind(py), text)
}

/// `decimal.Decimal(text)` from the UTF-8 bytes of `text` (`ascii` when they are all ASCII, as
/// a reader found while scanning them).
#[inline]
pub fn new_decimal_from_bytes<'py>(
    py: Python<'py>,
    bytes: &[u8],
    ascii: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let text = new_str(py, bytes, ascii)?;
    new_from_one_arg(stdlib(py).decimal.bind(py), text)
}

/// `dict[key] = value`, straight through CPython (no conversions of the two objects).
#[inline]
pub fn dict_set(dict: &Bound<'_, PyDict>, key: &Obj<'_>, value: &Obj<'_>) -> PyResult<()> {
    // SAFETY: the dict, key and value are live; PyDict_SetItem takes its own references and
    // returns -1 with an exception set on failure (an unhashable key).
    if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
        return Err(PyErr::fetch(dict.py()));
    }
    Ok(())
}

// The decoders' hot functions sit in four sections (their `link_section` attributes), named
// `.text.hot.polycodec.N<part>`: 1entry (the call entries and each format's `decode_one`),
// 2json (the JSON reader's value paths), 3shared (the format-generic records, arrays and
// values) and 4msgpack. The assembler creates sections in the order the assembly first names
// them, and this module-level assembly comes before every function, so it fixes their order;
// the linkers (LLD, GNU ld) keep one object's input sections in that order within `.text` (both
// merge `.text.hot.*` there). So a JSON call runs through one contiguous stretch (entry, JSON,
// shared) and a MessagePack call through another (entry, shared, MessagePack), instead of an
// order left to the code generator. The first section is aligned to a page, so where that code
// falls in the instruction cache's sets (address mod 4 KiB) depends on the hot functions alone,
// not on the size of everything linked before them.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
std::arch::global_asm!(
    ".pushsection .text.hot.polycodec.1entry,\"ax\",%progbits",
    ".p2align 12",
    ".popsection",
    ".pushsection .text.hot.polycodec.2json,\"ax\",%progbits",
    ".popsection",
    ".pushsection .text.hot.polycodec.3shared,\"ax\",%progbits",
    ".popsection",
    ".pushsection .text.hot.polycodec.4msgpack,\"ax\",%progbits",
    ".popsection"
);

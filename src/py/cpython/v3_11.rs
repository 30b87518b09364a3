//! CPython 3.11's layouts: a plain instance's values array, and big ints from their digits. The
//! dict layout, instance creation and slot offsets are the shared ones ([`super::dicts`],
//! [`super::objects`]).
//!
//! **Inline values.** On 3.11 an instance of a plain class keeps its attributes in a values
//! array (pointed to from just before the object header, below the managed dict pointer) whose
//! slots are indexed by the keys all instances of the class share (`ht_cached_keys`), with an
//! insertion-order byte array in front of it. `object.__setattr__` looks the attribute name up
//! in the class's MRO and then in the shared keys on every store; the interpreter's own
//! specialised `STORE_ATTR` skips both with an index it cached. [`InlineValues`] does the same:
//! each field's index is found once per class, by storing distinct values into a probe instance
//! the generic way and reading where they landed, and a store then writes the slot and appends
//! the index to the insertion order, exactly as the interpreter's specialised store does. A
//! decoder's new instance is made in one step ([`InlineValuesLayout::create`]): its values array
//! allocated already holding the fields, then attached to an instance allocated without
//! `object.__new__`'s argument checks. Any instance failing a check takes the portable path
//! (`object.__setattr__`).
//!
//! **Wide ints.** A value of 2**64 or more (a UUID's `int`) is written 30 bits a digit into a
//! fresh `_PyLong_New` int (`ob_size` digits after the variable-size header), instead of
//! `_PyLong_FromByteArray`'s byte-by-byte loop (some 260 instructions for 16 bytes). The probe
//! checks that the interpreter's digits are 30 bits in 32 (`sys.int_info`).

use std::os::raw::c_ulong;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

use super::dicts::DictKeysHead;
use super::objects::{self, made_by_object_new};
use super::FieldName;
use super::{Family, InlineValuesLayout, Layout};
use crate::py::Obj;

/// The family's items.
pub struct Layouts;

/// The words `PyObject_GC_New` places before a 3.11 object: the managed dict's.
const PREHEADER: c_ulong = ffi::Py_TPFLAGS_MANAGED_DICT;

impl Family for Layouts {
    const NAME: &'static str = "CPython 3.11";
    const KNOWN: &'static [Layout] = &Layout::ALL;
    type InlineValues = InlineValues;
    type DictTemplate = super::dicts::DictTemplate;

    #[inline(always)]
    fn allocate_plain<'py>(
        py: Python<'py>,
        type_ptr: *mut ffi::PyTypeObject,
    ) -> Option<PyResult<Obj<'py>>> {
        objects::allocate_plain(py, type_ptr)
    }

    #[inline(always)]
    fn create_slotted<'py>(
        cls: &Bound<'py, PyType>,
        offsets: &[usize],
        values: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>> {
        objects::create_slotted(cls, offsets, values, PREHEADER)
    }

    unsafe fn member_offset(
        cls: &Bound<'_, PyType>,
        descriptor: &Bound<'_, PyAny>,
        name: &Bound<'_, PyString>,
    ) -> Option<usize> {
        // SAFETY: the caller's member descriptor.
        unsafe { objects::member_offset(cls, descriptor, name) }
    }

    #[inline(always)]
    unsafe fn next_dict_entry(
        dict: *mut ffi::PyObject,
        position: &mut ffi::Py_ssize_t,
    ) -> Option<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>> {
        // SAFETY: the caller's live dict, under the GIL.
        unsafe { super::dicts::next_entry(dict, position) }
    }

    #[inline(always)]
    unsafe fn str_keyed_entries(
        dict: *mut ffi::PyObject,
    ) -> Option<(*const [*mut ffi::PyObject; 2], usize)> {
        // SAFETY: the caller's live exact dict, under the GIL, no Python code running.
        unsafe { super::dicts::str_keyed_entries(dict) }
    }

    fn wide_int(py: Python<'_>, value: u128) -> Option<PyResult<Obj<'_>>> {
        // SAFETY: 3.11's ints keep their digits after the variable-size header (`ob_size`).
        unsafe { objects::wide_int_from_new(py, value, std::mem::size_of::<ffi::PyVarObject>()) }
    }

    #[inline(always)]
    unsafe fn int_digits(value: *mut ffi::PyObject) -> Option<i64> {
        // SAFETY: the caller's int, of this interpreter.
        unsafe { super::ints::signed_size_int(value) }
    }
}

/// Where each field of a plain dataclass lives in its instances' inline values array.
pub struct InlineValues {
    /// The class (instances of subclasses take the portable path).
    type_addr: usize,
    /// The class's shared keys the indices were found in.
    keys: usize,
    /// Each field's index in the values array (by field index).
    indices: Box<[u8]>,
    /// The largest of `indices`: a values array needs more slots than this.
    max_index: u8,
    /// Whether field `k` is at index `k` for every field (the class's first instance
    /// was filled in field order, by `__init__` or the probe): its values array is then
    /// written front to back.
    dense: bool,
}

/// The most keys CPython 3.11 shares between instances (`SHARED_KEYS_MAX_SIZE`).
const SHARED_KEYS_MAX: usize = 30;

/// The slots of a new values array that needs `size` (`word`-sized slots, behind an
/// order prefix rounded up to a word): one more when the block would otherwise fall in
/// pymalloc's 64-byte size class (49 to 64 bytes: a class of 5 fields), the class of dicts,
/// lists, 3-tuples and the instance object itself. A decoder's output is then not
/// scattered over the holes that freed dicts and lists leave among long-lived ones in that
/// class's pools (each block popped from a pool's free list is a dependent read of memory
/// long out of the cache), as `from_builtins`, whose input is dicts and lists, showed
/// (1,000 trees of 5-field nodes: see the commit that made this).
///
/// A larger array is what CPython would make for a class with more room left in its
/// shared keys: every reader goes by the keys' entry count (never more than the slots an
/// array was made with, as keys only grow into the room counted then), and the order
/// bytes by their count, below the values pointer, whatever the prefix's size.
#[inline(always)]
fn out_of_dict_class(size: usize, word: usize) -> usize {
    let bytes = (size + 2).div_ceil(word) * word + size * word;
    if (49..=64).contains(&bytes) && size < SHARED_KEYS_MAX {
        size + 1
    } else {
        size
    }
}

/// Sets `count` words from `words` to NULL, one store each (a handful of words: a call
/// of `memset` would cost more than the stores).
///
/// # Safety
/// `words` must be valid for `count` word writes.
#[inline(always)]
unsafe fn clear_words(words: *mut *mut ffi::PyObject, count: usize) {
    for k in 0..count {
        std::ptr::write_volatile(words.add(k), std::ptr::null_mut());
    }
}

/// The MemoryError of a values array that could not be allocated.
#[cold]
#[inline(never)]
fn no_memory(py: Python<'_>) -> PyErr {
    // SAFETY: sets MemoryError (the GIL is held); the class is left as
    // `object.__new__` leaves it.
    unsafe { ffi::PyErr_NoMemory() };
    PyErr::fetch(py)
}

/// The error of an instance that could not be allocated, after its values array
/// (`values`, in the block `memory`) is released: its values' references dropped and the
/// block freed, as `_PyObject_FreeInstanceAttributes` does.
///
/// # Safety
/// `memory` must be a block from `PyMem_Malloc` owned by the caller, `values` the array
/// of `size` slots in it, each NULL or an owned reference.
#[cold]
#[inline(never)]
unsafe fn release_values(
    py: Python<'_>,
    memory: *mut u8,
    values: *mut *mut ffi::PyObject,
    size: usize,
) -> PyErr {
    let err = PyErr::fetch(py);
    for slot in 0..size {
        ffi::Py_XDECREF(*values.add(slot));
    }
    ffi::PyMem_Free(memory.cast());
    err
}

/// An instance's values array and managed dict pointers: the words 4 and 3 pointers before
/// the object (`_PyObject_ValuesPointer`, `_PyObject_ManagedDictPointer` in 3.11).
///
/// # Safety
/// `obj` must be a live instance of a class with `Py_TPFLAGS_MANAGED_DICT`.
#[inline(always)]
unsafe fn pointers(obj: *mut ffi::PyObject) -> (*mut *mut ffi::PyObject, *mut ffi::PyObject) {
    let words = obj.cast::<*mut ffi::PyObject>();
    let values = *words.sub(4);
    let dict = *words.sub(3);
    (values.cast::<*mut ffi::PyObject>(), dict)
}

/// The values array's insertion-order bytes: `(count, capacity)` (bytes -2 and -1).
///
/// # Safety
/// `values` must be a live values array.
#[inline(always)]
unsafe fn order(values: *mut *mut ffi::PyObject) -> (usize, usize) {
    let bytes = values.cast::<u8>();
    (*bytes.sub(2) as usize, *bytes.sub(1) as usize)
}

impl InlineValues {
    /// Writes `items` into slots `0..items.len()` of a new values array (NULL for an
    /// absent one) and the present ones' indices into the insertion order below
    /// `count_byte`; returns how many were present.
    ///
    /// # Safety
    /// `values` must have at least `items.len()` slots and `count_byte` that many order
    /// bytes below it.
    #[inline(always)]
    unsafe fn write_dense(
        values: *mut *mut ffi::PyObject,
        count_byte: *mut u8,
        items: &mut [Option<Obj<'_>>],
    ) -> usize {
        let mut count = 0;
        for (index, item) in items.iter_mut().enumerate() {
            let item = item.take().map_or(std::ptr::null_mut(), Bound::into_ptr);
            std::ptr::write_volatile(values.add(index), item);
            if !item.is_null() {
                count += 1;
                *count_byte.sub(count) = index as u8;
            }
        }
        count
    }

    /// [`InlineValues::write_dense`] for fields at any indices: every slot cleared first,
    /// then each present item written at its index.
    ///
    /// # Safety
    /// `values` must have `size` slots, more than any of `indices`, and `count_byte` at
    /// least `items.len()` order bytes below it.
    #[inline(never)]
    unsafe fn write_scattered(
        values: *mut *mut ffi::PyObject,
        size: usize,
        count_byte: *mut u8,
        indices: &[u8],
        items: &mut [Option<Obj<'_>>],
    ) -> usize {
        clear_words(values, size);
        let mut count = 0;
        for (item, &index) in items.iter_mut().zip(indices) {
            if let Some(item) = item.take() {
                *values.add(index as usize) = item.into_ptr();
                count += 1;
                *count_byte.sub(count) = index;
            }
        }
        count
    }

    /// The instance's values array and managed dict pointers when it is of exactly the
    /// probed class and the class still shares the keys the indices were found in.
    #[inline(always)]
    fn probed_pointers(
        &self,
        instance: &Obj<'_>,
    ) -> Option<(*mut *mut ffi::PyObject, *mut ffi::PyObject)> {
        let tp = instance.get_type_ptr();
        if tp as usize != self.type_addr {
            return None;
        }
        // SAFETY: the instance is of exactly the probed class, a live heap type with a
        // managed dict; its keys pointer and the instance's pointers are read.
        unsafe {
            if (*tp.cast::<ffi::PyHeapTypeObject>()).ht_cached_keys as usize != self.keys {
                return None;
            }
            Some(pointers(instance.as_ptr()))
        }
    }

    /// The values array of `instance` when it is of exactly the probed class, with the
    /// keys the indices were found in, and keeps its attributes there (no `__dict__`
    /// materialised).
    #[inline(always)]
    fn values(&self, instance: &Obj<'_>) -> Option<*mut *mut ffi::PyObject> {
        let (values, dict) = self.probed_pointers(instance)?;
        (!values.is_null() && dict.is_null()).then_some(values)
    }

    /// The values array of `instance` when it can take `stores` more new entries here.
    #[inline(always)]
    fn array(&self, instance: &Obj<'_>, stores: usize) -> Option<*mut *mut ffi::PyObject> {
        let values = self.values(instance)?;
        // SAFETY: a live values array (just checked), whose order bytes are read.
        let (count, capacity) = unsafe { order(values) };
        // `_PyDictValues_AddToInsertionOrder` needs count + 2 < capacity per append.
        (count + stores + 2 <= capacity).then_some(values)
    }

    /// The values array of a materialised instance dict `dict` (or NULL) when it is an
    /// exact dict in split form over the shared `keys`.
    ///
    /// # Safety
    /// `dict` must be NULL or a live object.
    #[inline(always)]
    unsafe fn split_values(
        dict: *mut ffi::PyObject,
        keys: usize,
    ) -> Option<*mut *mut ffi::PyObject> {
        if dict.is_null() || ffi::PyDict_CheckExact(dict) == 0 {
            return None;
        }
        let dict = dict.cast::<ffi::PyDictObject>();
        let values = (*dict).ma_values.cast::<*mut ffi::PyObject>();
        ((*dict).ma_keys as usize == keys && !values.is_null()).then_some(values)
    }

    /// Stores `value` at `index` of `values` when the slot is empty.
    ///
    /// # Safety
    /// `values` must be the live values array of an instance of the probed class with
    /// room for one more insertion-order byte; `index` one of the probed indices.
    #[inline(always)]
    unsafe fn put<'py>(
        values: *mut *mut ffi::PyObject,
        index: u8,
        value: Obj<'py>,
    ) -> Result<(), Obj<'py>> {
        let slot = values.add(index as usize);
        if !(*slot).is_null() {
            return Err(value);
        }
        *slot = value.into_ptr();
        // As `_PyDictValues_AddToInsertionOrder`: the order bytes grow downwards from -3.
        let count_byte = values.cast::<u8>().sub(2);
        let count = *count_byte as usize + 1;
        *count_byte.sub(count) = index;
        *count_byte = count as u8;
        Ok(())
    }

    /// Stores the values given into the values array of an instance that has no attribute
    /// yet (its insertion order is empty, so every slot is NULL: a slot is set exactly when
    /// its index is in the order): each value written to its slot and its index appended
    /// to the order, in field order as `__init__` sets them, with the count written once.
    ///
    /// # Safety
    /// `values` must be the live values array of an instance of the probed class whose
    /// order count is 0, with room for `indices.len()` order bytes.
    #[inline(always)]
    unsafe fn fill_fresh<'py>(
        values: *mut *mut ffi::PyObject,
        indices: &[u8],
        items: &mut [Option<Obj<'py>>],
    ) {
        // The order bytes grow downwards from byte -3 (see `put`).
        let count_byte = values.cast::<u8>().sub(2);
        let mut count = 0;
        for (item, &index) in items.iter_mut().zip(indices) {
            if let Some(item) = item.take() {
                *values.add(index as usize) = item.into_ptr();
                count += 1;
                *count_byte.sub(count) = index;
            }
        }
        *count_byte = count as u8;
    }

    /// The fields left after a portable store (which may have run Python code).
    #[cold]
    fn rest<'py>(
        &self,
        instance: &Obj<'py>,
        fields: &[impl FieldName],
        values: &mut [Option<Obj<'py>>],
    ) -> PyResult<bool> {
        for (value, field) in values.iter_mut().zip(fields) {
            if let Some(value) = value.take() {
                crate::py::set_field(instance, field.field_name().bind(instance.py()), &value)?;
            }
        }
        Ok(true)
    }
}

impl InlineValuesLayout for InlineValues {
    /// The indices of `names` for instances of `cls`, or `None` when the class does not keep
    /// them all in inline values made by `object.__new__` (or any check fails).
    fn probe_class(
        cls: &Bound<'_, PyType>,
        names: &[Py<PyString>],
    ) -> PyResult<Option<InlineValues>> {
        let py = cls.py();
        let tp = cls.as_type_ptr();
        if names.is_empty() || names.len() > SHARED_KEYS_MAX {
            return Ok(None);
        }
        // SAFETY: a live type object; its flags and slots are read, and its heap type
        // fields only when it is a heap type. The base `object`'s slot is never written
        // after startup.
        let keys = unsafe {
            let flags = (*tp).tp_flags;
            let wanted =
                ffi::Py_TPFLAGS_HEAPTYPE | ffi::Py_TPFLAGS_MANAGED_DICT | ffi::Py_TPFLAGS_HAVE_GC;
            // Collected (the pointers sit below the GC header), made by object.__new__ with
            // the generic allocator (no user code, inline values set up), and freed without
            // a finalizer (the probe runs none).
            if flags & wanted != wanted
                || !made_by_object_new(tp)
                || (*tp).tp_finalize.is_some()
                || (*tp).tp_del.is_some()
            {
                return Ok(None);
            }
            (*tp.cast::<ffi::PyHeapTypeObject>()).ht_cached_keys as usize
        };
        if keys == 0 {
            return Ok(None);
        }
        let probe = crate::py::new_instance(cls)?;
        let obj = probe.as_ptr();
        let mut indices = Vec::with_capacity(names.len());
        for (k, name) in names.iter().enumerate() {
            // Distinct objects, one per field (small ints are cached, but each is its own).
            let marker = (k as u64).into_pyobject(py)?.into_any();
            if crate::py::set_field(&probe, name.bind(py), &marker).is_err() {
                return Ok(None);
            }
            // SAFETY: `probe` is a live instance of this managed-dict class; its values
            // array (when non-NULL) has at least `count` order bytes and a slot for every
            // index the shared keys hand out, which the order bytes record.
            let index = unsafe {
                let (values, dict) = pointers(obj);
                if values.is_null() || !dict.is_null() {
                    return Ok(None);
                }
                let (count, _) = order(values);
                if count != k + 1 {
                    // The store went elsewhere (a base class's slot, say).
                    return Ok(None);
                }
                let index = *values.cast::<u8>().sub(2 + count) as usize;
                if index >= SHARED_KEYS_MAX || *values.add(index) != marker.as_ptr() {
                    return Ok(None);
                }
                index
            };
            indices.push(index as u8);
        }
        // SAFETY: as above; the keys pointer is re-read to check it did not change.
        let same_keys =
            unsafe { (*tp.cast::<ffi::PyHeapTypeObject>()).ht_cached_keys as usize == keys };
        let max_index = indices.iter().copied().max().unwrap_or(0);
        let dense = indices
            .iter()
            .enumerate()
            .all(|(k, &index)| k == index as usize);
        Ok(same_keys.then(|| InlineValues {
            type_addr: tp as usize,
            keys,
            indices: indices.into_boxed_slice(),
            max_index,
            dense,
        }))
    }

    /// A new instance of `cls` holding `items` (by field index; taken, and an absent one
    /// leaves its field unset), made in one step: what `object.__new__(cls)` and
    /// `__init__`'s stores make, without the argument checks, the zeroing of a values array
    /// that is written at once, and the per-store checks. `None`: take `object.__new__` and
    /// [`InlineValues::fill`].
    ///
    /// On 3.11, `object.__new__` of a class with a managed dict is `PyType_GenericAlloc`
    /// (`PyObject_GC_New` with the preheader and body zeroed, tracked) followed by
    /// `_PyObject_InitializeDict`: one less key left for later instances of the class
    /// (`dk_usable`, while more than one), then a values array of `dk_usable + dk_nentries`
    /// slots from `PyMem_Malloc`, behind a prefix of insertion-order bytes rounded up to a
    /// word (its last byte the prefix's size, the one before it the order's count), every
    /// slot NULL. Here the same array (one slot longer when that keeps it out of the
    /// 64-byte size class, see [`out_of_dict_class`]) is made with the fields' values in
    /// their slots and their indices in field order (as `__init__` stores them), then
    /// attached to an instance from `PyObject_GC_New`, whose body past the header is zeroed
    /// (the `__weakref__` slot), and the instance is tracked once it is complete. Checked on
    /// every call, since a class can gain a `__new__` later: exactly the probed class,
    /// `object.__new__` and the generic allocator, collected, with a managed dict, not
    /// abstract, no items, and still the shared keys the indices were found in, which
    /// hold every probed index.
    #[inline]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn create<'py>(
        &self,
        cls: &Bound<'py, PyType>,
        items: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>> {
        let tp = cls.as_type_ptr();
        if tp as usize != self.type_addr || items.len() != self.indices.len() {
            return None;
        }
        let py = cls.py();
        // SAFETY: a live heap type (the probed class, checked above); its slots and shared
        // keys pointer are read.
        let (flags, item_size, basic_size, keys, object_made) = unsafe {
            (
                (*tp).tp_flags,
                (*tp).tp_itemsize,
                (*tp).tp_basicsize,
                (*tp.cast::<ffi::PyHeapTypeObject>()).ht_cached_keys as usize,
                made_by_object_new(tp),
            )
        };
        let wanted =
            ffi::Py_TPFLAGS_HEAPTYPE | ffi::Py_TPFLAGS_MANAGED_DICT | ffi::Py_TPFLAGS_HAVE_GC;
        let header = std::mem::size_of::<ffi::PyObject>();
        let plain = object_made
            && flags & (wanted | ffi::Py_TPFLAGS_IS_ABSTRACT) == wanted
            && item_size == 0
            && basic_size as usize >= header
            && keys == self.keys;
        if !plain {
            return None;
        }
        let keys = keys as *mut DictKeysHead;
        // SAFETY: the class's shared keys (a live keys object the class owns, checked to be
        // the one probed); `_PyObject_InitializeDict` reads and updates the same two
        // fields, and no other thread runs while the GIL is held.
        let size = unsafe {
            let usable = (*keys).dk_usable;
            let left = if usable > 1 { usable - 1 } else { usable };
            let size = left + (*keys).dk_nentries;
            if size <= self.max_index as ffi::Py_ssize_t
                || size > SHARED_KEYS_MAX as ffi::Py_ssize_t
            {
                return None;
            }
            (*keys).dk_usable = left;
            size as usize
        };
        let word = std::mem::size_of::<*mut ffi::PyObject>();
        let size = out_of_dict_class(size, word);
        let prefix = (size + 2).div_ceil(word) * word;
        // SAFETY: PyMem_Malloc (with the GIL held) returns a block of the size asked, or
        // NULL.
        let memory = unsafe { ffi::PyMem_Malloc(prefix + size * word) }.cast::<u8>();
        if memory.is_null() {
            return Some(Err(no_memory(py)));
        }
        // SAFETY: the block holds `prefix` order bytes then `size` slots: the prefix's
        // size goes in its last byte, the order's count in the one before and the order
        // below that (at most `items.len() <= max_index + 1 <= size` bytes, and `prefix`
        // is at least `size + 2`); every slot is set, to NULL or a value's reference (the
        // probed indices are below `size`).
        let values = unsafe {
            *memory.add(prefix - 1) = prefix as u8;
            let values = memory.add(prefix).cast::<*mut ffi::PyObject>();
            let count_byte = memory.add(prefix - 2);
            let count = if self.dense {
                // The slots past the fields (`size` is more than the largest index, which
                // is `items.len() - 1` here).
                clear_words(values.add(items.len()), size - items.len());
                Self::write_dense(values, count_byte, items)
            } else {
                Self::write_scattered(values, size, count_byte, &self.indices, items)
            };
            *count_byte = count as u8;
            values
        };
        // SAFETY: a collected type with no items: GC_New allocates the preheader (values
        // and dict pointers, zeroed) and the basic size, linked but untracked, sets the
        // type (a reference for a heap type) and the reference count, and returns NULL
        // with an exception set when memory runs out. A collection it starts may run
        // Python code; the values array is not reachable from anything yet (the values it
        // holds keep their references).
        let raw = unsafe { ffi::PyObject_GC_New::<ffi::PyObject>(tp) };
        if raw.is_null() {
            // SAFETY: the array made above, owned here, with `size` slots.
            return Some(Err(unsafe { release_values(py, memory, values, size) }));
        }
        // SAFETY: the new instance of a managed-dict class: its values pointer is the word
        // 4 pointers before it (NULL from GC_New), which takes the array; its body past the
        // header (whole words, as every basic size is) is zeroed as the generic allocator
        // zeroes it; it is complete and not yet tracked.
        unsafe {
            *raw.cast::<*mut *mut ffi::PyObject>().sub(4) = values;
            clear_words(
                raw.cast::<u8>().add(header).cast(),
                (basic_size as usize - header) / word,
            );
            ffi::PyObject_GC_Track(raw.cast());
        }
        // SAFETY: the new reference GC_New returned.
        Some(Ok(unsafe { Bound::from_owned_ptr(py, raw) }))
    }

    /// Stores the values given (by field index) into a new instance; false when the
    /// instance needs the portable path. A value whose slot is already set is stored the
    /// portable way.
    #[inline]
    fn fill<'py>(
        &self,
        instance: &Obj<'py>,
        fields: &[impl FieldName],
        values: &mut [Option<Obj<'py>>],
    ) -> PyResult<bool> {
        let Some(array) = self.array(instance, self.indices.len()) else {
            return Ok(false);
        };
        // SAFETY: a live values array (just checked); its order count is read.
        if unsafe { order(array) }.0 == 0 {
            // SAFETY: `array` was checked for this instance, with room for every field.
            unsafe { Self::fill_fresh(array, &self.indices, values) };
            return Ok(true);
        }
        for ((value, &index), field) in values.iter_mut().zip(self.indices.iter()).zip(fields) {
            if let Some(value) = value.take() {
                // SAFETY: `array` was checked for this instance with room for every field;
                // nothing since ran Python code (a refused value is stored below, after
                // which no further slot is written here).
                if let Err(value) = unsafe { Self::put(array, index, value) } {
                    crate::py::set_field(instance, field.field_name().bind(instance.py()), &value)?;
                    return self.rest(instance, fields, values);
                }
            }
        }
        Ok(true)
    }

    /// Stores field `index` of a new instance, or hands the value back for the portable
    /// path.
    #[inline]
    fn store<'py>(
        &self,
        instance: &Obj<'py>,
        index: usize,
        value: Obj<'py>,
    ) -> Result<(), Obj<'py>> {
        let (Some(array), Some(&slot)) = (self.array(instance, 1), self.indices.get(index)) else {
            return Err(value);
        };
        // SAFETY: `array` was just checked for this instance with room for one entry.
        unsafe { Self::put(array, slot, value) }
    }

    /// The values array of `instance` when its fields can be read from it with
    /// [`InlineValues::read_from`] (else its `__dict__` serves): what the interpreter's
    /// specialised `LOAD_ATTR` reads. The checks hold until Python code runs, which may
    /// change the instance, so a reader checks again after it has.
    ///
    /// An instance whose `__dict__` was materialised (by `vars()`, `pickle`, `copy`, orjson)
    /// keeps its attributes in that dict, which stays a split table over the same shared
    /// keys and values array while it only gains keys the class's instances share: its
    /// values array is read the same way, by index.
    #[inline(always)]
    fn readable_values(&self, instance: &Obj<'_>) -> Option<*mut *mut ffi::PyObject> {
        let (values, dict) = self.probed_pointers(instance)?;
        if !values.is_null() {
            return dict.is_null().then_some(values);
        }
        // SAFETY: a non-NULL dict pointer is a live dict object (the instance owns it),
        // whose fields are read only once its type is exactly dict.
        unsafe { Self::split_values(dict, self.keys) }
    }

    /// Field `index`, borrowed from the values array `values`; `None` when its slot is
    /// empty (an attribute deleted, so a class attribute may serve): the caller asks
    /// `getattr`.
    ///
    /// # Safety
    /// `values` must come from [`InlineValues::readable_values`] for the instance read,
    /// with no Python code run since (which could have moved its attributes to a dict).
    #[inline(always)]
    unsafe fn read_from(
        &self,
        values: *mut *mut ffi::PyObject,
        index: usize,
    ) -> Option<*mut ffi::PyObject> {
        let &slot = self.indices.get(index)?;
        // SAFETY: a live values array of the probed class (the caller's contract), which
        // has a slot for every probed index; the borrowed pointer is used before any
        // Python code runs.
        let item = unsafe { *values.add(slot as usize) };
        (!item.is_null()).then_some(item)
    }
}

//! CPython 3.13-3.15's inline instance values, written directly when a decoder fills a new plain
//! dataclass instance and read directly when an encoder reads one.
//!
//! From 3.13 on, an instance of a plain class (`Py_TPFLAGS_INLINE_VALUES`) keeps its attributes
//! inside the object itself, in a `PyDictValues` (`Include/internal/pycore_dict.h`, the same in
//! the 3.13, 3.14 and 3.15 headers): four bytes `capacity, size, embedded, valid`, then
//! `capacity` value slots indexed by the keys all instances of the class share
//! (`ht_cached_keys`), then the insertion-order bytes, `size` of them, growing upwards
//! (`_PyDictValues_AddToInsertionOrder`). Where the values are differs
//! (`_PyObject_InlineValues` in `Include/internal/pycore_object.h`): 3.13 places them right
//! after the object header (and only for classes whose basic size is that header), 3.14 and
//! 3.15 after the basic size: each family gives its [`Placement`]. The managed dict pointer is
//! the word 3 pointers before the object (`MANAGED_DICT_OFFSET`, a build with the GIL;
//! free-threaded builds are refused by `src/lib.rs`).
//!
//! `PyType_GenericAlloc` allocates the values with the object, all slots NULL, after giving the
//! class's shared keys one usable entry less (`_PyObject_InitInlineValues`); that is all
//! `object.__new__` does for such a class. So a new instance is made by the class's own
//! allocator ([`InlineValuesLayout::create`]) and its values written in place, each field at the index
//! found once per class by storing distinct values into a probe instance the generic way and
//! reading where they landed, exactly what the interpreter's specialised `STORE_ATTR` writes. A
//! reader reads a slot while the values are `valid` (they stay so when `__dict__` is
//! materialised: the dict then shares them), as the specialised `LOAD_ATTR` does.
//!
//! Every use is gated by the `inline_values` layout's check: the probe at module load
//! (`super::probe`) builds instances both ways and compares what these reads say with
//! what `getattr` and `vars()` say.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

use super::FieldName;
use super::InlineValuesLayout;
use crate::py::Obj;

/// `Py_TPFLAGS_INLINE_VALUES` (`Include/object.h`, 3.13 and later; pyo3-ffi does not name it).
const INLINE_VALUES_FLAG: std::os::raw::c_ulong = 1 << 2;

/// The most keys CPython shares between instances (`SHARED_KEYS_MAX_SIZE`).
const SHARED_KEYS_MAX: usize = 30;

/// `struct _dictvalues` up to its first slot (which follows at the next word).
#[repr(C)]
struct ValuesHead {
    capacity: u8,
    size: u8,
    embedded: u8,
    valid: u8,
}

/// Where a family keeps a plain instance's values (`_PyObject_InlineValues`).
pub trait Placement {
    /// The byte offset of the values in an instance of `tp`.
    ///
    /// # Safety
    /// `tp` is a live type object.
    unsafe fn offset(tp: *mut ffi::PyTypeObject) -> usize;

    /// Whether a class of basic size `basic_size` keeps its values where [`Self::offset`]
    /// says.
    fn placed(basic_size: ffi::Py_ssize_t) -> bool;
}

/// Where the inline values of an instance of `tp` begin.
///
/// # Safety
/// `obj` is a live instance of `tp`, a class with `Py_TPFLAGS_INLINE_VALUES` placed as `P`
/// says ([`class_keeps_values`] checks both).
#[inline(always)]
unsafe fn head<P: Placement>(
    obj: *mut ffi::PyObject,
    tp: *mut ffi::PyTypeObject,
) -> *mut ValuesHead {
    // SAFETY: the values are inside the instance's own allocation, at the offset.
    unsafe { obj.cast::<u8>().add(P::offset(tp)).cast::<ValuesHead>() }
}

/// The value slots after a [`ValuesHead`] (`values->values`).
///
/// # Safety
/// `head` is a live values head.
#[inline(always)]
unsafe fn slots(head: *mut ValuesHead) -> *mut *mut ffi::PyObject {
    // SAFETY: the slots follow the four header bytes at the next pointer-aligned word.
    unsafe {
        head.cast::<u8>()
            .add(std::mem::size_of::<*mut ffi::PyObject>())
            .cast()
    }
}

/// The insertion-order bytes after the `capacity` slots (`get_insertion_order_array`).
///
/// # Safety
/// `head` is a live values head.
#[inline(always)]
unsafe fn order(head: *mut ValuesHead) -> *mut u8 {
    // SAFETY: the order bytes follow the slots in the same allocation.
    unsafe { slots(head).add((*head).capacity as usize).cast::<u8>() }
}

/// The instance's managed dict pointer (`_PyObject_GetManagedDict`): NULL until `__dict__` is
/// materialised.
///
/// # Safety
/// `obj` is a live instance of a class with `Py_TPFLAGS_MANAGED_DICT`.
#[inline(always)]
unsafe fn managed_dict(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: the preheader word 3 pointers before the object.
    unsafe { *obj.cast::<*mut ffi::PyObject>().sub(3) }
}

/// Whether instances of `tp` keep their attributes in inline values this module reads, and are
/// made by `object.__new__` with the generic allocator (no user code runs). Checked on every
/// creation, since a class can gain a `__new__` later.
///
/// # Safety
/// `tp` is a live type object.
#[inline(always)]
unsafe fn class_keeps_values<P: Placement>(tp: *mut ffi::PyTypeObject) -> bool {
    let wanted = ffi::Py_TPFLAGS_HEAPTYPE
        | ffi::Py_TPFLAGS_MANAGED_DICT
        | ffi::Py_TPFLAGS_HAVE_GC
        | INLINE_VALUES_FLAG;
    // SAFETY: the caller's live type object; three of its slots are read.
    let (flags, item_size, basic_size) =
        unsafe { ((*tp).tp_flags, (*tp).tp_itemsize, (*tp).tp_basicsize) };
    let placed = P::placed(basic_size);
    flags & (wanted | ffi::Py_TPFLAGS_IS_ABSTRACT) == wanted
        && item_size == 0
        && placed
        // SAFETY: the caller's live type object.
        && unsafe { super::objects::made_by_object_new(tp) }
}

/// Where each field of a plain dataclass lives in its instances' inline values, placed as `P`
/// says.
pub struct InlineValues<P> {
    /// The class (instances of subclasses take the portable path).
    type_addr: usize,
    /// The class's shared keys the indices were found in.
    keys: usize,
    /// Each field's index in the values (by field index).
    indices: Box<[u8]>,
    /// The largest of `indices`: an instance's capacity must be more than this.
    max_index: u8,
    /// Whether field `k` is at index `k` for every field.
    dense: bool,
    placement: std::marker::PhantomData<P>,
}

impl<P: Placement> InlineValues<P> {
    /// Whether `tp` is the probed class, still keeping inline values over the probed keys.
    ///
    /// # Safety
    /// `tp` is a live type object.
    #[inline(always)]
    unsafe fn is_probed_class(&self, tp: *mut ffi::PyTypeObject) -> bool {
        // SAFETY: the probed class is a live heap type, so its keys pointer can be read.
        tp as usize == self.type_addr
            && unsafe { (*tp.cast::<ffi::PyHeapTypeObject>()).ht_cached_keys as usize == self.keys }
    }

    /// The values head of `instance` when it is of exactly the probed class, with the keys the
    /// indices were found in, and has room for every probed index.
    #[inline(always)]
    fn probed_head(&self, instance: &Obj<'_>) -> Option<*mut ValuesHead> {
        let tp = instance.get_type_ptr();
        // SAFETY: the instance's type is live; once it is the probed class (an inline-values
        // class) its values head is read.
        unsafe {
            if !self.is_probed_class(tp) {
                return None;
            }
            let head = head::<P>(instance.as_ptr(), tp);
            ((*head).capacity > self.max_index).then_some(head)
        }
    }

    /// The values head of `instance` when it can take `stores` more entries here: valid, with
    /// no materialised dict (the specialised `STORE_ATTR`'s conditions) and room in its order.
    #[inline(always)]
    fn writable(&self, instance: &Obj<'_>, stores: usize) -> Option<*mut ValuesHead> {
        let head = self.probed_head(instance)?;
        // SAFETY: a live values head of this instance (just found).
        unsafe {
            let writable = (*head).valid == 1
                && managed_dict(instance.as_ptr()).is_null()
                && (*head).size as usize + stores <= (*head).capacity as usize;
            writable.then_some(head)
        }
    }

    /// Stores `value` at `index` when its slot is empty, appending the index to the order.
    ///
    /// # Safety
    /// `head` is a writable values head (see [`InlineValues::writable`]) with room for one more
    /// order byte; `index` one of the probed indices.
    #[inline(always)]
    unsafe fn put<'py>(head: *mut ValuesHead, index: u8, value: Obj<'py>) -> Result<(), Obj<'py>> {
        // SAFETY: the caller's writable head: the slot and the next order byte are in it.
        unsafe {
            let slot = slots(head).add(index as usize);
            if !(*slot).is_null() {
                return Err(value);
            }
            *slot = value.into_ptr();
            let size = (*head).size;
            *order(head).add(size as usize) = index;
            (*head).size = size + 1;
        }
        Ok(())
    }
}

impl<P: Placement> InlineValuesLayout for InlineValues<P> {
    /// The indices of `names` for instances of `cls`, or `None` when the class does not keep
    /// them all in inline values (or any check fails).
    fn probe_class(cls: &Bound<'_, PyType>, names: &[Py<PyString>]) -> PyResult<Option<Self>> {
        let py = cls.py();
        let tp = cls.as_type_ptr();
        if names.is_empty() || names.len() > SHARED_KEYS_MAX {
            return Ok(None);
        }
        // SAFETY: a live type object; its heap type fields are read once it is a heap type.
        let keys = unsafe {
            if !class_keeps_values::<P>(tp) || (*tp).tp_finalize.is_some() || (*tp).tp_del.is_some()
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
            // Distinct objects, one per field.
            let marker = (k as u64).into_pyobject(py)?.into_any();
            if crate::py::set_field(&probe, name.bind(py), &marker).is_err() {
                return Ok(None);
            }
            // SAFETY: `probe` is a live instance of this inline-values class (checked above);
            // its header is read, then its order bytes and slots within `capacity`.
            let index = unsafe {
                let head = head::<P>(obj, tp);
                let (capacity, size) = ((*head).capacity as usize, (*head).size as usize);
                if (*head).valid != 1 || !managed_dict(obj).is_null() || size != k + 1 {
                    // The store went elsewhere (a base class's slot, a materialised dict).
                    return Ok(None);
                }
                let index = *order(head).add(size - 1) as usize;
                if index >= capacity || *slots(head).add(index) != marker.as_ptr() {
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
        let dense = indices.iter().enumerate().all(|(k, &i)| k == i as usize);
        Ok(same_keys.then(|| InlineValues {
            type_addr: tp as usize,
            keys,
            indices: indices.into_boxed_slice(),
            max_index,
            dense,
            placement: std::marker::PhantomData,
        }))
    }

    /// A new instance of `cls` holding `items` (by field index; taken, and an absent one leaves
    /// its field unset): the class's allocator (what `object.__new__` calls, without its
    /// argument checks) makes it with every slot NULL, then each value is written to its slot
    /// and its index appended to the insertion order, as `__init__`'s stores do. Checked on
    /// every call: exactly the probed class, still made by `object.__new__` with the generic
    /// allocator, with the probed keys, and a fresh instance whose values read as the
    /// allocator leaves them. `None`: take `object.__new__` and [`InlineValues::fill`].
    #[inline]
    fn create<'py>(
        &self,
        cls: &Bound<'py, PyType>,
        items: &mut [Option<Obj<'py>>],
    ) -> Option<PyResult<Obj<'py>>> {
        let tp = cls.as_type_ptr();
        // SAFETY: a live type object.
        if items.len() != self.indices.len()
            || !unsafe { self.is_probed_class(tp) && class_keeps_values::<P>(tp) }
        {
            return None;
        }
        let py = cls.py();
        // SAFETY: the generic allocator (checked) with no items, as `object_new` calls it: a
        // new, tracked reference with its inline values set up, or NULL with an exception set.
        let instance =
            match unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyType_GenericAlloc(tp, 0)) } {
                Ok(instance) => instance,
                Err(err) => return Some(Err(err)),
            };
        let obj = instance.as_ptr();
        // SAFETY: a fresh instance of this inline-values class; its header is read and, when
        // it reads as fresh (no attribute, so every slot NULL, and room for every index), its
        // slots at the probed indices (below `capacity`) and its first `items.len()` order
        // bytes (`items.len() <= max_index + 1 <= capacity`) are written. No Python code runs
        // and nothing is allocated between the allocation and the last write.
        unsafe {
            let head = head::<P>(obj, tp);
            let fresh = (*head).valid == 1
                && (*head).size == 0
                && (*head).capacity > self.max_index
                && managed_dict(obj).is_null();
            if !fresh {
                return None;
            }
            let values = slots(head);
            let order = order(head);
            let mut count = 0;
            if self.dense {
                for (index, item) in items.iter_mut().enumerate() {
                    if let Some(item) = item.take() {
                        *values.add(index) = item.into_ptr();
                        *order.add(count) = index as u8;
                        count += 1;
                    }
                }
            } else {
                for (item, &index) in items.iter_mut().zip(self.indices.iter()) {
                    if let Some(item) = item.take() {
                        *values.add(index as usize) = item.into_ptr();
                        *order.add(count) = index;
                        count += 1;
                    }
                }
            }
            (*head).size = count as u8;
        }
        Some(Ok(instance))
    }

    /// Stores the values given (by field index) into a new instance; false when the instance
    /// needs the portable path. A value whose slot is already set is stored the portable way.
    #[inline]
    fn fill<'py>(
        &self,
        instance: &Obj<'py>,
        fields: &[impl FieldName],
        values: &mut [Option<Obj<'py>>],
    ) -> PyResult<bool> {
        let Some(head) = self.writable(instance, self.indices.len()) else {
            return Ok(false);
        };
        for (k, (value, &index)) in values.iter_mut().zip(self.indices.iter()).enumerate() {
            if let Some(value) = value.take() {
                // SAFETY: `head` was checked for this instance with room for every field;
                // nothing since ran Python code (after a refused value is stored below, no
                // further slot is written here).
                if let Err(value) = unsafe { Self::put(head, index, value) } {
                    let py = instance.py();
                    crate::py::set_field(instance, fields[k].field_name().bind(py), &value)?;
                    for (value, field) in values.iter_mut().zip(fields).skip(k + 1) {
                        if let Some(value) = value.take() {
                            crate::py::set_field(instance, field.field_name().bind(py), &value)?;
                        }
                    }
                    return Ok(true);
                }
            }
        }
        Ok(true)
    }

    /// Stores field `index` of a new instance, or hands the value back for the portable path.
    #[inline]
    fn store<'py>(
        &self,
        instance: &Obj<'py>,
        index: usize,
        value: Obj<'py>,
    ) -> Result<(), Obj<'py>> {
        let (Some(head), Some(&slot)) = (self.writable(instance, 1), self.indices.get(index))
        else {
            return Err(value);
        };
        // SAFETY: `head` was just checked for this instance with room for one entry.
        unsafe { Self::put(head, slot, value) }
    }

    /// The value slots of `instance` when its fields can be read from them with
    /// [`InlineValues::read_from`] (else its `__dict__` serves). The checks hold until Python
    /// code runs, so a reader checks again after it has.
    #[inline(always)]
    fn readable_values(&self, instance: &Obj<'_>) -> Option<*mut *mut ffi::PyObject> {
        let head = self.probed_head(instance)?;
        // SAFETY: a live values head of this instance.
        unsafe { ((*head).valid == 1).then(|| slots(head)) }
    }

    /// Field `index`, borrowed from the slots `values`; `None` when its slot is empty (an
    /// attribute deleted, so a class attribute may serve): the caller asks `getattr`.
    ///
    /// # Safety
    /// `values` must come from [`InlineValues::readable_values`] for the instance read, with no
    /// Python code run since.
    #[inline(always)]
    unsafe fn read_from(
        &self,
        values: *mut *mut ffi::PyObject,
        index: usize,
    ) -> Option<*mut ffi::PyObject> {
        let &slot = self.indices.get(index)?;
        // SAFETY: the caller's live slots, more than every probed index.
        let item = unsafe { *values.add(slot as usize) };
        (!item.is_null()).then_some(item)
    }
}

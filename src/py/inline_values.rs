//! CPython 3.11's inline instance values, written directly when a decoder fills a new plain
//! dataclass instance.
//!
//! On 3.11 an instance of a plain class keeps its attributes in a values array (pointed to from
//! just before the object header, below the managed dict pointer) whose slots are indexed by the
//! keys all instances of the class share (`ht_cached_keys`), with an insertion-order byte array
//! in front of it. `object.__setattr__` looks the attribute name up in the class's MRO and then
//! in the shared keys on every store; the interpreter's own specialised `STORE_ATTR` skips both
//! with an index it cached. [`InlineValues`] does the same: each field's index is found once per
//! class, by storing distinct values into a probe instance the generic way and reading where
//! they landed, and a store then writes the slot and appends the index to the insertion order,
//! exactly as the interpreter's specialised store does.
//!
//! The layout is private to CPython 3.11 (3.12 changed it), so this is compiled only for 3.11;
//! every other interpreter gets the portable path (`object.__setattr__`), which is also what
//! `POLYCODEC_PORTABLE_VALUES=1` selects and what any instance failing a check falls back to.

#[cfg(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy)))]
mod imp {
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::{PyString, PyType};

    use crate::py::fields::FieldName;
    use crate::py::Obj;

    /// Where each field of a plain dataclass lives in its instances' inline values array.
    pub struct InlineValues {
        /// The class (instances of subclasses take the portable path).
        type_addr: usize,
        /// The class's shared keys the indices were found in.
        keys: usize,
        /// Each field's index in the values array (by field index).
        indices: Box<[u8]>,
    }

    /// The most keys CPython 3.11 shares between instances (`SHARED_KEYS_MAX_SIZE`).
    const SHARED_KEYS_MAX: usize = 30;

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
        /// The indices of `names` for instances of `cls`, or `None` when the class does not
        /// keep them all in inline values made by `object.__new__` (or any check fails).
        pub fn probe(
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
                let wanted = ffi::Py_TPFLAGS_HEAPTYPE
                    | ffi::Py_TPFLAGS_MANAGED_DICT
                    | ffi::Py_TPFLAGS_HAVE_GC;
                let object_new = (*std::ptr::addr_of!(ffi::PyBaseObject_Type)).tp_new;
                let generic_alloc = ffi::PyType_GenericAlloc as *const () as usize;
                // Collected (the pointers sit below the GC header), made by object.__new__ with
                // the generic allocator (no user code, inline values set up), and freed without
                // a finalizer (the probe runs none).
                if flags & wanted != wanted
                    || (*tp).tp_new.map(|f| f as usize) != object_new.map(|f| f as usize)
                    || (*tp).tp_alloc.map(|f| f as usize) != Some(generic_alloc)
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
            let probe = super::super::new_instance(cls)?;
            let obj = probe.as_ptr();
            let mut indices = Vec::with_capacity(names.len());
            for (k, name) in names.iter().enumerate() {
                // Distinct objects, one per field (small ints are cached, but each is its own).
                let marker = (k as u64).into_pyobject(py)?.into_any();
                if super::super::set_field(&probe, name.bind(py), &marker).is_err() {
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
            Ok(same_keys.then(|| InlineValues {
                type_addr: tp as usize,
                keys,
                indices: indices.into_boxed_slice(),
            }))
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
        pub fn readable_values(&self, instance: &Obj<'_>) -> Option<*mut *mut ffi::PyObject> {
            let (values, dict) = self.probed_pointers(instance)?;
            if !values.is_null() {
                return dict.is_null().then_some(values);
            }
            // SAFETY: a non-NULL dict pointer is a live dict object (the instance owns it),
            // whose fields are read only once its type is exactly dict.
            unsafe { Self::split_values(dict, self.keys) }
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

        /// Field `index`, borrowed from the values array `values`; `None` when its slot is
        /// empty (an attribute deleted, so a class attribute may serve): the caller asks
        /// `getattr`.
        ///
        /// # Safety
        /// `values` must come from [`InlineValues::readable_values`] for the instance read,
        /// with no Python code run since (which could have moved its attributes to a dict).
        #[inline(always)]
        pub unsafe fn read_from(
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

        /// Stores the values given (by field index) into a new instance; false when the
        /// instance needs the portable path. A value whose slot is already set is stored the
        /// portable way.
        #[inline]
        pub fn fill<'py>(
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
                        super::super::set_field(
                            instance,
                            field.field_name().bind(instance.py()),
                            &value,
                        )?;
                        return self.rest(instance, fields, values);
                    }
                }
            }
            Ok(true)
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
                    super::super::set_field(
                        instance,
                        field.field_name().bind(instance.py()),
                        &value,
                    )?;
                }
            }
            Ok(true)
        }

        /// Stores field `index` of a new instance, or hands the value back for the portable
        /// path.
        #[inline]
        pub fn store<'py>(
            &self,
            instance: &Obj<'py>,
            index: usize,
            value: Obj<'py>,
        ) -> Result<(), Obj<'py>> {
            let (Some(array), Some(&slot)) = (self.array(instance, 1), self.indices.get(index))
            else {
                return Err(value);
            };
            // SAFETY: `array` was just checked for this instance with room for one entry.
            unsafe { Self::put(array, slot, value) }
        }
    }
}

#[cfg(not(all(Py_3_11, not(Py_3_12), not(Py_LIMITED_API), not(PyPy), not(GraalPy))))]
mod imp {
    use pyo3::prelude::*;
    use pyo3::types::{PyString, PyType};

    use crate::py::fields::FieldName;
    use crate::py::Obj;

    /// Never made: this interpreter's instance layout is not known, so stores stay portable.
    pub enum InlineValues {}

    impl InlineValues {
        pub fn readable_values(
            &self,
            _instance: &Obj<'_>,
        ) -> Option<*mut *mut pyo3::ffi::PyObject> {
            match *self {}
        }

        /// # Safety
        /// Never called: no value of this type exists.
        pub unsafe fn read_from(
            &self,
            _values: *mut *mut pyo3::ffi::PyObject,
            _index: usize,
        ) -> Option<*mut pyo3::ffi::PyObject> {
            match *self {}
        }

        pub fn probe(
            _cls: &Bound<'_, PyType>,
            _names: &[Py<PyString>],
        ) -> PyResult<Option<InlineValues>> {
            Ok(None)
        }

        pub fn fill<'py>(
            &self,
            _instance: &Obj<'py>,
            _fields: &[impl FieldName],
            _values: &mut [Option<Obj<'py>>],
        ) -> PyResult<bool> {
            match *self {}
        }

        pub fn store<'py>(
            &self,
            _instance: &Obj<'py>,
            _index: usize,
            _value: Obj<'py>,
        ) -> Result<(), Obj<'py>> {
            match *self {}
        }
    }
}

pub use imp::InlineValues;

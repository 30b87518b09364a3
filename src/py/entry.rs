//! Short entry paths for `Codec`'s per-call methods.
//!
//! PyO3's generated wrapper parses every call through a general argument description, a
//! trampoline and a checked cast of `self`: about 300 instructions per call, as much as a small
//! record's decoding. At import, [`install`] replaces the four methods' descriptors with ones
//! whose C function handles the plain call (one positional argument, no keywords; for decoding,
//! exact `bytes`) directly, and hands every other call to PyO3's own function unchanged, so
//! errors, keyword handling and other input types stay PyO3's.
//!
//! The short path still runs inside PyO3's trampoline (`impl_::trampoline`, what PyO3's own
//! wrapper uses): it counts the thread as attached for PyO3, so every `Py<T>` or `PyErr` dropped
//! during the call is released at once. Without it (the first version of this entry, merged in
//! 51dbab3 and reverted in efc8cef) PyO3 took the thread for detached and queued each such drop
//! in its global deferred-release pool, under a mutex, until the next call through a PyO3
//! wrapper: the pickle encoder drops one `Py` per object it memoizes, so every pickle encode
//! queued a dozen or more and the queue grew for as long as only short calls ran (pickle
//! `encode_one` of the record model went from 1.2 to 1.6 us, erratically up to 4 us in the
//! full benchmark, and the memoized objects stayed alive until some other call drained it).

use std::marker::PhantomData;
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::impl_::trampoline::{fastcall_cfunction_with_keywords, MethodDef};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

/// The four calls the short entries make on the codec (the API's `Codec` implements them, and
/// its PyO3 methods make the same calls): declared here, where the entries call them, so that
/// this layer names no type of the API above it. The entries are generic over the codec type
/// and monomorphised for it by [`install`]: the calls are direct, as before.
pub trait ShortCalls: pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync {
    /// `encode_one` on a value.
    fn encode_one_value<'py>(
        &self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>>;
    /// `encode_many` on a sequence of values.
    fn encode_many_values<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>>;
    /// `decode_one` on a `bytes` object, without a writer schema.
    fn decode_one_bytes<'py>(
        &self,
        py: Python<'py>,
        buf: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyAny>>;
    /// `decode_many` on a `bytes` object.
    fn decode_many_bytes<'py>(
        &self,
        py: Python<'py>,
        buf: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyAny>>;
}

type FastCall = ffi::PyCFunctionFastWithKeywords;

/// PyO3's functions for the replaced methods, in [`METHODS`] order.
static FULL: OnceLock<[FastCall; 4]> = OnceLock::new();

const METHODS: [&std::ffi::CStr; 4] =
    [c"encode_one", c"encode_many", c"decode_one", c"decode_many"];

/// The short entries for codec type `T`, in [`METHODS`] order.
fn short_entries<T: ShortCalls>() -> [FastCall; 4] {
    [
        encode_one::entry::<T>,
        encode_many::entry::<T>,
        decode_one::entry::<T>,
        decode_many::entry::<T>,
    ]
}

/// Runs one short call on the codec `slf` (called from inside PyO3's trampoline, which counts
/// the thread as attached for PyO3 while the call runs, releases what PyO3's deferred-release
/// pool holds, turns a panic into `PanicException` and the result into CPython's convention).
///
/// # Safety
/// `slf` is a `T` (the method descriptor checked it) and the thread is attached.
#[inline(always)]
unsafe fn run<'py, T: ShortCalls>(
    py: Python<'py>,
    slf: *mut ffi::PyObject,
    call: impl FnOnce(Python<'py>, &T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: the method descriptor admits only instances of `T` (or subclasses) as self.
    let codec = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<T>() };
    let codec: &T = codec.get();
    call(py, codec).map(Bound::into_ptr)
}

// `$attr`: attributes of both functions (the decoders' entries lead their hot section, see
// the end of `py/mod.rs`). Each entry is a module: its C function, the short call PyO3's
// trampoline runs, and the trampoline's definition of it (PyO3's `get_trampoline_function!`
// defines one inside a function, where the codec type parameter cannot reach).
macro_rules! entry {
    ($(#[$attr:meta])* $name:ident, $index:expr, $accept:expr,
     |$py:ident, $codec:ident, $arg:ident| $body:expr) => {
        mod $name {
            use super::*;

            /// The trampoline's definition of [`short`] for codec type `T`.
            struct Short<T>(PhantomData<T>);

            impl<T: ShortCalls> MethodDef<fastcall_cfunction_with_keywords::Func> for Short<T> {
                const METH: fastcall_cfunction_with_keywords::Func = short::<T>;
            }

            /// The short call, run by PyO3's trampoline (`args` holds one accepted argument).
            ///
            /// # Safety
            /// As [`run`]; `args` points to one borrowed argument.
            $(#[$attr])*
            unsafe fn short<T: ShortCalls>(
                py: Python<'_>,
                slf: *mut ffi::PyObject,
                args: *const *mut ffi::PyObject,
                _nargs: ffi::Py_ssize_t,
                _kwnames: *mut ffi::PyObject,
            ) -> PyResult<*mut ffi::PyObject> {
                // SAFETY: CPython's self for this method; the one argument is borrowed for the
                // call.
                unsafe {
                    let raw = *args;
                    run(py, slf, |$py, $codec: &T| {
                        let $arg = Borrowed::from_ptr($py, raw);
                        $body
                    })
                }
            }

            $(#[$attr])*
            pub unsafe extern "C" fn entry<T: ShortCalls>(
                slf: *mut ffi::PyObject,
                args: *const *mut ffi::PyObject,
                nargs: ffi::Py_ssize_t,
                kwnames: *mut ffi::PyObject,
            ) -> *mut ffi::PyObject {
                if nargs == 1 && kwnames.is_null() {
                    // SAFETY: nargs == 1, so `args` holds one borrowed argument.
                    let raw = unsafe { *args };
                    let accept: fn(*mut ffi::PyObject) -> bool = $accept;
                    if accept(raw) {
                        // SAFETY: CPython called this method's C function: the thread is
                        // attached.
                        return unsafe {
                            fastcall_cfunction_with_keywords::<Short<T>>(slf, args, nargs, kwnames)
                        };
                    }
                }
                let full = FULL.get().expect("installed with the originals")[$index];
                // SAFETY: PyO3's own function for this method, with the arguments CPython gave.
                unsafe { full(slf, args, nargs, kwnames) }
            }
        }
    };
}

// SAFETY (in the closures below): a type comparison, then a cast the comparison proves.
entry!(encode_one, 0, |_| true, |py, codec, arg| codec
    .encode_one_value(py, &arg));
entry!(encode_many, 1, |_| true, |py, codec, arg| codec
    .encode_many_values(py, &arg));
entry!(
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.1entry")]
    decode_one,
    2,
    |raw| unsafe { ffi::PyBytes_CheckExact(raw) != 0 },
    |py, codec, arg| codec.decode_one_bytes(py, &arg.cast_unchecked::<PyBytes>())
);
entry!(
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.1entry")]
    decode_many,
    3,
    |raw| unsafe { ffi::PyBytes_CheckExact(raw) != 0 },
    |py, codec, arg| codec.decode_many_bytes(py, &arg.cast_unchecked::<PyBytes>())
);

/// Puts the short entries in place of PyO3's descriptors on `Codec` (once per process; a
/// method whose descriptor is not the expected kind keeps PyO3's path).
pub fn install<T: ShortCalls>(codec: &Bound<'_, PyType>) -> PyResult<()> {
    let short = short_entries::<T>();
    let tp = codec.as_type_ptr();
    let mut full: [Option<FastCall>; 4] = [None; 4];
    // SAFETY: the GIL is held (`codec` is bound); the type's dict is a dict.
    let dict = unsafe { (*tp).tp_dict };
    for (i, name) in METHODS.iter().enumerate() {
        // SAFETY: a borrowed lookup in the type's dict.
        let descr = unsafe { ffi::PyDict_GetItemString(dict, name.as_ptr()) };
        // SAFETY: checked non-null, type compared before the layout is read.
        let is_method = !descr.is_null()
            && unsafe { ffi::Py_TYPE(descr) == std::ptr::addr_of_mut!(ffi::PyMethodDescr_Type) };
        if !is_method {
            return Ok(());
        }
        // SAFETY: a method descriptor, so this layout; its PyMethodDef lives as long as the type.
        let def = unsafe { &*(*descr.cast::<ffi::PyMethodDescrObject>()).d_method };
        if def.ml_flags != ffi::METH_FASTCALL | ffi::METH_KEYWORDS {
            return Ok(());
        }
        // SAFETY: the flags say which member of the union is set.
        full[i] = Some(unsafe { def.ml_meth.PyCFunctionFastWithKeywords });
    }
    let full = full.map(|f| f.expect("each checked above"));
    if FULL.set(full).is_err() {
        return Ok(()); // a second module instance: the type was already patched by the first
    }
    for (i, name) in METHODS.iter().enumerate() {
        // SAFETY: as above.
        let descr = unsafe { ffi::PyDict_GetItemString(dict, name.as_ptr()) };
        // SAFETY: checked in the first loop.
        let old = unsafe { &*(*descr.cast::<ffi::PyMethodDescrObject>()).d_method };
        let def = Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: old.ml_name,
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: short[i],
            },
            ml_flags: old.ml_flags,
            ml_doc: old.ml_doc,
        }));
        // SAFETY: a new descriptor for a 'static method definition; set into the type's own
        // dict, then the type's caches invalidated.
        unsafe {
            let new = ffi::PyDescr_NewMethod(tp, def);
            if new.is_null() {
                return Err(PyErr::fetch(codec.py()));
            }
            let status = ffi::PyDict_SetItemString(dict, name.as_ptr(), new);
            ffi::Py_DECREF(new);
            if status != 0 {
                return Err(PyErr::fetch(codec.py()));
            }
            ffi::PyType_Modified(tp);
        }
    }
    Ok(())
}

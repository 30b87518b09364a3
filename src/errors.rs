//! Errors carried through the encoders and decoders as plain Rust data, turned into Python
//! exceptions only at the API boundary.
//!
//! The success path does no path bookkeeping: each container that sees an error coming up from a
//! child pushes its own segment, so `$.contents[3].nbytes` is assembled while unwinding.

use std::fmt::Write as _;

use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyTuple, PyType};

mod code;
pub mod collected;
pub use code::Code;
use collected::{chain, Report, MAX_COLLECTED};

// How messages quote input (bounded in length) is shared with the byte layer's own errors.
pub use polycodec_formats::quote::{
    cut, cut_bytes, quote, quote_bytes, Cut, Quoted, MAX_QUOTED_CHARS,
};

/// Which Python exception an error becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed input bytes: `polycodec.DecodeError`.
    Decode,
    /// Well-formed input of the wrong shape: `polycodec.ValidationError`.
    Validation,
    /// A Python value that does not match the plan while encoding: `polycodec.EncodeError`.
    Encode,
}

/// One step of the path from the root value to where an error happened.
#[derive(Clone, Debug)]
pub enum PathSegment {
    Field(String),
    Index(usize),
    Key(String),
    /// Every item of an array or value of a map, as a schema has them (`[]`): where an Avro
    /// writer schema cannot be read, which is no one value's position.
    Items,
}

impl PathSegment {
    /// A dict key's step: keys come from the input, so only what the path shows is kept (see
    /// `Error::path_string`); `None` when memory has run out.
    pub fn key(key: &str) -> Option<PathSegment> {
        let kept = key
            .char_indices()
            .nth(MAX_QUOTED_CHARS + 1)
            .map_or(key, |(cut, _)| &key[..cut]);
        owned(kept).map(PathSegment::Key)
    }

    /// A record field's step; `None` when memory has run out.
    pub fn field(wire_name: &str) -> Option<PathSegment> {
        owned(wire_name).map(PathSegment::Field)
    }
}

/// Why a value could not be encoded or decoded.
#[derive(Debug)]
pub enum Failure {
    /// A message composed by polycodec, with the code of its kind.
    Message(ErrorKind, Code, String),
    /// A Python exception raised by user code (`__post_init__`, a default factory, a validator)
    /// or by CPython itself (MemoryError); it is re-raised unchanged, or chained to a polycodec
    /// error with the code given where it was raised ([`Code::ValueError`] unless a caller
    /// knows better: [`Error::python`]).
    Python(PyErr, Code),
    /// `errors="all"`: the value's errors were recorded where they happened (the decoder's
    /// `CollectAll`), and the value could not be made; its container goes on reading.
    Collected,
    /// Memory ran out making room for what it names (a buffer, an error's own message): a
    /// MemoryError, made when it is raised, by CPython (nothing more is allocated here).
    OutOfMemory(&'static str),
}

/// An error with the path to where it happened, innermost segment first. Boxed: a
/// `Result<Obj>` is then two words, not the ~90 bytes of the failure and path inline, so the
/// decoders' recursive frames (one set per nesting level) stay small enough for a deep value's
/// whole stack to stay in the L1 data cache between calls (issue 10).
///
/// The box is a one-item array only so that it can be allocated fallibly in safe code
/// (`Vec::try_reserve_exact`, then `Box<[T]>` into `Box<[T; 1]>`): see [`boxed`].
#[derive(Debug)]
pub struct Error(Box<[ErrorInner; 1]>);

/// What an [`Error`] holds (reached through `Deref`: `error.failure`).
#[derive(Debug)]
pub struct ErrorInner {
    pub failure: Failure,
    path: Vec<PathSegment>,
    /// The value that failed, as the input held it, where the decoder has it (`errors()`'s
    /// "input").
    input: Option<Py<PyAny>>,
}

impl std::ops::Deref for Error {
    type Target = ErrorInner;

    fn deref(&self) -> &ErrorInner {
        &self.0[0]
    }
}

impl std::ops::DerefMut for Error {
    fn deref_mut(&mut self) -> &mut ErrorInner {
        &mut self.0[0]
    }
}

/// A box kept for the error raised when memory has run out: the box of that error (a
/// MemoryError from CPython, seen on its way up) is then taken from here instead of the heap,
/// where a failed allocation would abort the interpreter. Refilled by the next error that
/// finds memory again.
static SPARE: std::sync::Mutex<Option<Box<[ErrorInner; 1]>>> = std::sync::Mutex::new(None);
/// Whether [`SPARE`] holds a box (checked without the lock by every error).
static SPARE_HELD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Path segments the spare box has room for, so that the first containers an out-of-memory
/// error passes through can still add their segment.
const SPARE_PATH_ROOM: usize = 8;

/// What a MemoryError says could not be allocated: an error's message, or its box.
const MESSAGE: &str = "an error message";
const ERROR_BOX: &str = "an error";

/// Whether `err` is a MemoryError (errors are made under the GIL, which this attaches to again).
fn is_memory_error(err: &PyErr) -> bool {
    Python::attach(|py| err.is_instance_of::<pyo3::exceptions::PyMemoryError>(py))
}

/// The text of an error message, made without aborting when memory runs out: a `String`
/// already made, a `&str` copied, or `format_args!` written into room reserved as it grows.
/// `None`: memory ran out (the error becomes a MemoryError).
pub trait MessageText {
    fn into_text(self) -> Option<String>;
}

impl MessageText for String {
    fn into_text(self) -> Option<String> {
        Some(self)
    }
}

impl MessageText for &str {
    fn into_text(self) -> Option<String> {
        owned(self)
    }
}

impl MessageText for &String {
    fn into_text(self) -> Option<String> {
        owned(self)
    }
}

impl MessageText for std::borrow::Cow<'_, str> {
    fn into_text(self) -> Option<String> {
        match self {
            std::borrow::Cow::Owned(text) => Some(text),
            std::borrow::Cow::Borrowed(text) => owned(text),
        }
    }
}

impl MessageText for std::fmt::Arguments<'_> {
    fn into_text(self) -> Option<String> {
        if let Some(text) = self.as_str() {
            return owned(text);
        }
        let mut out = FallibleText(String::new());
        std::fmt::write(&mut out, self).ok()?;
        Some(out.0)
    }
}

/// A `String` that `write!` grows fallibly: a failed growth is a formatting error.
struct FallibleText(String);

impl std::fmt::Write for FallibleText {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0
            .try_reserve(text.len())
            .map_err(|_| std::fmt::Error)?;
        self.0.push_str(text);
        Ok(())
    }
}

/// A heap box for `inner`, or `None` when the allocation failed.
fn try_box(inner: ErrorInner) -> std::result::Result<Box<[ErrorInner; 1]>, ErrorInner> {
    let mut items = Vec::new();
    if items.try_reserve_exact(1).is_err() {
        return Err(inner);
    }
    items.push(inner);
    Ok(items
        .into_boxed_slice()
        .try_into()
        .expect("a vector of one item is a box of one item"))
}

/// Puts a box in [`SPARE`] if it holds none and memory allows. Called when the module is
/// loaded and after each error that found memory.
pub fn reserve_spare() {
    use std::sync::atomic::Ordering;
    if SPARE_HELD.load(Ordering::Relaxed) {
        return;
    }
    let mut path = Vec::new();
    if path.try_reserve_exact(SPARE_PATH_ROOM).is_err() {
        return;
    }
    let placeholder = ErrorInner {
        failure: Failure::Message(ErrorKind::Decode, Code::DecodeError, String::new()),
        path,
        input: None,
    };
    if let Ok(spare) = try_box(placeholder) {
        let mut slot = SPARE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *slot = Some(spare);
        SPARE_HELD.store(true, Ordering::Relaxed);
    }
}

/// The box of a new error: from the heap, or when that fails, the spare one (its path's room
/// kept). Only with neither left does the allocation abort, as Rust's own would.
fn boxed(failure: Failure) -> Error {
    use std::sync::atomic::Ordering;
    let inner = ErrorInner {
        failure,
        path: Vec::new(),
        input: None,
    };
    match try_box(inner) {
        Ok(boxed) => {
            reserve_spare();
            Error(boxed)
        }
        Err(inner) => {
            let spare = SPARE
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            SPARE_HELD.store(false, Ordering::Relaxed);
            // The error itself found no memory: unless it is already a MemoryError, memory
            // running out is what to report (a validation error recorded by `errors="all"`
            // would let the walk go on and ask for another box).
            let failure = match inner.failure {
                Failure::Python(err, code) if is_memory_error(&err) => Failure::Python(err, code),
                Failure::OutOfMemory(what) => Failure::OutOfMemory(what),
                _ => Failure::OutOfMemory(ERROR_BOX),
            };
            match spare {
                Some(mut spare) => {
                    spare[0].failure = failure;
                    spare[0].path.clear();
                    spare[0].input = None;
                    Error(spare)
                }
                None => Error(Box::new([ErrorInner { failure, ..inner }])),
            }
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The constructors are `#[cold]`: a branch that builds an error is laid out away from the hot
/// path of the function it is in (issue 10: the decoders' hot code in fewer cache lines).
impl Error {
    #[cold]
    pub fn new(kind: ErrorKind, code: Code, message: impl MessageText) -> Self {
        // Unwinding from here may drop objects whose `__del__` runs Python code.
        crate::py::gc_give_up();
        match message.into_text() {
            Some(text) => boxed(Failure::Message(kind, code, text)),
            None => boxed(Failure::OutOfMemory(MESSAGE)),
        }
    }

    /// Malformed input (a DecodeError): `code` says which format's (`json_invalid`...), or
    /// `decode_error`.
    #[cold]
    pub fn decode(code: Code, message: impl MessageText) -> Self {
        Self::new(ErrorKind::Decode, code, message)
    }

    #[cold]
    pub fn validation(code: Code, message: impl MessageText) -> Self {
        Self::new(ErrorKind::Validation, code, message)
    }

    /// An EncodeError (which shows no code).
    #[cold]
    pub fn encode(message: impl MessageText) -> Self {
        Self::new(ErrorKind::Encode, Code::EncodeError, message)
    }

    /// Text that is no value of its type (a datetime, a duration, a UUID, base64), with the
    /// byte layer's message and the code of what it is not.
    #[cold]
    pub fn text(error: polycodec_formats::text::temporal::TextError) -> Self {
        Self::validation(Code::of_text(error), error.message())
    }

    /// A Python exception with the code it has when it becomes a ValidationError.
    #[cold]
    pub fn python(err: PyErr, code: Code) -> Self {
        crate::py::gc_give_up();
        boxed(Failure::Python(err, code))
    }

    /// The marker of a value whose errors `errors="all"` recorded (see [`Failure::Collected`]).
    #[cold]
    pub fn collected() -> Self {
        crate::py::gc_give_up();
        boxed(Failure::Collected)
    }

    /// Whether this is [`Error::collected`]'s marker.
    #[inline]
    pub fn is_collected(&self) -> bool {
        matches!(self.failure, Failure::Collected)
    }

    /// Whether `errors="all"` records this error and reads on: an input that does not fit the
    /// type, or user code's `TypeError`, `ValueError` or `AttributeError` (which become
    /// `ValidationError`s); not malformed input, nor any other exception, which end the call.
    pub fn is_recorded(&self, py: Python<'_>) -> bool {
        match &self.failure {
            Failure::Message(kind, ..) => *kind == ErrorKind::Validation,
            Failure::Python(err, _) => {
                err.is_instance_of::<PyTypeError>(py)
                    || err.is_instance_of::<PyValueError>(py)
                    || err.is_instance_of::<PyAttributeError>(py)
            }
            Failure::Collected | Failure::OutOfMemory(_) => false,
        }
    }

    /// Keeps the value that failed, for `errors()`'s "input".
    pub fn set_input(&mut self, input: Py<PyAny>) {
        self.input = Some(input);
    }

    /// `expected <what>, got <found>`: the message of every type mismatch.
    #[cold]
    pub fn expected(kind: ErrorKind, code: Code, what: &str, found: &str) -> Self {
        Self::new(kind, code, format_args!("expected {what}, got {found}"))
    }

    /// Adds the segment of the container the error passed through on its way up; when memory
    /// has run out the segment is left off (a shorter path, not an abort).
    #[cold]
    pub fn at(mut self, segment: PathSegment) -> Self {
        if self.path.try_reserve(1).is_ok() {
            self.path.push(segment);
        }
        self
    }

    #[cold]
    pub fn at_field(self, wire_name: &str) -> Self {
        match owned(wire_name) {
            Some(name) => self.at(PathSegment::Field(name)),
            None => self,
        }
    }

    #[cold]
    pub fn at_index(self, index: usize) -> Self {
        self.at(PathSegment::Index(index))
    }

    #[cold]
    pub fn at_items(self) -> Self {
        self.at(PathSegment::Items)
    }

    #[cold]
    pub fn at_key(self, key: &str) -> Self {
        match PathSegment::key(key) {
            Some(segment) => self.at(segment),
            None => self,
        }
    }

    /// The steps this error gathered, innermost first.
    #[cfg(test)]
    pub fn path_segments(&self) -> &[PathSegment] {
        &self.path
    }

    /// The path in the JSONPath-like notation users see: `$.contents[3].nbytes`, `$.tags["a b"]`
    /// (just `$` when memory has run out).
    pub fn path_string(&self) -> String {
        path_text(self.path.iter().rev()).unwrap_or_else(|| String::from("$"))
    }

    /// The path as a tuple, outermost step first, for `exc.loc`: a field's wire name or a dict
    /// key (as shown in the path) is a `str`, a position an `int`; the root is `()`. Built
    /// only here, when the exception is raised.
    pub fn loc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        loc_tuple(py, self.path.iter().rev(), None)
    }

    /// Converts into the Python exception raised to the caller. A `TypeError`, `ValueError` or
    /// `AttributeError` raised by user code on the way (`__post_init__`, a default factory, a custom `__str__`)
    /// becomes a `ValidationError` when decoding or an `EncodeError` when encoding (`context`),
    /// with the path and the original as its cause; any other exception (MemoryError,
    /// KeyboardInterrupt, a user-defined error) passes through unchanged.
    pub fn into_pyerr(mut self, py: Python<'_>, context: ErrorKind) -> PyErr {
        // The failure is taken out (an empty message, which allocates nothing, left in its
        // place) so that a passed-through exception, a MemoryError among them, is returned
        // before anything is allocated for the path.
        let failure = std::mem::replace(
            &mut self.failure,
            Failure::Message(ErrorKind::Decode, Code::DecodeError, String::new()),
        );
        let (kind, code, message, cause) = match failure {
            Failure::Message(kind, code, message) => (kind, code, message, None),
            Failure::Python(err, code) => {
                let wrap = err.is_instance_of::<PyTypeError>(py)
                    || err.is_instance_of::<PyValueError>(py)
                    || err.is_instance_of::<PyAttributeError>(py);
                if !wrap || err.is_instance(py, exception_class(py, context)) {
                    return err;
                }
                let message = err.value(py).to_string();
                (context, code, message, Some(err))
            }
            Failure::Collected => (
                context,
                Code::ValueError,
                String::from("the value has errors"),
                None,
            ),
            Failure::OutOfMemory(what) => return crate::py::memory_error(py, what),
        };
        let code = code.as_str();
        let path = self.path_string();
        let loc = match self.loc(py) {
            Ok(loc) => loc,
            Err(err) => return err,
        };
        let message = bounded(message);
        let text = format!(
            "{} (at {})",
            message,
            path_in_message(&path, self.path.len())
        );
        // Built fallibly: under memory pressure the MemoryError is raised, not a panic.
        let args = crate::py::new_str(py, text.as_bytes(), false)
            .and_then(|text| Ok((text, crate::py::new_str(py, path.as_bytes(), false)?)));
        let (text, path) = match args {
            Ok(args) => args,
            Err(err) => return err,
        };
        let details = match kind {
            ErrorKind::Encode => None,
            _ => match details(py, code, &message, &loc, self.input.take()) {
                Ok(details) => Some(details),
                Err(err) => return err,
            },
        };
        match exception_class(py, kind).call((text, path, loc), details.as_ref()) {
            Ok(instance) => {
                let error = PyErr::from_value(instance);
                if cause.is_some() {
                    error.set_cause(py, cause);
                }
                error
            }
            Err(err) => err,
        }
    }
}

/// The keys of a `DecodeError`'s keyword arguments and of its `errors()` entries, made once
/// per exception, fallibly (PyO3 makes a `&str` key with a conversion that panics when
/// CPython's allocation fails).
struct Keys<'py> {
    code: Bound<'py, PyAny>,
    errors: Bound<'py, PyAny>,
    type_: Bound<'py, PyAny>,
    loc: Bound<'py, PyAny>,
    msg: Bound<'py, PyAny>,
    input: Bound<'py, PyAny>,
}

impl<'py> Keys<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let key = |text: &str| crate::py::new_str(py, text.as_bytes(), true);
        Ok(Keys {
            code: key("code")?,
            errors: key("errors")?,
            type_: key("type")?,
            loc: key("loc")?,
            msg: key("msg")?,
            input: key("input")?,
        })
    }
}

/// A `str` made fallibly.
fn str_object<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    crate::py::new_str(py, text.as_bytes(), text.is_ascii())
}

/// The keyword arguments of a `DecodeError`: its code, and its `errors()` entry.
fn details<'py>(
    py: Python<'py>,
    code: &str,
    message: &str,
    loc: &Bound<'py, PyTuple>,
    input: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let keys = Keys::new(py)?;
    let entry_loc = match named_field(code, message) {
        Some(name) => loc_tuple_with(py, loc, str_object(py, name)?)?.into_any(),
        None => loc.clone().into_any(),
    };
    let entry = error_entry(py, &keys, code, message, entry_loc, input)?;
    let kwargs = crate::py::new_dict(py)?;
    kwargs.set_item(&keys.code, str_object(py, code)?)?;
    kwargs.set_item(
        &keys.errors,
        crate::py::new_list(py, std::iter::once(entry))?,
    )?;
    Ok(kwargs)
}

/// `loc` with one more step.
fn loc_tuple_with<'py>(
    py: Python<'py>,
    loc: &Bound<'py, PyTuple>,
    last: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut steps: Vec<Bound<'py, PyAny>> = Vec::new();
    if steps.try_reserve_exact(loc.len() + 1).is_err() {
        return Err(no_memory());
    }
    steps.extend(loc.iter());
    steps.push(last);
    crate::py::new_tuple(py, steps.into_iter())
}

/// The field a missing-field or unknown-field error names: as in pydantic, the `loc` of its
/// `errors()` entry ends with it (the exception's own `path` and `loc` point at the record,
/// whose message names the field).
fn named_field<'m>(code: &str, message: &'m str) -> Option<&'m str> {
    match code {
        "missing" | "extra_forbidden" => message
            .split_once('`')
            .and_then(|(_, rest)| rest.strip_suffix('`')),
        _ => None,
    }
}

/// One `errors()` entry, with pydantic's keys in its order: `type` (the code), `loc` (a tuple,
/// or the `_Loc` of an `errors="all"` report that `errors()` turns into one), `msg` (the
/// message without its path) and, where known, `input`.
fn error_entry<'py>(
    py: Python<'py>,
    keys: &Keys<'py>,
    code: &str,
    message: &str,
    loc: Bound<'py, PyAny>,
    input: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let entry = crate::py::new_dict(py)?;
    entry.set_item(&keys.type_, str_object(py, code)?)?;
    entry.set_item(&keys.loc, loc)?;
    entry.set_item(&keys.msg, str_object(py, message)?)?;
    if let Some(input) = input {
        entry.set_item(&keys.input, input)?;
    }
    Ok(entry.into_any())
}

/// `errors="all"`: the `ValidationError` that reports every error of `report` (in the order
/// the decoder met them): its message names each (cut as messages are), its `path` and `loc`
/// are the first's, and `errors()` lists them all. Each entry's `loc` is made when `errors()`
/// is asked, from the steps the report's errors share (see `codecs::collect`). Everything is
/// allocated fallibly: memory running out here is a MemoryError.
pub fn collected_to_pyerr(py: Python<'_>, report: Report) -> PyErr {
    match collected_exception(py, report) {
        Ok(error) => error,
        Err(err) => err,
    }
}

/// A copy of a step, or `None` when memory has run out.
fn copied(segment: &PathSegment) -> Option<PathSegment> {
    Some(match segment {
        PathSegment::Field(name) => PathSegment::Field(owned(name)?),
        PathSegment::Key(name) => PathSegment::Key(owned(name)?),
        PathSegment::Index(index) => PathSegment::Index(*index),
        PathSegment::Items => PathSegment::Items,
    })
}

/// A message of many parts, kept only to its first [`MAX_MESSAGE_CHARS`] characters (and one
/// more, to know it was cut) while every character is counted: what [`bounded`] makes of the
/// whole text, without holding it.
struct CutMessage {
    text: String,
    chars: usize,
}

impl CutMessage {
    /// Appends `part`; false when memory has run out.
    fn push(&mut self, part: &str) -> bool {
        if self.chars <= MAX_MESSAGE_CHARS {
            let keep = MAX_MESSAGE_CHARS + 1 - self.chars;
            let end = part
                .char_indices()
                .nth(keep)
                .map_or(part.len(), |(at, _)| at);
            if self.text.try_reserve(end).is_err() {
                return false;
            }
            self.text.push_str(&part[..end]);
        }
        self.chars += part.chars().count();
        true
    }

    /// The message as [`bounded`] gives it; `None` when memory has run out.
    fn finish(mut self) -> Option<String> {
        if self.chars <= MAX_MESSAGE_CHARS {
            return Some(self.text);
        }
        let cut = self
            .text
            .char_indices()
            .nth(MAX_MESSAGE_CHARS)
            .map_or(self.text.len(), |(at, _)| at);
        self.text.truncate(cut);
        self.text.try_reserve(64).ok()?;
        let _ = write!(self.text, "... (message cut, {} characters)", self.chars);
        Some(self.text)
    }
}

static LOC_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn collected_exception(py: Python<'_>, mut report: Report) -> PyResult<PyErr> {
    let count = report
        .recorded
        .iter()
        .filter(|recorded| !recorded.error.is_collected())
        .count();
    if count == 1 && !report.stopped {
        if let Some(recorded) = report
            .recorded
            .iter_mut()
            .find(|recorded| !recorded.error.is_collected())
        {
            // Its steps outside its own are joined to them, as a fail-fast error's are.
            let mut error = std::mem::replace(&mut recorded.error, Error::collected());
            for segment in chain(&report.steps, recorded.outer) {
                let segment = copied(segment).ok_or_else(no_memory)?;
                if error.path.try_reserve(1).is_err() {
                    return Err(no_memory());
                }
                error.path.push(segment);
            }
            return Ok(error.into_pyerr(py, ErrorKind::Validation));
        }
    }
    if count == 0 {
        return Ok(Error::validation(Code::ValueError, "the value has errors")
            .into_pyerr(py, ErrorKind::Validation));
    }
    let keys = Keys::new(py)?;
    // The shared steps as Python links `(outer link or None, step)`; a step's parent was made
    // after it, so the links are made from the last step back.
    let steps = &report.steps;
    let mut links: Vec<Option<Bound<'_, PyAny>>> = Vec::new();
    if links.try_reserve_exact(steps.len()).is_err() {
        return Err(no_memory());
    }
    links.resize_with(steps.len(), || None);
    for index in (0..steps.len()).rev() {
        let step = &steps[index];
        let parent = match links.get(step.parent as usize) {
            Some(Some(link)) => link.clone(),
            _ => py.None().into_bound(py),
        };
        let item = loc_item(py, &step.segment)?;
        links[index] = Some(crate::py::new_tuple(py, [parent, item].into_iter())?.into_any());
    }
    let loc_class = LOC_CLASS.import(py, "polycodec._errors", "_Loc")?;
    let mut entries: Vec<Bound<'_, PyAny>> = Vec::new();
    if entries.try_reserve_exact(count).is_err() {
        return Err(no_memory());
    }
    let mut text = CutMessage {
        text: String::new(),
        chars: 0,
    };
    let stop = if report.stopped {
        format!(" (errors=\"all\" stops at {MAX_COLLECTED}; the input may have more)")
    } else {
        String::new()
    };
    if !text.push(&format!("{count} validation errors{stop}: ")) {
        return Err(no_memory());
    }
    let (mut path, mut shown) = (String::new(), String::new());
    let mut first: Option<(Bound<'_, PyAny>, Bound<'_, PyTuple>, &'static str)> = None;
    let mut cause = None;
    for recorded in report.recorded.iter_mut() {
        let error = &mut recorded.error;
        let failure = std::mem::replace(
            &mut error.failure,
            Failure::Message(ErrorKind::Decode, Code::DecodeError, String::new()),
        );
        let (message, code) = match failure {
            Failure::Message(_, code, message) => (message, code.as_str()),
            Failure::Python(err, code) => {
                let message = err.value(py).to_string();
                cause.get_or_insert(err);
                (message, code.as_str())
            }
            Failure::Collected => continue,
            Failure::OutOfMemory(what) => return Err(crate::py::memory_error(py, what)),
        };
        let input = error.input.take();
        let error = &*error;
        let message = bounded(message);
        // The whole path, outermost first: the shared steps, then the error's own.
        let mut whole: Vec<&PathSegment> = Vec::new();
        let outer = chain(steps, recorded.outer);
        if whole
            .try_reserve_exact(error.path.len() + outer.clone().count())
            .is_err()
        {
            return Err(no_memory());
        }
        whole.extend(outer);
        whole.reverse();
        whole.extend(error.path.iter().rev());
        path.clear();
        shown.clear();
        if !push_path(&mut path, whole.iter().copied())
            || shown
                .try_reserve(message.len() + PATH_HEAD_CHARS * 4 + PATH_TAIL_CHARS * 4 + 128)
                .is_err()
        {
            return Err(no_memory());
        }
        if !entries.is_empty() {
            shown.push_str("; ");
        }
        shown.push_str(&message);
        shown.push_str(" (at ");
        push_path_in_message(&mut shown, &path, whole.len());
        shown.push(')');
        if !text.push(&shown) {
            return Err(no_memory());
        }
        // The entry's `loc`, made when `errors()` asks: the link of its shared steps and its
        // own steps (with a missing or unknown field's name).
        let mut own: Vec<Bound<'_, PyAny>> = Vec::new();
        if own.try_reserve_exact(error.path.len() + 1).is_err() {
            return Err(no_memory());
        }
        for segment in error.path.iter().rev() {
            own.push(loc_item(py, segment)?);
        }
        if let Some(name) = named_field(code, &message) {
            own.push(str_object(py, name)?);
        }
        let outer_link = match links.get(recorded.outer as usize) {
            Some(Some(link)) => link.clone(),
            _ => py.None().into_bound(py),
        };
        let own = crate::py::new_tuple(py, own.into_iter())?;
        let loc = loc_class.call1((outer_link, own))?;
        entries.push(error_entry(py, &keys, code, &message, loc, input)?);
        if first.is_none() {
            let loc = loc_tuple(py, whole.iter().copied(), None)?;
            first = Some((str_object(py, &path)?, loc, code));
        }
    }
    let Some((path, loc, code)) = first else {
        return Ok(Error::validation(Code::ValueError, "the value has errors")
            .into_pyerr(py, ErrorKind::Validation));
    };
    let text = text.finish().ok_or_else(no_memory)?;
    let kwargs = crate::py::new_dict(py)?;
    kwargs.set_item(&keys.code, str_object(py, code)?)?;
    kwargs.set_item(&keys.errors, crate::py::new_list(py, entries.into_iter())?)?;
    let text = str_object(py, &text)?;
    let instance =
        exception_class(py, ErrorKind::Validation).call((text, path, loc), Some(&kwargs))?;
    let error = PyErr::from_value(instance);
    if cause.is_some() {
        error.set_cause(py, cause);
    }
    Ok(error)
}

impl From<PyErr> for Error {
    #[cold]
    fn from(err: PyErr) -> Self {
        crate::py::gc_give_up();
        boxed(Failure::Python(err, Code::ValueError))
    }
}

/// The MemoryError for a buffer that could not grow: Rust's own allocation failure
/// (`handle_alloc_error`) would abort the whole interpreter.
#[cold]
#[inline(never)]
pub fn out_of_memory(what: &'static str) -> Error {
    crate::py::gc_give_up();
    boxed(Failure::OutOfMemory(what))
}

/// Makes room for `additional` more items in a buffer whose size the input or the value
/// being encoded drives: a MemoryError instead of an abort. Amortised like `Vec::reserve`; the
/// common case (room left) is one comparison.
#[inline(always)]
pub fn reserve<T>(items: &mut Vec<T>, additional: usize, what: &'static str) -> Result<()> {
    if items.capacity() - items.len() < additional {
        return grow(items, additional, what);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn grow<T>(items: &mut Vec<T>, additional: usize, what: &'static str) -> Result<()> {
    items
        .try_reserve(additional)
        .map_err(|_| out_of_memory(what))
}

/// Room in an encoder's output for the small writes of its next item (every write of
/// `growth::LARGE` bytes or more makes its own): the encoders' walks ask once per container item
/// and record field, so output that outgrows memory ends the encode in a MemoryError rather
/// than aborting the process in a `Vec` growth, and ends it at once (a shared structure with
/// 2^40 leaves is not walked to its end).
#[inline(always)]
pub fn output_room(out: &mut Vec<u8>) -> Result<()> {
    reserve(out, polycodec_formats::growth::LARGE, "the encoded output")
}

/// Runs one encode into an output buffer: a MemoryError when a writer could not grow the buffer
/// (the output is then incomplete and must be dropped), else the encode's own result.
pub fn output_result(encode: impl FnOnce() -> Result<()>) -> Result<()> {
    polycodec_formats::growth::take_output_failure();
    let result = encode();
    if polycodec_formats::growth::take_output_failure() {
        return Err(out_of_memory("the encoded output"));
    }
    result
}

/// A failure of the CPython layer's output sinks (`py::output`, `py::bytearray`): the error
/// made where it happened would have been the same.
impl From<crate::py::Fault> for Error {
    #[cold]
    fn from(fault: crate::py::Fault) -> Self {
        match fault {
            crate::py::Fault::Python(err) => Error::from(err),
            crate::py::Fault::OutOfMemory(what) => out_of_memory(what),
        }
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// The byte layer's Avro errors (`formats/avro.rs`), raised as before: malformed input as a
/// DecodeError, a failed allocation as a MemoryError, each with its message unchanged.
impl From<polycodec_formats::avro::Error> for Error {
    #[cold]
    fn from(err: polycodec_formats::avro::Error) -> Self {
        use polycodec_formats::avro::Error as Avro;
        match err {
            Avro::Decode(message) => Error::decode(Code::AvroInvalid, message),
            Avro::Refused(message) => Error::decode(Code::DecodeError, message),
            Avro::OutOfMemory(message) => {
                Error::from(PyErr::new::<pyo3::exceptions::PyMemoryError, _>(message))
            }
        }
    }
}

/// `text` as an owned `String`, or `None` when memory has run out.
/// A map key as its path step shows it: its `str()`, or nothing when that fails or memory has
/// run out (the error being reported may be that very `MemoryError`, and an infallible copy
/// would abort the interpreter instead).
pub fn shown_key(key: &Bound<'_, PyAny>) -> String {
    key.str()
        .ok()
        .and_then(|text| text.to_str().ok().and_then(owned))
        .unwrap_or_default()
}

fn owned(text: &str) -> Option<String> {
    let mut out = String::new();
    out.try_reserve_exact(text.len()).ok()?;
    out.push_str(text);
    Some(out)
}

/// The path text of `segments` (outermost first) as users see it, `$.contents[3].nbytes`;
/// `None` when memory has run out (its room is reserved fallibly, all at once).
fn path_text<'a>(segments: impl Iterator<Item = &'a PathSegment> + Clone) -> Option<String> {
    let mut out = String::new();
    push_path(&mut out, segments).then_some(out)
}

/// Appends the path text of `segments` (outermost first) to `out`; false when memory ran out
/// (nothing appended).
fn push_path<'a>(
    out: &mut String,
    segments: impl Iterator<Item = &'a PathSegment> + Clone,
) -> bool {
    // An upper bound: a quoted name escapes a byte into at most six, plus `[""]...`.
    let room = segments.clone().fold(1usize, |room, segment| {
        room.saturating_add(match segment {
            PathSegment::Field(name) | PathSegment::Key(name) => name.len() * 6 + 8,
            PathSegment::Index(_) => 22,
            PathSegment::Items => 2,
        })
    });
    if out.try_reserve(room).is_err() {
        return false;
    }
    out.push('$');
    for segment in segments {
        match segment {
            PathSegment::Field(name) if is_plain_identifier(name) => {
                out.push('.');
                out.push_str(name);
            }
            PathSegment::Field(name) | PathSegment::Key(name) => {
                out.push('[');
                match name.char_indices().nth(MAX_QUOTED_CHARS) {
                    None => push_quoted(out, name),
                    // A long key (from the input) is cut, as quoted input is in messages.
                    Some((cut, _)) => {
                        push_quoted(out, &name[..cut]);
                        out.push_str("...");
                    }
                }
                out.push(']');
            }
            PathSegment::Index(index) => {
                let _ = write!(out, "[{index}]");
            }
            PathSegment::Items => out.push_str("[]"),
        }
    }
    true
}

/// One step of a `loc` as a Python object: a field's wire name or a dict key is a `str`, a
/// position an `int`, a schema's items `"[]"`. Made fallibly (PyO3's conversions panic when
/// CPython's allocation fails).
fn loc_item<'py>(py: Python<'py>, segment: &PathSegment) -> PyResult<Bound<'py, PyAny>> {
    match segment {
        PathSegment::Field(name) | PathSegment::Key(name) => {
            crate::py::new_str(py, name.as_bytes(), name.is_ascii())
        }
        PathSegment::Index(index) => crate::py::new_int(py, *index as i64),
        PathSegment::Items => crate::py::new_str(py, b"[]", true),
    }
}

/// `segments` (outermost first), then `last` if given, as a `loc` tuple.
fn loc_tuple<'a, 'py>(
    py: Python<'py>,
    segments: impl Iterator<Item = &'a PathSegment>,
    last: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut items: Vec<Bound<'py, PyAny>> = Vec::new();
    for segment in segments {
        if items.try_reserve(2).is_err() {
            return Err(no_memory());
        }
        items.push(loc_item(py, segment)?);
    }
    if let Some(last) = last {
        if items.try_reserve(1).is_err() {
            return Err(no_memory());
        }
        items.push(last);
    }
    crate::py::new_tuple(py, items.into_iter())
}

/// The MemoryError raised when an exception's own parts cannot be allocated.
#[cold]
fn no_memory() -> PyErr {
    pyo3::exceptions::PyMemoryError::new_err("cannot allocate memory for the error report")
}

fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The longest message an exception carries: a backstop, since [`quote`] keeps messages short.
const MAX_MESSAGE_CHARS: usize = 1000;

/// A message cut to [`MAX_MESSAGE_CHARS`] characters.
fn bounded(message: String) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => message,
        Some((cut, _)) => format!(
            "{}... (message cut, {} characters)",
            &message[..cut],
            message.chars().count()
        ),
    }
}

/// The most characters of the path a message quotes from its start, and from its end: the
/// start says where in the document, the end what failed. `.path` and `.loc` keep all of it.
const PATH_HEAD_CHARS: usize = 60;
const PATH_TAIL_CHARS: usize = 120;

/// The path as a message shows it: whole when short, else its start and end around a note of
/// what was left out, so that an error 1,000 levels deep still has a short message.
fn path_in_message(path: &str, steps: usize) -> std::borrow::Cow<'_, str> {
    if path.chars().count() <= PATH_HEAD_CHARS + PATH_TAIL_CHARS {
        return path.into();
    }
    let mut out = String::new();
    push_path_in_message(&mut out, path, steps);
    out.into()
}

/// Appends [`path_in_message`]'s text to `out`: with room for [`PATH_HEAD_CHARS`] and
/// [`PATH_TAIL_CHARS`] characters of four bytes and 128 bytes more reserved, nothing is
/// allocated.
fn push_path_in_message(out: &mut String, path: &str, steps: usize) {
    let chars = path.chars().count();
    if chars <= PATH_HEAD_CHARS + PATH_TAIL_CHARS {
        out.push_str(path);
        return;
    }
    let head_end = path
        .char_indices()
        .nth(PATH_HEAD_CHARS)
        .map_or(0, |(at, _)| at);
    let tail_start = path
        .char_indices()
        .nth(chars - PATH_TAIL_CHARS)
        .map_or(path.len(), |(at, _)| at);
    let _ = write!(
        out,
        "{}...({chars} characters, {steps} steps; the whole path is in .path)...{}",
        &path[..head_end],
        &path[tail_start..]
    );
}

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static VALIDATION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ENCODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The exception classes live in `polycodec._errors` (plain Python, so users can construct and
/// subclass them naturally); they are looked up once.
fn exception_class(py: Python<'_>, kind: ErrorKind) -> &Bound<'_, PyType> {
    let (cell, name) = match kind {
        ErrorKind::Decode => (&DECODE_ERROR, "DecodeError"),
        ErrorKind::Validation => (&VALIDATION_ERROR, "ValidationError"),
        ErrorKind::Encode => (&ENCODE_ERROR, "EncodeError"),
    };
    cell.import(py, "polycodec._errors", name)
        .expect("polycodec._errors defines the exception classes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer_so_results_stay_two_words() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
        assert_eq!(
            std::mem::size_of::<Result<crate::py::Obj<'static>>>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn path_is_built_innermost_first() {
        let err = Error::validation(Code::IntType, "expected int, got str")
            .at_field("nbytes")
            .at_index(3)
            .at_field("contents");
        assert_eq!(err.path_string(), "$.contents[3].nbytes");
    }

    #[test]
    fn odd_names_and_keys_are_quoted() {
        let err = Error::validation(Code::ValueError, "x")
            .at_key("a \"b\"")
            .at_field("my-field");
        assert_eq!(err.path_string(), "$[\"my-field\"][\"a \\\"b\\\"\"]");
    }

    #[test]
    fn quoted_input_is_bounded() {
        assert_eq!(quote("ab\"c"), "\"ab\\\"c\"");
        let long = "é".repeat(10_000);
        let shown = quote(&long);
        assert!(
            shown.len() < 200 && shown.ends_with("... (10000 characters)"),
            "{shown}"
        );
        let shown = quote_bytes(&[b'x'; 1 << 20]);
        assert!(
            shown.len() < 200 && shown.ends_with("... (1048576 bytes)"),
            "{shown}"
        );
        assert_eq!(quote_bytes(b"ab\xff"), "\"ab\u{fffd}\"");
        let err = Error::validation(Code::ValueError, "x").at_key(&"k".repeat(10_000));
        assert!(err.path_string().len() < 100);
    }

    #[test]
    fn a_deep_path_is_shortened_in_the_message_only() {
        let mut err = Error::validation(Code::ValueError, "x").at_field("leaf");
        for _ in 0..1000 {
            err = err.at_index(0);
        }
        let path = err.path_string();
        assert_eq!(path.len(), 1 + 3 * 1000 + 5);
        let shown = path_in_message(&path, 1001);
        assert!(
            shown.starts_with("$[0][0]") && shown.ends_with("[0][0].leaf"),
            "{shown}"
        );
        assert!(shown.contains("(3006 characters, 1001 steps;"), "{shown}");
        assert!(shown.chars().count() < 250, "{shown}");
        assert_eq!(path_in_message("$.a[1]", 2), "$.a[1]");
    }
}

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
#[derive(Debug)]
pub enum PathSegment {
    Field(String),
    Index(usize),
    Key(String),
}

/// Why a value could not be encoded or decoded.
#[derive(Debug)]
pub enum Failure {
    /// A message composed by polycodec.
    Message(ErrorKind, String),
    /// A Python exception raised by user code (`__post_init__`, a default factory, a validator)
    /// or by CPython itself (MemoryError); it is re-raised unchanged, chained to a polycodec error.
    Python(PyErr),
}

/// An error with the path to where it happened, innermost segment first.
#[derive(Debug)]
pub struct Error {
    pub failure: Failure,
    path: Vec<PathSegment>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            failure: Failure::Message(kind, message.into()),
            path: Vec::new(),
        }
    }

    pub fn decode(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Decode, message)
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Validation, message)
    }

    pub fn encode(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Encode, message)
    }

    /// `expected <what>, got <found>`: the message of every type mismatch.
    pub fn expected(kind: ErrorKind, what: &str, found: &str) -> Self {
        Self::new(kind, format!("expected {what}, got {found}"))
    }

    /// Adds the segment of the container the error passed through on its way up.
    #[cold]
    pub fn at(mut self, segment: PathSegment) -> Self {
        self.path.push(segment);
        self
    }

    #[cold]
    pub fn at_field(self, wire_name: &str) -> Self {
        self.at(PathSegment::Field(wire_name.to_owned()))
    }

    #[cold]
    pub fn at_index(self, index: usize) -> Self {
        self.at(PathSegment::Index(index))
    }

    #[cold]
    pub fn at_key(self, key: &str) -> Self {
        self.at(PathSegment::Key(key.to_owned()))
    }

    /// The path in the JSONPath-like notation users see: `$.contents[3].nbytes`, `$.tags["a b"]`.
    pub fn path_string(&self) -> String {
        let mut out = String::from("$");
        for segment in self.path.iter().rev() {
            match segment {
                PathSegment::Field(name) if is_plain_identifier(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                PathSegment::Field(name) | PathSegment::Key(name) => {
                    out.push('[');
                    push_quoted(&mut out, name);
                    out.push(']');
                }
                PathSegment::Index(index) => {
                    let _ = write!(out, "[{index}]");
                }
            }
        }
        out
    }

    /// The path as a tuple, outermost step first, for `exc.loc`: a field's wire name or a dict
    /// key (as shown in the path) is a `str`, a position an `int`; the root is `()`. Built
    /// only here, when the exception is raised.
    pub fn loc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(self.path.len());
        for segment in self.path.iter().rev() {
            items.push(match segment {
                PathSegment::Field(name) | PathSegment::Key(name) => {
                    name.as_str().into_pyobject(py)?.into_any()
                }
                PathSegment::Index(index) => index.into_pyobject(py)?.into_any(),
            });
        }
        PyTuple::new(py, items)
    }

    /// Converts into the Python exception raised to the caller. A `TypeError`, `ValueError` or
    /// `AttributeError` raised by user code on the way (`__post_init__`, a default factory, a custom `__str__`)
    /// becomes a `ValidationError` when decoding or an `EncodeError` when encoding (`context`),
    /// with the path and the original as its cause; any other exception (MemoryError,
    /// KeyboardInterrupt, a user-defined error) passes through unchanged.
    pub fn into_pyerr(self, py: Python<'_>, context: ErrorKind) -> PyErr {
        let path = self.path_string();
        let loc = match self.loc(py) {
            Ok(loc) => loc,
            Err(err) => return err,
        };
        let (kind, message, cause) = match self.failure {
            Failure::Message(kind, message) => (kind, message, None),
            Failure::Python(err) => {
                let wrap = err.is_instance_of::<PyTypeError>(py)
                    || err.is_instance_of::<PyValueError>(py)
                    || err.is_instance_of::<PyAttributeError>(py);
                if !wrap || err.is_instance(py, exception_class(py, context)) {
                    return err;
                }
                let message = err.value(py).to_string();
                (context, message, Some(err))
            }
        };
        let text = format!("{message} (at {path})");
        match exception_class(py, kind).call1((text, path, loc)) {
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

impl From<PyErr> for Error {
    fn from(err: PyErr) -> Self {
        Error {
            failure: Failure::Python(err),
            path: Vec::new(),
        }
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
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
    fn path_is_built_innermost_first() {
        let err = Error::validation("expected int, got str")
            .at_field("nbytes")
            .at_index(3)
            .at_field("contents");
        assert_eq!(err.path_string(), "$.contents[3].nbytes");
    }

    #[test]
    fn odd_names_and_keys_are_quoted() {
        let err = Error::validation("x")
            .at_key("a \"b\"")
            .at_field("my-field");
        assert_eq!(err.path_string(), "$[\"my-field\"][\"a \\\"b\\\"\"]");
    }
}

//! Extension types (`Codec(..., extensions={cls: polycodec.Extension(wire, encode=, decode=)})`):
//! a class the plan does not know travels as the value its `encode` function returns, written
//! by the wire type's node; `decode` turns the decoded wire value back into the class.
//!
//! Every format calls the two helpers here at a `Node::Extension`, so the encoders and decoders
//! only add one match arm each. A hook's exception becomes an `Error` carrying the Python
//! exception; the containers add the path while it unwinds, and `Error::into_pyerr` turns a
//! `TypeError`/`ValueError`/`AttributeError` into an `EncodeError`/`ValidationError`.

use pyo3::prelude::*;

use super::NodeId;
use crate::errors::{Code, Error, ErrorKind, Result};
use crate::py::Obj;

pub struct ExtensionSpec {
    /// The class values must be instances of when encoding.
    pub cls: Py<PyAny>,
    /// The class's `__qualname__`, for messages.
    pub name: String,
    /// The node that writes and reads the wire form.
    pub wire: NodeId,
    /// `encode(value) -> wire value`.
    pub encode: Py<PyAny>,
    /// `decode(wire value) -> value`.
    pub decode: Py<PyAny>,
    /// `Optional[cls]`: None passes through both ways without calling a hook (the wire node is
    /// then a union with `none`).
    pub nullable: bool,
}

impl ExtensionSpec {
    /// The wire value to encode for `value`: `value` itself for None in an `Optional`, else
    /// `encode(value)` after checking the class.
    pub fn encode_value<'py>(&self, value: &Obj<'py>) -> Result<Obj<'py>> {
        let py = value.py();
        if self.nullable && value.is_none() {
            return Ok(value.clone());
        }
        if !value.is_instance(self.cls.bind(py))? {
            return Err(Error::expected(
                ErrorKind::Encode,
                Code::EncodeError,
                &self.name,
                &crate::py::type_name(value),
            ));
        }
        Ok(self.encode.bind(py).call1((value,))?)
    }

    /// The value for a decoded wire value: None stays None in an `Optional`, anything else goes
    /// through `decode`.
    pub fn decode_value<'py>(&self, wire: Obj<'py>) -> Result<Obj<'py>> {
        if self.nullable && wire.is_none() {
            return Ok(wire);
        }
        let py = wire.py();
        Ok(self.decode.bind(py).call1((wire,))?)
    }
}

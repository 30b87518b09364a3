//! Pickle: stdlib-compatible pickles written straight from the plan, and a safe typed unpickler.
//!
//! Encoding writes the opcodes `pickle.dumps` writes for the same objects (protocols 2 to 5),
//! minus the parts a loader does not need (FRAME, memo entries for objects that cannot be met
//! twice), so the output is never larger than the stdlib's and `pickle.loads` reads it.
//!
//! Decoding never calls what a pickle names. The general path: `vm` (the byte layer's inert
//! machine) executes the pickle over an arena of values, where a global is a pair of names and
//! REDUCE/NEWOBJ/BUILD are plain nodes; `from_arena.rs` then walks that arena with the plan and
//! builds only what the plan names at each position, so a global the plan does not expect is
//! refused without being imported. The fast path (`from_opcodes.rs`) is tried first (this module's
//! `decode` chooses): one pass over the opcodes for the shapes the stdlib and polycodec write,
//! which gives up (and leaves the input to the general path) on anything else, so it accepts a
//! subset of what the general path accepts. Both read the standard library's object states
//! (datetime, date, time, UUID, protocol 2's bytes) through `recognise.rs`.

pub mod encode;
pub mod from_arena;
pub mod from_opcodes;
mod recognise;

pub use polycodec_formats::pickle::{ops, vm};

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use super::{unexpected_option, OpenArgs, WireFormat};
use crate::errors::{Code, Error, Result};
use crate::plan::{Node, Plan, RecordKind};
use crate::py::Obj;

/// A multiplicative hash for the encoder's memo keys and the decoder's shared values (pointers,
/// small integers): no need for SipHash's flooding resistance, the keys are not chosen freely
/// (a pickle's memo indices only name values the input itself built).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // A product's low bits depend only on the factors' low bits, and an object's address
        // has its low 4 bits zero: the table indexes by the low bits, so bring the well-mixed
        // high bits down (as rustc-hash does).
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        for &byte in chunks.remainder() {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

pub type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// The protocol written when the codec is not given one.
pub const DEFAULT_PROTOCOL: u8 = 5;

/// How a dataclass's state travels in the pickle (what its class's loader expects in BUILD).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateForm {
    /// The instance `__dict__`: `{name: value}`.
    Dict,
    /// A class with `__slots__`: `(None, {name: value})`, set with `setattr`.
    SlotsTuple,
    /// A frozen slotted dataclass, whose `__setstate__` (from `dataclasses`) takes the field
    /// values as a list in field order.
    List,
}

/// What the pickle codec derives once per record of the plan.
pub struct RecordInfo {
    /// The attribute names (pickled state is keyed by attribute, never by wire name).
    pub names: Vec<String>,
    /// Per field, the number of its name among the plan's distinct field names (the encoder
    /// memoizes each name once per pickle by this number, without hashing).
    pub name_ids: Vec<u32>,
    pub state: StateForm,
}

/// Whether decoding tries the single-pass fast path (`from_opcodes.rs`) before the general path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastPath {
    /// Fast path first, the general path when it does not recognise the input (the default).
    On,
    /// The general path only.
    Off,
    /// The fast path only: input it does not recognise raises DecodeError (for tests and for
    /// checking that a producer's pickles take the fast path).
    Only,
}

/// One codec's pickle settings.
pub struct Pickle {
    pub protocol: u8,
    pub fast_path: FastPath,
    /// Indexed by plan node id; `Some` for every record node.
    pub records: Vec<Option<RecordInfo>>,
    /// How many distinct field names the plan's records have.
    pub name_count: usize,
}

impl Pickle {
    pub fn record(&self, id: usize) -> &RecordInfo {
        self.records[id]
            .as_ref()
            .expect("every record node has its pickle info")
    }
}

pub fn open(args: &OpenArgs<'_, '_>) -> PyResult<Box<dyn WireFormat>> {
    let mut protocol = DEFAULT_PROTOCOL;
    let mut fast_path = FastPath::On;
    let unknown = pyo3::types::PyDict::new(args.options.py());
    for (key, value) in args.options.iter() {
        match key.extract::<&str>()? {
            "protocol" if value.is_none() => {}
            "protocol" => {
                let requested: i64 = value.extract().map_err(|_| {
                    PyTypeError::new_err("pickle protocol must be an int from 2 to 5")
                })?;
                if !(2..=5).contains(&requested) {
                    return Err(PyValueError::new_err(format!(
                        "pickle protocol must be from 2 to 5, got {requested}"
                    )));
                }
                protocol = requested as u8;
            }
            "fast_path" if value.is_none() => {}
            "fast_path" => {
                fast_path = if let Ok(flag) = value.cast::<pyo3::types::PyBool>() {
                    if flag.is_true() {
                        FastPath::On
                    } else {
                        FastPath::Off
                    }
                } else if value.extract::<&str>().is_ok_and(|text| text == "only") {
                    FastPath::Only
                } else {
                    return Err(PyValueError::new_err(
                        "pickle fast_path must be True, False or \"only\"",
                    ));
                };
            }
            _ => unknown.set_item(key, value)?,
        }
    }
    if !unknown.is_empty() {
        return Err(unexpected_option("pickle", &unknown));
    }
    let py = args.options.py();
    let dataclass_setstate = py
        .import("dataclasses")?
        .getattr("_dataclass_setstate")
        .ok();
    let mut records = Vec::with_capacity(args.plan.nodes.len());
    let mut name_numbers: HashMap<String, u32> = HashMap::new();
    for node in &args.plan.nodes {
        let Node::Record(spec) = node else {
            records.push(None);
            continue;
        };
        let names = spec
            .fields
            .iter()
            .map(|field| field.name.bind(py).to_str().map(str::to_owned))
            .collect::<PyResult<Vec<_>>>()?;
        // A slotted attrs class pickles its fields as a dict: what its own `__getstate__`
        // gives and its `__setstate__` takes.
        let attrs = spec.cls.bind(py).hasattr("__attrs_attrs__")?;
        let state = if spec.kind != RecordKind::Dataclass || !spec.slots || attrs {
            StateForm::Dict
        } else {
            let cls = spec.cls.bind(py);
            let setstate = cls.getattr("__setstate__").ok();
            let from_dataclasses = match (&setstate, &dataclass_setstate) {
                (Some(setstate), Some(ours)) => setstate.is(ours),
                _ => false,
            };
            // `dataclasses` gives only frozen slotted classes this `__setstate__`.
            if spec.frozen && from_dataclasses {
                StateForm::List
            } else {
                StateForm::SlotsTuple
            }
        };
        let name_ids = names
            .iter()
            .map(|name| {
                let next = name_numbers.len() as u32;
                *name_numbers.entry(name.clone()).or_insert(next)
            })
            .collect();
        records.push(Some(RecordInfo {
            names,
            name_ids,
            state,
        }));
    }
    Ok(Box::new(Pickle {
        protocol,
        fast_path,
        records,
        name_count: name_numbers.len(),
    }))
}

impl WireFormat for Pickle {
    fn encode_one(&self, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        crate::errors::output_result(|| encode::encode_one(self, plan, value, out))
    }

    fn encode_many(&self, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
        crate::errors::output_result(|| encode::encode_many(self, plan, values, out))
    }

    fn decode_one<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
        _writer_schema: Option<&Bound<'py, PyAny>>,
    ) -> Result<Obj<'py>> {
        decode(self, py, plan, strict, input, false)
    }

    fn decode_many<'py>(
        &self,
        py: Python<'py>,
        plan: &Plan,
        strict: bool,
        input: &[u8],
    ) -> Result<Obj<'py>> {
        decode(self, py, plan, strict, input, true)
    }
}

/// Decodes one root-type value, or (`many`) a pickled list of them: by the single-pass reader
/// (`from_opcodes.rs`) when the codec allows it and it recognises the pickle, else by the general
/// two-step path (`from_arena.rs`), which decides what is refused and reports every error (but
/// the exceptions of user hooks under `fast_path="only"`).
fn decode<'py>(
    fmt: &Pickle,
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    input: &[u8],
    many: bool,
) -> Result<Obj<'py>> {
    // A plan that runs user hooks is left to the general path by default: the fast path would
    // run them again when it gives up part-way (see from_opcodes.rs).
    let fast = match fmt.fast_path {
        FastPath::Off => false,
        FastPath::On => plan.decode_is_pure,
        FastPath::Only => true,
    };
    if fast {
        if let Some(value) = from_opcodes::decode(fmt, py, plan, strict, input, many)? {
            return Ok(value);
        }
        if fmt.fast_path == FastPath::Only {
            return Err(fast_path_refused());
        }
    }
    if many {
        from_arena::decode_many(fmt, py, plan, strict, input)
    } else {
        from_arena::decode_one(fmt, py, plan, strict, input)
    }
}

#[cold]
fn fast_path_refused() -> Error {
    Error::decode(
        Code::DecodeError,
        "the pickle fast path does not recognise this pickle (fast_path=\"only\")",
    )
}

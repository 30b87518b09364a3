//! The pickle encoder: walks the plan and the Python object together and writes the opcodes the
//! stdlib pickler writes for the same objects, into one buffer, without calling `__reduce_ex__`.
//!
//! Memoization follows the stdlib: a class, a field name, a module name and every object the
//! stdlib memoizes (strs, bytes, containers, records, enum members, dates, ...) gets a memo entry
//! when first written and is a GET the next time it is met in the same pickle, by identity; a
//! str also when an equal str was written before, so that which strs are one object (which
//! decoders do not keep) does not change the bytes. The rule looks at nothing but the value
//! itself, never at reference counts, so the same value always gives the same bytes, whatever
//! other threads or the caller hold.

use polycodec_formats::growth;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDate, PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess, PyDict,
    PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTime, PyTimeAccess, PyTuple, PyTzInfo,
    PyTzInfoAccess,
};

use super::ops::*;
use smallvec::SmallVec;
use std::collections::hash_map::Entry;
use std::hash::BuildHasher;

use super::{KeyMap, Pickle, StateForm};
use crate::errors::{Code, Error, ErrorKind, Result};
use crate::plan::{EnumSpec, LiteralValue, Node, NodeId, Plan, RecordKind, RecordSpec};
use crate::py::{self, Obj};
use crate::shape;
use crate::values::nested;

/// Encodes `value` as the plan's root type: one pickle.
pub fn encode_one(fmt: &Pickle, plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
    let mut writer = Writer::new(value.py(), fmt, plan, out);
    writer.header();
    writer.value(plan, plan.root, value)?;
    writer.out.push(STOP);
    Ok(())
}

/// Encodes a sequence of root-type values as one pickled list.
pub fn encode_many(fmt: &Pickle, plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
    let mut writer = Writer::new(values.py(), fmt, plan, out);
    writer.header();
    writer.out.push(EMPTY_LIST);
    let mark = writer.open_batch();
    let mut count = 0;
    shape::for_each_item(values, |item| {
        let result = writer
            .value(plan, plan.root, item)
            .map_err(|e| e.at_index(count));
        count += 1;
        result
    })?;
    writer.close_batch(mark, count, APPEND, APPENDS);
    writer.out.push(STOP);
    Ok(())
}

/// What a memo entry of a constant stands for (Python objects are memoized by address).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// A global of the standard library, by module and name.
    Global(&'static str, &'static str),
    /// A constant string argument (`"latin1"`, `"int"`).
    Text(&'static str),
}

struct Writer<'f, 'p, 'o, 'py> {
    fmt: &'f Pickle,
    /// The codec's own plan (its records have precomputed pickle info); values under `Any`
    /// are written with plans of their own.
    main: &'p Plan,
    out: &'o mut Vec<u8>,
    protocol: u8,
    depth: usize,
    memo_len: u32,
    /// The constants written, with their memo indices.
    memo: KeyMap<Key, u32>,
    /// The objects met so far, by identity.
    seen: Seen,
    py: Python<'py>,
    modules: Vec<(String, u32)>,
    /// Enclosing classes of nested classes written before protocol 4 (`module\nqualname`).
    parents: Vec<(String, u32)>,
}

/// The memo index of an object met but not written yet (its items are being written).
const PENDING: u32 = u32::MAX;

/// Every object met so far in one pickle (values, classes, field names).
#[derive(Default)]
struct Seen {
    /// By address: the object's slot in `objects`.
    slots: KeyMap<usize, u32>,
    /// The objects, held so that no address is reused while it is a key of `slots`, with their
    /// memo index (`PENDING` while the object is being written).
    objects: Vec<(Py<PyAny>, u32)>,
    /// The memo index of each distinct field name of the codec's plan (`PENDING`: not written).
    names: Vec<u32>,
    /// The strs written, by a hash of their text: their slots in `objects`.
    texts: KeyMap<u64, SmallVec<[u32; 1]>>,
}

/// Tables up to this many objects (under 1 MB) are kept for the thread's next pickle; bigger
/// ones are freed.
const KEPT_CAPACITY: usize = 1 << 14;

thread_local! {
    /// The last pickle's emptied table, kept for its allocation: growing a table from nothing
    /// for each call costs more than the lookups. A nested encode (from a property) finds none
    /// and makes its own.
    static SPARE: std::cell::Cell<Option<Seen>> = const { std::cell::Cell::new(None) };
}

impl Seen {
    fn spare() -> Seen {
        SPARE.with(|spare| spare.take()).unwrap_or_default()
    }
}

impl Drop for Writer<'_, '_, '_, '_> {
    fn drop(&mut self) {
        let mut seen = std::mem::take(&mut self.seen);
        // Releases the references through `Bound`, whose drop is a plain decref (the thread is
        // attached: the writer lives inside a call from Python); a `Py`'s own drop would first
        // ask PyO3, through a thread-local, whether it is, once per object.
        for (object, _) in seen.objects.drain(..) {
            drop(object.into_bound(self.py));
        }
        seen.slots.clear();
        seen.names.clear();
        seen.texts.clear();
        if seen.slots.capacity() <= KEPT_CAPACITY {
            SPARE.with(|spare| spare.set(Some(seen)));
        }
    }
}

/// How a value is to be written with respect to the memo.
enum Memo {
    /// Already in the memo under this index: a GET was written.
    Written(u32),
    /// Write it, then memoize it in this slot of `Seen::objects`.
    Remember(usize),
    /// Being written (this slot of `Seen::objects`) and memoized already under this index: a
    /// container or record, memoized before its items as the stdlib does.
    Early(usize, u32),
    /// Met again inside itself (a cycle): write it again, which ends at the depth limit.
    Again,
}

fn mismatch(node: &Node, value: &Obj<'_>) -> Error {
    Error::expected(
        ErrorKind::Encode,
        Code::EncodeError,
        node.describe(),
        &crate::py::type_name(value),
    )
}

impl<'f, 'p, 'o, 'py> Writer<'f, 'p, 'o, 'py> {
    fn new(py: Python<'py>, fmt: &'f Pickle, plan: &'p Plan, out: &'o mut Vec<u8>) -> Self {
        let mut seen = Seen::spare();
        seen.names.resize(fmt.name_count, PENDING);
        Writer {
            fmt,
            main: plan,
            out,
            protocol: fmt.protocol,
            depth: 0,
            memo_len: 0,
            memo: KeyMap::default(),
            seen,
            py,
            modules: Vec::new(),
            parents: Vec::new(),
        }
    }

    fn header(&mut self) {
        self.out.push(PROTO);
        self.out.push(self.protocol);
    }

    // ---- memo ----

    fn memoize(&mut self) -> u32 {
        let index = self.memo_len;
        self.memo_len += 1;
        if self.protocol >= 4 {
            self.out.push(MEMOIZE);
        } else if index < 256 {
            self.out.extend_from_slice(&[BINPUT, index as u8]);
        } else {
            self.out.push(LONG_BINPUT);
            self.out.extend_from_slice(&index.to_le_bytes());
        }
        index
    }

    fn get(&mut self, index: u32) {
        if index < 256 {
            self.out.extend_from_slice(&[BINGET, index as u8]);
        } else {
            self.out.push(LONG_BINGET);
            self.out.extend_from_slice(&index.to_le_bytes());
        }
    }

    /// Looks an object up by identity: a GET when it was written before in this pickle. Every
    /// object is memoized when first written, whether or not it is met again, as the stdlib
    /// does: what is written depends on the value alone, never on who else holds a reference.
    #[inline]
    fn recall(&mut self, value: &Obj<'py>) -> Memo {
        let seen = &mut self.seen;
        let slot = seen.objects.len();
        match seen.slots.entry(value.as_ptr() as usize) {
            Entry::Occupied(entry) => match seen.objects[*entry.get() as usize].1 {
                PENDING => Memo::Again,
                index => {
                    self.get(index);
                    Memo::Written(index)
                }
            },
            Entry::Vacant(entry) => {
                entry.insert(slot as u32);
                seen.objects.push((value.clone().unbind(), PENDING));
                Memo::Remember(slot)
            }
        }
    }

    /// Looks a str up by identity, then by its text (`None`: lone surrogates, by identity
    /// only): a GET when it or an equal str was written before in this pickle.
    fn recall_str(&mut self, value: &Obj<'py>, text: Option<&str>) -> Memo {
        let memo = self.recall(value);
        let (Memo::Remember(slot), Some(text)) = (&memo, text) else {
            return memo;
        };
        let slot = *slot;
        let py = self.py;
        let seen = &mut self.seen;
        let hash = seen.texts.hasher().hash_one(text.as_bytes());
        let candidates = seen.texts.entry(hash).or_default();
        let equal = candidates.iter().find_map(|&other| {
            let (object, index) = &seen.objects[other as usize];
            let other_text = object.bind(py).cast::<PyString>().ok()?;
            (py::str_utf8(other_text).ok()? == text).then_some(*index)
        });
        match equal {
            Some(index) => {
                seen.objects[slot].1 = index;
                self.get(index);
                Memo::Written(index)
            }
            None => {
                candidates.push(slot as u32);
                memo
            }
        }
    }

    /// Memoizes an object after it has been written (a MEMOIZE or PUT for the value on top of
    /// the stack).
    #[inline]
    fn remember(&mut self, memo: Memo) {
        match memo {
            Memo::Remember(slot) => self.seen.objects[slot].1 = self.memoize(),
            // Complete now: later meetings may fetch it (a GET while it was being written would
            // make a cycle, which polycodec does not write).
            Memo::Early(slot, index) => self.seen.objects[slot].1 = index,
            Memo::Written(_) | Memo::Again => {}
        }
    }

    /// Memoizes a container or record right after the opcode that creates it, before its items
    /// (where the stdlib does); `remember` completes it.
    fn memoize_early(&mut self, memo: Memo) -> Memo {
        match memo {
            Memo::Remember(slot) => Memo::Early(slot, self.memoize()),
            other => other,
        }
    }

    /// A memoized constant: written once, then fetched.
    fn constant(&mut self, key: Key, write: impl FnOnce(&mut Self)) {
        if let Some(&index) = self.memo.get(&key) {
            self.get(index);
            return;
        }
        write(self);
        let index = self.memoize();
        self.memo.insert(key, index);
    }

    // ---- primitives ----

    fn open_batch(&mut self) -> usize {
        let mark = self.out.len();
        self.out.push(MARK);
        mark
    }

    /// Ends the items written after `mark`: none leaves nothing, one uses the single-item
    /// opcode (the MARK removed), more use the batch opcode.
    fn close_batch(&mut self, mark: usize, count: usize, single: u8, many: u8) {
        match count {
            0 => self.out.truncate(mark),
            1 => {
                self.out.remove(mark);
                self.out.push(single);
            }
            _ => self.out.push(many),
        }
    }

    fn none(&mut self) {
        self.out.push(NONE);
    }

    fn bool(&mut self, flag: bool) {
        self.out.push(if flag { NEWTRUE } else { NEWFALSE });
    }

    fn int(&mut self, value: i64) {
        if (0..256).contains(&value) {
            self.out.extend_from_slice(&[BININT1, value as u8]);
        } else if (0..65536).contains(&value) {
            self.out.push(BININT2);
            self.out.extend_from_slice(&(value as u16).to_le_bytes());
        } else if i32::try_from(value).is_ok() {
            self.out.push(BININT);
            self.out.extend_from_slice(&(value as i32).to_le_bytes());
        } else {
            self.long(value as i128);
        }
    }

    /// LONG1 with the fewest two's-complement bytes, exactly as `pickle.encode_long`.
    fn long(&mut self, value: i128) {
        let bits = 128 - value.unsigned_abs().leading_zeros() as usize;
        let mut length = bits / 8 + 1;
        let bytes = value.to_le_bytes();
        if value < 0 && length > 1 && bytes[length - 1] == 0xff && bytes[length - 2] & 0x80 != 0 {
            length -= 1;
        }
        if value == 0 {
            length = 0;
        }
        self.out.extend_from_slice(&[LONG1, length as u8]);
        self.out.extend_from_slice(&bytes[..length]);
    }

    /// An int beyond 64 bits: its bytes come from `int.to_bytes`.
    fn big_int(&mut self, value: &Obj<'py>) -> Result<()> {
        if let Ok(wide) = value.extract::<i128>() {
            self.long(wide);
            return Ok(());
        }
        let py = value.py();
        let bits: usize = value.call_method0("bit_length")?.extract()?;
        let mut length = bits / 8 + 1;
        let signed = pyo3::types::PyDict::new(py);
        signed.set_item("signed", true)?;
        let data = value.call_method("to_bytes", (length, "little"), Some(&signed))?;
        let data = data.cast::<PyBytes>().map_err(PyErr::from)?.as_bytes();
        let negative = data.last().is_some_and(|b| b & 0x80 != 0);
        if negative && length > 1 && data[length - 1] == 0xff && data[length - 2] & 0x80 != 0 {
            length -= 1;
        }
        crate::errors::reserve(self.out, length + 5, "the encoded output")?;
        if length < 256 {
            self.out.extend_from_slice(&[LONG1, length as u8]);
        } else {
            self.out.push(LONG4);
            self.out.extend_from_slice(&(length as u32).to_le_bytes());
        }
        self.out.extend_from_slice(&data[..length]);
        Ok(())
    }

    fn float(&mut self, value: f64) {
        self.out.push(BINFLOAT);
        self.out.extend_from_slice(&value.to_be_bytes());
    }

    fn text(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let length = bytes.len();
        // Fallible for a large str: one too large for the memory left ends the encode in a
        // MemoryError (see `errors::output_result`), not an abort.
        if length >= growth::LARGE && !growth::output_room(self.out, length + 9) {
            return;
        }
        if self.protocol >= 4 && length < 256 {
            self.out
                .extend_from_slice(&[SHORT_BINUNICODE, length as u8]);
        } else if let Ok(length) = u32::try_from(length) {
            self.out.push(BINUNICODE);
            self.out.extend_from_slice(&length.to_le_bytes());
        } else {
            self.out.push(BINUNICODE8);
            self.out.extend_from_slice(&(length as u64).to_le_bytes());
        }
        self.out.extend_from_slice(bytes);
    }

    /// A `str` object: through the memo, as the stdlib memoizes every str (and by its text).
    fn str_object(&mut self, value: &Obj<'py>) -> Result<()> {
        let text = value.cast::<PyString>().map_err(PyErr::from)?;
        let utf8 = py::str_utf8(text).ok();
        let memo = self.recall_str(value, utf8);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        match utf8 {
            Some(utf8) => self.text(utf8),
            None => {
                // Lone surrogates: pickle writes them with "surrogatepass", as we do.
                let encoded = value.call_method1("encode", ("utf-8", "surrogatepass"))?;
                let data = encoded.cast::<PyBytes>().map_err(PyErr::from)?.as_bytes();
                self.out.push(BINUNICODE);
                self.out
                    .extend_from_slice(&(data.len() as u32).to_le_bytes());
                self.out.extend_from_slice(data);
            }
        }
        self.remember(memo);
        Ok(())
    }

    /// A `bytes` value. Protocol 2 has no bytes opcodes: the stdlib writes
    /// `_codecs.encode(text, "latin1")` (and `bytes()` when empty), as we do.
    fn bytes(&mut self, data: &[u8]) {
        if self.protocol >= 3 {
            let length = data.len();
            if length >= growth::LARGE && !growth::output_room(self.out, length + 9) {
                return;
            }
            if length < 256 {
                self.out.extend_from_slice(&[SHORT_BINBYTES, length as u8]);
            } else if let Ok(length) = u32::try_from(length) {
                self.out.push(BINBYTES);
                self.out.extend_from_slice(&length.to_le_bytes());
            } else {
                self.out.push(BINBYTES8);
                self.out.extend_from_slice(&(length as u64).to_le_bytes());
            }
            self.out.extend_from_slice(data);
            return;
        }
        if data.is_empty() {
            self.std_global("builtins", "bytes");
            self.out.extend_from_slice(&[EMPTY_TUPLE, REDUCE]);
            return;
        }
        self.std_global("_codecs", "encode");
        let latin1: String = data.iter().map(|&b| char::from(b)).collect();
        if data.len() == 1 {
            // CPython's one-character strs are shared objects, so the stdlib's memo fetches a
            // second `b"x"` (or a str "x") with a GET: through the str memo, as the stdlib does.
            let text = PyString::new(self.py, &latin1);
            if self.str_object(text.as_any()).is_err() {
                self.text(&latin1);
            }
        } else {
            self.text(&latin1);
        }
        self.constant(Key::Text("latin1"), |w| w.text("latin1"));
        self.out.extend_from_slice(&[TUPLE2, REDUCE]);
    }

    fn bytearray(&mut self, data: &[u8]) {
        if self.protocol >= 5 {
            self.out.push(BYTEARRAY8);
            self.out
                .extend_from_slice(&(data.len() as u64).to_le_bytes());
            self.out.extend_from_slice(data);
            return;
        }
        self.std_global("builtins", "bytearray");
        if data.is_empty() {
            self.out.push(EMPTY_TUPLE);
        } else {
            self.bytes(data);
            self.out.push(TUPLE1);
        }
        self.out.push(REDUCE);
    }

    /// A bytearray object, memoized like the stdlib memoizes it (the same bytearray met twice
    /// is one object again after loading).
    fn bytearray_object(&mut self, value: &Obj<'py>) {
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return;
        }
        let data = shape::bytes_like(value).unwrap_or_default();
        self.bytearray(&data);
        self.remember(memo);
    }

    fn module_name(&mut self, module: &str) {
        if let Some(&(_, index)) = self.modules.iter().find(|(m, _)| m == module) {
            self.get(index);
            return;
        }
        self.text(module);
        let index = self.memoize();
        self.modules.push((module.to_owned(), index));
    }

    /// Pushes a global of the standard library (memoized: later uses are a GET).
    fn std_global(&mut self, module: &'static str, name: &'static str) {
        let key = Key::Global(module, name);
        if let Some(&index) = self.memo.get(&key) {
            self.get(index);
            return;
        }
        self.push_global(module, name);
        let index = self.memoize();
        self.memo.insert(key, index);
    }

    /// Writes the opcodes that push a global (not memoized here).
    fn push_global(&mut self, module: &str, name: &str) {
        if self.protocol >= 4 {
            self.module_name(module);
            self.text(name);
            self.out.push(STACK_GLOBAL);
        } else {
            self.text_global(module, name);
        }
    }

    /// A global before protocol 4. GLOBAL cannot name a nested class (`Outer.Inner`), so, as
    /// the stdlib does, that is `getattr(Outer, "Inner")`.
    fn text_global(&mut self, module: &str, name: &str) {
        match name.rsplit_once('.') {
            Some((parent, last)) => {
                self.std_global("builtins", "getattr");
                // The enclosing class is memoized, as the stdlib does: its siblings reuse it.
                let path = format!("{module}\n{parent}");
                if let Some(&(_, index)) = self.parents.iter().find(|(p, _)| *p == path) {
                    self.get(index);
                } else {
                    self.text_global(module, parent);
                    let index = self.memoize();
                    self.parents.push((path, index));
                }
                self.text(last);
                self.out.extend_from_slice(&[TUPLE2, REDUCE]);
            }
            None => {
                self.out.push(GLOBAL);
                self.out.extend_from_slice(module.as_bytes());
                self.out.push(b'\n');
                self.out.extend_from_slice(name.as_bytes());
                self.out.push(b'\n');
            }
        }
    }

    fn class_global(&mut self, cls: &Py<PyAny>, module: &str, qualname: &str) {
        let class = cls.bind(self.py);
        let memo = self.recall(class);
        if let Memo::Written(_) = memo {
            return;
        }
        self.push_global(module, qualname);
        self.remember(memo);
    }

    /// Closes a tuple of `count` items pushed on the stack after `mark` (`None`: no MARK was
    /// written, the count is 0 to 3).
    fn close_tuple(&mut self, mark: Option<usize>, count: usize) {
        match (mark, count) {
            (_, 0) => {
                if let Some(mark) = mark {
                    self.out.truncate(mark);
                }
                self.out.push(EMPTY_TUPLE);
            }
            (None, 1) => self.out.push(TUPLE1),
            (None, 2) => self.out.push(TUPLE2),
            (None, 3) => self.out.push(TUPLE3),
            _ => self.out.push(TUPLE),
        }
    }

    fn enter(&mut self) -> Result<()> {
        shape::enter_nested(&mut self.depth)
    }

    // ---- plan-driven values ----

    fn value(&mut self, plan: &Plan, id: NodeId, value: &Obj<'py>) -> Result<()> {
        // Every item and field is written through here (`errors::output_room`).
        crate::errors::output_room(self.out)?;
        let node = plan.node(id);
        match node {
            Node::Str(_) => {
                if value.is_instance_of::<PyString>() {
                    self.str_object(value)
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Int(_) => self.int_value(node, value),
            Node::Float(_) => {
                if let Ok(float) = value.cast::<PyFloat>() {
                    self.float(float.value());
                    Ok(())
                } else {
                    self.int_value(node, value)
                }
            }
            Node::Bool => match value.cast::<PyBool>() {
                Ok(flag) => {
                    self.bool(flag.is_true());
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::None => {
                if value.is_none() {
                    self.none();
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Record(spec) => nested(self.depth, || self.record(plan, id, spec, value)),
            Node::Sequence(spec) => {
                if !shape::is_array_like(value) {
                    return Err(mismatch(node, value));
                }
                nested(self.depth, || self.collection(plan, spec.item, value))
            }
            Node::Tuple(items) => nested(self.depth, || self.fixed_tuple(plan, node, items, value)),
            Node::Dict(spec) => match value.cast::<PyDict>() {
                Ok(dict) => nested(self.depth, || self.dict(plan, spec.key, spec.value, dict)),
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Union(spec) => {
                let variant =
                    shape::pick_variant(plan, spec, value).ok_or_else(|| mismatch(node, value))?;
                self.value(plan, variant, value)
            }
            Node::TaggedUnion(spec) => {
                for (_, record_id) in &spec.tags {
                    if let Node::Record(record) = plan.node(*record_id) {
                        if shape::is_record(record, value) {
                            return nested(self.depth, || {
                                self.record(plan, *record_id, record, value)
                            });
                        }
                    }
                }
                Err(mismatch(node, value))
            }
            Node::Any => self.any(value),
            Node::Enum(spec) => self.enum_member(spec, value),
            Node::Literal(spec) => {
                let literal = shape::allowed_literal(spec, value)?;
                match literal {
                    LiteralValue::Str(_) => self.str_object(value)?,
                    LiteralValue::Int(number) => self.int(number),
                    LiteralValue::Bool(flag) => self.bool(flag),
                }
                Ok(())
            }
            Node::Bytes(_) => {
                if let Ok(bytes) = value.cast::<PyBytes>() {
                    let memo = self.recall(value);
                    if !matches!(memo, Memo::Written(_)) {
                        self.bytes(bytes.as_bytes());
                        self.remember(memo);
                    }
                    Ok(())
                } else if value.is_instance_of::<PyByteArray>() {
                    self.bytearray_object(value);
                    Ok(())
                } else {
                    let data = shape::bytes_like(value).ok_or_else(|| mismatch(node, value))?;
                    self.bytes(&data);
                    Ok(())
                }
            }
            Node::DateTime(_) => match value.cast::<PyDateTime>() {
                Ok(datetime) => self.datetime(value, datetime),
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Date => match value.cast::<PyDate>() {
                Ok(date) if !value.is_instance_of::<PyDateTime>() => {
                    self.date(value, date);
                    Ok(())
                }
                _ => Err(mismatch(node, value)),
            },
            Node::Time(_) => match value.cast::<PyTime>() {
                Ok(time) => self.time(value, time),
                Err(_) => Err(mismatch(node, value)),
            },
            Node::TimeDelta => match value.cast::<PyDelta>() {
                Ok(delta) => {
                    self.timedelta(value, delta);
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Uuid => {
                if shape::is_uuid(value) {
                    self.uuid(value)
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Decimal(_) => {
                if shape::is_decimal(value) {
                    self.decimal(value)
                } else {
                    Err(mismatch(node, value))
                }
            }
            // The wire form only: a loader never has to import the extension's class.
            Node::Extension(spec) => self.value(plan, spec.wire, &spec.encode_value(value)?),
            // By reference, as `pickle.dumps` writes it (`UnsetType.__reduce__`).
            Node::Unset if plan.is_unset(value) => {
                self.std_global("polycodec", "UNSET");
                Ok(())
            }
            // Raw is refused when a pickle codec is built (the format does not keep raw bytes).
            Node::Unset | Node::Raw { .. } => Err(mismatch(node, value)),
        }
    }

    fn int_value(&mut self, node: &Node, value: &Obj<'py>) -> Result<()> {
        if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
            return Err(mismatch(node, value));
        }
        match py::int_as_i64(value) {
            Some(number) => {
                self.int(number);
                Ok(())
            }
            None => self.big_int(value),
        }
    }

    fn enum_member(&mut self, spec: &EnumSpec, value: &Obj<'py>) -> Result<()> {
        let py = value.py();
        let literal = match shape::enum_member_index(spec, value) {
            Some(index) => spec.members[index].value.clone(),
            None => shape::flag_value(spec, value)?.0,
        };
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.class_global(&spec.cls, &spec.module, &spec.name);
        match &literal {
            LiteralValue::Str(_) | LiteralValue::Bool(_) => {
                // The member's own value object, so a str value shared elsewhere is memoized.
                let raw = value.getattr(pyo3::intern!(py, "_value_"))?;
                self.any(&raw)?;
            }
            LiteralValue::Int(number) => self.int(*number),
        }
        self.out.extend_from_slice(&[TUPLE1, REDUCE]);
        self.remember(memo);
        Ok(())
    }

    fn state_form(
        &self,
        py: Python<'py>,
        plan: &Plan,
        id: NodeId,
        spec: &RecordSpec,
    ) -> Result<StateForm> {
        if std::ptr::eq(plan, self.main) {
            return Ok(self.fmt.record(id).state);
        }
        if spec.kind != RecordKind::Dataclass
            || !spec.slots
            || spec.cls.bind(py).hasattr("__attrs_attrs__")?
        {
            return Ok(StateForm::Dict);
        }
        let ours = py
            .import("dataclasses")?
            .getattr("_dataclass_setstate")
            .ok();
        let theirs = spec.cls.bind(py).getattr("__setstate__").ok();
        Ok(match (ours, theirs) {
            (Some(ours), Some(theirs)) if ours.is(&theirs) => StateForm::List,
            _ => StateForm::SlotsTuple,
        })
    }

    fn record(
        &mut self,
        plan: &Plan,
        id: NodeId,
        spec: &RecordSpec,
        value: &Obj<'py>,
    ) -> Result<()> {
        if !shape::is_record(spec, value) {
            return Err(Error::encode(format!(
                "expected {}, got {}",
                spec.qualname,
                crate::py::type_name(value)
            )));
        }
        // A subclass instance is pickled as pickle.dumps pickles it: its own class, every
        // field of it.
        if let Some(own) = shape::subclass_plan(plan, spec, value)? {
            self.enter()?;
            let result = self.value(&own, own.root, value);
            self.depth -= 1;
            return result;
        }
        let mut memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.enter()?;
        let py = value.py();
        let mut source = spec.access.reader(value);
        match spec.kind {
            RecordKind::TypedDict => {
                self.out.push(EMPTY_DICT);
                memo = self.memoize_early(memo);
                let mark = self.open_batch();
                let mut count = 0;
                for (index, field) in spec.fields.iter().enumerate() {
                    let Some(item) = source.get(value, index, field.name.bind(py))? else {
                        continue;
                    };
                    self.field_name(plan, id, index, &field.name);
                    self.value(plan, field.node, &item)
                        .map_err(|e| e.at_field(&field.wire_name))?;
                    count += 1;
                }
                self.close_batch(mark, count, SETITEM, SETITEMS);
            }
            RecordKind::NamedTuple => {
                self.class_global(&spec.cls, &spec.module, &spec.qualname);
                let count = spec.fields.len();
                let mark = (count > 3).then(|| self.open_batch());
                for (index, field) in spec.fields.iter().enumerate() {
                    let item = source
                        .get(value, index, field.name.bind(py))?
                        .ok_or_else(|| {
                            Error::encode(format!("missing field `{}`", field.wire_name))
                        })?;
                    self.value(plan, field.node, &item)
                        .map_err(|e| e.at_index(index))?;
                }
                self.close_tuple(mark, count);
                self.out.push(NEWOBJ);
            }
            RecordKind::Dataclass => {
                self.class_global(&spec.cls, &spec.module, &spec.qualname);
                self.out.extend_from_slice(&[EMPTY_TUPLE, NEWOBJ]);
                memo = self.memoize_early(memo);
                let form = self.state_form(py, plan, id, spec)?;
                let state_start = self.out.len();
                match form {
                    StateForm::List => self.out.push(EMPTY_LIST),
                    StateForm::SlotsTuple => self.out.extend_from_slice(&[NONE, EMPTY_DICT]),
                    StateForm::Dict => self.out.push(EMPTY_DICT),
                }
                let mark = self.open_batch();
                let mut count = 0;
                for (index, field) in spec.fields.iter().enumerate() {
                    let item = match source.get(value, index, field.name.bind(py)) {
                        Ok(Some(item)) => item,
                        Ok(None) => continue,
                        // An `init=False` field never set has no value to carry.
                        Err(_) if !field.on_wire && form != StateForm::List => continue,
                        Err(err) => return Err(err.into()),
                    };
                    if form != StateForm::List {
                        self.field_name(plan, id, index, &field.name);
                    }
                    self.value(plan, field.node, &item)
                        .map_err(|e| e.at_field(&field.wire_name))?;
                    count += 1;
                }
                if count == 0 {
                    // No state at all: the stdlib writes no BUILD for an empty `__dict__`.
                    self.out.truncate(state_start);
                } else if form == StateForm::List {
                    self.close_batch(mark, count, APPEND, APPENDS);
                    self.out.push(BUILD);
                } else {
                    self.close_batch(mark, count, SETITEM, SETITEMS);
                    if form == StateForm::SlotsTuple {
                        self.out.push(TUPLE2);
                    }
                    self.out.push(BUILD);
                }
            }
        }
        self.depth -= 1;
        self.remember(memo);
        Ok(())
    }

    /// A field name: the plan's interned str, memoized the first time it is written.
    fn field_name(&mut self, plan: &Plan, id: NodeId, index: usize, name: &Py<PyString>) {
        // The codec's own records find a name written before by its number, without hashing.
        let number =
            std::ptr::eq(plan, self.main).then(|| self.fmt.record(id).name_ids[index] as usize);
        if let Some(number) = number {
            let known = self.seen.names[number];
            if known != PENDING {
                self.get(known);
                return;
            }
        }
        // The first time: like any str (a value may be this very str object, or an equal one).
        let name = name.bind(self.py);
        let memo_index = match self.recall_str(name.as_any(), py::str_utf8(name).ok()) {
            Memo::Written(memo_index) => memo_index,
            memo => {
                self.text(py::str_utf8(name).unwrap_or_default());
                match memo {
                    Memo::Remember(slot) => {
                        self.remember(memo);
                        self.seen.objects[slot].1
                    }
                    _ => self.memoize(),
                }
            }
        };
        if let Some(number) = number {
            self.seen.names[number] = memo_index;
        }
    }

    /// A list, tuple, set or frozenset of one item type, written as its own runtime type (so
    /// `pickle.loads` gives back an equal object); other iterables become a list.
    fn collection(&mut self, plan: &Plan, item: NodeId, value: &Obj<'py>) -> Result<()> {
        if value.is_exact_instance_of::<PyTuple>() && value.len()? == 0 {
            // The empty tuple is a singleton the stdlib never memoizes.
            self.out.push(EMPTY_TUPLE);
            return Ok(());
        }
        let mut memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.enter()?;
        let mut index = 0;
        if value.is_instance_of::<PyTuple>() {
            let length = value.len()?;
            let mark = (length > 3).then(|| self.open_batch());
            shape::for_each_item(value, |element| {
                let result = self
                    .value(plan, item, element)
                    .map_err(|e| e.at_index(index));
                index += 1;
                result
            })?;
            self.close_tuple(mark, length);
        } else if value.is_instance_of::<PySet>() || value.is_instance_of::<PyFrozenSet>() {
            let frozen = value.is_instance_of::<PyFrozenSet>();
            self.set_items(frozen, |w| {
                shape::for_each_item(value, |element| {
                    let result = w.value(plan, item, element).map_err(|e| e.at_index(index));
                    index += 1;
                    result
                })?;
                Ok(index)
            })?;
        } else {
            self.out.push(EMPTY_LIST);
            memo = self.memoize_early(memo);
            let mark = self.open_batch();
            shape::for_each_item(value, |element| {
                let result = self
                    .value(plan, item, element)
                    .map_err(|e| e.at_index(index));
                index += 1;
                result
            })?;
            self.close_batch(mark, index, APPEND, APPENDS);
        }
        self.depth -= 1;
        self.remember(memo);
        Ok(())
    }

    /// A set or frozenset whose items `write` pushes (returning how many): EMPTY_SET/ADDITEMS
    /// and FROZENSET from protocol 4, `builtins.set([...])` / `frozenset([...])` before.
    fn set_items(
        &mut self,
        frozen: bool,
        write: impl FnOnce(&mut Self) -> Result<usize>,
    ) -> Result<()> {
        if self.protocol >= 4 {
            if frozen {
                self.out.push(MARK);
                write(self)?;
                self.out.push(FROZENSET);
            } else {
                self.out.push(EMPTY_SET);
                let mark = self.open_batch();
                let count = write(self)?;
                if count == 0 {
                    self.out.truncate(mark);
                } else {
                    self.out.push(ADDITEMS);
                }
            }
            return Ok(());
        }
        if frozen {
            self.std_global("builtins", "frozenset");
        } else {
            self.std_global("builtins", "set");
        }
        self.out.push(EMPTY_LIST);
        let mark = self.open_batch();
        let count = write(self)?;
        self.close_batch(mark, count, APPEND, APPENDS);
        self.out.extend_from_slice(&[TUPLE1, REDUCE]);
        Ok(())
    }

    fn fixed_tuple(
        &mut self,
        plan: &Plan,
        node: &Node,
        items: &[NodeId],
        value: &Obj<'py>,
    ) -> Result<()> {
        let is_list = value.is_instance_of::<PyList>();
        if !value.is_instance_of::<PyTuple>() && !is_list {
            return Err(mismatch(node, value));
        }
        let length = value.len()?;
        if length != items.len() {
            return Err(Error::encode(format!(
                "expected a tuple of length {}, got length {length}",
                items.len()
            )));
        }
        if length == 0 && !is_list {
            self.out.push(EMPTY_TUPLE);
            return Ok(());
        }
        let mut memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.enter()?;
        let mut index = 0;
        let mut each = |w: &mut Self| {
            shape::for_each_item(value, |element| {
                let node = *items.get(index).ok_or_else(|| {
                    Error::encode("the tuple changed length while it was encoded")
                })?;
                let result = w.value(plan, node, element).map_err(|e| e.at_index(index));
                index += 1;
                result
            })
        };
        if is_list {
            self.out.push(EMPTY_LIST);
            memo = self.memoize_early(memo);
            let mark = self.open_batch();
            each(self)?;
            self.close_batch(mark, length, APPEND, APPENDS);
        } else {
            let mark = (length > 3).then(|| self.open_batch());
            each(self)?;
            self.close_tuple(mark, length);
        }
        self.depth -= 1;
        self.remember(memo);
        Ok(())
    }

    fn dict(
        &mut self,
        plan: &Plan,
        key_node: NodeId,
        value_node: NodeId,
        dict: &Bound<'py, PyDict>,
    ) -> Result<()> {
        let mut memo = self.recall(dict.as_any());
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.enter()?;
        self.out.push(EMPTY_DICT);
        memo = self.memoize_early(memo);
        let mark = self.open_batch();
        let mut count = 0;
        let mut position = 0;
        while let Some((key, item)) = py::next_entry(dict, &mut position) {
            let shown = || crate::errors::shown_key(key.as_any());
            self.value(plan, key_node, &key)
                .map_err(|e| e.at_key(&shown()))?;
            self.value(plan, value_node, &item)
                .map_err(|e| e.at_key(&shown()))?;
            count += 1;
        }
        self.close_batch(mark, count, SETITEM, SETITEMS);
        self.depth -= 1;
        self.remember(memo);
        Ok(())
    }

    // ---- standard library values ----

    /// A datetime state bytes object with the tzinfo, if any, as `datetime.__reduce_ex__`.
    fn datetime(&mut self, value: &Obj<'py>, datetime: &Bound<'py, PyDateTime>) -> Result<()> {
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.std_global("datetime", "datetime");
        let year = datetime.get_year() as u16;
        let mut month = datetime.get_month();
        if datetime.get_fold() && self.protocol > 3 {
            month |= 0x80;
        }
        let micro = datetime.get_microsecond();
        let state = [
            (year >> 8) as u8,
            year as u8,
            month,
            datetime.get_day(),
            datetime.get_hour(),
            datetime.get_minute(),
            datetime.get_second(),
            (micro >> 16) as u8,
            (micro >> 8) as u8,
            micro as u8,
        ];
        self.bytes(&state);
        self.state_and_zone(datetime.get_tzinfo())?;
        self.remember(memo);
        Ok(())
    }

    fn date(&mut self, value: &Obj<'py>, date: &Bound<'py, PyDate>) {
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return;
        }
        self.std_global("datetime", "date");
        let year = date.get_year() as u16;
        self.bytes(&[
            (year >> 8) as u8,
            year as u8,
            date.get_month(),
            date.get_day(),
        ]);
        self.out.extend_from_slice(&[TUPLE1, REDUCE]);
        self.remember(memo);
    }

    fn time(&mut self, value: &Obj<'py>, time: &Bound<'py, PyTime>) -> Result<()> {
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.std_global("datetime", "time");
        let mut hour = time.get_hour();
        if time.get_fold() && self.protocol > 3 {
            hour |= 0x80;
        }
        let micro = time.get_microsecond();
        self.bytes(&[
            hour,
            time.get_minute(),
            time.get_second(),
            (micro >> 16) as u8,
            (micro >> 8) as u8,
            micro as u8,
        ]);
        self.state_and_zone(time.get_tzinfo())?;
        self.remember(memo);
        Ok(())
    }

    fn timedelta(&mut self, value: &Obj<'py>, delta: &Bound<'py, PyDelta>) {
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return;
        }
        self.std_global("datetime", "timedelta");
        self.int(i64::from(delta.get_days()));
        self.int(i64::from(delta.get_seconds()));
        self.int(i64::from(delta.get_microseconds()));
        self.out.extend_from_slice(&[TUPLE3, REDUCE]);
        self.remember(memo);
    }

    /// `datetime.timezone` (offset and optional name) and `zoneinfo.ZoneInfo` (its key), as
    /// their own `__reduce__` describes them; other tzinfo classes are refused.
    /// Closes the argument tuple of a datetime or time after its state bytes (with the tzinfo
    /// when there is one) and applies the class.
    fn state_and_zone(&mut self, zone: Option<Bound<'py, PyTzInfo>>) -> Result<()> {
        match zone {
            Some(zone) => {
                self.tzinfo(zone.as_any())?;
                self.out.extend_from_slice(&[TUPLE2, REDUCE]);
            }
            None => self.out.extend_from_slice(&[TUPLE1, REDUCE]),
        }
        Ok(())
    }

    fn tzinfo(&mut self, zone: &Obj<'py>) -> Result<()> {
        let py = zone.py();
        let memo = self.recall(zone);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        let class = zone.get_type();
        let module: String = class.getattr(pyo3::intern!(py, "__module__"))?.extract()?;
        let name = class.qualname()?.to_string();
        match (module.as_str(), name.as_str()) {
            ("datetime", "timezone") => {
                let args = zone.call_method0(pyo3::intern!(py, "__getinitargs__"))?;
                let args = args.cast::<PyTuple>().map_err(PyErr::from)?;
                self.std_global("datetime", "timezone");
                let offset = args.get_item(0)?;
                let offset = offset.cast::<PyDelta>().map_err(PyErr::from)?;
                self.timedelta(offset.as_any(), offset);
                if args.len() > 1 {
                    self.str_object(&args.get_item(1)?)?;
                    self.out.push(TUPLE2);
                } else {
                    self.out.push(TUPLE1);
                }
                self.out.push(REDUCE);
            }
            ("zoneinfo", "ZoneInfo") => {
                let reduced = zone.call_method0(pyo3::intern!(py, "__reduce__"))?;
                let args = reduced.get_item(1)?;
                let key = args.get_item(0)?;
                let from_cache = args.get_item(1)?;
                if !key.is_instance_of::<PyString>() {
                    return Err(Error::encode("a ZoneInfo without a key cannot be pickled"));
                }
                self.std_global("builtins", "getattr");
                self.std_global("zoneinfo", "ZoneInfo");
                self.constant(Key::Text("_unpickle"), |w| w.text("_unpickle"));
                self.out.extend_from_slice(&[TUPLE2, REDUCE]);
                self.str_object(&key)?;
                self.any(&from_cache)?;
                self.out.extend_from_slice(&[TUPLE2, REDUCE]);
            }
            _ => {
                return Err(Error::encode(format!(
                    "tzinfo {module}.{name} cannot be pickled by polycodec (only \
                     datetime.timezone and zoneinfo.ZoneInfo)"
                )))
            }
        }
        self.remember(memo);
        Ok(())
    }

    fn decimal(&mut self, value: &Obj<'py>) -> Result<()> {
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.std_global("decimal", "Decimal");
        let text = value.str()?;
        self.text(py::str_utf8(&text)?);
        self.out.extend_from_slice(&[TUPLE1, REDUCE]);
        self.remember(memo);
        Ok(())
    }

    /// `uuid.UUID`: NEWOBJ, then BUILD with `{"int": value}` (what `UUID.__getstate__`
    /// returns when `is_safe` is unknown; a known `is_safe` is not carried).
    fn uuid(&mut self, value: &Obj<'py>) -> Result<()> {
        let memo = self.recall(value);
        if let Memo::Written(_) = memo {
            return Ok(());
        }
        self.std_global("uuid", "UUID");
        self.out
            .extend_from_slice(&[EMPTY_TUPLE, NEWOBJ, EMPTY_DICT]);
        self.constant(Key::Text("int"), |w| w.text("int"));
        let bits = py::uuid_value(value)?;
        self.long_u128(bits);
        self.out.extend_from_slice(&[SETITEM, BUILD]);
        self.remember(memo);
        Ok(())
    }

    fn long_u128(&mut self, value: u128) {
        if let Ok(small) = i64::try_from(value) {
            self.int(small);
            return;
        }
        let bits = 128 - value.leading_zeros() as usize;
        let length = bits / 8 + 1;
        let mut bytes = [0u8; 17];
        bytes[..16].copy_from_slice(&value.to_le_bytes());
        self.out.extend_from_slice(&[LONG1, length as u8]);
        self.out.extend_from_slice(&bytes[..length]);
    }

    // ---- typing.Any ----

    /// A value of `typing.Any`: builtins by their own type, anything else (dataclasses,
    /// enums, datetimes, ...) through the plan of its type.
    fn any(&mut self, value: &Obj<'py>) -> Result<()> {
        if value.is_none() {
            self.none();
            return Ok(());
        }
        if let Ok(flag) = value.cast_exact::<PyBool>() {
            self.bool(flag.is_true());
            return Ok(());
        }
        if value.is_exact_instance_of::<PyInt>() {
            return self.int_value(&Node::Any, value);
        }
        if let Ok(number) = value.cast_exact::<PyFloat>() {
            self.float(number.value());
            return Ok(());
        }
        if value.is_exact_instance_of::<PyString>() {
            return self.str_object(value);
        }
        if let Ok(bytes) = value.cast_exact::<PyBytes>() {
            let memo = self.recall(value);
            if !matches!(memo, Memo::Written(_)) {
                self.bytes(bytes.as_bytes());
                self.remember(memo);
            }
            return Ok(());
        }
        if value.is_exact_instance_of::<PyByteArray>() {
            self.bytearray_object(value);
            return Ok(());
        }
        let main: &'p Plan = self.main;
        if value.is_exact_instance_of::<PyList>()
            || value.is_exact_instance_of::<PyTuple>()
            || value.is_exact_instance_of::<PySet>()
            || value.is_exact_instance_of::<PyFrozenSet>()
        {
            return nested(self.depth, || self.collection(main, main.any, value));
        }
        if let Ok(dict) = value.cast_exact::<PyDict>() {
            return nested(self.depth, || self.dict(main, main.any, main.any, dict));
        }
        match shape::plan_for_value(value)? {
            Some(plan) => {
                self.enter()?;
                let result = self.value(&plan, plan.root, value);
                self.depth -= 1;
                result
            }
            None => Err(Error::encode(format!(
                "{} values are not supported",
                crate::py::type_name(value)
            ))),
        }
    }
}

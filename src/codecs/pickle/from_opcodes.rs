//! The single-pass fast path of the unpickler: reads the opcode stream once, recursive-descent
//! style, led by the plan, and builds the Python objects as it goes. It recognises only the
//! opcode shapes `pickle.dumps` (protocols 2 to 5) and polycodec's writer produce for the types
//! it handles: dataclasses (`NEWOBJ` + `BUILD` of a dict), lists, dicts of plain keys,
//! str/int/float/bool/None/bytes, untyped (`Any`) values made of those and of lists and dicts,
//! `Optional`, tagged unions, enums by value, and datetime/date/`Decimal` by `REDUCE` of their
//! own class with the stdlib's arguments (protocol 2's `_codecs.encode(text, "latin1")` for
//! bytes and date states included).
//!
//! It never decides that an input is bad. On anything it does not recognise (another opcode, a
//! global the position does not name, a value the plan rejects, a memo entry of another kind,
//! a cycle, deep nesting) it gives up and `from_arena.rs` decodes the same input again from byte 0
//! with the general two-step path, which raises the error or decodes what this one left alone.
//! What it accepts is therefore a subset of what the general path accepts, and it builds each
//! value with the same constructors and checks, so the result is the same; it only saves the
//! inert machine's arena and the second walk over it. Like the general path, it calls nothing
//! the pickle names: a global is compared by name with the class the plan expects.
//!
//! A user hook (`__post_init__`, a default factory, an extension's `decode`) runs at most once
//! per value: the default mode takes this path only for plans that run none
//! (`Plan::decode_is_pure`), since giving up after one ran would run it again in the general
//! path; `fast_path="only"` takes it for every plan, and has no general path to fall back on,
//! so an exception from a hook ends the decode as it would in the general path (a ValueError
//! as a ValidationError with the path, a KeyError unchanged).

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTzInfo, PyTzInfoAccess};
use smallvec::SmallVec;

use super::ops::*;
use super::recognise::{
    is_latin1_encoding, latin1, make_bytes, module_alias, uuid_bits, DateState, DateTimeState,
    Standard, TimeDeltaArgs, UuidKey,
};
use super::Pickle;
use crate::errors::{Error, Failure, Result};
use crate::plan::{
    ExtensionSpec, Node, NodeId, Plan, RecordKind, RecordSpec, SequenceKind, TzRule,
};
use crate::py::{self, Obj};
use crate::values::{nested, Decoding, RecordBuilder, MAX_DEPTH};

/// `None` means "not recognised here": the caller falls back to the general path.
type Fast<T> = Option<T>;

/// Nesting the fast path follows before leaving deeper input to the general path (which counts
/// its levels in the same places, and refuses past `MAX_DEPTH`).
const FAST_DEPTH: usize = MAX_DEPTH / 2;

/// A part of the input, by offsets (entries stay small: stdlib pickles memoize about one
/// value in ten bytes).
#[derive(Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
}

/// No plan node (in a memo entry).
const NO_NODE: u32 = u32::MAX;
/// What a memoized global may be found to name besides a record or enum node: one of the
/// standard classes, numbered down from the top of the range plan nodes do not reach.
const fn class_key(global: Standard) -> usize {
    (u32::MAX - 1 - global as u32) as usize
}
/// The lowest of those numbers (`Standard::Unset` is the last variant).
const LOWEST_CLASS_KEY: u32 = u32::MAX - 1 - Standard::Unset as u32;

/// What a memo index holds, as far as the fast path needs to know.
#[derive(Clone)]
enum Entry<'a, 'py> {
    /// Never stored.
    Empty,
    /// Something the fast path does not reuse (a state dict, an argument tuple): a `BINGET` of
    /// it makes the fast path give up.
    Opaque,
    /// An object under construction (a list before its items, an instance before `BUILD`): a
    /// `BINGET` of it would be a cycle, which the general path reports.
    Pending,
    /// A str, and the record node and field index it was last found to name as a state key
    /// (`NO_NODE` until then), which spares comparing it with the field names again.
    Str(&'a [u8], u32, u16),
    /// A str, and the object made from it at one plan position.
    StrMade(Span, u32, Obj<'py>),
    /// A global: (module as written, name), and the record or enum node found to have that
    /// module and qualname (`NO_NODE` until one is), which spares comparing the names again.
    Global(Span, Span, u32),
    /// A finished object and the plan position it was built for.
    Object(u32, Obj<'py>),
    /// An enum member built by `REDUCE(enum class, (value,))`.
    Member(Obj<'py>),
    /// A tzinfo built from `datetime.timezone(timedelta(...))`.
    Zone(Bound<'py, PyTzInfo>),
}

struct FastDecoder<'a, 'f, 'p, 'py> {
    input: &'a [u8],
    pos: usize,
    fmt: &'f Pickle,
    ctx: Decoding<'p, 'py>,
    depth: usize,
    memo: Vec<Entry<'a, 'py>>,
    /// The exception a user hook raised, which ends the decode instead of a give-up (its path
    /// is added on the way out).
    failure: Option<Error>,
}

/// Decodes `input` as one value of the plan's root type (`many`: a list of them): `Ok(None)`
/// when the general path must decide, an error only when a user hook raised one.
pub fn decode<'py>(
    fmt: &Pickle,
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    input: &[u8],
    many: bool,
) -> Result<Option<Obj<'py>>> {
    // Memo entries keep offsets and plan positions as u32.
    if input.len() >= u32::MAX as usize || plan.nodes.len() >= LOWEST_CLASS_KEY as usize {
        return Ok(None);
    }
    // Stdlib pickles memoize about one value in 8 to 13 bytes. A memo that cannot be
    // allocated leaves the pickle to the machine, which reports the MemoryError.
    let mut memo = Vec::new();
    if memo.try_reserve(input.len() / 8).is_err() {
        return Ok(None);
    }
    let mut decoder = FastDecoder {
        input,
        pos: 0,
        fmt,
        ctx: Decoding { py, plan, strict },
        depth: 0,
        memo,
        failure: None,
    };
    match decoder.whole(many) {
        Some(value) => Ok(Some(value)),
        None => decoder.failure.take().map_or(Ok(None), Err),
    }
}

fn is_str_op(op: u8) -> bool {
    matches!(op, SHORT_BINUNICODE | BINUNICODE | BINUNICODE8)
}

impl<'a, 'f, 'p, 'py> FastDecoder<'a, 'f, 'p, 'py> {
    /// The whole pickle: the protocol, the value (`many`: the list of values) and STOP.
    fn whole(&mut self, many: bool) -> Fast<Obj<'py>> {
        let plan = self.ctx.plan;
        if self.peek()? == PROTO {
            self.pos += 1;
            if self.byte()? > 5 {
                return None;
            }
        }
        let value = if many {
            if self.op()? != EMPTY_LIST {
                return None;
            }
            self.list(plan.root, plan.root, SequenceKind::List, None)?
        } else {
            self.value(plan.root)?
        };
        if self.op()? != STOP || self.pos != self.input.len() {
            return None;
        }
        Some(value)
    }

    /// The result of a call that may run a user hook: an exception the hook raised is kept
    /// (it ends the decode), anything else is a give-up.
    #[cold]
    fn hook_failed(&mut self, error: Error) {
        if matches!(error.failure, Failure::Python(..)) && self.failure.is_none() {
            self.failure = Some(error);
        }
    }

    /// Adds a path segment to a hook's exception on its way out.
    #[cold]
    fn failed_at(&mut self, segment: impl FnOnce(Error) -> Error) {
        self.failure = self.failure.take().map(segment);
    }

    // ---- reading ----

    #[inline]
    fn take(&mut self, count: usize) -> Fast<&'a [u8]> {
        let input: &'a [u8] = self.input;
        let end = self.pos.checked_add(count)?;
        let bytes = input.get(self.pos..end)?;
        self.pos = end;
        Some(bytes)
    }

    #[inline]
    fn byte(&mut self) -> Fast<u8> {
        let byte = *self.input.get(self.pos)?;
        self.pos += 1;
        Some(byte)
    }

    #[inline]
    fn u32(&mut self) -> Fast<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    #[inline]
    fn u64(&mut self) -> Fast<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// Skips FRAME opcodes (which only announce how much follows) at the current position,
    /// with the general machine's check of the announced length.
    #[cold]
    #[inline(never)]
    fn skip_frames(&mut self) -> Fast<()> {
        // The position moves only past whole, valid frames: a caller that treats a failed
        // peek as "nothing more here" must not find itself past half an opcode.
        let mut pos = self.pos;
        while self.input.get(pos) == Some(&FRAME) {
            let length = u64::from_le_bytes(self.input.get(pos + 1..pos + 9)?.try_into().ok()?);
            pos += 9;
            if length > (self.input.len() - pos) as u64 {
                return None;
            }
        }
        self.pos = pos;
        Some(())
    }

    #[inline(always)]
    fn peek(&mut self) -> Fast<u8> {
        let op = *self.input.get(self.pos)?;
        if op != FRAME {
            return Some(op);
        }
        self.skip_frames()?;
        self.input.get(self.pos).copied()
    }

    #[inline]
    fn op(&mut self) -> Fast<u8> {
        let op = self.peek()?;
        self.pos += 1;
        Some(op)
    }

    fn expect(&mut self, op: u8) -> Fast<()> {
        (self.op()? == op).then_some(())
    }

    /// The payload of a str opcode already read.
    #[inline]
    fn str_payload(&mut self, op: u8) -> Fast<&'a [u8]> {
        let length = match op {
            SHORT_BINUNICODE => u64::from(self.byte()?),
            BINUNICODE => u64::from(self.u32()?),
            _ => self.u64()?,
        };
        self.take(usize::try_from(length).ok()?)
    }

    /// The memo opcodes that follow a value, storing `entry` at each index they name.
    #[inline]
    fn memo_ops(&mut self, entry: impl Fn() -> Entry<'a, 'py>) -> Fast<()> {
        match self.input.get(self.pos) {
            // Protocols 4 and 5 memoize with one MEMOIZE, which appends to the memo: done
            // here, unless more memo opcodes follow.
            Some(&MEMOIZE) => {
                self.pos += 1;
                self.memoize(entry())?;
                if !matches!(
                    self.input.get(self.pos),
                    Some(&(MEMOIZE | BINPUT | LONG_BINPUT | FRAME))
                ) {
                    return Some(());
                }
            }
            Some(&(BINPUT | LONG_BINPUT | FRAME)) => {}
            // Most values have no memo opcode after them: nothing to build then.
            _ => return Some(()),
        }
        self.store_memo(&entry, None)
    }

    /// Appends a MEMOIZE's entry (its index is the memo's length).
    #[inline(always)]
    fn memoize(&mut self, entry: Entry<'a, 'py>) -> Fast<()> {
        // The general machine refuses indices beyond the input's size.
        if self.memo.len() >= self.input.len() {
            return None;
        }
        room(&mut self.memo)?;
        self.memo.push(entry);
        Some(())
    }

    /// The memo opcodes after an object that is not finished yet (a list before its items,
    /// an instance before BUILD): returns the indices, so `finish_memo` can fill them in.
    fn pending_memo(&mut self) -> Fast<SmallVec<[usize; 1]>> {
        let mut indices = SmallVec::new();
        self.store_memo(&|| Entry::Pending, Some(&mut indices))?;
        Some(indices)
    }

    fn store_memo(
        &mut self,
        entry: &dyn Fn() -> Entry<'a, 'py>,
        mut indices: Option<&mut SmallVec<[usize; 1]>>,
    ) -> Fast<()> {
        loop {
            let index = match self.peek() {
                Some(MEMOIZE) => {
                    self.pos += 1;
                    self.memo.len()
                }
                Some(BINPUT) => {
                    self.pos += 1;
                    usize::from(self.byte()?)
                }
                Some(LONG_BINPUT) => {
                    self.pos += 1;
                    self.u32()? as usize
                }
                _ => return Some(()),
            };
            // The general machine refuses indices beyond the input's size.
            if index >= self.input.len() {
                return None;
            }
            if index < self.memo.len() {
                self.memo[index] = entry();
            } else {
                // Fallible: LONG_BINPUT's index can ask for a memo as long as the input.
                self.memo.try_reserve(index + 1 - self.memo.len()).ok()?;
                self.memo.resize(index, Entry::Empty);
                self.memo.push(entry());
            }
            if let Some(indices) = indices.as_deref_mut() {
                indices.push(index);
            }
        }
    }

    /// Replaces the pending entries of an object just finished.
    fn finish_memo(&mut self, indices: &[usize], node: NodeId, object: &Obj<'py>) {
        for &index in indices {
            if let Entry::Pending = self.memo[index] {
                self.memo[index] = Entry::Object(node as u32, object.clone());
            }
        }
    }

    #[inline]
    fn get_index(&mut self, op: u8) -> Fast<usize> {
        Some(match op {
            BINGET => usize::from(self.byte()?),
            _ => self.u32()? as usize,
        })
    }

    #[inline]
    fn entry(&self, index: usize) -> Fast<&Entry<'a, 'py>> {
        self.memo.get(index)
    }

    /// Where a slice of the input is (every slice the decoder reads is one).
    #[inline]
    fn span(&self, bytes: &[u8]) -> Span {
        let start = (bytes.as_ptr() as usize - self.input.as_ptr() as usize) as u32;
        Span {
            start,
            end: start + bytes.len() as u32,
        }
    }

    #[inline]
    fn slice(&self, span: Span) -> &'a [u8] {
        let input: &'a [u8] = self.input;
        &input[span.start as usize..span.end as usize]
    }

    /// A str operand (a key, a global's name, an argument): a str opcode with its memo
    /// opcodes, or a memo get of a str.
    #[inline]
    fn str_operand(&mut self) -> Fast<&'a [u8]> {
        let op = self.op()?;
        if is_str_op(op) {
            let bytes = self.str_payload(op)?;
            self.memo_ops(|| Entry::Str(bytes, NO_NODE, 0))?;
            return Some(bytes);
        }
        if !matches!(op, BINGET | LONG_BINGET) {
            return None;
        }
        let index = self.get_index(op)?;
        match *self.entry(index)? {
            Entry::Str(bytes, ..) => Some(bytes),
            Entry::StrMade(span, ..) => Some(self.slice(span)),
            _ => None,
        }
    }

    /// A class or function reference: `GLOBAL`, `STACK_GLOBAL` of two strs, or a memo get of
    /// either; returns (module as aliased, name).
    #[inline]
    fn global(&mut self) -> Fast<(&'a [u8], &'a [u8])> {
        self.global_slot().map(|(module, name, _)| (module, name))
    }

    /// `global`, with the memo index that holds it, if any.
    fn global_slot(&mut self) -> Fast<(&'a [u8], &'a [u8], Option<usize>)> {
        let (module, name) = match self.peek()? {
            GLOBAL => {
                self.pos += 1;
                let module = self.line()?;
                let name = self.line()?;
                (module, name)
            }
            op @ (BINGET | LONG_BINGET) => {
                let start = self.pos;
                self.pos += 1;
                let index = self.get_index(op)?;
                match *self.entry(index)? {
                    Entry::Global(module, name, _) => {
                        let (module, name) = (self.slice(module), self.slice(name));
                        return Some((module_alias(module), name, Some(index)));
                    }
                    _ => {
                        self.pos = start;
                        self.stack_global()?
                    }
                }
            }
            _ => self.stack_global()?,
        };
        let spans = (self.span(module), self.span(name));
        let mut indices = SmallVec::new();
        if matches!(
            self.input.get(self.pos),
            Some(&(MEMOIZE | BINPUT | LONG_BINPUT | FRAME))
        ) {
            self.store_memo(
                &|| Entry::Global(spans.0, spans.1, NO_NODE),
                Some(&mut indices),
            )?;
        }
        Some((module_alias(module), name, indices.last().copied()))
    }

    fn stack_global(&mut self) -> Fast<(&'a [u8], &'a [u8])> {
        let module = self.str_operand()?;
        let name = self.str_operand()?;
        self.expect(STACK_GLOBAL)?;
        Some((module, name))
    }

    fn line(&mut self) -> Fast<&'a [u8]> {
        let input: &'a [u8] = self.input;
        let rest = &input[self.pos..];
        let end = rest.iter().position(|&b| b == b'\n')?;
        self.pos += end + 1;
        Some(&rest[..end])
    }

    /// A small int argument (timedelta components, enum values).
    fn int_operand(&mut self) -> Fast<i64> {
        let value = match self.op()? {
            BININT1 => i64::from(self.byte()?),
            BININT2 => i64::from(u16::from_le_bytes(self.take(2)?.try_into().ok()?)),
            BININT => i64::from(self.u32()? as i32),
            _ => return None,
        };
        self.memo_ops(|| Entry::Opaque)?;
        Some(value)
    }

    /// A bytes argument (the packed state of a date or datetime).
    #[inline]
    fn bytes_operand(&mut self) -> Fast<&'a [u8]> {
        let length = match self.op()? {
            SHORT_BINBYTES => usize::from(self.byte()?),
            BINBYTES => self.u32()? as usize,
            _ => return None,
        };
        let data = self.take(length)?;
        self.memo_ops(|| Entry::Opaque)?;
        Some(data)
    }

    /// The packed state of a date or datetime: bytes, or (protocol 2)
    /// `_codecs.encode(text, "latin1")`, decoded here without calling anything.
    fn state_bytes(&mut self) -> Fast<Cow<'a, [u8]>> {
        if matches!(self.peek()?, SHORT_BINBYTES | BINBYTES) {
            return Some(Cow::Borrowed(self.bytes_operand()?));
        }
        let bytes = self.codecs_encode()?;
        self.memo_ops(|| Entry::Opaque)?;
        Some(Cow::Owned(bytes))
    }

    /// A bytes value as protocol 2 writes it: `_codecs.encode(text, "latin1")`, or
    /// `builtins.bytes()` when empty.
    fn protocol2_bytes(&mut self) -> Fast<Vec<u8>> {
        let (module, name) = self.global()?;
        if Standard::Bytes.is(module, name) {
            self.expect(EMPTY_TUPLE)?;
            self.memo_ops(|| Entry::Opaque)?;
            self.expect(REDUCE)?;
            return Some(Vec::new());
        }
        if !Standard::CodecsEncode.is(module, name) {
            return None;
        }
        self.codecs_arguments()
    }

    /// `_codecs.encode(text, "latin1")` (how protocol 2 writes bytes), up to its `REDUCE`.
    fn codecs_encode(&mut self) -> Fast<Vec<u8>> {
        let (module, name) = self.global()?;
        if !Standard::CodecsEncode.is(module, name) {
            return None;
        }
        self.codecs_arguments()
    }

    /// The arguments of `_codecs.encode` and its `REDUCE`; the bytes it would return.
    fn codecs_arguments(&mut self) -> Fast<Vec<u8>> {
        let text = std::str::from_utf8(self.str_operand()?).ok()?;
        if !is_latin1_encoding(self.str_operand()?) {
            return None;
        }
        self.reduce_args(2)?;
        latin1(text)
    }

    // ---- values ----

    fn enter(&mut self) -> Fast<()> {
        self.depth += 1;
        (self.depth <= FAST_DEPTH).then_some(())
    }

    /// One value at plan position `node`, with its memo opcodes.
    #[inline(always)]
    fn value(&mut self, node: NodeId) -> Fast<Obj<'py>> {
        match self.plain(node) {
            Some(done) => done,
            None => self.any_value(node),
        }
    }

    /// The common scalars at positions of exactly their type (or `Optional` of it), read
    /// without the general dispatch: `Some(result)`, or `None` (nothing consumed) when
    /// `any_value` decides. The conversions are those of the general path's `plain_scalar`.
    #[inline(always)]
    fn plain(&mut self, node: NodeId) -> Option<Fast<Obj<'py>>> {
        let plan: &'p Plan = self.ctx.plan;
        let py = self.ctx.py;
        let op = *self.input.get(self.pos)?;
        let mut target = plan.node(node);
        if let Node::Union(spec) = target {
            let other = spec.optional_member()?;
            if op == NONE {
                self.pos += 1;
                let value = py.None().into_bound(py);
                return Some(
                    self.memo_ops(|| Entry::Object(node as u32, value.clone()))
                        .map(|()| value),
                );
            }
            target = plan.node(other);
        }
        let value = match (op, target) {
            (SHORT_BINUNICODE, Node::Str(spec)) if spec.is_unconstrained() => {
                let length = usize::from(*self.input.get(self.pos + 1)?);
                let input: &'a [u8] = self.input;
                let bytes = input.get(self.pos + 2..self.pos + 2 + length)?;
                let ascii = bytes.is_ascii();
                if !ascii && std::str::from_utf8(bytes).is_err() {
                    return None;
                }
                self.pos += 2 + length;
                let object = match py::new_str(py, bytes, ascii) {
                    Ok(object) => object,
                    Err(_) => return Some(None),
                };
                return Some(
                    self.memo_ops(|| Entry::Str(bytes, NO_NODE, 0))
                        .map(|()| object),
                );
            }
            (BININT1 | BININT2 | BININT, Node::Int(bounds)) if *bounds == Default::default() => {
                let number = match op {
                    BININT1 => i64::from(*self.input.get(self.pos + 1)?),
                    BININT2 => {
                        let bytes = self.input.get(self.pos + 1..self.pos + 3)?;
                        i64::from(u16::from_le_bytes([bytes[0], bytes[1]]))
                    }
                    _ => {
                        let bytes = self.input.get(self.pos + 1..self.pos + 5)?;
                        i64::from(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
                    }
                };
                self.pos += match op {
                    BININT1 => 2,
                    BININT2 => 3,
                    _ => 5,
                };
                match crate::py::new_int(py, number) {
                    Ok(number) => number,
                    Err(_) => return Some(None),
                }
            }
            (BINFLOAT, Node::Float(bounds)) if *bounds == Default::default() => {
                let bytes = self.input.get(self.pos + 1..self.pos + 9)?;
                let number = f64::from_be_bytes(bytes.try_into().ok()?);
                self.pos += 9;
                match crate::py::new_float(py, number) {
                    Ok(number) => number,
                    Err(_) => return Some(None),
                }
            }
            (NEWTRUE | NEWFALSE, Node::Bool) => {
                self.pos += 1;
                PyBool::new(py, op == NEWTRUE).to_owned().into_any()
            }
            _ => return None,
        };
        Some(
            self.memo_ops(|| Entry::Object(node as u32, value.clone()))
                .map(|()| value),
        )
    }

    /// Any value the fast path reads, at plan position `node`.
    #[inline(never)]
    fn any_value(&mut self, node: NodeId) -> Fast<Obj<'py>> {
        let plan: &'p Plan = self.ctx.plan;
        let op = self.peek()?;
        // Optional[X]: None, or X. Other unions are left to the general path, whose choice of
        // variant depends on the pickled value's kind.
        let target = match plan.node(node) {
            Node::Union(spec) => {
                let other = spec.optional_member()?;
                if op == NONE {
                    self.pos += 1;
                    let value = self.ctx.py.None().into_bound(self.ctx.py);
                    self.memo_ops(|| Entry::Object(node as u32, value.clone()))?;
                    return Some(value);
                }
                if matches!(plan.node(other), Node::Union(_) | Node::Any | Node::None) {
                    return None;
                }
                other
            }
            Node::Any => return self.untyped(node),
            Node::Extension(spec) => return self.extension(spec),
            _ => node,
        };
        let py = self.ctx.py;
        let target_node = plan.node(target);
        let from_global = matches!(
            target_node,
            Node::Record(_)
                | Node::TaggedUnion(_)
                | Node::Enum(_)
                | Node::DateTime(_)
                | Node::Date
                | Node::Decimal(_)
                | Node::Uuid
        );
        if matches!(op, BINGET | LONG_BINGET) {
            let start = self.pos;
            self.pos += 1;
            let index = self.get_index(op)?;
            match self.entry(index)? {
                Entry::Object(made_for, object) if *made_for as usize == node => {
                    return Some(object.clone())
                }
                // A UUID is immutable: one met at another UUID position is the same value.
                Entry::Object(made_for, object)
                    if matches!(target_node, Node::Uuid)
                        && matches!(plan.nodes.get(*made_for as usize), Some(Node::Uuid)) =>
                {
                    return Some(object.clone())
                }
                // An enum member, at any position of the same enum: the general path would
                // look the same member up again from the same REDUCE.
                Entry::Member(object)
                    if matches!(target_node, Node::Enum(spec)
                        if spec.members.iter().any(|m| m.member.as_ptr() == object.as_ptr())) =>
                {
                    return Some(object.clone())
                }
                // A str or a global at such a position (or at bytes, for protocol 2) starts
                // the global an object is built from (`STACK_GLOBAL` of two strs, or the
                // global itself).
                Entry::Str(..) | Entry::StrMade(..) | Entry::Global(..)
                    if from_global || matches!(target_node, Node::Bytes(_)) =>
                {
                    self.pos = start
                }
                Entry::StrMade(_, made_for, object) if *made_for as usize == node => {
                    return Some(object.clone())
                }
                &Entry::Str(bytes, ..) => {
                    let object = self.string(target, bytes)?;
                    // Kept for the next get at this position, as the general path does.
                    let span = self.span(bytes);
                    self.memo[index] = Entry::StrMade(span, node as u32, object.clone());
                    return Some(object);
                }
                &Entry::StrMade(span, ..) => {
                    let object = self.string(target, self.slice(span))?;
                    // Kept for the next get at this position, as the general path does.
                    self.memo[index] = Entry::StrMade(span, node as u32, object.clone());
                    return Some(object);
                }
                _ => return None,
            }
        }
        if from_global {
            // Built from a global: an instance, an enum member or a standard value.
            let value = self.object(node, target)?;
            if let Node::Enum(_) = target_node {
                self.memo_ops(|| Entry::Member(value.clone()))?;
            } else {
                self.memo_ops(|| Entry::Object(node as u32, value.clone()))?;
            }
            return Some(value);
        }
        let value = match op {
            NONE => {
                self.pos += 1;
                if !matches!(target_node, Node::None) {
                    return None;
                }
                py.None().into_bound(py)
            }
            NEWTRUE | NEWFALSE => {
                self.pos += 1;
                self.ctx.boolean(target, op == NEWTRUE).ok()?
            }
            BININT | BININT1 | BININT2 => {
                if matches!(target_node, Node::Enum(_)) {
                    return None;
                }
                let number = self.int_value(op)?;
                self.ctx.int(target, number).ok()?
            }
            LONG1 => {
                if matches!(target_node, Node::Enum(_)) {
                    return None;
                }
                let number = self.long1()?;
                self.ctx.int(target, number).ok()?
            }
            EMPTY_DICT => {
                self.pos += 1;
                let Node::Dict(spec) = target_node else {
                    return None;
                };
                // `dict` stores its own memo entries (pending while it fills).
                return self.dict(node, spec.key, spec.value, Some(&spec.length));
            }
            BINFLOAT => {
                self.pos += 1;
                if matches!(target_node, Node::Enum(_)) {
                    return None;
                }
                let number = f64::from_be_bytes(self.take(8)?.try_into().ok()?);
                match target_node {
                    Node::Float(bounds) if *bounds == Default::default() => {
                        crate::py::new_float(py, number).ok()?
                    }
                    _ => self.ctx.float(target, number, None).ok()?,
                }
            }
            SHORT_BINUNICODE | BINUNICODE | BINUNICODE8 => {
                self.pos += 1;
                let bytes = self.str_payload(op)?;
                let object = self.string(target, bytes)?;
                self.memo_ops(|| Entry::Str(bytes, NO_NODE, 0))?;
                return Some(object);
            }
            GLOBAL | BINGET | LONG_BINGET if matches!(target_node, Node::Bytes(_)) => {
                // Protocol 2 bytes: `_codecs.encode(text, "latin1")` or `bytes()`.
                let Node::Bytes(spec) = target_node else {
                    return None;
                };
                let data = self.protocol2_bytes()?;
                make_bytes(py, spec, &data).ok()?
            }
            SHORT_BINBYTES | BINBYTES | BINBYTES8 | BYTEARRAY8 => {
                self.pos += 1;
                let length = match op {
                    SHORT_BINBYTES => u64::from(self.byte()?),
                    BINBYTES => u64::from(self.u32()?),
                    _ => self.u64()?,
                };
                let data = self.take(usize::try_from(length).ok()?)?;
                match target_node {
                    Node::Bytes(spec) => make_bytes(py, spec, data).ok()?,
                    _ => return None,
                }
            }
            EMPTY_LIST => {
                self.pos += 1;
                let Node::Sequence(spec) = target_node else {
                    return None;
                };
                if !matches!(spec.kind, SequenceKind::List | SequenceKind::VarTuple) {
                    return None;
                }
                // `list` stores its own memo entries (pending while it fills).
                return self.list(node, spec.item, spec.kind, Some(&spec.length));
            }
            _ => return None,
        };
        self.memo_ops(|| Entry::Object(node as u32, value.clone()))?;
        Some(value)
    }

    /// A value at an `Any` position: the plain values (None, bool, int, float, str, and lists
    /// and dicts of them), as the general path builds them; anything else (tuples, sets, bytes,
    /// globals, ints beyond 64 bits) is left to it.
    fn untyped(&mut self, node: NodeId) -> Fast<Obj<'py>> {
        let py = self.ctx.py;
        let op = self.peek()?;
        let value = match op {
            NONE => {
                self.pos += 1;
                py.None().into_bound(py)
            }
            NEWTRUE | NEWFALSE => {
                self.pos += 1;
                PyBool::new(py, op == NEWTRUE).to_owned().into_any()
            }
            BININT | BININT1 | BININT2 => {
                let number = self.int_value(op)?;
                crate::py::new_int(py, number).ok()?
            }
            LONG1 => {
                let number = self.long1()?;
                crate::py::new_int(py, number).ok()?
            }
            BINFLOAT => {
                self.pos += 1;
                let number = f64::from_be_bytes(self.take(8)?.try_into().ok()?);
                crate::py::new_float(py, number).ok()?
            }
            SHORT_BINUNICODE | BINUNICODE | BINUNICODE8 => {
                self.pos += 1;
                let bytes = self.str_payload(op)?;
                let object = untyped_str(py, bytes)?;
                self.memo_ops(|| Entry::Str(bytes, NO_NODE, 0))?;
                return Some(object);
            }
            BINGET | LONG_BINGET => {
                self.pos += 1;
                let index = self.get_index(op)?;
                return match self.entry(index)? {
                    Entry::Object(made_for, object) if *made_for as usize == node => {
                        Some(object.clone())
                    }
                    &Entry::Str(bytes, ..) => untyped_str(py, bytes),
                    &Entry::StrMade(span, ..) => untyped_str(py, self.slice(span)),
                    _ => None,
                };
            }
            EMPTY_LIST => {
                self.pos += 1;
                return self.list(node, node, SequenceKind::List, None);
            }
            EMPTY_DICT => {
                self.pos += 1;
                return self.dict(node, node, node, None);
            }
            _ => return None,
        };
        self.memo_ops(|| Entry::Object(node as u32, value.clone()))?;
        Some(value)
    }

    /// A `LONG1` int of at most 8 bytes (little-endian two's complement), as an i64.
    fn long1(&mut self) -> Fast<i64> {
        self.pos += 1;
        let length = usize::from(self.byte()?);
        if length > 8 {
            return None;
        }
        let bytes = self.take(length)?;
        let fill = if bytes.last().is_some_and(|b| b & 0x80 != 0) {
            0xff
        } else {
            0
        };
        let mut raw = [fill; 8];
        raw[..length].copy_from_slice(bytes);
        Some(i64::from_le_bytes(raw))
    }

    /// A dict after its `EMPTY_DICT`: memo opcodes, then its entries, added by `MARK ...
    /// SETITEMS` runs or one `SETITEM` each. `node` is the dict's plan position, `key` and
    /// `value` its keys' and values'. Keys must be plain scalars (hashing anything else may
    /// run Python code, which the general path then runs again).
    fn dict(
        &mut self,
        node: NodeId,
        key: NodeId,
        value: NodeId,
        length: Option<&crate::plan::LengthBounds>,
    ) -> Fast<Obj<'py>> {
        let plan = self.ctx.plan;
        if !plan.node(key).is_builtin_scalar() {
            return None;
        }
        let memo = self.pending_memo()?;
        self.enter()?;
        let dict = pyo3::types::PyDict::new(self.ctx.py);
        let depth = self.depth;
        nested(depth, || self.entries(&dict, key, value))?;
        self.depth -= 1;
        if let Some(length) = length {
            length
                .check(dict.len(), crate::plan::LengthUnit::Items)
                .ok()?;
        }
        let dict = dict.into_any();
        self.finish_memo(&memo, node, &dict);
        self.memo_ops(|| Entry::Object(node as u32, dict.clone()))?;
        Some(dict)
    }

    fn entries(
        &mut self,
        dict: &Bound<'py, pyo3::types::PyDict>,
        key: NodeId,
        value: NodeId,
    ) -> Fast<()> {
        loop {
            match self.peek()? {
                // No key starts with MARK: a MARK right after the dict (or its last entry)
                // opens a run of its entries.
                MARK => {
                    self.pos += 1;
                    while self.peek()? != SETITEMS {
                        self.entry_pair(dict, key, value)?;
                    }
                    self.pos += 1;
                }
                _ if self.setitem_follows() => {
                    self.entry_pair(dict, key, value)?;
                    self.expect(SETITEM)?;
                }
                _ => return Some(()),
            }
        }
    }

    fn entry_pair(
        &mut self,
        dict: &Bound<'py, pyo3::types::PyDict>,
        key: NodeId,
        value: NodeId,
    ) -> Fast<()> {
        let key_object = self.value(key)?;
        let item = self.value(value);
        let Some(item) = item else {
            let shown = crate::errors::shown_key(key_object.as_any());
            self.failed_at(|error| error.at_key(&shown));
            return None;
        };
        self.ctx
            .store_entry(dict, key, value, key_object, item)
            .ok()
    }

    /// Whether the next values are one scalar key, one scalar value and `SETITEM` (a
    /// one-entry dict, which `pickle.dumps` writes so), and not what comes after the dict; a
    /// one-entry dict of another value is left to the general path.
    fn setitem_follows(&mut self) -> bool {
        let start = self.pos;
        let found = self.skip_scalar().is_some()
            && self.skip_scalar().is_some()
            && self.peek() == Some(SETITEM);
        self.pos = start;
        found
    }

    /// An extension type's value: its wire form, then its `decode`.
    #[inline(never)]
    fn extension(&mut self, spec: &ExtensionSpec) -> Fast<Obj<'py>> {
        let wire = self.value(spec.wire)?;
        spec.decode_value(wire)
            .map_err(|error| self.hook_failed(error))
            .ok()
    }

    #[inline]
    fn int_value(&mut self, op: u8) -> Fast<i64> {
        self.pos += 1;
        Some(match op {
            BININT1 => i64::from(self.byte()?),
            BININT2 => i64::from(u16::from_le_bytes(self.take(2)?.try_into().ok()?)),
            _ => i64::from(self.u32()? as i32),
        })
    }

    /// A str at a str or `Literal` position, as the general path converts it.
    #[inline]
    fn string(&mut self, target: NodeId, bytes: &[u8]) -> Fast<Obj<'py>> {
        let py = self.ctx.py;
        let ascii = bytes.is_ascii();
        if !ascii && std::str::from_utf8(bytes).is_err() {
            return None;
        }
        match self.ctx.plan.node(target) {
            Node::Str(spec) if spec.is_unconstrained() => py::new_str(py, bytes, ascii).ok(),
            Node::Str(_) | Node::Literal(_) => self.ctx.string(target, bytes, ascii).ok(),
            _ => None,
        }
    }

    /// A list after its `EMPTY_LIST`: memo opcodes, then its items, added by `MARK ... APPENDS`
    /// runs or one `APPEND` each. `node` is the list's plan position, `item` its items'.
    fn list(
        &mut self,
        node: NodeId,
        item: NodeId,
        kind: SequenceKind,
        length: Option<&crate::plan::LengthBounds>,
    ) -> Fast<Obj<'py>> {
        let memo = self.pending_memo()?;
        self.enter()?;
        let depth = self.depth;
        let items = nested(depth, || self.items(item))?;
        self.depth -= 1;
        let py = self.ctx.py;
        let list = match kind {
            SequenceKind::List => crate::py::new_list(py, items.into_iter()).ok()?.into_any(),
            _ => crate::py::new_tuple(py, items.into_iter()).ok()?.into_any(),
        };
        if let Some(length) = length {
            length
                .check(list.len().ok()?, crate::plan::LengthUnit::Items)
                .ok()?;
        }
        self.finish_memo(&memo, node, &list);
        self.memo_ops(|| Entry::Object(node as u32, list.clone()))?;
        Some(list)
    }

    fn items(&mut self, item: NodeId) -> Fast<Vec<Obj<'py>>> {
        let mut items = Vec::new();
        loop {
            match self.peek()? {
                // In the shapes read here no value starts with MARK, so a MARK right after
                // the list (or its last item) opens a run of its items.
                MARK => {
                    self.pos += 1;
                    while self.peek()? != APPENDS {
                        let value = self.item(item, items.len())?;
                        room(&mut items)?;
                        items.push(value);
                    }
                    self.pos += 1;
                }
                _ if self.append_follows(item) => {
                    let value = self.item(item, items.len())?;
                    room(&mut items)?;
                    items.push(value);
                    self.expect(APPEND)?;
                }
                _ => return Some(items),
            }
        }
    }

    /// The item at `index` of a list.
    #[inline(always)]
    fn item(&mut self, item: NodeId, index: usize) -> Fast<Obj<'py>> {
        let value = self.value(item);
        if value.is_none() {
            self.failed_at(|error| error.at_index(index));
        }
        value
    }

    /// Whether the next value is one item followed by `APPEND` (and not what comes after the
    /// list): a scalar opcode with its memo opcodes and then `APPEND`, or, for items built
    /// from a global, the start of a global (the caller then requires the `APPEND`).
    fn append_follows(&mut self, item: NodeId) -> bool {
        let start = self.pos;
        let scalar = self.skip_scalar().is_some() && self.peek() == Some(APPEND);
        self.pos = start;
        if scalar {
            return true;
        }
        let plan = self.ctx.plan;
        let mut node = plan.node(item);
        if let Node::Union(spec) = node {
            match spec.optional_member() {
                Some(other) => node = plan.node(other),
                None => return false,
            }
        }
        if !matches!(node, Node::Record(_) | Node::TaggedUnion(_) | Node::Enum(_)) {
            return false;
        }
        let global = self.skip_global().is_some();
        self.pos = start;
        global
    }

    /// Steps over what looks like the start of a global (`GLOBAL`, a memo get of one, or two
    /// str operands and `STACK_GLOBAL`) without storing anything; the item is then decoded
    /// for real, which checks it.
    fn skip_global(&mut self) -> Fast<()> {
        let op = self.op()?;
        match op {
            GLOBAL => return Some(()),
            BINGET | LONG_BINGET => {
                let index = self.get_index(op)?;
                if let Entry::Global(..) = self.entry(index)? {
                    return Some(());
                }
            }
            _ if is_str_op(op) => {
                self.str_payload(op)?;
            }
            _ => return None,
        }
        self.skip_memo_ops()?;
        let op = self.op()?;
        if is_str_op(op) {
            self.str_payload(op)?;
        } else if matches!(op, BINGET | LONG_BINGET) {
            self.get_index(op)?;
        } else {
            return None;
        }
        self.skip_memo_ops()?;
        (self.op()? == STACK_GLOBAL).then_some(())
    }

    fn skip_memo_ops(&mut self) -> Fast<()> {
        loop {
            match self.peek()? {
                MEMOIZE => self.pos += 1,
                BINPUT => self.pos += 2,
                LONG_BINPUT => self.pos += 5,
                _ => return Some(()),
            }
        }
    }

    /// Steps over one scalar opcode and its memo opcodes, without storing anything.
    fn skip_scalar(&mut self) -> Fast<()> {
        let length = match self.op()? {
            NONE | NEWTRUE | NEWFALSE => 0,
            BININT1 | BINGET => 1,
            BININT2 => 2,
            BININT | LONG_BINGET => 4,
            BINFLOAT => 8,
            SHORT_BINUNICODE | SHORT_BINBYTES => usize::from(self.byte()?),
            BINUNICODE | BINBYTES => self.u32()? as usize,
            _ => return None,
        };
        self.take(length)?;
        self.skip_memo_ops()
    }

    /// A value built from a global at a record, tagged-union, enum, datetime, date or Decimal
    /// position (`node`; `target` is the node past `Optional`).
    fn object(&mut self, node: NodeId, target: NodeId) -> Fast<Obj<'py>> {
        let plan: &'p Plan = self.ctx.plan;
        let (module, name, slot) = self.global_slot()?;
        let is = |m: &str, n: &str| module == m.as_bytes() && name == n.as_bytes();
        // The node this memoized global was already found to name, if any.
        let named = match slot.map(|index| &self.memo[index]) {
            Some(&Entry::Global(_, _, found)) if found != NO_NODE => Some(found as usize),
            _ => None,
        };
        match plan.node(target) {
            Node::Record(spec) => {
                self.check_global(named, slot, target, || is(&spec.module, &spec.qualname))?;
                self.instance(node, target, spec)
            }
            Node::TaggedUnion(spec) => {
                let known = named.filter(|found| spec.tags.iter().any(|(_, id)| id == found));
                let record_id = match known {
                    Some(found) => found,
                    None => {
                        let found = spec.tags.iter().find_map(|(_, id)| match plan.node(*id) {
                            Node::Record(record) if is(&record.module, &record.qualname) => {
                                Some(*id)
                            }
                            _ => None,
                        })?;
                        self.names_node(slot, found);
                        found
                    }
                };
                let Node::Record(record) = plan.node(record_id) else {
                    return None;
                };
                self.instance(node, record_id, record)
            }
            Node::Enum(spec) => {
                self.check_global(named, slot, target, || is(&spec.module, &spec.name))?;
                let member = match self.peek()? {
                    BININT | BININT1 | BININT2 => spec.by_int(self.int_operand()?),
                    _ => spec.by_str(self.str_operand()?),
                }?;
                self.reduce_args(1)?;
                Some(member.bind(self.ctx.py).clone())
            }
            Node::DateTime(rule) => {
                let global = Standard::DateTime;
                self.check_global(named, slot, class_key(global), || global.is(module, name))?;
                let rule = *rule;
                self.datetime(rule)
            }
            Node::Date => {
                let global = Standard::Date;
                self.check_global(named, slot, class_key(global), || global.is(module, name))?;
                let data = self.state_bytes()?;
                self.reduce_args(1)?;
                let state = DateState::parse(&data)?;
                Some(state.build(self.ctx.py).ok()?.into_any())
            }
            Node::Decimal(spec) => {
                let global = Standard::Decimal;
                self.check_global(named, slot, class_key(global), || global.is(module, name))?;
                let digits = self.str_operand()?;
                self.reduce_args(1)?;
                let unconstrained = spec.max_digits.is_none()
                    && spec.decimal_places.is_none()
                    && spec.bounds.is_unbounded();
                if unconstrained && digits.is_ascii() {
                    // What `Decoding::decimal` does when there is nothing to check, with the
                    // str made by the one-copy ASCII constructor.
                    let py = self.ctx.py;
                    let text = py::new_str(py, digits, true).ok()?;
                    return py::new_from_one_arg(py::stdlib(py).decimal.bind(py), text).ok();
                }
                self.ctx
                    .decimal(spec, std::str::from_utf8(digits).ok()?)
                    .ok()
            }
            Node::Uuid => {
                let global = Standard::Uuid;
                self.check_global(named, slot, class_key(global), || global.is(module, name))?;
                self.uuid(target)
            }
            _ => None,
        }
    }

    /// A UUID after its global, as the stdlib writes it: `EMPTY_TUPLE NEWOBJ`, then the state
    /// `{'int': n}` and `BUILD`. Anything else (an `is_safe` key, an int that is not a
    /// non-negative 128-bit `LONG1`/`BININT*`) is left to the general path. Memoized under the
    /// UUID node itself (`node`, past any `Optional`), so a get at any UUID position finds it.
    fn uuid(&mut self, node: NodeId) -> Fast<Obj<'py>> {
        self.expect(EMPTY_TUPLE)?;
        self.memo_ops(|| Entry::Opaque)?;
        self.expect(NEWOBJ)?;
        let memo = self.pending_memo()?;
        self.expect(EMPTY_DICT)?;
        self.memo_ops(|| Entry::Opaque)?;
        if UuidKey::of(self.str_operand()?) != Some(UuidKey::Int) {
            return None;
        }
        let bits = match self.op()? {
            BININT1 => u128::from(self.byte()?),
            BININT2 => u128::from(u16::from_le_bytes(self.take(2)?.try_into().ok()?)),
            BININT => u128::try_from(self.u32()? as i32).ok()?,
            LONG1 => {
                let length = usize::from(self.byte()?);
                uuid_bits(self.take(length)?)?
            }
            _ => return None,
        };
        self.memo_ops(|| Entry::Opaque)?;
        self.expect(SETITEM)?;
        self.expect(BUILD)?;
        // The stdlib memoizes the instance after NEWOBJ, polycodec's writer after BUILD.
        let built = self.pending_memo()?;
        let object = py::new_uuid(self.ctx.py, bits).ok()?;
        self.finish_memo(&memo, node, &object);
        self.finish_memo(&built, node, &object);
        Some(object)
    }

    /// The end of `REDUCE(callable, args)` once the `count` arguments are read: the tuple
    /// opcode, its memo opcodes and `REDUCE`.
    #[inline]
    fn reduce_args(&mut self, count: u8) -> Fast<()> {
        self.expect(TUPLE1 + count - 1)?;
        self.memo_ops(|| Entry::Opaque)?;
        self.expect(REDUCE)
    }

    /// Whether the global just read names `key` (a record or enum node, or one of the
    /// standard classes): remembered from an earlier check of the same memo entry, or
    /// checked by `names_match` and remembered.
    #[inline]
    fn check_global(
        &mut self,
        named: Option<usize>,
        slot: Option<usize>,
        key: NodeId,
        names_match: impl FnOnce() -> bool,
    ) -> Fast<()> {
        if named == Some(key) {
            return Some(());
        }
        if !names_match() {
            return None;
        }
        self.names_node(slot, key);
        Some(())
    }

    /// Remembers in a memoized global's entry the record or enum node it names.
    fn names_node(&mut self, slot: Option<usize>, found: NodeId) {
        if let Some(Entry::Global(_, _, node)) = slot.and_then(|index| self.memo.get_mut(index)) {
            *node = found as u32;
        }
    }

    /// `REDUCE(datetime, (state, [tzinfo]))` after the global.
    fn datetime(&mut self, rule: TzRule) -> Fast<Obj<'py>> {
        let data = self.state_bytes()?;
        let zone = match self.peek()? {
            TUPLE1 => None,
            _ => Some(self.zone()?),
        };
        self.reduce_args(if zone.is_some() { 2 } else { 1 })?;
        let state = DateTimeState::parse(&data)?;
        let zone = zone.flatten();
        let value = state.build(self.ctx.py, zone.as_ref()).ok()?;
        rule.allows(value.get_tzinfo().is_some())
            .then(|| value.into_any())
    }

    /// A datetime's tzinfo: `None`, a memo get of a timezone built before, or
    /// `REDUCE(datetime.timezone, (REDUCE(datetime.timedelta, (d, s, us)),))`.
    fn zone(&mut self) -> Fast<Option<Bound<'py, PyTzInfo>>> {
        match self.peek()? {
            NONE => {
                self.pos += 1;
                self.memo_ops(|| Entry::Opaque)?;
                return Some(None);
            }
            op @ (BINGET | LONG_BINGET) => {
                let start = self.pos;
                self.pos += 1;
                let index = self.get_index(op)?;
                if let Entry::Zone(zone) = self.entry(index)? {
                    return Some(Some(zone.clone()));
                }
                self.pos = start;
            }
            _ => {}
        }
        let (module, name) = self.global()?;
        if !Standard::TimeZone.is(module, name) {
            return None;
        }
        let (module, name) = self.global()?;
        if !Standard::TimeDelta.is(module, name) {
            return None;
        }
        let mut parts = TimeDeltaArgs::default();
        while matches!(self.peek()?, BININT | BININT1 | BININT2) {
            parts.push(self.int_operand()?).ok()?;
        }
        if parts.count() == 0 {
            self.expect(EMPTY_TUPLE)?;
            self.memo_ops(|| Entry::Opaque)?;
            self.expect(REDUCE)?;
        } else {
            self.reduce_args(parts.count() as u8)?;
        }
        self.memo_ops(|| Entry::Opaque)?;
        let delta = parts.build(self.ctx.py).ok()?;
        self.reduce_args(1)?;
        let zone = PyTzInfo::fixed_offset(self.ctx.py, delta).ok()?;
        self.memo_ops(|| Entry::Zone(zone.clone()))?;
        Some(Some(zone))
    }

    /// A dataclass instance after its global: `EMPTY_TUPLE NEWOBJ`, then (unless the class
    /// has no state) `EMPTY_DICT`, its `{attribute: value}` items and `BUILD`.
    fn instance(
        &mut self,
        node: NodeId,
        record_id: NodeId,
        spec: &'p RecordSpec,
    ) -> Fast<Obj<'py>> {
        if spec.kind != RecordKind::Dataclass {
            return None;
        }
        self.expect(EMPTY_TUPLE)?;
        self.memo_ops(|| Entry::Opaque)?;
        self.expect(NEWOBJ)?;
        // The instance's memo entries: a get of them before BUILD would be a cycle.
        let memo = self.pending_memo()?;
        self.enter()?;
        let depth = self.depth;
        // Made here and filled in place: the builder is not moved out of `state`.
        let mut builder = RecordBuilder::new(spec);
        nested(depth, || self.state(record_id, spec, &mut builder))?;
        self.depth -= 1;
        let object = builder
            .finish(self.ctx.py, spec)
            .map_err(|error| self.hook_failed(error))
            .ok()?;
        // A later get of the instance at the same plan position gets the same object, as in
        // the general path.
        self.finish_memo(&memo, node, &object);
        Some(object)
    }

    /// The state: a dict of the fields (`EMPTY_DICT`, items, `BUILD`), or for a class with
    /// `__slots__` and no `__dict__` (`slots=True`) the pair `(None, {slot: value})` that
    /// `object.__reduce_ex__` makes (`NONE EMPTY_DICT`, items, `TUPLE2 BUILD`).
    fn state(
        &mut self,
        record_id: NodeId,
        spec: &'p RecordSpec,
        builder: &mut RecordBuilder<'py>,
    ) -> Fast<()> {
        let slots = match self.input.get(self.pos..self.pos + 2) {
            Some(&[NONE, EMPTY_DICT]) => {
                self.pos += 1;
                true
            }
            Some(&[EMPTY_DICT, _]) => false,
            _ => return Some(()),
        };
        self.pos += 1;
        self.memo_ops(|| Entry::Opaque)?;
        let fmt: &'f Pickle = self.fmt;
        let names = &fmt.record(record_id).names;
        let mut hint = 0;
        loop {
            match self.peek()? {
                BUILD if !slots => {
                    self.pos += 1;
                    return Some(());
                }
                TUPLE2 if slots => {
                    self.pos += 1;
                    self.memo_ops(|| Entry::Opaque)?;
                    self.expect(BUILD)?;
                    return Some(());
                }
                MARK => {
                    self.pos += 1;
                    while self.peek()? != SETITEMS {
                        hint = self.field(record_id, spec, names, hint, builder)?;
                    }
                    self.pos += 1;
                }
                _ => {
                    hint = self.field(record_id, spec, names, hint, builder)?;
                    self.expect(SETITEM)?;
                }
            }
        }
    }

    /// One `attribute: value` pair of a state dict; returns where the next name is likely.
    #[inline(always)]
    fn field(
        &mut self,
        record_id: NodeId,
        spec: &'p RecordSpec,
        names: &[String],
        hint: usize,
        builder: &mut RecordBuilder<'py>,
    ) -> Fast<usize> {
        // Most keys after the first record are a memo get of the key's str, whose field may
        // be known from the last time.
        let mut memo_index = None;
        let key = match self.input.get(self.pos..self.pos + 2) {
            Some(&[BINGET, index]) => match self.memo.get(usize::from(index)) {
                Some(&Entry::Str(bytes, found_in, field)) => {
                    self.pos += 2;
                    if found_in as usize == record_id {
                        return self.field_value(spec, usize::from(field), builder);
                    }
                    memo_index = Some(usize::from(index));
                    bytes
                }
                _ => self.str_operand()?,
            },
            _ => self.str_operand()?,
        };
        // Attributes usually come in field order: the hint is the next field. Unknown
        // attributes are left to the general path (skipped or refused there).
        let index = match names.get(hint) {
            Some(name) if name.as_bytes() == key => hint,
            _ => names.iter().position(|name| name.as_bytes() == key)?,
        };
        if let (Some(memo_index), Ok(field)) = (memo_index, u16::try_from(index)) {
            self.memo[memo_index] = Entry::Str(key, record_id as u32, field);
        }
        self.field_value(spec, index, builder)
    }

    #[inline(always)]
    fn field_value(
        &mut self,
        spec: &'p RecordSpec,
        index: usize,
        builder: &mut RecordBuilder<'py>,
    ) -> Fast<usize> {
        let field = &spec.fields[index];
        let Some(value) = self.value(field.node) else {
            self.failed_at(|error| error.at_field(&field.wire_name));
            return None;
        };
        builder.set(index, value);
        Some(index + 1)
    }
}

/// Room for one more item, fallibly: a list that cannot grow leaves the pickle to the machine,
/// which reports the MemoryError (a failed `Vec::push` would abort the process).
#[inline(always)]
/// A str at an `Any` position (valid UTF-8 only, as the general path requires).
fn untyped_str<'py>(py: Python<'py>, bytes: &[u8]) -> Fast<Obj<'py>> {
    let ascii = bytes.is_ascii();
    if !ascii && std::str::from_utf8(bytes).is_err() {
        return None;
    }
    py::new_str(py, bytes, ascii).ok()
}

fn room<T>(items: &mut Vec<T>) -> Option<()> {
    if items.len() == items.capacity() {
        items.try_reserve(1).ok()?;
    }
    Some(())
}

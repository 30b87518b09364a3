//! A pickle machine with no Python in it: it executes the opcodes of protocols 2 to 5 over an
//! arena of inert values. A global is recorded as its two names, REDUCE/NEWOBJ/NEWOBJ_EX as a
//! call node, BUILD as the state attached to that node; nothing is imported or called. What the
//! arena may become is decided afterwards, by the plan (the extension's
//! `src/codecs/pickle/from_arena.rs`).
//!
//! Every opcode creates at most one value, every length is checked against the bytes left
//! before anything is allocated for it, and the machine never recurses, so any input runs in
//! time and memory linear in its size.

use smallvec::SmallVec;

use super::ops::*;

/// An index into the arena.
pub type Id = u32;

/// A tuple's items: most tuples in a pickle have 1 to 3 (call arguments, slot states), so they
/// are kept inline instead of in one allocation each.
pub type TupleItems = SmallVec<[Id; 4]>;

/// Which opcode made a call node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// `REDUCE`: `func(*args)`.
    Reduce,
    /// `NEWOBJ`/`NEWOBJ_EX`: `cls.__new__(cls, *args, **kwargs)`.
    NewObj,
}

#[derive(Debug)]
pub enum Value<'a> {
    None,
    Bool(bool),
    Int(i64),
    /// A LONG1/LONG4 too wide for i64: little-endian two's complement.
    BigInt(&'a [u8]),
    Float(f64),
    /// UTF-8 (not yet validated).
    Str(&'a [u8]),
    Bytes(&'a [u8]),
    ByteArray(&'a [u8]),
    List(Vec<Id>),
    Tuple(TupleItems),
    Dict(Vec<(Id, Id)>),
    Set(Vec<Id>),
    FrozenSet(Vec<Id>),
    Global {
        module: &'a [u8],
        name: &'a [u8],
    },
    Call {
        kind: CallKind,
        func: Id,
        args: Id,
        kwargs: Option<Id>,
        state: Option<Id>,
    },
}

/// The values a pickle built, and which of them are referenced more than once (through the
/// memo or DUP), so the conversion can build those once and detect cycles.
pub struct Arena<'a> {
    pub values: Vec<Value<'a>>,
    pub shared: Vec<bool>,
}

impl Value<'_> {
    /// The items of a list, tuple, set or frozenset.
    pub fn items(&self) -> Option<&[Id]> {
        match self {
            Value::List(items) | Value::Set(items) | Value::FrozenSet(items) => Some(items),
            Value::Tuple(items) => Some(items),
            _ => None,
        }
    }
}

impl<'a> Arena<'a> {
    #[inline]
    pub fn get(&self, id: Id) -> &Value<'a> {
        &self.values[id as usize]
    }
}

/// Why a pickle could not be executed, with the byte offset of the opcode.
pub struct VmError {
    pub message: String,
    pub offset: usize,
    /// The machine could not allocate its memory (a MemoryError, not malformed input).
    pub out_of_memory: bool,
}

const NO_ENTRY: Id = Id::MAX;

/// Stacks below this many values and marks are not checked against the input left.
const SMALL_STACK: usize = 64;

struct Machine<'a> {
    input: &'a [u8],
    pos: usize,
    arena: Arena<'a>,
    stack: Vec<Id>,
    marks: Vec<usize>,
    memo: Vec<Id>,
    /// The one arena entry each of None, False and True gets however often the pickle pushes
    /// it: a flood of these opcodes costs the stack only.
    constants: [Option<Id>; 3],
}

type Step<T> = std::result::Result<T, String>;

/// The message of a step that could not allocate: `run` reports it as `out_of_memory`.
const OUT_OF_MEMORY: &str = "out of memory";

/// Makes room for `additional` more items, reporting a failed allocation instead of aborting
/// the process (what `Vec::push` does when its growth fails).
#[inline]
fn room<T>(items: &mut Vec<T>, additional: usize) -> Step<()> {
    if items.capacity() - items.len() < additional {
        items
            .try_reserve(additional)
            .map_err(|_| OUT_OF_MEMORY.to_owned())?;
    }
    Ok(())
}

/// Runs a pickle to its STOP; returns the arena and the value left on the stack. Only the end
/// of the input may follow STOP.
pub fn run(input: &[u8]) -> std::result::Result<(Arena<'_>, Id), VmError> {
    if input.len() >= NO_ENTRY as usize {
        return Err(VmError {
            message: "pickles of 4 GiB and more are not supported".into(),
            offset: 0,
            out_of_memory: false,
        });
    }
    // Stdlib pickles spend about three bytes per value (opcode, memo entry); a large input may
    // be one big blob, so the guess is capped and the arena grows past it.
    let expected_values = (input.len() / 3 + 4).min(1 << 16);
    let mut values = Vec::new();
    room(&mut values, expected_values).map_err(|message| VmError {
        message,
        offset: 0,
        out_of_memory: true,
    })?;
    let mut machine = Machine {
        input,
        pos: 0,
        arena: Arena {
            values,
            shared: Vec::new(),
        },
        stack: Vec::with_capacity(16),
        marks: Vec::new(),
        memo: Vec::new(),
        constants: [None; 3],
    };
    let mut opcode_start;
    let result = loop {
        opcode_start = machine.pos;
        match machine.step().and_then(|more| {
            if more {
                machine.reducible()?;
            }
            Ok(more)
        }) {
            Ok(true) => continue,
            Ok(false) => break machine.finish(),
            Err(message) => break Err(message),
        }
    };
    match result {
        Ok(root) => {
            let mut arena = machine.arena;
            let missing = arena.values.len().saturating_sub(arena.shared.len());
            room(&mut arena.shared, missing).map_err(|message| VmError {
                message,
                offset: opcode_start,
                out_of_memory: true,
            })?;
            arena.shared.resize(arena.values.len(), false);
            Ok((arena, root))
        }
        Err(message) => Err(VmError {
            out_of_memory: message == OUT_OF_MEMORY,
            message,
            offset: opcode_start,
        }),
    }
}

impl<'a> Machine<'a> {
    fn finish(&mut self) -> Step<Id> {
        if self.pos != self.input.len() {
            return Err(format!(
                "{} bytes of trailing data after STOP",
                self.input.len() - self.pos
            ));
        }
        if !self.marks.is_empty() {
            return Err("STOP with an unclosed MARK".into());
        }
        match self.stack.as_slice() {
            [root] => Ok(*root),
            [] => Err("STOP with an empty stack".into()),
            _ => Err(format!(
                "STOP with {} values on the stack, expected 1",
                self.stack.len()
            )),
        }
    }

    #[inline]
    fn take(&mut self, count: usize) -> Step<&'a [u8]> {
        let input: &'a [u8] = self.input;
        if input.len() - self.pos < count {
            return Err("truncated pickle".into());
        }
        let bytes = &input[self.pos..self.pos + count];
        self.pos += count;
        Ok(bytes)
    }

    #[inline]
    fn byte(&mut self) -> Step<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Step<u16> {
        let bytes = self.take(2)?;
        Ok(u16::from_le_bytes([bytes[0], bytes[1]]))
    }

    fn u32(&mut self) -> Step<u32> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Step<u64> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// A length read from the input, checked against the bytes left (so nothing is allocated
    /// for a length the input cannot back).
    fn length(&mut self, length: u64) -> Step<usize> {
        let left = (self.input.len() - self.pos) as u64;
        if length > left {
            return Err(format!(
                "length {length} exceeds the {left} bytes left in the pickle"
            ));
        }
        Ok(length as usize)
    }

    fn data(&mut self, length: u64) -> Step<&'a [u8]> {
        let length = self.length(length)?;
        self.take(length)
    }

    /// A text line (GLOBAL's operands), without its newline.
    fn line(&mut self) -> Step<&'a [u8]> {
        let input: &'a [u8] = self.input;
        let rest = &input[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| String::from("truncated pickle (GLOBAL without a newline)"))?;
        self.pos += end + 1;
        Ok(&rest[..end])
    }

    /// Adds a value to the arena and pushes it. Ids always fit: every opcode adds at most one
    /// value and `run` refuses inputs of 4 GiB and more.
    #[inline]
    fn push_value(&mut self, value: Value<'a>) -> Step<Id> {
        let id = self.arena.values.len();
        room(&mut self.arena.values, 1)?;
        room(&mut self.stack, 1)?;
        self.arena.values.push(value);
        self.stack.push(id as Id);
        Ok(id as Id)
    }

    /// Pushes None (`0`), False (`1`) or True (`2`), adding it to the arena the first time.
    fn push_constant(&mut self, which: usize) -> Step<()> {
        if let Some(id) = self.constants[which] {
            room(&mut self.stack, 1)?;
            self.stack.push(id);
            return Ok(());
        }
        let value = match which {
            0 => Value::None,
            1 => Value::Bool(false),
            _ => Value::Bool(true),
        };
        self.constants[which] = Some(self.push_value(value)?);
        Ok(())
    }

    /// Refuses a stack that the rest of the input cannot bring down to the one value STOP
    /// takes: each open MARK needs an opcode to close it, and below the first MARK no opcode
    /// removes more than two values (SETITEM, TUPLE3, NEWOBJ_EX). A flood of pushes (NONE,
    /// EMPTY_DICT, ...) is so refused once two thirds of it are read, not at its STOP. A small
    /// stack costs nothing and is left to the more specific messages at STOP.
    #[inline]
    fn reducible(&self) -> Step<()> {
        if self.stack.len() + self.marks.len() < SMALL_STACK {
            return Ok(());
        }
        let base = self.marks.first().copied().unwrap_or(self.stack.len());
        let left = self.input.len() - self.pos;
        // The opcodes still needed, STOP included.
        let needed = self.marks.len() + base.saturating_sub(1).div_ceil(2) + 1;
        if needed > left {
            return Err(format!(
                "{} values and {} open MARKs on the stack, which the {left} bytes left cannot \
                 reduce to one value",
                self.stack.len(),
                self.marks.len()
            ));
        }
        Ok(())
    }

    /// The stack bottom the topmost MARK protects.
    #[inline]
    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    #[inline]
    fn pop(&mut self) -> Step<Id> {
        if self.stack.len() <= self.floor() {
            return Err("stack underflow".into());
        }
        Ok(self.stack.pop().expect("checked above"))
    }

    #[inline]
    fn top(&self) -> Step<Id> {
        if self.stack.len() <= self.floor() {
            return Err("stack underflow".into());
        }
        Ok(*self.stack.last().expect("checked above"))
    }

    /// Pops the topmost MARK; the items above it stay on the stack, from the returned index.
    fn take_mark(&mut self) -> Step<usize> {
        self.marks
            .pop()
            .ok_or_else(|| String::from("no MARK on the stack"))
    }

    /// The value just below a popped MARK (the container APPENDS/SETITEMS/ADDITEMS fill).
    fn below(&self, mark: usize) -> Step<Id> {
        if mark == 0 || mark <= self.floor() {
            return Err("stack underflow".into());
        }
        Ok(self.stack[mark - 1])
    }

    /// Pops everything above the topmost MARK, and the mark.
    fn pop_mark(&mut self) -> Step<Vec<Id>> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| String::from("no MARK on the stack"))?;
        let mut items = Vec::new();
        room(&mut items, self.stack.len() - mark)?;
        items.extend(self.stack.drain(mark..));
        Ok(items)
    }

    fn mark_shared(&mut self, id: Id) -> Step<()> {
        let index = id as usize;
        if self.arena.shared.len() <= index {
            let missing = index + 1 - self.arena.shared.len();
            room(&mut self.arena.shared, missing)?;
            self.arena.shared.resize(index + 1, false);
        }
        self.arena.shared[index] = true;
        Ok(())
    }

    fn put(&mut self, index: u64) -> Step<()> {
        let value = self.top()?;
        // Memo indices come from the input; stdlib picklers count up from 0, and any index
        // larger than the input itself could only serve to make us allocate.
        if index >= self.input.len() as u64 {
            return Err(format!("memo index {index} out of range"));
        }
        let index = index as usize;
        if self.memo.len() <= index {
            let missing = index + 1 - self.memo.len();
            room(&mut self.memo, missing)?;
            self.memo.resize(index + 1, NO_ENTRY);
        }
        self.memo[index] = value;
        Ok(())
    }

    fn get(&mut self, index: u64) -> Step<()> {
        let value = usize::try_from(index)
            .ok()
            .and_then(|i| self.memo.get(i).copied())
            .filter(|&id| id != NO_ENTRY)
            .ok_or_else(|| format!("memo index {index} was never stored"))?;
        self.mark_shared(value)?;
        room(&mut self.stack, 1)?;
        self.stack.push(value);
        Ok(())
    }

    fn tuple(&mut self, items: TupleItems) -> Step<()> {
        self.push_value(Value::Tuple(items)).map(|_| ())
    }

    fn call(&mut self, kind: CallKind, func: Id, args: Id, kwargs: Option<Id>) -> Step<()> {
        self.push_value(Value::Call {
            kind,
            func,
            args,
            kwargs,
            state: None,
        })
        .map(|_| ())
    }

    fn list_mut(&mut self, id: Id, what: &str) -> Step<&mut Vec<Id>> {
        match &mut self.arena.values[id as usize] {
            Value::List(items) => Ok(items),
            _ => Err(format!("{what} on a value that is not a list")),
        }
    }

    /// Executes one opcode; `false` after STOP.
    fn step(&mut self) -> Step<bool> {
        let opcode = self.byte()?;
        match opcode {
            PROTO => {
                let protocol = self.byte()?;
                if protocol > 5 {
                    return Err(format!("unsupported pickle protocol {protocol}"));
                }
            }
            FRAME => {
                // Frames only announce how much follows; the whole input is here already.
                let length = self.u64()?;
                self.length(length)?;
            }
            STOP => return Ok(false),
            MARK => {
                room(&mut self.marks, 1)?;
                self.marks.push(self.stack.len());
            }
            POP => {
                if self.marks.last() == Some(&self.stack.len()) {
                    self.marks.pop();
                } else {
                    self.pop()?;
                }
            }
            POP_MARK => {
                self.pop_mark()?;
            }
            DUP => {
                let top = self.top()?;
                self.mark_shared(top)?;
                room(&mut self.stack, 1)?;
                self.stack.push(top);
            }
            NONE => self.push_constant(0)?,
            NEWFALSE => self.push_constant(1)?,
            NEWTRUE => self.push_constant(2)?,
            BININT => {
                let value = self.u32()? as i32;
                self.push_value(Value::Int(i64::from(value)))?;
            }
            BININT1 => {
                let value = self.byte()?;
                self.push_value(Value::Int(i64::from(value)))?;
            }
            BININT2 => {
                let value = self.u16()?;
                self.push_value(Value::Int(i64::from(value)))?;
            }
            LONG1 | LONG4 => {
                let length = if opcode == LONG1 {
                    u64::from(self.byte()?)
                } else {
                    let length = self.u32()? as i32;
                    if length < 0 {
                        return Err("LONG4 with a negative length".into());
                    }
                    length as u64
                };
                let data = self.data(length)?;
                self.push_value(long_value(data))?;
            }
            BINFLOAT => {
                let bytes = self.take(8)?;
                let value = f64::from_be_bytes(bytes.try_into().expect("8 bytes"));
                self.push_value(Value::Float(value))?;
            }
            SHORT_BINUNICODE => {
                let length = self.byte()?;
                let data = self.data(u64::from(length))?;
                self.push_value(Value::Str(data))?;
            }
            BINUNICODE => {
                let length = self.u32()?;
                let data = self.data(u64::from(length))?;
                self.push_value(Value::Str(data))?;
            }
            BINUNICODE8 => {
                let length = self.u64()?;
                let data = self.data(length)?;
                self.push_value(Value::Str(data))?;
            }
            SHORT_BINBYTES => {
                let length = self.byte()?;
                let data = self.data(u64::from(length))?;
                self.push_value(Value::Bytes(data))?;
            }
            BINBYTES => {
                let length = self.u32()?;
                let data = self.data(u64::from(length))?;
                self.push_value(Value::Bytes(data))?;
            }
            BINBYTES8 => {
                let length = self.u64()?;
                let data = self.data(length)?;
                self.push_value(Value::Bytes(data))?;
            }
            BYTEARRAY8 => {
                let length = self.u64()?;
                let data = self.data(length)?;
                self.push_value(Value::ByteArray(data))?;
            }
            EMPTY_LIST => {
                self.push_value(Value::List(Vec::new()))?;
            }
            APPEND => {
                let item = self.pop()?;
                let list = self.top()?;
                let entries = self.list_mut(list, "APPEND")?;
                room(entries, 1)?;
                entries.push(item);
            }
            APPENDS => {
                let mark = self.take_mark()?;
                let list = self.below(mark)?;
                let items = &self.stack[mark..];
                match &mut self.arena.values[list as usize] {
                    Value::List(entries) => {
                        room(entries, items.len())?;
                        entries.extend_from_slice(items)
                    }
                    _ => return Err("APPENDS on a value that is not a list".into()),
                }
                self.stack.truncate(mark);
            }
            LIST => {
                let items = self.pop_mark()?;
                self.push_value(Value::List(items))?;
            }
            EMPTY_TUPLE => self.tuple(TupleItems::new())?,
            TUPLE => {
                let items = self.pop_mark()?;
                self.tuple(TupleItems::from_vec(items))?;
            }
            TUPLE1 | TUPLE2 | TUPLE3 => {
                let count = usize::from(opcode - TUPLE1 + 1);
                if self.stack.len() < self.floor() + count {
                    return Err("stack underflow".into());
                }
                let start = self.stack.len() - count;
                let items = TupleItems::from_slice(&self.stack[start..]);
                self.stack.truncate(start);
                self.tuple(items)?;
            }
            EMPTY_DICT => {
                self.push_value(Value::Dict(Vec::new()))?;
            }
            DICT => {
                let items = self.pop_mark()?;
                let pairs = pairs(&items)?;
                self.push_value(Value::Dict(pairs))?;
            }
            SETITEM => {
                let value = self.pop()?;
                let key = self.pop()?;
                let dict = self.top()?;
                match &mut self.arena.values[dict as usize] {
                    Value::Dict(entries) => {
                        room(entries, 1)?;
                        entries.push((key, value))
                    }
                    _ => return Err("SETITEM on a value that is not a dict".into()),
                }
            }
            SETITEMS => {
                let mark = self.take_mark()?;
                let dict = self.below(mark)?;
                let items = &self.stack[mark..];
                if !items.len().is_multiple_of(2) {
                    return Err("odd number of items for a dict".into());
                }
                match &mut self.arena.values[dict as usize] {
                    Value::Dict(entries) => {
                        room(entries, items.len() / 2)?;
                        entries.extend(items.chunks_exact(2).map(|pair| (pair[0], pair[1])))
                    }
                    _ => return Err("SETITEMS on a value that is not a dict".into()),
                }
                self.stack.truncate(mark);
            }
            EMPTY_SET => {
                self.push_value(Value::Set(Vec::new()))?;
            }
            ADDITEMS => {
                let mark = self.take_mark()?;
                let set = self.below(mark)?;
                let items = &self.stack[mark..];
                match &mut self.arena.values[set as usize] {
                    Value::Set(entries) => {
                        room(entries, items.len())?;
                        entries.extend_from_slice(items)
                    }
                    _ => return Err("ADDITEMS on a value that is not a set".into()),
                }
                self.stack.truncate(mark);
            }
            FROZENSET => {
                let items = self.pop_mark()?;
                self.push_value(Value::FrozenSet(items))?;
            }
            GLOBAL => {
                let module = self.line()?;
                let name = self.line()?;
                self.push_value(Value::Global { module, name })?;
            }
            STACK_GLOBAL => {
                let name = self.pop()?;
                let module = self.pop()?;
                match (self.arena.get(module), self.arena.get(name)) {
                    (Value::Str(module), Value::Str(name)) => {
                        let (module, name) = (*module, *name);
                        self.push_value(Value::Global { module, name })?;
                    }
                    _ => return Err("STACK_GLOBAL needs two str operands".into()),
                }
            }
            REDUCE => {
                let args = self.pop()?;
                let func = self.pop()?;
                self.call(CallKind::Reduce, func, args, None)?;
            }
            NEWOBJ => {
                let args = self.pop()?;
                let cls = self.pop()?;
                self.call(CallKind::NewObj, cls, args, None)?;
            }
            NEWOBJ_EX => {
                let kwargs = self.pop()?;
                let args = self.pop()?;
                let cls = self.pop()?;
                self.call(CallKind::NewObj, cls, args, Some(kwargs))?;
            }
            BUILD => {
                let state = self.pop()?;
                let target = self.top()?;
                match &mut self.arena.values[target as usize] {
                    Value::Call { state: slot, .. } if slot.is_none() => *slot = Some(state),
                    Value::Call { .. } => return Err("a second BUILD on one object".into()),
                    _ => return Err("BUILD on a value that is not an object".into()),
                }
            }
            MEMOIZE => {
                // The next free index: one entry per opcode byte, so the memo stays within
                // the input's size.
                let top = self.top()?;
                room(&mut self.memo, 1)?;
                self.memo.push(top);
            }
            BINPUT => {
                let index = self.byte()?;
                self.put(u64::from(index))?;
            }
            LONG_BINPUT => {
                let index = self.u32()?;
                self.put(u64::from(index))?;
            }
            BINGET => {
                let index = self.byte()?;
                self.get(u64::from(index))?;
            }
            LONG_BINGET => {
                let index = self.u32()?;
                self.get(u64::from(index))?;
            }
            INST | OBJ => {
                return Err("INST/OBJ opcodes (protocol 0/1 class instances) are refused".into())
            }
            PERSID | BINPERSID => return Err("persistent IDs are refused".into()),
            EXT1 | EXT2 | EXT4 => {
                return Err("extension registry opcodes (EXT1/EXT2/EXT4) are refused".into())
            }
            NEXT_BUFFER | READONLY_BUFFER => {
                return Err("out-of-band buffers are not supported".into())
            }
            STRING | BINSTRING | SHORT_BINSTRING => {
                return Err("Python 2 str opcodes are not supported".into())
            }
            INT | LONG | FLOAT | UNICODE | GET | PUT => {
                return Err(format!(
                    "text opcode {:?} (protocols 0/1) is not supported",
                    char::from(opcode)
                ))
            }
            other => return Err(format!("unknown opcode 0x{other:02x}")),
        }
        Ok(true)
    }
}

fn pairs(items: &[Id]) -> Step<Vec<(Id, Id)>> {
    if !items.len().is_multiple_of(2) {
        return Err("odd number of items for a dict".into());
    }
    Ok(items
        .chunks_exact(2)
        .map(|pair| (pair[0], pair[1]))
        .collect())
}

/// A LONG1/LONG4 payload: little-endian two's complement, empty for 0.
fn long_value(data: &[u8]) -> Value<'_> {
    if data.len() > 8 {
        return Value::BigInt(data);
    }
    if data.is_empty() {
        return Value::Int(0);
    }
    let negative = data[data.len() - 1] & 0x80 != 0;
    let mut bytes = if negative { [0xff; 8] } else { [0; 8] };
    bytes[..data.len()].copy_from_slice(data);
    Value::Int(i64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(input: &[u8]) -> String {
        match run(input) {
            Ok(_) => panic!("{input:?} ran"),
            Err(err) => err.message,
        }
    }

    #[test]
    fn longs_are_twos_complement_little_endian() {
        assert!(matches!(long_value(&[]), Value::Int(0)));
        assert!(matches!(long_value(&[0xff]), Value::Int(-1)));
        assert!(matches!(long_value(&[0x00, 0x80]), Value::Int(-32768)));
        assert!(matches!(long_value(&[0x00, 0x80, 0x00]), Value::Int(32768)));
        assert!(matches!(
            long_value(&[0, 0, 0, 0, 0, 0, 0, 0x80]),
            Value::Int(i64::MIN)
        ));
        assert!(matches!(long_value(&[0; 9]), Value::BigInt(_)));
    }

    #[test]
    fn memo_gets_mark_values_shared() {
        // [x, x] with x = "ab" through MEMOIZE/BINGET.
        let (arena, root) = run(b"\x80\x04]\x94(\x8c\x02ab\x94h\x01e.")
            .ok()
            .expect("runs");
        let Value::List(items) = arena.get(root) else {
            panic!("not a list")
        };
        assert_eq!(items.len(), 2);
        assert_eq!(items[0], items[1]);
        assert!(arena.shared[items[0] as usize]);
        assert!(!arena.shared[root as usize]);
    }

    #[test]
    fn globals_and_calls_stay_inert() {
        let (arena, root) = run(b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x01x\x85R.")
            .ok()
            .expect("runs");
        let Value::Call { kind, func, .. } = arena.get(root) else {
            panic!("not a call")
        };
        assert_eq!(*kind, CallKind::Reduce);
        assert!(matches!(
            arena.get(*func),
            Value::Global {
                module: b"os",
                name: b"system"
            }
        ));
    }

    #[test]
    fn containers_are_filled_in_place() {
        let (arena, root) = run(b"\x80\x04}(K\x01K\x02K\x03K\x04u.").ok().expect("runs");
        assert!(matches!(arena.get(root), Value::Dict(entries) if entries.len() == 2));
        let (arena, root) = run(b"\x80\x04\x8f(K\x01K\x02\x90.").ok().expect("runs");
        assert!(matches!(arena.get(root), Value::Set(items) if items.len() == 2));
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(error_of(b"\x80\x04X\xff\xff\xff\x7f.").contains("exceeds"));
        assert!(error_of(b"\x80\x04h\x00.").contains("never stored"));
        assert!(error_of(b"\x80\x04Nr\xff\xff\xff\xff.").contains("out of range"));
        assert!(error_of(b"\x80\x04(e.").contains("underflow"));
        assert!(error_of(b"\x80\x04NNs.").contains("underflow"));
        assert!(error_of(b"\x80\x04N.N").contains("trailing"));
        assert!(error_of(b"\x80\x04N").contains("truncated"));
        assert!(error_of(b"\x80\x04N(").contains("truncated"));
        assert!(error_of(b"\x80\x02(i__main__\nX\n.").contains("INST"));
        for opcode in [EXT1, EXT2, EXT4, PERSID, BINPERSID, NEXT_BUFFER] {
            assert!(run(&[PROTO, 5, opcode, 0, 0, 0, 0, STOP]).is_err());
        }
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 200_000;
        let mut input = vec![PROTO, 4];
        input.extend(std::iter::repeat_n(EMPTY_LIST, depth));
        input.extend(std::iter::repeat_n(APPEND, depth - 1));
        input.push(STOP);
        assert!(run(&input).is_ok());
    }
}

//! Where a pickle ends in bytes that may stop anywhere (see [`crate::frame`]): at its STOP
//! opcode, found by the size of each opcode with its argument. Nothing is executed.

use super::ops::{self, *};
use crate::frame::{malformed, Result};

/// A resumable finder of where one pickle ends: the end of the opcodes read so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PickleFramer {
    pos: usize,
}

impl PickleFramer {
    /// The length of the pickle `data` starts with (through its STOP), or `None` while it is
    /// not complete; called again with the same bytes and more, it reads on from the opcodes
    /// it has read. After a pickle it starts afresh.
    pub fn next(&mut self, data: &[u8]) -> Result<Option<usize>> {
        loop {
            let Some(size) = op_len(data, self.pos)? else {
                return Ok(None);
            };
            let op = data[self.pos];
            self.pos += size;
            if op == ops::STOP {
                let end = self.pos;
                self.pos = 0;
                return Ok(Some(end));
            }
        }
    }
}

/// The size of the opcode at `pos` with its argument, or `None` when it is not complete.
pub fn op_len(data: &[u8], pos: usize) -> Result<Option<usize>> {
    let Some(&op) = data.get(pos) else {
        return Ok(None);
    };
    let arg = pos + 1;
    let little = |width: usize| -> Option<u64> {
        let field = data.get(arg..arg + width)?;
        Some(
            field
                .iter()
                .rev()
                .fold(0u64, |n, &b| (n << 8) | u64::from(b)),
        )
    };
    let line_end = |from: usize| -> Option<usize> {
        data.get(from..)?
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| from + i + 1)
    };
    let end = match op {
        MARK | STOP | POP | POP_MARK | DUP | NONE | BINPERSID | REDUCE | APPEND | BUILD | DICT
        | EMPTY_DICT | APPENDS | LIST | EMPTY_LIST | OBJ | SETITEM | TUPLE | EMPTY_TUPLE
        | SETITEMS | NEWOBJ | TUPLE1 | TUPLE2 | TUPLE3 | NEWTRUE | NEWFALSE | EMPTY_SET
        | ADDITEMS | FROZENSET | NEWOBJ_EX | STACK_GLOBAL | MEMOIZE | NEXT_BUFFER
        | READONLY_BUFFER => Some(arg),
        PROTO | BININT1 | BINGET | BINPUT | EXT1 => Some(arg + 1),
        BININT2 | EXT2 => Some(arg + 2),
        BININT | LONG_BINGET | LONG_BINPUT | EXT4 => Some(arg + 4),
        BINFLOAT | FRAME => Some(arg + 8),
        FLOAT | INT | LONG | PERSID | STRING | UNICODE | GET | PUT => line_end(arg),
        GLOBAL | INST => line_end(arg).and_then(line_end),
        SHORT_BINSTRING | SHORT_BINBYTES | SHORT_BINUNICODE | LONG1 => {
            little(1).map(|n| arg + 1 + n as usize)
        }
        BINSTRING | BINUNICODE | BINBYTES | LONG4 => match little(4) {
            Some(n) if matches!(op, BINSTRING | LONG4) && n >= 1 << 31 => {
                return malformed(pos, "malformed pickle: negative length");
            }
            found => found.map(|n| arg + 4 + n as usize),
        },
        BINUNICODE8 | BINBYTES8 | BYTEARRAY8 => match little(8) {
            Some(n) if n > isize::MAX as u64 / 2 => {
                return malformed(pos, "malformed pickle: length past any input");
            }
            found => found.map(|n| arg + 8 + n as usize),
        },
        other => {
            return malformed(
                pos,
                format!("malformed pickle: unknown opcode 0x{other:02x}"),
            );
        }
    };
    Ok(end.filter(|&end| end <= data.len()).map(|end| end - pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pickles of protocols 0 to 5 (as CPython's `pickle.dumps` writes them), each opcode
    /// family's argument form among them.
    const UNITS: &[&[u8]] = &[
        b"I42\n.",
        b"(lp0\nI1\naF2.5\na.",
        b"cbuiltins\nset\n)R.",
        b"\x80\x02K\x01.",
        b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x01aq\x00.",
        b"\x80\x03X\x02\x00\x00\x00hiq\x00.",
        b"\x80\x04\x8d\x01\x00\x00\x00\x00\x00\x00\x00z.",
        SEVERAL_VALUES,
    ];

    /// Leaves three values on the stack: framing does not look at the stack, the machine does.
    const SEVERAL_VALUES: &[u8] =
        b"\x80\x02\x8a\x02\xff\x00M\x01\x00J\x01\x02\x03\x04G\x00\x00\x00\x00\x00\x00\x00\x00\x86.";

    #[test]
    fn pickles_end_at_stop_whatever_the_bytes_given() {
        for unit in UNITS {
            let mut framer = PickleFramer::default();
            for end in 0..unit.len() {
                assert_eq!(framer.next(&unit[..end]), Ok(None), "{unit:?} to {end}");
            }
            assert_eq!(framer.next(unit), Ok(Some(unit.len())), "{unit:?}");
            assert_eq!(framer, PickleFramer::default());
        }
    }

    #[test]
    fn the_framing_agrees_with_the_machine() {
        // The inert machine reads each whole pickle of the protocols it runs (2 and up), and
        // the framer ends it at the same STOP with another pickle after it.
        for unit in UNITS {
            let mut data = unit.to_vec();
            data.extend_from_slice(b"N.");
            assert_eq!(PickleFramer::default().next(&data), Ok(Some(unit.len())));
            if unit.starts_with(&[PROTO]) && *unit != SEVERAL_VALUES {
                assert!(crate::pickle::vm::run(unit).is_ok(), "{unit:?}");
            }
        }
    }

    #[test]
    fn malformed_opcodes_say_where() {
        let bad = PickleFramer::default().next(b"\x80\x02\xff").unwrap_err();
        assert_eq!(bad.offset, 2);
        assert_eq!(bad.message, "malformed pickle: unknown opcode 0xff");
        let negative = PickleFramer::default()
            .next(b"\x80\x02\x8b\xff\xff\xff\xff")
            .unwrap_err();
        assert_eq!(negative.message, "malformed pickle: negative length");
        let past = op_len(b"\x8e\xff\xff\xff\xff\xff\xff\xff\xff", 0).unwrap_err();
        assert_eq!(past.message, "malformed pickle: length past any input");
    }
}

//! Untyped objects' dicts made from templates of their keys. The objects of untyped data
//! mostly repeat a few key sequences (every element of an array of objects, every call on the
//! same kind of message), and with the key cache ([`super::keys`]) a repeated key is the same
//! str. A dict filled key by key costs a hash-table insertion per key (about 200 instructions
//! each on CPython 3.11, with the first table's allocation); copying a template dict of the
//! same keys (`PyDict_Copy`: one allocation and a copy of its table) and storing each value
//! by position costs a few instructions per key: the room's `dict_template` layout, which
//! `to_builtins` fills its record dicts with.
//!
//! A sequence of keys is known by its key objects' addresses. The table is two-way
//! set-associative: a sequence's hash picks a pair of its [`SLOTS`] entries, each holding the
//! hash of a sequence seen there and, once that sequence came again while it was there, its
//! template with the addresses of its keys, which the template holds (so an address equal to
//! one of them is that very key). A sequence met once, or with a key made afresh (a long key, one the cache
//! lost), costs its hash and takes the dict filled key by key. The table is a static used
//! only with the GIL held, as the key cache is.

use std::cell::UnsafeCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::cpython::{self, DictTemplate, DictTemplateLayout, FillingLayout};
use super::Obj;
use smallvec::{Array, SmallVec};

/// The number of entries (a power of two).
const SLOTS: usize = 512;
/// The most keys a templated dict has.
pub const MAX_KEYS: usize = 64;

/// A template and the addresses of its keys, in order.
struct Template {
    keys: Box<[usize]>,
    template: DictTemplate,
}

/// What an entry knows: the hash of the sequence seen last there, whether its template was
/// tried, and the template once made.
struct Entry {
    hash: u64,
    tried: bool,
    template: Option<Rc<Template>>,
}

struct Table(UnsafeCell<[Option<Entry>; SLOTS]>);

// SAFETY: the table is only used by `dict_of_pairs`, with the GIL held (it takes the `Python`
// token), and polycodec refuses free-threaded interpreters, so the GIL serialises every use;
// its templates are `Rc`s cloned out of it before anything runs that could reach it again.
unsafe impl Sync for Table {}

static TABLE: Table = Table(UnsafeCell::new([const { None }; SLOTS]));

/// The hash of a sequence of key addresses.
#[inline(always)]
fn hash(keys: impl Iterator<Item = usize>) -> u64 {
    keys.fold(0x243F_6A88_85A3_08D3, |hash, key| {
        (hash ^ key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    })
}

/// The dict of the pairs on `stack` from `base` on (key, value, key, value...: the keys in
/// order, a later key replacing an earlier equal one), moved off the stack; from a template
/// when the same exact-str keys came before. The stack is the decoder's item buffer
/// (`codecs::decoder::ItemStack`), of whatever inline size it has.
#[inline]
pub fn dict_of_pairs<'py, A: Array<Item = Obj<'py>>>(
    py: Python<'py>,
    stack: &mut SmallVec<A>,
    base: usize,
) -> PyResult<Obj<'py>> {
    let count = (stack.len() - base) / 2;
    if count == 0 || count > MAX_KEYS || !cpython::layout_in_use(cpython::Layout::DictTemplate) {
        return super::builders::dict_from_pairs(py, stack.drain(base..));
    }
    let pairs = &stack[base..];
    let address = |position: usize| pairs[2 * position].as_ptr() as usize;
    let sequence = hash((0..count).map(address));
    // The pair of entries the sequence may be in.
    let set = (sequence >> (64 - SLOTS.trailing_zeros())) as usize & !1;
    // SAFETY: with the GIL held and no Python code run while it is borrowed (the template is
    // cloned out), the table is only touched here; `set + 1` is below SLOTS.
    let (seen, tried, template) = unsafe {
        let table = &*TABLE.0.get();
        match table[set..set + 2]
            .iter()
            .flatten()
            .find(|entry| entry.hash == sequence)
        {
            Some(entry) => (true, entry.tried, entry.template.clone()),
            None => (false, false, None),
        }
    };
    if let Some(template) = template {
        let keys = &template.keys[..];
        if keys.len() == count && (0..count).all(|position| keys[position] == address(position)) {
            let mut filling = template.template.copy(py)?;
            let mut pairs = stack.drain(base..);
            let mut position = 0;
            // Each key is the template's own (the copy holds it): this reference is released.
            while let (Some(_key), Some(value)) = (pairs.next(), pairs.next()) {
                filling.put(position, value);
                position += 1;
            }
            return Ok(filling.finish());
        }
        return super::builders::dict_from_pairs(py, stack.drain(base..));
    }
    if !tried {
        // Seen before (the last sequence there): now it gets its template, or, when a template
        // cannot hold it (a key given twice, a key that is no exact str), is marked so and not
        // tried again. Seen first: its hash is kept.
        let made = if seen {
            (0..count)
                .map(|position| pairs[2 * position].cast_exact::<PyString>().ok().cloned())
                .collect::<Option<Vec<Bound<'py, PyString>>>>()
                .and_then(|keys| {
                    let template = cpython::dict_template(py, &keys)?;
                    Some(Rc::new(Template {
                        keys: keys.iter().map(|key| key.as_ptr() as usize).collect(),
                        template,
                    }))
                })
        } else {
            None
        };
        // SAFETY: as above; whatever ran meanwhile, the pair is changed here with no Python code
        // in between, and the entry leaving is dropped after: the sequence's own entry is
        // replaced where it is, a new one goes first (the first moving second).
        let old = unsafe {
            let table = &mut *TABLE.0.get();
            let entry = Some(Entry {
                hash: sequence,
                tried: seen,
                template: made,
            });
            let own = table[set..set + 2]
                .iter()
                .position(|old| old.as_ref().is_some_and(|old| old.hash == sequence));
            match own {
                Some(at) => std::mem::replace(&mut table[set + at], entry),
                None => {
                    let first = std::mem::replace(&mut table[set], entry);
                    std::mem::replace(&mut table[set + 1], first)
                }
            }
        };
        drop(old);
    }
    super::builders::dict_from_pairs(py, stack.drain(base..))
}

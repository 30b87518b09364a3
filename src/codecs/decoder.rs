//! The plan-walking decoder JSON and MessagePack share. [`Decoder`] holds a format's reader
//! and walks the plan as the input is read: the entry points, the array and map dispatch (which
//! node takes them, the depth guard), sequences on one item stack, fixed tuples, records by
//! name or by position, and tagged unions (variant lookup, the tag's own field, the one-pass
//! walk with deferred members). Each format implements [`WireReader`] for its `Decoder` with
//! what is its own: the value dispatch on the next token, scalars, dict keys, and how a
//! container is read. JSON matches keys against each field's precomputed `"name":` bytes and
//! finds a container's end at its closing bracket; MessagePack matches each key's whole
//! precomputed str (and a fixed tag's whole entry) and counts items from the container's head,
//! so it checks lengths before reading the items.
//!
//! `Decoder` is generic over the reader, so each format gets its own monomorphised copy with
//! its reads inlined: the hot paths compile as if written for that format alone. It is generic
//! over how it treats validation errors too ([`Errors`]): the codec's default, [`FailFast`],
//! ends the call at the first one; [`CollectAll`] (`errors="all"`, run only once a fail-fast
//! decode has failed) records each where it happens, moves past the value that failed and
//! reads on. The fail-fast copy has none of collection's steps: each is an `if E::ALL` that
//! the compiler removes from it.

use pyo3::prelude::*;
use smallvec::SmallVec;

use super::collect::CollectAll;
use crate::errors::collected::Report;
use crate::errors::{reserve, Code, Error, PathSegment, Result};
use crate::plan::{
    ExtensionSpec, Field, LiteralValue, Node, NodeId, OtherKey, Plan, RecordKind, RecordSpec,
    SequenceKind, SequenceSpec, TaggedUnionSpec,
};
use crate::py::builders::ListFill;
use crate::py::{self, Obj};
use crate::values::{mismatch, unknown_field, utf8, Decoding, RecordBuilder, Token, MAX_DEPTH};

/// One decoding call: a format's reader `R` and what every format keeps while it walks.
pub struct Decoder<'p, 'py, R, E = FailFast> {
    pub reader: R,
    pub ctx: Decoding<'p, 'py>,
    /// The nesting depth of the containers being read.
    pub depth: usize,
    /// Items of the arrays being read, innermost last: one buffer for the whole call instead
    /// of one allocation per array.
    pub stack: ItemStack<'py>,
    /// The validation errors recorded so far (nothing for [`FailFast`], a zero-sized type).
    pub errors: E,
}

/// How a decoding call treats the input's validation errors (see the module's notes).
pub trait Errors {
    /// Whether errors are recorded and the decoder reads on.
    const ALL: bool;
    /// How many are recorded.
    fn count(&self) -> usize;
    /// The collection, when errors are recorded.
    fn collecting(&mut self) -> Option<&mut CollectAll>;
}

/// The first validation error ends the call (the default).
pub struct FailFast;

impl Errors for FailFast {
    const ALL: bool = false;
    #[inline(always)]
    fn count(&self) -> usize {
        0
    }
    #[inline(always)]
    fn collecting(&mut self) -> Option<&mut CollectAll> {
        None
    }
}

/// `errors="all"`: every validation error is recorded, in the order met (see
/// `super::collect`).
impl Errors for CollectAll {
    const ALL: bool = true;
    #[inline]
    fn count(&self) -> usize {
        CollectAll::count(self)
    }
    #[inline]
    fn collecting(&mut self) -> Option<&mut CollectAll> {
        Some(self)
    }
}

/// The decoder's item buffer: its first items live in the decoder itself, so a call whose
/// arrays hold few items allocates none (the allocation and its growth were about 40
/// instructions of a small record's decode).
pub type ItemStack<'py> = SmallVec<[Obj<'py>; 16]>;

/// Makes room for `additional` more items, fallibly (a MemoryError, not an abort); the common
/// case (room left) is one comparison.
#[inline(always)]
pub(crate) fn reserve_items(stack: &mut ItemStack<'_>, additional: usize) -> Result<()> {
    if stack.capacity() - stack.len() < additional {
        return grow_items(stack, additional);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn grow_items(stack: &mut ItemStack<'_>, additional: usize) -> Result<()> {
    stack
        .try_reserve(additional)
        .map_err(|_| crate::errors::out_of_memory(ITEMS))
}

impl<'p, 'py, R> Decoder<'p, 'py, R> {
    pub fn new(py: Python<'py>, plan: &'p Plan, strict: bool, reader: R) -> Self {
        Decoder {
            reader,
            ctx: Decoding { py, plan, strict },
            depth: 0,
            stack: SmallVec::new(),
            errors: FailFast,
        }
    }
}

impl<'p, 'py, R> Decoder<'p, 'py, R, CollectAll> {
    /// A decoder that records every validation error (`errors="all"`).
    pub fn collecting(py: Python<'py>, plan: &'p Plan, strict: bool, reader: R) -> Self {
        Decoder {
            reader,
            ctx: Decoding { py, plan, strict },
            depth: 0,
            stack: SmallVec::new(),
            errors: CollectAll::default(),
        }
    }
}

/// What the shared steps need from a format: implemented by `Decoder<'_, '_, FormatReader>`,
/// with the format's own value dispatch and token reading.
pub trait WireReader<'p, 'py> {
    /// The format's name in error messages.
    const NAME: &'static str;
    /// How far the array or map being read has got: whether its first item or entry is next
    /// (JSON, which finds the end at the closing bracket or brace) or how many are left
    /// (MessagePack, whose head gives the count).
    type Left;

    /// Decodes the next value as node `id`.
    fn value(&mut self, id: NodeId) -> Result<Obj<'py>>;
    /// A tagged union's tag value (a str or an int): the position in `spec.tags` of the tag it
    /// names.
    fn tag(&mut self, spec: &TaggedUnionSpec) -> Result<usize>;
    /// Reads what opens a map whose kind the decoder has seen (JSON's brace).
    fn begin_map(&mut self, entries: &mut Self::Left) -> Result<()>;
    /// What the format precomputed from the plan for one record's field names (JSON: each
    /// field's escaped key bytes), looked up once per record read and passed to `take_field`.
    type Names: Copy;
    /// The names of record node `id`.
    fn record_names(&self, id: NodeId) -> Self::Names;
    /// Consumes the next entry's key if it is `field`'s wire name, else consumes nothing: the
    /// fast path for members in declaration order. `index` is the field's position in
    /// `RecordSpec::fields`, `names` its record's [`Self::record_names`].
    fn take_field(
        &mut self,
        entries: &mut Self::Left,
        names: Self::Names,
        index: usize,
        field: &Field,
    ) -> bool;
    /// The tag of tagged union node `id` with its key in one step, where the format can match
    /// the whole leading tag entry against precomputed bytes (JSON's `"tag_field":"tag"`,
    /// MessagePack's key and tag strs): the tag's position in `spec.tags`, or `None` with
    /// nothing consumed, for the general path, which reads the key, then the tag.
    #[inline(always)]
    fn take_tag(
        &mut self,
        _entries: &mut Self::Left,
        _id: NodeId,
        _spec: &TaggedUnionSpec,
    ) -> Option<usize> {
        None
    }
    /// The next entry's key (checked UTF-8), or `None` after the last entry.
    fn next_key(&mut self, entries: &mut Self::Left) -> Result<Option<&[u8]>>;
    /// A map as a dict (`Dict` or `Any`), with the format's own keys.
    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict_node: NodeId,
        entries: Self::Left,
    ) -> Result<Obj<'py>>;
    /// Reads what opens an array whose kind the decoder has seen (JSON's bracket).
    fn begin_array(&mut self, items: &mut Self::Left) -> Result<()>;
    /// Whether another array item follows (and is next to read).
    fn next_item(&mut self, items: &mut Self::Left) -> Result<bool>;
    /// How many items or entries are left, where the format knows it up front: lengths are
    /// then checked before the items are read.
    fn count_left(left: &Self::Left) -> Option<usize>;
    /// Whether a fixed-length tuple's length is checked before its items, when `count_left`
    /// knows it. A reader that must fail as JSON decoding fails (item errors first) says no.
    const TUPLE_LENGTH_FIRST: bool = true;
    /// Whether a failed [`Self::take_field`] is cheap enough (a comparison of precomputed bytes)
    /// that a record whose next key is not the field expected tries the fields after it
    /// before reading the key: input that leaves fields out (`omit_defaults`, UNSET) but keeps
    /// declaration order then never reads a key.
    const TAKE_AHEAD: bool = false;
    /// Whether the map being read has no entry left (checked before the fields ahead are
    /// tried, so a record whose trailing fields are left out tries none of them).
    #[inline(always)]
    fn map_done(&mut self, _entries: &Self::Left) -> bool {
        false
    }
    /// The position in `spec.wire_order`, from `from` on, of the field whose key the input
    /// continues with, consumed (see [`Self::TAKE_AHEAD`]); `None`, with nothing consumed,
    /// when it is none of them (an earlier field's, an unknown key, a key written otherwise
    /// than the precomputed bytes: the caller reads it). By default each field's
    /// [`Self::take_field`] in turn.
    #[inline(never)]
    fn take_ahead(
        &mut self,
        entries: &mut Self::Left,
        names: Self::Names,
        spec: &RecordSpec,
        from: usize,
    ) -> Option<usize> {
        let ahead = spec.wire_order.get(from..)?;
        for (step, &(index, _)) in ahead.iter().enumerate() {
            if self.take_field(entries, names, index, &spec.fields[index]) {
                return Some(from + step);
            }
        }
        None
    }
    /// Reads the head of the array `decode_many` takes, refusing any other value.
    fn begin_many(&mut self) -> Result<Self::Left>;
    /// Checks that nothing but what the format allows follows the value read.
    fn finish(&mut self) -> Result<()>;
    /// Skips the next value.
    fn skip(&mut self) -> Result<()>;
    fn offset(&self) -> usize;
    /// Moves back (or forward) to an offset `offset` returned before.
    fn rewind(&mut self, offset: usize);
    /// `errors="all"`: moves past a value whose decoding failed, which started at `start` (an
    /// [`Self::offset`]), and gives it as the input held it (the error's "input"): by default
    /// by reading it again as `Any` (node `any`).
    fn failed_value(&mut self, start: usize, any: NodeId) -> Result<Obj<'py>> {
        self.rewind(start);
        self.value(any)
    }
    /// Whether the input is objects, which [`Self::failed_value`] gives as they are (nothing
    /// is read again, so nothing is kept for reuse).
    const READS_OBJECTS: bool = false;
    /// Where the value about to be read starts, as [`Self::value`] sees it (JSON: after the
    /// whitespace before it), to find an input made of it before.
    fn value_offset(&mut self) -> usize {
        self.offset()
    }
    /// Where the reader is, for error messages (" at byte N").
    fn location(&self) -> String {
        format!(" at byte {}", self.offset())
    }
}

/// What a failed growth of the item buffers says (a MemoryError).
const ITEMS: &str = "the items of an array";

type Left<'p, 'py, R, E> = <Decoder<'p, 'py, R, E> as WireReader<'p, 'py>>::Left;

/// What a collecting call (`errors="all"`) found: the value, when the input had no error after
/// all, else every error, each with its whole path.
pub enum Collected<'py> {
    Value(Obj<'py>),
    Errors(Report),
}

impl<'p, 'py, R> Decoder<'p, 'py, R, CollectAll>
where
    Self: WireReader<'p, 'py>,
{
    /// `errors="all"`: decodes one value of the plan's root type, recording every validation
    /// error; malformed input (a `DecodeError`) or any other exception ends the call as it
    /// would a fail-fast one.
    pub fn collect_one(mut self) -> Result<Collected<'py>> {
        let start = self.offset();
        let result = self.value(self.ctx.plan.root);
        let value = match result {
            Ok(value) => Some(value),
            Err(error) => {
                if let Err(error) = self.keep_going(error, 0, start, None) {
                    return self.stopped(error);
                }
                None
            }
        };
        self.finish()?;
        Ok(self.collected(value))
    }

    /// `errors="all"`: `decode_many`, recording every item's validation errors.
    pub fn collect_many(mut self) -> Result<Collected<'py>> {
        let mut left = self.begin_many()?;
        let root = self.ctx.plan.root;
        let mut items = Vec::new();
        let mut index = 0;
        while self.next_item(&mut left)? {
            let (start, before) = (self.offset(), self.errors.count());
            match self.value(root) {
                Ok(value) => {
                    reserve(&mut items, 1, ITEMS)?;
                    items.push(value);
                }
                Err(error) => {
                    let step = Some(PathSegment::Index(index));
                    if let Err(error) = self.keep_going(error, before, start, step) {
                        return self.stopped(error);
                    }
                }
            }
            index += 1;
        }
        self.finish()?;
        let list = crate::py::new_list(self.ctx.py, items.into_iter())?.into_any();
        Ok(self.collected(Some(list)))
    }

    /// The end of a walk that `error` ended: the report, when it is the marker of the walk
    /// stopping at the cap of errors (the rest of the input is not read), else `error`.
    fn stopped(self, error: Error) -> Result<Collected<'py>> {
        if error.is_collected() && self.errors.stopped() {
            return Ok(Collected::Errors(self.errors.into_report()));
        }
        Err(error)
    }

    fn collected(self, value: Option<Obj<'py>>) -> Collected<'py> {
        match value {
            Some(value) if self.errors.count() == 0 => Collected::Value(value),
            _ => Collected::Errors(self.errors.into_report()),
        }
    }
}

impl<'p, 'py, R, E: Errors> Decoder<'p, 'py, R, E>
where
    Self: WireReader<'p, 'py>,
{
    /// Decodes one value of the plan's root type.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.1entry")]
    pub fn decode_one(mut self) -> Result<Obj<'py>> {
        let value = self.value(self.ctx.plan.root)?;
        self.finish()?;
        Ok(value)
    }

    /// Decodes an array of root-type values into a list.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub fn decode_many(mut self) -> Result<Obj<'py>> {
        let mut left = self.begin_many()?;
        let root = self.ctx.plan.root;
        let mut items = Vec::new();
        reserve(&mut items, Self::count_left(&left).unwrap_or(0), ITEMS)?;
        while self.next_item(&mut left)? {
            let index = items.len();
            let value = self.value(root).map_err(|e| e.at_index(index))?;
            reserve(&mut items, 1, ITEMS)?;
            items.push(value);
        }
        self.finish()?;
        Ok(crate::py::new_list(self.ctx.py, items.into_iter())?.into_any())
    }

    /// Where the value about to be read starts, for [`Self::keep_going`]; only kept when
    /// errors are collected (the fail-fast copy asks the reader nothing).
    #[inline(always)]
    pub fn value_start(&self) -> usize {
        if E::ALL {
            self.offset()
        } else {
            0
        }
    }

    /// `errors="all"`: deals with `error`, met reading the value that started at `start` in a
    /// container (`segment`: the container's step to the value; none at the root). A value
    /// whose own errors were recorded (the [`Error::collected`] marker) gets the step added to
    /// each error recorded since `mark`; a new validation error is recorded, the input moved
    /// past the value and the value kept as the error's input, and it gets the step with the
    /// errors recorded since `mark` (those of the values inside a container that then failed
    /// as a whole); anything else (malformed input, an exception that is no validation error,
    /// a MemoryError) ends the call. `Err(marker)` once the cap of errors is reached: the
    /// walk ends, each container adding its step on the way out. Fail-fast: the error, with
    /// its step, ends the call.
    #[cold]
    #[inline(never)]
    pub fn keep_going(
        &mut self,
        error: Error,
        mark: usize,
        start: usize,
        segment: Option<PathSegment>,
    ) -> Result<()> {
        let py = self.ctx.py;
        let fatal = |error: Error, segment: Option<PathSegment>| match segment {
            Some(segment) => Err(error.at(segment)),
            None => Err(error),
        };
        let replaying = self.errors.collecting().is_some_and(|all| all.replaying());
        if !E::ALL || replaying || (!error.is_collected() && !error.is_recorded(py)) {
            return fatal(error, segment);
        }
        if error.is_collected() {
            let Some(all) = self.errors.collecting() else {
                return fatal(error, segment);
            };
            if let Some(segment) = segment {
                all.wrap(mark, segment)?;
            }
            return all.give_back(error);
        }
        let mut error = error;
        match self.failed_input(start) {
            Ok(Some(input)) => error.set_input(input.unbind()),
            Ok(None) => {}
            Err(malformed) => return fatal(malformed, segment),
        }
        let Some(all) = self.errors.collecting() else {
            return fatal(error, segment);
        };
        let recorded = all.record(error);
        if let Some(segment) = segment {
            all.wrap(mark, segment)?;
        }
        recorded
    }

    /// Collecting: moves past a value that failed (it started at `start`) and gives it as the
    /// input held it, for its error's "input": read again as `Any`, reusing the inputs already
    /// made of failed values inside it. `None` when reading it as `Any` fails too with a
    /// validation error (a number too large for a float): the value is then skipped.
    fn failed_input(&mut self, start: usize) -> Result<Option<Obj<'py>>> {
        let any = self.ctx.plan.any;
        if Self::READS_OBJECTS {
            return self.failed_value(start, any).map(Some);
        }
        self.rewind(start);
        let start = self.value_offset();
        if let Some(all) = self.errors.collecting() {
            all.set_replaying(true);
        }
        let read = self.failed_value(start, any);
        if let Some(all) = self.errors.collecting() {
            all.set_replaying(false);
        }
        match read {
            Ok(input) => {
                let end = self.offset();
                if let Some(all) = self.errors.collecting() {
                    all.keep_input(start, end, &input)?;
                }
                Ok(Some(input))
            }
            Err(error) if error.is_recorded(self.ctx.py) => {
                self.rewind(start);
                self.skip()?;
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// Collecting, while a failed value is read again as `Any` (node `id`): the input already
    /// made of the value starting here, if one was, the reader moved past it.
    #[inline(always)]
    pub fn replayed(&mut self, id: NodeId) -> Option<Obj<'py>> {
        if !E::ALL || id != self.ctx.plan.any {
            return None;
        }
        self.replayed_input()
    }

    #[cold]
    #[inline(never)]
    fn replayed_input(&mut self) -> Option<Obj<'py>> {
        if !self.errors.collecting()?.replaying() {
            return None;
        }
        let at = self.offset();
        let (input, end) = self.errors.collecting()?.input_at(self.ctx.py, at)?;
        self.rewind(end);
        Some(input)
    }

    /// Collecting: records `error` as it is (see [`CollectAll::record`]); an error that is no
    /// validation error (memory running out while it was made) ends the call instead.
    #[cold]
    pub fn record_error(&mut self, error: Error) -> Result<()> {
        if !error.is_recorded(self.ctx.py) {
            return Err(error);
        }
        match self.errors.collecting() {
            Some(all) => all.record(error),
            None => Err(error),
        }
    }

    /// Collecting: what stands in a record's slot for a field whose value failed, so that the
    /// field is not also reported missing (the record is not made).
    #[cold]
    fn failed_placeholder(&self) -> Obj<'py> {
        self.ctx.py.None().into_bound(self.ctx.py)
    }

    /// `errors="all"`: the marker for a container that recorded errors since `mark` (which it
    /// returns instead of its value), or `None`.
    #[inline(always)]
    pub fn failed_since(&mut self, mark: usize) -> Option<Error> {
        if !E::ALL || self.errors.count() <= mark {
            return None;
        }
        self.errors.collecting().map(CollectAll::marker)
    }

    /// A value of an extension type: its wire form, then the type's `decode` function. Kept
    /// out of line so the formats' value dispatch stays small.
    #[cold]
    #[inline(never)]
    pub fn extension(&mut self, spec: &ExtensionSpec) -> Result<Obj<'py>> {
        let wire = self.value(spec.wire)?;
        spec.decode_value(wire)
    }

    /// Enters one more level of nesting, refusing input nested deeper than [`MAX_DEPTH`].
    pub fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep(Self::NAME, self.location()));
        }
        Ok(())
    }

    /// An array, as the node (or the union variant for arrays) `id` asks. Sequences, the common
    /// case, are read here; every other node in [`Self::array_other`], out of line.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub fn array(&mut self, id: NodeId, items: Left<'p, 'py, R, E>) -> Result<Obj<'py>> {
        let ctx = &self.ctx;
        let plan = ctx.plan;
        let id = ctx.resolve(id, Token::Array)?;
        self.enter()?;
        let result = match plan.node(id) {
            Node::Sequence(spec) => self.sequence(spec, items),
            node => self.array_other(id, node, items),
        };
        self.depth -= 1;
        result
    }

    /// An array read as record node `id`, which the format's shortcut knows to be positional
    /// (`array_like`, a NamedTuple): [`Self::array`]'s reading of it without the dispatch.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub(crate) fn positional(
        &mut self,
        id: NodeId,
        mut items: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        let plan: &'p Plan = self.ctx.plan;
        let Node::Record(spec) = plan.node(id) else {
            return self.array(id, items);
        };
        self.enter()?;
        let result = match self.begin_array(&mut items) {
            Ok(()) => self.positional_record(spec, items),
            Err(error) => Err(error),
        };
        self.depth -= 1;
        result
    }

    /// An array read as anything but a sequence (see [`Self::array`]).
    #[inline(never)]
    fn array_other(
        &mut self,
        id: NodeId,
        node: &'p Node,
        mut items: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        match node {
            Node::Any => {
                let base = self.items_onto_stack(id, items)?;
                let result = crate::py::new_list(self.ctx.py, self.stack.drain(base..));
                Ok(result?.into_any())
            }
            Node::Tuple(item_nodes) => self.tuple(item_nodes, items),
            Node::Record(spec) if spec.array_like || spec.kind == RecordKind::NamedTuple => {
                self.begin_array(&mut items)?;
                self.positional_record(spec, items)
            }
            Node::TaggedUnion(spec) => {
                self.begin_array(&mut items)?;
                self.positional_tagged(spec, items)
            }
            node => Err(mismatch(node, Token::Array)),
        }
    }

    /// A list, tuple, set or frozenset of one item type.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn sequence(&mut self, spec: &SequenceSpec, items: Left<'p, 'py, R, E>) -> Result<Obj<'py>> {
        let known = Self::count_left(&items);
        if let Some(count) = known {
            // Before the items, collecting too: the first error is the fail-fast one, and a
            // sequence that fails as a whole is not looked into (as pydantic does).
            spec.length.check(count, crate::plan::LengthUnit::Items)?;
            // Collecting, items that fail are recorded and passed over: the item stack's path.
            if !E::ALL && spec.kind == SequenceKind::List {
                return self.counted_list(spec.item, items, count);
            }
        }
        let base = self.items_onto_stack(spec.item, items)?;
        if known.is_none() {
            if let Err(err) = spec
                .length
                .check(self.stack.len() - base, crate::plan::LengthUnit::Items)
            {
                self.stack.truncate(base);
                return Err(err);
            }
        }
        collect(self.ctx.py, spec.kind, self.stack.drain(base..))
    }

    /// A list whose item count the format gave up front (`count`, which the reader has
    /// checked fits in the input left): made at that length and filled in place as the items
    /// are read, with no item stack in between.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn counted_list(
        &mut self,
        item: NodeId,
        mut items: Left<'p, 'py, R, E>,
        count: usize,
    ) -> Result<Obj<'py>> {
        self.begin_array(&mut items)?;
        let mut list = ListFill::new(self.ctx.py, count)?;
        let mut index = 0;
        while self.next_item(&mut items)? {
            let value = self.value(item).map_err(|e| e.at_index(index))?;
            list.push(value)?;
            index += 1;
        }
        Ok(list.finish()?.into_any())
    }

    /// Reads an array's items as node `item` onto the stack; returns where they start.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub fn items_onto_stack(
        &mut self,
        item: NodeId,
        mut items: Left<'p, 'py, R, E>,
    ) -> Result<usize> {
        self.begin_array(&mut items)?;
        let stack = &mut self.stack;
        let base = stack.len();
        if let Some(count) = Self::count_left(&items) {
            // The reader has checked that `count` items fit in the input left.
            reserve_items(stack, count)?;
        }
        let mark = self.errors.count();
        let mut index = 0;
        while self.next_item(&mut items)? {
            let (start, before) = (self.value_start(), self.errors.count());
            match self.value(item) {
                Ok(value) => {
                    if let Err(err) = reserve_items(&mut self.stack, 1) {
                        self.stack.truncate(base);
                        return Err(err);
                    }
                    self.stack.push(value)
                }
                Err(err) if E::ALL => {
                    let step = Some(PathSegment::Index(index));
                    if let Err(err) = self.keep_going(err, before, start, step) {
                        self.stack.truncate(base);
                        return Err(err);
                    }
                }
                Err(err) => {
                    self.stack.truncate(base);
                    return Err(err.at_index(index));
                }
            }
            index += 1;
        }
        if let Some(failed) = self.failed_since(mark) {
            self.stack.truncate(base);
            return Err(failed);
        }
        Ok(base)
    }

    /// A fixed-length tuple, item `i` decoded as `item_nodes[i]`.
    fn tuple(&mut self, item_nodes: &[NodeId], mut items: Left<'p, 'py, R, E>) -> Result<Obj<'py>> {
        self.begin_array(&mut items)?;
        let length = item_nodes.len();
        let known = Self::count_left(&items).filter(|_| Self::TUPLE_LENGTH_FIRST);
        if let Some(count) = known.filter(|&count| count != length) {
            let code = if count < length {
                Code::TooShort
            } else {
                Code::TooLong
            };
            return Err(Error::validation(
                code,
                format_args!("expected array of length {length}, got {count}"),
            ));
        }
        let mut values = Vec::with_capacity(length);
        let mark = self.errors.count();
        let mut index = 0;
        while self.next_item(&mut items)? {
            let Some(&node) = item_nodes.get(index) else {
                return Err(Error::validation(
                    Code::TooLong,
                    format_args!("expected array of length {length}, got more items"),
                ));
            };
            let (start, before) = (self.value_start(), self.errors.count());
            match self.value(node) {
                Ok(value) => values.push(value),
                Err(err) if E::ALL => {
                    self.keep_going(err, before, start, Some(PathSegment::Index(index)))?
                }
                Err(err) => return Err(err.at_index(index)),
            }
            index += 1;
        }
        if let Some(failed) = self.failed_since(mark) {
            return Err(failed);
        }
        if values.len() != length {
            let code = if values.len() < length {
                Code::TooShort
            } else {
                Code::TooLong
            };
            return Err(Error::validation(
                code,
                format_args!("expected array of length {length}, got {}", values.len()),
            ));
        }
        Ok(crate::py::new_tuple(self.ctx.py, values.into_iter())?.into_any())
    }

    /// A map, as the node (or the union variant for maps) `id` asks.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub fn map(&mut self, id: NodeId, mut entries: Left<'p, 'py, R, E>) -> Result<Obj<'py>> {
        let ctx = &self.ctx;
        let plan = ctx.plan;
        let id = ctx.resolve(id, Token::Object)?;
        self.enter()?;
        let result = match plan.node(id) {
            Node::Record(spec) if !spec.array_like && spec.kind != RecordKind::NamedTuple => {
                self.record(id, spec, entries)
            }
            Node::TaggedUnion(spec) => {
                self.begin_map(&mut entries)?;
                self.tagged(id, spec, entries)
            }
            Node::Dict(spec) => self.dict(spec.key, spec.value, id, entries),
            Node::Any => self.dict(id, id, id, entries),
            node => Err(mismatch(node, Token::Object)),
        };
        self.depth -= 1;
        result
    }

    /// A map read as a record.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn record(
        &mut self,
        id: NodeId,
        spec: &RecordSpec,
        mut entries: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        self.begin_map(&mut entries)?;
        let mut builder = RecordBuilder::new(spec);
        let mark = self.errors.count();
        self.record_fields(id, spec, &mut builder, entries)?;
        self.finish_record(spec, builder, mark)
    }

    /// Makes the record once its fields are read. Collecting, each required field the input
    /// lacks is recorded (not only the first), and a record with errors since `mark` is not
    /// made.
    #[inline(always)]
    fn finish_record(
        &mut self,
        spec: &RecordSpec,
        mut builder: RecordBuilder<'py>,
        mark: usize,
    ) -> Result<Obj<'py>> {
        if E::ALL {
            for field in builder.missing(spec) {
                self.record_error(crate::values::missing_field(&field.wire_name))?;
            }
            if let Some(failed) = self.failed_since(mark) {
                return Err(failed);
            }
        }
        builder.finish(self.ctx.py, spec)
    }

    /// Reads a map's entries into a record, through its end. The field expected next (in
    /// declaration order) is tried first, so ordered input never searches the field names.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn record_fields(
        &mut self,
        id: NodeId,
        spec: &RecordSpec,
        builder: &mut RecordBuilder<'py>,
        mut entries: Left<'p, 'py, R, E>,
    ) -> Result<()> {
        let names = self.record_names(id);
        let mut hint = 0;
        loop {
            if let Some(&(index, node)) = spec.wire_order.get(hint) {
                if self.take_field(&mut entries, names, index, &spec.fields[index]) {
                    hint += 1;
                    let (start, before) = (self.value_start(), self.errors.count());
                    match self.value(node) {
                        Ok(value) => builder.set(index, value),
                        Err(e) if E::ALL => {
                            self.field_failed(e, before, start, &spec.fields[index])?;
                            builder.set(index, self.failed_placeholder());
                        }
                        Err(e) => return Err(e.at_field(&spec.fields[index].wire_name)),
                    }
                    continue;
                }
                if Self::TAKE_AHEAD && !self.map_done(&entries) {
                    if let Some(position) = self.take_ahead(&mut entries, names, spec, hint + 1) {
                        hint = position + 1;
                        let (index, node) = spec.wire_order[position];
                        let (start, before) = (self.value_start(), self.errors.count());
                        match self.value(node) {
                            Ok(value) => builder.set(index, value),
                            Err(e) if E::ALL => {
                                self.field_failed(e, before, start, &spec.fields[index])?;
                                builder.set(index, self.failed_placeholder());
                            }
                            Err(e) => return Err(e.at_field(&spec.fields[index].wire_name)),
                        }
                        continue;
                    }
                }
            }
            let Some(key) = self.next_key(&mut entries)? else {
                return Ok(());
            };
            match spec.find_wire_field(key, hint) {
                Some(position) => {
                    hint = position + 1;
                    let index = spec.wire_fields[position];
                    let field = &spec.fields[index];
                    let (start, before) = (self.value_start(), self.errors.count());
                    match self.value(field.node) {
                        Ok(value) => builder.set(index, value),
                        Err(e) if E::ALL => {
                            self.field_failed(e, before, start, field)?;
                            builder.set(index, self.failed_placeholder());
                        }
                        Err(e) => return Err(e.at_field(&field.wire_name)),
                    }
                }
                // Not a wire name: unknown (skipped, or refused with `forbid_unknown_fields`),
                // or another name the record knows (an alias, its class tag).
                None => match spec.other_key(key) {
                    OtherKey::Unknown => {
                        if let Err(e) = unknown_field(spec, utf8(key)) {
                            // Collecting: recorded at the record, the unknown value its input.
                            let (start, before) = (self.value_start(), self.errors.count());
                            self.keep_going(e, before, start, None)?;
                            continue;
                        }
                        self.skip()?;
                    }
                    other => {
                        if let Some((index, value)) = self.other_field(spec, other)? {
                            builder.set(index, value);
                        }
                    }
                },
            }
        }
    }

    /// The value of a key that is not a wire name of the record but another name it knows: an
    /// alias of a field (its index and value, for the caller to set), or the class's own tag
    /// (checked against it, and set nowhere).
    #[cold]
    #[inline(never)]
    fn other_field(
        &mut self,
        spec: &RecordSpec,
        key: OtherKey,
    ) -> Result<Option<(usize, Obj<'py>)>> {
        match key {
            OtherKey::Alias(entry) => {
                let (alias, position) = &spec.aliases()[entry];
                let index = spec.wire_fields[*position];
                let (start, before) = (self.value_start(), self.errors.count());
                match self.value(spec.fields[index].node) {
                    Ok(value) => Ok(Some((index, value))),
                    Err(e) if E::ALL => {
                        self.keep_going(e, before, start, PathSegment::field(alias))?;
                        Ok(Some((index, self.failed_placeholder())))
                    }
                    Err(e) => Err(e.at_field(alias)),
                }
            }
            OtherKey::ClassTag(node) => {
                let name = spec.class_tag().map_or("", |tag| &tag.field.wire_name);
                let (start, before) = (self.value_start(), self.errors.count());
                match self.value(node) {
                    Ok(_) => Ok(None),
                    Err(e) if E::ALL => {
                        self.keep_going(e, before, start, PathSegment::field(name))?;
                        Ok(None)
                    }
                    Err(e) => Err(e.at_field(name)),
                }
            }
            OtherKey::Unknown => {
                self.skip()?;
                Ok(None)
            }
        }
    }

    /// Collecting: a field's value failed (see [`Self::keep_going`]).
    #[cold]
    #[inline(never)]
    fn field_failed(&mut self, e: Error, before: usize, start: usize, field: &Field) -> Result<()> {
        self.keep_going(e, before, start, PathSegment::field(&field.wire_name))
    }

    /// A record written as an array of its fields in declaration order (`array_like`,
    /// NamedTuple); trailing fields with defaults may be left out. A tagged-union variant's array
    /// starts with its tag.
    fn positional_record(
        &mut self,
        spec: &RecordSpec,
        mut items: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        let mut builder = RecordBuilder::new(spec);
        let mark = self.errors.count();
        let mut position = 0;
        if let Some((index, _)) = spec.tag {
            if !self.next_item(&mut items)? {
                return Err(missing_leading_tag());
            }
            let value = self
                .value(spec.fields[index].node)
                .map_err(|e| e.at_index(0))?;
            builder.set(index, value);
            position = 1;
        } else if let Some(tag) = spec.class_tag() {
            // The class's own tag: checked, and stored nowhere.
            if !self.next_item(&mut items)? {
                return Err(missing_leading_tag());
            }
            self.value(tag.field.node).map_err(|e| e.at_index(0))?;
            position = 1;
        }
        self.positional_fields(spec, &mut builder, items, position)?;
        self.finish_record(spec, builder, mark)
    }

    /// An array-like tagged union: the first item is the tag.
    fn positional_tagged(
        &mut self,
        spec: &TaggedUnionSpec,
        mut items: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        if !self.next_item(&mut items)? {
            return Err(missing_leading_tag());
        }
        let tag = self.tag(spec).map_err(|e| e.at_index(0))?;
        let (_, record) = variant(self.ctx.plan, spec, tag);
        let mut builder = RecordBuilder::new(record);
        let mark = self.errors.count();
        set_tag(&self.ctx, record, &spec.tags[tag].0, &mut builder).map_err(|e| e.at_index(0))?;
        self.positional_fields(record, &mut builder, items, 1)?;
        self.finish_record(record, builder, mark)
    }

    /// Reads the rest of a positional record's array, from item `position` on, through its end.
    fn positional_fields(
        &mut self,
        spec: &RecordSpec,
        builder: &mut RecordBuilder<'py>,
        mut items: Left<'p, 'py, R, E>,
        mut position: usize,
    ) -> Result<()> {
        // A class tag comes before the fields; a tag field is one of them.
        let limit = spec.wire_fields.len() + usize::from(spec.class_tag().is_some());
        // Items past the last field are what a newer producer appended: skipped, as msgspec
        // skips them, unless the record forbids unknown fields. A NamedTuple is a tuple of
        // its length.
        let extra_allowed = spec.kind != RecordKind::NamedTuple && !spec.forbid_unknown_fields;
        if let (false, Some(left)) = (extra_allowed, Self::count_left(&items)) {
            let count = position + left;
            if count > limit {
                return Err(Error::validation(
                    Code::TooLong,
                    format_args!("expected at most {limit} items, got {count}"),
                ));
            }
        }
        // The field positions and nodes in wire order (no `Field` read per item); a tag field,
        // read before, is passed over.
        let tag_index = spec.tag.as_ref().map_or(usize::MAX, |(index, _)| *index);
        for &(index, node) in spec.wire_order.iter() {
            if index == tag_index {
                continue;
            }
            if !self.next_item(&mut items)? {
                return Ok(());
            }
            let (start, before) = (self.value_start(), self.errors.count());
            match self.value(node) {
                Ok(value) => builder.set(index, value),
                Err(e) if E::ALL => {
                    self.keep_going(e, before, start, Some(PathSegment::Index(position)))?;
                    builder.set(index, self.failed_placeholder());
                }
                Err(e) => return Err(e.at_index(position)),
            }
            position += 1;
        }
        while self.next_item(&mut items)? {
            if !extra_allowed {
                return Err(Error::validation(
                    Code::TooLong,
                    format_args!("expected at most {limit} items, got more"),
                ));
            }
            self.skip()?;
        }
        Ok(())
    }

    /// A tagged union written as a map. With the tag first (as polycodec and msgspec write it),
    /// its key is matched against the precomputed bytes and the rest is read as the variant's
    /// record; otherwise see [`Self::tagged_anywhere`].
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn tagged(
        &mut self,
        id: NodeId,
        spec: &TaggedUnionSpec,
        mut entries: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        if let Some(tag) = self.take_tag(&mut entries, id, spec) {
            return self.tagged_variant(spec, tag, entries);
        }
        let plan: &'p Plan = self.ctx.plan;
        let first = tag_field(plan, spec);
        match first {
            Some((first_id, index, field))
                if self.take_field(&mut entries, self.record_names(first_id), index, field) =>
            {
                let tag = self.tag(spec).map_err(|e| e.at_field(&spec.tag_field))?;
                self.tagged_variant(spec, tag, entries)
            }
            _ => self.tagged_anywhere(spec, entries),
        }
    }

    /// The rest of a tagged union's map, its tag (at `tag` in `spec.tags`) read first.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn tagged_variant(
        &mut self,
        spec: &TaggedUnionSpec,
        tag: usize,
        entries: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        let (record_id, record) = variant(self.ctx.plan, spec, tag);
        let mut builder = RecordBuilder::new(record);
        let mark = self.errors.count();
        set_tag(&self.ctx, record, &spec.tags[tag].0, &mut builder)
            .map_err(|e| e.at_field(&spec.tag_field))?;
        self.record_fields(record_id, record, &mut builder, entries)?;
        self.finish_record(record, builder, mark)
    }

    /// A tagged union whose tag is not the first key, in one pass wherever possible: entries
    /// before the tag are decoded at once when every variant decodes them alike, and only the
    /// others are read again (by rewinding to them) once the tag has named the variant.
    #[inline(never)]
    fn tagged_anywhere(
        &mut self,
        spec: &TaggedUnionSpec,
        mut entries: Left<'p, 'py, R, E>,
    ) -> Result<Obj<'py>> {
        let plan: &'p Plan = self.ctx.plan;
        let mark = self.errors.count();
        let mut early: SmallVec<[(usize, Obj<'py>); 8]> = SmallVec::new();
        let mut deferred: SmallVec<[(usize, usize); 4]> = SmallVec::new();
        let ((record_id, record), tag) = loop {
            let Some(key) = self.next_key(&mut entries)? else {
                return Err(crate::values::missing_field(&spec.tag_field));
            };
            if key == spec.tag_field.as_bytes() {
                let tag = self.tag(spec).map_err(|e| e.at_field(&spec.tag_field))?;
                break (variant(plan, spec, tag), tag);
            }
            match spec.key_index(key) {
                Some(k) => match spec.keys[k].shared {
                    Some(node) => {
                        let name = &spec.keys[k].wire_name;
                        let (start, before) = (self.value_start(), self.errors.count());
                        match self.value(node) {
                            Ok(value) => early.push((k, value)),
                            Err(e) if E::ALL => {
                                self.keep_going(e, before, start, PathSegment::field(name))?;
                                early.push((k, self.failed_placeholder()));
                            }
                            Err(e) => return Err(e.at_field(name)),
                        }
                    }
                    None => {
                        deferred.push((k, self.offset()));
                        self.skip()?;
                    }
                },
                None => {
                    // Unknown to every variant; all variants share the codec's options.
                    if let Some(Node::Record(record)) =
                        spec.tags.first().map(|(_, id)| plan.node(*id))
                    {
                        if let Err(e) = unknown_field(record, utf8(key)) {
                            let (start, before) = (self.value_start(), self.errors.count());
                            self.keep_going(e, before, start, None)?;
                            continue;
                        }
                    }
                    self.skip()?;
                }
            }
        };
        let mut builder = RecordBuilder::new(record);
        for (k, value) in early {
            let name = &spec.keys[k].wire_name;
            match record.field_index(name.as_bytes()) {
                Some(index) => builder.set(index, value),
                None => self.unknown_to_variant(record, name)?,
            }
        }
        set_tag(&self.ctx, record, &spec.tags[tag].0, &mut builder)
            .map_err(|e| e.at_field(&spec.tag_field))?;
        // Not even a call when the count says the tag came last.
        if Self::count_left(&entries) != Some(0) {
            self.record_fields(record_id, record, &mut builder, entries)?;
        }
        if !deferred.is_empty() {
            let end = self.offset();
            for (k, offset) in deferred {
                let name = &spec.keys[k].wire_name;
                let Some(index) = record.field_index(name.as_bytes()) else {
                    self.unknown_to_variant(record, name)?;
                    continue;
                };
                self.rewind(offset);
                let before = self.errors.count();
                match self.value(record.fields[index].node) {
                    Ok(value) => builder.set(index, value),
                    Err(e) if E::ALL => {
                        self.keep_going(e, before, offset, PathSegment::field(name))?;
                        builder.set(index, self.failed_placeholder());
                    }
                    Err(e) => return Err(e.at_field(name)),
                }
            }
            self.rewind(end);
        }
        self.finish_record(record, builder, mark)
    }

    /// A key another variant of a tagged union has but the one its tag named lacks: unknown to
    /// it (refused, or recorded when collecting, with `forbid_unknown_fields`).
    fn unknown_to_variant(&mut self, record: &RecordSpec, name: &str) -> Result<()> {
        match unknown_field(record, name) {
            Err(e) if E::ALL => self.record_error(e),
            result => result,
        }
    }
}

/// A sequence node's collection from its items.
#[inline(always)]
fn collect<'py>(
    py: Python<'py>,
    kind: SequenceKind,
    items: impl ExactSizeIterator<Item = Obj<'py>>,
) -> Result<Obj<'py>> {
    match kind {
        SequenceKind::List => Ok(crate::py::new_list(py, items.into_iter())?.into_any()),
        kind => collect_other(py, kind, items),
    }
}

/// [`collect`] for a tuple, set or frozenset (out of line: lists are the common case).
#[inline(never)]
fn collect_other<'py>(
    py: Python<'py>,
    kind: SequenceKind,
    items: impl ExactSizeIterator<Item = Obj<'py>>,
) -> Result<Obj<'py>> {
    Ok(match kind {
        SequenceKind::List => crate::py::new_list(py, items.into_iter())?.into_any(),
        SequenceKind::VarTuple => crate::py::new_tuple(py, items.into_iter())?.into_any(),
        SequenceKind::Set => py::user_code(py, || crate::values::new_set(py, false, items))?,
        SequenceKind::FrozenSet => py::user_code(py, || crate::values::new_set(py, true, items))?,
    })
}

#[cold]
#[inline(never)]
fn too_deep(format: &str, location: String) -> Error {
    Error::decode(
        Code::RecursionLoop,
        format_args!("{format} nested deeper than {MAX_DEPTH} levels{location}"),
    )
}

#[cold]
fn missing_leading_tag() -> Error {
    Error::validation(
        Code::UnionTagNotFound,
        "expected the tag as the array's first item",
    )
}

/// A tag value as read, borrowed from the input.
pub enum TagRef<'a> {
    Str(&'a [u8]),
    Int(i64),
}

/// The position in `spec.tags` of the tag `tag` names.
pub fn find_tag(spec: &TaggedUnionSpec, tag: TagRef<'_>) -> Result<usize> {
    let found = spec.tags.iter().position(|(value, _)| match (value, &tag) {
        (LiteralValue::Str(text), TagRef::Str(bytes)) => text.as_bytes() == *bytes,
        (LiteralValue::Int(number), TagRef::Int(read)) => number == read,
        _ => false,
    });
    found.ok_or_else(|| invalid_tag(spec, tag))
}

/// The error for a tag that is neither a str nor an int; `found` names what the input held.
#[cold]
pub fn not_a_tag(found: &str) -> Error {
    Error::validation(
        Code::UnionTagInvalid,
        format_args!("expected a str or int tag, got {found}"),
    )
}

/// The error for an int tag beyond 64 bits (`digits`, its decimal text): an int, as a tag may
/// be, that matches none of the union's (every int tag fits 64 bits).
#[cold]
pub fn big_int_tag(spec: &TaggedUnionSpec, digits: &str) -> Error {
    Error::validation(
        Code::UnionTagInvalid,
        format_args!(
            "invalid value {} for tag field `{}`: expected {}",
            crate::errors::Cut(digits),
            spec.tag_field,
            spec.describe_tags()
        ),
    )
}

#[cold]
fn invalid_tag(spec: &TaggedUnionSpec, tag: TagRef<'_>) -> Error {
    // Shown as the tag's Literal value would be: a str quoted, an int as it is.
    let shown: &dyn std::fmt::Display = match &tag {
        TagRef::Str(bytes) => &crate::errors::Quoted(utf8(bytes)),
        TagRef::Int(number) => number,
    };
    Error::validation(
        Code::UnionTagInvalid,
        format_args!(
            "invalid value {shown} for tag field `{}`: expected {}",
            spec.tag_field,
            spec.describe_tags()
        ),
    )
}

/// The variant of the tag at `tag` in `spec.tags` (a record, checked when the plan was built),
/// with its node id.
pub(crate) fn variant<'p>(
    plan: &'p Plan,
    spec: &TaggedUnionSpec,
    tag: usize,
) -> (NodeId, &'p RecordSpec) {
    let id = spec.tags[tag].1;
    match plan.node(id) {
        Node::Record(record) => (id, record),
        _ => unreachable!("a tagged union's variants are records"),
    }
}

/// The tag field of the union's first variant (its node id, the field's index, the field):
/// its precomputed key bytes are the tag key's.
#[inline]
pub(crate) fn tag_field<'p>(
    plan: &'p Plan,
    spec: &TaggedUnionSpec,
) -> Option<(NodeId, usize, &'p Field)> {
    let &(_, id) = spec.tags.first()?;
    match plan.node(id) {
        Node::Record(record) => record.tag_field().map(|(index, field)| (id, index, field)),
        _ => None,
    }
}

/// Sets the variant's tag field (when it declares one) from the tag value read.
#[inline(always)]
pub(crate) fn set_tag<'py>(
    ctx: &Decoding<'_, 'py>,
    record: &RecordSpec,
    tag: &LiteralValue,
    builder: &mut RecordBuilder<'py>,
) -> Result<()> {
    if let Some((index, _)) = record.tag {
        let node = record.fields[index].node;
        // The annotation's own object, as decoding the Literal would return it.
        if let Node::Literal(literal) = ctx.plan.node(node) {
            // A variant's tags are its Literal's values: with one, the tag read is that one.
            let object = match literal.values.as_slice() {
                [(_, object)] => Some(object),
                _ => literal.find(tag),
            };
            if let Some(object) = object {
                builder.set(index, object.bind(ctx.py).clone());
                return Ok(());
            }
        }
        let value = match tag {
            LiteralValue::Str(text) => ctx.string(node, text.as_bytes(), text.is_ascii()),
            LiteralValue::Int(number) => ctx.int(node, *number),
            LiteralValue::Bool(flag) => ctx.boolean(node, *flag),
        };
        builder.set(index, value?);
    }
    Ok(())
}

//! The check of every layout at module load: known objects are built and read through the
//! running family's layout and through the public API, and compared. A layout whose reads or
//! writes disagree with the public API in any way is not used; the reason says what differed.
//! The checks call the family directly (the gated entry points of `super` read the verdicts
//! these give).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyType};

use super::{DictTemplateLayout, Family, FillingLayout, InlineValuesLayout, Layout, Running};
use crate::py::Obj;

/// The classes and values the checks build, made as users make them.
const SUBJECTS: &std::ffi::CStr = c"
import dataclasses, gc, sys
@dataclasses.dataclass(slots=True)
class Slotted:
    a: object
    b: object
    c: object
@dataclasses.dataclass
class Plain:
    a: object
    b: object
    c: object
class Subclassed(dict):
    pass
def dicts():
    spaced = {'a': 1, 'b': [2], 'c': None, 'd': 'x'}
    del spaced['b']
    instance = Plain(1, 2, 3)
    return [
        {'a': 1, 'b': [2], 'c': None},
        {1: 'x', 'b': 2, (3,): None},
        spaced,
        Subclassed(a=1, b=2),
        vars(instance),
        {},
    ]
WIDE = [2**64, 2**64 + 1, 2**90 + 12345, 2**127 + 2**64 + 3, 2**128 - 1, 2**120]
class Counted(int):
    pass
def ints():
    edges = [0, 1, 5, 255, 256, 2**30 - 1, 2**30, 2**30 + 1, 2**31, 2**32 + 7, 2**59 + 3,
             2**60 - 1, 2**60, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30]
    made = [int(str(n)) for n in edges] + [n * 3 // 3 for n in edges]
    return (edges + [-n for n in edges] + made + [-n for n in made]
            + [True, False, Counted(2**40 + 1), Counted(-7), -2**63, -2**63 - 1])
";

/// The subjects of the checks, made once (defining the classes costs more than the checks).
pub struct Probe<'py> {
    py: Python<'py>,
    subjects: Result<Subjects<'py>, String>,
}

impl<'py> Probe<'py> {
    pub fn new(py: Python<'py>) -> Self {
        let namespace = PyDict::new(py);
        let subjects = match py.run(SUBJECTS, Some(&namespace), None) {
            Ok(()) => Ok(Subjects { py, namespace }),
            Err(err) => Err(format!("the subjects could not be made: {err}")),
        };
        Probe { py, subjects }
    }

    /// Whether `layout` reads, for the subjects, what the public API says; `Err` says what
    /// did not.
    pub fn check(&self, layout: Layout) -> Result<(), String> {
        let subjects = || self.subjects.as_ref().map_err(String::clone);
        let result = match layout {
            Layout::StrState => return super::str_state::agrees(self.py),
            Layout::SlotOffsets => subjects()?.slot_offsets(),
            Layout::SlottedCreation => subjects()?.slotted_creation(),
            Layout::InlineValues => subjects()?.inline_values(),
            Layout::DictEntries => subjects()?.dict_entries(),
            Layout::DictTemplate => subjects()?.dict_template(),
            Layout::WideInt => subjects()?.wide_int(),
            Layout::IntDigits => subjects()?.int_digits(),
        };
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(why),
            Err(err) => Err(format!("raised {err}")),
        }
    }
}

/// A check's outcome: a Python error, or what differed.
type Verdict = PyResult<Result<(), String>>;

/// The names of the subject classes' fields.
const FIELDS: [&str; 3] = ["a", "b", "c"];

/// The subject classes and values, in the namespace they were made in.
struct Subjects<'py> {
    py: Python<'py>,
    namespace: Bound<'py, PyDict>,
}

impl<'py> Subjects<'py> {
    fn get(&self, name: &str) -> PyResult<Obj<'py>> {
        self.namespace
            .get_item(name)?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_owned()))
    }

    fn class(&self, name: &str) -> PyResult<Bound<'py, PyType>> {
        Ok(self.get(name)?.cast_into::<PyType>()?)
    }

    /// Distinct values, each its own object.
    fn values(&self) -> PyResult<Vec<Obj<'py>>> {
        Ok((0..FIELDS.len())
            .map(|_| PyList::empty(self.py).into_any())
            .collect())
    }

    fn names(&self) -> Vec<Py<PyString>> {
        FIELDS
            .iter()
            .map(|name| PyString::intern(self.py, name).unbind())
            .collect()
    }

    /// Whether the first `count` fields of `instance` are exactly `values` and the others are
    /// unset, and the collector tracks it.
    fn holds(&self, instance: &Obj<'py>, values: &[Obj<'py>], count: usize) -> Verdict {
        for (k, name) in FIELDS.iter().enumerate() {
            let got = instance.getattr(*name);
            match (k < count, got) {
                (true, Ok(got)) if got.is(&values[k]) => {}
                (false, Err(_)) => {}
                (true, _) => return Ok(Err(format!("field {name} does not read back"))),
                (false, Ok(_)) => return Ok(Err(format!("field {name} is set, not unset"))),
            }
        }
        let tracked = self.get("gc")?.getattr("is_tracked")?.call1((instance,))?;
        if !tracked.is_truthy()? {
            return Ok(Err(
                "the instance is not tracked by the collector".to_owned()
            ));
        }
        Ok(Ok(()))
    }

    /// The slot offsets of the `Slotted` subject's fields, as the family reads them.
    fn offsets(&self, cls: &Bound<'py, PyType>) -> PyResult<Option<Vec<usize>>> {
        let mut offsets = Vec::with_capacity(FIELDS.len());
        for name in FIELDS {
            let descriptor = cls.getattr("__dict__")?.get_item(name)?;
            let member_type = std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type);
            if descriptor.get_type_ptr() != member_type {
                return Ok(None);
            }
            let name = PyString::new(self.py, name);
            // SAFETY: `descriptor`'s type is exactly the member descriptor type.
            match unsafe { Running::member_offset(cls, &descriptor, &name) } {
                Some(offset) => offsets.push(offset),
                None => return Ok(None),
            }
        }
        Ok(Some(offsets))
    }

    /// Slots read and written at their offsets agree with `getattr` and the descriptors.
    fn slot_offsets(&self) -> Verdict {
        let cls = self.class("Slotted")?;
        let Some(offsets) = self.offsets(&cls)? else {
            return Ok(Err("a slot has no offset".to_owned()));
        };
        let values = self.values()?;
        let made = cls.call1((&values[0], &values[1], &values[2]))?;
        for (k, &offset) in offsets.iter().enumerate() {
            // SAFETY: an offset the member descriptor gave, inside the basic size of exactly
            // this class (checked by `member_offset`): an object pointer slot of `made`.
            let item = unsafe {
                *made
                    .as_ptr()
                    .cast::<u8>()
                    .add(offset)
                    .cast::<*mut ffi::PyObject>()
            };
            if item != values[k].as_ptr() {
                return Ok(Err(format!("slot {} reads another object", FIELDS[k])));
            }
        }
        let empty = self
            .py
            .get_type::<pyo3::types::PyAny>()
            .call_method1("__new__", (&cls,))?;
        let value = PyList::empty(self.py);
        // SAFETY: as above, for a fresh instance whose slots are NULL; the slot takes a new
        // reference to `value`.
        unsafe {
            let slot = empty
                .as_ptr()
                .cast::<u8>()
                .add(offsets[1])
                .cast::<*mut ffi::PyObject>();
            if !(*slot).is_null() {
                return Ok(Err("a fresh instance's slot is not empty".to_owned()));
            }
            *slot = value.clone().into_any().into_ptr();
        }
        if !empty.getattr("b")?.is(&value) || empty.getattr("a").is_ok() {
            return Ok(Err(
                "a slot written at its offset reads otherwise".to_owned()
            ));
        }
        Ok(Ok(()))
    }

    /// `slots=True` instances allocated directly, whole or with fields left unset, read as
    /// made by `__init__`.
    fn slotted_creation(&self) -> Verdict {
        let cls = self.class("Slotted")?;
        let Some(offsets) = self.offsets(&cls)? else {
            return Ok(Err("a slot has no offset".to_owned()));
        };
        let values = self.values()?;
        for count in [3, 2, 0] {
            let mut fields: Vec<Option<Obj<'py>>> = (0..FIELDS.len())
                .map(|k| (k < count).then(|| values[k].clone()))
                .collect();
            let Some(made) = Running::create_slotted(&cls, &offsets, &mut fields) else {
                return Ok(Err("the subject class is not created directly".to_owned()));
            };
            let verdict = self.holds(&made?, &values, count)?;
            if verdict.is_err() {
                return Ok(verdict);
            }
        }
        let Some(made) = Running::allocate_plain(self.py, cls.as_type_ptr()) else {
            return Ok(Err("the subject class is not allocated directly".to_owned()));
        };
        let made = made?;
        if !made.get_type().is(&cls) {
            return Ok(Err("an allocated instance has another type".to_owned()));
        }
        self.holds(&made, &values, 0)
    }

    /// Plain instances read through their values (made by `__init__`, before and after
    /// `vars()` materialises their dict) and made through them (whole or with a field unset),
    /// against attributes and `vars()`.
    fn inline_values(&self) -> Verdict {
        let cls = self.class("Plain")?;
        let names = self.names();
        let Some(inline) = <Running as Family>::InlineValues::probe_class(&cls, &names)? else {
            return Ok(Err("the subject class's fields were not found".to_owned()));
        };
        let values = self.values()?;
        let made = cls.call1((&values[0], &values[1], &values[2]))?;
        for materialise in [false, true] {
            if materialise {
                made.getattr("__dict__")?;
            }
            let Some(slots) = inline.readable_values(&made) else {
                return Ok(Err("an instance's values are not found".to_owned()));
            };
            for (k, value) in values.iter().enumerate() {
                // SAFETY: the slots of `made`, just found; no Python code ran since.
                if unsafe { inline.read_from(slots, k) } != Some(value.as_ptr()) {
                    return Ok(Err(format!("field {} reads another object", FIELDS[k])));
                }
            }
        }
        for count in [3, 2] {
            let mut fields: Vec<Option<Obj<'py>>> = (0..FIELDS.len())
                .map(|k| (k < count).then(|| values[k].clone()))
                .collect();
            let Some(made) = inline.create(&cls, &mut fields) else {
                return Ok(Err("the subject class is not created directly".to_owned()));
            };
            let made = made?;
            let verdict = self.holds(&made, &values, count)?;
            if verdict.is_err() {
                return Ok(verdict);
            }
            let keys: Vec<String> = made
                .getattr("__dict__")?
                .call_method0("keys")?
                .try_iter()?
                .map(|key| key?.extract())
                .collect::<PyResult<_>>()?;
            if keys != FIELDS[..count] {
                return Ok(Err(format!("vars() of a made instance has keys {keys:?}")));
            }
        }
        Ok(Ok(()))
    }

    /// Dict walks read from the table give `PyDict_Next`'s entries in its order, for the
    /// combined tables (str keys, other keys, a deleted entry); other dicts are left to it.
    fn dict_entries(&self) -> Verdict {
        let dicts = self.get("dicts")?.call0()?;
        for (index, dict) in dicts.try_iter()?.enumerate() {
            let dict = dict?;
            let raw = dict.as_ptr();
            let mut expected = Vec::new();
            let mut position: ffi::Py_ssize_t = 0;
            let (mut key, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: a live dict; PyDict_Next returns borrowed entries, compared as pointers
            // while `dict` keeps them alive and unchanged.
            while unsafe { ffi::PyDict_Next(raw, &mut position, &mut key, &mut value) } != 0 {
                expected.push((key, value, position));
            }
            let mut read = Vec::new();
            let mut position: ffi::Py_ssize_t = 0;
            loop {
                let before = position;
                // SAFETY: a live dict, under the GIL.
                match unsafe { Running::next_dict_entry(raw, &mut position) } {
                    Some(Some((key, value))) => read.push((key, value, position)),
                    Some(None) if position == before => break,
                    Some(None) => return Ok(Err("the end moved the position".to_owned())),
                    None if index < 3 => {
                        return Ok(Err(format!("combined dict {index} is not read")));
                    }
                    None => break,
                }
                if read.len() > expected.len() {
                    break;
                }
            }
            if !read.is_empty() && read != expected {
                return Ok(Err(format!("dict {index} reads other entries")));
            }
        }
        Ok(Ok(()))
    }

    /// Record dicts copied from a template and filled by position, against dicts filled key
    /// by key: equal, in the same order, the same size, tracked alike, and alike after later
    /// changes.
    fn dict_template(&self) -> Verdict {
        let py = self.py;
        let keys: Vec<Bound<'py, PyString>> = self
            .names()
            .into_iter()
            .map(|name| name.into_bound(py))
            .collect();
        let Some(template) = <Running as Family>::DictTemplate::build(py, &keys) else {
            return Ok(Err("no template is made for str keys".to_owned()));
        };
        let sys = self.get("sys")?;
        let tracked = self.get("gc")?.getattr("is_tracked")?;
        let container = PyList::empty(py).into_any();
        let text = PyString::new(py, "text").into_any();
        let cases: [(Vec<Option<Obj<'py>>>, &str); 3] = [
            (
                vec![Some(text.clone()), Some(py.None().into_bound(py)), None],
                "scalars",
            ),
            (
                vec![Some(container), Some(text.clone()), None],
                "a container",
            ),
            (
                vec![Some(text.clone()), None, Some(text)],
                "an absent field",
            ),
        ];
        for (values, what) in cases {
            let mut filling = template.copy(py)?;
            let reference = crate::py::new_dict(py)?;
            for (position, (key, value)) in keys.iter().zip(&values).enumerate() {
                match value {
                    Some(value) => {
                        filling.put(position, value.clone());
                        reference.set_item(key, value)?;
                    }
                    // What `to_builtins` does for a field absent from its value.
                    None => filling.dict().cast::<PyDict>()?.del_item(key)?,
                }
            }
            let made = filling.finish();
            let alike = |made: &Obj<'py>, reference: &Bound<'py, PyDict>| -> PyResult<bool> {
                let items = |dict: &Obj<'py>| -> PyResult<Vec<(Obj<'py>, Obj<'py>)>> {
                    dict.call_method0("items")?
                        .try_iter()?
                        .map(|item| item?.extract())
                        .collect()
                };
                let (mine, theirs) = (items(made)?, items(reference.as_any())?);
                Ok(mine.len() == theirs.len()
                    && mine
                        .iter()
                        .zip(&theirs)
                        .all(|((k1, v1), (k2, v2))| k1.is(k2) && v1.is(v2))
                    && tracked.call1((made,))?.is_truthy()?
                        == tracked.call1((reference,))?.is_truthy()?)
            };
            if !alike(&made, &reference)? {
                return Ok(Err(format!(
                    "a dict with {what} differs from one filled by key"
                )));
            }
            let size = sys.getattr("getsizeof")?;
            if !size.call1((&made,))?.eq(size.call1((&reference,))?)? {
                return Ok(Err(format!("a dict with {what} has another size")));
            }
            let later = PyString::new(py, "later");
            for dict in [&made, reference.as_any()] {
                dict.set_item(&later, 1)?;
                dict.del_item(&keys[0])?;
            }
            if !alike(&made, &reference)? {
                return Ok(Err(format!("a dict with {what} differs once changed")));
            }
        }
        self.dict_copy_of(&keys)
    }

    /// A copy of a dict of `keys` with values replaced by position (`to_builtins`'s untyped
    /// dicts), against a dict filled key by key with the same values: equal, in the same
    /// order, tracked alike, the copied dict unchanged.
    fn dict_copy_of(&self, keys: &[Bound<'py, PyString>]) -> Verdict {
        let py = self.py;
        let tracked = self.get("gc")?.getattr("is_tracked")?;
        let original = crate::py::new_dict(py)?;
        for (position, key) in keys.iter().enumerate() {
            original.set_item(key, position)?;
        }
        let before: Vec<(Obj<'py>, Obj<'py>)> = original.iter().collect();
        let Some(filling) = <Running as Family>::DictTemplate::copy_of(&original) else {
            return Ok(Err("a dict of str keys is not copied".to_owned()));
        };
        let mut filling = filling?;
        let reference = crate::py::new_dict(py)?;
        for (position, key) in keys.iter().enumerate() {
            let value = if position % 2 == 0 {
                PyList::empty(py).into_any()
            } else {
                original
                    .get_item(key)?
                    .unwrap_or_else(|| py.None().into_bound(py))
            };
            filling.put(position, value.clone());
            reference.set_item(key, value)?;
        }
        let made = filling.finish();
        let items = |dict: &Obj<'py>| -> PyResult<Vec<(Obj<'py>, Obj<'py>)>> {
            dict.call_method0("items")?
                .try_iter()?
                .map(|item| item?.extract())
                .collect()
        };
        let (mine, theirs) = (items(&made)?, items(reference.as_any())?);
        let same = mine.len() == theirs.len()
            && mine
                .iter()
                .zip(&theirs)
                .all(|((k1, v1), (k2, v2))| k1.is(k2) && v1.is(v2))
            && tracked.call1((&made,))?.is_truthy()?
                == tracked.call1((&reference,))?.is_truthy()?;
        let kept = original.iter().collect::<Vec<_>>().len() == before.len()
            && original
                .iter()
                .zip(&before)
                .all(|((k1, v1), (k2, v2))| k1.is(k2) && v1.is(v2));
        if !same {
            return Ok(Err("a dict's copy filled by position differs".to_owned()));
        }
        if !kept {
            return Ok(Err("a dict changed when its copy was filled".to_owned()));
        }
        Ok(Ok(()))
    }

    /// Ints of 65 to 128 bits made from their digits equal the ones `int()` parses.
    fn wide_int(&self) -> Verdict {
        let info = self.get("sys")?.getattr("int_info")?;
        let bits: u32 = info.getattr("bits_per_digit")?.extract()?;
        let size: u32 = info.getattr("sizeof_digit")?.extract()?;
        if (bits, size) != (30, 4) {
            return Ok(Err(format!(
                "ints have {bits}-bit digits in {size} bytes, not 30 in 4"
            )));
        }
        for expected in self.get("WIDE")?.try_iter()? {
            let expected = expected?;
            let value: u128 = expected.extract()?;
            let Some(made) = Running::wide_int(self.py, value) else {
                return Ok(Err("no int is made".to_owned()));
            };
            let made = made?;
            let same = made.get_type().is(expected.get_type())
                && made.eq(&expected)?
                && made.hash()? == expected.hash()?
                && made
                    .call_method0("bit_length")?
                    .eq(expected.call_method0("bit_length")?)?
                && made.str()?.to_str()? == expected.str()?.to_str()?;
            if !same {
                return Ok(Err(format!("{value} is made as another int")));
            }
        }
        Ok(Ok(()))
    }

    /// Ints read from their digits equal what `PyLong_AsLongLongAndOverflow` reads, at and
    /// around every digit boundary, both signs (made by literals, parsing and arithmetic), for
    /// bools and an int subclass; every int of at most 60 bits is read.
    fn int_digits(&self) -> Verdict {
        let info = self.get("sys")?.getattr("int_info")?;
        let bits: u32 = info.getattr("bits_per_digit")?.extract()?;
        let size: u32 = info.getattr("sizeof_digit")?.extract()?;
        if (bits, size) != (30, 4) {
            return Ok(Err(format!(
                "ints have {bits}-bit digits in {size} bytes, not 30 in 4"
            )));
        }
        for value in self.get("ints")?.call0()?.try_iter()? {
            let value = value?;
            let mut overflow = 0;
            // SAFETY: a live int (every subject is one); the conversion runs no Python code.
            let expected =
                unsafe { ffi::PyLong_AsLongLongAndOverflow(value.as_ptr(), &mut overflow) };
            let bits: u32 = value.call_method0("bit_length")?.extract()?;
            // SAFETY: as above; the digits were just checked to be 30 bits in 32.
            let read = unsafe { Running::int_digits(value.as_ptr()) };
            let agrees = match read {
                Some(number) => overflow == 0 && number == expected,
                None => bits > 60,
            };
            if !agrees {
                return Ok(Err(format!("{value} reads as {read:?}")));
            }
        }
        Ok(Ok(()))
    }
}

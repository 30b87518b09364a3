//! Property tests with serde-pickle and rmp-serde as oracles: over generated builtin values,
//! serde-pickle reads what polycodec's pickle writer writes and polycodec reads what
//! serde-pickle writes; the same both ways with rmp-serde for MessagePack.
//!
//! polycodec's writers and readers work on Python objects, so the tests embed an interpreter:
//! this crate's own module (`_polycodec`, compiled into the test binary) is placed in
//! `sys.modules` before the package in `python/` is imported, and `Codec(Any, format)` runs the
//! full writer and reader. Nothing is read from outside the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::OnceLock;

use num_bigint::BigInt;
use proptest::prelude::*;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PySet, PyString, PyTuple};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_pickle::{HashableValue, Value};

/// The codecs under test and a strict equality check (types included), built once.
struct Harness {
    pickle: Py<PyAny>,
    msgpack: Py<PyAny>,
    same: Py<PyAny>,
}

const HELPERS: &std::ffi::CStr = cr#"
import math

def same(a, b):
    """Equal and of the same types all the way down (1 == 1.0 == True is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(
            same(k, next(j for j in b if j == k)) and same(a[k], b[k]) for k in a
        )
    if isinstance(a, (set, frozenset)):
        return a == b and all(same(x, next(y for y in b if y == x)) for x in a)
    return a == b
"#;

/// The harness; call it while not attached to the interpreter (it attaches to build itself).
fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        Python::initialize();
        Python::attach(|py| {
            let build = || -> PyResult<Harness> {
                let sys = py.import("sys")?;
                let module = pyo3::wrap_pymodule!(crate::_polycodec)(py);
                sys.getattr("modules")?
                    .set_item("polycodec._polycodec", module)?;
                let source = concat!(env!("CARGO_MANIFEST_DIR"), "/python");
                sys.getattr("path")?.call_method1("insert", (0, source))?;
                let codec = py.import("polycodec")?.getattr("Codec")?;
                let any = py.import("typing")?.getattr("Any")?;
                let helpers = PyModule::from_code(py, HELPERS, c"oracles.py", c"oracles")?;
                Ok(Harness {
                    pickle: codec.call1((&any, "pickle"))?.unbind(),
                    msgpack: codec.call1((&any, "msgpack"))?.unbind(),
                    same: helpers.getattr("same")?.unbind(),
                })
            };
            build().unwrap_or_else(|err| panic!("cannot set up the interpreter: {err}"))
        })
    })
}

// --- generated values --------------------------------------------------------------------

/// A hashable value: a dict key or set member.
#[derive(Debug, Clone)]
enum Key {
    Int(BigInt),
    Str(String),
    Bytes(Vec<u8>),
}

/// A builtin Python value.
#[derive(Debug, Clone)]
enum Gen {
    None,
    Bool(bool),
    Int(BigInt),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Gen>),
    Tuple(Vec<Gen>),
    Dict(Vec<(Key, Gen)>),
    Set(Vec<Key>),
}

/// Integers of every size class: one byte, two, four and eight (signed and unsigned), and
/// big ints of up to 256 bits either side of zero.
fn int() -> impl Strategy<Value = BigInt> {
    prop_oneof![
        (0u8..=255).prop_map(BigInt::from),
        any::<i8>().prop_map(BigInt::from),
        any::<i16>().prop_map(BigInt::from),
        any::<u16>().prop_map(BigInt::from),
        any::<i32>().prop_map(BigInt::from),
        any::<u32>().prop_map(BigInt::from),
        any::<i64>().prop_map(BigInt::from),
        any::<u64>().prop_map(BigInt::from),
        (any::<bool>(), prop::collection::vec(any::<u32>(), 2..=8)).prop_map(|(neg, digits)| {
            let sign = if neg {
                num_bigint::Sign::Minus
            } else {
                num_bigint::Sign::Plus
            };
            BigInt::from_slice(sign, &digits)
        }),
    ]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("NaN is not equal to itself", |f| !f.is_nan()),
        prop::sample::select(vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.5,
            1e300
        ]),
    ]
}

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,12}"
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..24)
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        int().prop_map(Key::Int),
        text().prop_map(Key::Str),
        bytes().prop_map(Key::Bytes),
    ]
}

fn gen_value() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        Just(Gen::None),
        any::<bool>().prop_map(Gen::Bool),
        int().prop_map(Gen::Int),
        float().prop_map(Gen::Float),
        text().prop_map(Gen::Str),
        bytes().prop_map(Gen::Bytes),
        prop::collection::vec(key(), 0..6).prop_map(Gen::Set),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Gen::List),
            prop::collection::vec(inner.clone(), 0..6).prop_map(Gen::Tuple),
            prop::collection::vec((key(), inner), 0..6).prop_map(Gen::Dict),
        ]
    })
}

// --- conversions -------------------------------------------------------------------------

fn py_int<'py>(py: Python<'py>, value: &BigInt) -> Bound<'py, PyAny> {
    py.import("builtins")
        .and_then(|b| b.getattr("int"))
        .and_then(|int| int.call1((value.to_string(),)))
        .expect("int(str)")
}

fn key_to_py<'py>(py: Python<'py>, key: &Key) -> Bound<'py, PyAny> {
    match key {
        Key::Int(i) => py_int(py, i),
        Key::Str(s) => PyString::new(py, s).into_any(),
        Key::Bytes(b) => PyBytes::new(py, b).into_any(),
    }
}

fn to_py<'py>(py: Python<'py>, value: &Gen) -> Bound<'py, PyAny> {
    match value {
        Gen::None => py.None().into_bound(py),
        Gen::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Gen::Int(i) => py_int(py, i),
        Gen::Float(f) => PyFloat::new(py, *f).into_any(),
        Gen::Str(s) => PyString::new(py, s).into_any(),
        Gen::Bytes(b) => PyBytes::new(py, b).into_any(),
        Gen::List(items) => PyList::new(py, items.iter().map(|i| to_py(py, i)))
            .expect("list")
            .into_any(),
        Gen::Tuple(items) => PyTuple::new(py, items.iter().map(|i| to_py(py, i)))
            .expect("tuple")
            .into_any(),
        Gen::Dict(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                dict.set_item(key_to_py(py, k), to_py(py, v)).expect("dict");
            }
            dict.into_any()
        }
        Gen::Set(members) => {
            let members: Vec<_> = members.iter().map(|k| key_to_py(py, k)).collect();
            PySet::new(py, &members).expect("set").into_any()
        }
    }
}

fn int_value(i: &BigInt) -> Value {
    i64::try_from(i).map_or_else(|_| Value::Int(i.clone()), Value::I64)
}

fn key_hashable(key: &Key) -> HashableValue {
    match key {
        Key::Int(i) => {
            i64::try_from(i).map_or_else(|_| HashableValue::Int(i.clone()), HashableValue::I64)
        }
        Key::Str(s) => HashableValue::String(s.clone()),
        Key::Bytes(b) => HashableValue::Bytes(b.clone()),
    }
}

/// The value as serde-pickle represents it (a dict keeps the last value of a repeated key, as
/// Python's does).
fn to_pickle(value: &Gen) -> Value {
    match value {
        Gen::None => Value::None,
        Gen::Bool(b) => Value::Bool(*b),
        Gen::Int(i) => int_value(i),
        Gen::Float(f) => Value::F64(*f),
        Gen::Str(s) => Value::String(s.clone()),
        Gen::Bytes(b) => Value::Bytes(b.clone()),
        Gen::List(items) => Value::List(items.iter().map(to_pickle).collect()),
        Gen::Tuple(items) => Value::Tuple(items.iter().map(to_pickle).collect()),
        Gen::Dict(entries) => Value::Dict(
            entries
                .iter()
                .map(|(k, v)| (key_hashable(k), to_pickle(v)))
                .collect::<BTreeMap<_, _>>(),
        ),
        Gen::Set(members) => Value::Set(members.iter().map(key_hashable).collect::<BTreeSet<_>>()),
    }
}

// --- MessagePack values: what the format has (no tuples, sets or ints past 64 bits) ---------

#[derive(Debug, Clone, PartialEq)]
enum Mp {
    Nil,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Mp>),
    /// Keys are strs or ints, without repeats, in order.
    Map(Vec<(Mp, Mp)>),
}

fn mp_int() -> impl Strategy<Value = i128> {
    prop_oneof![
        any::<i8>().prop_map(i128::from),
        (0u8..=255).prop_map(i128::from),
        any::<i16>().prop_map(i128::from),
        any::<u16>().prop_map(i128::from),
        any::<i32>().prop_map(i128::from),
        any::<u32>().prop_map(i128::from),
        any::<i64>().prop_map(i128::from),
        any::<u64>().prop_map(i128::from),
    ]
}

fn mp_value() -> impl Strategy<Value = Mp> {
    let leaf = prop_oneof![
        Just(Mp::Nil),
        any::<bool>().prop_map(Mp::Bool),
        mp_int().prop_map(Mp::Int),
        float().prop_map(Mp::Float),
        text().prop_map(Mp::Str),
        bytes().prop_map(Mp::Bin),
    ];
    let key = prop_oneof![mp_int().prop_map(Mp::Int), text().prop_map(Mp::Str)];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Mp::Array),
            prop::collection::vec((key.clone(), inner), 0..6).prop_map(|entries| {
                let mut unique: Vec<(Mp, Mp)> = Vec::new();
                for (k, v) in entries {
                    if !unique.iter().any(|(seen, _)| *seen == k) {
                        unique.push((k, v));
                    }
                }
                Mp::Map(unique)
            }),
        ]
    })
}

fn mp_to_py<'py>(py: Python<'py>, value: &Mp) -> Bound<'py, PyAny> {
    match value {
        Mp::Nil => py.None().into_bound(py),
        Mp::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Mp::Int(i) => py_int(py, &BigInt::from(*i)),
        Mp::Float(f) => PyFloat::new(py, *f).into_any(),
        Mp::Str(s) => PyString::new(py, s).into_any(),
        Mp::Bin(b) => PyBytes::new(py, b).into_any(),
        Mp::Array(items) => PyList::new(py, items.iter().map(|i| mp_to_py(py, i)))
            .expect("list")
            .into_any(),
        Mp::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                dict.set_item(mp_to_py(py, k), mp_to_py(py, v))
                    .expect("dict");
            }
            dict.into_any()
        }
    }
}

impl Serialize for Mp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Mp::Nil => serializer.serialize_unit(),
            Mp::Bool(b) => serializer.serialize_bool(*b),
            Mp::Int(i) if *i < 0 => serializer.serialize_i64(*i as i64),
            Mp::Int(i) => serializer.serialize_u64(*i as u64),
            Mp::Float(f) => serializer.serialize_f64(*f),
            Mp::Str(s) => serializer.serialize_str(s),
            Mp::Bin(b) => serializer.serialize_bytes(b),
            Mp::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Mp::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

struct MpVisitor;

impl<'de> Visitor<'de> for MpVisitor {
    type Value = Mp;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a MessagePack value")
    }
    fn visit_unit<E>(self) -> Result<Mp, E> {
        Ok(Mp::Nil)
    }
    fn visit_none<E>(self) -> Result<Mp, E> {
        Ok(Mp::Nil)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Mp, E> {
        Ok(Mp::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Mp, E> {
        Ok(Mp::Int(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Mp, E> {
        Ok(Mp::Int(v.into()))
    }
    fn visit_f32<E>(self, v: f32) -> Result<Mp, E> {
        Ok(Mp::Float(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Mp, E> {
        Ok(Mp::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Mp, E> {
        Ok(Mp::Str(v.to_owned()))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Mp, E> {
        Ok(Mp::Bin(v.to_vec()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Mp, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Mp::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Mp, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Mp::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Mp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Mp, D::Error> {
        deserializer.deserialize_any(MpVisitor)
    }
}

// --- the properties ------------------------------------------------------------------------

fn call_bytes(codec: &Bound<'_, PyAny>, method: &str, arg: &Bound<'_, PyAny>) -> Vec<u8> {
    let out = codec
        .call_method1(method, (arg,))
        .unwrap_or_else(|err| panic!("{method}: {err}"));
    out.cast::<PyBytes>().expect("bytes").as_bytes().to_vec()
}

fn same(h: &Harness, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> bool {
    h.same
        .bind(py)
        .call1((a, b))
        .and_then(|r| r.is_truthy())
        .expect("same()")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn serde_pickle_reads_what_polycodec_writes(value in gen_value()) {
        let h = harness();
        let data = Python::attach(|py| {
            call_bytes(h.pickle.bind(py), "encode_one", &to_py(py, &value))
        });
        let read = serde_pickle::value_from_slice(&data, serde_pickle::DeOptions::new())
            .unwrap_or_else(|err| panic!("serde-pickle cannot read {data:?}: {err}"));
        prop_assert_eq!(read, to_pickle(&value));
    }

    #[test]
    fn polycodec_reads_what_serde_pickle_writes(value in gen_value(), v2 in any::<bool>()) {
        let h = harness();
        let options = if v2 {
            serde_pickle::SerOptions::new().proto_v2()
        } else {
            serde_pickle::SerOptions::new()
        };
        let data = serde_pickle::value_to_vec(&to_pickle(&value), options).expect("serde-pickle");
        Python::attach(|py| {
            let read = h
                .pickle
                .bind(py)
                .call_method1("decode_one", (PyBytes::new(py, &data),))
                .unwrap_or_else(|err| panic!("polycodec cannot read {data:?}: {err}"));
            let expected = to_py(py, &value);
            assert!(same(h, py, &read, &expected), "{read} != {expected}");
        });
    }

    #[test]
    fn rmp_serde_reads_what_polycodec_writes(value in mp_value()) {
        let h = harness();
        let data = Python::attach(|py| {
            call_bytes(h.msgpack.bind(py), "encode_one", &mp_to_py(py, &value))
        });
        let read: Mp = rmp_serde::from_slice(&data)
            .unwrap_or_else(|err| panic!("rmp-serde cannot read {data:?}: {err}"));
        prop_assert_eq!(read, value);
    }

    #[test]
    fn polycodec_reads_what_rmp_serde_writes(value in mp_value()) {
        let h = harness();
        let data = rmp_serde::to_vec(&value).expect("rmp-serde");
        Python::attach(|py| {
            let read = h
                .msgpack
                .bind(py)
                .call_method1("decode_one", (PyBytes::new(py, &data),))
                .unwrap_or_else(|err| panic!("polycodec cannot read {data:?}: {err}"));
            let expected = mp_to_py(py, &value);
            assert!(same(h, py, &read, &expected), "{read} != {expected}");
        });
    }
}

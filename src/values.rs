//! Format-agnostic decoding: turning a scalar read off the wire into the Python value a plan node
//! asks for, and assembling records. Every format's decoder reads its own tokens and calls these,
//! so a rule such as "an int enum accepts 3 and returns `Color.BLUE`" is written once.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyType};
use std::mem::ManuallyDrop;

use crate::errors::{Code, Cut, Error, ErrorKind, Quoted, Result};
use crate::plan::{
    DecimalSpec, Field, FieldDefault, Fill, LiteralValue, Node, NodeId, Plan, RecordKind,
    RecordSpec, StrSpec, TzRule, UnionSpec,
};
use crate::py::cpython::{DictTemplateLayout, FillingLayout};
use crate::py::{self, temporal, Obj};
use polycodec_formats::msgpack::epoch;
use polycodec_formats::text;
use polycodec_formats::text::lax::{self, LaxNumber};

/// The kind of scalar token a format read, for union dispatch and error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Array,
    Object,
}

impl Token {
    pub fn describe(self) -> &'static str {
        match self {
            Token::Null => "null",
            Token::Bool => "bool",
            Token::Int => "int",
            Token::Float => "float",
            Token::Str => "str",
            Token::Array => "array",
            Token::Object => "object",
        }
    }
}

/// Per-call decoding state shared by the formats.
pub struct Decoding<'p, 'py> {
    pub py: Python<'py>,
    pub plan: &'p Plan,
    pub strict: bool,
}

pub use crate::depth::{nested, nested_runs_directly, MAX_DEPTH};

pub fn mismatch(expected: &Node, token: Token) -> Error {
    Error::expected(
        ErrorKind::Validation,
        expected.type_code(),
        expected.describe(),
        token.describe(),
    )
}

impl<'p, 'py> Decoding<'p, 'py> {
    /// Stores a decoded entry in a dict. Hashing an enum, UUID or record key is Python code,
    /// and so is dropping an earlier value of the same key when it can be an instance of a
    /// user class (its `__del__`): such entries are stored through [`py::user_code`].
    #[inline]
    pub fn store_entry(
        &self,
        dict: &Bound<'py, PyDict>,
        key_node: NodeId,
        value_node: NodeId,
        key: Obj<'py>,
        value: Obj<'py>,
    ) -> Result<()> {
        let builtin_key = self.plan.node(key_node).is_builtin_scalar();
        let builtin_value = self.plan.node(value_node).is_builtin_scalar();
        if builtin_key && builtin_value {
            py::dict_set(dict, &key, &value)?;
        } else {
            py::user_code(self.py, || dict.set_item(key, value))?;
        }
        Ok(())
    }

    /// Whether storing a dict entry of these key and value nodes runs no Python code (see
    /// [`Self::store_entry`]), for a dict loop to decide once.
    #[inline]
    pub fn builtin_entries(&self, key_node: NodeId, value_node: NodeId) -> bool {
        self.plan.node(key_node).is_builtin_scalar()
            && self.plan.node(value_node).is_builtin_scalar()
    }

    /// Picks the node that takes a token: the node itself, or a union's variant for that token.
    #[inline(always)]
    pub fn resolve(&self, id: NodeId, token: Token) -> Result<NodeId> {
        match self.plan.node(id) {
            Node::Union(spec) => self.resolve_union(id, spec, token),
            _ => Ok(id),
        }
    }

    /// A union's variant for a token. In lax mode, where the variant depends on the value (a
    /// string that may hold a number, `null` or a bool for another variant; a number that a
    /// Decimal, bool, datetime or timedelta variant may take), the union's own id: the
    /// token's method then picks by the value (`lax_union_*`).
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    fn resolve_union(&self, id: NodeId, spec: &UnionSpec, token: Token) -> Result<NodeId> {
        let chosen = match token {
            Token::Null => spec.none,
            Token::Bool => spec.bool,
            Token::Int => spec.int.or(spec.float),
            Token::Float => spec.float,
            Token::Str => spec.str,
            Token::Array => spec.array,
            Token::Object => spec.object,
        };
        match (chosen, self.strict) {
            (Some(chosen), true) => Ok(chosen),
            (Some(chosen), false) => Ok(self.lax_variant(id, chosen, token)),
            (None, false) if matches!(token, Token::Str | Token::Int | Token::Float) => Ok(id),
            (None, _) => Err(union_mismatch(self.plan, spec, token)),
        }
    }

    /// Lax mode: a string goes to the union's str variant at once only when that is a plain
    /// `str` (which takes any text); for any other (a datetime, an enum, bytes) the text may
    /// first be a number, `null` or a bool for another variant, as msgspec reads it.
    #[inline(never)]
    fn lax_variant(&self, union: NodeId, chosen: NodeId, token: Token) -> NodeId {
        match (token, self.plan.node(chosen)) {
            (Token::Str, Node::Str(_)) => chosen,
            (Token::Str, _) => union,
            _ => chosen,
        }
    }

    pub fn null(&self, id: NodeId) -> Result<Obj<'py>> {
        let id = self.resolve(id, Token::Null)?;
        match self.plan.node(id) {
            Node::None | Node::Any => Ok(self.py.None().into_bound(self.py)),
            node => Err(mismatch(node, Token::Null)),
        }
    }

    pub fn boolean(&self, id: NodeId, value: bool) -> Result<Obj<'py>> {
        let id = self.resolve(id, Token::Bool)?;
        match self.plan.node(id) {
            Node::Bool | Node::Any => Ok(pyo3::types::PyBool::new(self.py, value)
                .to_owned()
                .into_any()),
            Node::Literal(spec) => literal(spec, &LiteralValue::Bool(value), self.py),
            node => Err(mismatch(node, Token::Bool)),
        }
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub fn int(&self, id: NodeId, value: i64) -> Result<Obj<'py>> {
        let id = self.resolve(id, Token::Int)?;
        match self.plan.node(id) {
            Node::Int(bounds) => {
                bounds.check(value)?;
                Ok(py::new_int(self.py, value)?)
            }
            Node::Any => Ok(py::new_int(self.py, value)?),
            Node::Float(bounds) => {
                let value = value as f64;
                bounds.check(value)?;
                Ok(py::new_float(self.py, value)?)
            }
            Node::Enum(spec) => match spec.by_int(value) {
                Some(member) => Ok(member.bind(self.py).clone()),
                None => match spec.flag_member(py::new_int(self.py, value)?)? {
                    Some(member) => Ok(member),
                    None => Err(Error::validation(
                        Code::Enum,
                        format_args!(
                            "invalid enum value {value} for {}: expected {}",
                            spec.name,
                            spec.describe_values()
                        ),
                    )),
                },
            },
            Node::Literal(spec) => literal(spec, &LiteralValue::Int(value), self.py),
            Node::Decimal(spec) if !self.strict => self.decimal(spec, &value.to_string()),
            Node::Bool if !self.strict && (value == 0 || value == 1) => {
                Ok(pyo3::types::PyBool::new(self.py, value == 1)
                    .to_owned()
                    .into_any())
            }
            node if !self.strict => self.lax_int(node, value),
            node => Err(mismatch(node, Token::Int)),
        }
    }

    /// Lax mode: an int for a datetime (a Unix timestamp), a timedelta (seconds), or a union
    /// that has neither an int nor a float variant.
    #[inline(never)]
    fn lax_int(&self, node: &Node, value: i64) -> Result<Obj<'py>> {
        match node {
            Node::DateTime(rule) => self.timestamp(*rule, value, 0, &value),
            Node::TimeDelta => self.seconds(lax::duration_from_int(value), &value),
            Node::Union(spec) => match lax_number_variant(self.plan, spec, Some(value)) {
                Some(variant) => self.int(variant, value),
                None => Err(mismatch(node, Token::Int)),
            },
            node => Err(mismatch(node, Token::Int)),
        }
    }

    /// An integer too large for i64, given as its decimal text.
    pub fn big_int(&self, id: NodeId, text: &str) -> Result<Obj<'py>> {
        let id = self.resolve(id, Token::Int)?;
        match self.plan.node(id) {
            Node::Int(bounds) => {
                let checked = bounds.check_big(text)?;
                let value = parse_python_int(self.py, text)?;
                if let (false, Some(multiple)) = (checked, bounds.multiple_of) {
                    let remainder = value.rem(multiple)?;
                    if !remainder.eq(0)? {
                        return Err(Error::validation(
                            Code::MultipleOf,
                            format_args!("expected a multiple of {multiple}, got {}", Cut(text)),
                        ));
                    }
                }
                Ok(value)
            }
            Node::Any => parse_python_int(self.py, text),
            Node::Enum(spec) if spec.flag => spec
                .flag_member(parse_python_int(self.py, text)?)?
                .ok_or_else(|| {
                    Error::validation(
                        Code::Enum,
                        format_args!(
                            "invalid enum value {} for {}: expected {}",
                            Cut(text),
                            spec.name,
                            spec.describe_values()
                        ),
                    )
                }),
            Node::Float(bounds) => {
                let value: f64 = text.parse().unwrap_or(f64::NAN);
                if value.is_infinite() {
                    return Err(float_out_of_range(text));
                }
                bounds.check(value)?;
                Ok(py::new_float(self.py, value)?)
            }
            Node::Decimal(spec) if !self.strict => self.decimal(spec, text),
            // An int beyond 64 bits is out of every datetime's and timedelta's range.
            Node::DateTime(_) if !self.strict => Err(timestamp_out_of_range(&Cut(text))),
            Node::TimeDelta if !self.strict => Err(seconds_out_of_range(&Cut(text))),
            Node::Union(spec) if !self.strict => match lax_number_variant(self.plan, spec, None) {
                Some(variant) => self.big_int(variant, text),
                None => Err(mismatch(self.plan.node(id), Token::Int)),
            },
            node => Err(mismatch(node, Token::Int)),
        }
    }

    /// A float read; `text` is its literal (ASCII) where the format has one, which a Decimal
    /// is made from.
    pub fn float(&self, id: NodeId, value: f64, text: Option<&[u8]>) -> Result<Obj<'py>> {
        let id = self.resolve(id, Token::Float)?;
        match self.plan.node(id) {
            Node::Float(bounds) => {
                bounds.check(value)?;
                Ok(py::new_float(self.py, value)?)
            }
            Node::Any => Ok(py::new_float(self.py, value)?),
            Node::Int(bounds) if !self.strict && lax::integral_float(value) => {
                let value = value as i64;
                bounds.check(value)?;
                Ok(py::new_int(self.py, value)?)
            }
            Node::Decimal(spec) if !self.strict => {
                let owned;
                let text = match text {
                    Some(text) => utf8(text),
                    // Python's repr (what `json.dumps` writes and msgspec reads a Decimal
                    // from): shortest round trip, a ".0" on integral values, exponent form
                    // below 1e-4 and from 1e16 on; Rust's Debug follows the same rules.
                    None => {
                        owned = format!("{value:?}");
                        &owned
                    }
                };
                self.decimal(spec, text)
            }
            node if !self.strict => self.lax_float(id, node, value, text),
            node => Err(mismatch(node, Token::Float)),
        }
    }

    /// Lax mode: a float for a datetime (a Unix timestamp), a timedelta (seconds), or a union
    /// without a float variant.
    #[inline(never)]
    fn lax_float(
        &self,
        id: NodeId,
        node: &Node,
        value: f64,
        text: Option<&[u8]>,
    ) -> Result<Obj<'py>> {
        let shown = |value: f64| match text {
            Some(text) => Shown::Text(text),
            None => Shown::Float(value),
        };
        match node {
            Node::DateTime(rule) => match lax::timestamp(value) {
                Some((seconds, nanoseconds)) => {
                    self.timestamp(*rule, seconds, nanoseconds, &shown(value))
                }
                None if value.is_finite() => Err(timestamp_out_of_range(&shown(value))),
                None => Err(Error::validation(
                    Code::FiniteNumber,
                    format_args!("expected a finite Unix timestamp, got {}", shown(value)),
                )),
            },
            Node::TimeDelta => self.seconds(lax::duration_from_seconds(value), &shown(value)),
            Node::Union(spec) => match lax_float_variant(self.plan, spec, value) {
                Some(variant) => self.float(variant, value, text),
                None => Err(mismatch(self.plan.node(id), Token::Float)),
            },
            node => Err(mismatch(node, Token::Float)),
        }
    }

    /// A Unix timestamp as an aware UTC datetime (lax mode), checked against the tz rule.
    fn timestamp(
        &self,
        rule: TzRule,
        seconds: i64,
        nanoseconds: u32,
        shown: &dyn std::fmt::Display,
    ) -> Result<Obj<'py>> {
        if rule == TzRule::Naive {
            return Err(Error::validation(
                Code::TimezoneNaive,
                "expected a naive datetime, got a Unix timestamp (UTC)",
            ));
        }
        let parts = epoch::from_timestamp(seconds, nanoseconds)
            .ok_or_else(|| timestamp_out_of_range(shown))?;
        Ok(temporal::new_datetime(self.py, &parts)?)
    }

    /// A number of seconds as a timedelta (lax mode), or the error for one `timedelta` cannot
    /// hold.
    fn seconds(
        &self,
        duration: Option<text::temporal::Duration>,
        shown: &dyn std::fmt::Display,
    ) -> Result<Obj<'py>> {
        let parts = duration.ok_or_else(|| seconds_out_of_range(shown))?;
        Ok(temporal::new_timedelta(self.py, &parts)?)
    }

    /// A string token, as validated UTF-8 bytes. Formats handle `bytes` nodes themselves
    /// (base64 in JSON, raw in msgpack) before calling this.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub fn string(&self, id: NodeId, bytes: &[u8], ascii: bool) -> Result<Obj<'py>> {
        let id = self.resolve(id, Token::Str)?;
        let py = self.py;
        match self.plan.node(id) {
            Node::Str(spec) => {
                if !spec.is_unconstrained() {
                    check_str(spec, bytes, ascii, py)?;
                }
                Ok(py::new_str(py, bytes, ascii)?)
            }
            Node::Any => Ok(py::new_str(py, bytes, ascii)?),
            Node::DateTime(rule) => {
                let parts = match text::temporal::parse_datetime(bytes) {
                    Ok(parts) => parts,
                    Err(error) => return self.lax_text(id, bytes, error),
                };
                check_tz(*rule, parts.offset_seconds.is_some(), "datetime")?;
                Ok(temporal::new_datetime(py, &parts)?)
            }
            Node::Date => {
                let parts = text::temporal::parse_date(bytes).map_err(Error::text)?;
                Ok(temporal::new_date(py, &parts)?)
            }
            Node::Decimal(spec) => {
                // From the bytes: the text is only needed (checked as UTF-8) for constraints
                // and messages.
                let value = py::new_decimal_from_bytes(py, bytes, ascii).map_err(|_| {
                    Error::validation(
                        Code::DecimalParsing,
                        format_args!("invalid decimal {}", Quoted(utf8(bytes))),
                    )
                })?;
                if spec.is_constrained() {
                    check_decimal(spec, &value, bytes)?;
                }
                Ok(value)
            }
            Node::Enum(spec) => match spec.by_str(bytes) {
                Some(member) => Ok(member.bind(py).clone()),
                None if !self.strict && spec.has_int_values() => self.lax_integer_text(id, bytes),
                None => Err(Error::validation(
                    Code::Enum,
                    format_args!(
                        "invalid enum value {} for {}: expected {}",
                        Quoted(utf8(bytes)),
                        spec.name,
                        spec.describe_values()
                    ),
                )),
            },
            // Lax mode: an integer's text goes to a literal's int values first (a str value
            // with the same text only takes it when the literal has no int value).
            Node::Literal(spec)
                if !self.strict
                    && spec.values.iter().any(|(v, _)| v.is_int())
                    && lax::number(bytes) == Some(LaxNumber::Int) =>
            {
                self.lax_integer_text(id, bytes)
            }
            Node::Literal(spec) => match spec.find_str(bytes) {
                Some(object) => Ok(object.bind(py).clone()),
                None => Err(literal_mismatch(spec, &Quoted(utf8(bytes)))),
            },
            node => self.string_other(id, node, bytes),
        }
    }

    /// Lax mode: a string for an int enum or int literal (or a union whose other variants
    /// took nothing) read as an integer when it is one, in JSON's grammar (`"1"`, not `"1.0"`,
    /// as msgspec takes it); else the str's own error.
    #[inline(never)]
    fn lax_integer_text(&self, id: NodeId, bytes: &[u8]) -> Result<Obj<'py>> {
        let text = utf8(bytes);
        match self.integer_text(id, text) {
            Some(result) => result,
            None => {
                let node = self.plan.node(id);
                Err(Error::validation(
                    node.type_code(),
                    format_args!("expected {}, got str {}", node.describe(), Quoted(text)),
                ))
            }
        }
    }

    /// Lax mode: a string that failed as a datetime's or timedelta's text (node `id`) read as
    /// a number of seconds when it holds one, as msgspec reads it; `error` otherwise, and in
    /// strict mode.
    #[cold]
    #[inline(never)]
    fn lax_text(
        &self,
        id: NodeId,
        bytes: &[u8],
        error: text::temporal::TextError,
    ) -> Result<Obj<'py>> {
        if self.strict {
            return Err(Error::text(error));
        }
        let text = utf8(bytes);
        match lax::number(bytes) {
            Some(LaxNumber::Int) => self
                .integer_text(id, text)
                .unwrap_or_else(|| Err(Error::text(error))),
            Some(LaxNumber::Float { value, .. }) => self.float(id, value, Some(bytes)),
            None => Err(Error::text(error)),
        }
    }

    /// Lax mode, a string for a union whose str variant is not a plain `str` (or that has
    /// none): `null` for its None variant, `true` or `false` for its bool, a number for the
    /// variant msgspec gives it (see [`lax_number_variant`]); `None` when the text is none of
    /// these, for the str variant to read.
    pub fn lax_union_text(&self, spec: &UnionSpec, bytes: &[u8]) -> Result<Option<Obj<'py>>> {
        let plan = self.plan;
        let py = self.py;
        if spec.none.is_some() && lax::null_word(bytes) {
            return Ok(Some(py.None().into_bound(py)));
        }
        if let Some(flag) = spec
            .bool
            .filter(|&v| matches!(plan.node(v), Node::Bool))
            .and_then(|_| lax::bool_word(bytes))
        {
            return Ok(Some(PyBool::new(py, flag).to_owned().into_any()));
        }
        let text = utf8(bytes);
        // A number the union has a variant for must be taken by one of them (an error if
        // none takes this one), as msgspec reads it: only a union with none leaves the text to
        // its str variant.
        let numeric = spec.int.is_some()
            || spec.float.is_some()
            || spec
                .bool
                .is_some_and(|v| matches!(plan.node(v), Node::Bool))
            || spec.str.is_some_and(|v| {
                matches!(
                    plan.node(v),
                    Node::Decimal(_) | Node::DateTime(_) | Node::TimeDelta
                )
            });
        let refused = || Some(Err(union_mismatch(plan, spec, Token::Str)));
        let mut number = lax::number(bytes);
        // An integer beyond 64 bits is a float to any union but one with a plain `int`, as
        // msgspec reads it (only `int` holds such an integer exactly).
        if number == Some(LaxNumber::Int)
            && text.parse::<i64>().is_err()
            && text.parse::<u64>().is_err()
            && !spec
                .int
                .is_some_and(|v| matches!(plan.node(v), Node::Int(_)))
        {
            number = text.parse::<f64>().ok().map(|value| LaxNumber::Float {
                value,
                named: false,
            });
        }
        let value = match number {
            Some(LaxNumber::Int) => {
                let variant = match spec.int.or(spec.float) {
                    Some(variant) => Some(variant),
                    None => lax_number_variant(plan, spec, text.parse::<i64>().ok()),
                };
                match variant {
                    Some(variant) => self.integer_text(variant, text),
                    None if numeric => refused(),
                    None => None,
                }
            }
            Some(LaxNumber::Float { value, named }) => {
                let variant = match spec.float {
                    Some(variant) => Some(variant),
                    None => lax_float_variant(plan, spec, value),
                };
                match variant {
                    Some(variant) => {
                        // A Decimal reads the text; anything else overflowed.
                        let decimal = matches!(plan.node(variant), Node::Decimal(_));
                        Some(if value.is_infinite() && !named && !decimal {
                            Err(float_out_of_range(text))
                        } else {
                            self.float(variant, value, Some(bytes))
                        })
                    }
                    None if numeric => refused(),
                    None => None,
                }
            }
            None => None,
        };
        value.transpose()
    }

    /// [`Self::string`] for the nodes a str rarely decodes to (a time, a timedelta, a UUID, a
    /// lax number or bool), out of line so the common ones stay in fewer cache lines.
    #[inline(never)]
    fn string_other(&self, id: NodeId, node: &Node, bytes: &[u8]) -> Result<Obj<'py>> {
        let py = self.py;
        match node {
            Node::Time(rule) => {
                let parts = text::temporal::parse_time(bytes).map_err(Error::text)?;
                check_tz(*rule, parts.offset_seconds.is_some(), "time")?;
                Ok(temporal::new_time(py, &parts)?)
            }
            Node::TimeDelta => match text::temporal::parse_duration(bytes) {
                Ok(parts) => Ok(temporal::new_timedelta(py, &parts)?),
                Err(error) => self.lax_text(id, bytes, error),
            },
            Node::Uuid => {
                let value = text::uuid::parse_uuid(bytes).map_err(Error::text)?;
                Ok(py::new_uuid(py, value)?)
            }
            // Lax mode: a number in JSON's grammar: an integer, or an integral float up to 2^53.
            Node::Int(_) if !self.strict => {
                let text = utf8(bytes);
                let refused = || {
                    Error::validation(
                        Code::IntType,
                        format_args!("expected int, got str {}", Quoted(text)),
                    )
                };
                match lax::number(bytes) {
                    Some(LaxNumber::Int) => self.integer_text(id, text).ok_or_else(refused)?,
                    Some(LaxNumber::Float { value, .. }) if lax::integral_float(value) => {
                        self.float(id, value, Some(bytes))
                    }
                    _ => Err(refused()),
                }
            }
            // Lax mode: a number in JSON's grammar, or a float named `nan`, `inf` or
            // `infinity` in any case (with an optional `-`), as msgspec reads it; a number
            // that only overflows to an infinity is out of range, as it is in JSON.
            Node::Float(bounds) if !self.strict => {
                let text = utf8(bytes);
                let refused = || {
                    Error::validation(
                        Code::FloatType,
                        format_args!("expected float, got str {}", Quoted(text)),
                    )
                };
                let value = match lax::number(bytes) {
                    Some(LaxNumber::Float { value, named }) => {
                        if value.is_infinite() && !named {
                            return Err(float_out_of_range(text));
                        }
                        value
                    }
                    Some(LaxNumber::Int) => {
                        return self.integer_text(id, text).ok_or_else(refused)?
                    }
                    None => return Err(refused()),
                };
                bounds.check(value)?;
                Ok(py::new_float(py, value)?)
            }
            // Lax mode: `true` or `false` in any case, or a number that is 0 or 1.
            Node::Bool if !self.strict => {
                let flag = match lax::bool_word(bytes) {
                    Some(flag) => Some(flag),
                    None if lax::number(bytes) == Some(LaxNumber::Int) => {
                        match utf8(bytes).trim_start_matches('-') {
                            "0" => Some(false),
                            "1" if !bytes.starts_with(b"-") => Some(true),
                            _ => None,
                        }
                    }
                    None => None,
                };
                match flag {
                    Some(flag) => Ok(PyBool::new(py, flag).to_owned().into_any()),
                    None => Err(Error::validation(
                        Code::BoolType,
                        format_args!("expected bool, got str {}", Quoted(utf8(bytes))),
                    )),
                }
            }
            // Lax mode: `null` in any case.
            Node::None if !self.strict && lax::null_word(bytes) => Ok(py.None().into_bound(py)),
            Node::Union(spec) if !self.strict => match self.lax_union_text(spec, bytes)? {
                Some(value) => Ok(value),
                None => match spec.str {
                    Some(variant) => self.string(variant, bytes, bytes.is_ascii()),
                    None => Err(mismatch(node, Token::Str)),
                },
            },
            node => Err(mismatch(node, Token::Str)),
        }
    }

    /// A JSON number too large for a float (`1e400`): lax mode gives it to a Decimal (the node,
    /// or the Decimal variant of a union without a float), which reads its text, as msgspec
    /// does; anything else refuses it.
    #[cold]
    pub fn huge_float(&self, id: NodeId, text: &str) -> Result<Obj<'py>> {
        if !self.strict {
            let target = match self.plan.node(id) {
                Node::Union(spec) if spec.float.is_none() => spec.str,
                _ => Some(id),
            };
            if let Some(Node::Decimal(spec)) = target.map(|target| self.plan.node(target)) {
                return self.decimal(spec, text);
            }
        }
        Err(float_out_of_range(text))
    }

    /// An integer written as text (a JSON object key, a lax numeric string), exact at any
    /// size, in JSON's integer grammar (as msgspec reads it): no sign but `-`, no leading zero,
    /// so that `"01"` is not the key `"1"` again. `None` when the text is not such an integer,
    /// so the caller can say what it expected.
    pub fn integer_text(&self, id: NodeId, text: &str) -> Option<Result<Obj<'py>>> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || (digits.len() > 1 && digits.starts_with('0'))
        {
            return None;
        }
        Some(match text.parse::<i64>() {
            Ok(value) => self.int(id, value),
            Err(_) => self.big_int(id, text),
        })
    }

    /// A dict key read as a string: unconstrained str keys come from the key cache (see
    /// [`plain_str_key`]).
    pub fn key_string(&self, id: NodeId, bytes: &[u8], ascii: bool) -> Result<Obj<'py>> {
        match self.plan.node(id) {
            Node::Any => Ok(py::dict_key_str(self.py, bytes, ascii)?),
            Node::Str(spec) if spec.is_unconstrained() => {
                Ok(py::dict_key_str(self.py, bytes, ascii)?)
            }
            _ => self.string(id, bytes, ascii),
        }
    }

    pub fn decimal(&self, spec: &DecimalSpec, text: &str) -> Result<Obj<'py>> {
        let value = py::new_decimal(self.py, text).map_err(|_| {
            Error::validation(
                Code::DecimalParsing,
                format_args!("invalid decimal {}", Quoted(text)),
            )
        })?;
        check_decimal(spec, &value, text.as_bytes())?;
        Ok(value)
    }

    /// Checks a collection's length against its node's bounds.
    pub fn check_length(&self, id: NodeId, length: usize) -> Result<()> {
        let bounds = match self.plan.node(id) {
            Node::Sequence(spec) => &spec.length,
            Node::Dict(spec) => &spec.length,
            _ => return Ok(()),
        };
        bounds.check(length, crate::plan::LengthUnit::Items)
    }
}

/// Whether the keys of node `key_node` read from a str are the str itself, from the key cache
/// (`Any` or an unconstrained `str`), as [`Decoding::key_string`] makes them.
#[inline]
pub fn plain_str_key(plan: &Plan, key_node: NodeId) -> bool {
    match plan.node(key_node) {
        Node::Any => true,
        Node::Str(spec) => spec.is_unconstrained(),
        _ => false,
    }
}

/// Lax mode, a union without int and float variants given an integer (`value`, when it fits
/// 64 bits): the variant msgspec gives it: a Decimal, else a bool (for 0 and 1), else a
/// datetime (a Unix timestamp) or timedelta (seconds).
fn lax_number_variant(plan: &Plan, spec: &UnionSpec, value: Option<i64>) -> Option<NodeId> {
    let text_variant =
        |wanted: fn(&Node) -> bool| spec.str.filter(|&variant| wanted(plan.node(variant)));
    if let Some(decimal) = text_variant(|node| matches!(node, Node::Decimal(_))) {
        return Some(decimal);
    }
    if let (Some(flag), Some(0 | 1)) = (spec.bool, value) {
        if matches!(plan.node(flag), Node::Bool) {
            return Some(flag);
        }
    }
    text_variant(|node| matches!(node, Node::DateTime(_) | Node::TimeDelta))
}

/// Lax mode, a union without a float variant given a float: a Decimal, else a plain int (for
/// an integral value up to 2^53; no enum or literal takes a float), else a datetime or
/// timedelta, as msgspec picks.
fn lax_float_variant(plan: &Plan, spec: &UnionSpec, value: f64) -> Option<NodeId> {
    let text_variant =
        |wanted: fn(&Node) -> bool| spec.str.filter(|&variant| wanted(plan.node(variant)));
    if let Some(decimal) = text_variant(|node| matches!(node, Node::Decimal(_))) {
        return Some(decimal);
    }
    if let Some(int) = spec.int {
        if matches!(plan.node(int), Node::Int(_)) && lax::integral_float(value) {
            return Some(int);
        }
    }
    text_variant(|node| matches!(node, Node::DateTime(_) | Node::TimeDelta))
}

/// The error for a Unix timestamp outside the years a datetime holds.
#[cold]
fn timestamp_out_of_range(shown: &dyn std::fmt::Display) -> Error {
    Error::validation(
        Code::DatetimeRange,
        format_args!("timestamp {shown} is out of range for a datetime (years 1-9999)"),
    )
}

/// The error for a number of seconds a timedelta cannot hold.
#[cold]
fn seconds_out_of_range(shown: &dyn std::fmt::Display) -> Error {
    Error::validation(
        Code::TimeDeltaRange,
        format_args!("{shown} seconds is out of range for a timedelta"),
    )
}

/// A lax number as messages show it: the input's text (cut as input is), or a float read
/// from binary input in Python's repr.
enum Shown<'a> {
    Text(&'a [u8]),
    Float(f64),
}

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shown::Text(text) => Cut(utf8(text)).fmt(f),
            Shown::Float(value) => write!(f, "{value:?}"),
        }
    }
}

/// A number too large for a double, read into a float: an error rather than an infinity that
/// JSON could not write back (the message every format and `from_builtins` give).
pub fn float_out_of_range(text: &str) -> Error {
    Error::validation(
        Code::FiniteNumber,
        format_args!("number {} is out of range for a float", Cut(text)),
    )
}

fn literal<'py>(
    spec: &crate::plan::LiteralSpec,
    value: &LiteralValue,
    py: Python<'py>,
) -> Result<Obj<'py>> {
    spec.find(value)
        .map(|obj| obj.bind(py).clone())
        .ok_or_else(|| literal_mismatch(spec, value))
}

/// The error for a value (`shown` as the Literal's values are) that no value of `spec` is.
#[cold]
fn literal_mismatch(spec: &crate::plan::LiteralSpec, shown: &dyn std::fmt::Display) -> Error {
    // "one of ...": a Literal's values.
    Error::validation(
        Code::LiteralError,
        format_args!("expected {}, got {shown}", spec.describe_values()),
    )
}

/// The error for a token no variant of a union takes.
pub fn union_mismatch(plan: &Plan, spec: &UnionSpec, token: Token) -> Error {
    Error::validation(
        plan.union_code(&spec.variants),
        format_args!(
            "expected {}, got {}",
            describe_union(plan, &spec.variants),
            token.describe()
        ),
    )
}

pub fn describe_union<'a>(plan: &'a Plan, variants: &'a [NodeId]) -> impl std::fmt::Display + 'a {
    UnionNames(plan, variants)
}

/// The variants of a union as its messages name them, `int | str | null`.
struct UnionNames<'a>(&'a Plan, &'a [NodeId]);

impl std::fmt::Display for UnionNames<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, &variant) in self.1.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            f.write_str(self.0.node(variant).describe())?;
        }
        Ok(())
    }
}

/// Checks a decoded datetime or time against its node's `tz` rule.
pub fn check_tz(rule: TzRule, aware: bool, what: &str) -> Result<()> {
    match (rule, aware) {
        (TzRule::Aware, false) => Err(Error::validation(
            Code::TimezoneAware,
            format_args!("expected a timezone-aware {what}, got a naive one"),
        )),
        (TzRule::Naive, true) => Err(Error::validation(
            Code::TimezoneNaive,
            format_args!("expected a naive {what}, got one with a UTC offset"),
        )),
        _ => Ok(()),
    }
}

fn check_str(spec: &StrSpec, bytes: &[u8], ascii: bool, py: Python<'_>) -> Result<()> {
    // ASCII text is as many characters as bytes: no UTF-8 view needed for a length alone.
    let count = if ascii {
        bytes.len()
    } else {
        py::char_count(utf8(bytes), false)
    };
    spec.length
        .check(count, crate::plan::LengthUnit::Characters)?;
    if let Some(pattern) = &spec.pattern {
        let text = utf8(bytes);
        let found = pattern.bind(py).call_method1("search", (text,))?;
        if found.is_none() {
            let source = pattern.bind(py).getattr("pattern")?;
            return Err(Error::validation(
                Code::StringPatternMismatch,
                format_args!("expected a str matching {source}, got {}", Quoted(text)),
            ));
        }
    }
    Ok(())
}

/// `len(value.as_tuple().digits)` and `value.as_tuple().exponent` of the Decimal `value`
/// made from `text`: read from the text when it is a plain literal (no tuple of one int per
/// digit to build), else asked of the value; `None` for a NaN or an infinity.
fn decimal_digits_exponent(value: &Obj<'_>, text: &[u8]) -> Result<Option<(i64, i64)>> {
    if let Some(parts) = text::decimal::digits_exponent(text) {
        return Ok(Some(parts));
    }
    let (_, digits, exponent): (i32, Vec<u8>, Obj<'_>) =
        value.call_method0("as_tuple")?.extract()?;
    Ok(exponent
        .extract::<i64>()
        .ok()
        .map(|exponent| (digits.len() as i64, exponent)))
}

/// Checks the Decimal `value`, made from `text`, against its node's `max_digits` and
/// `decimal_places` (its bounds are [`check_decimal`]'s). The text is read as bytes: it is
/// only checked as UTF-8 for a message.
#[inline(never)]
pub fn check_decimal_digits(spec: &DecimalSpec, value: &Obj<'_>, text: &[u8]) -> Result<()> {
    if spec.max_digits.is_none() && spec.decimal_places.is_none() {
        return Ok(());
    }
    let Some((count, exponent)) = decimal_digits_exponent(value, text)? else {
        return Err(Error::validation(
            Code::FiniteNumber,
            format_args!("expected a finite decimal, got {}", Cut(utf8(text))),
        ));
    };
    let (total, places) = if exponent >= 0 {
        (count + exponent, 0)
    } else {
        (count.max(-exponent), -exponent)
    };
    if let Some(max_places) = spec.decimal_places {
        if places > i64::from(max_places) {
            return Err(Error::validation(
                Code::DecimalMaxPlaces,
                format_args!(
                    "expected at most {max_places} decimal places, got {}",
                    Cut(utf8(text))
                ),
            ));
        }
    }
    if let Some(max_digits) = spec.max_digits {
        if total > i64::from(max_digits) {
            return Err(Error::validation(
                Code::DecimalMaxDigits,
                format_args!(
                    "expected at most {max_digits} digits, got {}",
                    Cut(utf8(text))
                ),
            ));
        }
    }
    Ok(())
}

fn check_decimal(spec: &DecimalSpec, value: &Obj<'_>, text: &[u8]) -> Result<()> {
    check_decimal_digits(spec, value, text)?;
    let bounds = &spec.bounds;
    if !bounds.is_unbounded() {
        use pyo3::basic::CompareOp;
        let checks = [
            (&bounds.ge, CompareOp::Ge, ">=", Code::GreaterThanEqual),
            (&bounds.gt, CompareOp::Gt, ">", Code::GreaterThan),
            (&bounds.le, CompareOp::Le, "<=", Code::LessThanEqual),
            (&bounds.lt, CompareOp::Lt, "<", Code::LessThan),
        ];
        for (bound, op, relation, code) in checks {
            if let Some(bound) = bound {
                // The bound may be any number (a Fraction compares in Python code). A NaN
                // compares as decimal.InvalidOperation (an ArithmeticError): out of bounds.
                let py = value.py();
                let within = match py::user_code(py, || {
                    value
                        .rich_compare(bound.bind(py), op)
                        .and_then(|result| result.is_truthy())
                }) {
                    Ok(within) => within,
                    Err(err) if err.is_instance_of::<pyo3::exceptions::PyArithmeticError>(py) => {
                        false
                    }
                    Err(err) => return Err(err.into()),
                };
                if !within {
                    return Err(Error::validation(
                        code,
                        format_args!(
                            "expected decimal {relation} {}, got {}",
                            bound.bind(value.py()),
                            Cut(utf8(text))
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Text the reader has already validated as UTF-8.
pub fn utf8(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

fn parse_python_int<'py>(py: Python<'py>, text: &str) -> Result<Obj<'py>> {
    // CPython refuses digits beyond `sys.get_int_max_str_digits()` with a ValueError.
    py.get_type::<pyo3::types::PyInt>()
        .call1((text,))
        .map_err(|err| Error::python(err, Code::IntParsingSize))
}

/// Collects a record's field values as they arrive (in any order) and builds the object.
///
/// Up to [`INLINE_FIELDS`] values sit in an array inside the builder, which `new` writes in
/// place (a plain struct, no inline/heap union to assemble and move); a larger record's go to
/// a `Vec`. `present` counts the slots set, so a record whose every field arrived skips the
/// defaults loop with one comparison. The inline array is not dropped as a whole: only its
/// first `len` slots can hold values, and none does once `finish` has moved them into the
/// instance (then `len` is 0 and dropping the builder is a no-op).
pub struct RecordBuilder<'py> {
    inline: ManuallyDrop<[Option<Obj<'py>>; INLINE_FIELDS]>,
    heap: Vec<Option<Obj<'py>>>,
    /// The inline slots in use (the record's field count), 0 when the values are on the heap
    /// or have all been moved out.
    len: usize,
    /// The number of slots set.
    present: usize,
    /// The inline slots set, one bit per field index: the defaults loop visits only the
    /// others.
    seen: u32,
}

/// The number of fields a [`RecordBuilder`] holds without a heap allocation.
const INLINE_FIELDS: usize = 16;

impl<'py> RecordBuilder<'py> {
    #[inline(always)]
    pub fn new(spec: &RecordSpec) -> Self {
        let count = spec.fields.len();
        if count <= INLINE_FIELDS {
            RecordBuilder {
                inline: ManuallyDrop::new([const { None }; INLINE_FIELDS]),
                heap: Vec::new(),
                len: count,
                present: 0,
                seen: 0,
            }
        } else {
            Self::spilled(count)
        }
    }

    /// A builder for a record with more fields than fit inline.
    #[cold]
    #[inline(never)]
    fn spilled(count: usize) -> Self {
        RecordBuilder {
            inline: ManuallyDrop::new([const { None }; INLINE_FIELDS]),
            heap: std::iter::repeat_with(|| None).take(count).collect(),
            len: 0,
            present: 0,
            seen: 0,
        }
    }

    /// The record's slots, by field index.
    #[inline(always)]
    fn values(&mut self) -> &mut [Option<Obj<'py>>] {
        if self.heap.capacity() == 0 {
            &mut self.inline[..self.len]
        } else {
            &mut self.heap
        }
    }

    /// Stores a field's value; for a duplicate key the last one wins, as in `json.loads`.
    #[inline]
    pub fn set(&mut self, field: usize, value: Obj<'py>) {
        let slot = if self.heap.capacity() == 0 {
            self.seen |= 1 << field;
            &mut self.inline[field]
        } else {
            &mut self.heap[field]
        };
        if slot.is_some() {
            Self::replace(slot, value);
        } else {
            *slot = Some(value);
            self.present += 1;
        }
    }

    /// A duplicate key: the value dropped may be an object whose `__del__` is Python code.
    #[cold]
    #[inline(never)]
    fn replace(slot: &mut Option<Obj<'py>>, value: Obj<'py>) {
        let py = value.py();
        let earlier = slot.replace(value);
        py::user_code(py, || drop(earlier));
    }

    /// Fills defaults, reports missing fields, and creates the instance. The common case (a
    /// dataclass whose fields are set by CPython alone, every field present) is one count
    /// comparison and one [`FieldAccess::create`](crate::py::fields::FieldAccess::create);
    /// defaults, the other record kinds and user code are out of line.
    #[inline]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
    pub fn finish(mut self, py: Python<'py>, spec: &RecordSpec) -> Result<Obj<'py>> {
        if self.present != spec.fields.len() {
            if self.heap.capacity() == 0 {
                let unseen = !self.seen & ((1 << self.len) - 1);
                Self::inline_defaults(py, &mut self.inline[..self.len], unseen, spec)?;
            } else {
                Self::defaults(py, &mut self.heap, spec)?;
            }
        }
        if spec.kind != RecordKind::Dataclass || spec.user_setattr {
            return self.finish_other(py, spec);
        }
        let cls = spec.cls.bind(py).cast::<PyType>().map_err(PyErr::from)?;
        let instance = spec.access.create(cls, &spec.fields, self.values())?;
        // `create` took every value: nothing is left for the drop to release, and inline
        // slots hold no allocation, so the builder is forgotten rather than dropped (no call).
        self.len = 0;
        if self.heap.capacity() == 0 {
            std::mem::forget(self);
        }
        if spec.post_init {
            post_init(spec, &instance)?;
        }
        Ok(instance)
    }

    /// The required fields (on the wire, without a default) no value was set for:
    /// `errors="all"` reports each of them.
    pub fn missing<'s>(&'s mut self, spec: &'s RecordSpec) -> impl Iterator<Item = &'s Field> {
        self.values()
            .iter()
            .zip(&spec.fields)
            .filter(|(slot, field)| {
                slot.is_none() && field.on_wire && matches!(field.default, FieldDefault::Required)
            })
            .map(|(_, field)| field)
    }

    /// Fills the fields the input left out with their defaults, or reports one missing: by
    /// each field's [`Fill`], decided when the plan was built, so an empty list or dict is
    /// made without calling its factory and a shared default is one reference.
    #[inline(never)]
    fn defaults(py: Python<'py>, values: &mut [Option<Obj<'py>>], spec: &RecordSpec) -> Result<()> {
        for (index, (slot, &fill)) in values.iter_mut().zip(spec.fills.iter()).enumerate() {
            if slot.is_some() {
                continue;
            }
            *slot = match fill {
                Fill::EmptyList => Some(py::new_empty_list(py)?),
                Fill::EmptyDict => Some(py::new_dict(py)?.into_any()),
                Fill::EmptySet => Some(pyo3::types::PySet::empty(py)?.into_any()),
                Fill::Absent => None,
                _ => Self::default_value(py, &spec.fields[index])?,
            };
        }
        Ok(())
    }

    /// [`Self::defaults`] for the inline slots, visiting only the fields whose bit is set in
    /// `unseen`.
    #[inline(never)]
    fn inline_defaults(
        py: Python<'py>,
        values: &mut [Option<Obj<'py>>],
        mut unseen: u32,
        spec: &RecordSpec,
    ) -> Result<()> {
        while unseen != 0 {
            let index = unseen.trailing_zeros() as usize;
            unseen &= unseen - 1;
            let (Some(slot), Some(&fill)) = (values.get_mut(index), spec.fills.get(index)) else {
                continue;
            };
            *slot = match fill {
                Fill::Shared => match &spec.fields[index].default {
                    FieldDefault::Value(value) => Some(value.bind(py).clone()),
                    _ => Self::default_value(py, &spec.fields[index])?,
                },
                Fill::EmptyList => Some(py::new_empty_list(py)?),
                Fill::EmptyDict => Some(py::new_dict(py)?.into_any()),
                Fill::EmptySet => Some(pyo3::types::PySet::empty(py)?.into_any()),
                Fill::Absent => None,
                Fill::Required | Fill::Call => Self::default_value(py, &spec.fields[index])?,
            };
        }
        Ok(())
    }

    /// The default of a field the input left out, from the field's own `default` (`None`
    /// where it has none to fill in), or the error for a missing one.
    #[inline]
    fn default_value(py: Python<'py>, field: &Field) -> Result<Option<Obj<'py>>> {
        Ok(match &field.default {
            FieldDefault::Value(value) => Some(value.bind(py).clone()),
            FieldDefault::Factory(factory) => Some(py::user_code(py, || factory.bind(py).call0())?),
            FieldDefault::Absent => None,
            // `init=False` without a default: `__post_init__` is expected to set it.
            FieldDefault::Required if !field.on_wire => None,
            FieldDefault::Required => return Err(missing_field(&field.wire_name)),
        })
    }

    /// [`RecordBuilder::finish`] for a TypedDict, a NamedTuple, or a dataclass whose field
    /// stores run Python code.
    #[inline(never)]
    fn finish_other(mut self, py: Python<'py>, spec: &RecordSpec) -> Result<Obj<'py>> {
        let cls = spec.cls.bind(py);
        let values = self.values();
        match spec.kind {
            RecordKind::Dataclass => {
                let cls = cls.cast::<PyType>().map_err(PyErr::from)?;
                // A descriptor's `__set__` is Python code.
                let instance = spec.access.new_instance(cls)?;
                before_fill(spec, &instance)?;
                py::user_code(py, || spec.access.fill(&instance, &spec.fields, values))?;
                if spec.post_init {
                    post_init(spec, &instance)?;
                }
                Ok(instance)
            }
            RecordKind::TypedDict => {
                // Every key present: a copy of the keys' template, values stored by position.
                if let Some(template) = &spec.dict_template {
                    if values.iter().all(Option::is_some) {
                        let mut filling = template.copy(py)?;
                        for (position, value) in values.iter_mut().enumerate() {
                            if let Some(value) = value.take() {
                                filling.put(position, value);
                            }
                        }
                        return Ok(filling.finish());
                    }
                }
                // Made at its size: no resize while the keys go in.
                let dict = py::builders::presized_dict(py, values.len())?;
                for (value, field) in values.iter_mut().zip(&spec.fields) {
                    if let Some(value) = value.take() {
                        py::dict_set(&dict, field.name.bind(py).as_any(), &value)?;
                    }
                }
                Ok(dict.into_any())
            }
            RecordKind::NamedTuple => {
                if spec.tuple_new && values.iter().all(Option::is_some) {
                    // Its `__new__` is namedtuple's own, `tuple.__new__(cls, items)`: called
                    // in C, with no Python code run.
                    let cls = cls.cast::<PyType>().map_err(PyErr::from)?;
                    let items = values.iter_mut().map(|slot| match slot.take() {
                        Some(value) => value,
                        None => py.None().into_bound(py),
                    });
                    return Ok(py::builders::tuple_subclass_instance(cls, items)?);
                }
                let items: Vec<Obj<'py>> = values.iter_mut().filter_map(Option::take).collect();
                let args = crate::py::new_tuple(py, items.into_iter())?;
                // A named tuple's `__new__` is Python code.
                Ok(py::user_code(py, || cls.call1(args))?)
            }
        }
    }
}

impl Drop for RecordBuilder<'_> {
    /// Releases the values a record that failed (or was left) halfway still holds; the heap
    /// `Vec` drops its own.
    #[inline]
    fn drop(&mut self) {
        for slot in &mut self.inline[..self.len] {
            drop(slot.take());
        }
    }
}

/// Runs what follows a new instance's fields (Python code): the record's `after_fill` hook
/// when it has one, else the dataclass's `__post_init__`.
#[inline(never)]
pub fn post_init(spec: &RecordSpec, instance: &Obj<'_>) -> Result<()> {
    let py = instance.py();
    py::user_code(py, || match &spec.after_fill {
        Some(after) => after.bind(py).call1((instance,)),
        None => instance.call_method0(py::stdlib(py).post_init.bind(py)),
    })?;
    Ok(())
}

/// Runs the record's `before_fill` hook (Python code), if it has one, on a new instance whose
/// fields are not set yet.
#[inline]
pub fn before_fill(spec: &RecordSpec, instance: &Obj<'_>) -> Result<()> {
    if let Some(before) = &spec.before_fill {
        let py = instance.py();
        py::user_code(py, || before.bind(py).call1((instance,)))?;
    }
    Ok(())
}

/// The error for a required field the input lacks (at the record).
#[cold]
pub fn missing_field(wire_name: &str) -> Error {
    Error::validation(
        Code::Missing,
        format_args!("object missing required field `{wire_name}`"),
    )
}

/// Unknown keys: skipped, or refused when the record forbids them.
pub fn unknown_field(spec: &RecordSpec, key: &str) -> Result<()> {
    if spec.forbid_unknown_fields {
        Err(Error::validation(
            Code::ExtraForbidden,
            format_args!("object contains unknown field `{}`", Cut(key)),
        ))
    } else {
        Ok(())
    }
}

/// A set (with `frozen`, a frozenset) of `items`, added one by one so that an item whose
/// hashing fails (an unhashable value, a signalling-NaN Decimal) is named by its position: the
/// error is at `[index]`, as any other item's. Hashing may run Python code (run it under
/// [`py::user_code`]).
pub fn new_set<'py>(
    py: Python<'py>,
    frozen: bool,
    items: impl IntoIterator<Item = Obj<'py>>,
) -> Result<Obj<'py>> {
    let set = py::new_empty_set(py, frozen)?;
    for (index, item) in items.into_iter().enumerate() {
        py::set_add(&set, &item).map_err(|err| Error::from(err).at_index(index))?;
    }
    Ok(set)
}

//! Constraints from `Meta(...)` and annotated-types markers, checked by every decoder after a
//! value of the right type has been read. Encoders trust the objects they are given.

use std::cmp::Ordering;

use crate::errors::{Error, Result};

/// Bounds on a length: characters of a str, bytes of a bytes, items of a collection.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LengthBounds {
    pub min: Option<usize>,
    pub max: Option<usize>,
}

impl LengthBounds {
    #[inline(always)]
    pub fn is_unbounded(&self) -> bool {
        self.min.is_none() & self.max.is_none()
    }

    /// Checks a length; an unbounded length (the common case) is two comparisons, inline.
    #[inline(always)]
    pub fn check(&self, length: usize, unit: &str) -> Result<()> {
        if self.is_unbounded() {
            return Ok(());
        }
        self.check_bounded(length, unit)
    }

    #[inline(never)]
    fn check_bounded(&self, length: usize, unit: &str) -> Result<()> {
        if let Some(min) = self.min {
            if length < min {
                return Err(Error::validation(format_args!(
                    "expected length >= {min} {unit}, got {length}"
                )));
            }
        }
        if let Some(max) = self.max {
            if length > max {
                return Err(Error::validation(format_args!(
                    "expected length <= {max} {unit}, got {length}"
                )));
            }
        }
        Ok(())
    }
}

/// Integer bounds. The compiler accepts bounds that fit in i128; a value beyond i128 lies
/// outside every such bound on its side, so its sign alone decides.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntBounds {
    pub ge: Option<i128>,
    pub gt: Option<i128>,
    pub le: Option<i128>,
    pub lt: Option<i128>,
    pub multiple_of: Option<i128>,
}

impl IntBounds {
    /// Whether no bound is set.
    #[inline(always)]
    pub fn is_unbounded(&self) -> bool {
        self.ge.is_none()
            & self.gt.is_none()
            & self.le.is_none()
            & self.lt.is_none()
            & self.multiple_of.is_none()
    }

    /// Checks an int; an unbounded int (the common case) is checked inline, without a call.
    #[inline(always)]
    pub fn check(&self, value: i64) -> Result<()> {
        if self.is_unbounded() {
            return Ok(());
        }
        self.check_wide(i128::from(value))
    }

    #[inline(never)]
    pub fn check_wide(&self, value: i128) -> Result<()> {
        let fail = |relation: &str, bound: i128| {
            Err(Error::validation(format_args!(
                "expected int {relation} {bound}, got {value}"
            )))
        };
        if let Some(ge) = self.ge {
            if value < ge {
                return fail(">=", ge);
            }
        }
        if let Some(gt) = self.gt {
            if value <= gt {
                return fail(">", gt);
            }
        }
        if let Some(le) = self.le {
            if value > le {
                return fail("<=", le);
            }
        }
        if let Some(lt) = self.lt {
            if value >= lt {
                return fail("<", lt);
            }
        }
        if let Some(multiple) = self.multiple_of {
            if multiple != 0 && value % multiple != 0 {
                return Err(Error::validation(format_args!(
                    "expected a multiple of {multiple}, got {value}"
                )));
            }
        }
        Ok(())
    }

    /// Checks an integer too large for i64, given as decimal text. Returns false when the value
    /// is beyond i128 and `multiple_of` is set, which the caller checks with Python arithmetic.
    pub fn check_big(&self, text: &str) -> Result<bool> {
        if let Ok(value) = text.parse::<i128>() {
            self.check_wide(value)?;
            return Ok(true);
        }
        let negative = text.starts_with('-');
        let too_small = negative && (self.ge.is_some() || self.gt.is_some());
        let too_large = !negative && (self.le.is_some() || self.lt.is_some());
        if too_small || too_large {
            let side = if too_small { "small" } else { "large" };
            return Err(Error::validation(format_args!(
                "integer {} is too {side} for the declared bounds",
                crate::errors::Cut(text)
            )));
        }
        Ok(self.multiple_of.is_none())
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FloatBounds {
    pub ge: Option<f64>,
    pub gt: Option<f64>,
    pub le: Option<f64>,
    pub lt: Option<f64>,
    pub multiple_of: Option<f64>,
}

impl FloatBounds {
    /// Whether no bound is set.
    #[inline(always)]
    pub fn is_unbounded(&self) -> bool {
        self.ge.is_none()
            & self.gt.is_none()
            & self.le.is_none()
            & self.lt.is_none()
            & self.multiple_of.is_none()
    }

    /// Checks a float; an unbounded float (the common case) is checked inline, without a call.
    #[inline(always)]
    pub fn check(&self, value: f64) -> Result<()> {
        if self.is_unbounded() {
            return Ok(());
        }
        self.check_bounded(value)
    }

    #[inline(never)]
    fn check_bounded(&self, value: f64) -> Result<()> {
        let fail = |relation: &str, bound: f64| {
            Err(Error::validation(format_args!(
                "expected float {relation} {bound}, got {value}"
            )))
        };
        // NaN compares as unordered and so fails every bound.
        let order = |bound: f64| value.partial_cmp(&bound);
        if let Some(ge) = self.ge {
            if !matches!(order(ge), Some(Ordering::Greater | Ordering::Equal)) {
                return fail(">=", ge);
            }
        }
        if let Some(gt) = self.gt {
            if order(gt) != Some(Ordering::Greater) {
                return fail(">", gt);
            }
        }
        if let Some(le) = self.le {
            if !matches!(order(le), Some(Ordering::Less | Ordering::Equal)) {
                return fail("<=", le);
            }
        }
        if let Some(lt) = self.lt {
            if order(lt) != Some(Ordering::Less) {
                return fail("<", lt);
            }
        }
        if let Some(multiple) = self.multiple_of {
            let quotient = value / multiple;
            if quotient.round() != quotient {
                return Err(Error::validation(format_args!(
                    "expected a multiple of {multiple}, got {value}"
                )));
            }
        }
        Ok(())
    }
}

/// Decimal bounds are Python `Decimal` objects compared with Python's own arithmetic.
#[derive(Default)]
pub struct DecimalBounds {
    pub ge: Option<pyo3::Py<pyo3::PyAny>>,
    pub gt: Option<pyo3::Py<pyo3::PyAny>>,
    pub le: Option<pyo3::Py<pyo3::PyAny>>,
    pub lt: Option<pyo3::Py<pyo3::PyAny>>,
}

impl DecimalBounds {
    pub fn is_unbounded(&self) -> bool {
        self.ge.is_none() && self.gt.is_none() && self.le.is_none() && self.lt.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_bounds() {
        let bounds = IntBounds {
            ge: Some(0),
            lt: Some(10),
            multiple_of: Some(3),
            ..Default::default()
        };
        assert!(bounds.check(0).is_ok());
        assert!(bounds.check(9).is_ok());
        assert!(bounds.check(-1).is_err());
        assert!(bounds.check(10).is_err());
        assert!(bounds.check(4).is_err());
        assert!(bounds.check_big("1000000000000000000000").is_err());
        assert!(bounds
            .check_big("-1000000000000000000000000000000000000000000")
            .is_err());
        let wide = IntBounds {
            ge: Some(1 << 70),
            ..Default::default()
        };
        assert!(wide.check_big("1180591620717411303424").is_ok());
        assert!(wide.check_big("1180591620717411303423").is_err());
        assert!(wide.check(5).is_err());
    }

    #[test]
    fn float_bounds_reject_nan() {
        let bounds = FloatBounds {
            ge: Some(0.0),
            ..Default::default()
        };
        assert!(bounds.check(f64::NAN).is_err());
        assert!(bounds.check(0.5).is_ok());
    }

    #[test]
    fn length_bounds() {
        let bounds = LengthBounds {
            min: Some(1),
            max: Some(2),
        };
        assert!(bounds.check(0, "items").is_err());
        assert!(bounds.check(2, "items").is_ok());
        assert!(bounds.check(3, "items").is_err());
    }
}

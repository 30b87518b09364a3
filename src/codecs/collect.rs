//! `errors="all"`: what the collecting decoder ([`super::decoder::CollectAll`]'s walk) keeps
//! while it reads on past the values that failed, and the report it hands to the API (the
//! report's types are the error layer's: `errors::collected`).
//!
//! Three things keep a report's memory a small multiple of its errors, however deep they are:
//!
//! - **Paths share their prefixes.** An error is recorded with the steps it gathered on its
//!   own (a field's name, a dict key); each container that reads on past errors inside it then
//!   adds its step once, as a node of a tree shared by all those errors ([`CollectAll::wrap`]),
//!   instead of pushing a copy onto every error's path. Containers finish innermost first, so
//!   the errors recorded since a container began form runs ([`Group`]) that each end in one
//!   node: adding a container's step links those runs' nodes to a new one, in time linear in
//!   the runs (5,000 errors 500 records deep: 5,000 nodes of their own and 500 shared).
//! - **Each input is made once.** A failed value is read again as `Any` for its error's
//!   `input`; a container that fails after values inside it did reuses the inputs already made
//!   of them ([`CollectAll::input_at`]) instead of reading them a second time, so 400 nested
//!   records that each fail around one long string hold that string once.
//! - **A cap.** At [`MAX_COLLECTED`] errors the walk stops (each container on the way out
//!   still adds its step) and the report says so.
//!
//! Every allocation here is fallible: memory running out while errors are collected is the
//! `MemoryError` the docs promise, never an abort.

use pyo3::prelude::*;

use crate::errors::collected::{Recorded, Report, Step, MAX_COLLECTED, NO_NODE};
use crate::errors::{out_of_memory, reserve, Error, PathSegment, Result};

/// What a failed allocation of the collection says (a MemoryError).
const COLLECTED: &str = "the errors collected";

/// A run of consecutive recorded errors (from `first` to the next run's first) whose steps
/// outside their own all end in node `top` ([`NO_NODE`]: one error, no container step yet).
struct Group {
    first: usize,
    top: u32,
}

/// The input made of a failed value that started at offset `start` and ended at `end`.
struct Input {
    start: usize,
    end: usize,
    value: Py<PyAny>,
}

/// The state of a collecting decode.
#[derive(Default)]
pub struct CollectAll {
    recorded: Vec<Recorded>,
    steps: Vec<Step>,
    groups: Vec<Group>,
    /// The marker a container that recorded errors returns ([`Error::collected`]), given back
    /// by the container that receives it: one box for the whole walk.
    marker: Option<Error>,
    /// The inputs made so far, by start offset, none inside another.
    inputs: Vec<Input>,
    /// Whether a failed value is being read again as `Any`: errors then end that reading
    /// instead of being recorded, and inputs already made are reused.
    replaying: bool,
    /// Whether [`MAX_COLLECTED`] errors were recorded: the walk is ending.
    stopped: bool,
}

impl CollectAll {
    /// How many errors are recorded.
    #[inline]
    pub fn count(&self) -> usize {
        self.recorded.len()
    }

    /// Records `error` (with the steps it has). `Err`: a MemoryError, or the marker that ends
    /// the walk when this error reached [`MAX_COLLECTED`] (the error is kept).
    pub fn record(&mut self, error: Error) -> Result<()> {
        if self.stopped {
            return Err(self.marker());
        }
        reserve(&mut self.recorded, 1, COLLECTED)?;
        reserve(&mut self.groups, 1, COLLECTED)?;
        self.groups.push(Group {
            first: self.recorded.len(),
            top: NO_NODE,
        });
        self.recorded.push(Recorded {
            error,
            outer: NO_NODE,
        });
        if self.recorded.len() >= MAX_COLLECTED {
            self.stopped = true;
            return Err(self.marker());
        }
        Ok(())
    }

    /// Adds a container's step to every error recorded since there were `mark`: one new node,
    /// to which the runs since `mark` are linked.
    pub fn wrap(&mut self, mark: usize, segment: PathSegment) -> Result<()> {
        if self.recorded.len() <= mark {
            return Ok(());
        }
        let node = self.steps.len();
        if node >= NO_NODE as usize {
            return Err(out_of_memory(COLLECTED));
        }
        reserve(&mut self.steps, 1, COLLECTED)?;
        self.steps.push(Step {
            segment,
            parent: NO_NODE,
        });
        let node = node as u32;
        // Containers finish innermost first, so the runs since `mark` are the last ones and
        // the first of them starts at `mark`.
        while let Some(group) = self.groups.last() {
            if group.first < mark {
                break;
            }
            match group.top {
                NO_NODE => self.recorded[group.first].outer = node,
                top => self.steps[top as usize].parent = node,
            }
            self.groups.pop();
        }
        // Room for the push: at least one run was taken off above.
        reserve(&mut self.groups, 1, COLLECTED)?;
        self.groups.push(Group {
            first: mark,
            top: node,
        });
        Ok(())
    }

    /// The marker a container that recorded errors returns instead of its value.
    pub fn marker(&mut self) -> Error {
        self.marker.take().unwrap_or_else(Error::collected)
    }

    /// Takes back a marker a container returned; `Err(marker)` when the walk is ending (its
    /// container passes it on, adding its step on the way), else `Ok`.
    pub fn give_back(&mut self, marker: Error) -> Result<()> {
        if self.stopped {
            return Err(marker);
        }
        self.marker = Some(marker);
        Ok(())
    }

    /// Whether the walk stopped at [`MAX_COLLECTED`] errors.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Whether a failed value is being read again as `Any`.
    #[inline]
    pub fn replaying(&self) -> bool {
        self.replaying
    }

    pub fn set_replaying(&mut self, replaying: bool) {
        self.replaying = replaying;
    }

    /// The input made before of a failed value starting at offset `at`, with where it ends.
    pub fn input_at<'py>(&self, py: Python<'py>, at: usize) -> Option<(Bound<'py, PyAny>, usize)> {
        let index = self
            .inputs
            .binary_search_by_key(&at, |input| input.start)
            .ok()?;
        let input = &self.inputs[index];
        Some((input.value.bind(py).clone(), input.end))
    }

    /// Keeps the input made of a failed value (from `start` to `end`) for a failing container
    /// around it to reuse; it replaces those of the values inside it.
    pub fn keep_input(&mut self, start: usize, end: usize, value: &Bound<'_, PyAny>) -> Result<()> {
        let from = self.inputs.partition_point(|input| input.start < start);
        let to = self
            .inputs
            .partition_point(|input| input.start < end.max(start + 1));
        self.inputs.drain(from..to);
        reserve(&mut self.inputs, 1, COLLECTED)?;
        self.inputs.insert(
            from,
            Input {
                start,
                end,
                value: value.clone().unbind(),
            },
        );
        Ok(())
    }

    /// The report: every error recorded, with the shared steps of their paths.
    pub fn into_report(self) -> Report {
        Report {
            recorded: self.recorded,
            steps: self.steps,
            stopped: self.stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::collected::chain;
    use crate::errors::Code;

    fn path_of(report: &Report, index: usize) -> String {
        let recorded = &report.recorded[index];
        // The error's own steps are the innermost: pushed first.
        let mut whole = Error::validation(Code::ValueError, "x");
        for segment in recorded.error.path_segments() {
            whole = whole.at(segment.clone());
        }
        for segment in chain(&report.steps, recorded.outer) {
            whole = whole.at(segment.clone());
        }
        whole.path_string()
    }

    #[test]
    fn containers_add_their_step_once_to_every_error_inside() {
        let mut all = CollectAll::default();
        // $.a[0].x and $.a[1].y, then $.b fails on its own.
        let outer = all.count();
        let items = all.count();
        let first = all.count();
        all.record(Error::validation(Code::ValueError, "x").at_field("x"))
            .unwrap();
        all.wrap(first, PathSegment::Index(0)).unwrap();
        let second = all.count();
        all.record(Error::validation(Code::ValueError, "y").at_field("y"))
            .unwrap();
        all.wrap(second, PathSegment::Index(1)).unwrap();
        all.wrap(items, PathSegment::Field("a".into())).unwrap();
        let third = all.count();
        all.record(Error::validation(Code::ValueError, "b"))
            .unwrap();
        all.wrap(third, PathSegment::Field("b".into())).unwrap();
        all.wrap(outer, PathSegment::Index(7)).unwrap();
        let report = all.into_report();
        assert_eq!(path_of(&report, 0), "$[7].a[0].x");
        assert_eq!(path_of(&report, 1), "$[7].a[1].y");
        assert_eq!(path_of(&report, 2), "$[7].b");
        // One node per step: [0], [1], .a, .b, [7].
        assert_eq!(report.steps.len(), 5);
    }

    #[test]
    fn a_container_that_fails_itself_shares_its_step_with_the_errors_inside() {
        let mut all = CollectAll::default();
        let mark = all.count();
        all.record(Error::validation(Code::ValueError, "inner").at_index(0))
            .unwrap();
        all.record(Error::validation(Code::ValueError, "the container itself"))
            .unwrap();
        all.wrap(mark, PathSegment::Field("pair".into())).unwrap();
        let report = all.into_report();
        assert_eq!(path_of(&report, 0), "$.pair[0]");
        assert_eq!(path_of(&report, 1), "$.pair");
    }

    #[test]
    fn the_walk_stops_at_the_cap() {
        let mut all = CollectAll::default();
        for _ in 0..MAX_COLLECTED - 1 {
            all.record(Error::validation(Code::ValueError, "x"))
                .unwrap();
        }
        let stop = all
            .record(Error::validation(Code::ValueError, "x"))
            .unwrap_err();
        assert!(stop.is_collected() && all.stopped());
        assert_eq!(all.count(), MAX_COLLECTED);
        assert!(all.give_back(stop).is_err());
    }

    #[test]
    fn an_input_replaces_those_inside_it() {
        Python::initialize();
        Python::attach(|py| {
            let mut all = CollectAll::default();
            let none = py.None().into_bound(py);
            all.keep_input(10, 12, &none).unwrap();
            all.keep_input(14, 15, &none).unwrap();
            all.keep_input(3, 5, &none).unwrap();
            assert!(all.input_at(py, 10).is_some());
            all.keep_input(8, 20, &none).unwrap();
            assert!(all.input_at(py, 10).is_none() && all.input_at(py, 14).is_none());
            assert_eq!(all.input_at(py, 8).map(|(_, end)| end), Some(20));
            assert_eq!(all.input_at(py, 3).map(|(_, end)| end), Some(5));
        });
    }
}

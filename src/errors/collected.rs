//! What an `errors="all"` decode hands the API: every error it recorded, with the steps of the
//! containers around them shared as a tree (see `codecs::collect`, which gathers them), made
//! into one `ValidationError` by [`super::collected_to_pyerr`].

use super::{Error, PathSegment};

/// The most validation errors one `errors="all"` decode collects; the walk stops at the one
/// that reaches it (see docs/errors.md).
pub const MAX_COLLECTED: usize = 10_000;

/// No node: an error not yet inside any container's step, the root's parent.
pub const NO_NODE: u32 = u32::MAX;

/// One container's step, shared by every error recorded inside it.
pub struct Step {
    pub segment: PathSegment,
    /// The node of the step outside this one ([`NO_NODE`] at the root).
    pub parent: u32,
}

/// A recorded error: its own steps (innermost first, in the error) and the node of the
/// innermost container step outside them ([`NO_NODE`]: none).
pub struct Recorded {
    pub error: Error,
    pub outer: u32,
}

/// What a collecting decode found: every error with its whole path, and whether the walk
/// stopped at the cap.
pub struct Report {
    pub recorded: Vec<Recorded>,
    pub steps: Vec<Step>,
    pub stopped: bool,
}

/// The shared steps from node `node` outwards, innermost first.
pub fn chain(steps: &[Step], mut node: u32) -> impl Iterator<Item = &PathSegment> + Clone {
    std::iter::from_fn(move || {
        let step = steps.get(node as usize)?;
        node = step.parent;
        Some(&step.segment)
    })
}

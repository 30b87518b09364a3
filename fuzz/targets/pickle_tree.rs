//! The inert pickle machine's arena, checked and expanded into a tree (shared by the pickle
//! targets through `#[path]`).

use polycodec_formats::pickle::vm::{Arena, Id, Value};

/// A value of the arena with its shared references expanded; `None` where the expansion
/// would pass `budget` nodes (a DAG of memo gets can be exponentially larger as a tree) or
/// meets a cycle.
#[derive(Debug)]
pub enum Tree {
    None,
    Bool(bool),
    Int(i64),
    BigInt(Vec<u8>),
    Float(f64),
    Str(Vec<u8>),
    Bytes(Vec<u8>),
    List(Vec<Tree>),
    Tuple(Vec<Tree>),
    Dict(Vec<(Tree, Tree)>),
    Set(Vec<Tree>),
    FrozenSet(Vec<Tree>),
    /// A global or a call: what the plan, not the machine, gives a meaning to.
    Opaque,
}

/// Every id the arena holds points inside it, and `shared` covers every value.
pub fn check(arena: &Arena<'_>, root: Id) {
    let n = arena.values.len();
    assert!((root as usize) < n);
    assert_eq!(arena.shared.len(), n);
    for value in &arena.values {
        let ids: Vec<Id> = match value {
            Value::List(items) | Value::Set(items) | Value::FrozenSet(items) => items.clone(),
            Value::Tuple(items) => items.to_vec(),
            Value::Dict(pairs) => pairs.iter().flat_map(|&(k, v)| [k, v]).collect(),
            Value::Call {
                func,
                args,
                kwargs,
                state,
                ..
            } => [Some(*func), Some(*args), *kwargs, *state]
                .into_iter()
                .flatten()
                .collect(),
            _ => Vec::new(),
        };
        assert!(
            ids.iter().all(|&id| (id as usize) < n),
            "dangling id in {value:?}"
        );
    }
}

pub fn expand(arena: &Arena<'_>, id: Id, budget: &mut usize, open: &mut Vec<Id>) -> Option<Tree> {
    *budget = budget.checked_sub(1)?;
    if open.contains(&id) {
        return None;
    }
    open.push(id);
    let mut all = |ids: &[Id], budget: &mut usize| -> Option<Vec<Tree>> {
        ids.iter()
            .map(|&i| expand(arena, i, budget, open))
            .collect()
    };
    let tree = match arena.get(id) {
        Value::None => Tree::None,
        Value::Bool(v) => Tree::Bool(*v),
        Value::Int(v) => Tree::Int(*v),
        Value::BigInt(bytes) => Tree::BigInt(bytes.to_vec()),
        Value::Float(v) => Tree::Float(*v),
        Value::Str(bytes) => Tree::Str(bytes.to_vec()),
        Value::Bytes(bytes) | Value::ByteArray(bytes) => Tree::Bytes(bytes.to_vec()),
        Value::List(items) => Tree::List(all(items, budget)?),
        Value::Tuple(items) => Tree::Tuple(all(items, budget)?),
        Value::Set(items) => Tree::Set(all(items, budget)?),
        Value::FrozenSet(items) => Tree::FrozenSet(all(items, budget)?),
        Value::Dict(pairs) => {
            let keys: Vec<Id> = pairs.iter().map(|p| p.0).collect();
            let values: Vec<Id> = pairs.iter().map(|p| p.1).collect();
            let keys = all(&keys, budget)?;
            let values = all(&values, budget)?;
            Tree::Dict(keys.into_iter().zip(values).collect())
        }
        Value::Global { .. } | Value::Call { .. } => Tree::Opaque,
    };
    open.pop();
    Some(tree)
}

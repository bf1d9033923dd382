//! How data flows through a subgraph: its function leaves whose code can be trusted, the
//! entries (no dependency among them) and the exits (no dependent among them). The engine writes one integration
//! test per such flow (`engine::integration`); `derive-script` derives a scripted answer for
//! it from the reference tests of its exits. Pure.

use std::collections::{BTreeMap, BTreeSet};

use super::{NodeKind, NodePos, ValidRpg};

/// A subgraph's trusted functions, and how data flows through them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    pub subgraph: String,
    /// Its trusted function leaves, in generation order.
    pub functions: Vec<NodePos>,
    /// Its function leaves that were not trusted (failed, skipped), left out of the flow.
    pub left_out: Vec<NodePos>,
    /// Those with no dependency inside the subgraph, and those with no dependent inside it.
    pub entries: Vec<NodePos>,
    pub exits: Vec<NodePos>,
}

/// The subgraphs that get an integration test: two or more `trusted` function leaves with at
/// least one dependency between them. The flow runs through those only; the others are
/// `left_out`, so that one failed function does not cost its subgraph the test of the rest
/// (on real runs, a ten-function subgraph rarely has every function pass).
pub(crate) fn flows(rpg: &ValidRpg, trusted: impl Fn(NodePos) -> bool) -> Vec<Flow> {
    let mut by_subgraph: BTreeMap<&str, Vec<NodePos>> = BTreeMap::new();
    for &position in rpg.order() {
        let node = rpg.node(position);
        if node.is_leaf() && node.kind == NodeKind::Function && node.file_path.is_some() {
            by_subgraph
                .entry(node.subgraph())
                .or_default()
                .push(position);
        }
    }
    by_subgraph
        .into_iter()
        .filter_map(|(subgraph, all)| {
            let (functions, left_out): (Vec<NodePos>, Vec<NodePos>) =
                all.into_iter().partition(|&p| trusted(p));
            if functions.len() < 2 {
                return None;
            }
            let inside: BTreeSet<NodePos> = functions.iter().copied().collect();
            let deps = |p: NodePos| -> Vec<NodePos> {
                rpg.graph()
                    .dependencies_of(p)
                    .into_iter()
                    .filter(|d| inside.contains(d))
                    .collect()
            };
            let used: BTreeSet<NodePos> = functions.iter().flat_map(|&p| deps(p)).collect();
            if used.is_empty() {
                return None;
            }
            Some(Flow {
                subgraph: subgraph.to_string(),
                entries: functions
                    .iter()
                    .copied()
                    .filter(|&p| deps(p).is_empty())
                    .collect(),
                exits: functions
                    .iter()
                    .copied()
                    .filter(|p| !used.contains(p))
                    .collect(),
                functions,
                left_out,
            })
        })
        .collect()
}

/// A subgraph's name as a Python identifier (lower case; anything else becomes `_`).
pub fn identifier(name: &str) -> String {
    let mut ident: String = name
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c.to_ascii_lowercase(),
            false => '_',
        })
        .collect();
    if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, 's');
    }
    ident
}

//! The plan preview: the generation order grouped into subgraphs, as text or JSON.
//!
//! Subgraphs appear in the order their first node is generated; inside a subgraph nodes keep
//! their global position, indented under their `parent` so the tree shows module structure.
//!
//! Building the plan is linear in the size of the RPG (subgraphs are found through a map and
//! each node's depth comes from its parent's, computed earlier in the order), and the text
//! indents at most [`MAX_INDENT`] levels, so a 100,000-deep parent chain prints 100,000 short
//! lines rather than gigabytes of spaces.

use std::collections::HashMap;

use serde::Serialize;

use crate::rpg::{NodeId, ValidRpg};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlanEntry {
    /// 1-based position in the global generation order.
    pub position: usize,
    pub id: NodeId,
    pub name: String,
    pub kind: String,
    pub node_type: crate::rpg::NodeType,
    pub file_path: Option<String>,
    pub subgraph: String,
    /// Direct dependencies the RPG states (the tree shows parent/containment).
    pub depends_on: Vec<NodeId>,
    /// How many `parent` links lie above this node inside its subgraph.
    pub depth: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SubgraphPlan {
    pub id: String,
    pub nodes: Vec<PlanEntry>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Plan {
    pub total_nodes: usize,
    pub leaf_nodes: usize,
    pub subgraphs: Vec<SubgraphPlan>,
    pub warnings: Vec<String>,
}

/// Deeper nodes are drawn at this indentation, with their depth written out.
pub(crate) const MAX_INDENT: usize = 16;

pub fn build(rpg: &ValidRpg) -> Plan {
    let depths = depths_in_subgraph(rpg);
    let mut subgraphs: Vec<SubgraphPlan> = Vec::new();
    let mut subgraph_at: HashMap<String, usize> = HashMap::new();
    for (index, &position) in rpg.order().iter().enumerate() {
        let node = rpg.node(position);
        let entry = PlanEntry {
            position: index + 1,
            id: node.id.clone(),
            name: node.name.clone(),
            kind: node.kind.to_string(),
            node_type: node.node_type,
            file_path: node.file_path.clone(),
            subgraph: node.subgraph().to_string(),
            depends_on: rpg
                .graph()
                .declared_dependencies_of(position)
                .into_iter()
                .map(|p| rpg.node(p).id.clone())
                .collect(),
            depth: depths[position.index()],
        };
        match subgraph_at.get(&entry.subgraph) {
            Some(&at) => subgraphs[at].nodes.push(entry),
            None => {
                subgraph_at.insert(entry.subgraph.clone(), subgraphs.len());
                subgraphs.push(SubgraphPlan {
                    id: entry.subgraph.clone(),
                    nodes: vec![entry],
                });
            }
        }
    }
    Plan {
        total_nodes: rpg.rpg().nodes.len(),
        leaf_nodes: rpg.rpg().nodes.iter().filter(|n| n.is_leaf()).count(),
        subgraphs,
        warnings: rpg.warnings().iter().map(|w| w.0.clone()).collect(),
    }
}

/// For each node (by position), how many `parent` links lie above it inside its subgraph.
/// A parent comes before its children in the order, so one pass in order sees every parent's
/// depth before its children need it: linear, where walking up from each node was quadratic
/// on a deep chain.
fn depths_in_subgraph(rpg: &ValidRpg) -> Vec<usize> {
    let mut depths = vec![0; rpg.rpg().nodes.len()];
    for &position in rpg.order() {
        let node = rpg.node(position);
        let parent = node.parent.as_deref().and_then(|p| rpg.position_of(p));
        if let Some(parent) = parent
            && rpg.node(parent).subgraph() == node.subgraph()
        {
            depths[position.index()] = depths[parent.index()] + 1;
        }
    }
    depths
}

/// Renders the plan as a tree per subgraph, for a terminal.
pub fn render_text(plan: &Plan) -> String {
    let mut out = format!(
        "Generation order: {} nodes ({} leaves) in {} subgraph(s)\n",
        plan.total_nodes,
        plan.leaf_nodes,
        plan.subgraphs.len()
    );
    let width = plan.total_nodes.to_string().len();
    for subgraph in &plan.subgraphs {
        out.push_str(&format!(
            "\n{} ({} nodes)\n",
            subgraph.id,
            subgraph.nodes.len()
        ));
        let count = subgraph.nodes.len();
        for (i, entry) in subgraph.nodes.iter().enumerate() {
            let branch = if i + 1 == count { "└─" } else { "├─" };
            let indent = if entry.depth > MAX_INDENT {
                format!("{}({} deep) ", "  ".repeat(MAX_INDENT), entry.depth)
            } else {
                "  ".repeat(entry.depth)
            };
            let path = entry.file_path.as_deref().unwrap_or("-");
            let deps = if entry.depends_on.is_empty() {
                String::new()
            } else {
                format!("  ← {}", entry.depends_on.join(", "))
            };
            out.push_str(&format!(
                "{branch} {:>width$}. {indent}{} {} [{}] {path}{deps}\n",
                entry.position, entry.id, entry.name, entry.kind
            ));
        }
    }
    for warning in &plan.warnings {
        out.push_str(&format!("\nwarning: {warning}"));
    }
    if !plan.warnings.is_empty() {
        out.push('\n');
    }
    out
}

//! The plan preview: the generation order grouped into subgraphs, as text or JSON.
//!
//! Subgraphs appear in the order their first node is generated; inside a subgraph nodes keep
//! their global position, indented under their `parent` so the tree shows module structure.

use serde::Serialize;

use crate::rpg::ValidRpg;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlanEntry {
    /// 1-based position in the global generation order.
    pub position: usize,
    pub id: String,
    pub name: String,
    pub kind: String,
    pub node_type: crate::rpg::NodeType,
    pub file_path: Option<String>,
    pub subgraph: String,
    /// Direct dependencies the RPG states (the tree shows parent/containment).
    pub depends_on: Vec<String>,
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

pub fn build(rpg: &ValidRpg) -> Plan {
    let mut subgraphs: Vec<SubgraphPlan> = Vec::new();
    for (index, &position) in rpg.order.iter().enumerate() {
        let node = rpg.node(position);
        let entry = PlanEntry {
            position: index + 1,
            id: node.id.clone(),
            name: node.name.clone(),
            kind: node.kind.clone(),
            node_type: node.node_type,
            file_path: node.file_path.clone(),
            subgraph: node.subgraph().to_string(),
            depends_on: rpg
                .graph
                .declared_dependencies_of(position)
                .into_iter()
                .map(|p| rpg.node(p).id.clone())
                .collect(),
            depth: depth_in_subgraph(rpg, position),
        };
        match subgraphs.iter_mut().find(|s| s.id == entry.subgraph) {
            Some(s) => s.nodes.push(entry),
            None => subgraphs.push(SubgraphPlan {
                id: entry.subgraph.clone(),
                nodes: vec![entry],
            }),
        }
    }
    Plan {
        total_nodes: rpg.rpg.nodes.len(),
        leaf_nodes: rpg.rpg.nodes.iter().filter(|n| n.is_leaf()).count(),
        subgraphs,
        warnings: rpg.warnings.iter().map(|w| w.0.clone()).collect(),
    }
}

fn depth_in_subgraph(rpg: &ValidRpg, position: usize) -> usize {
    let node = rpg.node(position);
    let mut depth = 0;
    let mut at = node;
    while let Some(parent) = at
        .parent
        .as_deref()
        .and_then(|p| rpg.position_of(p))
        .map(|p| rpg.node(p))
    {
        if parent.subgraph() != node.subgraph() || depth > rpg.rpg.nodes.len() {
            break;
        }
        depth += 1;
        at = parent;
    }
    depth
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
            let indent = "  ".repeat(entry.depth);
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

//! The dependency neighbourhood of one node: what it depends on and what depends on it, a
//! few hops out, with each node's generation status, as data and as an ASCII tree. Pure.
//!
//! Only the relations the RPG states between pieces of code are followed (`dependencies` and
//! typed edges other than `contains`); the structural parent/containment links are left out,
//! because through a module every sibling is two hops away and the view would drown in them.
//! The parent is shown as a field instead.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::records::NodeStatus;
use crate::rpg::{EdgeKind, NodeId, Rpg};

/// One node as the views show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeRef {
    pub id: NodeId,
    pub name: String,
    /// `function`, `class`, `module`, ...
    pub kind: String,
    pub subgraph: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    /// From the output directory's checkpoint (or the RPG's own `status` field); `None` when
    /// nothing recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeStatus>,
    /// True when the node failed: the place a debugger looks first.
    pub failed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}

/// A node reached from the root, how, and what lies beyond it (further hops).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DepTree {
    #[serde(flatten)]
    pub node: NodeRef,
    /// The relations that link it to the node above it (`dependencies`, `function_call`, ...).
    pub via: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<DepTree>,
}

/// The neighbourhood of one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DepsView {
    pub node: NodeRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<NodeRef>,
    pub hops: usize,
    /// What the node needs (outgoing: it calls, imports, uses them), `hops` levels deep.
    pub depends_on: Vec<DepTree>,
    /// What needs the node (incoming: callers and other dependents), `hops` levels deep.
    pub used_by: Vec<DepTree>,
}

impl DepsView {
    /// Every node id in the view, root first, each once.
    pub(crate) fn node_ids(&self) -> Vec<NodeId> {
        let mut ids = vec![self.node.id.clone()];
        fn walk(trees: &[DepTree], ids: &mut Vec<NodeId>) {
            for tree in trees {
                if !ids.contains(&tree.node.id) {
                    ids.push(tree.node.id.clone());
                }
                walk(&tree.children, ids);
            }
        }
        walk(&self.depends_on, &mut ids);
        walk(&self.used_by, &mut ids);
        ids
    }
}

/// "Depends on" links between node positions, in both directions, with the relation names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Links {
    /// position → (dependency position → relations), sorted by position.
    outgoing: Vec<BTreeMap<usize, Vec<String>>>,
    /// position → (dependent position → relations).
    incoming: Vec<BTreeMap<usize, Vec<String>>>,
}

impl Links {
    pub fn build(rpg: &Rpg) -> Links {
        let n = rpg.nodes.len();
        let index: std::collections::HashMap<&str, usize> = rpg
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.id.as_str(), i))
            .collect();
        let mut links = Links {
            outgoing: vec![BTreeMap::new(); n],
            incoming: vec![BTreeMap::new(); n],
        };
        let mut add = |dependent: &str, dependency: &str, why: &str| {
            let (Some(&a), Some(&b)) = (index.get(dependent), index.get(dependency)) else {
                return;
            };
            if a == b {
                return;
            }
            for (map, key) in [(&mut links.outgoing[a], b), (&mut links.incoming[b], a)] {
                let whys = map.entry(key).or_default();
                if !whys.iter().any(|w| w == why) {
                    whys.push(why.to_string());
                }
            }
        };
        for node in &rpg.nodes {
            for dep in &node.dependencies {
                add(&node.id, dep, "dependencies");
            }
        }
        for edge in rpg.edges.iter().filter(|e| e.kind != EdgeKind::Contains) {
            let (dependency, dependent) = edge.kind.dependency_pair(&edge.source, &edge.target);
            add(dependent, dependency, edge.kind.as_str());
        }
        links
    }

    /// Trees of up to `hops` levels from `root`, following `outgoing` (dependencies) or
    /// incoming links. A node already on the path is not entered again, so cycles end.
    pub fn trees(
        &self,
        root: usize,
        hops: usize,
        outgoing: bool,
        node_ref: &impl Fn(usize) -> NodeRef,
    ) -> Vec<DepTree> {
        let mut path = vec![root];
        self.expand(root, hops, outgoing, node_ref, &mut path)
    }

    fn expand(
        &self,
        at: usize,
        hops: usize,
        outgoing: bool,
        node_ref: &impl Fn(usize) -> NodeRef,
        path: &mut Vec<usize>,
    ) -> Vec<DepTree> {
        if hops == 0 {
            return Vec::new();
        }
        let next = if outgoing {
            &self.outgoing[at]
        } else {
            &self.incoming[at]
        };
        let mut trees = Vec::new();
        for (&other, via) in next {
            if path.contains(&other) {
                continue;
            }
            path.push(other);
            let children = self.expand(other, hops - 1, outgoing, node_ref, path);
            path.pop();
            trees.push(DepTree {
                node: node_ref(other),
                via: via.clone(),
                children,
            });
        }
        trees
    }
}

/// The view as an ASCII tree (plain `|`, `` ` `` and `-`, so it survives any terminal or
/// prompt). Failed nodes are marked `[FAILED]` in capitals.
pub fn render_text(view: &DepsView) -> String {
    let mut out = format!("{}\n", describe(&view.node));
    if let Some(parent) = &view.parent {
        out.push_str(&format!("  in {}\n", describe(parent)));
    }
    let sections = [("depends on", &view.depends_on), ("used by", &view.used_by)];
    for (i, (title, trees)) in sections.iter().enumerate() {
        let last = i + 1 == sections.len();
        let (branch, indent) = if last {
            ("`-- ", "    ")
        } else {
            ("|-- ", "|   ")
        };
        let count = if trees.is_empty() { " (none)" } else { "" };
        out.push_str(&format!("{branch}{title}{count}\n"));
        render_trees(trees, indent, &mut out);
    }
    out
}

fn render_trees(trees: &[DepTree], prefix: &str, out: &mut String) {
    for (i, tree) in trees.iter().enumerate() {
        let last = i + 1 == trees.len();
        let (branch, indent) = if last {
            ("`-- ", "    ")
        } else {
            ("|-- ", "|   ")
        };
        out.push_str(&format!(
            "{prefix}{branch}{}  ({})\n",
            describe(&tree.node),
            tree.via.join(", ")
        ));
        render_trees(&tree.children, &format!("{prefix}{indent}"), out);
    }
}

fn describe(node: &NodeRef) -> String {
    let mut text = format!("{} {} [{}]", node.id, node.name, node.kind);
    if let Some(path) = &node.file_path {
        text.push_str(&format!(" {path}"));
    }
    match node.status {
        Some(NodeStatus::Failed) => text.push_str("  [FAILED]"),
        Some(status) => text.push_str(&format!("  [{}]", status.as_str())),
        None => {}
    }
    if let Some(reason) = &node.failure_reason {
        let first = reason.lines().next().unwrap_or_default();
        let short: String = first.chars().take(100).collect();
        text.push_str(&format!(": {short}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpg(json: serde_json::Value) -> Rpg {
        serde_json::from_value(json).unwrap()
    }

    fn leaf(id: &str, deps: &[&str]) -> serde_json::Value {
        serde_json::json!({"id": id, "name": format!("f_{id}"), "type": "function",
            "node_type": "leaf", "file_path": "m.py", "docstring": "d", "dependencies": deps})
    }

    fn simple_ref(rpg: &Rpg) -> impl Fn(usize) -> NodeRef + '_ {
        move |i| NodeRef {
            id: rpg.nodes[i].id.clone(),
            name: rpg.nodes[i].name.clone(),
            kind: rpg.nodes[i].kind.to_string(),
            subgraph: "default".into(),
            file_path: None,
            status: None,
            failed: false,
            failure_reason: None,
        }
    }

    fn ids(trees: &[DepTree]) -> Vec<String> {
        trees
            .iter()
            .map(|t| {
                if t.children.is_empty() {
                    t.node.id.to_string()
                } else {
                    format!("{}({})", t.node.id, ids(&t.children).join(" "))
                }
            })
            .collect()
    }

    #[test]
    fn two_hops_follow_dependencies_and_edges_both_ways_and_stop_at_cycles() {
        // d → c → b → a by dependencies; e calls b; a depends on d closes a cycle.
        let r = rpg(serde_json::json!({
            "nodes": [leaf("a", &["d"]), leaf("b", &["a"]), leaf("c", &["b"]), leaf("d", &["c"]), leaf("e", &[])],
            "edges": [{"source": "e", "target": "b", "type": "function_call"},
                      {"source": "e", "target": "b", "type": "contains"}]
        }));
        let links = Links::build(&r);
        let node_ref = simple_ref(&r);
        assert_eq!(ids(&links.trees(1, 2, true, &node_ref)), ["a(d)"]);
        assert_eq!(ids(&links.trees(1, 2, false, &node_ref)), ["c(d)", "e"]);
        let callers = links.trees(1, 1, false, &node_ref);
        assert_eq!(
            callers[1].via,
            ["function_call"],
            "contains is not followed"
        );
        assert_eq!(ids(&links.trees(1, 9, true, &node_ref)), ["a(d(c))"]);
    }

    #[test]
    fn the_ascii_tree_marks_failed_nodes() {
        let node = |id: &str, status| NodeRef {
            id: id.into(),
            name: format!("f_{id}"),
            kind: "function".into(),
            subgraph: "s".into(),
            file_path: Some("src/m.py".into()),
            status,
            failed: status == Some(NodeStatus::Failed),
            failure_reason: None,
        };
        let view = DepsView {
            node: node("b", Some(NodeStatus::Passed)),
            parent: None,
            hops: 2,
            depends_on: vec![DepTree {
                node: node("a", Some(NodeStatus::Failed)),
                via: vec!["dependencies".into()],
                children: vec![],
            }],
            used_by: vec![],
        };
        assert_eq!(
            render_text(&view),
            "b f_b [function] src/m.py  [passed]\n\
             |-- depends on\n\
             |   `-- a f_a [function] src/m.py  [FAILED]  (dependencies)\n\
             `-- used by (none)\n"
        );
        assert_eq!(view.node_ids(), ["b", "a"]);
    }
}

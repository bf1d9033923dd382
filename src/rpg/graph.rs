//! The dependency graph of an RPG: one petgraph edge per "must be generated before" relation,
//! pointing from the dependency to the dependent.
//!
//! Four sources feed it: `node.dependencies`, typed edges (direction per [`EdgeKind`]), `parent`
//! links, and path containment (a module file or package directory comes before what lies in it).
//! Keeping the kind on each edge lets a cycle report say why each step is there.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

use super::model::{EdgeKind, Node, Rpg};

/// Why one node must come before another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    Dependency,
    Edge(EdgeKind),
    Parent,
    ContainsPath,
}

impl std::fmt::Display for DepKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DepKind::Dependency => f.write_str("dependencies"),
            DepKind::Edge(kind) => write!(f, "{} edge", kind.as_str()),
            DepKind::Parent => f.write_str("parent"),
            DepKind::ContainsPath => f.write_str("file path"),
        }
    }
}

/// Dependency graph over the indices of `rpg.nodes`. Built only from RPGs whose ids resolve.
#[derive(Debug, Clone)]
pub struct DepGraph {
    graph: DiGraph<usize, DepKind>,
    ids: Vec<String>,
}

impl DepGraph {
    /// Builds the graph; ids that do not resolve are ignored (validation reports them).
    pub fn build(rpg: &Rpg) -> DepGraph {
        let mut graph = DiGraph::with_capacity(rpg.nodes.len(), rpg.edges.len() * 2);
        let index: HashMap<&str, NodeIndex> = rpg
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.id.as_str(), graph.add_node(i)))
            .collect();
        let mut add = |dependency: &str, dependent: &str, kind: DepKind| {
            if let (Some(&a), Some(&b)) = (index.get(dependency), index.get(dependent))
                && (!graph.contains_edge(a, b) || kind == DepKind::Dependency)
            {
                graph.update_edge(a, b, kind);
            }
        };
        for node in &rpg.nodes {
            for dep in &node.dependencies {
                add(dep, &node.id, DepKind::Dependency);
            }
            if let Some(parent) = &node.parent {
                add(parent, &node.id, DepKind::Parent);
            }
        }
        for edge in &rpg.edges {
            let (dependency, dependent) = edge.kind.dependency_pair(&edge.source, &edge.target);
            add(dependency, dependent, DepKind::Edge(edge.kind));
        }
        for container in rpg.nodes.iter().filter(|n| !n.is_leaf()) {
            for node in &rpg.nodes {
                if node.id != container.id && path_contains(container, node) {
                    add(&container.id, &node.id, DepKind::ContainsPath);
                }
            }
        }
        DepGraph {
            graph,
            ids: rpg.nodes.iter().map(|n| n.id.clone()).collect(),
        }
    }

    /// A cycle as ids in "depends on" order, first id repeated at the end, if there is one.
    /// The reported cycle is the one through the smallest id, so it is deterministic.
    pub fn find_cycle(&self) -> Option<Vec<String>> {
        let mut best: Option<Vec<String>> = None;
        for scc in petgraph::algo::tarjan_scc(&self.graph) {
            let looped = scc.len() > 1 || self.graph.contains_edge(scc[0], scc[0]);
            if !looped {
                continue;
            }
            let Some(&start) = scc.iter().min_by_key(|&&n| &self.ids[self.graph[n]]) else {
                continue;
            };
            let members: BTreeSet<NodeIndex> = scc.iter().copied().collect();
            let path = self.cycle_through(start, &members);
            if best.as_ref().is_none_or(|b| path[0] < b[0]) {
                best = Some(path);
            }
        }
        best
    }

    /// Shortest walk start → ... → start along "depends on" links inside one SCC.
    fn cycle_through(&self, start: NodeIndex, members: &BTreeSet<NodeIndex>) -> Vec<String> {
        let mut previous: HashMap<NodeIndex, NodeIndex> = HashMap::new();
        let mut queue = VecDeque::from([start]);
        let mut closing = None;
        while let Some(at) = queue.pop_front() {
            let mut deps: Vec<NodeIndex> = self
                .graph
                .neighbors_directed(at, Direction::Incoming)
                .collect();
            deps.sort_by_key(|&n| &self.ids[self.graph[n]]);
            for dep in deps {
                if dep == start {
                    closing = Some(at);
                    break;
                }
                if members.contains(&dep) && !previous.contains_key(&dep) {
                    previous.insert(dep, at);
                    queue.push_back(dep);
                }
            }
            if closing.is_some() {
                break;
            }
        }
        let mut reversed = vec![start];
        let mut at = closing.unwrap_or(start);
        while at != start {
            reversed.push(at);
            at = previous.get(&at).copied().unwrap_or(start);
        }
        let mut path: Vec<String> = std::iter::once(start)
            .chain(reversed.into_iter().skip(1).rev())
            .map(|n| self.ids[self.graph[n]].clone())
            .collect();
        path.push(self.ids[self.graph[start]].clone());
        path
    }

    /// The kind of the link "`dependent` depends on `dependency`", if any.
    pub fn link_kind(&self, dependent: &str, dependency: &str) -> Option<DepKind> {
        let a = self.index_of(dependency)?;
        let b = self.index_of(dependent)?;
        self.graph.find_edge(a, b).map(|e| self.graph[e])
    }

    fn index_of(&self, id: &str) -> Option<NodeIndex> {
        self.ids.iter().position(|x| x == id).map(NodeIndex::new)
    }

    /// Deterministic topological order (Kahn's algorithm, smallest id first among the ready).
    /// Returns node positions in `rpg.nodes`; `None` if the graph has a cycle.
    pub fn topological_order(&self) -> Option<Vec<usize>> {
        let mut indegree: Vec<usize> = self
            .graph
            .node_indices()
            .map(|n| {
                self.graph
                    .neighbors_directed(n, Direction::Incoming)
                    .count()
            })
            .collect();
        let mut ready: BinaryHeap<Reverse<(&str, NodeIndex)>> = self
            .graph
            .node_indices()
            .filter(|n| indegree[n.index()] == 0)
            .map(|n| Reverse((self.ids[self.graph[n]].as_str(), n)))
            .collect();
        let mut order = Vec::with_capacity(self.ids.len());
        while let Some(Reverse((_, n))) = ready.pop() {
            order.push(self.graph[n]);
            for next in self.graph.neighbors_directed(n, Direction::Outgoing) {
                indegree[next.index()] -= 1;
                if indegree[next.index()] == 0 {
                    ready.push(Reverse((self.ids[self.graph[next]].as_str(), next)));
                }
            }
        }
        (order.len() == self.ids.len()).then_some(order)
    }

    /// Direct dependencies of the node at `position`, as positions, sorted.
    pub fn dependencies_of(&self, position: usize) -> Vec<usize> {
        let mut deps: Vec<usize> = self
            .graph
            .neighbors_directed(NodeIndex::new(position), Direction::Incoming)
            .map(|n| self.graph[n])
            .collect();
        deps.sort_unstable();
        deps.dedup();
        deps
    }

    /// Direct dependencies the RPG states (dependencies and typed edges), without the
    /// structural parent/containment links, as positions, sorted.
    pub fn declared_dependencies_of(&self, position: usize) -> Vec<usize> {
        let mut deps: Vec<usize> = self
            .graph
            .edges_directed(NodeIndex::new(position), Direction::Incoming)
            .filter(|e| matches!(e.weight(), DepKind::Dependency | DepKind::Edge(_)))
            .map(|e| self.graph[petgraph::visit::EdgeRef::source(&e)])
            .collect();
        deps.sort_unstable();
        deps.dedup();
        deps
    }

    /// Every node the node at `position` needs, directly or transitively, as positions, sorted.
    pub fn transitive_dependencies_of(&self, position: usize) -> Vec<usize> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![NodeIndex::new(position)];
        while let Some(at) = stack.pop() {
            for dep in self.graph.neighbors_directed(at, Direction::Incoming) {
                if seen.insert(self.graph[dep]) {
                    stack.push(dep);
                }
            }
        }
        seen.into_iter().collect()
    }
}

/// Whether composite `container` holds `node` by path: a module file holds the leaves written
/// into it; a package directory holds everything beneath it.
fn path_contains(container: &Node, node: &Node) -> bool {
    let (Some(outer), Some(inner)) = (container.file_path.as_deref(), node.file_path.as_deref())
    else {
        return false;
    };
    if outer.ends_with(".py") {
        return node.is_leaf() && inner == outer;
    }
    let dir = outer.trim_end_matches('/');
    inner.len() > dir.len() && inner.starts_with(dir) && inner.as_bytes()[dir.len()] == b'/'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpg::model::{Edge, NodeType};

    fn node(id: &str, node_type: NodeType, path: &str, deps: &[&str]) -> Node {
        Node {
            id: id.into(),
            name: id.into(),
            kind: if node_type == NodeType::Leaf {
                "function"
            } else {
                "module"
            }
            .into(),
            node_type,
            file_path: Some(path.into()),
            docstring: Some("doc".into()),
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
            subgraph_id: None,
            signature: None,
            examples: vec![],
            parent: None,
            extra: Default::default(),
        }
    }

    fn order_of(rpg: &Rpg) -> Vec<&str> {
        let graph = DepGraph::build(rpg);
        graph
            .topological_order()
            .unwrap()
            .into_iter()
            .map(|p| rpg.nodes[p].id.as_str())
            .collect()
    }

    fn rpg(nodes: Vec<Node>, edges: Vec<Edge>) -> Rpg {
        Rpg {
            nodes,
            edges,
            metadata: Default::default(),
            extra: Default::default(),
        }
    }

    #[test]
    fn ties_are_broken_by_id_and_composites_come_before_their_leaves() {
        let leaf = NodeType::Leaf;
        let r = rpg(
            vec![
                node("c", leaf, "pkg/m.py", &[]),
                node("b", leaf, "pkg/m.py", &[]),
                node("z_module", NodeType::Composite, "pkg/m.py", &[]),
                node("y_package", NodeType::Composite, "pkg", &[]),
                node("a", leaf, "other.py", &[]),
            ],
            vec![],
        );
        assert_eq!(order_of(&r), ["a", "y_package", "z_module", "b", "c"]);
    }

    #[test]
    fn edge_directions_follow_the_readme() {
        let leaf = NodeType::Leaf;
        let edge = |s: &str, t: &str, kind| Edge {
            source: s.into(),
            target: t.into(),
            kind,
        };
        let calls = rpg(
            vec![node("a", leaf, "m.py", &[]), node("b", leaf, "m.py", &[])],
            vec![edge("a", "b", EdgeKind::FunctionCall)],
        );
        assert_eq!(
            order_of(&calls),
            ["b", "a"],
            "the caller depends on the callee"
        );
        let flows = rpg(
            vec![node("a", leaf, "m.py", &[]), node("b", leaf, "m.py", &[])],
            vec![edge("b", "a", EdgeKind::DataFlow)],
        );
        assert_eq!(
            order_of(&flows),
            ["b", "a"],
            "data flows from source to target"
        );
    }

    #[test]
    fn cycle_is_reported_from_its_smallest_id_in_depends_on_order() {
        let leaf = NodeType::Leaf;
        let r = rpg(
            vec![
                node("x", leaf, "m.py", &[]),
                node("c", leaf, "m.py", &["a"]),
                node("b", leaf, "m.py", &["c"]),
                node("a", leaf, "m.py", &["b"]),
            ],
            vec![],
        );
        let graph = DepGraph::build(&r);
        assert_eq!(graph.find_cycle().unwrap(), ["a", "b", "c", "a"]);
        assert!(graph.topological_order().is_none());
        let self_loop = rpg(vec![node("s", leaf, "m.py", &["s"])], vec![]);
        assert_eq!(
            DepGraph::build(&self_loop).find_cycle().unwrap(),
            ["s", "s"]
        );
    }
}

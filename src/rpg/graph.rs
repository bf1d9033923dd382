//! The dependency graph of an RPG: one petgraph edge per "must be generated before" relation,
//! pointing from the dependency to the dependent.
//!
//! Four sources feed it: `node.dependencies`, typed edges (direction per [`EdgeKind`]), `parent`
//! links, and path containment (a module file or package directory comes before what lies in it).
//! Keeping the kind on each edge lets a cycle report say why each step is there.
//!
//! Plans can be hostile or huge (100,000 nodes, chains as deep as the plan is long), so every
//! walk here is iterative (no recursion a deep chain could overflow) and every step is linear or
//! `n log n`: ids are resolved through a map once and later looked up by binary search,
//! duplicate links are dropped by sorting rather than by scanning a node's edges, ties in the
//! order compare integer ranks rather than strings, and path containment looks up each node's
//! directories instead of comparing every composite with every node.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

use super::model::{EdgeKind, NodeId, Rpg};

/// Why one node must come before another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DepKind {
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

/// A node's position in the plan's `nodes` list: what the dependency graph and the generation
/// order are made of. A type of its own so it cannot be mixed up with a job number (an index
/// into the order) or with any other count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodePos(usize);

impl NodePos {
    pub fn new(index: usize) -> NodePos {
        NodePos(index)
    }

    /// The index into `Rpg::nodes`.
    pub fn index(self) -> usize {
        self.0
    }
}

/// Dependency graph over the indices of `rpg.nodes`. Built only from RPGs whose ids resolve.
#[derive(Debug, Clone)]
pub struct DepGraph {
    graph: DiGraph<usize, DepKind>,
    ids: Vec<NodeId>,
    /// Positions sorted by id (then position): lookups by id are a binary search.
    by_id: Vec<usize>,
    /// Each position's place in `by_id`, so ties in the order are broken by comparing integers
    /// rather than strings.
    rank: Vec<usize>,
}

impl DepGraph {
    /// Builds the graph; ids that do not resolve are ignored (validation reports them).
    pub fn build(rpg: &Rpg) -> DepGraph {
        let n = rpg.nodes.len();
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (position, node) in rpg.nodes.iter().enumerate() {
            index.entry(node.id.as_str()).or_insert(position);
        }
        // Every link as (dependency, dependent, kind), positions resolved once.
        let mut links: Vec<(usize, usize, DepKind)> = Vec::new();
        let mut add = |dependency: &str, dependent: &str, kind: DepKind| {
            if let (Some(&a), Some(&b)) = (index.get(dependency), index.get(dependent)) {
                links.push((a, b, kind));
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
        links.extend(
            path_containment(rpg)
                .into_iter()
                .map(|(container, node)| (container, node, DepKind::ContainsPath)),
        );
        let links = one_link_per_pair(links);
        let mut graph = DiGraph::with_capacity(n, links.len());
        for position in 0..n {
            graph.add_node(position);
        }
        for (a, b, kind) in links {
            graph.add_edge(NodeIndex::new(a), NodeIndex::new(b), kind);
        }
        let ids: Vec<NodeId> = rpg.nodes.iter().map(|node| node.id.clone()).collect();
        let mut by_id: Vec<usize> = (0..n).collect();
        by_id.sort_by(|&a, &b| ids[a].cmp(&ids[b]).then(a.cmp(&b)));
        let mut rank = vec![0; n];
        for (place, &position) in by_id.iter().enumerate() {
            rank[position] = place;
        }
        DepGraph {
            graph,
            ids,
            by_id,
            rank,
        }
    }

    /// The position in `rpg.nodes` of the node with this id (the first, should ids repeat).
    pub(crate) fn position_of(&self, id: &str) -> Option<NodePos> {
        let place = self.by_id.partition_point(|&p| self.ids[p].as_str() < id);
        let &position = self.by_id.get(place)?;
        (self.ids[position] == id).then_some(NodePos(position))
    }

    /// A cycle as ids in "depends on" order, first id repeated at the end, if there is one.
    /// The reported cycle is the one through the smallest id, so it is deterministic.
    pub(crate) fn find_cycle(&self) -> Option<Vec<NodeId>> {
        // Kosaraju rather than Tarjan: petgraph's Tarjan recurses once per node of a path, so a
        // 50,000-node chain overflowed the stack; its Kosaraju walks with explicit stacks.
        let mut best: Option<(NodeIndex, Vec<NodeIndex>)> = None;
        for scc in petgraph::algo::kosaraju_scc(&self.graph) {
            let looped = scc.len() > 1 || scc.iter().any(|&n| self.graph.contains_edge(n, n));
            if !looped {
                continue;
            }
            let Some(&start) = scc.iter().min_by_key(|&&n| self.rank_of(n)) else {
                continue;
            };
            if best
                .as_ref()
                .is_none_or(|(b, _)| self.rank_of(start) < self.rank_of(*b))
            {
                best = Some((start, scc));
            }
        }
        // Only the reported component is walked, once.
        let (start, scc) = best?;
        let members: BTreeSet<NodeIndex> = scc.into_iter().collect();
        Some(self.cycle_through(start, &members))
    }

    /// The node's place in id order.
    fn rank_of(&self, n: NodeIndex) -> usize {
        self.rank[self.graph[n]]
    }

    /// Shortest walk start → ... → start along "depends on" links inside one SCC.
    fn cycle_through(&self, start: NodeIndex, members: &BTreeSet<NodeIndex>) -> Vec<NodeId> {
        let mut previous: HashMap<NodeIndex, NodeIndex> = HashMap::new();
        let mut queue = VecDeque::from([start]);
        let mut closing = None;
        while let Some(at) = queue.pop_front() {
            let mut deps: Vec<NodeIndex> = self
                .graph
                .neighbors_directed(at, Direction::Incoming)
                .collect();
            deps.sort_by_key(|&n| self.rank_of(n));
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
        let mut path: Vec<NodeId> = std::iter::once(start)
            .chain(reversed.into_iter().skip(1).rev())
            .map(|n| self.ids[self.graph[n]].clone())
            .collect();
        path.push(self.ids[self.graph[start]].clone());
        path
    }

    /// The kind of the link "`dependent` depends on `dependency`", if any.
    pub(crate) fn link_kind(&self, dependent: &str, dependency: &str) -> Option<DepKind> {
        let a = self.index_of(dependency)?;
        let b = self.index_of(dependent)?;
        self.graph.find_edge(a, b).map(|e| self.graph[e])
    }

    fn index_of(&self, id: &str) -> Option<NodeIndex> {
        self.position_of(id).map(|p| NodeIndex::new(p.0))
    }

    /// Deterministic topological order (Kahn's algorithm, smallest id first among the ready).
    /// Returns node positions in `rpg.nodes`; `None` if the graph has a cycle.
    pub(crate) fn topological_order(&self) -> Option<Vec<NodePos>> {
        let mut indegree: Vec<usize> = self
            .graph
            .node_indices()
            .map(|n| {
                self.graph
                    .neighbors_directed(n, Direction::Incoming)
                    .count()
            })
            .collect();
        let mut ready: BinaryHeap<Reverse<(usize, NodeIndex)>> = self
            .graph
            .node_indices()
            .filter(|n| indegree[n.index()] == 0)
            .map(|n| Reverse((self.rank_of(n), n)))
            .collect();
        let mut order = Vec::with_capacity(self.ids.len());
        while let Some(Reverse((_, n))) = ready.pop() {
            order.push(NodePos(self.graph[n]));
            for next in self.graph.neighbors_directed(n, Direction::Outgoing) {
                indegree[next.index()] -= 1;
                if indegree[next.index()] == 0 {
                    ready.push(Reverse((self.rank_of(next), next)));
                }
            }
        }
        (order.len() == self.ids.len()).then_some(order)
    }

    /// Direct dependencies of the node at `position`, as positions, sorted.
    pub(crate) fn dependencies_of(&self, position: NodePos) -> Vec<NodePos> {
        let mut deps: Vec<NodePos> = self
            .graph
            .neighbors_directed(NodeIndex::new(position.0), Direction::Incoming)
            .map(|n| NodePos(self.graph[n]))
            .collect();
        deps.sort_unstable();
        deps.dedup();
        deps
    }

    /// Direct dependencies the RPG states (dependencies and typed edges), without the
    /// structural parent/containment links, as positions, sorted.
    pub(crate) fn declared_dependencies_of(&self, position: NodePos) -> Vec<NodePos> {
        let mut deps: Vec<NodePos> = self
            .graph
            .edges_directed(NodeIndex::new(position.0), Direction::Incoming)
            .filter(|e| matches!(e.weight(), DepKind::Dependency | DepKind::Edge(_)))
            .map(|e| NodePos(self.graph[petgraph::visit::EdgeRef::source(&e)]))
            .collect();
        deps.sort_unstable();
        deps.dedup();
        deps
    }

    /// Every node the node at `position` needs, directly or transitively, as positions, sorted.
    pub(crate) fn transitive_dependencies_of(&self, position: NodePos) -> Vec<NodePos> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![NodeIndex::new(position.0)];
        while let Some(at) = stack.pop() {
            for dep in self.graph.neighbors_directed(at, Direction::Incoming) {
                if seen.insert(NodePos(self.graph[dep])) {
                    stack.push(dep);
                }
            }
        }
        seen.into_iter().collect()
    }
}

/// The links with one per ordered pair, as petgraph's own `contains_edge` check would have
/// kept them (it scans the source's edges, quadratic when one node is needed by or contains
/// 100,000 others): a stated dependency names the link whatever else also adds it; otherwise
/// the first source that added it does. Sorting keeps this `n log n` and deterministic.
fn one_link_per_pair(mut links: Vec<(usize, usize, DepKind)>) -> Vec<(usize, usize, DepKind)> {
    // A stable sort keeps each pair's links in the order they were added.
    links.sort_by_key(|&(a, b, _)| (a, b));
    let mut kept: Vec<(usize, usize, DepKind)> = Vec::with_capacity(links.len());
    for (a, b, kind) in links {
        match kept.last_mut() {
            Some(last) if (last.0, last.1) == (a, b) => {
                if kind == DepKind::Dependency {
                    last.2 = kind;
                }
            }
            _ => kept.push((a, b, kind)),
        }
    }
    kept
}

/// Every `(container, node)` pair of positions where composite `container` holds `node` by
/// path: a module file holds the leaves written into it; a package directory holds everything
/// beneath it. Each node looks up its own file and its parent directories in maps of the
/// composites, so the cost grows with the total length of the paths, not with composites ×
/// nodes.
fn path_containment(rpg: &Rpg) -> Vec<(usize, usize)> {
    let mut modules: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut packages: HashMap<&str, Vec<usize>> = HashMap::new();
    for (position, container) in rpg.nodes.iter().enumerate() {
        let Some(outer) = container
            .file_path
            .as_deref()
            .filter(|_| !container.is_leaf())
        else {
            continue;
        };
        if outer.ends_with(".py") {
            modules.entry(outer).or_default().push(position);
        } else {
            packages
                .entry(outer.trim_end_matches('/'))
                .or_default()
                .push(position);
        }
    }
    let mut pairs = Vec::new();
    for (position, node) in rpg.nodes.iter().enumerate() {
        let Some(inner) = node.file_path.as_deref() else {
            continue;
        };
        let mut holds = |holders: Option<&Vec<usize>>| {
            for &holder in holders.into_iter().flatten() {
                // A node never holds itself, nor a namesake (the rule compares ids).
                if rpg.nodes[holder].id != node.id {
                    pairs.push((holder, position));
                }
            }
        };
        if node.is_leaf() {
            holds(modules.get(inner));
        }
        // A package `dir` holds `inner` when `inner` continues with `/` right after `dir`.
        for (slash, _) in inner.match_indices('/') {
            holds(packages.get(&inner[..slash]));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpg::model::{Edge, Node, NodeType};

    fn node(id: &str, node_type: NodeType, path: &str, deps: &[&str]) -> Node {
        Node {
            kind: if node_type == NodeType::Leaf {
                "function"
            } else {
                "module"
            }
            .into(),
            node_type,
            docstring: Some("doc".into()),
            dependencies: deps.iter().map(|d| NodeId::from(*d)).collect(),
            ..Node::function_for_test(id, id, path)
        }
    }

    fn order_of(rpg: &Rpg) -> Vec<&str> {
        let graph = DepGraph::build(rpg);
        graph
            .topological_order()
            .unwrap()
            .into_iter()
            .map(|p| rpg.nodes[p.index()].id.as_str())
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

    /// `n` leaves `n000000`..; `deps(i)` lists the positions node `i` depends on.
    fn numbered(n: usize, deps: impl Fn(usize) -> Vec<usize>) -> Rpg {
        let id = |i: usize| format!("n{i:06}");
        let nodes = (0..n)
            .map(|i| {
                let deps: Vec<String> = deps(i).into_iter().map(id).collect();
                let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
                node(&id(i), NodeType::Leaf, "src/m.py", &deps)
            })
            .collect();
        rpg(nodes, vec![])
    }

    #[test]
    fn a_100000_node_chain_is_ordered_without_recursion() {
        let chain = numbered(100_000, |i| if i == 0 { vec![] } else { vec![i - 1] });
        let graph = DepGraph::build(&chain);
        assert_eq!(graph.find_cycle(), None);
        let order = graph.topological_order().unwrap();
        assert_eq!(order, (0..100_000).map(NodePos).collect::<Vec<_>>());
        assert_eq!(
            graph.transitive_dependencies_of(NodePos(99_999)).len(),
            99_999
        );
    }

    #[test]
    fn a_100000_node_cycle_is_found_without_recursion() {
        let n = 100_000;
        let ring = numbered(n, |i| vec![(i + 1) % n]);
        let graph = DepGraph::build(&ring);
        assert!(graph.topological_order().is_none());
        let cycle = graph.find_cycle().unwrap();
        assert_eq!(cycle.len(), n + 1);
        assert_eq!(
            (cycle[0].as_str(), cycle[1].as_str(), cycle[n].as_str()),
            ("n000000", "n000001", "n000000")
        );
    }

    #[test]
    fn one_node_needed_by_100000_others_keeps_one_edge_per_pair() {
        // Each dependency is stated twice: the second must find the first edge, not add one.
        let wide = numbered(100_000, |i| if i == 0 { vec![] } else { vec![0, 0] });
        let graph = DepGraph::build(&wide);
        assert_eq!(graph.graph.edge_count(), 99_999);
        assert_eq!(graph.topological_order().unwrap()[0], NodePos(0));
    }

    #[test]
    fn a_stated_dependency_names_the_link_even_when_a_parent_link_came_first() {
        let mut child = node("b", NodeType::Leaf, "m.py", &["a"]);
        child.parent = Some("a".into());
        let r = rpg(
            vec![node("a", NodeType::Composite, "pkg", &[]), child],
            vec![],
        );
        let graph = DepGraph::build(&r);
        assert_eq!(graph.link_kind("b", "a"), Some(DepKind::Dependency));
        assert_eq!(graph.position_of("b"), Some(NodePos(1)));
        assert_eq!(graph.position_of("ghost"), None);
    }

    /// The containment rule as it was first written: every composite against every node.
    fn contains_by_brute_force(container: &Node, node: &Node) -> bool {
        let (Some(outer), Some(inner)) =
            (container.file_path.as_deref(), node.file_path.as_deref())
        else {
            return false;
        };
        if outer.ends_with(".py") {
            return node.is_leaf() && inner == outer;
        }
        let dir = outer.trim_end_matches('/');
        inner.len() > dir.len() && inner.starts_with(dir) && inner.as_bytes()[dir.len()] == b'/'
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use proptest::sample::Index;
        use std::collections::BTreeMap;

        /// A random DAG: unique random ids in a random order, each node depending (through
        /// `dependencies` or typed edges of either direction) only on nodes before it.
        fn dag() -> impl Strategy<Value = Rpg> {
            (1..60usize)
                .prop_flat_map(|n| {
                    (
                        proptest::collection::btree_set("[a-z0-9_]{1,6}", n)
                            .prop_map(|ids| ids.into_iter().collect::<Vec<String>>())
                            .prop_shuffle(),
                        proptest::collection::vec(
                            proptest::collection::vec((any::<Index>(), 0..7u8), 0..4),
                            n,
                        ),
                    )
                })
                .prop_map(|(ids, links)| {
                    let mut nodes: Vec<Node> = ids
                        .iter()
                        .map(|id| node(id, NodeType::Leaf, "src/m.py", &[]))
                        .collect();
                    let mut edges = Vec::new();
                    for (i, links) in links.into_iter().enumerate().skip(1) {
                        for (pick, how) in links {
                            let dep = &ids[pick.index(i)];
                            let kinds = [
                                EdgeKind::FunctionCall,
                                EdgeKind::Imports,
                                EdgeKind::Inherits,
                                EdgeKind::Uses,
                                EdgeKind::DataFlow,
                                EdgeKind::Contains,
                            ];
                            match kinds.get(usize::from(how)) {
                                None => nodes[i].dependencies.push(dep.into()),
                                Some(&kind) => {
                                    let (a, b) = (ids[i].clone(), dep.clone());
                                    let (source, target) = match kind {
                                        EdgeKind::DataFlow | EdgeKind::Contains => (b, a),
                                        _ => (a, b),
                                    };
                                    edges.push(Edge {
                                        source: source.into(),
                                        target: target.into(),
                                        kind,
                                    });
                                }
                            }
                        }
                    }
                    rpg(nodes, edges)
                })
        }

        /// Kahn's algorithm with the ready nodes in a `BTreeSet` of ids: the order docs/rpg-format.md
        /// promises, written as plainly as possible.
        fn reference_order(r: &Rpg) -> Vec<String> {
            let mut needs: BTreeMap<&str, BTreeSet<&str>> = r
                .nodes
                .iter()
                .map(|n| (n.id.as_str(), BTreeSet::new()))
                .collect();
            for n in &r.nodes {
                for d in &n.dependencies {
                    needs.entry(n.id.as_str()).or_default().insert(d.as_str());
                }
            }
            for e in &r.edges {
                let (dependency, dependent) = e.kind.dependency_pair(&e.source, &e.target);
                needs.entry(dependent).or_default().insert(dependency);
            }
            let mut done: BTreeSet<&str> = BTreeSet::new();
            let mut order = Vec::new();
            while done.len() < needs.len() {
                let ready: BTreeSet<&str> = needs
                    .iter()
                    .filter(|(id, deps)| !done.contains(*id) && deps.is_subset(&done))
                    .map(|(id, _)| *id)
                    .collect();
                let Some(&first) = ready.first() else {
                    break;
                };
                done.insert(first);
                order.push(first.to_string());
            }
            order
        }

        fn order_ids(r: &Rpg) -> Vec<String> {
            let order = DepGraph::build(r).topological_order().unwrap_or_default();
            order
                .into_iter()
                .map(|p| r.nodes[p.index()].id.to_string())
                .collect()
        }

        proptest! {
            #[test]
            fn the_order_respects_every_dependency(r in dag()) {
                let order = order_ids(&r);
                prop_assert_eq!(order.len(), r.nodes.len());
                let at: HashMap<&str, usize> =
                    order.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
                for n in &r.nodes {
                    for d in &n.dependencies {
                        prop_assert!(at[d.as_str()] < at[n.id.as_str()], "{} before {}", d, n.id);
                    }
                }
                for e in &r.edges {
                    let (dependency, dependent) = e.kind.dependency_pair(&e.source, &e.target);
                    prop_assert!(at[dependency] < at[dependent], "{:?}", e);
                }
            }

            #[test]
            fn ties_among_ready_nodes_break_by_id(r in dag()) {
                prop_assert_eq!(order_ids(&r), reference_order(&r));
            }

            #[test]
            fn the_order_does_not_depend_on_the_order_of_the_nodes(
                (r, permutation) in dag().prop_flat_map(|r| {
                    let n = r.nodes.len();
                    (Just(r), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
                })
            ) {
                let shuffled = Rpg {
                    nodes: permutation.iter().map(|&i| r.nodes[i].clone()).collect(),
                    ..r.clone()
                };
                prop_assert_eq!(order_ids(&shuffled), order_ids(&r));
            }

            #[test]
            fn path_containment_matches_the_brute_force_rule(
                specs in proptest::collection::vec(
                    (any::<bool>(), "(a|b|a/b|a/b/c|a/b\\.py|b\\.py|a/b/c\\.py|a/|a//b)(\\.py)?"),
                    1..25,
                )
            ) {
                let nodes: Vec<Node> = specs
                    .iter()
                    .enumerate()
                    .map(|(i, (is_leaf, path))| {
                        let kind = if *is_leaf { NodeType::Leaf } else { NodeType::Composite };
                        node(&format!("n{i:02}"), kind, path, &[])
                    })
                    .collect();
                let r = rpg(nodes, vec![]);
                let mut fast: Vec<(&str, &str)> = path_containment(&r)
                    .into_iter()
                    .map(|(c, n)| (r.nodes[c].id.as_str(), r.nodes[n].id.as_str()))
                    .collect();
                fast.sort_unstable();
                let mut slow = Vec::new();
                for c in r.nodes.iter().filter(|n| !n.is_leaf()) {
                    for n in &r.nodes {
                        if n.id != c.id && contains_by_brute_force(c, n) {
                            slow.push((c.id.as_str(), n.id.as_str()));
                        }
                    }
                }
                slow.sort_unstable();
                prop_assert_eq!(fast, slow);
            }
        }
    }
}

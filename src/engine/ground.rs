//! The ground a node's localization reads ([`Ground`]): the staged code and the plan around
//! the node. [`super::suspects`] ranks suspects over this trait without I/O; this is the one
//! implementation that reads the workspace and the plan's index.

use std::collections::BTreeSet;

use crate::rpg::{NodeId, NodeKind, NodePos};

use super::Context;
use super::suspects::{Ground, PlanFunction};

/// What a node's localization reads: the staged code and the plan around the node.
pub(super) struct LeafGround<'a> {
    pub(super) ctx: &'a Context,
    pub(super) position: NodePos,
}

impl LeafGround<'_> {
    fn function(&self, position: NodePos) -> Option<PlanFunction> {
        let node = self.ctx.rpg.node(position);
        let file = node.file_path.clone()?;
        (node.is_leaf() && node.kind == NodeKind::Function).then(|| PlanFunction {
            id: node.id.clone(),
            name: node.name.clone(),
            file,
        })
    }
}

impl Ground for LeafGround<'_> {
    fn source_of(&self, file: &str, symbol: &str) -> Option<String> {
        let source = self.ctx.workspace.read(file).ok().flatten()?;
        let symbols = crate::symbols::outline::outline(&source).ok()?;
        let found = symbols.iter().find(|s| s.qualified_name == symbol)?;
        let lines: Vec<&str> = source.lines().collect();
        let (start, end) = (found.start_line.max(1) - 1, found.end_line.min(lines.len()));
        Some(lines.get(start..end)?.join("\n"))
    }

    fn node_of(&self, file: &str, symbol: &str) -> Option<NodeId> {
        let positions = self.ctx.functions.get(symbol)?;
        positions
            .iter()
            .map(|&p| self.ctx.rpg.node(p))
            .find(|n| n.file_path.as_deref() == Some(file))
            .map(|n| n.id.clone())
    }

    fn dependencies(&self) -> Vec<PlanFunction> {
        let graph = self.ctx.rpg.graph();
        let near = graph.dependencies_of(self.position);
        let far = near.iter().flat_map(|&p| graph.dependencies_of(p));
        let mut seen = BTreeSet::from([self.position]);
        near.iter()
            .copied()
            .chain(far)
            .filter(|&p| seen.insert(p))
            .filter_map(|p| self.function(p))
            .collect()
    }

    fn search(&self, text: &str, k: usize) -> Vec<PlanFunction> {
        let index = self
            .ctx
            .index
            .get_or_init(|| crate::localize::Index::build(self.ctx.rpg.rpg()));
        index
            .search_lexical(text, k, None)
            .into_iter()
            .filter_map(|(i, _)| self.function(NodePos::new(i)))
            .collect()
    }
}

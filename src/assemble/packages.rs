//! Package `__init__.py` files that export what the plan produced, and the import cycles
//! between generated modules.
//!
//! Each package's `__init__.py` keeps what its composite node wrote (the docstring) and gets
//! one block, between a marker and the end of the file, that imports the passed leaves of its
//! direct modules (functions, classes, and data names like `UNITS`: a user and a test import
//! a table from the package as they import a function) and its subpackages and lists them in
//! `__all__`. The block is rebuilt
//! from scratch on every run, so assembling twice gives the same bytes. A passed (or
//! needs-review) leaf is always exported; a failed or skipped one only when its module defines
//! the name (the stub that raises `NotImplementedError` with the reason): the package then
//! has the plan's whole interface, so `from pkg import f, g` still imports when `g` failed and
//! calling `g` says why, while a name its module lacks is never named (`import pkg` would
//! break).

use std::collections::{BTreeMap, BTreeSet};

use petgraph::graph::DiGraph;

use crate::python::{EXPORTS_MARKER, import_path};
use crate::records::NodeRecords;
use crate::rpg::ValidRpg;

/// New contents of every package `__init__.py` among `sources` (path → text).
pub(crate) fn init_files(
    rpg: &ValidRpg,
    records: &NodeRecords,
    sources: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut exports: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for &position in rpg.order() {
        let node = rpg.node(position);
        let passed = records.get(&node.id).is_some_and(|r| r.status.is_usable());
        let Some(file) = node.file_path.as_deref() else {
            continue;
        };
        if !node.is_leaf() || !file.ends_with(".py") || file.ends_with("__init__.py") {
            continue;
        }
        let stubbed = || {
            sources
                .get(file)
                .is_some_and(|text| crate::symbols::stub::defines(text, &node.name))
        };
        if !passed && !stubbed() {
            continue;
        }
        let Some((dir, module)) = file.rsplit_once('/') else {
            continue;
        };
        let module = module.trim_end_matches(".py").to_string();
        exports
            .entry(format!("{dir}/__init__.py"))
            .or_default()
            .push((module, node.name.clone()));
    }
    let mut files = BTreeMap::new();
    for (path, text) in sources {
        let Some(dir) = path.strip_suffix("/__init__.py") else {
            continue;
        };
        let subpackages: Vec<&str> = sources
            .keys()
            .filter_map(|p| p.strip_prefix(dir)?.strip_prefix('/'))
            .filter_map(|rest| rest.strip_suffix("/__init__.py"))
            .filter(|sub| !sub.contains('/'))
            .collect();
        let block = exports_block(
            exports.get(path).map_or(&[][..], Vec::as_slice),
            &subpackages,
        );
        let kept = text
            .split_once(EXPORTS_MARKER)
            .map_or(text.as_str(), |(before, _)| before)
            .trim_end();
        let new = match (kept.is_empty(), block.is_empty()) {
            (_, true) if kept.is_empty() => String::new(),
            (_, true) => format!("{kept}\n"),
            (true, false) => block,
            (false, false) => format!("{kept}\n\n{block}"),
        };
        files.insert(path.clone(), new);
    }
    files
}

fn exports_block(functions: &[(String, String)], subpackages: &[&str]) -> String {
    if functions.is_empty() && subpackages.is_empty() {
        return String::new();
    }
    let mut by_module: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (module, name) in functions {
        by_module.entry(module).or_default().push(name);
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    let mut text = format!("{EXPORTS_MARKER}\n");
    for sub in subpackages {
        text.push_str(&format!("from . import {sub}\n"));
        names.insert(sub);
    }
    for (module, functions) in &by_module {
        text.push_str(&format!("from .{module} import {}\n", functions.join(", ")));
        names.extend(functions.iter().copied());
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("    \"{n}\",")).collect();
    text.push_str(&format!("\n__all__ = [\n{}\n]\n", quoted.join("\n")));
    text
}

/// Cycles among the local modules of `sources` (by their module-level imports), each as the
/// list of modules in the cycle.
pub(crate) fn import_cycles(sources: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    let modules: BTreeMap<String, &String> = sources
        .iter()
        .filter(|(p, _)| p.ends_with(".py") && !p.starts_with("tests/"))
        .map(|(p, text)| (import_path(p), text))
        .collect();
    let mut graph = DiGraph::<&str, ()>::new();
    let index: BTreeMap<&str, _> = modules
        .keys()
        .map(|m| (m.as_str(), graph.add_node(m.as_str())))
        .collect();
    for (module, text) in &modules {
        for line in text.lines().filter(|l| !l.starts_with([' ', '\t'])) {
            let target = line
                .strip_prefix("from ")
                .or_else(|| line.strip_prefix("import "))
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("");
            // `from pkg.mod import f` depends on pkg.mod; `from pkg import mod` on pkg.
            if let (Some(&from), Some(&to)) = (index.get(module.as_str()), index.get(target))
                && from != to
            {
                graph.add_edge(from, to, ());
            }
        }
    }
    // Kosaraju: iterative, so a long import chain cannot overflow the stack.
    let mut cycles: Vec<Vec<String>> = petgraph::algo::kosaraju_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| {
            let mut names: Vec<String> = scc.iter().map(|&i| graph[i].to_string()).collect();
            names.sort();
            names
        })
        .collect();
    cycles.sort();
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{NodeRecord, NodeStatus};
    use crate::rpg::{Node, NodeType, Rpg, validate};

    fn node(id: &str, name: &str, kind: NodeType, path: &str) -> Node {
        Node {
            kind: if kind == NodeType::Leaf {
                "function"
            } else {
                "package"
            }
            .into(),
            node_type: kind,
            ..Node::function_for_test(id, name, path)
        }
    }

    #[test]
    fn init_exports_passed_leaves_the_stubs_of_failed_ones_and_subpackages() {
        let table = Node {
            kind: crate::rpg::NodeKind::Data,
            value: Some("{0.95: 1.96}".into()),
            ..node("n4", "Z_SCORES", NodeType::Leaf, "src/pkg/stats.py")
        };
        let rpg = validate(Rpg {
            nodes: vec![
                node("n0", "pkg", NodeType::Composite, "src/pkg"),
                node("n1", "mean", NodeType::Leaf, "src/pkg/stats.py"),
                node("n2", "median", NodeType::Leaf, "src/pkg/stats.py"),
                node("n3", "broken", NodeType::Leaf, "src/pkg/io.py"),
                node("n5", "lost", NodeType::Leaf, "src/pkg/io.py"),
                table,
            ],
            edges: vec![],
            metadata: Default::default(),
            extra: Default::default(),
        })
        .unwrap();
        let mut records = NodeRecords::new();
        for id in ["n0", "n1", "n2", "n4"] {
            records.insert(id.into(), NodeRecord::now(NodeStatus::Passed));
        }
        records.insert("n3".into(), NodeRecord::now(NodeStatus::Failed));
        records.insert("n5".into(), NodeRecord::now(NodeStatus::Skipped));
        let mut sources = BTreeMap::new();
        // The failed node's stub is in its module; the skipped one's is not.
        sources.insert(
            "src/pkg/io.py".to_string(),
            "def broken(*args, **kwargs):\n    raise NotImplementedError(\"no\")\n".to_string(),
        );
        sources.insert(
            "src/pkg/__init__.py".to_string(),
            "\"\"\"The package.\"\"\"\n".to_string(),
        );
        sources.insert("src/pkg/sub/__init__.py".to_string(), String::new());
        let files = init_files(&rpg, &records, &sources);
        let init = &files["src/pkg/__init__.py"];
        assert_eq!(
            init,
            &format!(
                "\"\"\"The package.\"\"\"\n\n{EXPORTS_MARKER}\nfrom . import sub\nfrom .io import broken\nfrom .stats import mean, median, Z_SCORES\n\n__all__ = [\n    \"Z_SCORES\",\n    \"broken\",\n    \"mean\",\n    \"median\",\n    \"sub\",\n]\n"
            )
        );
        assert_eq!(files["src/pkg/sub/__init__.py"], "");
        // Assembling again over the assembled file gives the same bytes.
        sources.insert("src/pkg/__init__.py".to_string(), init.clone());
        assert_eq!(
            &init_files(&rpg, &records, &sources)["src/pkg/__init__.py"],
            init
        );
    }

    #[test]
    fn import_cycles_between_modules_are_found() {
        let mut sources = BTreeMap::new();
        sources.insert("src/p/a.py".to_string(), "from p.b import f\n".to_string());
        sources.insert("src/p/b.py".to_string(), "import p.a\n".to_string());
        sources.insert("src/p/c.py".to_string(), "from p.a import g\n".to_string());
        assert_eq!(
            import_cycles(&sources),
            vec![vec!["p.a".to_string(), "p.b".to_string()]]
        );
    }
}

//! The module-level data a planned definition reads, beyond the public literals that
//! [`super::nodes::data_leaves`] plans on their own.
//!
//! A definition's signature is evaluated when its module is imported: `def first(iterable,
//! default=_marker)` stops the whole module with a `NameError` unless `_marker` exists, and a
//! body that looks a character up in a table needs the table. A plan of the public functions
//! alone cannot say so, and a model cannot guess a private sentinel or a generated table. So
//! every name a planned definition reads (its body, its parameters' defaults, its decorators)
//! that resolves to a module-level assignment of the library is planned as a data leaf too:
//!
//! - private or public, where it is defined when that module is planned, else in the module
//!   of the definition that reads it (a name imported from a module the plan leaves out: the
//!   generated module defines its own);
//! - a literal value is the leaf's `value`, written as it is; any other value (`object()`, a
//!   compiled pattern, a sum of other constants) gives a leaf without a value, whose
//!   docstring quotes the library's assignment when it is short, for the model to write: for
//!   data, what it holds is the specification. The names such a value reads are planned the
//!   same way, and it depends on them and on the planned definitions it calls (`UTC = Utc()`).
//! - a function or class of a planned module that such a value calls is planned as a leaf,
//!   public or not: the value names it, so the model must write it, and a leaf whose
//!   docstring quotes `DEACCENT_MAP = DeaccenterDict(_BASE_DEACCENT_MAP)` with no
//!   `DeaccenterDict` planned cannot be written (boltons' `__all__` leaves the class out; the
//!   model imported it from the module being written). A definition a function's *body*
//!   reads is not: the model writes the body from its specification, helpers included.
//!
//! What cannot be planned is reported with why, as [`super::nodes::data_leaves`] does. Pure.

use std::collections::{BTreeMap, BTreeSet};

use super::nodes::data_node;
use super::read::{Call, DataDef, Module, resolve_call};
use super::{
    ExtractOptions, ExtractSummary, LeafCalls, LeafUses, Leaves, Skipped, definition_leaf,
    module_path, path_problem,
};
use crate::python::is_identifier;
use crate::rpg::model::{Node, NodeKind};

/// The longest assignment a value-less leaf's docstring quotes whole.
const MAX_QUOTED_BYTES: usize = 400;

/// A name to look for: read in the scope of module `scope`, to be planned in `home` when its
/// own module is not planned.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Wanted {
    scope: String,
    home: String,
    read: Call,
    /// Read by a planned data leaf's value, which names it, rather than by a body.
    by_value: bool,
}

/// Plans, as data leaves, what the leaves in `calls` read, and the definitions such data
/// calls (see the module doc), and records what each new leaf reads in `calls` so its edges
/// are drawn with the others. Returns the ids of the leaves it planned.
pub(super) fn needed_data(
    (modules, selected, options): (&BTreeMap<String, Module>, &[String], &ExtractOptions),
    leaves: &mut Leaves,
    calls: &mut LeafCalls,
    summary: &mut ExtractSummary,
) -> BTreeSet<String> {
    let mut planned_here = BTreeSet::new();
    let mut queue: Vec<Wanted> = calls
        .values()
        .flat_map(|uses| looked_for(&uses.reads, &uses.module, &uses.home, false))
        .collect();
    let mut seen: BTreeSet<Wanted> = BTreeSet::new();
    let mut reported: BTreeSet<String> = BTreeSet::new();
    while let Some(wanted) = queue.pop() {
        if !seen.insert(wanted.clone())
            || data_target(modules, leaves, &wanted.scope, &wanted.home, &wanted.read).is_some()
        {
            continue;
        }
        let Some((defined_in, name)) = resolve_call(modules, &wanted.scope, &wanted.read) else {
            continue;
        };
        let key = (defined_in.clone(), name.clone());
        let called = (wanted.by_value && selected.contains(&defined_in))
            .then(|| called_definition(modules, leaves, &key, options))
            .flatten();
        if let Some(planned) = called {
            let qualified = format!("{defined_in}.{name}");
            match planned {
                Ok((node, uses)) => {
                    queue.extend(looked_for(&uses.reads, &defined_in, &defined_in, false));
                    calls.insert(qualified.clone(), uses);
                    planned_here.insert(qualified);
                    leaves.insert(key, node);
                }
                Err(reason) if reported.insert(qualified.clone()) => {
                    summary.skipped.push(Skipped {
                        name: qualified,
                        reason: format!("called by a planned value, but {reason}"),
                    })
                }
                Err(_) => {}
            }
            continue;
        }
        let Some(data) = modules.get(&defined_in).and_then(|m| m.data.get(&name)) else {
            continue;
        };
        let (home, local) = match selected.contains(&defined_in) {
            true => (defined_in.clone(), name.clone()),
            false if wanted.read.object.is_empty() => {
                (wanted.home.clone(), wanted.read.name.clone())
            }
            false => continue, // `m.NAME` of a module the plan leaves out: no local name
        };
        let qualified = format!("{home}.{local}");
        match planned(modules, &home, &local, &defined_in, data) {
            Ok(node) => {
                let reads = data.reads.clone();
                queue.extend(looked_for(&reads, &defined_in, &home, true));
                calls.insert(
                    qualified.clone(),
                    LeafUses {
                        module: defined_in.clone(),
                        home: home.clone(),
                        // `UTC = Utc()` needs the class first, as `A = B + 1` needs `B`.
                        calls: reads.clone(),
                        bases: Vec::new(),
                        reads,
                    },
                );
                planned_here.insert(qualified.clone());
                leaves.insert((home, local), node);
            }
            Err(reason) if reported.insert(qualified.clone()) => summary.skipped.push(Skipped {
                name: qualified,
                reason: format!("read by a planned definition, but {reason}"),
            }),
            Err(_) => {}
        }
    }
    planned_here
}

/// What `reads` name, to look for from module `scope`, planned in `home` when theirs is not.
fn looked_for<'a>(
    reads: &'a [Call],
    scope: &'a str,
    home: &'a str,
    by_value: bool,
) -> impl Iterator<Item = Wanted> + 'a {
    reads.iter().map(move |read| Wanted {
        scope: scope.to_string(),
        home: home.to_string(),
        read: read.clone(),
        by_value,
    })
}

/// The leaf of the definition at `key` (module, name) that a planned value calls, or why it
/// cannot be one; `None` when `key` is no definition, or one already planned.
fn called_definition(
    modules: &BTreeMap<String, Module>,
    leaves: &Leaves,
    key: &(String, String),
    options: &ExtractOptions,
) -> Option<Result<(Node, LeafUses), String>> {
    if leaves.contains_key(key) {
        return None;
    }
    let module = modules.get(&key.0)?;
    let def = module.defs.get(&key.1)?;
    Some(definition_leaf(&key.0, module, def, options))
}

/// The data leaf `read` names, seen from module `scope`: the library's own, or the copy
/// planned in `home` of a name from a module the plan leaves out.
pub(super) fn data_target<'a>(
    modules: &BTreeMap<String, Module>,
    leaves: &'a Leaves,
    scope: &str,
    home: &str,
    read: &Call,
) -> Option<&'a Node> {
    let is_data = |node: &&Node| node.kind == NodeKind::Data;
    if let Some(node) = resolve_call(modules, scope, read)
        .and_then(|key| leaves.get(&key))
        .filter(is_data)
    {
        return Some(node);
    }
    match read.object.is_empty() {
        true => leaves
            .get(&(home.to_string(), read.name.clone()))
            .filter(is_data),
        false => None,
    }
}

/// The leaf for `data` (assigned to a name in `defined_in`) planned as `local` in `home`, or
/// why it cannot be.
fn planned(
    modules: &BTreeMap<String, Module>,
    home: &str,
    local: &str,
    defined_in: &str,
    data: &DataDef,
) -> Result<Node, String> {
    let at = modules.get(home).ok_or("its module is not read")?;
    let path = module_path(home, at.is_package);
    if at.is_package {
        return Err("it would go in a package's `__init__.py`, which the engine writes".into());
    }
    if path_problem(&path).is_some() {
        return Err("its module cannot be planned".into());
    }
    if at.defs.contains_key(local) {
        return Err("its module also defines the name by a `def` or `class`".into());
    }
    if !is_identifier(local) {
        return Err("its name is not a Python identifier the plan accepts".into());
    }
    if let Some(how) = &data.rebound {
        return Err(format!(
            "it is changed at module level after its assignment ({how}), so its value at import is not the one written"
        ));
    }
    let qualified = format!("{home}.{local}");
    let own = || {
        format!(
            "The module-level `{local}` of `{defined_in}`: {}.",
            data.what
        )
    };
    let docstring = data.docstring.clone().unwrap_or_else(own);
    Ok(match &data.value {
        Ok(value) => data_node(&qualified, local, &path, docstring, Some(value)),
        Err(_) => data_node(
            &qualified,
            local,
            &path,
            quoted(docstring, local, data),
            None,
        ),
    })
}

/// A value-less leaf's docstring: the library's, and its assignment when it is short.
fn quoted(docstring: String, local: &str, data: &DataDef) -> String {
    let source = data.source.trim();
    if source.len() > MAX_QUOTED_BYTES || source.contains("\"\"\"") {
        return docstring;
    }
    let assignment = format!("{local} = {source}");
    let indented: Vec<String> = assignment.lines().map(|l| format!("    {l}")).collect();
    format!(
        "{docstring}\n\nThe library assigns it as:\n\n{}",
        indented.join("\n")
    )
}

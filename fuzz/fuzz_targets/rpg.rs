//! RPG JSON -> parse -> validate -> plan preview, the path every `zerorepo plan` and `generate`
//! takes with a user's file. None of it may panic, hang or overflow the stack, whatever the
//! bytes. Only the public entry points of `rpg` are used: that module is being reworked.
//!
//! On a valid RPG the plan must also keep its promise: every node listed once, each after the
//! nodes it depends on.

#![no_main]

use std::collections::HashMap;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use zerorepo::schedule::plan;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let rpg = match zerorepo::rpg::load::parse_str(text, Path::new("fuzz.json")) {
        Ok(rpg) => rpg,
        Err(e) => {
            // The message is what the user sees: building it must not panic either.
            let _ = e.to_string();
            return;
        }
    };
    let valid = match zerorepo::rpg::validate(rpg) {
        Ok(valid) => valid,
        Err(errors) => {
            assert!(!errors.is_empty(), "validation failed without saying why");
            for e in errors {
                let _ = e.to_string();
            }
            return;
        }
    };
    let plan = plan::build(&valid);
    let shown = plan::render_text(&plan);
    assert!(shown.starts_with("Generation order: "));

    let entries: Vec<&plan::PlanEntry> = plan.subgraphs.iter().flat_map(|s| &s.nodes).collect();
    assert_eq!(
        entries.len(),
        plan.total_nodes,
        "every node is planned once"
    );
    let position: HashMap<&str, usize> = entries
        .iter()
        .map(|e| (e.id.as_str(), e.position))
        .collect();
    assert_eq!(position.len(), entries.len(), "node ids are unique");
    let mut positions: Vec<usize> = entries.iter().map(|e| e.position).collect();
    positions.sort_unstable();
    assert!(
        positions.iter().copied().eq(1..=entries.len()),
        "positions are 1..=n"
    );
    for entry in &entries {
        for dep in &entry.depends_on {
            let at = position
                .get(dep.as_str())
                .unwrap_or_else(|| panic!("{} depends on {dep}, which is not planned", entry.id));
            assert!(
                *at < entry.position,
                "{} is planned before its dependency {dep}",
                entry.id
            );
        }
    }
});

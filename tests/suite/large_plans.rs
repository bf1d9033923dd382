//! Huge and deep plans get a clear answer from the binary: valid and ordered, or exit 2 with a
//! short message. These run the real `zerorepo` because a stack overflow aborts the whole
//! process (exit 134), which no in-process test could report; before the graph walks were made
//! iterative a 50,000-node chain or cycle did exactly that.

use super::support;

/// JSON for `n` leaves `n000000`, `n000001`, ... where node `i` depends on `deps(i)`; with
/// `package`, every leaf lies under a package composite `pkg` (which must come first).
fn plan_json(n: usize, package: bool, deps: impl Fn(usize) -> Vec<usize>) -> String {
    let mut nodes: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let deps: Vec<String> = deps(i).into_iter().map(|d| format!("n{d:06}")).collect();
            serde_json::json!({
                "id": format!("n{i:06}"), "name": format!("f{i}"), "type": "function",
                "node_type": "leaf", "file_path": format!("src/pkg/m{}.py", i / 100),
                "docstring": "Does one thing.", "dependencies": deps
            })
        })
        .collect();
    if package {
        nodes.push(serde_json::json!({
            "id": "pkg", "name": "pkg", "type": "package", "node_type": "composite",
            "file_path": "src/pkg"
        }));
    }
    serde_json::json!({ "nodes": nodes }).to_string()
}

/// Runs `zerorepo ARGS RPG` and returns (exit code, stdout, stderr).
fn zerorepo(args: &[&str], rpg: &std::path::Path) -> (i32, String, String) {
    support::run(support::zerorepo().args(args).arg(rpg))
}

/// The ids of `plan --json`, in generation order.
fn planned_ids(stdout: &str) -> Vec<String> {
    let plan: serde_json::Value = serde_json::from_str(stdout).expect("plan --json is JSON");
    let mut entries: Vec<(u64, String)> = plan["subgraphs"]
        .as_array()
        .expect("subgraphs")
        .iter()
        .flat_map(|s| s["nodes"].as_array().expect("nodes").iter())
        .map(|e| {
            (
                e["position"].as_u64().expect("position"),
                e["id"].as_str().expect("id").to_string(),
            )
        })
        .collect();
    entries.sort();
    entries.into_iter().map(|(_, id)| id).collect()
}

#[test]
fn a_100000_node_chain_is_valid_and_planned_in_order() {
    let n = 100_000;
    let (_dir, rpg) = support::rpg_file(&plan_json(n, false, |i| {
        if i == 0 { vec![] } else { vec![i - 1] }
    }));
    let (code, stdout, stderr) = zerorepo(&["validate"], &rpg);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("valid (100000 nodes, 0 edges)"), "{stdout}");
    // 99,999 "no edge says so" warnings are summed up, not printed one per line.
    assert!(
        stderr.lines().count() < 30,
        "{} lines",
        stderr.lines().count()
    );
    assert!(
        stderr.contains("… and 99979 more dependencies that no edge states"),
        "{stderr}"
    );

    let (code, stdout, stderr) = zerorepo(&["plan", "--json"], &rpg);
    assert_eq!(code, 0, "stderr: {stderr}");
    let expected: Vec<String> = (0..n).map(|i| format!("n{i:06}")).collect();
    assert!(
        planned_ids(&stdout) == expected,
        "the chain is not in order"
    );
}

#[test]
fn a_100000_node_cycle_is_rejected_with_a_short_message() {
    let n = 100_000;
    let (dir, rpg) = support::rpg_file(&plan_json(n, false, |i| vec![(i + 1) % n]));
    let summary = "dependency cycle of 100000 nodes: n000000 -> n000001 -> n000002 -> n000003 -> n000004 -> … 99991 more nodes … -> n099996 -> n099997 -> n099998 -> n099999 -> n000000";
    for command in ["validate", "plan"] {
        let (code, stdout, stderr) = zerorepo(&[command], &rpg);
        assert_eq!(code, 2, "{command}\nstdout: {stdout}\nstderr: {stderr}");
        assert!(stderr.contains(summary), "{command}: {stderr}");
        assert!(
            stderr.contains("… 99990 more steps …"),
            "{command}: {stderr}"
        );
        assert!(stderr.len() < 2_000, "{command}: {} bytes", stderr.len());
    }

    let (code, stdout, _) = zerorepo(&["validate", "--json"], &rpg);
    assert_eq!(code, 2);
    assert!(stdout.len() < 2_000, "{} bytes of JSON", stdout.len());
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(report["errors"][0], summary);

    let out = dir.path().join("out");
    let (code, _, stderr) = support::run(
        support::zerorepo()
            .arg("generate")
            .arg(&rpg)
            .arg("--out")
            .arg(&out)
            .arg("--llm")
            .arg("scripted:/nonexistent/script.jsonl"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(summary), "{stderr}");
    assert!(!out.exists(), "generate wrote {}", out.display());
}

#[test]
fn a_100000_node_tree_under_one_package_is_valid_and_planned_in_dependency_order() {
    let n = 100_000;
    let parent_of = |i: usize| if i == 0 { vec![] } else { vec![(i - 1) / 2] };
    let (_dir, rpg) = support::rpg_file(&plan_json(n, true, parent_of));
    let (code, stdout, stderr) = zerorepo(&["validate"], &rpg);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("valid (100001 nodes, 0 edges)"), "{stdout}");

    let (code, stdout, stderr) = zerorepo(&["plan", "--json"], &rpg);
    assert_eq!(code, 0, "stderr: {stderr}");
    let ids = planned_ids(&stdout);
    assert_eq!(ids.len(), n + 1);
    assert_eq!(ids[0], "pkg", "the package holding every leaf comes first");
    let at: std::collections::HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    for i in 1..n {
        let (node, dep) = (format!("n{i:06}"), format!("n{:06}", (i - 1) / 2));
        assert!(at[dep.as_str()] < at[node.as_str()], "{dep} after {node}");
    }
}

#[test]
fn a_deep_parent_chain_is_planned_with_bounded_indentation() {
    // Composites without files, each the parent of the next: the tree's depth is the plan's
    // length, and indenting each line by its full depth printed gigabytes at 100,000 nodes.
    let n = 3_000;
    let nodes: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let mut node = serde_json::json!({
                "id": format!("c{i:05}"), "name": format!("c{i}"), "type": "package",
                "node_type": "composite"
            });
            if i > 0 {
                node["parent"] = format!("c{:05}", i - 1).into();
            }
            node
        })
        .collect();
    let (_dir, rpg) = support::rpg_file(&serde_json::json!({ "nodes": nodes }).to_string());
    let (code, stdout, stderr) = zerorepo(&["plan"], &rpg);
    assert_eq!(code, 0, "stderr: {stderr}");
    let widest = stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(widest < 120, "a line of {widest} bytes");
    assert!(
        stdout.contains("(2999 deep) c02999 c2999 [package]"),
        "{}",
        stdout.lines().last().unwrap_or_default()
    );
}

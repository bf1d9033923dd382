//! Bad input is rejected before any work starts: exit code 2, a message that names the node and
//! the field at fault, and nothing written. `generate` is run with an empty (but existing)
//! scripted-provider script, so the provider is never what fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support;

/// A temp dir with an RPG, an empty scripted-provider script, and an output path that does not
/// exist yet.
struct Case {
    dir: tempfile::TempDir,
    rpg: PathBuf,
}

impl Case {
    /// An inline RPG written to `rpg.json`.
    fn new(rpg_text: &str) -> Case {
        let (dir, rpg) = support::rpg_file(rpg_text);
        Case::with_rpg(dir, rpg)
    }

    /// One of the repository's fixtures.
    fn fixture(name: &str) -> Case {
        let dir = tempfile::tempdir().expect("tempdir");
        Case::with_rpg(dir, support::fixture(name).join("rpg.json"))
    }

    fn with_rpg(dir: tempfile::TempDir, rpg: PathBuf) -> Case {
        std::fs::write(dir.path().join("script.jsonl"), "").expect("write empty script");
        Case { dir, rpg }
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn validate(&self, extra: &[&str]) -> (i32, String, String) {
        support::run(
            support::zerorepo()
                .arg("validate")
                .arg(&self.rpg)
                .args(extra),
        )
    }

    /// `generate RPG --out OUT --llm scripted:EMPTY` plus `extra`.
    fn generate(&self, extra: &[&str]) -> (i32, String, String) {
        let mut llm = std::ffi::OsString::from("scripted:");
        llm.push(self.dir.path().join("script.jsonl"));
        let mut cmd = self.generate_without_llm();
        cmd.arg("--llm").arg(llm).args(extra);
        support::run(&mut cmd)
    }

    fn generate_without_llm(&self) -> Command {
        let mut cmd = support::zerorepo();
        cmd.arg("generate")
            .arg(&self.rpg)
            .arg("--out")
            .arg(self.out());
        cmd
    }

    /// Both `validate` and `generate` exit 2 with every fragment of `expected` on stderr, and
    /// the output directory is never created. Returns generate's stderr.
    fn assert_rejected(&self, expected: &[&str]) -> String {
        let (code, stdout, stderr) = self.validate(&[]);
        assert_rejection("validate", code, &stdout, &stderr, expected);
        let (code, stdout, stderr) = self.generate(&[]);
        assert_rejection("generate", code, &stdout, &stderr, expected);
        assert_not_written(&self.out());
        stderr
    }
}

fn assert_rejection(what: &str, code: i32, stdout: &str, stderr: &str, expected: &[&str]) {
    assert_eq!(
        code, 2,
        "{what} should exit 2\nstdout: {stdout}\nstderr: {stderr}"
    );
    for fragment in expected {
        assert!(
            stderr.contains(fragment),
            "{what}: stderr lacks {fragment:?}\nstderr: {stderr}"
        );
    }
}

fn assert_not_written(out: &Path) {
    assert!(
        !out.exists(),
        "{} was created: {:?}",
        out.display(),
        support::tree(out).keys().collect::<Vec<_>>()
    );
}

/// Names of the entries directly in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A one-leaf RPG whose leaf `a` has the given file_path (a JSON string literal, escapes kept).
fn one_leaf_at(file_path_json: &str) -> String {
    format!(
        r#"{{"nodes": [
  {{"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "{file_path_json}", "docstring": "Alpha."}}
]}}"#
    )
}

#[test]
fn invalid_json_is_rejected_with_line_and_column() {
    // Line 3 lacks the comma before "type": serde_json stops at that quote, column 29.
    let case = Case::new(
        "{\n  \"nodes\": [\n    {\"id\": \"a\", \"name\": \"a\" \"type\": \"function\"}\n  ]\n}\n",
    );
    let rpg = case.rpg.display().to_string();
    case.assert_rejected(&[&format!(
        "{rpg}: invalid RPG JSON at line 3, column 29: expected `,` or `}}`"
    )]);
}

#[test]
fn duplicate_ids_are_rejected_and_nothing_is_written() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Alpha."},
  {"id": "b", "name": "beta", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Beta."},
  {"id": "a", "name": "gamma", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Gamma."}
]}"#,
    );
    case.assert_rejected(&[
        "is not a valid RPG (1 problem(s))",
        "duplicate node id `a` (nodes #0 and #2)",
    ]);
}

#[test]
fn unknown_id_in_dependencies_is_rejected_and_nothing_is_written() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Alpha."},
  {"id": "b", "name": "beta", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Beta.", "dependencies": ["a", "ghost"]}
]}"#,
    );
    case.assert_rejected(&[
        "(1 problem(s))",
        "node `b`: dependencies refers to unknown node `ghost`",
    ]);
}

#[test]
fn unknown_id_in_edge_source_or_target_is_rejected_and_nothing_is_written() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Alpha."}
],
"edges": [
  {"source": "a", "target": "ghost_target", "type": "function_call"},
  {"source": "ghost_source", "target": "a", "type": "imports"}
]}"#,
    );
    case.assert_rejected(&[
        "(2 problem(s))",
        "edge #0 (a -> ghost_target): unknown node `ghost_target`",
        "edge #1 (ghost_source -> a): unknown node `ghost_source`",
    ]);
}

#[test]
fn unknown_parent_is_rejected_and_nothing_is_written() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Alpha.", "parent": "mod_ghost"}
]}"#,
    );
    case.assert_rejected(&[
        "(1 problem(s))",
        "node `a`: parent refers to unknown node `mod_ghost`",
    ]);
}

#[test]
fn dependency_cycle_is_rejected_with_its_path() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "node_c", "name": "gamma", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Gamma.", "dependencies": ["node_a"]},
  {"id": "node_b", "name": "beta", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Beta.", "dependencies": ["node_c"]},
  {"id": "node_a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Alpha.", "dependencies": ["node_b"]}
]}"#,
    );
    case.assert_rejected(&[
        "dependency cycle: node_a -> node_b -> node_c -> node_a",
        "node_a depends on node_b (dependencies)",
        "node_c depends on node_a (dependencies)",
    ]);
}

#[test]
fn cycle_fixture_is_rejected_with_its_path() {
    let case = Case::fixture("cycle");
    case.assert_rejected(&[
        "(1 problem(s))",
        "dependency cycle: node_a -> node_b -> node_c -> node_a",
    ]);
}

#[test]
fn leaf_without_docstring_is_rejected_and_nothing_is_written() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py"}
]}"#,
    );
    case.assert_rejected(&["(1 problem(s))", "leaf node `a`: missing docstring"]);
}

#[test]
fn leaf_with_whitespace_only_docstring_is_rejected_and_nothing_is_written() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": " \n\t "}
]}"#,
    );
    case.assert_rejected(&["(1 problem(s))", "leaf node `a`: missing docstring"]);
}

#[test]
fn absolute_file_path_is_rejected_and_nothing_is_written() {
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let target = elsewhere.path().join("escaped.py");
    let case = Case::new(&one_leaf_at(&target.display().to_string()));
    case.assert_rejected(&[&format!(
        "node `a`: file_path `{}` is absolute (it must be relative to the output directory)",
        target.display()
    )]);
    assert!(support::is_empty_dir(elsewhere.path()));
}

#[test]
fn file_path_with_parent_component_is_rejected_and_nothing_is_written() {
    // Relative to OUT this would land next to it, in the case's temp dir.
    let case = Case::new(&one_leaf_at("src/../../escaped.py"));
    case.assert_rejected(&["node `a`: file_path `src/../../escaped.py` contains `..`"]);
    assert!(!case.dir.path().join("escaped.py").exists());
}

#[test]
fn file_path_with_backslash_is_rejected_and_nothing_is_written() {
    let case = Case::new(&one_leaf_at(r"src\\m.py"));
    // Control characters and backslashes are shown escaped, as in a Rust/JSON string.
    case.assert_rejected(&[r"node `a`: file_path `src\\m.py` contains a backslash (use `/`)"]);
}

#[test]
fn file_path_with_nul_is_rejected_and_nothing_is_written() {
    let case = Case::new(&one_leaf_at(r"src/m\u0000.py"));
    case.assert_rejected(&[r"node `a`: file_path `src/m\0.py` contains a NUL byte"]);
}

#[test]
fn file_path_escaping_through_a_symlink_is_refused_and_nothing_is_written() {
    let Some(_) = support::require_python() else {
        return; // generate checks for pytest before it looks at the output directory
    };
    let case = Case::new(&one_leaf_at("src/x.py"));
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let out = case.out();
    std::fs::create_dir(&out).expect("create out");
    std::os::unix::fs::symlink(elsewhere.path(), out.join("src")).expect("symlink");
    let expected = "node `a`: file_path `src/x.py` escapes the output directory through symlink";

    let (code, stdout, stderr) = case.generate(&[]);
    assert_rejection("generate", code, &stdout, &stderr, &[expected]);
    assert_eq!(
        entries(&out),
        ["src"],
        "generate wrote into {}",
        out.display()
    );
    assert!(
        support::is_empty_dir(elsewhere.path()),
        "generate wrote through the link: {:?}",
        entries(elsewhere.path())
    );

    let out_arg = out.display().to_string();
    let (code, stdout, stderr) = case.validate(&["--out", &out_arg]);
    assert_rejection("validate --out", code, &stdout, &stderr, &[expected]);
    let (code, stdout, stderr) = case.validate(&["--out", &out_arg, "--json"]);
    assert_eq!(
        code, 2,
        "validate --out --json\nstdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains(expected),
        "validate --json stdout: {stdout}"
    );

    // Without --out, validate cannot know about the link and accepts the plan.
    let (code, _, stderr) = case.validate(&[]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(entries(&out), ["src"]);
    assert!(support::is_empty_dir(elsewhere.path()));
}

#[test]
fn engine_state_escaping_through_a_symlink_is_refused_and_nothing_is_written() {
    let Some(_) = support::require_python() else {
        return;
    };
    let case = Case::new(&one_leaf_at("src/x.py"));
    let out = case.out();
    std::fs::create_dir(&out).expect("create out");
    let docs = tempfile::tempdir().expect("tempdir");
    let state = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(docs.path(), out.join("docs")).expect("symlink");
    std::os::unix::fs::symlink(state.path(), out.join(".zerorepo")).expect("symlink");

    let (code, stdout, stderr) = case.generate(&[]);
    assert_eq!(
        (entries(docs.path()), entries(state.path())),
        (Vec::<String>::new(), Vec::<String>::new()),
        "generate wrote through the links\nstdout: {stdout}\nstderr: {stderr}"
    );
    assert_rejection("generate", code, &stdout, &stderr, &["symlink"]);
}

#[test]
fn leaf_file_that_is_not_python_is_rejected_and_nothing_is_written() {
    let case = Case::new(&one_leaf_at("src/alpha.txt"));
    case.assert_rejected(&[
        "(1 problem(s))",
        "leaf node `a`: file_path `src/alpha.txt` is not a .py file",
    ]);
}

#[test]
fn dependencies_and_edges_that_disagree_only_warn() {
    // b lists a but no edge says so; an edge makes c call a but c does not list it.
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Alpha."},
  {"id": "b", "name": "beta", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Beta.", "dependencies": ["a"]},
  {"id": "c", "name": "gamma", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Gamma."}
],
"edges": [
  {"source": "c", "target": "a", "type": "function_call"}
]}"#,
    );
    let (code, stdout, stderr) = case.validate(&[]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("valid (3 nodes, 1 edges)"),
        "stdout: {stdout}"
    );
    assert!(
        stderr.contains("node `b` lists `a` in dependencies but no edge says so"),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("function_call") && stderr.contains("edge makes `c` depend on `a`"),
        "stderr: {stderr}"
    );

    let (code, stdout, stderr) = case.validate(&["--json"]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("validate --json");
    assert_eq!(report["valid"], true);
    assert_eq!(
        report["warnings"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
}

#[test]
fn missing_local_model_is_rejected_with_the_command_that_fixes_it_and_nothing_is_written() {
    let case = Case::fixture("chain");
    // No --llm: the default is the embedded model, here pointed at a file that does not exist.
    let (code, stdout, stderr) = support::run(
        case.generate_without_llm()
            .env("ZEROREPO_MODEL", "/nonexistent/model.gguf"),
    );
    assert_rejection(
        "generate",
        code,
        &stdout,
        &stderr,
        &["no local model at /nonexistent/model.gguf: run `zerorepo model pull`"],
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_not_written(&case.out());
}

#[test]
fn start_from_unknown_node_is_rejected_and_nothing_is_written() {
    let Some(_) = support::require_python() else {
        return; // generate checks for pytest before it looks at --start-from-node
    };
    let case = Case::fixture("chain");
    let (code, stdout, stderr) = case.generate(&["--start-from-node", "node_ghost"]);
    assert_rejection(
        "generate",
        code,
        &stdout,
        &stderr,
        &["--start-from-node node_ghost: no such node in the RPG"],
    );
    assert_not_written(&case.out());
}

#[test]
fn start_from_node_whose_dependencies_have_not_passed_is_rejected() {
    let Some(_) = support::require_python() else {
        return; // generate checks for pytest before it looks at --start-from-node
    };
    let case = Case::fixture("chain");
    let (code, stdout, stderr) = case.generate(&["--start-from-node", "node_c"]);
    assert_rejection(
        "generate",
        code,
        &stdout,
        &stderr,
        &[
            "cannot start from node_c: these dependencies have not passed:",
            "node_a (pending)",
            "node_b (pending)",
        ],
    );
    assert_not_written(&case.out());
}

#[test]
fn validate_json_reports_errors_as_json() {
    let case = Case::new(
        r#"{"nodes": [
  {"id": "a", "name": "alpha", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "Alpha."},
  {"id": "a", "name": "beta", "type": "function", "node_type": "leaf", "file_path": "src/m.txt", "docstring": "Beta."}
]}"#,
    );
    let (code, stdout, stderr) = case.validate(&["--json"]);
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(report["valid"], false, "{report}");
    assert_eq!(
        report["errors"],
        serde_json::json!([
            "duplicate node id `a` (nodes #0 and #1)",
            "leaf node `a`: file_path `src/m.txt` is not a .py file",
        ]),
        "{report}"
    );
}

#[test]
fn validate_json_reports_invalid_json_as_json() {
    let case = Case::new("{\"nodes\": [}");
    let (code, stdout, stderr) = case.validate(&["--json"]);
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(report["valid"], false, "{report}");
    let errors = report["errors"].as_array().expect("errors is an array");
    assert_eq!(errors.len(), 1, "{report}");
    let error = errors[0].as_str().unwrap_or_default();
    assert!(
        error.contains("invalid RPG JSON at line 1, column 12"),
        "{report}"
    );
}

/// One leaf line of an RPG's `nodes` array, with the given id and file_path (JSON literals,
/// escapes kept) and extra JSON fields. Each leaf has a name of its own (`f0`, `f1`, ...): two
/// leaves of one name in one file are refused.
fn leaf_json(id_json: &str, file_path_json: &str, extra: &str) -> String {
    static NAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = NAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        r#"{{"id": "{id_json}", "name": "f{name}", "type": "function", "node_type": "leaf", "file_path": "{file_path_json}", "docstring": "Does f."{extra}}}"#
    )
}

fn plan_of(nodes: &[String]) -> String {
    format!("{{\"nodes\": [\n  {}\n]}}", nodes.join(",\n  "))
}

#[test]
fn paths_that_packaging_tools_run_or_read_are_rejected_before_anything_runs() {
    // `pip install -e .` at assembly would run a plan-written setup.py on the host.
    let case = Case::new(&plan_of(&[
        leaf_json("setup", "setup.py", ""),
        leaf_json("nested_setup", "src/pkg/setup.py", ""),
        leaf_json("site", "src/sitecustomize.py", ""),
        leaf_json("conftest", "conftest.py", ""),
        r#"{"id": "pyproject", "name": "p", "type": "module", "node_type": "composite", "file_path": "pyproject.toml"}"#.into(),
        r#"{"id": "pth", "name": "p", "type": "module", "node_type": "composite", "file_path": "src/evil.pth"}"#.into(),
        r#"{"id": "report", "name": "p", "type": "package", "node_type": "composite", "file_path": "docs/generation_report.md"}"#.into(),
        r#"{"id": "readme", "name": "p", "type": "package", "node_type": "composite", "file_path": "README.md"}"#.into(),
    ]));
    case.assert_rejected(&[
        "(8 problem(s))",
        "node `setup`: file_path `setup.py` names `setup.py`, which `pip install -e .` runs when the repository is assembled",
        "node `nested_setup`: file_path `src/pkg/setup.py` names `setup.py`",
        "node `site`: file_path `src/sitecustomize.py` names `sitecustomize.py`",
        "node `conftest`: file_path `conftest.py` names the root `conftest.py`",
        "node `pyproject`: file_path `pyproject.toml` names `pyproject.toml`",
        "node `pth`: file_path `src/evil.pth` names a `.pth` file",
        "node `report`: file_path `docs/generation_report.md` names `docs/generation_report.md`, which assembly writes",
        "node `readme`: file_path `README.md` names `README.md`, which assembly writes",
    ]);
}

#[test]
fn hidden_dotted_empty_colon_and_too_deep_paths_are_rejected_and_nothing_is_written() {
    let deep = format!("{}/m.py", vec!["p"; 40].join("/"));
    let case = Case::new(&plan_of(&[
        leaf_json("git", ".git/hooks/x.py", ""),
        leaf_json("engine", ".zerorepo/x.py", ""),
        leaf_json("dot", "src/./x.py", ""),
        leaf_json("empty", "src//x.py", ""),
        leaf_json("url", "file://x.py", ""),
        leaf_json("escape", r"src/\u001b[2Jx.py", ""),
        leaf_json("deep", &deep, ""),
        r#"{"id": "here", "name": "p", "type": "package", "node_type": "composite", "file_path": "."}"#.into(),
    ]));
    case.assert_rejected(&[
        "(8 problem(s))",
        "node `git`: file_path `.git/hooks/x.py` has a component starting with `.`: hidden files and directories such as `.git`, `.github`, `.gitignore` and the engine's own `.zerorepo` are off limits",
        "node `engine`: file_path `.zerorepo/x.py` has a component starting with `.`",
        "node `dot`: file_path `src/./x.py` has a `.` component",
        "node `empty`: file_path `src//x.py` has an empty component",
        "node `url`: file_path `file://x.py` has a component containing `:`",
        r"node `escape`: file_path `src/\u{1b}[2Jx.py` contains a control character",
        "node `deep`: file_path `p/p/p/",
        "has more than 32 components",
        "node `here`: file_path `.` has a `.` component",
    ]);
}

#[test]
fn ids_with_control_characters_or_over_255_bytes_are_rejected() {
    let long = "n".repeat(300);
    let case = Case::new(&plan_of(&[
        leaf_json(r"a\u001b]0;owned\u0007", "src/m.py", ""),
        leaf_json(&long, "src/m.py", ""),
    ]));
    let stderr = case.assert_rejected(&[
        "(2 problem(s))",
        r"node #0: id `a\u{1b}]0;owned\u{7}` contains a control character",
        "is longer than 255 bytes",
    ]);
    assert!(
        !stderr.contains('\u{1b}'),
        "a raw escape reached the terminal"
    );
}

#[test]
fn subgraph_ids_a_git_tag_cannot_hold_are_rejected_with_the_rule() {
    let case = Case::new(&plan_of(&[
        leaf_json("a", "src/m.py", r#", "subgraph_id": "my stats""#),
        leaf_json("b", "src/m.py", r#", "subgraph_id": "my stats""#),
        leaf_json("c", "src/m.py", r#", "subgraph_id": "x..y""#),
        leaf_json("d", "src/m.py", r#", "subgraph_id": "ok-1.2_b""#),
    ]));
    case.assert_rejected(&[
        "(2 problem(s))",
        "node `a` (and 1 more node(s)): subgraph_id `my stats` is not allowed: it becomes part of the git tag `phase4-subgraph-<id>`, so it must be 1 to 100 ASCII letters, digits, `.`, `_` or `-`",
        "node `c`: subgraph_id `x..y` is not allowed",
    ]);
}

#[test]
fn every_field_of_the_wrong_type_is_reported_with_its_node_and_field() {
    let case = Case::new(&plan_of(&[
        r#"{"id": "a", "name": 5, "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "A."}"#.into(),
        r#"{"id": "b", "name": "b", "type": "function", "node_type": "leaf", "file_path": "src/m.py", "docstring": "B.", "dependencies": "a"}"#.into(),
        r#"{"name": "c", "type": "function", "node_type": "leef"}"#.into(),
    ]));
    let rpg = case.rpg.display().to_string();
    case.assert_rejected(&[
        &format!("{rpg}: not a valid RPG (4 problem(s)):"),
        "node #0 (`a`): field `name`: expected a string, got the number 5",
        "node #1 (`b`): field `dependencies`: expected an array of strings, got the string \"a\"",
        "node #2: missing field `id`",
        "node #2: field `node_type`: expected one of \"leaf\", \"composite\", got the string \"leef\"",
    ]);
    let (code, stdout, stderr) = case.validate(&["--json"]);
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(
        report["errors"][0], "node #0 (`a`): field `name`: expected a string, got the number 5",
        "{report}"
    );
    assert_eq!(
        report["errors"].as_array().map(Vec::len),
        Some(4),
        "one entry per problem: {report}"
    );
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let case = Case::new(&format!("\u{feff}{}", one_leaf_at("src/m.py")));
    let (code, stdout, stderr) = case.validate(&[]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("valid (1 nodes, 0 edges)"), "{stdout}");
}

#[test]
fn a_plan_that_is_not_utf8_is_rejected_with_the_place_of_the_first_bad_byte() {
    let case = Case::new("");
    let mut bytes = one_leaf_at("src/m.py").into_bytes();
    let at = bytes
        .iter()
        .position(|&b| b == b'A')
        .expect("the docstring's A");
    bytes[at] = 0xC3; // a lead byte without its continuation
    std::fs::write(&case.rpg, &bytes).expect("write rpg");
    let rpg = case.rpg.display().to_string();
    case.assert_rejected(&[&format!(
        "{rpg}: not UTF-8: invalid byte at offset {at} (line 2, column 112)"
    )]);
}

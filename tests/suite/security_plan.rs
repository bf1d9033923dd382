//! Hostile plans from the outside probe of issue 38, each refused by `validate` (exit 2, a
//! message naming the node and the reason, nothing written by `generate`) or, for plan text
//! that reaches Markdown, escaped.

use std::path::Path;

use serde_json::{Value, json};

use super::support;

/// A function leaf.
fn leaf(id: &str, name: &str, path: &str) -> Value {
    json!({"id": id, "name": name, "type": "function", "node_type": "leaf",
           "file_path": path, "docstring": "Does it."})
}

/// A composite node of `kind` (`module`, `package`, ...).
fn composite(id: &str, name: &str, kind: &str, path: &str) -> Value {
    json!({"id": id, "name": name, "type": kind, "node_type": "composite", "file_path": path})
}

/// `validate` and `generate` (with an empty scripted script) of `nodes` both exit 2 with
/// every fragment of `expected` on stderr, and `generate` creates nothing. Returns
/// validate's stderr.
fn assert_refused(nodes: Vec<Value>, expected: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let rpg = dir.path().join("rpg.json");
    std::fs::write(&rpg, json!({ "nodes": nodes }).to_string()).unwrap();
    std::fs::write(dir.path().join("script.jsonl"), "").unwrap();
    let (code, stdout, validated) = support::run(support::zerorepo().arg("validate").arg(&rpg));
    assert_eq!(code, 2, "validate: {stdout}{validated}");
    for fragment in expected {
        assert!(
            validated.contains(fragment),
            "validate's stderr lacks {fragment:?}:\n{validated}"
        );
    }
    let out = dir.path().join("out");
    let (code, _, stderr) = support::run(
        support::zerorepo()
            .current_dir(dir.path())
            .args(["generate", "rpg.json", "--out", "out"])
            .args(["--llm", "scripted:script.jsonl"]),
    );
    assert_eq!(code, 2, "generate: {stderr}");
    assert!(!out.exists(), "generate created {}", out.display());
    validated
}

#[test]
fn a_plan_module_named_like_a_stdlib_module_is_refused() {
    assert_refused(
        vec![
            leaf("lc", "getline", "linecache.py"),
            leaf("js", "loads", "src/json.py"),
            leaf("pkg", "run", "json/x.py"),
            leaf("pt", "fixture", "src/pytest.py"),
            composite("em", "email", "package", "src/email"),
            leaf("fine", "loads", "src/pkg/json.py"),
        ],
        &[
            "(5 problem(s))",
            "node `lc`: file_path `linecache.py` would shadow the standard-library module `linecache`: the repository root and `src/` are on `sys.path`",
            "node `js`: file_path `src/json.py` would shadow the standard-library module `json`",
            "node `pkg`: file_path `json/x.py` would shadow the standard-library module `json`",
            "node `pt`: file_path `src/pytest.py` would shadow the test runner's module `pytest`",
            "node `em`: file_path `src/email` would shadow the standard-library module `email`",
        ],
    );
}

#[test]
fn two_functions_with_one_name_in_one_file_are_refused() {
    assert_refused(
        vec![
            leaf("first", "mean", "src/stats/core.py"),
            leaf("second", "mean", "src/stats/core.py"),
            leaf("elsewhere", "mean", "src/stats/other.py"),
        ],
        &[
            "(1 problem(s))",
            "node `second`: name `mean` is also the name of node `first` in `src/stats/core.py`; one file cannot define two functions or classes of one name",
        ],
    );
}

#[test]
fn python_keywords_are_refused_as_function_class_module_and_package_names() {
    let mut class = leaf("cls", "class", "src/pkg/m.py");
    class["type"] = json!("class");
    assert_refused(
        vec![
            leaf("def", "def", "src/pkg/m.py"),
            leaf("none", "None", "src/pkg/m.py"),
            class,
            composite("module", "lambda", "module", "src/pkg/n.py"),
            composite("package", "True", "package", "src/pkg"),
            composite("dir", "pkg", "package", "src/pkg/while"),
        ],
        &[
            "(6 problem(s))",
            "node `def`: name `def` is a Python keyword",
            "node `none`: name `None` is a Python keyword",
            "node `cls`: name `class` is a Python keyword",
            "node `module`: name `lambda` is a Python keyword",
            "node `package`: name `True` is a Python keyword",
            "node `dir`: file_path `src/pkg/while` has a component that is not a Python identifier, or is a keyword",
        ],
    );
}

#[test]
fn a_path_over_1024_bytes_is_refused_before_anything_is_written() {
    // 25 components of 240 bytes: each within the file system's limit, 6 KB in all.
    let path = format!("src/{}/m.py", vec!["d".repeat(240); 25].join("/"));
    assert!(path.len() > 6000);
    assert_refused(
        vec![leaf("long", "f", &path)],
        &[
            "(1 problem(s))",
            "node `long`: file_path `src/ddd",
            "is longer than 1024 bytes",
        ],
    );
}

#[test]
fn non_python_modules_and_non_identifier_packages_are_refused() {
    assert_refused(
        vec![
            composite("sh", "run", "module", "src/p/run.sh"),
            composite("egg", "p", "package", "src/p.egg-info"),
            leaf("leaf_sh", "run", "src/p/run.sh"),
        ],
        &[
            "(3 problem(s))",
            "node `sh`: file_path `src/p/run.sh` does not end in `.py`: a module node names its Python file",
            "node `egg`: file_path `src/p.egg-info` has a component that is not a Python identifier",
            "leaf node `leaf_sh`: file_path `src/p/run.sh` is not a .py file",
        ],
    );
}

#[test]
fn a_plan_module_under_tests_is_refused() {
    assert_refused(
        vec![
            leaf("x", "f", "src/p/x.py"),
            leaf("collides", "g", "tests/test_x.py"),
            leaf("deep", "h", "tests/unit/helpers.py"),
        ],
        &[
            "(2 problem(s))",
            "node `collides`: file_path `tests/test_x.py` lies under `tests/`, where the generated tests are written",
            "node `deep`: file_path `tests/unit/helpers.py` lies under `tests/`",
        ],
    );
}

#[test]
fn bidi_overrides_in_ids_are_refused_and_never_reach_the_terminal_raw() {
    let stderr = assert_refused(
        vec![
            leaf("admin\u{202e}gnp.py", "f", "src/m.py"),
            leaf("iso\u{2066}late", "g", "src/m.py"),
        ],
        &[
            "(2 problem(s))",
            r"node #0: id `admin\u{202e}gnp.py` contains a Unicode bidirectional control character",
            r"node #1: id `iso\u{2066}late` contains a Unicode bidirectional control character",
        ],
    );
    assert!(
        !stderr.contains(['\u{202e}', '\u{2066}']),
        "a raw bidi control reached the terminal: {stderr:?}"
    );
}

#[test]
fn a_docstring_over_64_kib_is_refused_with_its_size() {
    let mut big = leaf("big", "f", "src/m.py");
    big["docstring"] = json!("d".repeat(10 * 1024 * 1024));
    assert_refused(
        vec![big],
        &[
            "(1 problem(s))",
            "node `big`: docstring is 10485760 bytes, more than the 65536 (64 KiB) allowed",
        ],
    );
}
/// `generate` of a plan of composite nodes only (no model call), from `dir`.
fn generate_composites(dir: &Path, rpg: &Value) -> (i32, String, String) {
    std::fs::write(dir.join("rpg.json"), rpg.to_string()).unwrap();
    std::fs::write(dir.join("script.jsonl"), "").unwrap();
    support::run(
        support::zerorepo()
            .current_dir(dir)
            .args(["generate", "rpg.json", "--out", "out"])
            .args(["--llm", "scripted:script.jsonl"]),
    )
}

#[test]
fn plan_html_never_reaches_the_generated_markdown_raw() {
    if support::require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = "<script>alert(1)</script>";
    let rpg = json!({
        "metadata": {
            "project_name": "probe",
            "description": format!("Probe {script}.\n# Injected heading\n```\nfence")
        },
        "nodes": [
            {"id": "pkg", "name": "pkg", "type": "package", "node_type": "composite",
             "file_path": "src/pkg"},
            {"id": "mod", "name": "mod", "type": "module",
             "node_type": "composite", "file_path": "src/pkg/mod.py",
             "docstring": format!("{script} [link](javascript:alert(1)) & more"),
             "parent": "pkg"}
        ]
    });
    let (code, _, stderr) = generate_composites(dir.path(), &rpg);
    assert_eq!(code, 0, "{stderr}");
    for file in ["README.md", "docs/generation_report.md"] {
        let text = std::fs::read_to_string(dir.path().join("out").join(file)).unwrap();
        assert!(
            !text.contains("<script"),
            "{file} holds raw plan HTML:\n{text}"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("# Injected")),
            "{file}: plan text became a heading:\n{text}"
        );
    }
    let readme = std::fs::read_to_string(dir.path().join("out/README.md")).unwrap();
    assert!(
        readme.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{readme}"
    );
    assert!(!readme.contains("[link](javascript"), "{readme}");
}

//! The code tools on real files: outline, symbol edits, the syntax gate, lookup, references
//! and rename (with the language server that `scripts/setup.sh` installs).

use std::path::Path;

use zerorepo::symbols::SymbolTools;
use zerorepo::symbols::lsp::ServerSpec;
use zerorepo::symbols::refactor::RefactorError;
use zerorepo::symbols::tools::ToolsError;

use super::support::{run, zerorepo};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

const SHAPES: &str = r#""""Shapes."""
import math


@functools.lru_cache(maxsize=None)
def area(
    radius: float,
    *,
    precise: bool = False,
) -> float:
    """Area of a circle."""
    # the simple formula
    return math.pi * radius * radius


class Shape:
    sides: int = 0

    @staticmethod
    def unit() -> "Shape":
        return Shape()

    async def load(self, path: str) -> bytes:
        return b""

    def perimeter(self) -> float:
        return 0.0

    def describe(self) -> str:
        return "shape"
"#;

/// A repository with a function used from other modules, under a plain import, a module
/// import and an alias, plus a string and a comment that mention the name.
fn stats_repo(root: &Path) {
    write(root, "pkg/__init__.py", "");
    write(
        root,
        "pkg/stats.py",
        "def calculate_mean(values: list[float]) -> float:\n    return sum(values) / len(values)\n\n\nclass Summary:\n    def mean(self, values):\n        return calculate_mean(values)\n",
    );
    write(
        root,
        "pkg/report.py",
        "from pkg.stats import calculate_mean\nimport pkg.stats\n\n\ndef report(values):\n    # calls calculate_mean twice\n    a = calculate_mean(values)\n    b = pkg.stats.calculate_mean(values)\n    return a, b, \"calculate_mean\"\n",
    );
    write(
        root,
        "tests/test_stats.py",
        "from pkg.stats import calculate_mean as cm\nfrom pkg import stats\n\n\ndef test_mean():\n    assert cm([1.0, 3.0]) == 2.0\n    assert stats.calculate_mean([2.0]) == 2.0\n",
    );
}

/// The language server CI installs; outside CI a missing one skips the test, loudly.
fn language_server(test: &str) -> Option<ServerSpec> {
    match ServerSpec::detect() {
        Some(spec) => Some(spec),
        None if std::env::var_os("CI").is_some() => {
            panic!("CI must provide a language server (scripts/setup.sh installs ty into the venv)")
        }
        None => {
            eprintln!(
                "SKIPPED {test}: no language server (ty or pyright) on PATH or in the set-up venv; run scripts/setup.sh"
            );
            None
        }
    }
}

fn python() -> std::path::PathBuf {
    zerorepo::programs::find("python3").unwrap_or_else(|| "python3".into())
}

#[test]
fn outline_extracts_signatures_with_decorators_async_multi_line_params_and_type_hints() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "shapes.py", SHAPES);
    let tools = SymbolTools::new(dir.path()).unwrap();
    let outline = tools.outline("shapes.py").unwrap();
    assert_eq!(outline.status, "generated");
    let got: Vec<(String, &str, usize, usize, String)> = outline
        .symbols
        .iter()
        .map(|s| {
            (
                s.qualified_name.clone(),
                s.kind.as_str(),
                s.start_line,
                s.end_line,
                s.signature.clone(),
            )
        })
        .collect();
    let expect = |q: &str, k: &'static str, a: usize, b: usize, sig: &str| {
        (q.to_string(), k, a, b, sig.to_string())
    };
    assert_eq!(
        got,
        vec![
            expect(
                "area",
                "function",
                5,
                13,
                "@functools.lru_cache(maxsize=None)\ndef area(\n    radius: float,\n    *,\n    precise: bool = False,\n) -> float:"
            ),
            expect("Shape", "class", 16, 30, "class Shape:"),
            expect(
                "Shape.unit",
                "staticmethod",
                19,
                21,
                "@staticmethod\ndef unit() -> \"Shape\":"
            ),
            expect(
                "Shape.load",
                "async method",
                23,
                24,
                "async def load(self, path: str) -> bytes:"
            ),
            expect(
                "Shape.perimeter",
                "method",
                26,
                27,
                "def perimeter(self) -> float:"
            ),
            expect(
                "Shape.describe",
                "method",
                29,
                30,
                "def describe(self) -> str:"
            ),
        ]
    );
    let area = &outline.symbols[0];
    assert_eq!(
        &SHAPES.as_bytes()[area.start_byte..area.start_byte + 5],
        b"@func"
    );
    assert_eq!(
        tools.outline("later.py").unwrap().status,
        "not yet generated"
    );
}

#[test]
fn find_symbol_returns_every_match_of_an_ambiguous_name() {
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    write(dir.path(), "pkg/other.py", "def mean(xs):\n    return 0\n");
    write(dir.path(), ".venv/lib/site.py", "def mean(): pass\n");
    write(dir.path(), "pkg/__pycache__/x.py", "def mean(): pass\n");
    let tools = SymbolTools::new(dir.path()).unwrap();
    let found: Vec<(String, String)> = tools
        .find_symbol("mean")
        .unwrap()
        .into_iter()
        .map(|m| (m.file.display().to_string(), m.symbol.qualified_name))
        .collect();
    assert_eq!(
        found,
        [
            ("pkg/other.py".to_string(), "mean".to_string()),
            ("pkg/stats.py".to_string(), "Summary.mean".to_string()),
        ]
    );
    assert_eq!(tools.find_symbol("Summary.mean").unwrap().len(), 1);
    assert_eq!(tools.find_symbol("pkg.other.mean").unwrap().len(), 1);

    let (code, stdout, stderr) = run(zerorepo().arg("view").arg(dir.path()).arg("mean"));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("`mean` is ambiguous: 2 matches"),
        "{stdout}"
    );
    assert!(
        stdout.contains("==> pkg/other.py:1 mean (function)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("==> pkg/stats.py:6 Summary.mean (method)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    7 |         return calculate_mean(values)"),
        "{stdout}"
    );
}

#[test]
fn view_outlines_a_path_and_rejects_what_is_not_there_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    let (code, stdout, stderr) = run(zerorepo()
        .arg("view")
        .arg(dir.path())
        .arg("pkg/stats.py")
        .arg("--json"));
    assert_eq!(code, 0, "{stderr}");
    let view: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(view["view"], "outline");
    let names: Vec<&str> = view["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["qualified_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["calculate_mean", "Summary", "Summary.mean"]);

    let (code, _, stderr) = run(zerorepo().arg("view").arg(dir.path()).arg("nothing_here"));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no file or symbol `nothing_here`"),
        "{stderr}"
    );
    let (code, _, stderr) = run(zerorepo().arg("view").arg(dir.path()).arg("../x.py"));
    assert_eq!(code, 2, "{stderr}");
    let (code, _, _) = run(zerorepo()
        .arg("view")
        .arg(dir.path().join("missing"))
        .arg("x"));
    assert_eq!(code, 2);
}

#[tokio::test]
async fn references_without_a_language_server_are_name_based_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    let tools = SymbolTools::new(dir.path()).unwrap().with_server(None);
    let refs = tools.references("calculate_mean").await.unwrap();
    assert!(refs.approximate);
    assert_eq!(refs.backend, "tree-sitter (approximate)");
    assert!(refs.note.as_deref().unwrap().contains("no language server"));
    let places: Vec<(String, usize, &str)> = refs
        .references
        .iter()
        .map(|r| (r.file.display().to_string(), r.line, r.role))
        .collect();
    // The comment and the string on lines 6 and 9 of report.py are not references.
    assert_eq!(
        places,
        [
            ("pkg/report.py".to_string(), 1, "import"),
            ("pkg/report.py".to_string(), 7, "reference"),
            ("pkg/report.py".to_string(), 8, "attribute"),
            ("pkg/stats.py".to_string(), 1, "definition"),
            ("pkg/stats.py".to_string(), 7, "reference"),
            ("tests/test_stats.py".to_string(), 1, "import"),
            ("tests/test_stats.py".to_string(), 7, "attribute"),
        ]
    );
}

#[tokio::test]
async fn rename_refuses_a_name_already_bound_in_the_module_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    write(
        dir.path(),
        "pkg/report.py",
        &format!(
            "{}\n\ndef average(x):\n    return x\n",
            read(dir.path(), "pkg/report.py")
        ),
    );
    let before: Vec<String> = ["pkg/stats.py", "pkg/report.py", "tests/test_stats.py"]
        .iter()
        .map(|f| read(dir.path(), f))
        .collect();
    for server in [None, ServerSpec::detect()] {
        let tools = SymbolTools::new(dir.path()).unwrap().with_server(server);
        // `Summary` is a class in the defining module itself.
        let err = tools.rename("calculate_mean", "Summary").await.unwrap_err();
        assert!(
            matches!(err, ToolsError::Refactor(RefactorError::Collision { .. })),
            "{err}"
        );
        // `average` exists in report.py, which imports the function by name.
        let err = tools.rename("calculate_mean", "average").await.unwrap_err();
        assert!(
            matches!(err, ToolsError::Refactor(RefactorError::Collision { ref file, .. }) if file == Path::new("pkg/report.py")),
            "{err}"
        );
        let err = tools.rename("calculate_mean", "class").await.unwrap_err();
        assert!(err.is_bad_input(), "{err}");
    }
    let after: Vec<String> = ["pkg/stats.py", "pkg/report.py", "tests/test_stats.py"]
        .iter()
        .map(|f| read(dir.path(), f))
        .collect();
    assert_eq!(before, after);
}

/// Occurrences of `word` as a whole word.
fn whole_words(text: &str, word: &str) -> usize {
    text.match_indices(word)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !ident(before) && !ident(after)
        })
        .count()
}

#[tokio::test]
async fn rename_with_the_language_server_updates_every_call_site_and_import_across_files() {
    let Some(server) = language_server(
        "rename_with_the_language_server_updates_every_call_site_and_import_across_files",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    let tools = SymbolTools::new(dir.path())
        .unwrap()
        .with_server(Some(server.clone()));

    let refs = tools.references("calculate_mean").await.unwrap();
    assert_eq!(refs.backend, server.name);
    assert!(!refs.approximate);
    let files: std::collections::BTreeSet<String> = refs
        .references
        .iter()
        .map(|r| r.file.display().to_string())
        .collect();
    assert_eq!(
        files,
        ["pkg/report.py", "pkg/stats.py", "tests/test_stats.py"]
            .map(String::from)
            .into()
    );

    let result = tools
        .rename("calculate_mean", "arithmetic_mean")
        .await
        .unwrap();
    assert_eq!(result.backend, server.name);
    assert!(!result.approximate);
    assert!(result.files.iter().all(|f| f.check.ok));

    assert_calculate_mean_renamed(&tools, dir.path());
}

/// Checks a renamed `stats_repo` by re-parsing, by grep, and by running it.
fn assert_calculate_mean_renamed(tools: &SymbolTools, root: &Path) {
    // Re-parsed: the old name defines nothing, the new one is defined once.
    assert!(tools.find_symbol("calculate_mean").unwrap().is_empty());
    let defined = tools.find_symbol("arithmetic_mean").unwrap();
    assert_eq!(defined.len(), 1);
    assert_eq!(defined[0].file, Path::new("pkg/stats.py"));

    // Grep: every code use moved; the comment and the string literal were left alone.
    let stats = read(root, "pkg/stats.py");
    let report = read(root, "pkg/report.py");
    let test = read(root, "tests/test_stats.py");
    assert_eq!(whole_words(&stats, "calculate_mean"), 0, "{stats}");
    assert_eq!(whole_words(&stats, "arithmetic_mean"), 2, "{stats}");
    assert!(
        report.starts_with("from pkg.stats import arithmetic_mean\n"),
        "{report}"
    );
    assert!(
        report.contains(
            "    a = arithmetic_mean(values)\n    b = pkg.stats.arithmetic_mean(values)\n"
        ),
        "{report}"
    );
    assert!(report.contains("# calls calculate_mean twice"), "{report}");
    assert!(report.contains("\"calculate_mean\""), "{report}");
    assert!(
        test.starts_with("from pkg.stats import arithmetic_mean as cm\n"),
        "{test}"
    );
    assert!(test.contains("stats.arithmetic_mean([2.0])"), "{test}");

    // And the renamed repository still runs.
    let out = std::process::Command::new(python())
        .current_dir(root)
        .args([
            "-c",
            "from pkg.report import report; from tests.test_stats import test_mean; test_mean(); print(report([1.0, 2.0, 3.0]))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "(2.0, 2.0, 'calculate_mean')"
    );
}

#[tokio::test]
async fn rename_without_a_language_server_is_name_based_labelled_and_still_complete_here() {
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    let tools = SymbolTools::new(dir.path()).unwrap().with_server(None);
    let result = tools
        .rename("calculate_mean", "arithmetic_mean")
        .await
        .unwrap();
    assert_eq!(result.backend, "tree-sitter (approximate)");
    assert!(result.approximate);
    assert_calculate_mean_renamed(&tools, dir.path());
}

#[tokio::test]
async fn rename_of_a_method_with_the_language_server_leaves_same_named_functions_alone() {
    let Some(server) = language_server(
        "rename_of_a_method_with_the_language_server_leaves_same_named_functions_alone",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    write(
        dir.path(),
        "pkg/other.py",
        "def mean(xs):\n    return 0\n\n\nvalue = mean([1])\n",
    );
    write(
        dir.path(),
        "pkg/use.py",
        "from pkg.stats import Summary\n\n\ndef go():\n    return Summary().mean([1.0])\n",
    );
    let tools = SymbolTools::new(dir.path())
        .unwrap()
        .with_server(Some(server));
    let result = tools.rename("Summary.mean", "average").await.unwrap();
    let changed: Vec<String> = result
        .files
        .iter()
        .map(|f| f.file.display().to_string())
        .collect();
    assert_eq!(changed, ["pkg/stats.py", "pkg/use.py"]);
    assert!(read(dir.path(), "pkg/use.py").contains("Summary().average([1.0])"));
    assert_eq!(
        read(dir.path(), "pkg/other.py"),
        "def mean(xs):\n    return 0\n\n\nvalue = mean([1])\n"
    );
}

#[test]
fn the_references_and_rename_commands_find_every_use_and_rename_all_files_or_none() {
    let dir = tempfile::tempdir().unwrap();
    stats_repo(dir.path());
    let (code, stdout, stderr) = run(zerorepo()
        .arg("view")
        .arg(dir.path())
        .arg("calculate_mean")
        .arg("--references")
        .arg("--json"));
    assert_eq!(code, 0, "{stderr}");
    let found: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let files: std::collections::BTreeSet<&str> = found["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    for file in ["pkg/stats.py", "pkg/report.py", "tests/test_stats.py"] {
        assert!(files.contains(file), "{file} in {stdout}");
    }
    let (code, stdout, stderr) = run(zerorepo()
        .arg("view")
        .arg(dir.path())
        .arg("calculate_mean")
        .arg("--references"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("pkg/report.py:1:"), "{stdout}");

    // A new name that is no identifier is refused, and nothing changes.
    let (code, _, stderr) = run(zerorepo()
        .arg("rename")
        .arg(dir.path())
        .arg("calculate_mean")
        .arg("not a name"));
    assert_eq!(code, 2, "{stderr}");
    assert!(read(dir.path(), "pkg/stats.py").contains("def calculate_mean("));

    let (code, stdout, stderr) = run(zerorepo()
        .arg("rename")
        .arg(dir.path())
        .arg("calculate_mean")
        .arg("average"));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("renamed `calculate_mean` to `average`"),
        "{stdout}"
    );
    assert!(read(dir.path(), "pkg/stats.py").contains("def average("));
    assert!(read(dir.path(), "pkg/report.py").contains("from pkg.stats import average\n"));
    assert!(read(dir.path(), "tests/test_stats.py").contains("import average as cm"));
}

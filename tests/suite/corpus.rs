//! `zerorepo bench --corpus`: engine against one-shot over a corpus file, with the scripted
//! provider. The script breaks one function's first answer, so the engine (which runs its
//! code and fixes it) and the one-shot baseline (which keeps the first answer) must come out
//! apart on the reference tests; a plan that cannot be made ready is reported and the others
//! go on. The sdist path runs offline: the cache is seeded with an sdist this test builds, so
//! unpacking, extraction, the selected reference node ids and the support modules are all
//! exercised without the network (the fetch itself is `pip download` in the sandbox, and is
//! not run here).

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::Digest;

use super::support::{fixture, repo_root, require_python, run, zerorepo};

/// `script` with the implementation of `node` answering wrong first (fixed on a retry).
fn breaking_first_answer(script: &str, node: &str) -> String {
    script
        .lines()
        .map(|line| {
            let mut entry: Value = serde_json::from_str(line).unwrap();
            if entry["node"] == node && entry["role"] == "impl" {
                entry["fault"] = "wrong_first".into();
            }
            entry.to_string() + "\n"
        })
        .collect()
}

/// The chain fixture's script with node_c's first implementation wrong: the engine fixes it,
/// the one-shot baseline keeps it.
fn chain_script_broken_at_c() -> String {
    let script = std::fs::read_to_string(fixture("chain").join("script.jsonl")).unwrap();
    breaking_first_answer(&script, "node_c")
}

/// Runs `bench --corpus` from the repository root; (exit code, JSON report, stderr).
fn bench(dir: &Path, corpus: &str, script: &str, extra: &[&str]) -> (i32, Value, String) {
    std::fs::write(dir.join("corpus.toml"), corpus).unwrap();
    std::fs::write(dir.join("script.jsonl"), script).unwrap();
    let (code, stdout, stderr) = run(zerorepo()
        .current_dir(repo_root())
        .env("ZEROREPO_CORPUS_CACHE", dir.join("cache"))
        .arg("bench")
        .arg("--corpus")
        .arg(dir.join("corpus.toml"))
        .arg("--work")
        .arg(dir.join("work"))
        .arg("--report")
        .arg(dir.join("report.md"))
        .args(["--date", "2026-01-02", "--json", "--quiet"])
        .arg("--llm")
        .arg(format!("scripted:{}", dir.join("script.jsonl").display()))
        .args(extra));
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("exit {code}, not JSON ({e}): {stdout}\n{stderr}"));
    (code, report, stderr)
}

fn plan<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no plan {name} in {report:#}"))
}

/// `(passed, total)` of a side.
fn score(side: &Value) -> (u64, u64) {
    let get = |k: &str| {
        side[k]
            .as_u64()
            .unwrap_or_else(|| panic!("no {k}: {side:#}"))
    };
    (get("passed"), get("total"))
}

const CHAIN: &str = r#"
[[plan]]
name = "chain"
domain = "arithmetic"
half = "dev"
examples = true
fixture = "fixtures/chain/rpg.json"
reference = "fixtures/chain/reference"

[[plan]]
name = "gone"
domain = "nothing"
half = "dev"
examples = true
fixture = "fixtures/no-such-plan/rpg.json"
reference = "fixtures/chain/reference"
"#;

#[test]
fn the_engine_fixes_what_one_shot_keeps_and_an_unready_plan_is_reported() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = chain_script_broken_at_c();
    let (code, report, stderr) = bench(dir.path(), CHAIN, &script, &[]);
    assert_eq!(code, 1, "a plan was not run: exit 1\n{stderr}");

    let chain = &plan(&report, "chain")["outcome"];
    assert_eq!(chain["status"], "measured", "{chain:#}");
    let reference_tests =
        std::fs::read_to_string(fixture("chain").join("reference/tests/test_steps.py"))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("def test_"))
            .count() as u64;
    assert_eq!(
        score(&chain["engine"]),
        (reference_tests, reference_tests),
        "{chain:#}"
    );
    let (passed, total) = score(&chain["one_shot"]);
    assert_eq!(total, reference_tests);
    assert!(
        passed < total,
        "one-shot kept the broken first answer: {chain:#}"
    );
    assert!(
        chain["wall_ratio"].as_f64().is_some_and(|r| r > 0.0),
        "{chain:#}"
    );
    for side in ["engine", "one-shot"] {
        assert!(
            dir.path()
                .join("work/corpus-2026-01-02/chain")
                .join(side)
                .join("src/chain/steps.py")
                .is_file()
        );
    }

    let gone = &plan(&report, "gone")["outcome"];
    assert_eq!(gone["status"], "not_run");
    assert_eq!(gone["stage"], "plan");
    assert!(
        gone["reason"]
            .as_str()
            .unwrap()
            .contains("fixtures/no-such-plan/rpg.json"),
        "{gone:#}"
    );

    let markdown = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    let row = format!("| chain (dev) | yes | **{reference_tests} of {reference_tests}** |");
    assert!(markdown.contains(&row), "{markdown}");
    assert!(
        markdown.contains(&format!("**{passed} of {total}**")),
        "{markdown}"
    );
    assert!(
        markdown.contains("| gone | hand-written | plan |"),
        "{markdown}"
    );
    assert!(
        report["command"]
            .as_str()
            .unwrap()
            .starts_with("zerorepo bench --corpus "),
        "{report:#}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(json, report);
}

#[test]
fn one_side_alone_runs_only_that_side_and_the_report_shows_the_other_as_a_dash() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = chain_script_broken_at_c();
    let extra = ["--plan", "chain", "--side", "baseline"];
    let (code, report, stderr) = bench(dir.path(), CHAIN, &script, &extra);
    assert_eq!(code, 0, "{stderr}");
    let chain = &plan(&report, "chain")["outcome"];
    assert_eq!(chain["engine"], Value::Null, "{chain:#}");
    assert_eq!(chain["wall_ratio"], Value::Null, "{chain:#}");
    let (passed, total) = score(&chain["one_shot"]);
    assert!(
        passed < total,
        "one-shot kept the broken first answer: {chain:#}"
    );
    let work = dir.path().join("work/corpus-2026-01-02/chain");
    assert!(work.join("one-shot/src/chain/steps.py").is_file());
    assert!(!work.join("engine").exists());
    let markdown = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(
        markdown.contains(&format!(
            "| chain (dev) | yes | — | — | **{passed} of {total}** |"
        )),
        "{markdown}"
    );
    assert!(markdown.contains("was not run (`--side`)"), "{markdown}");
}

const CORE: &str = r#""""Tiny arithmetic."""


def double(x):
    """Twice x."""
    return 2 * x


def quad(x):
    """Four times x, by doubling twice."""
    return double(double(x))


def unused(x):
    """Not asked for by the corpus."""
    return x
"#;

const TESTS: &str = r#"import unittest

from tiny.core import double, quad
from tiny.table import FACTOR


class DoubleTests(unittest.TestCase):
    def test_double(self):
        self.assertEqual(double(3), 6)

    def test_factor(self):
        self.assertEqual(double(1), FACTOR)


class QuadTests(unittest.TestCase):
    def test_quad(self):
        self.assertEqual(quad(2), 8)


class NotSelectedTests(unittest.TestCase):
    def test_never_run(self):
        self.fail("not in the corpus's selection")
"#;

/// The sdist `tiny-1.0.tar.gz`: a src layout, a support module, tests with a file and a class
/// the corpus does not select.
fn tiny_sdist(path: &Path) -> String {
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::fast(),
    );
    let mut tar = tar::Builder::new(gz);
    let members = [
        ("tiny-1.0/src/tiny/__init__.py", "\"\"\"Tiny.\"\"\"\n"),
        ("tiny-1.0/src/tiny/core.py", CORE),
        ("tiny-1.0/src/tiny/table.py", "FACTOR = 2\n"),
        ("tiny-1.0/tests/test_core.py", TESTS),
        (
            "tiny-1.0/tests/test_other.py",
            "def test_other():\n    assert False\n",
        ),
    ];
    for (name, text) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
    format!("{:x}", sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

fn answer(code: &str) -> String {
    format!("```python\n{code}```\n")
}

/// Answers for the extracted plan's two leaves and its subgraph's integration test.
fn tiny_script() -> String {
    let entries = [
        (
            "tiny.core.double",
            "test",
            "from tiny.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
        ),
        (
            "tiny.core.double",
            "impl",
            "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return 2 * x\n",
        ),
        (
            "tiny.core.quad",
            "test",
            "from tiny.core import quad\n\n\ndef test_quad():\n    assert quad(1) == 4\n",
        ),
        (
            "tiny.core.quad",
            "impl",
            "def quad(x):\n    \"\"\"Four times x, by doubling twice.\"\"\"\n    return double(double(x))\n",
        ),
        (
            "integration:tiny.core",
            "test",
            "from tiny.core import quad\n\n\ndef test_flow():\n    assert quad(3) == 12\n",
        ),
    ];
    let lines: String = entries
        .iter()
        .map(|(node, role, code)| {
            serde_json::json!({"node": node, "role": role, "attempt": 0, "answer": answer(code)})
                .to_string()
                + "\n"
        })
        .collect();
    breaking_first_answer(&lines, "tiny.core.double")
}

#[test]
fn an_sdist_plan_is_unpacked_extracted_narrowed_and_measured_with_its_support_modules() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cached: PathBuf = dir.path().join("cache/tiny-1.0");
    std::fs::create_dir_all(&cached).unwrap();
    let sha = tiny_sdist(&cached.join("tiny-1.0.tar.gz"));
    let tampered = dir.path().join("cache/tampered-1.0");
    std::fs::create_dir_all(&tampered).unwrap();
    std::fs::write(tampered.join("tampered-1.0.tar.gz"), "not the pinned file").unwrap();
    let corpus = format!(
        r#"
[[plan]]
name = "tiny"
domain = "arithmetic"
half = "test"
examples = false
pypi = "tiny==1.0"
sha256 = "{sha}"
src = "src"
modules = ["tiny.core"]
functions = ["quad"]
support = ["tiny.table"]
reference = ["tests/test_core.py::DoubleTests", "tests/test_core.py::QuadTests"]

[[plan]]
name = "tampered"
domain = "anything"
half = "test"
examples = false
pypi = "tampered==1.0"
sha256 = "{sha}"
modules = ["tampered"]
reference = ["tests/test_x.py"]
"#
    );
    let (code, report, stderr) = bench(dir.path(), &corpus, &tiny_script(), &["--half", "test"]);
    assert_eq!(code, 1, "{stderr}");

    let tiny = &plan(&report, "tiny")["outcome"];
    assert_eq!(tiny["status"], "measured", "{tiny:#}\n{stderr}");
    // Three selected tests: NotSelectedTests and test_other.py do not run or count, and
    // test_core.py imports the support module, so none would be collected without it.
    assert_eq!(score(&tiny["engine"]), (3, 3), "{tiny:#}");
    assert_eq!(score(&tiny["one_shot"]).1, 3, "{tiny:#}");
    assert!(
        score(&tiny["one_shot"]).0 < 3,
        "one-shot kept the broken double: {tiny:#}"
    );
    let work = dir.path().join("work/corpus-2026-01-02/tiny");
    let plan_text = std::fs::read_to_string(work.join("rpg.json")).unwrap();
    assert!(plan_text.contains("tiny.core.quad") && plan_text.contains("tiny.core.double"));
    assert!(
        !plan_text.contains("tiny.core.unused"),
        "functions narrows the plan"
    );
    assert!(!plan_text.contains(">>>"));
    assert_eq!(
        std::fs::read_to_string(work.join("engine/src/tiny/table.py")).unwrap(),
        "FACTOR = 2\n"
    );

    let tampered = &plan(&report, "tampered")["outcome"];
    assert_eq!(tampered["status"], "not_run", "{tampered:#}");
    assert_eq!(tampered["stage"], "download");
    assert!(
        tampered["reason"]
            .as_str()
            .unwrap()
            .contains("not the pinned"),
        "{tampered:#}"
    );
}

#[test]
fn bad_corpus_input_exits_2_naming_the_plan_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.toml");
    std::fs::write(
        &corpus,
        CHAIN.replace(
            "half = \"dev\"\nexamples = true\nfixture = \"fixtures/chain",
            "half = \"train\"\nexamples = true\nfixture = \"fixtures/chain",
        ),
    )
    .unwrap();
    let (code, _, stderr) = run(zerorepo()
        .current_dir(repo_root())
        .arg("bench")
        .arg("--corpus")
        .arg(&corpus));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("plan `chain`, key `half`: `train`"),
        "{stderr}"
    );

    std::fs::write(&corpus, CHAIN).unwrap();
    let (code, _, stderr) = run(zerorepo()
        .current_dir(repo_root())
        .args(["bench", "--half", "test", "--plan", "chain", "--corpus"])
        .arg(&corpus));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("plan `chain` is in the dev half, not the test half"),
        "{stderr}"
    );

    let (code, _, stderr) = run(zerorepo().args(["bench", "--half", "test"]));
    assert_eq!(code, 2, "--half without --corpus: {stderr}");
    let (code, _, stderr) = run(zerorepo()
        .args(["bench", "--real", "--corpus"])
        .arg(&corpus));
    assert_eq!(code, 2, "--real with --corpus: {stderr}");
}

//! `zerorepo bench --code-corpus`: change requests judged by acceptance tests the model never
//! sees. Offline, on a tiny sdist this test builds and seeds into the cache: a scripted answer
//! that breaks the library's suite is corrected by the engine (correct) and written as it is
//! by the single-answer baseline (wrong); an answer with no code changes nothing (unchanged);
//! the self-check applies the reference change. Then the self-check of three real requests
//! of fixtures/code-corpus.toml, when their sdists are in the cache.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::Digest;

use super::support::{repo_root, require_python, run, sandbox_backend, zerorepo};

const CORE: &str = "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return 2 * x\n";
const TESTS: &str =
    "from tiny.core import double\n\n\ndef test_double():\n    assert double(4) == 8\n";

/// `tiny-1.0.tar.gz` in `dir`, and its digest.
fn tiny_sdist(dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("tiny-1.0.tar.gz");
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    let mut tar = tar::Builder::new(gz);
    let members = [
        ("tiny-1.0/tiny/__init__.py", ""),
        ("tiny-1.0/tiny/core.py", CORE),
        ("tiny-1.0/tests/test_core.py", TESTS),
        ("tiny-1.0/setup.py", "raise SystemExit('never run')\n"),
    ];
    for (name, text) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
    format!("{:x}", sha2::Sha256::digest(std::fs::read(&path).unwrap()))
}

/// A corpus of one request, `tiny-quad`, beside its folder in `dir`.
fn tiny_corpus(dir: &Path, sha: &str) -> PathBuf {
    let corpus = dir.join("corpus.toml");
    std::fs::write(
        &corpus,
        format!(
            r#"
[[library]]
name = "tiny"
pypi = "tiny==1.0"
sha256 = "{sha}"
files = ["setup.py", "tiny", "tests/test_core.py"]
suite = ["tests/test_core.py"]

[[request]]
name = "tiny-quad"
library = "tiny"
half = "test"
kind = "add"
examples = false
"#
        ),
    )
    .unwrap();
    let folder = dir.join("corpus/tiny-quad");
    std::fs::create_dir_all(&folder).unwrap();
    let write = |name: &str, text: &str| std::fs::write(folder.join(name), text).unwrap();
    write(
        "request.md",
        "Add quad(x) to tiny/core.py: four times x, using double.\n",
    );
    write(
        "test_acceptance.py",
        "from tiny.core import quad\n\n\ndef test_quad():\n    assert quad(3) == 12\n    assert quad(-1) == -4\n",
    );
    write(
        "reference.toml",
        "[[edit]]\nfile = \"tiny/core.py\"\nreplace = '''\n\n\ndef quad(x):\n    return double(double(x))\n'''\n",
    );
    corpus
}

const RIGHT: &str = "```python\ndef double(x):\n    \"\"\"Twice x.\"\"\"\n    return 2 * x\n\n\ndef quad(x):\n    \"\"\"Four times x.\"\"\"\n    return double(double(x))\n```";
/// Breaks `double` (the suite fails, with the error in the module: the correction is asked
/// of that file) while adding `quad`.
const BREAKING: &str = "```python\ndef double(x):\n    \"\"\"Twice x.\"\"\"\n    return 2 * y\n\n\ndef quad(x):\n    \"\"\"Four times x.\"\"\"\n    return double(double(x))\n```";

fn script(dir: &Path, name: &str, task_answer: &str) -> PathBuf {
    let plan = json!([{"id": "1", "kind": "MODIFY_FILE", "path": "tiny/core.py",
                       "description": "Add quad(x), four times x, using double."}]);
    let entries = [
        json!({"node": "plan", "role": "impl", "answer": plan.to_string()}),
        json!({"node": "1", "role": "impl", "attempt": 0, "answer": task_answer}),
        json!({"node": "correct", "role": "fix", "attempt": 0, "answer": RIGHT}),
        // The calls of the new quad (the request gives no example), after the begun `quad(`.
        json!({"node": "probe", "role": "test", "attempt": 0, "answer": "3)\n```"}),
    ];
    let path = dir.join(name);
    let lines: Vec<String> = entries.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

/// `bench --code-corpus` from the repository root; (exit code, JSON report, stderr).
fn bench(dir: &Path, corpus: &Path, extra: &[&str]) -> (i32, Value, String) {
    let (code, stdout, stderr) = run(zerorepo()
        .current_dir(repo_root())
        .env("ZEROREPO_CORPUS_CACHE", dir.join("cache"))
        .arg("bench")
        .arg("--code-corpus")
        .arg(corpus)
        .arg("--work")
        .arg(dir.join("work"))
        .args(["--half", "all", "--date", "2026-01-02", "--json"])
        .args(extra));
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("exit {code}, not JSON ({e}): {stdout}\n{stderr}"));
    (code, report, stderr)
}

fn verdict(report: &Value, side: &str) -> String {
    report["requests"][0][side]["verdict"]
        .as_str()
        .unwrap_or_else(|| panic!("no {side} verdict: {report:#}"))
        .to_string()
}

#[test]
fn the_engine_corrects_what_the_single_answer_writes_wrong_and_no_code_is_unchanged() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sha = tiny_sdist(&dir.path().join("cache/tiny-1.0"));
    let corpus = tiny_corpus(dir.path(), &sha);

    let breaking = script(dir.path(), "breaking.jsonl", BREAKING);
    let llm = format!("--llm=scripted:{}", breaking.display());
    let (code, report, stderr) = bench(dir.path(), &corpus, &[&llm]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    let before = &report["requests"][0]["before"];
    assert_eq!(before["suite_passed"], true, "{report:#}");
    assert_eq!(before["acceptance_failed"], true, "{report:#}");
    assert_eq!(
        verdict(&report, "engine"),
        "correct",
        "{stderr}\n{report:#}"
    );
    assert_eq!(
        verdict(&report, "baseline"),
        "wrong",
        "{stderr}\n{report:#}"
    );
    assert_eq!(report["requests"][0]["baseline"]["suite_passed"], false);
    let written = dir
        .path()
        .join("work/code-corpus-2026-01-02/tiny-quad/engine/tiny/core.py");
    assert!(std::fs::read_to_string(written).unwrap().contains("2 * x"));

    let nothing = script(dir.path(), "nothing.jsonl", "I cannot write this code.");
    let llm = format!("--llm=scripted:{}", nothing.display());
    let (code, report, stderr) = bench(dir.path(), &corpus, &[&llm]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    assert_eq!(verdict(&report, "engine"), "unchanged", "{report:#}");
    assert_eq!(verdict(&report, "baseline"), "unchanged", "{report:#}");

    // With --report the files hold what standard output holds (they are also rewritten after
    // each request, so that a run quit at once keeps the requests that finished).
    let saved = dir.path().join("reports/self.md");
    let flag = format!("--report={}", saved.display());
    let (code, report, stderr) = bench(dir.path(), &corpus, &["--self-check", &flag]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    assert_eq!(verdict(&report, "reference"), "correct", "{report:#}");
    assert!(report["command"].as_str().unwrap().contains("--self-check"));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(saved.with_extension("json")).unwrap())
            .unwrap();
    assert_eq!(json, report);
    let markdown = std::fs::read_to_string(&saved).unwrap();
    assert!(markdown.contains("| tiny-quad |"), "{markdown}");
    assert!(!markdown.contains("Not run:"), "{markdown}");

    // --resume keeps what the report holds: nothing is run again, the result is the same.
    std::fs::remove_dir_all(dir.path().join("work")).unwrap();
    let (code, resumed, stderr) = bench(dir.path(), &corpus, &["--self-check", &flag, "--resume"]);
    assert_eq!(
        code, 0,
        "{stderr}
{resumed:#}"
    );
    assert!(
        stderr.contains("tiny-quad: kept from the report"),
        "{stderr}"
    );
    assert_eq!(resumed["requests"], report["requests"]);
    assert!(
        !dir.path()
            .join("work/code-corpus-2026-01-02/tiny-quad")
            .exists(),
        "nothing was made again"
    );
    // A report of another kind of run is not mixed in: refused, the report left as it was.
    let markdown = std::fs::read_to_string(&saved).unwrap();
    let (code, stdout, stderr) = run(zerorepo()
        .current_dir(repo_root())
        .env("ZEROREPO_CORPUS_CACHE", dir.path().join("cache"))
        .args(["bench", "--code-corpus"])
        .arg(&corpus)
        .arg(&flag)
        .arg(format!("--llm=scripted:{}", breaking.display()))
        .args(["--half", "all", "--resume"]));
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the report is a self-check, this run asks a model"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), markdown);
}

#[test]
fn a_reference_change_that_does_not_pass_fails_the_self_check() {
    if require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sha = tiny_sdist(&dir.path().join("cache/tiny-1.0"));
    let corpus = tiny_corpus(dir.path(), &sha);
    let reference = dir.path().join("corpus/tiny-quad/reference.toml");
    let text = std::fs::read_to_string(&reference).unwrap();
    std::fs::write(&reference, text.replace("double(double(x))", "double(x)")).unwrap();
    let (code, report, stderr) = bench(dir.path(), &corpus, &["--self-check"]);
    assert_eq!(code, 1, "{stderr}\n{report:#}");
    assert_eq!(verdict(&report, "reference"), "wrong", "{report:#}");
}

/// The self-check of an addition, a planted fix and a change of behaviour that updates the
/// library's tests, on the real corpus, when the pinned sdists are already in the cache (the
/// generation corpus's runs put them there); set ZEROREPO_CODE_CORPUS_FETCH=1 to fetch them.
#[test]
fn three_real_requests_pass_their_self_check() {
    if require_python().is_none() {
        return;
    }
    if sandbox_backend() == "none" {
        eprintln!("SKIPPED: the libraries' code runs only in a sandbox, and bubblewrap is missing");
        return;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let cache = std::env::var("ZEROREPO_CORPUS_CACHE")
        .unwrap_or_else(|_| format!("{home}/.cache/zerorepo/corpus"));
    let pins = ["boltons-25.0.0", "isodate-0.7.2", "more-itertools-10.7.0"];
    let cached = pins.iter().all(|p| Path::new(&cache).join(p).is_dir());
    if !cached && std::env::var_os("ZEROREPO_CODE_CORPUS_FETCH").is_none() {
        eprintln!(
            "SKIPPED: the sdists {pins:?} are not in {cache}; run `zerorepo bench --corpus \
             fixtures/corpus.toml` once, or set ZEROREPO_CODE_CORPUS_FETCH=1 to fetch them"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(zerorepo()
        .current_dir(repo_root())
        .env("ZEROREPO_CORPUS_CACHE", &cache)
        .args([
            "bench",
            "--code-corpus",
            "fixtures/code-corpus.toml",
            "--self-check",
        ])
        .args([
            "--request",
            "boltons-camel2kebab",
            "--request",
            "isodate-tz-minutes",
        ])
        .args(["--request", "mi-all-equal-empty", "--json", "--work"])
        .arg(dir.path()));
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("exit {code}, not JSON ({e}): {stdout}\n{stderr}"));
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    for request in report["requests"].as_array().unwrap() {
        assert_eq!(request["before"]["suite_passed"], true, "{request:#}");
        assert_eq!(request["before"]["acceptance_failed"], true, "{request:#}");
        assert_eq!(request["reference"]["verdict"], "correct", "{request:#}");
    }
}

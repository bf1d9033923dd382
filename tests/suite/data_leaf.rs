//! Data leaves (module-level data) end to end with the scripted provider: written and checked
//! before the functions that read them, in the engine and in the one-shot baseline, exported by
//! the assembled package; a plan whose value is not a literal is refused before any work.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use zerorepo::engine::{GenerateOptions, GenerateRequest, LoopSettings, PhaseSink, Progress};
use zerorepo::llm::Role;
use zerorepo::llm::scripted::{ScriptEntry, ScriptedProvider};
use zerorepo::sandbox::LocalRunner;

use super::support;

/// A table with its value in the plan, a separator the model writes from its docstring, and
/// a function that reads both. The function's id sorts first: only the `uses` edges put the
/// data before it.
const PLAN: &str = r#"{
  "nodes": [
    {"id": "a_to_metres", "name": "to_metres", "type": "function", "node_type": "leaf",
     "file_path": "src/conv/units.py", "parent": "m_units", "subgraph_id": "conv",
     "signature": "def to_metres(text: str) -> float",
     "docstring": "Convert text such as '3 km' to metres, with the factors of UNITS.",
     "dependencies": ["z_units", "z_sep"]},
    {"id": "m_units", "name": "units", "type": "module", "node_type": "composite",
     "file_path": "src/conv/units.py", "parent": "p_conv", "docstring": "Units of length."},
    {"id": "p_conv", "name": "conv", "type": "package", "node_type": "composite",
     "file_path": "src/conv", "docstring": "Conversions."},
    {"id": "z_sep", "name": "SEPARATOR", "type": "data", "node_type": "leaf",
     "file_path": "src/conv/units.py", "parent": "m_units", "subgraph_id": "conv",
     "docstring": "The text between a number and its unit: one space."},
    {"id": "z_units", "name": "UNITS", "type": "data", "node_type": "leaf",
     "file_path": "src/conv/units.py", "parent": "m_units", "subgraph_id": "conv",
     "docstring": "Metres per unit, by unit name.",
     "value": "{'m': 1.0, 'km': 1000.0}"}
  ],
  "edges": [
    {"source": "a_to_metres", "target": "z_units", "type": "uses"},
    {"source": "a_to_metres", "target": "z_sep", "type": "uses"}
  ]
}"#;

fn answer(node: &str, role: Role, attempt: u32, code: &str) -> ScriptEntry {
    ScriptEntry {
        node: node.into(),
        role,
        attempt,
        candidate: 0,
        answer: Some(format!("```python\n{code}```\n")),
        fault: None,
    }
}

/// The separator's first answer defines a function too and is refused, its second is used;
/// with `first_good` (for the one-shot baseline, which asks once) the first is the good one.
fn script(first_good: bool) -> ScriptedProvider {
    let first = match first_good {
        true => "SEPARATOR = ' '\n",
        false => "SEPARATOR = ' '\n\n\ndef helper():\n    return 1\n",
    };
    ScriptedProvider::from_entries([
        answer("z_sep", Role::Impl, 0, first),
        answer("z_sep", Role::Impl, 1, "SEPARATOR = ' '\n"),
        answer(
            "a_to_metres",
            Role::Test,
            0,
            "from conv.units import to_metres\n\n\ndef test_to_metres_km():\n    assert to_metres('3 km') == 3000.0\n",
        ),
        answer(
            "a_to_metres",
            Role::Impl,
            0,
            "def to_metres(text: str) -> float:\n    number, unit = text.split(SEPARATOR)\n    return float(number) * UNITS[unit]\n",
        ),
    ])
}

/// Generates `PLAN` into `out`; the ids of the nodes in the order they finished.
async fn generate(out: &Path, python: &str, one_shot: bool) -> Vec<zerorepo::rpg::NodeId> {
    let rpg = zerorepo::rpg::parse_str(PLAN, Path::new("rpg.json")).unwrap();
    let rpg = Arc::new(zerorepo::rpg::validate(rpg).unwrap());
    let options = GenerateOptions {
        out: out.to_path_buf(),
        start_from: None,
        settings: LoopSettings {
            max_retries: 1,
            one_shot,
            candidates: 1,
            votes: false,
        },
        jobs: 1,
        flush_every: 5,
        phases: PhaseSink::default(),
    };
    let request = GenerateRequest {
        rpg,
        llm: Arc::new(script(one_shot)),
        runner: Arc::new(LocalRunner::new(python, std::time::Duration::from_secs(60))),
        options,
        cancel: CancellationToken::new(),
    };
    let mut finished = Vec::new();
    zerorepo::pipeline::generate(request, |event| {
        if let Progress::Finished { id, .. } = event {
            finished.push(id);
        }
    })
    .await
    .unwrap();
    finished
}

fn checkpoint(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("docs/generation_checkpoint.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn data_is_written_and_checked_before_the_function_that_reads_it() {
    let Some(python) = support::require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let finished = generate(&out, &python, false).await;
    let at = |id: &str| finished.iter().position(|f| f == id).unwrap();
    assert!(at("z_units") < at("a_to_metres"), "{finished:?}");
    assert!(at("z_sep") < at("a_to_metres"), "{finished:?}");

    let cp = checkpoint(&out);
    for id in ["z_units", "z_sep", "a_to_metres"] {
        assert_eq!(cp[id]["status"], "passed", "{id}: {}", cp[id]);
    }
    // The separator's first answer defined more than the name, so it was asked again.
    assert_eq!(cp["z_sep"]["retry_count"], 1, "{}", cp["z_sep"]);

    let module = std::fs::read_to_string(out.join("src/conv/units.py")).unwrap();
    assert_eq!(
        module,
        "\"\"\"Units of length.\"\"\"\n\n\
         # The text between a number and its unit: one space.\nSEPARATOR = ' '\n\n\
         # Metres per unit, by unit name.\nUNITS = {'m': 1.0, 'km': 1000.0}\n\n\n\
         def to_metres(text: str) -> float:\n    \"\"\"Convert text such as '3 km' to metres, with the factors of UNITS.\"\"\"\n    \
         number, unit = text.split(SEPARATOR)\n    return float(number) * UNITS[unit]\n"
    );
    assert!(!module.contains("helper"), "{module}");
    let tests = std::fs::read_to_string(out.join("tests/test_units.py")).unwrap();
    for test in [
        "def test_SEPARATOR_is_defined():",
        "def test_UNITS_is_defined():",
        "    assert UNITS == {'m': 1.0, 'km': 1000.0}",
        "def test_to_metres_km():",
    ] {
        assert!(tests.contains(test), "{test} missing from:\n{tests}");
    }
    let init = std::fs::read_to_string(out.join("src/conv/__init__.py")).unwrap();
    assert!(
        init.contains("from .units import SEPARATOR, UNITS, to_metres"),
        "{init}"
    );
    // The module imports and every test of it passes, the data's checks included.
    let (passed, output) = support::pytest(&python, &out, &out.join("tests"));
    assert!(passed, "{output}");
}

#[tokio::test]
async fn the_one_shot_baseline_writes_the_data_too_and_runs_nothing() {
    let Some(python) = support::require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let finished = generate(&out, &python, true).await;
    assert_eq!(finished.last().map(|id| id.as_str()), Some("a_to_metres"));
    let cp = checkpoint(&out);
    for id in ["z_units", "z_sep", "a_to_metres"] {
        assert_eq!(cp[id]["status"], "needs_review", "{id}: {}", cp[id]);
        assert_eq!(
            cp[id]["test_results"]["passed"].as_u64().unwrap_or(0),
            0,
            "{id}: {}",
            cp[id]
        );
    }
    let module = std::fs::read_to_string(out.join("src/conv/units.py")).unwrap();
    for line in [
        "SEPARATOR = ' '",
        "UNITS = {'m': 1.0, 'km': 1000.0}",
        "def to_metres(text: str) -> float:",
    ] {
        assert!(module.contains(line), "{line} missing from:\n{module}");
    }
    // Nothing was run, so no test of the data was written.
    let tests = std::fs::read_to_string(out.join("tests/test_units.py")).unwrap_or_default();
    assert!(!tests.contains("_is_defined"), "{tests}");
}

#[test]
fn a_plan_value_that_is_not_a_literal_is_refused_before_any_work() {
    let hostile = PLAN.replace(
        "\"value\": \"{'m': 1.0, 'km': 1000.0}\"",
        "\"value\": \"__import__('os').system('touch /tmp/pwned')\"",
    );
    assert_ne!(hostile, PLAN);
    let (dir, path) = support::rpg_file(&hostile);
    let (code, _, stderr) = support::run(support::zerorepo().arg("validate").arg(&path));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("data node `z_units`: value calls `__import__('os').system`"),
        "{stderr}"
    );
    let out = dir.path().join("out");
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, "").unwrap();
    let mut llm = std::ffi::OsString::from("scripted:");
    llm.push(&script);
    let (code, _, stderr) = support::run(
        support::zerorepo()
            .arg("generate")
            .arg(&path)
            .arg("--out")
            .arg(&out)
            .arg("--llm")
            .arg(llm),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(support::is_empty_dir(&out), "the refused plan wrote files");
}

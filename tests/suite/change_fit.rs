//! `zerorepo code` on a module of real size (issue 40): prompts built to the model's
//! context, edits placed by symbol so that the rest of the file keeps its bytes, and an
//! answer that cannot be used asked again with the reason.

use std::path::Path;

use serde_json::{Value, json};

use super::change::{plan, write};
use super::support::{run, tree, zerorepo};

const LOWER: &str =
    "def lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n";
const JOIN: &str = "def join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n";
const TESTS: &str = "from text import lower_words\n\n\ndef test_lower_words():\n    assert lower_words(\"A\") == \"a\"\n";

/// The context and the room of the estimate the prompts are built to (3 bytes a token).
const CONTEXT_TOKENS: u64 = 8_192;
const CHAT_TOKENS: u64 = 64;

/// A module of real size: `lower_words` and `join_dashes` among `helpers` other functions.
fn module(helpers: usize) -> String {
    let helper = |i: usize| {
        format!(
            "\n\ndef helper_{i}(s):\n    \"\"\"Return s stripped, with the marker {i} at its end.\"\"\"\n    text = s.strip()\n    text = text.replace(\"\\t\", \" \")\n    return text + \"{i}\"\n"
        )
    };
    let mut text = String::from("\"\"\"Text helpers.\"\"\"\n\nimport re\n");
    (0..helpers / 2).for_each(|i| text.push_str(&helper(i)));
    text.push_str(&format!("\n\n{LOWER}\n\n{JOIN}"));
    (helpers / 2..helpers).for_each(|i| text.push_str(&helper(i)));
    text
}

fn project(text: &str, tests: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "text.py", text);
    write(dir.path(), "tests/test_text.py", tests);
    dir
}

fn one_task(description: &str) -> Value {
    plan(json!([
        {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": description}
    ]))
}

fn answer(node: &str, role: &str, attempt: u32, text: &str) -> Value {
    json!({"node": node, "role": role, "attempt": attempt, "answer": text})
}

/// `zerorepo code --yes --json`, recording every exchange: (exit, outcome, stderr, requests).
fn code(
    repo: &Path,
    request: &str,
    script: &[Value],
    extra: &[&str],
) -> (i32, Value, String, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.jsonl");
    let lines: Vec<String> = script.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let record = dir.path().join("record");
    let mut cmd = zerorepo();
    cmd.args(["code", "--yes", "--json", "--prompt", request, "--repo"])
        .arg(repo)
        .arg("--llm")
        .arg(format!("scripted:{}", path.display()))
        .arg("--record")
        .arg(&record)
        .args(extra);
    let (status, stdout, stderr) = run(&mut cmd);
    let outcome = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    let requests = std::fs::read_to_string(record.join("exchanges.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["request"].clone())
        .collect();
    (status, outcome, stderr, requests)
}

/// The user's message of a recorded request.
fn prompt(request: &Value) -> &str {
    request["messages"][1]["content"].as_str().unwrap()
}

/// Whether a recorded request fits the context beside its answer, at 3 bytes a token.
fn fits(request: &Value) -> bool {
    let bytes: usize = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().len())
        .sum::<usize>()
        + request["prefill"].as_str().map_or(0, str::len);
    let max_tokens = request["max_tokens"].as_u64().unwrap();
    (bytes as u64).div_ceil(3) + max_tokens + CHAT_TOKENS <= CONTEXT_TOKENS
}

#[test]
fn a_new_function_is_inserted_after_its_anchor_and_the_rest_keeps_its_bytes() {
    let text = module(60);
    let repo = project(&text, TESTS);
    let new = "ADD AFTER lower_words\n```python\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(lower_words(s))\n```";
    let script = [
        one_task("Add slugify_title(s), built from lower_words and join_dashes."),
        answer("1", "impl", 0, new),
    ];
    let request = "Add `slugify_title(s)` to text, built from lower_words and join_dashes, \
                   so that 'A B' becomes 'a-b'.";
    let (status, outcome, stderr, requests) = code(repo.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed");
    assert_eq!(outcome["examples"][0]["status"], "passed", "{outcome:#}");
    let written = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    let inserted = "\n\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(lower_words(s))\n";
    let expected = text.replacen(LOWER, &format!("{LOWER}{inserted}"), 1);
    assert_eq!(
        written, expected,
        "two blank lines, and every other byte as it was"
    );
    let task = requests.iter().find(|r| r["node_id"] == "1").unwrap();
    assert!(prompt(task).contains("ADD AFTER name"), "{}", prompt(task));
    assert_eq!(
        task["max_tokens"], 2_048,
        "a few definitions, not the file again"
    );
    assert!(requests.iter().all(fits));
}

#[test]
fn a_changed_function_is_replaced_by_name() {
    let text = module(60);
    let repo = project(&text, TESTS);
    let changed = "def join_dashes(s):\n    \"\"\"Return the words of s joined by underscores.\"\"\"\n    return \"_\".join(s.split())\n";
    let script = [
        one_task("Make join_dashes join with underscores."),
        answer(
            "1",
            "impl",
            0,
            &format!("REPLACE join_dashes\n```python\n{changed}```"),
        ),
        // Fails on the code as it is, on an assertion: the change must turn it.
        answer(
            "reproduce",
            "test",
            0,
            "```python\nfrom text import join_dashes\n\n\ndef test_request_two_words():\n    assert join_dashes('a b') == 'a_b'\n```",
        ),
    ];
    let (status, outcome, stderr, _) = code(
        repo.path(),
        "Make join_dashes join the words with underscores.",
        &script,
        &[],
    );
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    let written = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert_eq!(written, text.replacen(JOIN, changed, 1));
}

#[test]
fn a_search_block_not_in_the_file_is_asked_again_with_the_reason() {
    let text = module(60);
    let repo = project(&text, TESTS);
    let missing = "<<<<<<< SEARCH\ndef slug(s):\n    return s\n=======\ndef slug(s):\n    return s.lower()\n>>>>>>> REPLACE";
    let good = "ADD AT END\n```python\ndef shout(s):\n    return s.upper()\n```";
    let script = [
        one_task("Add shout(s)."),
        answer("1", "impl", 0, missing),
        answer("1", "impl", 1, good),
        answer("probe", "test", 0, "'a')\n```"),
    ];
    let (status, outcome, stderr, requests) = code(repo.path(), "Add shout(s).", &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["corrections"], 1, "asking again spends a round");
    let written = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert_eq!(
        written,
        format!("{text}\n\ndef shout(s):\n    return s.upper()\n")
    );
    let asked: Vec<&Value> = requests.iter().filter(|r| r["node_id"] == "1").collect();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[1]["attempt"], 1);
    let again = prompt(asked[1]);
    assert!(
        again.contains("Your previous answer could not be used")
            && again.contains("were not found"),
        "{again}"
    );
}

#[test]
fn a_cut_off_answer_is_asked_again_and_a_spent_budget_rolls_back_with_the_reason() {
    let text = module(60);
    let repo = project(&text, TESTS);
    let before = tree(repo.path());
    let cut = "ADD AT END\n```python\ndef shout(s):\n    return s.up";
    let good = "ADD AT END\n```python\ndef shout(s):\n    return s.upper()\n```";
    let script = [one_task("Add shout(s)."), answer("1", "impl", 0, cut)];
    let (status, outcome, _, requests) = code(
        repo.path(),
        "Add shout(s).",
        &script,
        &["--max-corrections", "2"],
    );
    assert_eq!(status, 1, "{outcome:#}");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("task 1 failed") && reason.contains("cut off"),
        "{reason}"
    );
    assert_eq!(requests.len(), 4, "the plan, the task and two more askings");
    assert_eq!(tree(repo.path()), before);
    let script = [
        one_task("Add shout(s)."),
        answer("1", "impl", 0, cut),
        answer("1", "impl", 1, good),
        answer("probe", "test", 0, "'a')\n```"),
    ];
    let (status, outcome, stderr, _) = code(repo.path(), "Add shout(s).", &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
}

#[test]
fn a_failing_output_too_long_for_the_context_is_cut_to_the_failing_test() {
    // A planted bug that fails sixty cases, hundreds passing beside them, and a module of
    // about 2,000 lines: whole, the correction prompt would overflow the context.
    let text = module(300).replace("\"-\".join(s.split())", "\" \".join(s.split())");
    let cases: Vec<String> = (0..60).map(|i| format!("\"word{i} other{i}\"")).collect();
    let tests = format!(
        "import pytest\n\nfrom text import join_dashes\n\n\n@pytest.mark.parametrize(\"n\", range(400))\ndef test_many(n):\n    assert n >= 0\n\n\n@pytest.mark.parametrize(\"words\", [{}])\ndef test_join_dashes(words):\n    expected = words.replace(\" \", \"-\")\n    assert join_dashes(words) == expected\n",
        cases.join(", ")
    );
    assert!(text.len() > 3 * 8_192, "the module alone would not fit");
    let repo = project(&text, &tests);
    let wrong = "REPLACE join_dashes\n```python\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"+\".join(s.split())\n```";
    let right = wrong.replace("\"+\"", "\"-\"");
    let script = [
        one_task("Fix join_dashes."),
        answer("1", "impl", 0, wrong),
        answer("correct", "fix", 0, &right),
    ];
    let request = "join_dashes('a b') returns 'a b' but should return 'a-b'.";
    let (status, outcome, stderr, requests) = code(repo.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["corrections"], 1, "{outcome:#}");
    for asked in &requests {
        assert!(fits(asked), "{} does not fit", asked["node_id"]);
    }
    let correction = requests.iter().find(|r| r["node_id"] == "correct").unwrap();
    let shown = prompt(correction);
    assert!(
        shown.contains("_ test_join_dashes[word"),
        "a failing test's section: {shown}"
    );
    assert!(shown.contains("AssertionError"), "{shown}");
    assert!(
        shown.contains("def join_dashes(s):"),
        "the function at fault, whole"
    );
    assert!(
        shown.contains("not shown"),
        "the rest of the module, outlined"
    );
    let written = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert_eq!(written, module(300));
}

#[test]
fn a_request_too_large_to_fit_is_refused_before_any_model_call() {
    let repo = project(&module(4), TESTS);
    let before = tree(repo.path());
    let request = format!(
        "Add shout(s). {}",
        "Some more words of the request. ".repeat(1_000)
    );
    let (status, _, stderr, requests) = code(repo.path(), &request, &[one_task("x")], &[]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("does not fit the model's context") && stderr.contains("shorten it"),
        "{stderr}"
    );
    assert!(requests.is_empty(), "no model call");
    assert_eq!(tree(repo.path()), before);
    assert!(!repo.path().join(".zerorepo").exists(), "no work started");
}

#[test]
fn a_test_file_that_copies_the_code_it_tests_is_asked_again() {
    let text = module(4);
    let repo = project(&text, TESTS);
    let script = [
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "tests/test_text.py",
             "description": "Add a test of join_dashes."}
        ])),
        // The test passes against its own copy of join_dashes, whatever text.py holds.
        answer(
            "1",
            "impl",
            0,
            &format!(
                "```python\n{TESTS}\n\n{JOIN}\n\ndef test_join_dashes():\n    assert join_dashes(\"a b\") == \"a-b\"\n```"
            ),
        ),
        answer(
            "1",
            "impl",
            1,
            "```python\nfrom text import join_dashes, lower_words\n\n\ndef test_lower_words():\n    assert lower_words(\"A\") == \"a\"\n\n\ndef test_join_dashes():\n    assert join_dashes(\"a b\") == \"a-b\"\n```",
        ),
    ];
    let (status, outcome, stderr, requests) =
        code(repo.path(), "Add a test of join_dashes.", &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    let written = std::fs::read_to_string(repo.path().join("tests/test_text.py")).unwrap();
    assert!(!written.contains("def join_dashes"), "{written}");
    assert!(written.contains("def test_join_dashes"), "{written}");
    let asked: Vec<&Value> = requests.iter().filter(|r| r["node_id"] == "1").collect();
    assert_eq!(asked.len(), 2);
    let again = prompt(asked[1]);
    assert!(
        again.contains("defines `join_dashes` (defined in text.py) again"),
        "{again}"
    );
}

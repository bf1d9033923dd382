//! `zerorepo code` with a request that gives examples: they are acceptance tests a change
//! must pass besides the suite, so a change that does not do what was asked is corrected or
//! never written; and an answer cut off by its token budget is never applied.

use std::path::Path;

use serde_json::{Value, json};

use super::change::{plan, write};
use super::support::{run, tree, zerorepo};

pub(super) const MODULE: &str = "def lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n";
const TESTS: &str = "from text import lower_words\n\n\ndef test_lower_words():\n    assert lower_words(\"A\") == \"a\"\n";
const REQUEST: &str = "Add `slugify_title(s)` to text, built from lower_words and join_dashes, \
                       so that 'A B' becomes 'a-b'.";
/// The first answer of issue 40: an existing function again under the new name.
const COPIED: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef slugify_title(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n```";
const RIGHT: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(lower_words(s))\n```";

/// The acceptance tests' file name in the sandbox copy.
const ACCEPTANCE_FILE: &str = "test_zerorepo_acceptance.py";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "text.py", MODULE);
    write(dir.path(), "tests/test_text.py", TESTS);
    dir
}

fn one_task() -> Value {
    plan(json!([
        {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Add slugify_title(s), joined by dashes."}
    ]))
}

pub(super) fn answer(node: &str, role: &str, text: &str) -> Value {
    json!({"node": node, "role": role, "answer": text})
}

/// `zerorepo code --yes --json` with `request` and the scripted answers.
pub(super) fn code(
    repo: &Path,
    request: &str,
    script: &[Value],
    extra: &[&str],
) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.jsonl");
    let lines: Vec<String> = script.iter().map(Value::to_string).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let mut cmd = zerorepo();
    cmd.args(["code", "--yes", "--json", "--prompt", request, "--repo"])
        .arg(repo)
        .arg("--llm")
        .arg(format!("scripted:{}", path.display()))
        .args(extra);
    let (status, stdout, stderr) = run(&mut cmd);
    let outcome = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (status, outcome, stderr)
}

/// The outcomes of the trail's `action` entries, in order.
pub(super) fn outcomes(steps: &[Value]) -> Vec<&str> {
    steps
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect()
}

pub(super) fn trail(repo: &Path, action: &str) -> Vec<Value> {
    let (status, stdout, stderr) = run(zerorepo().args(["history", "--json"]).arg(repo));
    assert_eq!(status, 0, "{stderr}");
    let all: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    // An empty action: every entry, in order.
    all.into_iter()
        .filter(|e| action.is_empty() || e["action"] == action)
        .collect()
}

#[test]
fn a_copied_function_fails_the_requests_example_and_is_corrected() {
    let repo = project();
    let script = [
        one_task(),
        answer("1", "impl", COPIED),
        answer("correct", "fix", RIGHT),
    ];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(
        outcome["corrections"], 1,
        "the suite passed the copy; the example did not"
    );
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(
        text.contains("return join_dashes(lower_words(s))"),
        "{text}"
    );
    assert!(
        !repo.path().join(ACCEPTANCE_FILE).exists(),
        "the acceptance tests are never written to the repository"
    );
    assert_eq!(outcome["examples"][0]["status"], "passed", "{outcome:#}");
    // The planner's task carries the example on.
    let task = outcome["plan"]["plan"]["tasks"][0]["description"]
        .as_str()
        .unwrap();
    assert!(
        task.contains("`slugify_title('A B')` should return `'a-b'`"),
        "{task}"
    );
    let accepts = trail(repo.path(), "accept");
    assert_eq!(outcomes(&accepts), ["failed", "passed"]);
    assert!(
        accepts[0]["excerpt"]
            .as_str()
            .unwrap()
            .contains("got 'a b', expected 'a-b'"),
        "{:#}",
        accepts[0]
    );
    // While its example fails, the example is what the correction goes by: the model's own
    // calls of the new function are asked for once it passes (none is scripted here).
    let steps: Vec<String> = trail(repo.path(), "")
        .iter()
        .map(|e| format!("{} {}", e["action"].as_str().unwrap(), e["outcome"]))
        .filter(|s| s.starts_with("accept") || s.starts_with("probe"))
        .collect();
    assert_eq!(
        steps,
        [
            "accept \"failed\"",
            "accept \"passed\"",
            "probe \"skipped\""
        ],
        "{steps:?}"
    );
}

#[test]
fn a_change_that_never_does_what_was_asked_is_not_written() {
    let repo = project();
    let before = tree(repo.path());
    let script = [
        one_task(),
        answer("1", "impl", COPIED),
        answer("correct", "fix", COPIED),
    ];
    let (status, outcome, stderr) =
        code(repo.path(), REQUEST, &script, &["--max-corrections", "2"]);
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back");
    assert_eq!(outcome["corrections"], 2);
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("after 2 correction round(s)")
            && reason.contains("`slugify_title('A B')` should return `'a-b'`")
            && reason.contains("got 'a b', expected 'a-b'"),
        "{reason}"
    );
    assert!(
        reason.contains("gives text.py back as it was"),
        "the second correction repeated the failed code and was not run: {reason}"
    );
    assert_eq!(outcome["examples"][0]["status"], "failed");
    assert_eq!(tree(repo.path()), before, "not one byte changed");
    let rollback = trail(repo.path(), "rollback");
    assert!(
        rollback[0]["detail"]
            .as_str()
            .unwrap()
            .contains("slugify_title('A B')"),
        "{rollback:#?}"
    );
}

/// The 1.5B model's corrections of a new function that failed its example gave the function
/// back, token for token, in every sample (code corpus, dev half). The round after one whose
/// answers all did shows the file without the function and begins it again where it was.
#[test]
fn a_new_function_whose_corrections_copy_it_back_is_written_again_out_of_view() {
    let repo = project();
    let record = tempfile::tempdir().unwrap();
    let again = "ADD AFTER join_dashes\n```python\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(lower_words(s))\n```";
    let script = [
        one_task(),
        answer("1", "impl", COPIED),
        answer("correct", "fix", COPIED),
        json!({"node": "correct", "role": "fix", "attempt": 1, "answer": again}),
    ];
    let extra = ["--record", record.path().to_str().unwrap()];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &extra);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(outcome["corrections"], 2, "{outcome:#}");
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert_eq!(text.matches("def slugify_title").count(), 1, "{text}");
    assert!(
        text.contains("return join_dashes(lower_words(s))"),
        "{text}"
    );
    let corrects = trail(repo.path(), "correct");
    assert_eq!(
        outcomes(&corrects),
        ["unusable", "applied"],
        "{corrects:#?}"
    );
    assert!(
        corrects[1]["detail"]
            .as_str()
            .unwrap()
            .ends_with("`slugify_title` afresh"),
        "{corrects:#?}"
    );
    // What the second round was shown: the module without the failed function.
    let second: Vec<Value> = recorded_requests(record.path())
        .into_iter()
        .filter(|r| r["node_id"] == "correct" && r["attempt"] == 1)
        .collect();
    assert!(!second.is_empty());
    let prompt = second[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("def join_dashes") && !prompt.contains("def slugify_title"),
        "{prompt}"
    );
    assert!(prompt.contains("`slugify_title` is taken out of the file below"));
    assert_eq!(
        second[0]["prefill"],
        "ADD AFTER join_dashes\n```python\ndef slugify_title"
    );
}

/// A request that names, in backticks, the module's functions a new one is built on: the
/// correction of a new function that uses none of them says so (the 1.5B model counted
/// `len` where the request said `wcswidth`, round after round; code corpus, dev half).
#[test]
fn the_correction_of_a_new_function_names_what_the_request_built_it_on() {
    let repo = project();
    let record = tempfile::tempdir().unwrap();
    let request = "Add `slugify_title(s)` to text, built from `lower_words` and \
                   `join_dashes`: `slugify_title('A B')` returns `'a-b'`.";
    let script = [
        one_task(),
        answer("1", "impl", COPIED),
        answer("correct", "fix", RIGHT),
    ];
    let extra = ["--record", record.path().to_str().unwrap()];
    let (status, outcome, stderr) = code(repo.path(), request, &script, &extra);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let corrections: Vec<Value> = recorded_requests(record.path())
        .into_iter()
        .filter(|r| r["node_id"] == "correct")
        .collect();
    let prompt = corrections[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains(
            "The change names `join_dashes`, `lower_words`, and the new `slugify_title` \
             does not use them: build it on what the change names."
        ),
        "{prompt}"
    );
}

/// A short module re-typed whole without a function the request never named is refused;
/// asked again whole, the 1.5B model dropped the same definitions (code corpus, dev half).
/// Once a whole answer dropped one, the file is asked by symbol: the answer adds the new
/// function at the end and re-types nothing.
#[test]
fn a_whole_answer_that_drops_a_function_is_asked_again_by_symbol() {
    let first = "```python\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(s.lower())\n```";
    let repo = project();
    let record = tempfile::tempdir().unwrap();
    let request = "Add `slugify_title(s)` to text, lower-cased and joined by dashes, so that \
                   'A B' becomes 'a-b'.";
    let by_symbol = "ADD AT END\n```python\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(lower_words(s))\n```";
    let script = [
        one_task(),
        answer("1", "impl", first),
        json!({"node": "1", "role": "impl", "attempt": 1, "answer": by_symbol}),
    ];
    let extra = ["--record", record.path().to_str().unwrap()];
    let (status, outcome, stderr) = code(repo.path(), request, &script, &extra);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(
        text.starts_with(MODULE) && text.contains("return join_dashes(lower_words(s))"),
        "{text}"
    );
    let prefills: Vec<Value> = recorded_requests(record.path())
        .into_iter()
        .filter(|r| r["node_id"] == "1")
        .map(|r| r["prefill"].clone())
        .collect();
    assert_eq!(
        prefills,
        ["```python\n", "ADD AT END\n```python\ndef slugify_title"],
        "the second answer by symbol"
    );
}

#[test]
fn a_whole_answer_without_the_function_the_task_adds_is_asked_again_begun_at_it() {
    // The module re-typed with one docstring changed and the new function left out, as the
    // 1.5B model answered on a short module of a real library: no check could tell it more
    // than that the name does not import.
    let retyped = format!(
        "```python\n{}```",
        MODULE.replace("lower-cased.", "in lower case.")
    );
    let repo = project();
    let record = tempfile::tempdir().unwrap();
    let by_symbol = "ADD AFTER join_dashes\n```python\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(lower_words(s))\n```";
    let script = [
        one_task(),
        answer("1", "impl", &retyped),
        json!({"node": "1", "role": "impl", "attempt": 1, "answer": by_symbol}),
    ];
    let extra = ["--record", record.path().to_str().unwrap()];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &extra);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let tasks = trail(repo.path(), "task");
    assert_eq!(outcomes(&tasks), ["failed", "ok"], "{tasks:#?}");
    let why = tasks[0]["excerpt"].as_str().unwrap();
    assert!(why.contains("does not define `slugify_title`"), "{why}");
    let prefills: Vec<Value> = recorded_requests(record.path())
        .into_iter()
        .filter(|r| r["node_id"] == "1")
        .map(|r| r["prefill"].clone())
        .collect();
    assert_eq!(
        prefills,
        [
            "```python\n",
            "ADD AFTER join_dashes\n```python\ndef slugify_title"
        ],
        "the second answer begun at the new function"
    );
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(
        text.starts_with(MODULE) && text.contains("return join_dashes(lower_words(s))"),
        "{text}"
    );
}

/// The requests a `--record` directory holds, in the order they were asked.
fn recorded_requests(record: &Path) -> Vec<Value> {
    let exchanges = std::fs::read_to_string(record.join("exchanges.jsonl")).unwrap();
    (exchanges.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["request"].clone())
        .collect()
}

#[test]
fn a_function_the_answer_dropped_and_its_new_code_calls_is_put_back() {
    let repo = project();
    // The module re-typed without join_dashes, which the new function calls (the request
    // names it, so the answer is not refused for dropping it): the example fails on a
    // NameError until the definition is put back where it was.
    let dropping = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef slugify_title(s):\n    \"\"\"Return s lower-cased, its words joined by dashes.\"\"\"\n    return join_dashes(lower_words(s))\n```";
    let script = [one_task(), answer("1", "impl", dropping)];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(outcome["corrections"], 0, "{outcome:#}");
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(
        text.starts_with(MODULE) && text.contains("return join_dashes(lower_words(s))"),
        "join_dashes back where it was, the new function after it:\n{text}"
    );
    let trims = trail(repo.path(), "trim");
    assert_eq!(outcomes(&trims), ["put back"], "{trims:#?}");
    assert!(
        (trims[0]["detail"].as_str().unwrap()).contains("join_dashes as the repository has it"),
        "{trims:#?}"
    );
}

#[test]
fn an_answer_cut_off_by_its_token_budget_is_never_written() {
    let repo = project();
    let before = tree(repo.path());
    // The whole file begun again and cut after its first function: it parses, and applied it
    // would drop join_dashes.
    let cut = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n";
    let script = [one_task(), answer("1", "impl", cut)];
    let (status, outcome, stderr) =
        code(repo.path(), "Add slugify_title(s) to text.", &script, &[]);
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("task 1 failed") && reason.contains("cut off"),
        "{reason}"
    );
    assert_eq!(tree(repo.path()), before);
}

#[test]
fn a_bug_report_that_does_not_reproduce_is_said_and_the_suite_decides() {
    let repo = project();
    let script = [
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Fix join_dashes."}
        ])),
        answer("1", "impl", RIGHT),
        answer("probe", "test", "'A B')\n```"),
    ];
    let request = "Fix join_dashes: join_dashes('a b') should return 'a-b'.";
    let (status, outcome, stderr) = code(repo.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed");
    assert_eq!(outcome["examples"][0]["status"], "does not reproduce");
    let reproduce = trail(repo.path(), "reproduce");
    assert_eq!(
        reproduce[0]["outcome"], "does not reproduce",
        "{reproduce:#?}"
    );
    assert!(
        trail(repo.path(), "accept").is_empty(),
        "nothing left to accept"
    );
}

#[test]
fn a_bug_report_is_reproduced_before_the_change() {
    let repo = project();
    write(
        repo.path(),
        "text.py",
        &MODULE.replace("\"-\".join(s.split())", "\" \".join(s.split())"),
    );
    let script = [
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Fix join_dashes."}
        ])),
        answer("1", "impl", RIGHT),
        answer("probe", "test", "'A B')\n```"),
    ];
    let request = "join_dashes('a b') returns 'a b' but should return 'a-b'.";
    let (status, outcome, stderr) = code(repo.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    let reproduce = trail(repo.path(), "reproduce");
    assert_eq!(reproduce[0]["outcome"], "reproduced", "{reproduce:#?}");
    assert_eq!(outcome["examples"][0]["status"], "passed");
}

#[test]
fn raises_doctests_and_floats_are_checked_in_the_sandbox() {
    let repo = project();
    let request = "Add `parse_ratio(s)` to text: parse_ratio('x') should raise ValueError.\n\
                   >>> parse_ratio('1/4')\n0.25\n";
    let with_ratio = |body: &str| {
        format!(
            "```python\n{}\n\ndef parse_ratio(s):\n{body}\n```",
            MODULE.trim_end()
        )
    };
    // The first answer divides the wrong way round; the second is right.
    let wrong = with_ratio("    a, b = s.split('/')\n    return int(b) / int(a)");
    let right = with_ratio("    a, b = s.split('/')\n    return int(a) / int(b)");
    let script = [
        one_task(),
        answer("1", "impl", &wrong),
        answer("correct", "fix", &right),
    ];
    let (status, outcome, stderr) = code(repo.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["corrections"], 1, "{outcome:#}");
    let statuses: Vec<&str> = outcome["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["passed", "passed"], "{outcome:#}");
    let first = &trail(repo.path(), "accept")[0];
    let excerpt = first["excerpt"].as_str().unwrap();
    assert!(
        excerpt.contains("- passed: `parse_ratio('x')` should raise ValueError")
            && excerpt.contains("- FAILED: `parse_ratio('1/4')` should return `0.25`"),
        "{excerpt}"
    );
}

#[test]
fn an_answer_that_gives_the_module_back_unchanged_is_asked_again() {
    let repo = project();
    let unchanged = format!("```python\n{MODULE}```");
    let script = [
        one_task(),
        answer("1", "impl", &unchanged),
        json!({"node": "1", "role": "impl", "attempt": 1, "answer": RIGHT}),
    ];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let tasks = trail(repo.path(), "task");
    assert_eq!(tasks[0]["outcome"], "failed", "{tasks:#?}");
    assert!(
        tasks[0]["excerpt"]
            .as_str()
            .unwrap()
            .contains("leaves text.py as it is"),
        "{tasks:#?}"
    );
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(text.contains("def slugify_title(s):"), "{text}");
}

#[test]
fn a_change_that_changes_nothing_is_never_reported_as_written() {
    let repo = project();
    let before = tree(repo.path());
    let unchanged = format!("```python\n{MODULE}```");
    let script = [one_task(), answer("1", "impl", &unchanged)];
    let (status, outcome, stderr) = code(
        repo.path(),
        "Tidy text.py.",
        &script,
        &["--max-corrections", "1"],
    );
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
    assert!(
        outcome["reason"]
            .as_str()
            .unwrap()
            .contains("leaves text.py as it is"),
        "{outcome:#}"
    );
    assert_eq!(tree(repo.path()), before);
}

/// The request of the tests below, a new function it gives no example of.
const COUNT_WORDS: &str = "Add `count_words(s)` to text.py: the number of words in s.";

/// Its one task's answer `implementation`, then the model's calls of the new function.
fn count_words(implementation: &str, calls: &str) -> [Value; 3] {
    [
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Add count_words(s)."}
        ])),
        answer("1", "impl", implementation),
        answer("probe", "test", calls),
    ]
}

/// A new function the request gives no example of, that crashes on the first call.
const CRASHES: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    return len(iter(s.split()))\n```";
const COUNTS: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    return len(s.split())\n```";
/// The model's calls, after the begun first call `count_words(`.
const CALLS: &str = "'a b')\n\n\ndef test_count_words_empty():\n    count_words('')\n\n\ndef test_count_words_wrong_call():\n    count_words()\n```";

#[test]
fn a_new_function_with_no_example_that_crashes_on_a_call_is_corrected() {
    let repo = project();
    let mut script = count_words(CRASHES, CALLS).to_vec();
    script.push(answer("correct", "fix", COUNTS));
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(
        outcome["corrections"], 1,
        "the suite passed; the calls did not"
    );
    let probes = trail(repo.path(), "probe");
    assert_eq!(
        outcomes(&probes),
        ["asked", "crashed", "passed"],
        "{probes:#?}"
    );
    let crashed = probes[1]["excerpt"].as_str().unwrap();
    assert!(
        crashed.contains("test_count_words_typical") && !crashed.contains("wrong_call"),
        "a call that fails in its own frame is no crash: {crashed}"
    );
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(text.contains("return len(s.split())"), "{text}");
    assert!(!repo.path().join("test_zerorepo_probes.py").exists());
}

/// The same function asked with an example of it, which both answers below pass.
const COUNT_WORDS_GIVEN: &str =
    "Add `count_words(s)` to text.py: the number of words in s; `count_words('a b')` returns `2`.";
/// `count_words` right on the example, that crashes (`IndexError`) on an empty string.
const CRASHES_ON_EMPTY: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    return len(s.split()) if s.split()[0] else 0\n```";

#[test]
fn a_new_function_that_passes_its_example_and_crashes_on_another_call_is_corrected() {
    // The example is two words; the model's calls try the empty string the request allows
    // too, and the function breaks there: its example alone would have let it through.
    let repo = project();
    let mut script = count_words(CRASHES_ON_EMPTY, CALLS).to_vec();
    script.push(answer("correct", "fix", COUNTS));
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS_GIVEN, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(
        outcome["corrections"], 1,
        "the example passed; a call did not"
    );
    let probes = trail(repo.path(), "probe");
    assert_eq!(
        outcomes(&probes),
        ["asked", "crashed", "passed"],
        "{probes:#?}"
    );
    assert!(
        probes[1]["excerpt"]
            .as_str()
            .unwrap()
            .contains("IndexError"),
        "{probes:#?}"
    );

    // Calls that never reach it take nothing from a function its example ran: written, and
    // no second answer asked.
    let repo = project();
    let script = count_words(COUNTS, NO_CALL_RUNS);
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS_GIVEN, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let probes = trail(repo.path(), "probe");
    assert_eq!(outcomes(&probes), ["asked", "not run"], "{probes:#?}");

    // One value the model got wrong does not outweigh the example: written.
    let repo = project();
    let one_wrong = "'a  b ')\n    assert result == 3\n```";
    let script = count_words(COUNTS, one_wrong);
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS_GIVEN, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let probes = trail(repo.path(), "probe");
    assert_eq!(outcomes(&probes), ["asked", "passed"], "{probes:#?}");
}

/// Calls that never reach the new function: a name never imported, a call with no argument.
const NO_CALL_RUNS: &str =
    "re.compile('a'))\n\n\ndef test_count_words_wrong_call():\n    count_words()\n```";

#[test]
fn a_new_function_with_no_example_that_no_call_reaches_is_not_written() {
    // Twice the model's calls fail in their own frame: the function crashes on every input,
    // and nothing ran it, so nothing shows it does what was asked.
    let repo = project();
    let before = tree(repo.path());
    let script = count_words(CRASHES, NO_CALL_RUNS);
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS, &script, &[]);
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("no call of the new count_words ran") && reason.contains("NameError"),
        "{reason}"
    );
    let probes = trail(repo.path(), "probe");
    assert_eq!(
        outcomes(&probes),
        ["asked", "not run", "asked", "not run"],
        "{probes:#?}"
    );
    assert_eq!(tree(repo.path()), before, "not one byte changed");
}

/// `count_words` that counts characters: it runs on every input, and returns the wrong thing.
const COUNTS_CHARACTERS: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    return len(s)\n```";
/// The model's calls with the values it expects, after the begun `result = count_words(`:
/// three right, one wrong (a small model's expectations are not all right).
const EXPECTED: &str = "'a b')\n    assert result == 2\n\n\ndef test_count_words_empty():\n    result = count_words('')\n    assert result == 0\n\n\ndef test_count_words_one():\n    result = count_words('word')\n    assert result == 1\n\n\ndef test_count_words_spaces():\n    result = count_words('a  b ')\n    assert result == 3\n```";

#[test]
fn a_new_function_with_no_example_that_most_expected_values_dispute_is_not_written() {
    let repo = project();
    let before = tree(repo.path());
    let script = count_words(COUNTS_CHARACTERS, EXPECTED);
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS, &script, &[]);
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("count_words disagrees with most values expected of it")
            && reason.contains("1 of 4 calls"),
        "{reason}"
    );
    assert_eq!(
        outcome["corrections"], 0,
        "never corrected towards the values"
    );
    let probes = trail(repo.path(), "probe");
    assert_eq!(outcomes(&probes), ["asked", "disputed"], "{probes:#?}");
    assert_eq!(tree(repo.path()), before, "not one byte changed");
}

#[test]
fn a_new_function_with_no_example_that_most_expected_values_confirm_is_written() {
    // The same calls, the right function: the one wrong expectation is outvoted.
    let repo = project();
    let script = count_words(COUNTS, EXPECTED);
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let probes = trail(repo.path(), "probe");
    assert_eq!(outcomes(&probes), ["asked", "passed"], "{probes:#?}");
}

/// The request of the test below: an error stated in prose, with no example.
const COUNT_WORDS_STRICT: &str = "Add `count_words(s)` to text.py: the number of words in s. Raise `ValueError` for an empty string.";
/// `count_words` that raises on an empty string, as the request says.
const COUNTS_STRICTLY: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    if not s:\n        raise ValueError('empty')\n    return len(s.split())\n```";
/// The model's calls: one value, and the stated error on the input the request names.
const EXPECTS_THE_ERROR: &str = "'a b')\n    assert result == 2\n\n\ndef test_count_words_empty():\n    with pytest.raises(ValueError):\n        count_words('')\n```";

#[test]
fn a_new_function_that_returns_where_the_request_names_its_error_is_corrected() {
    // The first answer counts well and never raises: pytest's DID NOT RAISE used to count
    // for nothing, and the function was written without the case the request states.
    let repo = project();
    let mut script = count_words(COUNTS, EXPECTS_THE_ERROR).to_vec();
    script.push(answer("correct", "fix", COUNTS_STRICTLY));
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS_STRICT, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(outcome["corrections"], 1, "{outcome:#}");
    let probes = trail(repo.path(), "probe");
    assert_eq!(
        outcomes(&probes),
        ["asked", "missed an error the request names", "passed"],
        "{probes:#?}"
    );
    let missed = probes[1]["excerpt"].as_str().unwrap();
    assert!(
        missed.contains("count_words('')") && missed.contains("DID NOT RAISE"),
        "the correction is shown the call: {missed}"
    );
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(text.contains("raise ValueError"), "{text}");

    // No correction that raises: nothing written.
    let repo = project();
    let before = tree(repo.path());
    let mut script = count_words(COUNTS, EXPECTS_THE_ERROR).to_vec();
    script.push(answer("correct", "fix", COUNTS));
    let (status, outcome, stderr) = code(
        repo.path(),
        COUNT_WORDS_STRICT,
        &script,
        &["--max-corrections", "1"],
    );
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
    assert_eq!(tree(repo.path()), before, "not one byte changed");
}

#[test]
fn a_new_function_left_out_of_the_modules_all_is_added_to_it() {
    // Right on the request's example, but the module lists its public names and the answer
    // did not add the new one: zerorepo adds it, and no correction is asked.
    let listed = "__all__ = ['lower_words', 'join_dashes']\n\n\n";
    let repo = tempfile::tempdir().unwrap();
    write(repo.path(), "text.py", &format!("{listed}{MODULE}"));
    write(repo.path(), "tests/test_text.py", TESTS);
    let unlisted = RIGHT.replacen("```python\n", &format!("```python\n{listed}"), 1);
    let script = [one_task(), answer("1", "impl", &unlisted)];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(outcome["corrections"], 0, "{outcome:#}");
    let exports = trail(repo.path(), "exports");
    assert_eq!(exports.len(), 1, "{exports:#?}");
    assert_eq!(
        exports[0]["detail"], "text.py: added slugify_title to `__all__`",
        "{exports:#?}"
    );
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(
        text.starts_with("__all__ = ['lower_words', 'join_dashes', 'slugify_title']\n"),
        "{text}"
    );
}

/// `count_words` right on the example, wrong on an empty string (it says 1).
const COUNTS_SPACES: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    return s.count(' ') + 1\n```";
/// Calls that assert nothing: they confirm nothing and dispute nothing.
const BARE_CALLS: &str =
    "'a b')\n\n\ndef test_count_words_empty():\n    result = count_words('')\n```";

/// A version that counts the words the right way.
const SPLITS: &str = "    return len(s.split())\n```";

/// `zerorepo code` asked for `count_words` with its example, answered `implementation`, the
/// model's `calls` and two versions whose body is `version`.
struct Versioned {
    repo: tempfile::TempDir,
    before: std::collections::BTreeMap<String, Vec<u8>>,
    status: i32,
    outcome: Value,
    stderr: String,
}

fn with_versions(implementation: &str, calls: &str, version: &str) -> Versioned {
    let repo = project();
    let before = tree(repo.path());
    let mut script = count_words(implementation, calls).to_vec();
    script.push(answer("rival", "impl", version));
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS_GIVEN, &script, &[]);
    Versioned {
        repo,
        before,
        status,
        outcome,
        stderr,
    }
}

impl Versioned {
    /// Its reason, once the run is seen rolled back with not one byte changed.
    fn rolled_back(&self) -> &str {
        let (outcome, stderr) = (&self.outcome, &self.stderr);
        assert_eq!(self.status, 1, "{stderr}\n{outcome:#}");
        assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
        assert_eq!(tree(self.repo.path()), self.before, "not one byte changed");
        outcome["reason"].as_str().unwrap()
    }

    fn committed(&self) {
        let (outcome, stderr) = (&self.outcome, &self.stderr);
        assert_eq!(self.status, 0, "{stderr}\n{outcome:#}");
        assert_eq!(outcome["status"], "committed", "{outcome:#}");
    }

    /// The trail's `versions` entries, once their outcomes are seen to be `expected`.
    fn versions(&self, expected: &[&str]) -> Vec<Value> {
        let versions = trail(self.repo.path(), "versions");
        assert_eq!(outcomes(&versions), expected, "{versions:#?}");
        versions
    }
}

#[test]
fn a_new_function_that_versions_written_apart_agree_against_is_not_written() {
    // The example and the model's calls pass; two versions written from the request alone
    // both count no word in '' where the change counts one: not written.
    let run = with_versions(COUNTS_SPACES, BARE_CALLS, SPLITS);
    let reason = run.rolled_back();
    assert!(
        reason.contains("versions of count_words") && reason.contains("count_words('')"),
        "{reason}"
    );
    run.versions(&["asked", "disputed"]);

    // Versions that agree with it: written.
    let run = with_versions(COUNTS, BARE_CALLS, SPLITS);
    run.committed();
    run.versions(&["asked", "agreed"]);

    // Versions that fail the request's example have no say: written.
    let run = with_versions(COUNTS_SPACES, BARE_CALLS, "    return 0\n```");
    run.committed();
    run.versions(&["asked", "agreed"]);
}

/// A version that does not parse is no version: the check needs two, and is asked once
/// more, with other seeds, when a sample is unusable. The 1.5B model wrote
/// `return x if c else raise E` in one of two samples, the check did not run, and a change
/// that never raised the error the request names was written (code corpus, dev half).
#[test]
fn a_version_that_does_not_parse_is_asked_again_and_the_check_runs() {
    let repo = project();
    let before = tree(repo.path());
    let mut script = count_words(COUNTS_SPACES, BARE_CALLS).to_vec();
    script.push(answer("rival", "impl", SPLITS));
    let broken = "    return len(s) if s else raise ValueError('none')\n```";
    script.push(json!({"node": "rival", "role": "impl", "candidate": 1, "answer": broken}));
    script.push(json!({"node": "rival", "role": "impl", "attempt": 1, "answer": SPLITS}));
    script.push(
        json!({"node": "rival", "role": "impl", "attempt": 1, "candidate": 1, "answer": SPLITS}),
    );
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS_GIVEN, &script, &[]);
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
    assert_eq!(tree(repo.path()), before, "not one byte changed");
    let versions = trail(repo.path(), "versions");
    assert_eq!(
        outcomes(&versions),
        ["asked", "asked", "disputed"],
        "{versions:#?}"
    );
}

/// One call that asserts nothing, on three words: the empty string is tried by no one.
const THREE_WORDS: &str = "'a b c')\n```";

#[test]
fn a_new_function_that_versions_agree_against_on_a_call_with_one_literal_changed_is_not_written() {
    // Neither the example ('a b') nor the model's call ('a b c') shows that the change counts
    // a word in ''; the same calls with a literal emptied or halved do, and both versions
    // count none there.
    let run = with_versions(COUNTS_SPACES, THREE_WORDS, SPLITS);
    let reason = run.rolled_back();
    assert!(
        reason.contains("count_words('')") && reason.contains("one literal changed"),
        "{reason}"
    );
    run.versions(&["asked", "disputed"]);

    // The right function: its variants agree with the versions, and it is written.
    let run = with_versions(COUNTS, THREE_WORDS, SPLITS);
    run.committed();
    let versions = run.versions(&["asked", "agreed"]);
    let detail = versions[1]["detail"].as_str().unwrap();
    assert!(detail.contains("of them variants"), "{versions:#?}");
}

/// `count_words` that leaves out a word written with zeros only: right on the example and on
/// every call the model wrote.
const SKIPS_ZEROS: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    return len([w for w in s.split() if w.strip('0')])\n```";
/// One call that asserts nothing, on a word written as a number.
const A_NUMBER: &str = "'a 1')\n```";

#[test]
fn a_new_function_that_versions_agree_against_on_a_number_changed_inside_a_string_is_not_written() {
    // Emptied ('') or halved ('a'), the call's string says nothing against the change; with
    // the number in it made 0 ('a 0'), both versions count two words where the change counts
    // one.
    let run = with_versions(SKIPS_ZEROS, A_NUMBER, SPLITS);
    let reason = run.rolled_back();
    assert!(reason.contains("count_words('a 0')"), "{reason}");
    run.versions(&["asked", "disputed"]);

    let run = with_versions(COUNTS, A_NUMBER, SPLITS);
    run.committed();
    run.versions(&["asked", "agreed"]);
}

/// `count_words` right on the example, wrong on three words, and looping for ever on an empty
/// string inside a bare `except` (which swallows any alarm).
const LOOPS_ON_EMPTY: &str = "```python\ndef lower_words(s):\n    \"\"\"Return s lower-cased.\"\"\"\n    return s.lower()\n\n\ndef join_dashes(s):\n    \"\"\"Return the words of s joined by dashes.\"\"\"\n    return \"-\".join(s.split())\n\n\ndef count_words(s):\n    \"\"\"Return the number of words in s.\"\"\"\n    while not s:\n        try:\n            s = s.strip()\n        except:\n            pass\n    return len(s.split()) + (s == 'a b c')\n```";

#[test]
fn a_variant_that_never_ends_costs_the_variants_only_and_the_calls_own_dispute_stands() {
    // The model's call on three words is disputed by both versions; a variant empties it, and
    // the change never returns there. The variants are given up; the call's record is not.
    let run = with_versions(LOOPS_ON_EMPTY, THREE_WORDS, SPLITS);
    let reason = run.rolled_back();
    assert!(
        reason.contains("`count_words('a b c')` returns 4"),
        "{reason}"
    );
}

#[test]
fn the_calls_of_a_new_function_are_asked_once_whatever_the_correction_candidates_tried() {
    // The first answer fails the example, so the calls wait; each correction candidate's
    // trial passes it and runs the calls, and puts back what it recorded after. The same
    // prompt is answered once: the second candidate runs the calls the first one asked.
    let repo = project();
    let zero = COUNTS.replace("return len(s.split())", "return 0");
    let mut script = count_words(&zero, CALLS).to_vec();
    script.push(answer("correct", "fix", CRASHES_ON_EMPTY));
    script.push(json!({"node": "correct", "role": "fix", "candidate": 1, "answer": COUNTS}));
    let (status, outcome, stderr) = code(repo.path(), COUNT_WORDS_GIVEN, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let tried = trail(repo.path(), "correct");
    assert!(
        tried.iter().filter(|e| e["outcome"] == "tried").count() >= 2,
        "{tried:#?}"
    );
    let probes = trail(repo.path(), "probe");
    let asked = outcomes(&probes).iter().filter(|o| **o == "asked").count();
    assert_eq!(asked, 1, "{probes:#?}");
    assert!(outcomes(&probes).contains(&"crashed"), "{probes:#?}");
}

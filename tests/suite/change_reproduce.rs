//! `zerorepo code` with a request that says in words, with no example, what existing code
//! does wrong: the model's tests of it run before the change, those that fail there are kept,
//! and the change is written only when one of them passes after it (seed 003's error-first
//! rule).

use serde_json::json;

use super::change::{plan, write};
use super::change_examples::{MODULE, answer, code, outcomes, trail};
use super::support::tree;

/// join_dashes joins with underscores: the bug the request describes.
fn buggy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let module = MODULE.replace("\"-\".join(s.split())", "\"_\".join(s.split())");
    write(dir.path(), "text.py", &module);
    write(
        dir.path(),
        "tests/test_text.py",
        "from text import lower_words\n\n\ndef test_lower_words():\n    assert lower_words(\"A\") == \"a\"\n",
    );
    dir
}

const REQUEST: &str = "join_dashes in text.py puts underscores between the words. The words \
                       must be joined by dashes.";

/// The model's tests: one shows the bug, one passes already, one fails in its own frame.
const TESTS: &str = "```python\nimport pytest\n\nfrom text import join_dashes\n\n\ndef test_request_two_words():\n    assert join_dashes('a b') == 'a-b'\n\n\ndef test_request_one_word():\n    assert join_dashes('a') == 'a'\n\n\ndef test_request_bad_call():\n    join_dashes('a b', 'c')\n```";

fn with_join(body: &str) -> String {
    let module = MODULE.replace("\"-\".join(s.split())", body);
    format!("```python\n{module}```")
}

fn script(correction: &str) -> Vec<serde_json::Value> {
    vec![
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Join by dashes."}
        ])),
        answer("reproduce", "test", TESTS),
        // Changed, but still underscores: the suite passes it.
        answer("1", "impl", &with_join("\"_\".join(s.split(\" \"))")),
        answer("correct", "fix", correction),
    ]
}

#[test]
fn a_bug_told_in_words_is_reproduced_first_and_its_fix_corrected_until_it_shows() {
    let repo = buggy();
    let right = with_join("\"-\".join(s.split())");
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script(&right), &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(
        outcome["corrections"], 1,
        "the suite passed the first answer; the reproduction did not"
    );
    let steps = trail(repo.path(), "reproduce");
    assert_eq!(
        outcomes(&steps),
        ["asked", "reproduced", "still fails", "passed"],
        "{steps:#?}"
    );
    assert_eq!(
        steps[1]["detail"], "test_request_two_words",
        "a test that passes before, or fails in its own frame, shows nothing: {steps:#?}"
    );
    let text = std::fs::read_to_string(repo.path().join("text.py")).unwrap();
    assert!(text.contains("return \"-\".join(s.split())"), "{text}");
    assert!(!repo.path().join("test_zerorepo_reproduce.py").exists());
}

#[test]
fn a_fix_that_never_makes_the_reproduction_pass_is_not_written() {
    let repo = buggy();
    let before = tree(repo.path());
    let still = with_join("\"_\".join(w for w in s.split())");
    let (status, outcome, stderr) = code(
        repo.path(),
        REQUEST,
        &script(&still),
        &["--max-corrections", "1"],
    );
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("test_zerorepo_reproduce.py") && reason.contains("still fails"),
        "{reason}"
    );
    assert_eq!(tree(repo.path()), before, "not one byte changed");
}

#[test]
fn a_bug_the_repositorys_own_tests_show_is_not_reproduced_again_by_the_model() {
    // The repository's test of join_dashes fails before the change: it is the reproduction.
    // The script holds no `reproduce` answer, and the one test the model would write expects
    // a wrong value; the fix the suite passes is written.
    let repo = buggy();
    write(
        repo.path(),
        "tests/test_join.py",
        "from text import join_dashes\n\n\ndef test_join_dashes():\n    assert join_dashes(\"a b\") == \"a-b\"\n",
    );
    let script = vec![
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Join by dashes."}
        ])),
        answer("1", "impl", &with_join("\"-\".join(s.split())")),
    ];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    let steps = trail(repo.path(), "reproduce");
    assert_eq!(steps.len(), 1, "{steps:#?}");
    assert_eq!(steps[0]["outcome"], "skipped", "{steps:#?}");
    assert_eq!(
        steps[0]["detail"], "the repository's tests fail before the change",
        "{steps:#?}"
    );
}

#[test]
fn a_request_in_words_that_nothing_reproduces_is_not_staged() {
    // Both tries' tests pass on the code as it is (or fail in their own frame): nothing shows
    // the bug, so no task is asked and nothing is written; the second try was told why.
    let repo = buggy();
    let before = tree(repo.path());
    let passing = "```python\nimport pytest\n\nfrom text import join_dashes\n\n\ndef test_request_one_word():\n    assert join_dashes('a') == 'a'\n\n\ndef test_request_bad_call():\n    join_dashes('a b', 'c')\n```";
    let script = vec![
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Join by dashes."}
        ])),
        answer("reproduce", "test", passing),
        answer("reproduce", "test", passing),
        answer("1", "impl", &with_join("\"-\".join(s.split())")),
    ];
    let (status, outcome, stderr) = code(repo.path(), REQUEST, &script, &[]);
    assert_eq!(status, 1, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "rolled_back", "{outcome:#}");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("nothing shows the request is not done yet")
            && reason.contains("test_request_one_word"),
        "{reason}"
    );
    let steps = trail(repo.path(), "reproduce");
    assert_eq!(
        outcomes(&steps),
        ["asked", "does not reproduce", "asked", "does not reproduce"],
        "{steps:#?}"
    );
    assert!(
        trail(repo.path(), "task").is_empty(),
        "no task was asked: {outcome:#}"
    );
    assert_eq!(tree(repo.path()), before, "not one byte changed");
}

/// The script of a change of join_dashes to underscores: its reproduction, the right code for
/// text.py, then a second task on `path` answered with `unusable`, which no file can take.
fn underscores_then(path: &str, description: &str, unusable: &str) -> Vec<serde_json::Value> {
    let tests = "```python\nfrom text import join_dashes\n\n\ndef test_request_underscores():\n    assert join_dashes('a b') == 'a_b'\n```";
    vec![
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "text.py", "description": "Join by underscores."},
            {"id": "2", "kind": "MODIFY_FILE", "path": path, "description": description, "depends_on": ["1"]}
        ])),
        answer("reproduce", "test", tests),
        answer("1", "impl", &with_join("\"_\".join(s.split())")),
        answer("2", "impl", unusable),
    ]
}

#[test]
fn tests_that_expect_the_old_behaviour_are_updated_from_their_failure() {
    // The request changes what join_dashes does; the repository's test expects the old
    // answer. The model's answer to "update the test" cannot be used: the file is left to
    // the checks. Once the reproduction passes, the old test's failure blames its own file
    // (not the code just changed), and the correction of that file is written.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "text.py", MODULE);
    let old_test = "from text import join_dashes\n\n\ndef test_join_dashes():\n    assert join_dashes(\"a b\") == \"a-b\"\n";
    write(dir.path(), "tests/test_text.py", old_test);
    let request = "Change join_dashes in text.py so that it joins the words with underscores, \
                   and update the tests that expect dashes.";
    let updated = format!("```python\n{}```", old_test.replace("a-b", "a_b"));
    let mut script = underscores_then(
        "tests/test_text.py",
        "Update the test of join_dashes.",
        "I would change the assertion.",
    );
    script.push(answer("correct", "fix", &updated));
    let (status, outcome, stderr) = code(dir.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(outcome["corrections"], 1, "{outcome:#}");
    let tasks = trail(dir.path(), "task");
    assert_eq!(
        outcomes(&tasks),
        ["ok", "failed", "left to the checks"],
        "{tasks:#?}"
    );
    let corrections = trail(dir.path(), "correct");
    assert!(
        (corrections.iter()).any(|c| c["detail"] == "round 1: tests/test_text.py"),
        "the old test's file is corrected, not the code: {corrections:#?}"
    );
    let text = std::fs::read_to_string(dir.path().join("tests/test_text.py")).unwrap();
    assert!(text.contains("== \"a_b\""), "{text}");
    let module = std::fs::read_to_string(dir.path().join("text.py")).unwrap();
    assert!(module.contains("\"_\".join"), "{module}");
}

#[test]
fn a_type_stub_whose_answer_cannot_be_used_is_left_and_the_change_is_written() {
    // Nothing runs a stub, so no check can judge its answer: the unusable one leaves the stub
    // as it was, named in the outcome, and the code that does what was asked is written.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "text.py", MODULE);
    let stub = "def join_dashes(s: str) -> str: ...\n";
    write(dir.path(), "text.pyi", stub);
    let request = "Change join_dashes in text.py so that it joins the words with underscores.";
    let script = underscores_then(
        "text.pyi",
        "Update the stub of join_dashes.",
        "The stub needs no change.",
    );
    let (status, outcome, stderr) = code(dir.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(outcome["corrections"], 0, "{outcome:#}");
    assert_eq!(outcome["left"][0]["path"], "text.pyi", "{outcome:#}");
    let tasks = trail(dir.path(), "task");
    assert_eq!(
        outcomes(&tasks),
        [
            "ok",
            "failed",
            "left as it was (a type stub: no check runs it)"
        ],
        "{tasks:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("text.pyi")).unwrap(),
        stub
    );
    let module = std::fs::read_to_string(dir.path().join("text.py")).unwrap();
    assert!(module.contains("\"_\".join"), "{module}");
}

#[test]
fn a_change_written_for_lists_only_fails_its_reproduction_given_an_iterator() {
    // The request says "iterable"; the model's test uses a list. The first answer handles the
    // list (`if not iterable`) and returns None for an empty iterator: after the change its
    // reproduction calls the function again with an iterator, sees the difference, and the
    // correction that handles any iterable is what is written.
    let dir = tempfile::tempdir().unwrap();
    let module = "def all_equal(iterable):\n    \"\"\"True if every element equals the first.\"\"\"\n    iterator = iter(iterable)\n    for first in iterator:\n        return all(x == first for x in iterator)\n    return True\n";
    write(dir.path(), "recipes.py", module);
    let request = "Change all_equal in recipes.py so that an empty iterable gives False.";
    let tests = "```python\nfrom recipes import all_equal\n\n\ndef test_request_empty():\n    assert all_equal([]) is False\n```";
    let lists_only = "```python\ndef all_equal(iterable):\n    \"\"\"True if every element equals the first.\"\"\"\n    if not iterable:\n        return False\n    iterator = iter(iterable)\n    for first in iterator:\n        return all(x == first for x in iterator)\n```";
    let any_iterable = "```python\ndef all_equal(iterable):\n    \"\"\"True if every element equals the first.\"\"\"\n    iterator = iter(iterable)\n    for first in iterator:\n        return all(x == first for x in iterator)\n    return False\n```";
    let script = vec![
        plan(json!([
            {"id": "1", "kind": "MODIFY_FILE", "path": "recipes.py", "description": "An empty iterable gives False."}
        ])),
        answer("reproduce", "test", tests),
        answer("1", "impl", lists_only),
        answer("correct", "fix", any_iterable),
    ];
    let (status, outcome, stderr) = code(dir.path(), request, &script, &[]);
    assert_eq!(status, 0, "{stderr}\n{outcome:#}");
    assert_eq!(outcome["status"], "committed", "{outcome:#}");
    assert_eq!(outcome["corrections"], 1, "{outcome:#}");
    let steps = trail(dir.path(), "reproduce");
    let still = (steps.iter())
        .find(|s| s["outcome"] == "still fails")
        .unwrap_or_else(|| panic!("the list-only answer passed: {steps:#?}"));
    assert!(
        still
            .to_string()
            .contains("given as an iterator of the same items returned None"),
        "{still:#}"
    );
    let written = std::fs::read_to_string(dir.path().join("recipes.py")).unwrap();
    assert!(
        written.contains("return False") && !written.contains("if not iterable"),
        "{written}"
    );
}

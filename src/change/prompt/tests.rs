use super::*;
use crate::change::plan::{Risk, TaskId, TaskKind};

fn task(path: &str) -> Task {
    Task {
        id: TaskId("1".into()),
        kind: TaskKind::ModifyFile,
        description: "Add slug(s), built from f20 and f40.".into(),
        path: Some(path.into()),
        command: None,
        depends_on: vec![],
        risk: Risk::Low,
    }
}

fn edit(path: &str, current: &str) -> (LlmRequest, Form) {
    edit_as(path, current, Extent::AsFits)
}

fn edit_as(path: &str, current: &str, extent: Extent) -> (LlmRequest, Form) {
    let task = task(path);
    edit_request(&EditAsk {
        spec: "Add slug(s).",
        task: &task,
        current,
        context: &[],
        retry: None,
        attempt: 0,
        extent,
    })
    .unwrap()
}

/// A module of `n` functions of 7 lines.
fn module(n: usize) -> String {
    let mut text = String::from("import re\n");
    for i in 0..n {
        text.push_str(&format!(
            "\n\ndef f{i}(s: str) -> str:\n    \"\"\"Return s the {i}th way.\"\"\"\n    x = s.strip()\n    y = x.lower()  # a comment long enough to weigh\n    return y + \"{i}\"\n"
        ));
    }
    text
}

/// pytest's output for a suite of `passing` tests and one failing.
fn pytest(passing: usize) -> String {
    let mut out = String::from("============ test session starts ============\n");
    for _ in 0..passing / 50 {
        out.push_str(&format!("{} [ 10%]\n", ".".repeat(50)));
    }
    out.push_str("================= FAILURES =================\n");
    out.push_str("_______________ test_slug _______________\n\n    def test_slug():\n>       assert f20('A B') == 'a-b'\nE       AssertionError: assert 'a b20' == 'a-b'\n\ntests/test_m.py:7: AssertionError\n");
    out.push_str("========== warnings summary ==========\n");
    out.push_str(&"m.py:3: DeprecationWarning: invalid escape sequence\n".repeat(200));
    out.push_str("======= short test summary info =======\nFAILED tests/test_m.py::test_slug - AssertionError\n");
    out.push_str(&format!("1 failed, {passing} passed in 3.10s\n"));
    out
}

#[test]
fn short_files_are_asked_whole_and_long_ones_by_symbol() {
    let (short, form) = edit("calc.py", "def add(a, b):\n    return a + b\n");
    assert_eq!(form, Form::Whole);
    assert_eq!(short.prefill.as_deref(), Some("```python\n"));
    assert_eq!(short.node_id, "1");
    assert!(
        short.messages[1]
            .content
            .contains("complete new content of calc.py")
    );
    let long: String = (0..300).map(|i| format!("x{i} = {i}\n")).collect();
    let (long, form) = edit("calc.py", &long);
    assert_eq!(form, Form::Symbols);
    assert_eq!(
        long.prefill.as_deref(),
        Some("ADD AT END\n```python\ndef slug"),
        "the one new function the task names, begun where it goes"
    );
    let prompt = &long.messages[1].content;
    assert!(prompt.contains("ADD AFTER name") && prompt.contains("REPLACE name"));
    assert!(prompt.contains("<<<<<<< SEARCH") && prompt.contains("at most 30 lines"));
    assert_eq!(long.max_tokens, budget::ANCHORED_ANSWER_TOKENS);
    let (other, form) = edit("notes.txt", &"a line\n".repeat(300));
    assert_eq!(form, Form::Search);
    assert!(
        other.messages[1]
            .content
            .contains("SEARCH/REPLACE blocks for notes.txt")
    );
}

#[test]
fn a_file_too_long_to_show_whole_is_cut_to_what_the_task_touches() {
    let text = module(400);
    assert!(
        tokens(&text) > budget::CONTEXT_TOKENS,
        "the test needs a file over the context"
    );
    let (request, form) = edit("m.py", &text);
    assert_eq!(form, Form::Symbols);
    assert!(
        budget::fits(&request),
        "{} tokens",
        budget::prompt_tokens(&request)
    );
    let prompt = &request.messages[1].content;
    assert!(prompt.contains("def f20(s: str) -> str:\n    \"\"\"Return s the 20th way"));
    assert!(prompt.contains("def f40(s: str) -> str:\n"));
    assert!(
        prompt.contains("#   def f300(s: str) -> str:  # Return s the 300th way.")
            || prompt.contains("not shown")
    );
    assert!(prompt.contains("cut to what the task touches"));
    assert_eq!(
        request.prefill.as_deref(),
        Some("ADD AFTER f40\n```python\ndef slug"),
        "after the last function the task names"
    );
}

#[test]
fn a_short_file_that_does_not_fit_whole_is_asked_by_symbol() {
    // 150 lines, but long ones: whole, it and its answer overflow the context.
    let text: String = (0..150)
        .map(|i| format!("X{i} = '{}'\n", "v".repeat(150)))
        .collect();
    let (request, form) = edit("data.py", &text);
    assert_eq!(form, Form::Symbols);
    assert!(budget::fits(&request));
}

#[test]
fn a_short_file_whose_whole_answer_dropped_definitions_is_asked_in_part() {
    let short = "def add(a, b):\n    return a + b\n";
    let (request, form) = edit_as("calc.py", short, Extent::InPart);
    assert_eq!(form, Form::Symbols);
    assert_eq!(
        request.prefill.as_deref(),
        Some("ADD AT END\n```python\ndef slug")
    );
    let (_, form) = edit_as("notes.md", "# notes\n", Extent::InPart);
    assert_eq!(form, Form::Search);
    let (_, form) = edit_as("new.py", "", Extent::InPart);
    assert_eq!(form, Form::Whole, "a new file has nothing to drop");
}

#[test]
fn a_correction_prompt_with_a_long_failing_output_fits_and_keeps_the_failure() {
    let text = module(120);
    let output = pytest(3_000);
    assert!(output.len() > 10_000);
    let plan = ChangePlan {
        tasks: vec![task("m.py")],
    };
    let (request, _) = correct_request(&Correction {
        spec: "Add slug(s).",
        plan: &plan,
        failure: FailedCheck {
            command: "python -m pytest -q",
            output: &output,
        },
        path: "m.py",
        current: &text,
        context: &[("tests/test_m.py".into(), "from m import f20\n".repeat(200))],
        retry: Some("hunk 1 for m.py: its 2 old line(s) were not found"),
        round: 1,
        added: None,
        extent: Extent::AsFits,
        unused: "",
    })
    .unwrap();
    assert!(
        budget::fits(&request),
        "{} tokens",
        budget::prompt_tokens(&request)
    );
    let prompt = &request.messages[1].content;
    assert!(prompt.contains("_ test_slug _") && prompt.contains("E       AssertionError"));
    assert!(prompt.contains("1 failed, 3000 passed"));
    assert!(
        !prompt.contains("DeprecationWarning"),
        "the noise goes first"
    );
    assert!(
        prompt.contains("def f20(s: str) -> str:\n"),
        "the function the error names"
    );
    assert!(prompt.contains("could not be used\nhunk 1 for m.py"));
    assert_eq!((request.node_id.as_str(), request.attempt), ("correct", 1));
    assert_eq!(
        request.prefill.as_deref(),
        Some("REPLACE f20\n```python\ndef f20"),
        "the one function the failure calls is replaced, its `def` begun"
    );
}

#[test]
fn a_function_written_again_is_asked_by_symbol_even_in_a_short_file() {
    let base =
        "def lower(s):\n    return s.lower()\n\n\ndef dashes(s):\n    return '-'.join(s.split())\n";
    let plan = ChangePlan {
        tasks: vec![task("m.py")],
    };
    let start = Start::Add {
        name: "slug".into(),
        after: Some("dashes".into()),
    };
    let ask = |fresh| Correction {
        spec: "Add slug(s), built from lower and dashes.",
        plan: &plan,
        failure: FailedCheck {
            command: "pytest",
            output: "`slug('A B')` should return `'a-b'`: got 'a b'",
        },
        path: "m.py",
        current: base,
        context: &[],
        retry: Some("`slug` is taken out of the file below"),
        round: 1,
        added: fresh,
        extent: Extent::AsFits,
        unused: "The change names `lower`, and the new `slug` does not use it.\n",
    };
    let (_, form) = correct_request(&ask(None)).unwrap();
    assert_eq!(form, Form::Whole, "a short file is asked whole otherwise");
    let (request, form) = correct_request(&ask(Some(&start))).unwrap();
    assert_eq!(form, Form::Symbols);
    assert_eq!(
        request.prefill.as_deref(),
        Some("ADD AFTER dashes\n```python\ndef slug"),
        "begun as a new definition where the failed one was"
    );
    let prompt = &request.messages[1].content;
    assert!(prompt.contains("`slug` is taken out") && !prompt.contains("def slug"));
    assert!(
        prompt.contains("got 'a b'\n\nThe change names `lower`"),
        "the note follows the failure: {prompt}"
    );
}

#[test]
fn a_plan_prompt_cuts_the_diagnosis_and_the_listing() {
    let files: Vec<String> = (0..5_000).map(|i| format!("pkg/module_{i}.py")).collect();
    let check = Check {
        command: "python -m pytest -q".into(),
        passed: false,
        unavailable: false,
        exit_code: Some(1),
        output: pytest(20_000),
    };
    let request = plan_request("Fix f20.", &files, Some(&check), None).unwrap();
    assert!(budget::fits(&request));
    let prompt = &request.messages[1].content;
    assert!(prompt.contains("pkg/module_0.py") && prompt.contains("more line(s) not shown"));
    assert!(prompt.contains("_ test_slug _"));
}

#[test]
fn an_empty_directory_is_said_in_the_plan_prompt() {
    let request = plan_request("make a cli", &[], None, Some("no JSON")).unwrap();
    assert!(
        request.messages[1]
            .content
            .contains("the directory is empty")
    );
    assert!(
        request.messages[1]
            .content
            .contains("could not be used: no JSON")
    );
    assert_eq!(request.attempt, 1);
}

#[test]
fn a_task_too_large_for_any_prompt_is_refused_with_its_size() {
    let mut task = task("m.py");
    task.description = "word ".repeat(8_000);
    let err = edit_request(&EditAsk {
        spec: "x",
        task: &task,
        current: "x = 1\n",
        context: &[],
        retry: None,
        attempt: 0,
        extent: Extent::AsFits,
    })
    .unwrap_err();
    let FitError::TooLarge(err) = err else {
        panic!("{err}")
    };
    assert!(err.to_string().contains("task 1's prompt"), "{err}");
    let template = bare_template().unwrap();
    assert!(budget::check_spec("Add slug(s).", &template).is_ok());
    assert!(budget::check_spec(&"word ".repeat(5_000), &template).is_err());
}

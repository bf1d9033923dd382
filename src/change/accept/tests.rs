use super::*;

fn files(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn example(function: &str, args: &str, expect: Expect) -> Example {
    Example {
        function: function.into(),
        args: args.into(),
        wrap: None,
        expect,
        bug: false,
        params: Vec::new(),
    }
}

#[test]
fn modules_are_named_from_their_package_roots() {
    let all = files(&[
        "calc/__init__.py",
        "calc/core.py",
        "src/pkg/__init__.py",
        "src/pkg/m.py",
        "tool.py",
        "my-dir/x.py",
    ]);
    let target = |p: &str| module_of(p, &all).map(|t| (t.module, t.root));
    assert_eq!(target("calc/__init__.py"), Some(("calc".into(), "".into())));
    assert_eq!(
        target("calc/core.py"),
        Some(("calc.core".into(), "".into()))
    );
    assert_eq!(target("src/pkg/m.py"), Some(("pkg.m".into(), "src".into())));
    assert_eq!(target("tool.py"), Some(("tool".into(), "".into())));
    assert_eq!(target("my-dir/x.py"), Some(("x".into(), "my-dir".into())));
    // Not importable by name: a dash in a module, a keyword, a quote in a directory.
    assert_eq!(target("calc/bad-name.py"), None);
    assert_eq!(target("class.py"), None);
    assert_eq!(target("it's/x.py"), None);
    assert_eq!(target("README.md"), None);
}

#[test]
fn the_function_is_imported_from_where_it_is_defined_or_planned() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("calc/__init__.py", "from .core import slug\n");
    write("calc/core.py", "def slug(s):\n    return s\n");
    write("tests/test_core.py", "def slug(s):\n    return s\n");
    write("calc/other.py", "X = 1\n");
    let all = files(&[
        "calc/__init__.py",
        "calc/core.py",
        "calc/other.py",
        "tests/test_core.py",
    ]);
    let found = target("slug", &[], &all, dir.path()).unwrap();
    assert_eq!(
        (found.module.as_str(), found.path.as_str()),
        ("calc.core", "calc/core.py")
    );
    // Not defined anywhere yet: where the plan puts it (tests are never the place).
    let planned = files(&["tests/test_core.py", "calc/other.py"]);
    let found = target("kebab", &planned, &all, dir.path()).unwrap();
    assert_eq!(found.module, "calc.other");
    assert_eq!(target("kebab", &[], &all, dir.path()), None);
}

#[test]
fn the_test_file_holds_one_test_per_example_and_only_checked_text() {
    let examples = [
        example("slug", "'A B'", Expect::Returns("'a-b'".into())),
        example("half", "3", Expect::Returns("1.5".into())),
        example("parse", "''", Expect::Raises("ValueError".into())),
        example("missing", "1", Expect::Returns("1".into())),
    ];
    let core = ImportSite {
        path: "src/calc/core.py".into(),
        module: "calc.core".into(),
        root: "src".into(),
    };
    let targets = [Some(core.clone()), Some(core.clone()), Some(core), None];
    let text = render(&examples, &targets);
    for wanted in [
        "def test_example_1():\n    _sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'src'))\n    from calc.core import slug as _zr_function\n    _zr_expected = 'a-b'\n    _zr_result = _zr_function('A B')\n    assert _zr_result == _zr_expected,",
        "assert _zr_result == _pytest.approx(_zr_expected)",
        "with _pytest.raises(BaseException) as _zr_caught:\n        _zr_function('')\n",
        "assert 'ValueError' in _zr_names",
        "def test_example_4():\n    _pytest.fail('no module of the repository defines missing')\n",
    ] {
        assert!(text.contains(wanted), "{wanted}\n---\n{text}");
    }
    assert_eq!(text.matches("\ndef test_example_").count(), 4);
    // A generator's example is compared as the request wrote it: `list(f(x))`.
    let text = listed_diffs("[1, 4]", "[3]", &[]);
    assert!(
        text.contains("    _zr_result = list(_zr_function([1, 4]))\n"),
        "{text}"
    );
}

#[test]
fn results_are_read_from_pytest_summary_lines() {
    let output = "..F\n=== short test summary info ===\n\
                  PASSED test_zerorepo_acceptance.py::test_example_1\n\
                  FAILED test_zerorepo_acceptance.py::test_example_2 - AssertionError: got 'A B', expected 'a-b'\n\
                  ERROR test_zerorepo_acceptance.py::test_example_9 - out of range\n\
                  PASSED other.py::test_example_3\n1 failed, 1 passed in 0.1s\n";
    let results = read_results(output, FILE, 3);
    assert_eq!(results[0], Ok(()));
    assert_eq!(
        results[1],
        Err("AssertionError: got 'A B', expected 'a-b'".into())
    );
    assert!(results[2].is_err(), "another file's line is not ours");
    // pytest 7 cuts the summary line to the terminal; the traceback has the whole reason.
    let cut = "___ test_example_1 ___\n\ntest_zerorepo_acceptance.py:9: in test_example_1\n    assert x\nE   AssertionError: got 'a b c', expected 'a-b-c'\nE   assert 1\n___ test_example_2 ___\n=== short test summary info ===\nFAILED test_zerorepo_acceptance.py::test_example_1 - AssertionError: got 'a b...\nPASSED test_zerorepo_acceptance.py::test_example_2\n";
    assert_eq!(
        read_results(cut, FILE, 2),
        vec![
            Err("AssertionError: got 'a b c', expected 'a-b-c'".into()),
            Ok(())
        ]
    );
    let collect = "ERROR test_zerorepo_acceptance.py - SyntaxError: bad\n";
    assert!(
        read_results(collect, FILE, 2)
            .iter()
            .all(|r| r == &Err("SyntaxError: bad".to_string()))
    );
}

#[test]
fn a_failure_names_the_example_and_why() {
    let mut acceptance = Acceptance {
        examples: vec![
            example("slug", "'A B'", Expect::Returns("'a-b'".into())),
            example("slug", "''", Expect::Returns("''".into())),
        ],
        ..Acceptance::default()
    };
    acceptance.results = vec![
        Err("AssertionError: got 'A B', expected 'a-b'".into()),
        Ok(()),
    ];
    let why = acceptance.failure_reason(2);
    assert!(
        why.contains("after 2 correction round(s)")
            && why.contains("`slug('A B')` should return `'a-b'`: AssertionError: got 'A B'")
            && !why.contains("slug('')"),
        "{why}"
    );
    let text = summary(&acceptance.examples, &acceptance.results, FILE);
    assert!(text.contains("- FAILED: `slug('A B')`") && text.contains("- passed: `slug('')`"));
    let report = acceptance.report();
    assert_eq!(report[0].status, "failed");
    assert_eq!(report[1].status, "passed");
}

#[test]
fn the_examples_are_handed_on_to_every_python_task() {
    let plan = super::super::plan::ChangePlan::from_json(
        r#"{"tasks": [
            {"id": "1", "kind": "MODIFY_FILE", "path": "calc/__init__.py", "description": "Add slug."},
            {"id": "2", "kind": "MODIFY_FILE", "path": "README.md", "description": "Document it."}
        ]}"#,
    )
    .unwrap();
    let acceptance = Acceptance {
        examples: vec![example("slug", "'A B'", Expect::Returns("'a-b'".into()))],
        ..Acceptance::default()
    };
    let plan = acceptance.hand_on(plan);
    assert_eq!(
        plan.tasks[0].description,
        "Add slug. The request's examples, checked by tests after the change: `slug('A B')` should return `'a-b'`."
    );
    assert_eq!(plan.tasks[1].description, "Document it.");
    assert_eq!(Acceptance::default().hand_on(plan.clone()), plan);
}

#[test]
fn the_handed_on_examples_are_taken_out_of_an_answer_that_copies_them() {
    let acceptance = Acceptance {
        examples: vec![example("slug", "'A B'", Expect::Returns("'a-b'".into()))],
        ..Acceptance::default()
    };
    let answer = "ADD AT END\n```python\ndef slug(text):\n    \"\"\"Add slug. The request's examples, checked by tests after the change: `slug('A B')` should return `'a-b'`.\"\"\"\n    return text\n```";
    assert_eq!(
        acceptance.scrub(answer),
        "ADD AT END\n```python\ndef slug(text):\n    \"\"\"Add slug.\"\"\"\n    return text\n```"
    );
    let other = "def slug(text):\n    \"\"\"The request's examples are elsewhere.\"\"\"\n";
    assert_eq!(acceptance.scrub(other), other);
    assert_eq!(Acceptance::default().scrub(answer), answer);
}

#[test]
fn the_file_never_takes_a_repository_files_name() {
    assert_eq!(file_name(&files(&["a.py"])), FILE);
    assert_eq!(
        file_name(&files(&[FILE, "test_zerorepo_acceptance_1.py"])),
        "test_zerorepo_acceptance_2.py"
    );
    assert!(is_float("1.5") && is_float("-2e3") && !is_float("'1.5'") && !is_float("[1.5]"));
}

/// The kinds of the top-level statements of `source`, and of each test's body, by
/// tree-sitter: what Python would run.
fn shape(source: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    let tree = parser.parse(source, None).unwrap();
    let root = tree.root_node();
    assert!(!root.has_error(), "{source}");
    let mut top = Vec::new();
    let mut bodies = Vec::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        top.push(node.kind().to_string());
        if node.kind() == "function_definition" {
            let body = node.child_by_field_name("body").unwrap();
            let mut inner = body.walk();
            bodies.push(
                body.named_children(&mut inner)
                    .map(|n| n.kind().to_string())
                    .collect(),
            );
        }
    }
    (top, bodies)
}

#[test]
fn hostile_examples_stay_values_in_the_test_file() {
    let request = "Add `clean(s)`. clean('\"); import os; os.system(\"id\") #') returns ''. \
                   clean(\"'''\") returns \"x\\\"\". clean('a\\'b') is 'a\\\\'. \
                   clean('\\n') raises ValueError.";
    let examples = super::super::examples::extract(request);
    assert_eq!(examples.len(), 4, "{examples:?}");
    let target = ImportSite {
        path: "m.py".into(),
        module: "m".into(),
        root: String::new(),
    };
    let targets = vec![Some(target); examples.len()];
    let text = render(&examples, &targets);
    let (top, bodies) = shape(&text);
    assert_eq!(
        top,
        [
            "expression_statement",
            "import_statement",
            "import_statement",
            "import_statement",
            "function_definition",
            "function_definition",
            "function_definition",
            "function_definition",
            "import_statement",
            "function_definition",
            "function_definition"
        ],
        "{text}"
    );
    // The example, then its variant with an iterable given as an iterator (the arguments
    // again, as values of a call).
    let returns = [
        "import_from_statement",
        "expression_statement",
        "expression_statement",
        "assert_statement",
        "assert_statement",
        "import_statement",
        "expression_statement",
        "expression_statement",
        "try_statement",
        "expression_statement",
        "for_statement",
        "if_statement",
    ];
    // The helpers every example shares come last.
    for body in &bodies[..3] {
        assert_eq!(body, &returns, "{text}");
    }
    assert_eq!(
        bodies[3],
        [
            "import_from_statement",
            "with_statement",
            "expression_statement",
            "assert_statement"
        ],
        "{text}"
    );
    assert!(text.contains("_zr_function('\"); import os; os.system(\"id\") #')"));
}

#[test]
fn an_iterable_parameter_is_also_given_an_iterator() {
    let Some(python) = python_with_pytest("an_iterable_parameter_is_also_given_an_iterator") else {
        return;
    };
    let run = |code: &str, params: &[&str]| {
        pytest(&python, code, &listed_diffs("[1, 4, 9]", "[3, 5]", params))
    };
    let lists_only = "def diffs(iterable):\n    for i in range(1, len(iterable)):\n        yield iterable[i] - iterable[i - 1]\n";
    let (passed, output) = run(lists_only, &[]);
    assert!(!passed, "{output}");
    assert!(output.contains("given as an iterator"), "{output}");
    let any = "def diffs(iterable):\n    it = iter(iterable)\n    prev = next(it, None)\n    for x in it:\n        yield x - prev\n        prev = x\n";
    let (passed, output) = run(any, &[]);
    assert!(passed, "{output}");
    // No parameter named so: the example alone is checked.
    let renamed = lists_only.replace("iterable", "values");
    let (passed, output) = run(&renamed, &[]);
    assert!(passed, "{output}");
    // Unless the request's own signature names it so: the code's name does not decide.
    let (passed, output) = run(&renamed, &["iterable"]);
    assert!(!passed, "{output}");
    assert!(output.contains("values given as an iterator"), "{output}");
}

/// Whether pytest passes `text` as `test_accept.py` beside `code` as `calc.py`, and its output.
fn pytest(python: &std::path::Path, code: &str, text: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("calc.py"), code).unwrap();
    std::fs::write(dir.path().join("test_accept.py"), text).unwrap();
    let out = std::process::Command::new(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_accept.py",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The Python with pytest the tests run, or `None` (and a loud skip) without one.
fn python_with_pytest(test: &str) -> Option<std::path::PathBuf> {
    let python = crate::sandbox::LocalRunner::default_python();
    let has_pytest = std::process::Command::new(&python)
        .args(["-c", "import pytest"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_pytest {
        eprintln!("SKIPPED {test}: no Python with pytest");
        return None;
    }
    Some(python)
}

/// An example's `5400.0` is not met by `5400`, nor `False` by `0`, nor `[1.0, 2]` by `[1, 2]`:
/// a doctest would show the difference, and `==` alone let a function of the wrong type
/// pass its own example.
#[test]
fn a_number_an_example_shows_says_its_type_as_in_a_doctest() {
    let Some(python) =
        python_with_pytest("a_number_an_example_shows_says_its_type_as_in_a_doctest")
    else {
        return;
    };
    let target = ImportSite {
        path: "calc.py".into(),
        module: "calc".into(),
        root: String::new(),
    };
    let check = |expected: &str, body: &str| {
        let text = render(
            &[example("f", "'x'", Expect::Returns(expected.into()))],
            &[Some(target.clone())],
        );
        pytest(&python, &format!("def f(s):\n    return {body}\n"), &text)
    };
    for (expected, wrong, right) in [
        ("5400.0", "5400", "5400.0"),
        ("2", "2.0", "2"),
        ("False", "0", "False"),
        ("[1.0, 2]", "[1, 2]", "[1.0, 2]"),
        (
            "{'a': 1.5, 'b': 3.0}",
            "{'a': 1.5, 'b': 3}",
            "{'b': 3.0, 'a': 1.5}",
        ),
    ] {
        let (passed, output) = check(expected, wrong);
        assert!(!passed, "{expected} met by {wrong}: {output}");
        assert!(
            output.contains("the example shows the type too"),
            "{output}"
        );
        let (passed, output) = check(expected, right);
        assert!(passed, "{expected} not met by {right}: {output}");
    }
    // A value only approximately equal still passes, and other types are not judged.
    assert!(check("0.3", "0.1 + 0.2").0);
    assert!(check("0.5", "__import__('fractions').Fraction(1, 2)").0);
}

/// The test file of one example `list(diffs(ARGS))` is `EXPECTED`, diffs in `calc.py`, the
/// request's signature of it naming `params`.
fn listed_diffs(args: &str, expected: &str, params: &[&str]) -> String {
    let mut diffs = example("diffs", args, Expect::Returns(expected.into()));
    diffs.wrap = Some("list".into());
    diffs.params = params.iter().map(|p| p.to_string()).collect();
    let target = ImportSite {
        path: "calc.py".into(),
        module: "calc".into(),
        root: String::new(),
    };
    render(&[diffs], &[Some(target)])
}

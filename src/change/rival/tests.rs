use super::*;

fn returned(v: &str) -> Option<Behaviour> {
    Some(Behaviour::Returned(v.into()))
}

fn raised(names: &[&str]) -> Option<Behaviour> {
    Some(Behaviour::Raised(
        names.iter().map(|n| n.to_string()).collect(),
    ))
}

/// A call of `f` in `test`: the change returned `written`, the versions `versions`.
fn call(test: &str, written: &str, versions: Vec<Option<Behaviour>>) -> WatchedCall {
    let mine = Behaviour::Returned(written.into());
    let agree: Vec<bool> = versions.iter().map(|v| v.as_ref() == Some(&mine)).collect();
    let ran: Vec<&Behaviour> = versions.iter().flatten().collect();
    WatchedCall {
        test: test.into(),
        function: "f".into(),
        call: "f(1)".into(),
        written: mine,
        versions_agree: ran.windows(2).all(|w| w[0] == w[1]),
        versions,
        agree,
    }
}

#[test]
fn a_call_is_disputed_only_when_every_version_agrees_with_the_others_against_the_change() {
    let both = call("test_f_typical", "1", vec![returned("2"), returned("2")]);
    let split = call("test_f_typical", "1", vec![returned("2"), returned("1")]);
    let apart = call("test_f_typical", "1", vec![returned("2"), returned("3")]);
    let alone = call("test_f_typical", "1", vec![returned("2"), None]);
    assert_eq!(disputes(std::slice::from_ref(&both), &[]), vec![both]);
    assert!(disputes(&[split], &[]).is_empty());
    assert!(disputes(&[apart], &[]).is_empty());
    // One version that ran is one opinion.
    assert!(disputes(&[alone], &[]).is_empty());
}

#[test]
fn a_version_that_fails_an_example_the_change_passes_has_no_say() {
    let example = WatchedCall {
        agree: vec![true, false],
        ..call(
            "test_zerorepo_example_1",
            "1",
            vec![returned("1"), returned("0")],
        )
    };
    let probe = call(
        "test_f_empty",
        "[]",
        vec![returned("None"), returned("None")],
    );
    assert!(disputes(&[example.clone(), probe.clone()], &[]).is_empty());
    let right = call(
        "test_zerorepo_example_1",
        "1",
        vec![returned("1"), returned("1")],
    );
    assert_eq!(disputes(&[right, probe.clone()], &[]), vec![probe]);
}

#[test]
fn a_version_that_crashes_where_the_change_returns_broke_on_its_own_unless_the_request_names_the_error()
 {
    let crashed = call(
        "test_f_empty",
        "0",
        vec![
            raised(&["IndexError", "LookupError", "Exception"]),
            raised(&["IndexError"]),
        ],
    );
    assert!(disputes(&[crashed], &[]).is_empty());
    let documented = call(
        "test_f_months",
        "0.0",
        vec![
            raised(&["ValueError", "Exception"]),
            raised(&["ValueError", "Exception"]),
        ],
    );
    let named = vec!["ValueError".to_string()];
    assert_eq!(
        disputes(std::slice::from_ref(&documented), &named),
        vec![documented]
    );
}

#[test]
fn records_are_read_from_the_tagged_lines_only() {
    let line = r#"{"test": "test_f_a", "function": "f", "call": "f('a')", "written": {"returned": "'a'"}, "versions": [{"raised": ["ValueError", "Exception"]}, null], "agree": [false, false], "versions_agree": true}"#;
    let output = format!("..\nTAG:{line}\nnoise TAG:{line}\nTAG:{{broken\n");
    let found = records(&output, "TAG:");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].written, Behaviour::Returned("'a'".into()));
    assert_eq!(
        found[0].versions,
        vec![raised(&["ValueError", "Exception"]), None]
    );
}

#[test]
fn a_version_keeps_its_imports_and_definitions_and_needs_the_function() {
    let function = NewFunction {
        path: "m.py".into(),
        name: "f".into(),
        shown: "def f(x):\n    \"\"\"Twice x.\"\"\"\n    ...".into(),
        signature: "def f(x):".into(),
        covered: false,
    };
    let prefill = prefill(&function);
    assert_eq!(
        prefill, "```python\ndef f(x):\n",
        "begun without the change's docstring"
    );
    let answer = "    return helper(x)\n\n\ndef helper(x):\n    return 2 * x\n\n\nprint(f(2))\n```";
    let source = version_source(answer, &prefill, "f").unwrap();
    assert!(source.starts_with("def f(x):"), "{source}");
    assert!(source.contains("def helper(x):"));
    assert!(!source.contains("print("));
    assert!(version_source("```python\ndef g(x):\n    return x\n```", "", "f").is_none());
}

#[test]
fn the_file_binds_each_watched_name_after_the_probes_and_calls_its_examples_only() {
    let setups = vec![(
        "pkg.m".to_string(),
        "f".to_string(),
        vec!["def f(x):\n    return \"a\\nb\"\n".to_string()],
    )];
    let examples = vec![
        ("f".to_string(), "f(1)".to_string()),
        ("g".to_string(), "g(2)".to_string()),
    ];
    let file = render(
        "from pkg.m import f\n\ndef test_f_a():\n    f(0)\n",
        &setups,
        &examples,
        "TAG:",
    );
    let probes = file.find("def test_f_a").unwrap();
    let bound = file
        .find("f = _zr_watch(\"f\", *_zr_versions(\"pkg.m\", \"f\", [\"def f(x):\\n    return \\\"a\\\\nb\\\"\\n\"]))")
        .unwrap();
    let example = file
        .find("def test_zerorepo_example_1():\n    try:\n        f(1)")
        .unwrap();
    let report = file.find("def test_zz_zerorepo_versions_report").unwrap();
    assert!(probes < bound && bound < example && example < report);
    assert!(!file.contains("g(2)"));
    assert!(file.contains("_zr_report(\"TAG:\")"));
}

#[test]
fn a_variant_call_counts_only_where_the_change_and_every_version_returned() {
    let variant = |written: Behaviour, versions: Vec<Option<Behaviour>>| WatchedCall {
        written,
        agree: vec![false; versions.len()],
        versions_agree: true,
        ..call(VARIANT_TEST, "", versions)
    };
    let returned_apart = variant(
        Behaviour::Returned("1".into()),
        vec![returned("0"), returned("0")],
    );
    assert_eq!(
        disputes(std::slice::from_ref(&returned_apart), &[]),
        vec![returned_apart]
    );
    // On an input nobody wrote, an error may be the right answer, whoever raised it.
    let change_raised = variant(
        Behaviour::Raised(vec!["ValueError".into()]),
        vec![returned("0"), returned("0")],
    );
    let versions_raised = variant(
        Behaviour::Returned("1".into()),
        vec![raised(&["ValueError"]), raised(&["ValueError"])],
    );
    assert!(disputes(&[change_raised, versions_raised], &["ValueError".into()]).is_empty());
}

#[test]
fn the_file_runs_the_variants_of_the_watched_functions_before_it_prints_the_records() {
    let setups = vec![(
        "text".to_string(),
        "f".to_string(),
        vec!["def f(x): return x\n".to_string()],
    )];
    let file = render("def test_f():\n    f(1)\n", &setups, &[], "TAG:");
    let variants = file
        .find("def test_zy_zerorepo_variants():\n    _zr_variants({\"f\"})")
        .unwrap();
    let report = file.find("def test_zz_zerorepo_versions_report").unwrap();
    assert!(variants < report, "{file}");
}

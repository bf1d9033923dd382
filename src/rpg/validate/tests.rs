use super::*;
use crate::rpg::model::NodeType;

/// A function leaf with a name of its own (`f0`, `f1`, ...), so leaves of one file never
/// share a name by accident.
fn leaf(id: &str, path: &str) -> Node {
    static NAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = NAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Node {
        docstring: Some("Does f.".into()),
        ..Node::function_for_test(id, &format!("f{name}"), path)
    }
}

fn composite(id: &str, path: &str) -> Node {
    Node {
        node_type: NodeType::Composite,
        kind: "package".into(),
        ..leaf(id, path)
    }
}

fn rpg(nodes: Vec<Node>) -> Rpg {
    Rpg {
        nodes,
        edges: vec![],
        metadata: Default::default(),
        extra: Default::default(),
    }
}

fn messages(nodes: Vec<Node>) -> Vec<String> {
    match validate(rpg(nodes)) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn files_that_packaging_tools_run_or_read_are_reserved_at_any_depth() {
    let reserved = [
        ("setup.py", "`pip install -e .` runs"),
        ("src/pkg/setup.py", "`pip install -e .` runs"),
        ("SETUP.PY", "`pip install -e .` runs"),
        ("setup.cfg", "setuptools reads"),
        ("pyproject.toml", "pip reads"),
        ("src/pyproject.toml", "pip reads"),
        ("src/sitecustomize.py", "Python runs at start-up"),
        ("usercustomize.py", "Python runs at start-up"),
        ("MANIFEST.in", "setuptools reads"),
        ("src/evil.pth", "`.pth`"),
        ("src/Evil.PTH", "`.pth`"),
        ("conftest.py", "pytest runs"),
        ("README.md", "assembly writes"),
        ("readme.md", "assembly writes"),
        ("requirements.txt", "assembly writes"),
        ("requirements-dev.txt", "assembly writes"),
        ("test_results.xml", "assembly writes"),
        ("docs/rpg.json", "assembly writes"),
        ("docs/generation_report.md", "assembly writes"),
        ("docs/generation_checkpoint.json", "checkpoint"),
        // A directory in the way of a reserved file is refused as well.
        ("setup.py/x.py", "`pip install -e .` runs"),
        ("README.md/x.py", "assembly writes"),
        ("docs/rpg.json/x.py", "assembly writes"),
    ];
    for (path, why) in reserved {
        let reason = reserved_path(path);
        assert!(
            reason.is_some_and(|r| r.contains(why)),
            "{path}: {reason:?}"
        );
    }
    let allowed = [
        "src/setup_tools.py",
        "src/pkg/conftest.py",
        "tests/conftest.py",
        "src/README.md",
        "docs/rpg.py",
        "docs",
        "src/pth.py",
        "src/requirements.txt",
        "src/pkg/__init__.py",
        "path.py",
    ];
    for path in allowed {
        assert_eq!(reserved_path(path), None, "{path}");
    }
}

#[test]
fn file_paths_outside_what_generation_can_write_are_named_with_a_reason() {
    let long = "x".repeat(256);
    let deep = vec!["d"; 33].join("/");
    let cases = [
        ("", "is empty"),
        ("src/m\0.py", "NUL"),
        ("src/m\u{1b}[2J.py", "control character"),
        ("src\\m.py", "backslash"),
        ("/etc/x.py", "absolute"),
        ("C:/x.py", "absolute"),
        ("src/../x.py", "`..`"),
        ("src/./x.py", "`.` component"),
        (".", "`.` component"),
        ("src//x.py", "empty component"),
        ("src/x.py/", "empty component"),
        (".git/hooks/pre-commit.py", "starting with `.`"),
        (".zerorepo/journal.py", "starting with `.`"),
        (".github/x.py", "starting with `.`"),
        ("src/.hidden.py", "starting with `.`"),
        ("file://x.py", "`:`"),
        ("src/a:b.py", "`:`"),
        (&format!("src/{long}.py"), "longer than 255 bytes"),
        (&format!("{deep}.py"), "more than 32 components"),
        ("src/setup.py", "`pip install -e .`"),
        ("src/my-pkg/m.py", "not a Python identifier"),
        (
            "src/pkg/a import b; import os #.py",
            "not a Python identifier",
        ),
        ("src/pkg/1st.py", "not a Python identifier"),
    ];
    for (path, fragment) in cases {
        let problem = file_path_problem(path);
        assert!(
            problem.is_some_and(|p| p.contains(fragment)),
            "{path:?}: {problem:?}"
        );
    }
    for ok in [
        "src/pkg/mod.py",
        "m.py",
        "src/pkg",
        &format!("{}.py", vec!["d"; 32].join("/")),
        &format!("src/{}.py", "x".repeat(252)),
    ] {
        assert_eq!(file_path_problem(ok), None, "{ok}");
    }
}

#[test]
fn subgraph_ids_are_held_to_what_a_git_tag_accepts() {
    for ok in ["stats", "data_loading", "v1.2-beta", "A9", &"a".repeat(100)] {
        assert!(subgraph_id_is_valid(ok), "{ok}");
    }
    for bad in [
        "",
        "two words",
        "tab\there",
        "a..b",
        "a~1",
        "a^",
        "a:b",
        "a?",
        "a*",
        "a[b",
        "a\\b",
        "a@{b",
        "x.lock",
        "ends.",
        ".starts",
        "-starts",
        "a/b",
        "données",
        &"a".repeat(101),
    ] {
        assert!(!subgraph_id_is_valid(bad), "{bad:?}");
    }
}

#[test]
fn bad_subgraph_id_is_reported_once_with_its_first_node_and_the_rule() {
    let mut a = leaf("a", "src/m.py");
    let mut b = leaf("b", "src/m.py");
    let mut c = leaf("c", "src/m.py");
    a.subgraph_id = Some("my stats".into());
    b.subgraph_id = Some("my stats".into());
    c.subgraph_id = Some("fine".into());
    assert_eq!(
        messages(vec![a, b, c]),
        [format!(
            "node `a` (and 1 more node(s)): subgraph_id `my stats` is not allowed: {SUBGRAPH_ID_RULE}"
        )]
    );
}

#[test]
fn ids_with_control_characters_or_over_255_bytes_are_rejected_and_shown_escaped() {
    let long = "n".repeat(256);
    let errors = messages(vec![
        leaf("a\u{1b}[31m", "src/m.py"),
        leaf("b\0", "src/m.py"),
        leaf(&long, "src/m.py"),
        leaf(&"n".repeat(255), "src/m.py"),
    ]);
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_eq!(
        errors[0],
        "node #0: id `a\\u{1b}[31m` contains a control character"
    );
    assert_eq!(errors[1], "node #1: id `b\\0` contains a NUL byte");
    assert!(
        errors[2].starts_with("node #2: id `nnn")
            && errors[2].ends_with("…` is longer than 255 bytes"),
        "{}",
        errors[2]
    );
}

#[test]
fn composite_paths_and_derived_test_files_pass_the_same_checks() {
    let module = "x".repeat(250);
    let errors = messages(vec![
        composite("pkg", "src/pkg/"),
        composite("root", "."),
        composite("setup", "setup.py"),
        leaf("long", &format!("src/{module}.py")),
    ]);
    assert_eq!(
        errors,
        [
            "node `root`: file_path `.` has a `.` component (write the path without `./`)"
                .to_string(),
            format!("node `setup`: file_path `setup.py` {}", RESERVED_NAMES[0].1),
            format!(
                "node `long`: its tests would go to `tests/test_{}…`, which has a component longer than 255 bytes",
                "x".repeat(189)
            ),
        ]
    );
}

#[test]
fn a_long_cycle_is_shown_by_both_ends_and_its_size() {
    let n = 20_000;
    let nodes: Vec<Node> = (0..n)
        .map(|i| Node {
            dependencies: vec![format!("n{:05}", (i + 1) % n).into()],
            ..leaf(&format!("n{i:05}"), "src/m.py")
        })
        .collect();
    let errors = validate(rpg(nodes)).unwrap_err();
    let [error] = errors.as_slice() else {
        panic!("{errors:?}")
    };
    assert_eq!(
        error.to_string(),
        "dependency cycle of 20000 nodes: n00000 -> n00001 -> n00002 -> n00003 -> n00004 -> … 19991 more nodes … -> n19996 -> n19997 -> n19998 -> n19999 -> n00000"
    );
    let details = error.details();
    assert_eq!(details.len(), 11, "{details:?}");
    assert_eq!(details[0], "n00000 depends on n00001 (dependencies)");
    assert_eq!(details[5], "… 19990 more steps …");
    assert_eq!(details[10], "n19999 depends on n00000 (dependencies)");
}

#[test]
fn warnings_of_one_kind_past_the_limit_are_counted_in_one_line() {
    let nodes: Vec<Node> = (0..100)
        .map(|i| Node {
            dependencies: if i == 0 { vec![] } else { vec!["n0".into()] },
            ..leaf(&format!("n{i}"), "src/m.py")
        })
        .collect();
    let valid = validate(rpg(nodes)).unwrap();
    assert_eq!(valid.warnings.len(), MAX_WARNINGS_PER_KIND + 1);
    assert_eq!(
        valid.warnings[MAX_WARNINGS_PER_KIND].0,
        "… and 79 more dependencies that no edge states"
    );
}

#[test]
fn shown_escapes_control_characters_and_backslashes_and_truncates() {
    assert_eq!(shown("a\u{1b}b\\c\nd"), "a\\u{1b}b\\\\c\\nd");
    assert_eq!(shown("plain `id` é"), "plain `id` é");
    let long = shown(&"z".repeat(1000));
    assert_eq!(long.chars().count(), 201);
    assert!(long.ends_with('…'));
}

#[test]
fn a_plan_module_named_like_a_stdlib_or_test_runner_module_at_an_import_root_is_refused() {
    for (path, module) in [
        ("linecache.py", "linecache"),
        ("src/json.py", "json"),
        ("json/x.py", "json"),
        ("src/email/parser.py", "email"),
        ("src/_thread.py", "_thread"),
        ("src/pytest.py", "pytest"),
        ("_pytest/x.py", "_pytest"),
        ("src/pluggy", "pluggy"),
        ("src/conftest.py", "conftest"),
    ] {
        assert_eq!(
            shadowed_module(path).map(|(m, _)| m),
            Some(module),
            "{path}"
        );
    }
    for path in [
        "src/pkg/json.py",
        "src/ml_lib/data/csv_reader.py",
        "src",
        "jsonx.py",
    ] {
        assert_eq!(shadowed_module(path), None, "{path}");
    }
    assert_eq!(
        messages(vec![leaf("m", "src/json.py")]),
        [
            "node `m`: file_path `src/json.py` would shadow the standard-library module `json`: the repository root and `src/` are on `sys.path` when tests run, so every `import json` would load the plan's module instead; rename it or move it into a package"
        ]
    );
}

#[test]
fn two_leaves_with_one_name_in_one_file_are_refused_naming_both() {
    let mut a = leaf("a", "src/m.py");
    let mut b = leaf("b", "src/m.py");
    let mut c = leaf("c", "src/other.py");
    a.name = "mean".into();
    b.name = "mean".into();
    c.name = "mean".into();
    assert_eq!(
        messages(vec![a, b, c]),
        [
            "node `b`: name `mean` is also the name of node `a` in `src/m.py`; one file cannot define two functions or classes of one name (the second would replace the first)"
        ]
    );
}

#[test]
fn keywords_are_refused_as_function_module_and_package_names() {
    let mut def = leaf("def", "src/m.py");
    def.name = "def".into();
    let mut none = composite("none", "src/pkg");
    none.name = "None".into();
    let mut module = composite("module", "src/class.py");
    module.kind = "module".into();
    module.name = "lambda".into();
    let mut feature = composite("feature", "src/pkg");
    feature.kind = "feature".into();
    feature.name = "Data loading".into();
    assert_eq!(
        messages(vec![def, none, module, feature]),
        [
            "node `def`: name `def` is a Python keyword",
            "node `none`: name `None` is a Python keyword",
            "node `module`: file_path `src/class.py` has a directory or module name that is not a Python identifier, or is a keyword (Python could not import it)",
            "node `module`: name `lambda` is a Python keyword",
        ]
    );
}

#[test]
fn a_path_over_1024_bytes_is_refused_even_with_short_components() {
    let path = format!("{}/m.py", vec!["p".repeat(200); 6].join("/"));
    assert!(path.len() > MAX_PATH_BYTES);
    assert_eq!(file_path_problem(&path), Some("is longer than 1024 bytes"));
    let fits = format!("{}/m.py", vec!["p".repeat(200); 5].join("/"));
    assert_eq!(file_path_problem(&fits), None);
}

#[test]
fn module_nodes_name_py_files_and_package_paths_are_identifiers() {
    let mut script = composite("script", "src/p/run.sh");
    script.kind = "module".into();
    let egg = composite("egg", "src/p.egg-info");
    let keyword = composite("keyword", "src/pkg/import/");
    let fine = composite("fine", "src/pkg/");
    let errors = messages(vec![script, egg, keyword, fine]);
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("node `script`: file_path `src/p/run.sh` does not end in `.py`"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].starts_with(
            "node `egg`: file_path `src/p.egg-info` has a component that is not a Python identifier"
        ),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].starts_with("node `keyword`: file_path `src/pkg/import/` has a component"),
        "{}",
        errors[2]
    );
}

#[test]
fn plan_files_under_tests_are_refused() {
    let errors = messages(vec![
        leaf("a", "tests/test_x.py"),
        leaf("b", "Tests/deep/x.py"),
        composite("c", "tests"),
        leaf("d", "src/tests/x.py"),
    ]);
    assert_eq!(
        errors,
        [
            "node `a`: file_path `tests/test_x.py` lies under `tests/`, where the generated tests are written (`tests/test_<module>.py`); a plan module there would collide with them",
            "node `b`: file_path `Tests/deep/x.py` lies under `tests/`, where the generated tests are written (`tests/test_<module>.py`); a plan module there would collide with them",
            "node `c`: file_path `tests` is the `tests` directory, where the generated tests are written; a plan may not write there",
        ]
    );
}

#[test]
fn bidi_controls_in_ids_names_types_and_paths_are_refused_and_shown_escaped() {
    let mut named = composite("named", "src/pkg");
    named.kind = "feature".into();
    named.name = "a\u{2067}b".into();
    let mut typed = leaf("typed", "src/m.py");
    typed.kind = "func\u{202e}tion".into();
    let errors = messages(vec![
        leaf("admin\u{202e}txt", "src/m.py"),
        leaf("b", "src/m\u{200f}.py"),
        named,
        typed,
    ]);
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "node #0: id `admin\\u{202e}txt` contains a Unicode bidirectional control character"
        ),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains(
            "file_path `src/m\\u{200f}.py` contains a Unicode bidirectional control character"
        ),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].starts_with("node `named`: name `a\\u{2067}b` contains a Unicode bidirectional"),
        "{}",
        errors[2]
    );
    assert!(
        errors[3]
            .starts_with("node `typed`: type `func\\u{202e}tion` contains a Unicode bidirectional"),
        "{}",
        errors[3]
    );
    for error in &errors {
        assert!(!error.chars().any(is_bidi_control), "{error}");
    }
}

#[test]
fn terminal_safe_escapes_controls_and_bidi_but_keeps_newlines_and_tabs() {
    assert_eq!(terminal_safe("a\tb\nc"), "a\tb\nc");
    assert_eq!(
        terminal_safe("x\u{1b}[2J\u{202e}y\u{61c}"),
        "x\\u{1b}[2J\\u{202e}y\\u{61c}"
    );
    assert!(matches!(
        terminal_safe("plain"),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn reference_tests_in_the_metadata_must_be_a_plain_path() {
    let with = |value: serde_json::Value| {
        let mut plan = rpg(vec![leaf("a", "src/pkg/m.py")]);
        plan.metadata.insert("reference_tests".into(), value);
        validate(plan).err().map(|e| e[0].to_string())
    };
    assert_eq!(with(serde_json::json!("../ref/tests")), None);
    assert_eq!(
        with(serde_json::json!(3)).as_deref(),
        Some("metadata `reference_tests` must be a string (the reference tests' directory)")
    );
    assert_eq!(
        with(serde_json::json!("a\u{1b}[2J")).as_deref(),
        Some("metadata `reference_tests` contains a control character")
    );
}

fn data(id: &str, name: &str, value: Option<&str>) -> Node {
    Node {
        name: name.into(),
        kind: NodeKind::Data,
        value: value.map(str::to_string),
        ..leaf(id, "src/m.py")
    }
}

#[test]
fn a_data_leaf_with_a_literal_value_or_none_is_accepted() {
    let table = data(
        "table",
        "UNITS",
        Some("{'m': 1.0, 'km': 1e3, 'mi': (1609.344,)}"),
    );
    let described = data("described", "default_sep", None);
    let special = data("special", "SPECIAL", Some("frozenset({'a', 'b'})"));
    assert_eq!(
        messages(vec![table, described, special]),
        Vec::<String>::new()
    );
}

#[test]
fn a_data_value_that_is_not_a_literal_is_refused_with_the_reason() {
    let import = data("import", "A", Some("__import__('os').system('rm -rf ~')"));
    let name = data("name", "B", Some("[1, HOME]"));
    let fstring = data("fstring", "C", Some("f'{open(\"/etc/passwd\").read()}'"));
    let statements = data("statements", "D", Some("1\nimport os"));
    let bidi = data("bidi", "E", Some("'\u{202e}txt'"));
    assert_eq!(
        messages(vec![import, name, fstring, statements, bidi]),
        [
            "data node `import`: value calls `__import__('os').system`; a value may call only frozenset, set, tuple, list, dict, str, bytes, int, float, complex or bool, on one literal",
            "data node `name`: value holds a name `HOME`, which is not a literal",
            "data node `fstring`: value holds an f-string, whose `{...}` runs code",
            "data node `statements`: value is not one Python expression (write a tuple in brackets: `(1, 2)`)",
            "data node `bidi`: value contains a Unicode bidirectional control character, which makes code read otherwise than it runs",
        ]
    );
}

#[test]
fn only_a_data_leaf_has_a_value_and_a_data_node_is_a_leaf_with_a_python_name() {
    let function = Node {
        value: Some("1".into()),
        ..leaf("function", "src/m.py")
    };
    let composite_data = Node {
        node_type: NodeType::Composite,
        file_path: Some("src/pkg".into()),
        ..data("composite", "X", None)
    };
    let dunder = data("dunder", "__all__", Some("['x']"));
    let keyword = data("keyword", "class", Some("1"));
    let same = data("same", "UNITS", None);
    let twin = data("twin", "UNITS", None);
    let undocumented = Node {
        docstring: None,
        ..data("undocumented", "Y", Some("1"))
    };
    assert_eq!(
        messages(vec![
            function,
            composite_data,
            dunder,
            keyword,
            same,
            twin,
            undocumented
        ]),
        [
            "node `function`: only a data node (type `data`) has a value; this one's type is `function`",
            "node `composite`: type `data` is module-level data, a leaf written into its module; its node_type must be `leaf`",
            "node `dunder`: name `__all__` is a dunder name (`__name__`), which Python and the packaging of the repository use; module-level data needs a name of its own",
            "node `keyword`: name `class` is a Python keyword",
            "leaf node `undocumented`: missing docstring (the docstring is the specification)",
            "node `twin`: name `UNITS` is also the name of node `same` in `src/m.py`; one file cannot define two functions or classes of one name (the second would replace the first)",
        ]
    );
}

#[test]
fn the_data_kind_reads_and_writes_back_as_its_word_and_other_words_stay_as_written() {
    let json = r#"{"id": "d", "name": "X", "type": "data", "node_type": "leaf", "value": "1"}"#;
    let node: Node = serde_json::from_str(json).unwrap();
    assert_eq!(
        (node.kind.clone(), node.value.as_deref()),
        (NodeKind::Data, Some("1"))
    );
    let back = serde_json::to_value(&node).unwrap();
    assert_eq!(
        (back["type"].as_str(), back["value"].as_str()),
        (Some("data"), Some("1"))
    );
    let feature: Node = serde_json::from_str(
        r#"{"id": "f", "name": "F", "type": "feature", "node_type": "composite"}"#,
    )
    .unwrap();
    assert_eq!(feature.kind, NodeKind::Other("feature".into()));
    assert_eq!(serde_json::to_value(&feature).unwrap()["type"], "feature");
    assert!(
        serde_json::to_value(&feature)
            .unwrap()
            .get("value")
            .is_none()
    );
}

#[test]
fn a_docstring_over_64_kib_is_refused_with_its_size() {
    let mut big = leaf("big", "src/m.py");
    big.docstring = Some("d".repeat(MAX_DOCSTRING_BYTES + 1));
    let mut fits = leaf("fits", "src/m.py");
    fits.docstring = Some("d".repeat(MAX_DOCSTRING_BYTES));
    assert_eq!(
        messages(vec![big, fits]),
        [
            "node `big`: docstring is 65537 bytes, more than the 65536 (64 KiB) allowed (the docstring is the specification, sent in every prompt and written into the module)"
        ]
    );
}

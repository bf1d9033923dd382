use super::*;

type At = (usize, usize, usize, usize);

fn fix(path: &str, code: &str, at: At, edits: &[(usize, usize, usize, usize, &str)]) -> Offered {
    Offered {
        path: path.into(),
        code: code.into(),
        row: at.0,
        column: at.1,
        end_row: at.2,
        end_column: at.3,
        safe: !edits.is_empty(),
        edits: edits
            .iter()
            .map(|&(a, b, c, d, e)| (a, b, c, d, e.to_string()))
            .collect(),
    }
}

fn sources(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

#[test]
fn positions_are_rows_and_character_columns() {
    let text = "é = 1\nx = f\"ü\"\n";
    let starts = line_starts(text);
    assert_eq!(offset(text, &starts, 1, 1), Some(0));
    assert_eq!(offset(text, &starts, 2, 5), Some("é = 1\nx = ".len()));
    assert_eq!(
        offset(text, &starts, 2, 9),
        Some(text.len() - 1),
        "the end of a line"
    );
    assert_eq!(
        offset(text, &starts, 3, 1),
        Some(text.len()),
        "after the last newline"
    );
    assert_eq!(offset(text, &starts, 2, 10), None);
    assert_eq!(offset(text, &starts, 4, 1), None);
    assert_eq!(offset(text, &starts, 0, 1), None);
}

#[test]
fn the_scripts_report_is_read_and_a_cut_report_is_refused() {
    let lines = "{\"path\": \"a.py\", \"code\": \"F401\", \"row\": 1, \"column\": 8, \"end_row\": 1, \"end_column\": 10, \"safe\": true, \"edits\": [[1, 1, 2, 1, \"\"]]}\n{\"findings\": 3, \"offered\": 1, \"shown\": 1}\n";
    let report = read_report(lines).unwrap();
    assert_eq!(report.total, 1);
    assert_eq!(
        report.offered,
        [fix("a.py", "F401", (1, 8, 1, 10), &[(1, 1, 2, 1, "")])]
    );
    let cut = lines.lines().next().unwrap();
    assert!(read_report(cut).unwrap_err().contains("ended early"));
    assert_eq!(
        read_report("{\"error\": \"cannot run ruff\"}\n").unwrap_err(),
        "cannot run ruff"
    );
}

/// A module and what ruff 0.17 offers for it (its positions, as `ruff check
/// --output-format json` gives them).
const MODULE: &str = "import os\nimport os\nimport sys, json\nfrom typing import List\nfrom typing import List, Optional\n\n\ndef f(x: Optional[int]) -> str:\n    try:\n        pass\n    except ValueError as e:\n        pass\n    return f\"x\" + json.dumps(x) + str(x is 1)\n";

fn module_fixes() -> Vec<Offered> {
    vec![
        fix("m.py", "F811", (2, 8, 2, 10), &[(2, 1, 3, 1, "")]),
        fix("m.py", "F401", (2, 8, 2, 10), &[(2, 1, 3, 1, "")]),
        fix(
            "m.py",
            "F401",
            (3, 8, 3, 11),
            &[(3, 1, 3, 17, "import json")],
        ),
        fix(
            "m.py",
            "F811",
            (5, 20, 5, 24),
            &[(5, 1, 5, 34, "from typing import Optional")],
        ),
        fix(
            "m.py",
            "F401",
            (5, 20, 5, 24),
            &[(5, 1, 5, 34, "from typing import Optional")],
        ),
        fix("m.py", "F841", (11, 26, 11, 27), &[(11, 22, 11, 27, "")]),
        fix(
            "m.py",
            "F541",
            (13, 12, 13, 16),
            &[(13, 12, 13, 16, "\"x\"")],
        ),
        fix("m.py", "F632", (13, 39, 13, 45), &[(13, 41, 13, 43, "==")]),
    ]
}

#[test]
fn safe_fixes_of_the_allowed_rules_are_applied_once_and_others_are_kept() {
    let fixes = module_fixes();
    let refs: Vec<&Offered> = fixes.iter().collect();
    let plan = plan_file("m.py", MODULE, &refs, &BTreeMap::new());
    assert_eq!(
        plan.text.as_deref(),
        Some(
            "import os\nimport json\nfrom typing import List\nfrom typing import Optional\n\n\ndef f(x: Optional[int]) -> str:\n    try:\n        pass\n    except ValueError:\n        pass\n    return \"x\" + json.dumps(x) + str(x is 1)\n"
        )
    );
    let fixed: Vec<(&str, usize)> = plan.fixed.iter().map(|(c, n)| (c.as_str(), *n)).collect();
    assert_eq!(fixed, [("F401", 3), ("F541", 1), ("F811", 2), ("F841", 1)]);
    assert_eq!(
        plan.kept,
        ["m.py:13: F632 kept: not a rule the cleanup applies"]
    );
    assert!(plan.explicit.is_empty());
}

#[test]
fn a_fix_that_would_add_text_or_miss_the_file_is_kept() {
    let text = "import os\n";
    let adds = fix(
        "m.py",
        "F401",
        (1, 8, 1, 10),
        &[(1, 1, 2, 1, "import sys\n")],
    );
    let outside = fix("m.py", "F401", (1, 8, 1, 10), &[(1, 1, 9, 1, "")]);
    let nowhere = fix("m.py", "F401", (7, 8, 7, 10), &[(1, 1, 2, 1, "")]);
    let plan = plan_file("m.py", text, &[&adds, &outside, &nowhere], &BTreeMap::new());
    assert_eq!(plan.text, None);
    assert_eq!(
        plan.kept,
        [
            "m.py:1: F401 kept: it would add text",
            "m.py:1: F401 kept: its positions are not in the file",
            "m.py:7: F401 kept: its positions are not in the file",
        ]
    );
}

#[test]
fn overlapping_fixes_wait_for_the_next_round() {
    let text = "import os\nimport sys\n";
    let first = fix("m.py", "F401", (1, 8, 1, 10), &[(1, 1, 2, 1, "")]);
    let wider = fix("m.py", "F811", (2, 8, 2, 11), &[(1, 5, 3, 1, "")]);
    let plan = plan_file("m.py", text, &[&wider, &first], &BTreeMap::new());
    assert_eq!(plan.text.as_deref(), Some("import sys\n"));
    assert_eq!(plan.fixed.get("F401"), Some(&1));
    assert_eq!(plan.fixed.get("F811"), None, "it waits for the next round");
}

#[test]
fn what_other_files_take_from_a_module_is_read_from_their_imports_and_attributes() {
    let files = sources(&[
        (
            "src/pkg/__init__.py",
            "from .stats import mean\n\n__all__ = [\"mean\"]\n",
        ),
        ("src/pkg/stats.py", "import math\n"),
        (
            "tests/test_stats.py",
            "from pkg.stats import mean, helper  # noqa: F401\nimport pkg.stats\nfrom pkg import stats as s\n\n\ndef test_mean():\n    assert pkg.stats.math.pi and s.json.dumps(mean(1))\n",
        ),
    ]);
    let taken = taken_names(&files);
    for (module, name, by) in [
        ("pkg.stats", "mean", "src/pkg/__init__.py"),
        ("pkg.stats", "helper", "tests/test_stats.py"),
        ("pkg.stats", "math", "tests/test_stats.py"),
        ("pkg.stats", "json", "tests/test_stats.py"),
        ("pkg", "stats", "tests/test_stats.py"),
    ] {
        let key = (module.to_string(), name.to_string());
        assert_eq!(
            taken.get(&key).map(String::as_str),
            Some(by),
            "{module}.{name}"
        );
    }
    assert_eq!(
        taken.get(&("pkg.stats".to_string(), "re".to_string())),
        None
    );
}

#[test]
fn unused_imports_that_are_re_exports_are_made_explicit_not_removed() {
    let files = sources(&[
        (
            "src/pkg/__init__.py",
            "from .stats import mean\nfrom os import path as p\n",
        ),
        (
            "src/pkg/stats.py",
            "from pkg.util import helper\nimport os.path\nimport re\n\n\ndef mean(x):\n    return x\n",
        ),
        ("src/pkg/util.py", "def helper():\n    return 1\n"),
        (
            "tests/test_stats.py",
            "from pkg.stats import mean, helper\nimport pkg.stats\n\n\ndef test_mean():\n    assert pkg.stats.os.sep and helper() == mean(1)\n",
        ),
    ]);
    let offered = vec![
        fix(
            "src/pkg/stats.py",
            "F401",
            (1, 22, 1, 28),
            &[(1, 1, 2, 1, "")],
        ),
        fix(
            "src/pkg/stats.py",
            "F401",
            (2, 8, 2, 15),
            &[(2, 1, 3, 1, "")],
        ),
        fix(
            "src/pkg/stats.py",
            "F401",
            (3, 8, 3, 10),
            &[(3, 1, 4, 1, "")],
        ),
        fix("src/pkg/__init__.py", "F401", (1, 20, 1, 24), &[]),
        fix("src/pkg/__init__.py", "F401", (2, 24, 2, 25), &[]),
        fix(
            "src/elsewhere.py",
            "F401",
            (1, 1, 1, 2),
            &[(1, 1, 2, 1, "")],
        ),
    ];
    let plans = plan_round(&files, &offered);
    assert_eq!(plans.len(), 2, "a path that is not a source is ignored");
    let stats = &plans["src/pkg/stats.py"];
    assert_eq!(
        stats.text.as_deref(),
        Some(
            "from pkg.util import helper as helper\nimport os.path\n\n\ndef mean(x):\n    return x\n"
        )
    );
    assert_eq!(stats.fixed.get("F401"), Some(&1), "only `re` goes");
    assert_eq!(
        stats.explicit,
        ["src/pkg/stats.py:1: tests/test_stats.py imports `helper` from here"]
    );
    assert_eq!(
        stats.kept,
        [
            "src/pkg/stats.py:2: F401 kept: tests/test_stats.py imports `os` from here, and `os.path` cannot take a redundant alias"
        ]
    );
    let init = &plans["src/pkg/__init__.py"];
    assert_eq!(
        init.text.as_deref(),
        Some("from .stats import mean as mean\nfrom os import path as p\n")
    );
    assert_eq!(
        init.kept,
        [
            "src/pkg/__init__.py:2: F401 kept: an `__init__.py` import is the package's interface, and `p` cannot take a redundant alias"
        ]
    );
}

#[test]
fn a_star_import_of_a_module_keeps_its_imports() {
    let files = sources(&[
        ("src/pkg/a.py", "import os.path\n"),
        ("src/pkg/b.py", "from .a import *\n"),
    ]);
    let offered = [fix(
        "src/pkg/a.py",
        "F401",
        (1, 8, 1, 15),
        &[(1, 1, 2, 1, "")],
    )];
    let plans = plan_round(&files, &offered);
    assert_eq!(plans["src/pkg/a.py"].text, None);
    assert_eq!(
        plans["src/pkg/a.py"].kept,
        [
            "src/pkg/a.py:1: F401 kept: src/pkg/b.py imports `os` from here, and `os.path` cannot take a redundant alias"
        ]
    );
}

#[test]
fn an_unused_import_without_a_safe_fix_is_left_to_the_lint() {
    let plan = plan_file(
        "m.py",
        "import os\n",
        &[&fix("m.py", "F401", (1, 8, 1, 10), &[])],
        &BTreeMap::new(),
    );
    assert_eq!(plan, FilePlan::default());
}

#[test]
fn relative_imports_resolve_from_the_package() {
    assert_eq!(absolute(".m", "a.b").as_deref(), Some("a.b.m"));
    assert_eq!(absolute("..m", "a.b").as_deref(), Some("a.m"));
    assert_eq!(absolute(".", "a.b").as_deref(), Some("a.b"));
    assert_eq!(absolute("...m", "a").as_deref(), None);
    assert_eq!(
        module_and_package("src/a/b/__init__.py"),
        ("a.b".into(), "a.b".into())
    );
    assert_eq!(
        module_and_package("src/a/b/c.py"),
        ("a.b.c".into(), "a.b".into())
    );
    assert_eq!(bound_name("os.path"), "os");
    assert_eq!(bound_name("List as L"), "L");
    assert!(is_subsequence("import json", "import sys, json"));
    assert!(!is_subsequence("import sys", "import os"));
}

#[test]
fn a_fix_that_breaks_the_syntax_is_not_written() {
    let plans: BTreeMap<String, FilePlan> = [("ok.py", "x = 1\n"), ("bad.py", "def f(:\n")]
        .into_iter()
        .map(|(path, text)| {
            let plan = FilePlan {
                text: Some(text.to_string()),
                ..FilePlan::default()
            };
            (path.to_string(), plan)
        })
        .collect();
    let (kept, left_out) = parsable(&plans);
    assert_eq!(kept.keys().collect::<Vec<_>>(), ["ok.py"]);
    assert_eq!(
        left_out,
        ["bad.py: not cleaned: the fixed text does not parse"]
    );
}

//! The probe file's reading: new functions, the rendered file, crashes and disputes.

use super::*;

const BEFORE: &str = "import re\n\n\ndef re_iter(regex, s):\n    \"\"\"Iterate matches.\"\"\"\n    return re.finditer(regex, s)\n";

#[test]
fn only_new_public_top_level_functions_are_probed() {
    let after = format!(
        "{BEFORE}\n\ndef re_count(regex, s, flags=0):\n    \"\"\"Count the matches.\"\"\"\n    return len(re_iter(regex, s))\n\n\ndef _helper():\n    pass\n\n\nclass K:\n    def method(self):\n        pass\n"
    );
    let found = new_functions("funcy/strings.py", BEFORE, &after);
    assert_eq!(
        found,
        vec![NewFunction {
            path: "funcy/strings.py".into(),
            name: "re_count".into(),
            shown: "def re_count(regex, s, flags=0):\n    \"\"\"Count the matches.\"\"\"\n    ..."
                .into(),
            signature: "def re_count(regex, s, flags=0):".into(),
            covered: false,
        }]
    );
    assert!(new_functions("tests/test_strings.py", BEFORE, &after).is_empty());
    assert!(new_functions("funcy/strings.py", &after, &after).is_empty());
    let guarded = "import sys\n\nif sys.version_info >= (3, 10):\n    from itertools import pairwise\nelse:\n    def pairwise(it):\n        \"\"\"Pairs.\"\"\"\n        return zip(it, it[1:])\n";
    let grown =
        format!("{guarded}\n\ndef diffs(it):\n    return [b - a for a, b in pairwise(it)]\n");
    let found: Vec<String> = new_functions("mi/recipes.py", guarded, &grown)
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(
        found,
        ["diffs"],
        "a definition under an `if` was there before"
    );
}

#[test]
fn the_file_keeps_imports_and_tests_only_and_imports_the_function() {
    let function = NewFunction {
        path: "src/pkg/text.py".into(),
        name: "re_count".into(),
        shown: String::new(),
        signature: String::new(),
        covered: false,
    };
    let files = vec![
        "src/pkg/__init__.py".to_string(),
        "src/pkg/text.py".to_string(),
    ];
    let answer = format!(
        "{}'a', 'aa')\n\n\nimport re\nX = 1\n\n\ndef helper():\n    pass\n\n\ndef test_re_count_empty():\n    re_count('a', '')\n```\nThat is all.",
        prefill("re_count")
    );
    let file = render(&[(function.clone(), answer)], &files);
    assert!(
        file.contains("'src'))\nfrom pkg.text import re_count\n"),
        "{file}"
    );
    assert!(
        file.contains("def test_re_count_typical():\n    result = re_count('a', 'aa')"),
        "{file}"
    );
    assert!(file.contains("def test_re_count_empty():") && file.contains("\nimport re\n"));
    assert!(
        !file.contains("X = 1") && !file.contains("def helper") && !file.contains("That is all")
    );
    assert_eq!(render(&[(function.clone(), "no code".into())], &files), "");
    // Cut off inside its second call: the first stays, the unfinished one goes.
    let cut = format!(
        "{}'a')\n\n\ndef test_re_count_long():\n    re_count('a', 'a' *",
        prefill("re_count")
    );
    let file = render(&[(function, cut)], &files);
    assert!(
        file.contains("test_re_count_typical") && !file.contains("test_re_count_long"),
        "{file}"
    );
}

#[test]
fn a_call_that_does_not_parse_is_left_out_and_the_others_run() {
    // Seen on the code corpus's dev half: one `re_count(.compile(...))` stopped pytest
    // from collecting the file, and a change whose function crashes on every call was
    // written with no call of it run.
    let answer = format!(
        "{}r'\\d', 'a1b2')\n\n\ndef test_re_count_compiled():\n    re_count(.compile(r'\\d'), '12')\n\n\ndef test_re_count_none():\n    re_count(r'x', 'abc')\n```",
        prefill("re_count")
    );
    let names: Vec<Option<String>> = test_units(&answer).into_iter().map(|u| u.test).collect();
    assert_eq!(
        names,
        [
            None,
            Some("test_re_count_typical".to_string()),
            Some("test_re_count_none".to_string())
        ]
    );
}

#[test]
fn only_an_undocumented_exception_in_the_new_functions_module_is_a_crash() {
    let output = "\
F.F                                                                      [100%]
=================================== FAILURES ===================================
_____________________________ test_re_count_typical ____________________________
test_zerorepo_probes.py:9: in test_re_count_typical
re_count('a', 'aa')
funcy/strings.py:12: in re_count
return len(re_iter(regex, s))
E   TypeError: object of type 'map' has no len()
______________________________ test_re_count_bad _______________________________
test_zerorepo_probes.py:13: in test_re_count_bad
re_count()
E   TypeError: re_count() missing 2 required positional arguments
______________________________ test_re_count_none ______________________________
funcy/strings.py:12: in re_count
E   ValueError: empty pattern
=========================== short test summary info ============================
FAILED test_zerorepo_probes.py::test_re_count_typical - TypeError
";
    let functions = [NewFunction {
        path: "funcy/strings.py".into(),
        name: "re_count".into(),
        shown: String::new(),
        signature: String::new(),
        covered: false,
    }];
    let documented = named_errors("It raises ValueError for an empty pattern.");
    assert_eq!(documented, ["ValueError"]);
    let crashed: Vec<String> = crashes(output, &functions, &documented)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(crashed, ["test_re_count_typical"]);
}

#[test]
fn a_function_its_examples_ran_crashes_only_in_its_own_frame() {
    let section = |inner: &str| {
        format!(
            "F\n=== FAILURES ===\n___ test_cut_typical ___\n\
             test_zerorepo_probes.py:9: in test_cut_typical\n    cut(('a',), 'b')\n\
             funcy/strings.py:12: in cut\n    return cut_prefix(s, p)\n\
             {inner}E   AttributeError: 'tuple' object has no attribute 'startswith'\n\
             === short test summary info ===\n"
        )
    };
    let in_helper = section("funcy/strings.py:4: in cut_prefix\n    s.startswith(p)\n");
    let in_itself = section("");
    let cut = |covered| NewFunction {
        path: "funcy/strings.py".into(),
        name: "cut".into(),
        shown: String::new(),
        signature: String::new(),
        covered,
    };
    let crashed = |output: &str, covered| crashes(output, &[cut(covered)], &[]).len();
    assert_eq!(
        crashed(&in_helper, false),
        1,
        "no example: the module breaks"
    );
    assert_eq!(
        crashed(&in_helper, true),
        0,
        "a helper given a wrong argument"
    );
    assert_eq!(crashed(&in_itself, true), 1);
}

#[test]
fn calls_pass_or_are_disputed_only_in_the_probe_file() {
    let none = "FF\nFAILED test_zerorepo_probes.py::test_f_typical - NameError: name 're' is not defined\nFAILED test_zerorepo_probes.py::test_f_bad - TypeError: f() missing 1 required positional argument\n";
    assert_eq!(passed(none), 0);
    assert_eq!(
        summary(none),
        none.lines().skip(1).collect::<Vec<_>>().join("\n")
    );
    let one = format!("{none}PASSED test_zerorepo_probes.py::test_f_empty\n");
    assert_eq!(passed(&one), 1);
    assert_eq!(passed("PASSED tests/test_other.py::test_x\n"), 0);
    assert_eq!(summary("1 error in 0.1s"), "pytest ran no call");

    // pytest 8's own words (-rA --tb=short), for f(x) = x + 1.
    let output = "F.FF\n=== FAILURES ===\n\
        ___ test_f_a ___\n\
        test_zerorepo_probes.py:4: in test_f_a\n    assert result == 3\nE   assert 2 == 3\n\
        ___ test_f_c ___\n\
        test_zerorepo_probes.py:8: in test_f_c\n    assert f(2) == [3]\nE   assert 3 == [3]\nE    +  where 3 = f(2)\n\
        ___ test_f_d ___\n\
        test_zerorepo_probes.py:10: in test_f_d\n    assert f(re.compile('a'))\nE   NameError: name 're' is not defined\n\
        ___ test_f_e ___\n\
        test_zerorepo_probes.py:12: in test_f_e\n    f(None)\nsrc/m.py:2: in f\n    assert x\nE   AssertionError\n\
        === short test summary info ===\n\
        PASSED test_zerorepo_probes.py::test_f_b\n";
    let names = |found: Vec<(String, String)>| -> Vec<String> {
        found.into_iter().map(|(n, _)| n).collect()
    };
    assert_eq!(
        names(disputed(output, &[])),
        ["test_f_a", "test_f_c"],
        "a call that never returned, or an assert in the function's own code, disputes \
         no value"
    );
    let lazy = "F\n=== FAILURES ===\n___ test_g ___\n\
        test_zerorepo_probes.py:4: in test_g\n    assert result == []\nE   assert <generator ob...x7f1e99510b80> == []\n";
    assert!(
        disputed(lazy, &[]).is_empty(),
        "a generator compared with a list disputes no value"
    );
    let crashed = vec![("test_f_a".to_string(), String::new())];
    assert_eq!(names(disputed(output, &crashed)), ["test_f_c"]);
    assert_eq!(passed(output), 1);

    let file = "import pytest\n\n\ndef test_f_b():\n    result = f(1)\n    assert result == 2\n\n\ndef test_f_bare():\n    f(3)\n";
    let both = format!("{output}PASSED test_zerorepo_probes.py::test_f_bare\n");
    assert_eq!(passed(&both), 2);
    assert_eq!(confirmed(&both, file), 1, "a bare call confirms no value");
}

#[test]
fn a_call_that_returned_where_the_request_names_its_error_is_missed() {
    // pytest 8's words, then an older pytest's, then a tuple, then an error not named.
    let output = "FFFF\n=== FAILURES ===\n\
        ___ test_f_years ___\n\
        test_zerorepo_probes.py:5: in test_f_years\n    with pytest.raises(ValueError):\nE   Failed: DID NOT RAISE ValueError\n\
        ___ test_f_months ___\n\
        test_zerorepo_probes.py:9: in test_f_months\n    with pytest.raises(ValueError):\nE   Failed: DID NOT RAISE <class 'ValueError'>\n\
        ___ test_f_either ___\n\
        test_zerorepo_probes.py:13: in test_f_either\n    with pytest.raises((KeyError, ValueError)):\nE   Failed: DID NOT RAISE any of (KeyError, ValueError)\n\
        ___ test_f_type ___\n\
        test_zerorepo_probes.py:17: in test_f_type\n    with pytest.raises(TypeError):\nE   Failed: DID NOT RAISE TypeError\n\
        === short test summary info ===\n";
    let documented = named_errors("Raise `ValueError` for those.");
    let names: Vec<String> = missed(output, &documented)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["test_f_years", "test_f_months", "test_f_either"]);
    assert!(
        missed(output, &[]).is_empty(),
        "a request that names no error: the model's expectation alone is no evidence"
    );
    assert!(
        disputed(output, &[]).is_empty(),
        "a missed error is not a disputed value"
    );
    let file = "def test_f_years():\n    with pytest.raises(ValueError):\n        f('P1Y')\n";
    let shown = failing(&[], &missed(output, &documented), file);
    assert!(shown.contains("f('P1Y')"), "the call is shown: {shown}");
    assert!(shown.contains("DID NOT RAISE ValueError"), "{shown}");
    assert!(shown.contains("request says it raises"), "{shown}");
    assert!(!shown.contains("crashed"), "{shown}");
}

#[test]
fn a_module_qualified_class_is_read_by_its_name() {
    let output = "F\n=== FAILURES ===\n___ test_g ___\n\
        test_zerorepo_probes.py:5: in test_g\n    with pytest.raises(isodate.ISO8601Error):\nE   Failed: DID NOT RAISE <class 'isodate.isoerror.ISO8601Error'>\n";
    assert_eq!(missed(output, &["ISO8601Error".to_string()]).len(), 1);
    assert!(missed(output, &["Error".to_string()]).is_empty());
}

#[test]
fn a_function_that_raises_the_named_error_somewhere_only_disputes_where_else() {
    let file = "import pytest\n\n\ndef test_t_short():\n    with pytest.raises(ValueError):\n        t(10, range(3))\n\n\ndef test_t_zero():\n    with pytest.raises(ValueError):\n        t(0, range(1))\n\n\ndef test_t_type():\n    with pytest.raises(TypeError):\n        t(None, [])\n";
    let documented = ["ValueError".to_string()];
    let zero = "___ test_t_zero ___\nE   Failed: DID NOT RAISE ValueError\n";
    let missed_zero = || vec![("test_t_zero".to_string(), zero.to_string())];

    let one_raised = "PASSED test_zerorepo_probes.py::test_t_short\n";
    assert_eq!(raised_as_expected(one_raised, file, &documented), 1);
    let (failed, disputes) = never_raised(missed_zero(), 1);
    assert!(
        failed.is_empty(),
        "the case exists: a dispute over its edge"
    );
    assert_eq!(disputes.len(), 1);

    let only_other = "PASSED test_zerorepo_probes.py::test_t_type\n";
    assert_eq!(
        raised_as_expected(only_other, file, &documented),
        0,
        "an error the request does not name shows nothing of its case"
    );
    let (failed, disputes) = never_raised(missed_zero(), 0);
    assert_eq!(failed.len(), 1, "never raised: the case is missing");
    assert!(disputes.is_empty());
}

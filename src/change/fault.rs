//! Which file a failing check points at, read from its output. Pure.
//!
//! Checks name files in a few shapes: Python tracebacks (`File "/repo/pkg/m.py", line 3`),
//! pytest and compilers (`pkg/m.py:3: AssertionError`, `src/lib.rs:10:5: error`), and Go
//! (`./m.go:3:2:`). Every token of the output that ends in `:LINE` or follows `File "` is a
//! mention; a mention names a repository file when the file's path is a suffix of it at a `/`
//! (the sandbox mounts the repository elsewhere). In a traceback the innermost frame comes
//! last, so later mentions weigh more. The file at fault is, in this order:
//! 1. the last mentioned source file (not a test file) that this change touched;
//! 2. when only test files are mentioned (the change's or the repository's) and the change
//!    touched source files, the first of those source files: a failing assertion sits in the
//!    test, the code it checks is what the change wrote (a repository test that fails after
//!    a bug fix points at the fix, not at itself);
//! 3. the last mentioned test file the change touched, else the last mentioned repository
//!    file, else the first file the change touched.

/// The repository file `output` points at; `changed` are the files the change touched,
/// `files` every file of the repository (both relative, `/`-separated).
pub(crate) fn file_at_fault(output: &str, changed: &[String], files: &[String]) -> Option<String> {
    let mentions: Vec<&str> = output.lines().flat_map(mentions_in).collect();
    let named = |pool: &[String]| last_mentioned(&mentions, pool);
    let (tests, sources): (Vec<String>, Vec<String>) =
        changed.iter().cloned().partition(|f| is_test_file(f));
    let any_test = mentions.iter().any(|m| is_test_file(m));
    named(&sources)
        .or_else(|| any_test.then(|| sources.first().cloned()).flatten())
        .or_else(|| named(&tests))
        .or_else(|| named(files))
        .or_else(|| changed.first().cloned())
}

/// The file of `pool` that `output` mentions last, if any.
pub(super) fn mentioned_last(output: &str, pool: &[String]) -> Option<String> {
    let mentions: Vec<&str> = output.lines().flat_map(mentions_in).collect();
    last_mentioned(&mentions, pool)
}

fn last_mentioned(mentions: &[&str], pool: &[String]) -> Option<String> {
    (mentions.iter().rev()).find_map(|m| pool.iter().find(|f| names(m, f)).cloned())
}

/// `tests/x.py`, `test_x.py`, `x_test.go`, `x.test.js`, `x.spec.ts`.
pub(crate) fn is_test_file(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    let stem = name.split('.').next().unwrap_or_default();
    parts
        .iter()
        .any(|p| matches!(*p, "tests" | "test" | "__tests__"))
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// The path-like tokens of one line of output.
fn mentions_in(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("File \"") {
        let after = &rest[at + 6..];
        let Some(end) = after.find('"') else { break };
        found.push(&after[..end]);
        rest = &after[end + 1..];
    }
    for token in line.split_whitespace() {
        let token = token.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | '\'' | '"'));
        if let Some((path, after)) = token.split_once(':')
            && after.starts_with(|c: char| c.is_ascii_digit())
            && path.contains('.')
        {
            found.push(path);
        }
    }
    found
}

/// Whether `mention` names `file`: equal, or `file` is its suffix after a `/`.
fn names(mention: &str, file: &str) -> bool {
    let mention = mention.strip_prefix("./").unwrap_or(mention);
    mention == file || mention.ends_with(&format!("/{file}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_innermost_frame_in_a_changed_file_is_at_fault() {
        let output = "Traceback (most recent call last):\n  File \"/repo/tests/test_calc.py\", line 4, in test_mul\n    assert multiply(2, 3) == 6\n  File \"/repo/calc/ops.py\", line 9, in multiply\n    return a + b\nAssertionError";
        let files = strings(&["calc/ops.py", "tests/test_calc.py", "calc/__init__.py"]);
        assert_eq!(
            file_at_fault(output, &strings(&["calc/ops.py"]), &files).as_deref(),
            Some("calc/ops.py")
        );
    }

    #[test]
    fn compiler_and_pytest_locations_count_and_changed_files_win() {
        let output = "tests/test_calc.py:4: in test_mul\ncalc/ops.py:9: AssertionError\nsrc/lib.rs:10:5: error[E0425]";
        let files = strings(&["calc/ops.py", "tests/test_calc.py", "src/lib.rs"]);
        assert_eq!(
            file_at_fault(output, &strings(&["tests/test_calc.py"]), &files).as_deref(),
            Some("tests/test_calc.py")
        );
        assert_eq!(
            file_at_fault(output, &[], &files).as_deref(),
            Some("src/lib.rs")
        );
    }

    #[test]
    fn an_assertion_in_a_test_blames_the_source_the_change_wrote() {
        let output = "tests/test_calc.py:10: in test_multiply\n    assert multiply(2, 3) == 6\nE   assert 5 == 6";
        let changed = strings(&["calc/__init__.py", "tests/test_calc.py"]);
        assert_eq!(
            file_at_fault(output, &changed, &changed).as_deref(),
            Some("calc/__init__.py")
        );
        assert!(is_test_file("pkg/x_test.go") && is_test_file("web/a.spec.ts"));
        assert!(!is_test_file("calc/ops.py"));
    }

    #[test]
    fn without_a_mention_the_first_changed_file_is_blamed() {
        let changed = strings(&["a.py", "b.py"]);
        assert_eq!(
            file_at_fault("1 failed", &changed, &changed).as_deref(),
            Some("a.py")
        );
        assert_eq!(file_at_fault("1 failed", &[], &changed), None);
    }

    #[test]
    fn a_repository_test_failing_after_the_change_blames_the_changed_source() {
        let output = "tests/test_text.py:14: AssertionError\nFAILED tests/test_text.py::test_join";
        let files = strings(&["text.py", "tests/test_text.py"]);
        assert_eq!(
            file_at_fault(output, &strings(&["text.py"]), &files).as_deref(),
            Some("text.py")
        );
    }
}

//! Answers that run long.
//!
//! Small models asked for "3 to 5 tests" sometimes write twelve, and an answer cut off at
//! the token limit used to be thrown away whole. Both are handled on the text, before
//! parsing: [`stop_after_tests`] tells a streaming provider where to end a tests answer, and
//! [`drop_unfinished_tail`] keeps the complete definitions of an answer that was cut off.
//! Every top-level definition that started before another one did is complete, so the cut
//! is always at the start of a line that begins a definition.

/// The most test functions kept from one answer; the prompt asks for 3.
pub const MOST_TESTS: usize = 4;

/// Byte offsets of lines that begin a top-level definition (`def`, `async def`, `class`, or
/// the first decorator above one).
fn definition_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut offset = 0;
    let mut in_decorators = false;
    for line in text.split_inclusive('\n') {
        let begins = ["def ", "async def ", "class "]
            .iter()
            .any(|k| line.starts_with(k));
        if line.starts_with('@') {
            if !in_decorators {
                starts.push(offset);
            }
            in_decorators = true;
        } else if begins {
            if !in_decorators {
                starts.push(offset);
            }
            in_decorators = false;
        } else if !line.trim().is_empty() {
            in_decorators = false;
        }
        offset += line.len();
    }
    starts
}

fn is_test_definition(text: &str, start: usize) -> bool {
    text[start..]
        .lines()
        .find(|l| !l.starts_with('@'))
        .is_some_and(|l| l.starts_with("def test_") || l.starts_with("async def test_"))
}

/// When a tests answer has begun its `most + 1`-th test function, the answer up to that
/// function with its code block closed; `None` while it may go on.
pub fn stop_after_tests(text: &str, most: usize) -> Option<String> {
    let tests: Vec<usize> = definition_starts(text)
        .into_iter()
        .filter(|&s| is_test_definition(text, s))
        .collect();
    let cut = *tests.get(most)?;
    // Only once the new definition's first line is complete, so `def test_` is certain.
    if !text[cut..].contains('\n') {
        return None;
    }
    Some(format!("{}```\n", &text[..cut]))
}

/// An answer cut off at the token limit without its last, unfinished top-level definition,
/// with its code block closed; `None` when no complete test or function would remain.
pub fn drop_unfinished_tail(text: &str) -> Option<String> {
    let last = *definition_starts(text).last()?;
    let kept = &text[..last];
    let has_definition = definition_starts(kept)
        .into_iter()
        .any(|s| kept[s..].lines().any(|l| l.contains("def ")));
    has_definition.then(|| format!("{}```\n", kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: &str = "```python\nimport pytest\nfrom m import f\n\ndef test_f_a():\n    assert f(1) == 1\n\n@pytest.mark.slow\ndef test_f_b():\n    assert f(2) == 2\n\ndef test_f_c():\n    assert f(3";

    #[test]
    fn an_answer_cut_off_keeps_its_complete_tests() {
        let kept = drop_unfinished_tail(LONG).unwrap();
        assert!(kept.contains("def test_f_a") && kept.contains("def test_f_b"));
        assert!(kept.contains("@pytest.mark.slow"));
        assert!(!kept.contains("test_f_c"));
        assert!(kept.ends_with("```\n"));
    }

    #[test]
    fn an_answer_with_no_complete_definition_is_not_salvaged() {
        assert_eq!(
            drop_unfinished_tail("```python\nimport x\n\ndef test_a():\n    assert"),
            None
        );
    }

    #[test]
    fn a_tests_answer_stops_when_one_test_too_many_begins() {
        assert_eq!(stop_after_tests(LONG, 3), None);
        // The third test's line is complete only once a newline follows it.
        assert_eq!(
            stop_after_tests("def test_a():\n    pass\ndef test_b(", 1),
            None
        );
        let stopped = stop_after_tests(LONG, 2).unwrap();
        assert!(stopped.contains("def test_f_b") && !stopped.contains("test_f_c"));
        assert!(stopped.ends_with("```\n"));
        // The decorator of a test belongs to it, so the cut is above the decorator.
        let stopped = stop_after_tests(LONG, 1).unwrap();
        assert!(!stopped.contains("@pytest.mark.slow"));
    }

    #[test]
    fn helpers_and_classes_are_not_counted_as_tests() {
        let text = "def helper():\n    pass\nclass TestX:\n    pass\ndef test_a():\n    pass\n";
        assert_eq!(stop_after_tests(text, 1), None);
    }
}

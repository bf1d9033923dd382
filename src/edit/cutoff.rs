//! Answers that run long.
//!
//! Small models asked for "3 to 5 tests" sometimes write twelve, and an answer cut off at
//! the token limit used to be thrown away whole. Both are handled on the text, before
//! parsing: [`stop_after_tests`] tells a streaming provider where to end a tests answer
//! ([`stop_after_probes`] a probes answer), and
//! [`drop_unfinished_tail`] keeps the complete definitions of an answer that was cut off.
//! Every top-level definition that started before another one did is complete, so the cut
//! is always at the start of a line that begins a definition.
//!
//! A small model can also loop: decoding greedily, it repeats one block of lines until the
//! limit (seen on the dev plan exprcalc-noexamples: an answer continuing a begun list of
//! helper comments with the same eight invented names, over and over, 1,024 tokens and two
//! minutes of a run). [`end_of_loop`] ends such an answer after the block's first copy.

/// The most test functions kept from one answer; the prompt asks for 3.
pub(crate) const MOST_TESTS: usize = 4;

/// The most calls kept from one probes answer; the prompt (`write_probes`) asks for 3.
pub(crate) const MOST_PROBES: usize = 3;

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
pub(crate) fn stop_after_tests(text: &str, most: usize) -> Option<String> {
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

/// Bracket depth after `line`, starting from `depth`: brackets inside string literals (a
/// probe of a parser passes `"(1 + 2"`) do not count. Strings are taken to end on their line.
fn depth_after(line: &str, mut depth: i32) -> i32 {
    let mut quote = None;
    let mut escaped = false;
    for c in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '#' => break,
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            },
        }
    }
    depth.max(0)
}

/// When a probes answer (calls of the function under test, no asserts) has begun its
/// `most + 1`-th call, the answer up to that call with its code block closed; `None` while it
/// may go on. A call is a statement of a test function's body (a `with pytest.raises(...)`
/// block is one, its calls inside it included); a test function left without a call is cut
/// with it. Asked for three calls, the 1.5B model wrote one typical call and then edge cases
/// under `pytest.raises` until the token limit (seen on the dev plan intervals-noexamples:
/// 4 of its 14 probes answers cut off at 240 tokens, their unfinished test dropped whole).
pub(crate) fn stop_after_probes(text: &str, most: usize) -> Option<String> {
    let mut calls = 0;
    let mut depth = 0;
    let mut offset = 0;
    // Where the test function being read begins, and whether it has a call yet.
    let mut test: Option<(usize, bool)> = None;
    for line in text.split_inclusive('\n') {
        let body_statement = depth == 0
            && line.starts_with("    ")
            && line[4..].starts_with(|c: char| !c.is_whitespace() && c != '#' && c != ')');
        if depth == 0 && (line.starts_with("def ") || line.starts_with("async def ")) {
            test = Some((offset, false));
        } else if body_statement && let Some((start, has_call)) = test.as_mut() {
            calls += 1;
            if calls > most {
                let cut = if *has_call { offset } else { *start };
                return Some(format!("{}```\n", &text[..cut]));
            }
            *has_call = true;
        }
        depth = depth_after(line, depth);
        offset += line.len();
    }
    None
}

/// The longest block of lines whose repetition counts as a loop.
const LONGEST_LOOP: usize = 12;

/// How many repeated lines end an answer: the copies after the first cover at least this
/// many lines, and there are at least three copies (no code repeats a block of lines
/// verbatim twelve lines long, or three times in a row, and means it).
const LOOP_LINES: usize = 12;

/// When the complete lines that end `text` are one block of lines repeated (a model looping),
/// the length of `text` up to the end of that block's first copy; `None` otherwise. Lines are
/// compared without trailing whitespace.
pub(crate) fn end_of_loop(text: &str) -> Option<usize> {
    let complete = &text[..text.rfind('\n')? + 1];
    let lines: Vec<&str> = complete.split_inclusive('\n').collect();
    let n = lines.len();
    let same = |a: usize, b: usize| lines[a].trim_end() == lines[b].trim_end();
    (1..=LONGEST_LOOP).find_map(|k| {
        let copies = (LOOP_LINES.div_ceil(k) + 1).max(3);
        let start = n.checked_sub(copies * k)?;
        (start..n - k)
            .all(|i| same(i, i + k))
            .then(|| lines[..start + k].iter().map(|l| l.len()).sum::<usize>())
    })
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

    fn looping(block: &str, copies: usize) -> String {
        format!(
            "```python\ndef f():\n    # helpers:\n{}",
            block.repeat(copies)
        )
    }

    #[test]
    fn a_block_of_lines_repeated_ends_after_its_first_copy() {
        let block = "    # - a(x) -> int\n    # - b(x) -> int\n    # - c(x) -> int\n";
        let text = looping(block, 5);
        let end = end_of_loop(&text).unwrap();
        assert_eq!(&text[..end], looping(block, 1));
        // Four copies of three lines: the copies after the first cover nine lines, not twelve.
        assert_eq!(end_of_loop(&looping(block, 4)), None);
        // An unfinished last line is not compared yet.
        assert!(end_of_loop(&format!("{}    # - a(", looping(block, 5))).is_some());
    }

    #[test]
    fn one_line_must_repeat_thirteen_times_and_a_long_block_three() {
        let line = "    x += 1\n";
        assert_eq!(end_of_loop(&looping(line, 12)), None);
        assert_eq!(end_of_loop(&looping(line, 13)).map(|e| e > 0), Some(true));
        let long: String = (0..10).map(|i| format!("    y{i} = {i}\n")).collect();
        assert_eq!(end_of_loop(&looping(&long, 2)), None);
        assert_eq!(
            end_of_loop(&looping(&long, 3)),
            Some(looping(&long, 1).len())
        );
        // Trailing spaces do not hide a loop.
        let spaced = "    # - a\n    # - b   \n".repeat(7) + "    # - a\n";
        assert!(end_of_loop(&spaced).is_some());
    }

    #[test]
    fn code_that_only_looks_alike_is_not_a_loop() {
        let text: String = (0..40)
            .map(|i| format!("    if x == {i}:\n        return {i}\n"))
            .collect();
        assert_eq!(end_of_loop(&text), None);
        assert_eq!(end_of_loop("no newline at all"), None);
    }

    #[test]
    fn a_probes_answer_stops_before_its_fourth_call() {
        let begun = "```python\nimport pytest\nfrom m import f\n\n\ndef test_f_typical():\n    f(\"(1 + 2\", [\n        1,\n    ])\n\n\ndef test_f_edge_cases():\n    with pytest.raises(ValueError):\n        f(\"\")\n    # an empty list\n    f([])\n";
        assert_eq!(stop_after_probes(begun, 3), None);
        let fourth = format!("{begun}    with pytest.raises(ValueError):\n        f(None");
        assert_eq!(
            stop_after_probes(&fourth, 3).unwrap(),
            format!("{begun}```\n")
        );
        // A fourth call that opens a new test takes its `def` with it.
        let new_test = format!("{begun}\n\ndef test_f_more():\n    f(1)\n");
        assert_eq!(
            stop_after_probes(&new_test, 3).unwrap(),
            format!("{begun}\n\n```\n")
        );
        assert!(stop_after_probes(&new_test, 4).is_none());
    }
}

//! A check's output cut to the failures that matter, for a prompt. Pure.
//!
//! A failing suite's whole output did not fit the embedded model's context (issue 40: a
//! bug-fix prompt of 7,865 tokens against 8,192), and most of it is noise to the model: the
//! progress dots, the warnings, the passing tests. pytest's output is read by its section
//! rules: each failing test's section (`___ test_name ___` under `FAILURES` or `ERRORS`)
//! is kept whole, the first ones first, while they fit; then the short summary and the count
//! line. A section too long alone keeps its head (where the test is) and its tail (the `E`
//! lines and the `file:line` of the failure). Output of any other shape keeps its tail,
//! where compilers and tracebacks put the error.

use super::budget::head;

/// Lines of a long section's head kept when it is cut.
const SECTION_HEAD_LINES: usize = 6;

/// `output` in at most about `max` bytes (see the module doc).
pub(super) fn relevant(output: &str, max: usize) -> String {
    if output.len() <= max {
        return output.to_string();
    }
    match Pytest::read(output) {
        Some(pytest) => pytest.render(max),
        None => tail(output, max),
    }
}

/// How many tests pytest's count line in `output` says passed: `None` without that line
/// (a check of another shape, or a run that never got to count).
pub(super) fn passed_tests(output: &str) -> Option<u32> {
    let line = output.lines().rev().map(str::trim).find(|l| is_count(l))?;
    Some(
        (counts(line).split(", "))
            .filter_map(|part| part.strip_suffix(" passed"))
            .filter_map(|n| n.parse::<u32>().ok())
            .sum(),
    )
}

/// A pytest run's output in its parts.
#[derive(Debug, Default)]
struct Pytest<'a> {
    /// One per failing or erroring test: its header line and its lines.
    sections: Vec<(&'a str, Vec<&'a str>)>,
    /// `short test summary info` and the count line.
    summary: Vec<&'a str>,
}

impl<'a> Pytest<'a> {
    fn read(output: &'a str) -> Option<Pytest<'a>> {
        let mut pytest = Pytest::default();
        let mut area = Area::Other;
        for line in output.lines() {
            if let Some(title) = banner(line, '=') {
                area = match title {
                    t if t.starts_with("FAILURES") || t.starts_with("ERRORS") => Area::Failures,
                    t if t.starts_with("short test summary") => {
                        pytest.summary.push(line);
                        Area::Summary
                    }
                    t if is_count(t) => {
                        pytest.summary.push(line);
                        Area::Other
                    }
                    _ => Area::Other,
                };
                continue;
            }
            match area {
                Area::Failures => match banner(line, '_') {
                    Some(_) => pytest.sections.push((line, Vec::new())),
                    None => {
                        if let Some((_, lines)) = pytest.sections.last_mut() {
                            lines.push(line);
                        }
                    }
                },
                Area::Summary => pytest.summary.push(line),
                Area::Other if is_count(line.trim()) => pytest.summary.push(line),
                // The sandbox keeps an output's tail: its FAILURES banner may be cut off.
                Area::Other if banner(line, '_').is_some() => {
                    pytest.sections.push((line, Vec::new()));
                    area = Area::Failures;
                }
                Area::Other => {}
            }
        }
        (!pytest.sections.is_empty() || !pytest.summary.is_empty()).then_some(pytest)
    }

    fn render(&self, max: usize) -> String {
        let summary = tail(&self.summary.join("\n"), max / 4);
        let room = max.saturating_sub(summary.len() + 80);
        let mut out = String::new();
        let mut left_out = Vec::new();
        for (i, (header, lines)) in self.sections.iter().enumerate() {
            let whole = format!("{header}\n{}\n", lines.join("\n"));
            if out.len() + whole.len() <= room {
                out.push_str(&whole);
            } else if i == 0 {
                out.push_str(&cut_section(header, lines, room));
            } else {
                left_out.push(header.trim_matches(|c: char| c == '_' || c == ' '));
            }
        }
        if !left_out.is_empty() {
            out.push_str(&format!(
                "[... the sections of {} more failing test(s) not shown: {}]\n",
                left_out.len(),
                left_out.join(", ")
            ));
        }
        out.push_str(&summary);
        out
    }
}

#[derive(Clone, Copy)]
enum Area {
    Failures,
    Summary,
    Other,
}

/// The title of a pytest banner line (`==== FAILURES ====`, `____ test_x ____`).
fn banner(line: &str, fill: char) -> Option<&str> {
    let line = line.trim();
    let twice: String = [fill; 3].iter().collect();
    if !(line.starts_with(&twice) && line.ends_with(&twice)) {
        return None;
    }
    let title = line.trim_matches(fill).trim();
    (!title.is_empty()).then_some(title)
}

/// pytest's last line: `1 failed, 2 passed in 0.12s`, or without its timing, as a check
/// keeps it ([`crate::sandbox::TestRun::stable_output`]).
fn is_count(text: &str) -> bool {
    let words = [
        "failed",
        "passed",
        "error",
        "errors",
        "skipped",
        "xfailed",
        "xpassed",
        "warning",
        "warnings",
        "deselected",
    ];
    let counts = counts(text);
    !counts.is_empty()
        && counts.split(", ").all(|part| {
            let mut words_of = part.split(' ');
            let number = words_of.next().is_some_and(|n| n.parse::<u32>().is_ok());
            number
                && words_of.next().is_some_and(|w| words.contains(&w))
                && words_of.next().is_none()
        })
}

/// The counts of a count line, without its frame and its timing (`1 failed, 2 passed`).
fn counts(line: &str) -> &str {
    // `-rA` frames it in `=`, and the timing's removal takes the closing ones with it.
    let line = line.trim_matches(|c: char| c == '=' || c.is_whitespace());
    line.split(" in ").next().unwrap_or_default()
}

/// A section too long for `room`: its captured output goes first (pytest prints it after
/// the traceback), then the traceback keeps its head and as much of its tail as fits.
fn cut_section(header: &str, lines: &[&str], room: usize) -> String {
    let end = lines
        .iter()
        .position(|l| l.starts_with('-') && l.contains(" Captured "))
        .unwrap_or(lines.len());
    let (trace, captured) = lines.split_at(end);
    let hidden = captured.iter().filter(|l| !l.starts_with("---")).count();
    let note = match hidden {
        0 if captured.is_empty() => String::new(),
        n => format!("[... {n} line(s) of captured output not shown]\n"),
    };
    let whole = format!("{header}\n{}\n{note}", trace.join("\n"));
    if whole.len() <= room {
        return whole;
    }
    let head_part = trace[..trace.len().min(SECTION_HEAD_LINES)].join("\n");
    let first = head(&format!("{header}\n{head_part}\n"), room / 3);
    let rest = &trace[trace.len().min(SECTION_HEAD_LINES)..];
    let last = tail(
        &rest.join("\n"),
        room.saturating_sub(first.len() + note.len() + 40),
    );
    format!("{first}[... cut ...]\n{last}\n{note}")
}

/// The last lines of `text` in at most `max` bytes, whole lines only where possible.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let from = text[start..].find('\n').map_or(start, |i| start + i + 1);
    format!("[... cut ...]\n{}", &text[from..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pytest_output(passing_noise: usize, failing: &[(&str, usize)]) -> String {
        let mut out = String::from("============ test session starts ============\n");
        out.push_str(&".".repeat(passing_noise));
        out.push_str("F  [100%]\n");
        out.push_str("================= FAILURES =================\n");
        for (name, lines) in failing {
            out.push_str(&format!("_______________ {name} _______________\n\n"));
            out.push_str(&format!("    def {name}():\n"));
            for i in 0..*lines {
                out.push_str(&format!(
                    "        x{i} = compute({i})  # a line of the test\n"
                ));
            }
            out.push_str(&format!(
                ">       assert slug('A B') == 'a-b'\nE       AssertionError: {name}\n\ntests/test_text.py:7: AssertionError\n"
            ));
        }
        out.push_str("========== warnings summary ==========\n");
        out.push_str(&"DeprecationWarning: old thing\n".repeat(50));
        out.push_str("======= short test summary info =======\n");
        for (name, _) in failing {
            out.push_str(&format!(
                "FAILED tests/test_text.py::{name} - AssertionError\n"
            ));
        }
        out.push_str(&format!("{} failed, 300 passed in 1.20s\n", failing.len()));
        out
    }

    #[test]
    fn passed_tests_are_read_from_the_count_line_with_or_without_its_timing() {
        assert_eq!(
            passed_tests("..F\nFAILED x\n3 failed, 274 passed"),
            Some(274)
        );
        assert_eq!(passed_tests("== 1 failed, 2 passed in 0.03s =="), Some(2));
        assert_eq!(passed_tests("ERROR collecting x\n1 error"), Some(0));
        assert_eq!(passed_tests("Traceback (most recent call last):"), None);
    }

    #[test]
    fn the_count_line_is_known_with_or_without_its_timing() {
        for line in [
            "1 failed, 2 passed in 0.12s",
            "1 failed, 2 passed",
            "===== 3 passed, 2 warnings in 1.01s =====",
            "===== 1 error",
        ] {
            assert!(is_count(line), "{line}");
        }
        for line in [
            "12 passengers boarded",
            "E   assert 1 == 2",
            "2 failed to start",
        ] {
            assert!(!is_count(line), "{line}");
        }
    }

    #[test]
    fn short_output_is_kept_whole() {
        let out = pytest_output(3, &[("test_a", 1)]);
        assert_eq!(relevant(&out, 100_000), out);
    }

    #[test]
    fn failing_sections_come_first_and_the_noise_goes() {
        let out = pytest_output(5_000, &[("test_slug", 3), ("test_other", 3)]);
        let cut = relevant(&out, 2_000);
        assert!(cut.len() <= 2_000, "{}", cut.len());
        assert!(cut.contains("_ test_slug _") && cut.contains("E       AssertionError: test_slug"));
        assert!(cut.contains("tests/test_text.py:7: AssertionError"));
        assert!(cut.contains("_ test_other _"), "{cut}");
        assert!(cut.contains("FAILED tests/test_text.py::test_slug"));
        assert!(cut.contains("2 failed, 300 passed in 1.20s"));
        assert!(!cut.contains("....."), "the progress dots go");
        assert!(!cut.contains("DeprecationWarning"), "the warnings go");
    }

    #[test]
    fn sections_that_do_not_fit_are_named_and_a_long_first_one_keeps_its_error() {
        let out = pytest_output(10, &[("test_long", 400), ("test_b", 2), ("test_c", 2)]);
        let cut = relevant(&out, 3_000);
        assert!(cut.len() <= 3_200, "{}", cut.len());
        assert!(cut.contains("def test_long():"), "its head: {cut}");
        assert!(
            cut.contains("E       AssertionError: test_long"),
            "its tail: {cut}"
        );
        assert!(
            cut.contains("2 more failing test(s) not shown: test_b, test_c"),
            "{cut}"
        );
        assert!(cut.contains("3 failed, 300 passed"));
    }

    #[test]
    fn other_output_keeps_its_tail() {
        let out = format!(
            "{}error[E0425]: cannot find value `x`\n",
            "noise line\n".repeat(500)
        );
        let cut = relevant(&out, 200);
        assert!(
            cut.len() <= 220 && cut.ends_with("cannot find value `x`\n"),
            "{cut}"
        );
    }

    #[test]
    fn captured_output_goes_before_the_error_lines() {
        let mut out = String::from(
            "================= FAILURES =================\n_____ test_join _____\n\n    def test_join():\n>       assert join('a b') == 'a-b'\nE       AssertionError: got 'a b'\n\ntests/test_text.py:9: AssertionError\n----------------------------- Captured stdout call -----------------------------\n",
        );
        out.push_str(&"noise printed by the test\n".repeat(2_000));
        out.push_str("======= short test summary info =======\nFAILED tests/test_text.py::test_join - AssertionError\n1 failed, 2 passed in 0.10s\n");
        let cut = relevant(&out, 1_500);
        assert!(cut.contains("E       AssertionError: got 'a b'"), "{cut}");
        assert!(cut.contains("tests/test_text.py:9: AssertionError"));
        assert!(
            cut.contains("2000 line(s) of captured output not shown"),
            "{cut}"
        );
        assert!(cut.contains("1 failed, 2 passed"));
    }

    #[test]
    fn sections_are_found_in_a_tail_without_the_failures_banner() {
        let out = pytest_output(10, &[("test_a", 300), ("test_b", 2)]);
        let tail_only = &out[out.find("_ test_b _").unwrap() - 20..];
        let tail_only = format!("{}\n{}", "x".repeat(3_000), tail_only);
        let cut = relevant(&tail_only, 2_000);
        assert!(
            cut.contains("_ test_b _") && cut.contains("AssertionError: test_b"),
            "{cut}"
        );
        assert!(!cut.contains("xxxx"), "{cut}");
    }
}

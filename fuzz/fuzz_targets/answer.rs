//! A model's answer applied to a file: `edit::parse` turns the answer into edits, `edit::hunk`
//! locates and applies replacements, `edit::apply` keeps what is meant for the target. Models
//! write anything, so none of it may panic; beyond that the fuzzer checks what callers rely on:
//!
//! - parsing is deterministic, and an answer with no usable edit says why;
//! - `code_for_target` fails exactly when an edit for the target does not apply or none is
//!   meant for it, so a failed answer never reaches the file (the caller keeps the content);
//! - applying no hunk changes nothing, and a hunk found exactly changes only its own lines,
//!   every other byte of the file stays as it was.
//!
//! Input: the file's current content, a NUL byte, the answer (no NUL: an empty file).

#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use zerorepo::edit::code_for_target;
use zerorepo::edit::hunk::{Hunk, Pass, apply_all};
use zerorepo::edit::parse::{EditKind, parse_answer};

const TARGET: &str = "src/pkg/m.py";

/// The rule of `edit::apply::same_file` (private there): a path names the target when one
/// ends with the other at a `/`.
fn names_target(named: &str) -> bool {
    named == TARGET
        || TARGET.ends_with(&format!("/{named}"))
        || named.ends_with(&format!("/{TARGET}"))
}

fuzz_target!(|data: &[u8]| {
    let (current, answer) = match data.iter().position(|&b| b == 0) {
        Some(cut) => (
            String::from_utf8_lossy(&data[..cut]),
            String::from_utf8_lossy(&data[cut + 1..]),
        ),
        None => (Cow::Borrowed(""), String::from_utf8_lossy(data)),
    };

    let parsed = parse_answer(&answer);
    assert_eq!(parsed, parse_answer(&answer), "parsing is deterministic");
    if parsed.edits.is_empty() {
        assert!(!parsed.diagnostics.is_empty(), "no edit and no reason");
    }

    // Replay what code_for_target should do with the edits meant for the target.
    let mut text = current.to_string();
    let (mut ours, mut failed) = (0, false);
    for edit in &parsed.edits {
        if !edit.path.as_deref().is_none_or(names_target) {
            continue;
        }
        ours += 1;
        if let EditKind::Hunks(hunks) = &edit.kind {
            assert!(!hunks.is_empty(), "an empty hunk list is not an edit");
            match apply_all(&text, hunks) {
                Ok((new, passes)) => {
                    assert_eq!(passes.len(), hunks.len());
                    text = new;
                }
                Err(e) => {
                    let _ = e.to_string();
                    failed = true;
                    break;
                }
            }
        }
    }
    match code_for_target(&answer, TARGET, &current) {
        Ok(code) => {
            assert!(
                ours > 0 && !failed,
                "used an answer that should fail: {code:?}"
            );
        }
        Err(why) => assert!(
            failed || ours == 0,
            "refused an answer whose edits all apply: {why}"
        ),
    }

    // No hunk: nothing changes.
    let (same, passes) = apply_all(&current, &[]).expect("no hunk always applies");
    assert!(passes.is_empty());
    assert_eq!(same, current, "applying no hunk changed the file");

    // One line that occurs exactly once, replaced by the answer's first lines: every other
    // line keeps its bytes and its ending (LF or CRLF); the new lines take the ending of the
    // line they replace. Only a file without a final newline keeps lacking one.
    let lines: Vec<(&str, &str)> = current
        .split_inclusive('\n')
        .map(
            |l| match l.strip_suffix("\r\n").or_else(|| l.strip_suffix('\n')) {
                Some(content) => (content, &l[content.len()..]),
                None => (l, ""),
            },
        )
        .collect();
    if lines.is_empty() {
        return;
    }
    let unique = |i: &usize| lines.iter().filter(|l| l.0 == lines[*i].0).count() == 1;
    let start = answer.len() % lines.len();
    let Some(at) = (start..lines.len()).chain(0..start).find(unique) else {
        return;
    };
    let new: Vec<&str> = answer.lines().take(2).collect();
    let hunk = Hunk {
        id: 1,
        file: TARGET.into(),
        start_hint: None,
        old: vec![lines[at].0.to_string()],
        new: new.iter().map(|l| l.to_string()).collect(),
    };
    let (out, passes) = apply_all(&current, std::slice::from_ref(&hunk))
        .unwrap_or_else(|e| panic!("a line found once did not apply: {e}"));
    assert_eq!(passes, [Pass::Exact]);
    let ending = if lines[at].1 == "\r\n" { "\r\n" } else { "\n" };
    let mut expected: Vec<(&str, &str)> = lines[..at].to_vec();
    expected.extend(new.iter().map(|l| (*l, ending)));
    expected.extend(&lines[at + 1..]);
    let mut want: String = expected.iter().map(|(l, e)| format!("{l}{e}")).collect();
    if !current.ends_with('\n')
        && let Some((last, ending)) = expected.last()
    {
        want.truncate(want.len() - ending.len());
        debug_assert!(want.ends_with(last));
    }
    assert_eq!(out, want, "replacing line {} changed other bytes", at + 1);
});

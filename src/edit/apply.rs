//! From an answer to the new content of one target file: parse, keep the edits meant for the
//! target, apply hunks atomically, and explain anything that could not be used.
//!
//! Edits that name another file are never applied (a node may only change its own files);
//! they are reported. The result is code to merge into the target (`merge::merge_python`).

use super::hunk::{ApplyError, apply_all};
use super::parse::{EditKind, parse_answer};

/// Why an answer gives the target no code. The text is the diagnostic the next prompt quotes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// An edit for the target did not apply; the text quotes the nearest lines.
    #[error(transparent)]
    Hunk(#[from] ApplyError),
    /// No code for the target, and these notes say why (edits for other files, what parsing
    /// could not read).
    #[error("{}", .0.join("; "))]
    NothingForTarget(Vec<String>),
    #[error("the answer contains no code")]
    NoCode,
}

/// The code an answer contributes to `target` whose current text is `current`. `Err` holds the
/// diagnostic the next prompt quotes.
pub fn code_for_target(answer: &str, target: &str, current: &str) -> Result<String, AnswerError> {
    let parsed = parse_answer(answer);
    let mut notes = parsed.diagnostics.clone();
    let mut text = current.to_string();
    let mut fragments = Vec::new();
    let mut hunks_applied = false;
    for edit in parsed.edits {
        let ours = edit.path.as_deref().is_none_or(|p| same_file(p, target));
        if !ours {
            notes.push(format!(
                "ignored an edit for {} (this step may only change {target})",
                edit.path.unwrap_or_default()
            ));
            continue;
        }
        match edit.kind {
            EditKind::Code(code) => fragments.push(code),
            EditKind::Hunks(hunks) => {
                let (new_text, _) = apply_all(&text, &hunks)?;
                text = new_text;
                hunks_applied = true;
            }
        }
    }
    if hunks_applied {
        fragments.insert(0, text);
    }
    if fragments.is_empty() {
        return Err(if notes.is_empty() {
            AnswerError::NoCode
        } else {
            AnswerError::NothingForTarget(notes)
        });
    }
    for note in notes {
        tracing::debug!(target, "answer: {note}");
    }
    Ok(fragments.join("\n\n\n"))
}

/// `steps.py` or `chain/steps.py` name `src/chain/steps.py`: a model names a file as briefly
/// as it can, and an answer's path is matched to the file it was asked for this way wherever
/// answers are applied.
pub fn same_file(named: &str, target: &str) -> bool {
    named == target
        || target.ends_with(&format!("/{named}"))
        || named.ends_with(&format!("/{target}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next prompt quotes these texts; they are the ones the function formatted by hand.
    #[test]
    fn answer_errors_keep_their_texts() {
        assert_eq!(
            AnswerError::NoCode.to_string(),
            "the answer contains no code"
        );
        let two_foreign = "```python a.py\nx = 1\n```\n```python b.py\ny = 2\n```";
        assert_eq!(
            code_for_target(two_foreign, "src/m.py", "")
                .unwrap_err()
                .to_string(),
            "ignored an edit for a.py (this step may only change src/m.py); \
             ignored an edit for b.py (this step may only change src/m.py)"
        );
    }

    #[test]
    fn search_replace_edits_the_current_text() {
        let current = "def f(x):\n    return x\n";
        let answer = "```python\n<<<<<<< SEARCH\n    return x\n=======\n    return x + 1\n>>>>>>> REPLACE\n```";
        assert_eq!(
            code_for_target(answer, "src/m.py", current).unwrap(),
            "def f(x):\n    return x + 1\n"
        );
    }

    #[test]
    fn edits_for_other_files_are_never_applied() {
        let answer = "# tests/test_m.py\n```python\ndef test_x():\n    assert True\n```\n# ../../etc/passwd.py\n```python\nX = 1\n```";
        let err = code_for_target(answer, "src/m.py", "")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ignored an edit for tests/test_m.py")
                && err.contains("ignored an edit for ../../etc/passwd.py"),
            "{err}"
        );
        let ok = code_for_target(
            "```python src/m.py\ndef f():\n    pass\n```",
            "src/m.py",
            "",
        )
        .unwrap();
        assert_eq!(ok, "def f():\n    pass");
    }

    #[test]
    fn a_hunk_that_does_not_apply_quotes_the_nearest_lines() {
        let answer = "<<<<<<< SEARCH\nnot in the file at all\n=======\nx\n>>>>>>> REPLACE";
        let err = code_for_target(answer, "m.py", "def f():\n    return 1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("nearest"), "{err}");
    }
}

#[cfg(test)]
mod fuzz {
    //! Adversarial model output, generated from fragments with a fixed-seed generator: parsing
    //! and applying never panic, and nothing meant for another file reaches the target.

    use super::*;

    const FRAGMENTS: &[&str] = &[
        "```",
        "```python",
        "```diff",
        "```python ../../etc/passwd.py",
        "```src/other.py",
        "# ../evil.py\n",
        "<<<<<<< SEARCH",
        "=======",
        ">>>>>>> REPLACE",
        "--- a/x.py",
        "+++ b//etc/x.py",
        "@@ -1,2 +1,2 @@",
        "@@ garbage @@",
        "def f():",
        "    return 1",
        "-old",
        "+new",
        " context",
        "\r\n",
        "\n",
        "\u{2019}\u{201C}\u{00A0}",
        "…",
        "\t",
        "",
        "import os",
        "from x import y",
        "Here is the code:",
        "**src/m.py**",
        "```py",
        "\\",
        "\"\"\"",
        "'''",
    ];

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 as usize
        }
    }

    #[test]
    fn adversarial_answers_never_panic_and_never_edit_other_files() {
        let mut rng = Rng(0x5eed_1234_abcd_9876);
        let current = "def f():\n    return 1\n\n\ndef g():\n    return 2\n";
        for _ in 0..3000 {
            let pieces = 1 + rng.next() % 24;
            let answer: String = (0..pieces)
                .map(|_| FRAGMENTS[rng.next() % FRAGMENTS.len()])
                .collect::<Vec<_>>()
                .join(if rng.next().is_multiple_of(2) {
                    "\n"
                } else {
                    ""
                });
            let parsed = parse_answer(&answer);
            if let Ok(code) = code_for_target(&answer, "src/m.py", current) {
                // Whatever came back came from edits that name the target or no file.
                let foreign_only = parsed
                    .edits
                    .iter()
                    .all(|e| e.path.as_deref().is_some_and(|p| !same_file(p, "src/m.py")));
                assert!(
                    !foreign_only,
                    "applied edits meant for other files: {answer:?} -> {code:?}"
                );
            }
        }
    }
}

//! Hunks and their fuzzy application.
//!
//! A hunk replaces `old` lines with `new` lines. Models quote the old lines imperfectly, so a
//! hunk is located in passes, the first that finds exactly one place wins: exact lines, then
//! ignoring trailing whitespace, then ignoring leading and trailing whitespace, then with
//! Unicode punctuation (curly quotes, dashes, non-breaking spaces) normalised, then by line
//! similarity >= 0.9 over windows of the same length, unless comparing would cost more than
//! `SIMILARITY_BUDGET` (very long lines). All hunks of a file apply to a copy; the file
//! changes only if every hunk applied (atomic per file), and lines no hunk touches keep their
//! bytes and their ending. A hunk that does not apply reports the nearest candidate lines, for
//! the fix prompt to quote.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub id: usize,
    pub file: String,
    /// 1-based line where the model said the hunk starts (diffs), if it said.
    pub start_hint: Option<usize>,
    pub old: Vec<String>,
    pub new: Vec<String>,
}

/// How a hunk was located.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Exact,
    TrailingWhitespace,
    EdgeWhitespace,
    Punctuation,
    Similar,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error(
        "hunk {id} for {file}: its {lines} old line(s) were not found; nearest (line {nearest_line}):\n{nearest}"
    )]
    NotFound {
        id: usize,
        file: String,
        lines: usize,
        nearest_line: usize,
        nearest: String,
    },
    #[error("hunk {id} for {file}: its old lines match {count} places; add context to choose one")]
    Ambiguous {
        id: usize,
        file: String,
        count: usize,
    },
    #[error(
        "hunk {id} for {file}: its {lines} old line(s) were not found as written, and are too \
         long to look for similar lines; quote them exactly"
    )]
    TooLongToCompare {
        id: usize,
        file: String,
        lines: usize,
    },
}

/// The most character pairs the similarity pass may compare for one hunk: about a second (at
/// 2.6 ns a pair, measured), far above what hunks of ordinary code cost (a 30-line hunk in a
/// 2,000-line file of 40-character lines: 0.1 billion). Edit distance is quadratic in line
/// length: a near miss on one 100,000-character line (a data table, an embedded blob) took
/// half a minute, and every retry of the answer paid it again. Past the budget the hunk is
/// refused with a reason instead.
const SIMILARITY_BUDGET: u64 = 500_000_000;

type Normalise = fn(&str) -> String;

fn passes() -> [(Pass, Normalise); 4] {
    [
        (Pass::Exact, |s| s.to_string()),
        (Pass::TrailingWhitespace, |s| s.trim_end().to_string()),
        (Pass::EdgeWhitespace, |s| s.trim().to_string()),
        (Pass::Punctuation, |s| normalise_punctuation(s.trim())),
    ]
}

fn normalise_punctuation(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2007}' | '\u{202F}' => ' ',
            '\u{2026}' => '.',
            c => c,
        })
        .collect()
}

/// Applies all hunks to `text`, in order; returns the new text and the pass each hunk needed.
pub fn apply_all(text: &str, hunks: &[Hunk]) -> Result<(String, Vec<Pass>), ApplyError> {
    let trailing_newline = text.ends_with('\n') || text.is_empty();
    // Hunks match lines without their ending; each line remembers whether it ended in CRLF,
    // so the lines no hunk touches keep theirs byte for byte, and new lines take the ending
    // of the lines they replace (or of their neighbour, when inserted).
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut crlf: Vec<bool> = text
        .split_inclusive('\n')
        .map(|l| l.ends_with("\r\n"))
        .collect();
    let mut used = Vec::new();
    for hunk in hunks {
        let (at, pass) = locate(&lines, hunk)?;
        let ending = crlf
            .get(at)
            .or_else(|| crlf.get(at.wrapping_sub(1)))
            .copied()
            .unwrap_or(false);
        lines.splice(at..at + hunk.old.len(), hunk.new.iter().cloned());
        crlf.splice(
            at..at + hunk.old.len(),
            std::iter::repeat_n(ending, hunk.new.len()),
        );
        used.push(pass);
    }
    let mut out = String::with_capacity(text.len());
    for (i, (line, crlf)) in lines.iter().zip(&crlf).enumerate() {
        out.push_str(line);
        if i + 1 < lines.len() || trailing_newline {
            out.push_str(if *crlf { "\r\n" } else { "\n" });
        }
    }
    Ok((out, used))
}

/// Where the hunk's old lines start in `lines`, and the pass that found them.
fn locate(lines: &[String], hunk: &Hunk) -> Result<(usize, Pass), ApplyError> {
    if hunk.old.is_empty() {
        // Pure insertion: at the hinted line, else at the end.
        let at = hunk
            .start_hint
            .map_or(lines.len(), |l| l.saturating_sub(1).min(lines.len()));
        return Ok((at, Pass::Exact));
    }
    match locate_normalised(lines, hunk)? {
        Some(found) => Ok(found),
        None => locate_similar(lines, hunk),
    }
}

/// The first normalising pass that finds the old lines; `None` when none does. Several
/// places are told apart by the model's line number, else the hunk is ambiguous.
fn locate_normalised(lines: &[String], hunk: &Hunk) -> Result<Option<(usize, Pass)>, ApplyError> {
    for (pass, normalise) in passes() {
        let want: Vec<String> = hunk.old.iter().map(|l| normalise(l)).collect();
        let found: Vec<usize> = windows(lines, want.len())
            .filter(|&at| (0..want.len()).all(|i| normalise(&lines[at + i]) == want[i]))
            .collect();
        match found.len() {
            0 => continue,
            1 => return Ok(Some((found[0], pass))),
            n => {
                // The model's line number, when close to one of the matches, chooses it.
                if let Some(hint) = hunk.start_hint
                    && let Some(&at) = found
                        .iter()
                        .min_by_key(|&&at| at.abs_diff(hint.saturating_sub(1)))
                {
                    return Ok(Some((at, pass)));
                }
                return Err(ApplyError::Ambiguous {
                    id: hunk.id,
                    file: hunk.file.clone(),
                    count: n,
                });
            }
        }
    }
    Ok(None)
}

/// The last pass: the one window of the old lines' length whose similarity is best and at
/// least 0.9. When there is none, the error quotes the nearest window for the fix prompt.
fn locate_similar(lines: &[String], hunk: &Hunk) -> Result<(usize, Pass), ApplyError> {
    if similarity_cost(lines, &hunk.old) > SIMILARITY_BUDGET {
        return Err(ApplyError::TooLongToCompare {
            id: hunk.id,
            file: hunk.file.clone(),
            lines: hunk.old.len(),
        });
    }
    let scored: Vec<(usize, f64)> = windows(lines, hunk.old.len())
        .map(|at| {
            (
                at,
                window_similarity(&lines[at..at + hunk.old.len()], &hunk.old),
            )
        })
        .collect();
    let best = best_window(&scored);
    if let Some((at, score)) = best {
        let close: Vec<&(usize, f64)> = scored
            .iter()
            .filter(|(_, s)| *s >= 0.9 && (score - *s).abs() < 1e-9)
            .collect();
        if score >= 0.9 && close.len() == 1 {
            return Ok((at, Pass::Similar));
        }
    }
    let (nearest_line, nearest) = best.map_or((1, String::new()), |(at, _)| {
        (
            at + 1,
            lines[at..(at + hunk.old.len()).min(lines.len())].join("\n"),
        )
    });
    Err(ApplyError::NotFound {
        id: hunk.id,
        file: hunk.file.clone(),
        lines: hunk.old.len(),
        nearest_line,
        nearest,
    })
}

/// The highest-scoring window; the first of equal ones.
fn best_window(scored: &[(usize, f64)]) -> Option<(usize, f64)> {
    scored
        .iter()
        .cloned()
        .fold(None::<(usize, f64)>, |best, x| match best {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        })
}

fn windows(lines: &[String], len: usize) -> std::ops::Range<usize> {
    let count = if len == 0 || len > lines.len() {
        0
    } else {
        lines.len() - len + 1
    };
    0..count
}

/// The character pairs the similarity pass compares: for every window, the product of the
/// lengths of each line pair. Old line `i` meets file lines `i..i + windows`, so prefix sums
/// give it in time linear in the lines.
fn similarity_cost(lines: &[String], old: &[String]) -> u64 {
    let count = windows(lines, old.len()).len();
    if count == 0 {
        return 0;
    }
    let mut prefix = vec![0u64];
    for line in lines {
        let total = prefix.last().copied().unwrap_or(0);
        prefix.push(total.saturating_add(line.trim().chars().count() as u64));
    }
    old.iter()
        .enumerate()
        .map(|(i, line)| {
            let met = prefix[i + count] - prefix[i];
            (line.trim().chars().count() as u64).saturating_mul(met)
        })
        .fold(0u64, u64::saturating_add)
}

/// Mean line similarity (1 - normalised edit distance) of two equally long line lists.
fn window_similarity(a: &[String], b: &[String]) -> f64 {
    let total: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| similarity(x.trim(), y.trim()))
        .sum();
    total / b.len().max(1) as f64
}

fn similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            current[j + 1] = (previous[j] + usize::from(ca != cb))
                .min(previous[j + 1] + 1)
                .min(current[j] + 1);
        }
        previous = current;
    }
    1.0 - previous[b.len()] as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old: &[&str], new: &[&str]) -> Hunk {
        Hunk {
            id: 1,
            file: "m.py".into(),
            start_hint: None,
            old: old.iter().map(|s| s.to_string()).collect(),
            new: new.iter().map(|s| s.to_string()).collect(),
        }
    }

    const TEXT: &str =
        "def f(x):\n    y = x + 1  \n    return y\n\n\ndef g():\n    return 'it’s'\n";

    #[test]
    fn each_pass_finds_what_the_previous_cannot() {
        let cases = [
            (vec!["    return y"], Pass::Exact),
            (vec!["    y = x + 1"], Pass::TrailingWhitespace),
            (vec!["y = x + 1", "return y"], Pass::EdgeWhitespace),
            (vec!["    return 'it's'"], Pass::Punctuation),
            (vec!["    y = x + 2", "    return y"], Pass::Similar),
        ];
        for (old, expected) in cases {
            let (_, passes) = apply_all(TEXT, &[hunk(&old, &["    pass"])]).unwrap();
            assert_eq!(passes, vec![expected], "{old:?}");
        }
    }

    #[test]
    fn replacement_keeps_the_rest_byte_for_byte() {
        let (out, _) = apply_all(TEXT, &[hunk(&["    return y"], &["    return y * 2"])]).unwrap();
        assert_eq!(out, TEXT.replace("    return y\n", "    return y * 2\n"));
    }

    #[test]
    fn a_missing_hunk_names_the_nearest_lines_and_changes_nothing() {
        let err = apply_all(
            TEXT,
            &[
                hunk(&["    return y"], &["x"]),
                hunk(&["totally different line here"], &["x"]),
            ],
        )
        .unwrap_err();
        let ApplyError::NotFound { nearest_line, .. } = &err else {
            panic!("{err}")
        };
        assert!(*nearest_line >= 1);
        assert!(err.to_string().contains("were not found; nearest"), "{err}");
    }

    /// Found by fuzzing (fuzz/fuzz_targets/answer.rs): lines were joined with LF whatever
    /// they ended with, so a hunk applied to a CRLF file rewrote every line of it.
    #[test]
    fn lines_no_hunk_touches_keep_their_crlf_endings() {
        let text = "def f():\r\n    return 1\r\n\r\nX = 2\n";
        assert_eq!(apply_all(text, &[]).unwrap().0, text);
        let (out, passes) = apply_all(
            text,
            &[hunk(&["    return 1"], &["    return 3", "    # three"])],
        )
        .unwrap();
        assert_eq!(passes, [Pass::Exact]);
        assert_eq!(
            out,
            "def f():\r\n    return 3\r\n    # three\r\n\r\nX = 2\n"
        );
    }

    /// Found beside the CRLF case, by the same invariant (no hunk, no change): a file holding
    /// one empty line lost its newline, as did a line replaced by an empty one.
    #[test]
    fn a_file_of_one_empty_line_keeps_its_newline() {
        assert_eq!(apply_all("\n", &[]).unwrap().0, "\n");
        assert_eq!(apply_all("a\n", &[hunk(&["a"], &[""])]).unwrap().0, "\n");
        assert_eq!(apply_all("a\n", &[hunk(&["a"], &[])]).unwrap().0, "");
        assert_eq!(
            apply_all("a", &[hunk(&["a"], &["b", "c"])]).unwrap().0,
            "b\nc"
        );
    }

    /// Found by profiling the answer fuzz target, slow because of it: a hunk that
    /// nearly quotes one 30,000-character line cost the similarity pass 900 million character
    /// pairs, over two seconds for one attempt. Past the budget it is refused at once.
    #[test]
    fn a_near_miss_on_a_very_long_line_is_refused_before_comparing() {
        let text = format!("x = '{}'\ny = 1\n", "a".repeat(30_000));
        let old = format!("x = '{}'", "b".repeat(30_000));
        let err = apply_all(&text, &[hunk(&[&old], &["x = 1"])]).unwrap_err();
        assert!(
            matches!(err, ApplyError::TooLongToCompare { lines: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("quote them exactly"), "{err}");
        // Exact quotes of long lines still apply; so do near misses of ordinary ones.
        let exact = format!("x = '{}'", "a".repeat(30_000));
        assert!(apply_all(&text, &[hunk(&[&exact], &["x = 1"])]).is_ok());
        assert_eq!(
            apply_all(
                TEXT,
                &[hunk(&["    y = x + 2", "    return y"], &["    pass"])]
            )
            .unwrap()
            .1,
            [Pass::Similar]
        );
    }

    #[test]
    fn the_similarity_cost_is_the_sum_of_length_products_over_windows() {
        let lines: Vec<String> = ["ab", " c ", "", "defg"].map(String::from).to_vec();
        let old: Vec<String> = ["x", "yz"].map(String::from).to_vec();
        let brute: u64 = windows(&lines, old.len())
            .flat_map(|at| (0..old.len()).map(move |i| (at, i)))
            .map(|(at, i)| (lines[at + i].trim().len() * old[i].trim().len()) as u64)
            .sum();
        assert_eq!(similarity_cost(&lines, &old), brute);
        assert_eq!(brute, 13, "windows at 0, 1, 2: (2 + 2) + (1 + 0) + (0 + 8)");
        assert_eq!(similarity_cost(&lines[..1], &old), 0);
    }

    #[test]
    fn ambiguous_hunks_are_refused_unless_a_line_hint_chooses() {
        let text = "a\nx\nb\nx\n";
        let err = apply_all(text, &[hunk(&["x"], &["y"])]).unwrap_err();
        assert!(matches!(err, ApplyError::Ambiguous { count: 2, .. }));
        let hinted = Hunk {
            start_hint: Some(4),
            ..hunk(&["x"], &["y"])
        };
        assert_eq!(apply_all(text, &[hinted]).unwrap().0, "a\nx\nb\ny\n");
    }
}

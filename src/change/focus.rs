//! A file as a prompt shows it, within a byte budget. Pure.
//!
//! Whole when it fits. Otherwise a Python file keeps what the task touches: its header (the
//! imports), the top-level definitions the focus names (the task's words, the functions a
//! traceback passes through, the lines an error points at), those they call, and their
//! neighbours, verbatim so
//! that an answer can quote them; every other definition is one comment line with its
//! signature and the first line of its docstring, in place, so the model still sees what the
//! module has and where. With nothing named, the end of the module is shown, where a new
//! definition goes. Other files (and Python that does not parse) keep the lines around the
//! mentions instead. Hidden lines are always said to be hidden, with their numbers.

use std::collections::BTreeSet;

use crate::python::words;
use crate::symbols::outline::{Located, locate_all};

/// What a prompt is about, to choose the parts of a file it shows.
#[derive(Debug, Clone, Default)]
pub(super) struct Focus {
    /// Identifiers of the task, the request or the error.
    pub words: BTreeSet<String>,
    /// 1-based lines an error points at, in this file.
    pub lines: BTreeSet<usize>,
}

impl Focus {
    /// The identifiers of `text` and the lines it points at in `path`.
    pub(super) fn of(text: &str, path: &str) -> Focus {
        let words = words(text)
            .filter(|w| w.len() > 1 && !w.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string)
            .collect();
        Focus {
            words,
            lines: lines_in(text, path),
        }
    }
}

/// A file as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shown {
    pub text: String,
    /// Every line is there.
    pub whole: bool,
}

/// Lines around a mention kept in a file shown by lines.
const AROUND: usize = 8;
/// Definitions listed around each shown one when the whole list would not fit.
const OUTLINE_NEAR: usize = 5;

/// `text` of `path` in at most about `max` bytes (see the module doc).
pub(super) fn show(path: &str, text: &str, focus: &Focus, max: usize) -> Shown {
    if text.len() <= max {
        return Shown {
            text: text.to_string(),
            whole: true,
        };
    }
    let lines: Vec<&str> = text.lines().collect();
    let by_symbol = path
        .ends_with(".py")
        .then(|| by_symbols(text, &lines, focus, max))
        .flatten();
    let keep = by_symbol.unwrap_or_else(|| by_mentions(&lines, focus, max));
    Shown {
        text: render(&lines, &keep),
        whole: false,
    }
}

/// What each hidden run of lines says: the outline lines of the definitions in it.
type Keep = (Vec<bool>, Vec<(usize, String)>);

/// The lines to keep of a parsable Python file, and the outline line of each hidden
/// top-level definition (by its first line); `None` when the file does not parse.
fn by_symbols(text: &str, lines: &[&str], focus: &Focus, max: usize) -> Option<Keep> {
    let all = locate_all(text).ok()?;
    let top: Vec<&Located> = all
        .iter()
        .filter(|l| !l.symbol.qualified_name.contains('.'))
        .collect();
    if top.is_empty() {
        return None;
    }
    let touched: Vec<usize> = (0..top.len())
        .filter(|&i| touches(top[i], &all, focus))
        .collect();
    let mut order = if touched.is_empty() {
        vec![top.len() - 1]
    } else {
        touched.clone()
    };
    // What a touched definition calls may hold the fault: shown before the neighbours.
    for &i in &touched {
        let calls = super::start::calls_of(text, top[i]);
        order.extend(
            (0..top.len()).filter(|&j| j != i && calls.contains(top[j].symbol.name.as_str())),
        );
    }
    for &i in &touched {
        order.extend([i.checked_sub(1), Some(i + 1)].into_iter().flatten());
    }
    order.retain(|&i| i < top.len());
    let mut outline: Vec<(usize, String)> = top
        .iter()
        .map(|l| (l.symbol.start_line, outline_line(text, l)))
        .collect();
    if outline.iter().map(|(_, l)| l.len() + 1).sum::<usize>() > max / 3 {
        // Too many definitions to list them all: those near the shown ones only.
        let near = |i: usize| order.iter().any(|&o| o.abs_diff(i) <= OUTLINE_NEAR);
        outline = outline
            .into_iter()
            .enumerate()
            .filter(|(i, _)| near(*i))
            .map(|(_, o)| o)
            .collect();
    }
    let mut keep = vec![false; lines.len()];
    let header_end = top[0].symbol.start_line - 1;
    let header_max = max / 4;
    let mut used = 0;
    for (i, line) in lines[..header_end].iter().enumerate() {
        if used + line.len() + 1 > header_max {
            break;
        }
        used += line.len() + 1;
        keep[i] = true;
    }
    used += outline.iter().map(|(_, l)| l.len() + 1).sum::<usize>();
    let mut shown = BTreeSet::new();
    for i in order {
        if !shown.insert(i) {
            continue;
        }
        let (a, b) = (top[i].symbol.start_line, top[i].symbol.end_line);
        let size: usize = lines[a - 1..b].iter().map(|l| l.len() + 1).sum();
        let fits = used + size <= max;
        if fits || shown.len() == 1 {
            let room = max.saturating_sub(used);
            let mut taken = 0;
            for row in a - 1..b {
                taken += lines[row].len() + 1;
                if !fits && taken > room {
                    break;
                }
                keep[row] = true;
            }
            used += taken;
        }
    }
    // Blank lines between two kept definitions stay, so the spacing reads as the file's.
    for row in 1..lines.len().saturating_sub(1) {
        if lines[row].trim().is_empty() && keep[row - 1] {
            keep[row] = lines[row..]
                .iter()
                .position(|l| !l.trim().is_empty())
                .is_some_and(|n| keep[row + n]);
        }
    }
    Some((keep, outline))
}

/// Whether the focus names `symbol` or something defined in it, or points inside it.
fn touches(symbol: &Located, all: &[Located], focus: &Focus) -> bool {
    let s = &symbol.symbol;
    let prefix = format!("{}.", s.qualified_name);
    let inner = all.iter().any(|l| {
        l.symbol.qualified_name.starts_with(&prefix) && focus.words.contains(&l.symbol.name)
    });
    focus.words.contains(&s.name)
        || inner
        || focus
            .lines
            .range(s.start_line..=s.end_line)
            .next()
            .is_some()
}

/// `# def name(args) -> T: the docstring's first line`.
fn outline_line(text: &str, located: &Located) -> String {
    let header: String = located
        .symbol
        .signature
        .lines()
        .filter(|l| !l.trim_start().starts_with('@'))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let header: String = header.chars().take(160).collect();
    let summary = located
        .docstring
        .map(|(a, b)| {
            text[a..b]
                .trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B'])
                .trim_matches(['"', '\''])
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or_default()
                .chars()
                .take(100)
                .collect::<String>()
        })
        .filter(|s| !s.is_empty());
    match summary {
        Some(s) => format!("#   {header}  # {s}"),
        None => format!("#   {header}"),
    }
}

/// The lines to keep of a file read as lines: its first lines and those around the
/// mentioned words and lines, nearest first, while they fit.
fn by_mentions(lines: &[&str], focus: &Focus, max: usize) -> Keep {
    let mut wanted: Vec<usize> = (0..lines.len().min(AROUND)).collect();
    for (row, line) in lines.iter().enumerate() {
        let mentioned = focus.lines.contains(&(row + 1))
            || words(line).any(|w| focus.words.contains(w) && w.len() > 3);
        if mentioned {
            wanted.extend(row.saturating_sub(AROUND)..(row + AROUND + 1).min(lines.len()));
        }
    }
    let mut keep = vec![false; lines.len()];
    let mut used = 0;
    for row in wanted {
        if keep[row] {
            continue;
        }
        if used + lines[row].len() + 1 > max {
            break;
        }
        used += lines[row].len() + 1;
        keep[row] = true;
    }
    (keep, Vec::new())
}

/// The kept lines, each hidden run replaced by a note of its lines and its definitions.
fn render(lines: &[&str], (keep, outline): &Keep) -> String {
    let mut out = String::new();
    let mut row = 0;
    while row < lines.len() {
        if keep[row] {
            out.push_str(lines[row]);
            out.push('\n');
            row += 1;
            continue;
        }
        let end = keep[row..]
            .iter()
            .position(|k| *k)
            .map_or(lines.len(), |n| row + n);
        let defined: Vec<&str> = outline
            .iter()
            .filter(|(line, _)| (row + 1..=end).contains(line))
            .map(|(_, text)| text.as_str())
            .collect();
        match defined.is_empty() {
            true => out.push_str(&format!("# [... lines {}-{end} not shown]\n", row + 1)),
            false => out.push_str(&format!(
                "# [... lines {}-{end} not shown; they define:]\n{}\n",
                row + 1,
                defined.join("\n")
            )),
        }
        row = end;
    }
    out
}

/// The 1-based lines of `path` that `text` points at (`path:12`, `File ".../path", line 12`).
fn lines_in(text: &str, path: &str) -> BTreeSet<usize> {
    let mut found = BTreeSet::new();
    let number = |s: &str| -> Option<usize> {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find(path) {
            let after = &rest[at + path.len()..];
            let before_ok = at == 0 || rest[..at].ends_with(['/', '"', ' ', '(']);
            if before_ok {
                if let Some(n) = after.strip_prefix(':').and_then(number) {
                    found.insert(n);
                } else if let Some(n) = after.strip_prefix("\", line ").and_then(number) {
                    found.insert(n);
                }
            }
            rest = after;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(n: usize) -> String {
        let mut text = String::from("\"\"\"A module.\"\"\"\n\nimport re\n");
        for i in 0..n {
            text.push_str(&format!(
                "\n\ndef f{i}(s: str) -> str:\n    \"\"\"Return s the {i}th way.\"\"\"\n    x = s.strip()\n    y = x.lower()\n    return y + \"{i}\"\n"
            ));
        }
        text
    }

    #[test]
    fn a_file_that_fits_is_shown_whole() {
        let text = module(3);
        let shown = show("m.py", &text, &Focus::default(), 10_000);
        assert!(shown.whole);
        assert_eq!(shown.text, text);
    }

    #[test]
    fn the_touched_definitions_and_neighbours_are_shown_and_the_rest_outlined() {
        let text = module(60);
        let focus = Focus::of("Add g(s), built from f20 and f40.", "m.py");
        let shown = show("m.py", &text, &focus, 2_500);
        assert!(!shown.whole);
        assert!(shown.text.len() <= 2_700, "{}", shown.text.len());
        assert!(
            shown
                .text
                .starts_with("\"\"\"A module.\"\"\"\n\nimport re\n")
        );
        for name in ["f19", "f20", "f21", "f39", "f40", "f41"] {
            let def = format!("def {name}(s: str) -> str:\n    \"\"\"Return s");
            assert!(
                shown.text.contains(&def),
                "{name} shown whole: {}",
                shown.text
            );
        }
        assert!(
            shown
                .text
                .contains("#   def f15(s: str) -> str:  # Return s the 15th way."),
            "{}",
            shown.text
        );
        assert!(shown.text.contains("not shown; they define:"));
        // A kept definition keeps its lines verbatim, blank lines between neighbours too.
        assert!(shown.text.contains("    return y + \"20\"\n\n\ndef f21("));
    }

    #[test]
    fn what_a_touched_definition_calls_is_shown_before_its_neighbours() {
        let text = module(60).replace(
            "x = s.strip()\n    y = x.lower()\n    return y + \"20\"",
            "return f45(s)",
        );
        let focus = Focus::of("E   assert f20('a') == 'b'", "m.py");
        let shown = show("m.py", &text, &focus, 1_550);
        assert!(
            shown.text.contains("def f20(s: str) -> str:\n"),
            "{}",
            shown.text
        );
        assert!(
            shown.text.contains("    return y + \"45\"\n"),
            "{}",
            shown.text
        );
        assert!(
            !shown.text.contains("    return y + \"21\"\n"),
            "no room for the neighbours: {}",
            shown.text
        );
    }

    #[test]
    fn with_nothing_named_the_end_of_the_module_is_shown() {
        let text = module(60);
        let shown = show("m.py", &text, &Focus::of("Add a function.", "m.py"), 1_500);
        assert!(
            shown.text.contains("    return y + \"59\"\n"),
            "{}",
            shown.text
        );
        assert!(!shown.text.contains("return y + \"30\""));
    }

    #[test]
    fn an_error_line_names_the_definition_around_it() {
        let text = module(60);
        // f30's `def` is line 3 + 30 * 7 + 3; its `return`, two below.
        let output = "Traceback:\n  File \"/sandbox/m.py\", line 218, in run\nE   AssertionError\nm.py:218: AssertionError";
        let focus = Focus::of(output, "m.py");
        assert!(focus.lines.contains(&218));
        let shown = show("m.py", &text, &focus, 2_000);
        assert!(
            shown.text.contains("def f30(s: str) -> str:\n"),
            "{}",
            shown.text
        );
    }

    #[test]
    fn other_files_keep_the_lines_around_their_mentions() {
        let text: String = (0..400).map(|i| format!("line {i} value{i}\n")).collect();
        let focus = Focus::of("change value200", "notes.txt");
        let shown = show("notes.txt", &text, &focus, 800);
        assert!(shown.text.contains("line 200 value200\n"));
        assert!(shown.text.contains("line 0 value0\n"));
        assert!(
            shown.text.contains("# [... lines 9-192 not shown]"),
            "{}",
            shown.text
        );
        assert!(!shown.whole);
    }
}

//! Chat answer -> edits, with salvage.
//!
//! Models answer in many shapes; this parser accepts the common ones and says what it could
//! not use: fenced blocks with or without a language tag (a missing closing fence is closed at
//! the end), a file path in the fence tag or on the line before the fence, several files in one
//! answer, SEARCH/REPLACE blocks (fenced or bare), unified diffs, prose around code, CRLF.
//! Two different whole-file writes to one path are reported as a conflict. Parsing is pure and
//! total: any input gives a result, never a panic.

use super::hunk::Hunk;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditKind {
    /// Code: a whole file or a fragment to merge.
    Code(String),
    /// Replacements located in the current file.
    Hunks(Vec<Hunk>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdit {
    /// The file the answer named, if it named one.
    pub path: Option<String>,
    pub kind: EditKind,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub edits: Vec<FileEdit>,
    /// What was salvaged or could not be used, in words the fix prompt can quote.
    pub diagnostics: Vec<String>,
}

const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
const REPLACE: &str = ">>>>>>> REPLACE";

pub fn parse_answer(answer: &str) -> Parsed {
    let text = answer.replace("\r\n", "\n");
    let lines: Vec<&str> = text.lines().collect();
    let mut parsed = Parsed::default();
    let mut hunk_ids = 0usize;
    let mut i = 0;
    let mut outside: Vec<&str> = Vec::new();
    while i < lines.len() {
        let Some(tag) = lines[i].trim_start().strip_prefix("```") else {
            outside.push(lines[i]);
            i += 1;
            continue;
        };
        let header = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| path_in_header(l));
        let (language, tag_path) = split_tag(tag);
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        if end == lines.len() {
            parsed
                .diagnostics
                .push("a code block had no closing ``` (closed at the end of the answer)".into());
        }
        let body = &lines[start..end];
        let path = tag_path.or(header);
        if !matches!(
            language.as_str(),
            "" | "python" | "py" | "python3" | "diff" | "patch"
        ) {
            parsed
                .diagnostics
                .push(format!("ignored a ```{language} block"));
        } else {
            classify(body, path, &language, &mut parsed, &mut hunk_ids);
        }
        i = end + 1;
    }
    if outside.iter().any(|l| l.trim() == SEARCH) {
        classify(&outside, None, "", &mut parsed, &mut hunk_ids);
    } else if parsed.edits.is_empty() && looks_like_code(&outside) {
        parsed.edits.push(FileEdit {
            path: None,
            kind: EditKind::Code(outside.join("\n").trim().to_string()),
        });
    }
    report_conflicts(&mut parsed);
    if parsed.edits.is_empty() {
        let preview: String = text.chars().take(80).collect();
        parsed.diagnostics.push(format!(
            "no code found: expected a ```python block (answer began: {preview:?})"
        ));
    }
    parsed
}

fn classify(
    body: &[&str],
    path: Option<String>,
    language: &str,
    parsed: &mut Parsed,
    ids: &mut usize,
) {
    if body.iter().any(|l| l.trim() == SEARCH) {
        let (hunks, problems) = search_replace(body, path.as_deref(), ids);
        parsed.diagnostics.extend(problems);
        if !hunks.is_empty() {
            let named = Some(hunks[0].file.clone()).filter(|f| !f.is_empty());
            parsed.edits.push(FileEdit {
                path: path.or(named),
                kind: EditKind::Hunks(hunks),
            });
        }
    } else if language == "diff"
        || language == "patch"
        || body.first().is_some_and(|l| {
            l.starts_with("--- ") || l.starts_with("diff --git") || l.starts_with("@@")
        })
    {
        for (file, hunks) in unified_diff(body, path.as_deref(), ids) {
            parsed.edits.push(FileEdit {
                path: file,
                kind: EditKind::Hunks(hunks),
            });
        }
    } else {
        let code = body.join("\n").trim_matches('\n').to_string();
        if !code.trim().is_empty() {
            parsed.edits.push(FileEdit {
                path,
                kind: EditKind::Code(code),
            });
        }
    }
}

/// `python path/x.py`, `path/x.py`, `py` -> (language, path).
fn split_tag(tag: &str) -> (String, Option<String>) {
    let mut words = tag.split_whitespace();
    let first = words.next().unwrap_or("").to_string();
    if looks_like_path(&first) {
        return ("python".into(), Some(clean_path(&first)));
    }
    let path = words.find(|w| looks_like_path(w)).map(clean_path);
    (first.to_ascii_lowercase(), path)
}

/// A path written as a header: `# src/x.py`, `**src/x.py**`, `File: src/x.py`, `src/x.py:`.
fn path_in_header(line: &str) -> Option<String> {
    let mut l = line.trim().trim_start_matches('#').trim();
    for prefix in ["File:", "file:", "Path:", "path:", "Filename:", "filename:"] {
        if let Some(rest) = l.strip_prefix(prefix) {
            l = rest.trim();
        }
    }
    let l = l.trim_matches(|c| c == '*' || c == '`' || c == ':' || c == ' ');
    (looks_like_path(l) && !l.contains(' ')).then(|| clean_path(l))
}

fn looks_like_path(s: &str) -> bool {
    let s = s.trim_matches('`');
    s.ends_with(".py") && !s.contains(['(', ')', '=', '"', '\'']) && s.len() > 3
}

fn clean_path(s: &str) -> String {
    s.trim_matches('`').trim_start_matches("./").to_string()
}

fn looks_like_code(lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        let l = l.trim_start();
        l.starts_with("def ")
            || l.starts_with("async def ")
            || l.starts_with("class ")
            || l.starts_with("import ")
            || l.starts_with("from ")
    })
}

fn search_replace(body: &[&str], path: Option<&str>, ids: &mut usize) -> (Vec<Hunk>, Vec<String>) {
    let (mut hunks, mut problems) = (Vec::new(), Vec::new());
    let mut i = 0;
    let mut file = path.map(str::to_string);
    while i < body.len() {
        let line = body[i].trim();
        if line != SEARCH {
            if let Some(p) = path_in_header(line) {
                file = Some(p);
            }
            i += 1;
            continue;
        }
        let divider = (i + 1..body.len()).find(|&j| body[j].trim() == DIVIDER);
        let end = divider.and_then(|d| (d + 1..body.len()).find(|&j| body[j].trim() == REPLACE));
        let (Some(divider), Some(end)) = (divider, end) else {
            problems.push("a SEARCH block has no ======= or >>>>>>> REPLACE line".into());
            break;
        };
        *ids += 1;
        hunks.push(Hunk {
            id: *ids,
            file: file.clone().unwrap_or_default(),
            start_hint: None,
            old: body[i + 1..divider].iter().map(|s| s.to_string()).collect(),
            new: body[divider + 1..end]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        });
        i = end + 1;
    }
    (hunks, problems)
}

fn unified_diff(
    body: &[&str],
    path: Option<&str>,
    ids: &mut usize,
) -> Vec<(Option<String>, Vec<Hunk>)> {
    let mut files: Vec<(Option<String>, Vec<Hunk>)> = Vec::new();
    let mut current_file = path.map(str::to_string);
    let mut current: Option<Hunk> = None;
    let flush = |current: &mut Option<Hunk>,
                 files: &mut Vec<(Option<String>, Vec<Hunk>)>,
                 file: &Option<String>| {
        if let Some(h) = current.take() {
            match files.iter_mut().find(|(f, _)| f == file) {
                Some((_, hunks)) => hunks.push(h),
                None => files.push((file.clone(), vec![h])),
            }
        }
    };
    for line in body {
        if let Some(target) = line.strip_prefix("+++ ") {
            flush(&mut current, &mut files, &current_file);
            let target = target.split_whitespace().next().unwrap_or("");
            current_file =
                Some(target.trim_start_matches("b/").to_string()).filter(|t| t != "/dev/null");
        } else if line.starts_with("--- ")
            || line.starts_with("diff --git")
            || line.starts_with("index ")
        {
            flush(&mut current, &mut files, &current_file);
        } else if line.starts_with("@@") {
            flush(&mut current, &mut files, &current_file);
            *ids += 1;
            let start_hint = line
                .split_whitespace()
                .nth(1)
                .and_then(|old| old.trim_start_matches('-').split(',').next()?.parse().ok());
            current = Some(Hunk {
                id: *ids,
                file: current_file.clone().unwrap_or_default(),
                start_hint,
                old: Vec::new(),
                new: Vec::new(),
            });
        } else if let Some(h) = current.as_mut() {
            match line.chars().next() {
                Some('-') => h.old.push(line[1..].to_string()),
                Some('+') => h.new.push(line[1..].to_string()),
                Some(' ') => {
                    h.old.push(line[1..].to_string());
                    h.new.push(line[1..].to_string());
                }
                None => {
                    h.old.push(String::new());
                    h.new.push(String::new());
                }
                _ => {} // "\ No newline at end of file" and the like
            }
        }
    }
    flush(&mut current, &mut files, &current_file);
    files
}

fn report_conflicts(parsed: &mut Parsed) {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut conflicts = Vec::new();
    for edit in &parsed.edits {
        if let (Some(path), EditKind::Code(code)) = (&edit.path, &edit.kind) {
            match seen.iter().find(|(p, _)| p == path) {
                Some((_, other)) if other != code => conflicts.push(format!(
                    "conflicting writes to {path}: two different blocks"
                )),
                Some(_) => {}
                None => seen.push((path, code)),
            }
        }
    }
    conflicts.dedup();
    parsed.diagnostics.extend(conflicts);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(parsed: &Parsed) -> Vec<(Option<&str>, &str)> {
        parsed
            .edits
            .iter()
            .filter_map(|e| match &e.kind {
                EditKind::Code(c) => Some((e.path.as_deref(), c.as_str())),
                EditKind::Hunks(_) => None,
            })
            .collect()
    }

    #[test]
    fn fenced_blocks_with_paths_in_tags_and_headers() {
        let answer = "Here:\n\n**src/a.py**\n```python\ndef a():\n    pass\n```\nand\n```python src/b.py\ndef b():\n    pass\n```\n```src/c.py\nX = 1\n```\n```\ndef d():\n    pass\n```";
        let parsed = parse_answer(answer);
        assert_eq!(
            code(&parsed),
            vec![
                (Some("src/a.py"), "def a():\n    pass"),
                (Some("src/b.py"), "def b():\n    pass"),
                (Some("src/c.py"), "X = 1"),
                (None, "def d():\n    pass")
            ]
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    }

    #[test]
    fn crlf_missing_fence_and_bare_code_are_salvaged() {
        let parsed = parse_answer("```python\r\ndef f():\r\n    return 1\r\n");
        assert_eq!(code(&parsed), vec![(None, "def f():\n    return 1")]);
        assert!(parsed.diagnostics[0].contains("no closing"));
        assert_eq!(
            code(&parse_answer("def g():\n    pass")),
            vec![(None, "def g():\n    pass")]
        );
    }

    #[test]
    fn search_replace_blocks_fenced_or_bare() {
        let answer = "src/m.py\n```python\n<<<<<<< SEARCH\n    return x\n=======\n    return x + 1\n>>>>>>> REPLACE\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n";
        let parsed = parse_answer(answer);
        let hunks: Vec<&Hunk> = parsed
            .edits
            .iter()
            .flat_map(|e| match &e.kind {
                EditKind::Hunks(h) => h.iter().collect(),
                EditKind::Code(_) => Vec::new(),
            })
            .collect();
        assert_eq!(hunks.len(), 2);
        assert_eq!(
            (
                hunks[0].file.as_str(),
                hunks[0].old.clone(),
                hunks[0].new.clone()
            ),
            (
                "src/m.py",
                vec!["    return x".to_string()],
                vec!["    return x + 1".to_string()]
            )
        );
        assert_eq!(
            (hunks[1].old.clone(), hunks[1].new.clone()),
            (vec!["a".to_string()], vec!["b".to_string()])
        );
    }

    #[test]
    fn unified_diffs_become_hunks_per_file() {
        let answer = "```diff\n--- a/src/m.py\n+++ b/src/m.py\n@@ -3,2 +3,2 @@\n def f(x):\n-    return x\n+    return x + 1\n```";
        let parsed = parse_answer(answer);
        let EditKind::Hunks(hunks) = &parsed.edits[0].kind else {
            panic!("{parsed:?}")
        };
        assert_eq!(parsed.edits[0].path.as_deref(), Some("src/m.py"));
        assert_eq!(hunks[0].start_hint, Some(3));
        assert_eq!(hunks[0].old, vec!["def f(x):", "    return x"]);
        assert_eq!(hunks[0].new, vec!["def f(x):", "    return x + 1"]);
    }

    #[test]
    fn conflicting_writes_and_prose_only_answers_are_reported() {
        let parsed =
            parse_answer("# src/a.py\n```python\nA = 1\n```\n# src/a.py\n```python\nA = 2\n```");
        assert!(
            parsed
                .diagnostics
                .iter()
                .any(|d| d.contains("conflicting writes to src/a.py")),
            "{:?}",
            parsed.diagnostics
        );
        let nothing = parse_answer("Sorry, I can't do that.");
        assert!(nothing.edits.is_empty() && nothing.diagnostics[0].starts_with("no code found"));
    }
}

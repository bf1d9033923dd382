//! Docstrings as the plan keeps them: the literal's value unescaped and cleaned like
//! `inspect.cleandoc`, and its doctest examples split off.

use tree_sitter::Node as TsNode;

use super::read::text;

/// The docstring of a module or a block: its first statement when that is a string literal
/// (implicit concatenation included; f-strings and bytes are not docstrings), cleaned.
pub(super) fn docstring_of(block: TsNode<'_>, source: &str) -> Option<String> {
    let mut cursor = block.walk();
    let first = block
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    let literal = first.named_child(0)?;
    let raw = match literal.kind() {
        "string" => string_value(literal, source)?,
        "concatenated_string" => {
            let mut cursor = literal.walk();
            let parts: Option<Vec<String>> = literal
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "string")
                .map(|c| string_value(c, source))
                .collect();
            parts?.concat()
        }
        _ => return None,
    };
    let cleaned = cleandoc(&raw);
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The value of a plain (not f-, not bytes) string literal.
pub(super) fn string_value(node: TsNode<'_>, source: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let literal = text(node, source);
    let quote_at = literal.find(['"', '\''])?;
    let prefix = literal[..quote_at].to_ascii_lowercase();
    if prefix.contains('f') || prefix.contains('b') || prefix.contains('t') {
        return None;
    }
    let body = &literal[quote_at..];
    let quote = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|q| body.starts_with(q) && body.len() >= 2 * q.len() && body.ends_with(q))?;
    let inner = &body[quote.len()..body.len() - quote.len()];
    Some(match prefix.contains('r') {
        true => inner.to_string(),
        false => unescape(inner),
    })
}

/// Python's escape sequences in a non-raw string.
pub(super) fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| {
            let digits: String = (0..n).filter_map(|_| chars.next()).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or(digits)
        };
        match next {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            'x' | 'u' | 'U' => {
                let n = match next {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                match hex(&mut chars, n) {
                    Ok(c) => out.push(c),
                    Err(digits) => {
                        out.push('\\');
                        out.push(next);
                        out.push_str(&digits);
                    }
                }
            }
            '0'..='7' => {
                let mut value = next.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(value));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// `inspect.cleandoc`: tabs expanded, the first line stripped, the common indentation of the
/// others removed, blank lines at both ends dropped; trailing spaces are dropped too.
pub(crate) fn cleandoc(doc: &str) -> String {
    let lines: Vec<String> = doc.lines().map(expand_tabs).collect();
    let margin = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| match i {
            0 => l.trim().to_string(),
            _ => l.get(margin..).unwrap_or_default().trim_end().to_string(),
        })
        .collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let start = out.iter().position(|l| !l.is_empty()).unwrap_or(out.len());
    out[start..].join("\n")
}

fn expand_tabs(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if c == '\t' {
            let pad = 8 - out.chars().count() % 8;
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.push(c);
        }
    }
    out
}

/// A cleaned docstring split into its text without doctest examples, and the examples, one
/// per block (a `>>>` line, its `...` continuations and output, up to a blank line),
/// dedented to their prompt.
pub(crate) fn split_examples(doc: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = doc.lines().collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut examples = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !line.trim_start().starts_with(">>>") {
            kept.push(line);
            i += 1;
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let mut block = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() {
            let l = lines[i];
            let cut = (l.len() - l.trim_start().len()).min(indent);
            block.push(&l[cut..]);
            i += 1;
        }
        examples.push(block.join("\n"));
    }
    (tidy(&kept), examples)
}

/// Text left after examples were taken out: example headings with nothing under them
/// dropped, runs of blank lines made one.
fn tidy(lines: &[&str]) -> String {
    let is_heading = |l: &str| {
        let t = l.trim().trim_end_matches(':').to_ascii_lowercase();
        matches!(
            t.as_str(),
            "example" | "examples" | "usage" | "doctest" | "doctests"
        )
    };
    let is_rule = |l: &str| {
        let t = l.trim();
        t.len() >= 3 && t.chars().all(|c| c == '-' || c == '=')
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_heading(line) {
            let mut next = i + 1;
            if next < lines.len() && is_rule(lines[next]) {
                next += 1;
            }
            let mut after = next;
            while after < lines.len() && lines[after].trim().is_empty() {
                after += 1;
            }
            let ruled = next > i + 1;
            let empty = after == lines.len()
                || match ruled {
                    // numpy style: the section's text is not indented; the next heading is.
                    true => after + 1 < lines.len() && is_rule(lines[after + 1]),
                    false => indent(lines[after]) <= indent(line),
                };
            if empty {
                i = next;
                continue;
            }
        }
        let blank = line.trim().is_empty();
        if blank && out.last().is_none_or(|l| l.trim().is_empty()) {
            i += 1;
            continue;
        }
        out.push(line);
        i += 1;
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out.join("\n")
}

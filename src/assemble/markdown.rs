//! Plan and model text written into Markdown (the README, the generation report) so that it
//! shows as the text it is and does nothing else.
//!
//! Every byte of a plan is hostile, and Markdown renders raw HTML: a docstring holding
//! `<script>` landed verbatim in the README that a forge or a documentation site renders. The
//! helpers here escape what would be markup: HTML (`&`, `<`, `>` as entities), what opens a
//! code span, link, image or table cell (`` ` ``, `[`, `]`, `|`, backslash-escaped), and what
//! starts a block at the start of a line (a heading, list, quote, fence or setext underline).
//! Emphasis (`*`, `_` inside a line) is left alone: it changes no structure, and escaping it
//! would litter every `snake_case` name.

/// `text` as Markdown prose; lines stay lines. A lone `\r` ends a line in Markdown as `\n`
/// does, so every line ending becomes `\n` before lines are escaped.
pub fn text(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        escape_line(line, &mut out);
    }
    out
}

/// `text` as Markdown prose on one line: line breaks become spaces, so plan text inside a
/// list item or a heading cannot start a block of its own.
pub fn line(text: &str) -> String {
    let joined: String = text
        .chars()
        .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
        .collect();
    let mut out = String::with_capacity(joined.len() + 16);
    escape_line(&joined, &mut out);
    out
}

/// `text` as an inline code span: delimited by one backtick more than its longest run of
/// backticks (padded with spaces where it starts or ends with one), so nothing in it closes
/// the span early. Inside a span Markdown renders `<` as itself, never as HTML.
pub fn code(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
        .collect();
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// A fenced code block of `info` (`python`, `text`) holding `body`: the fence is longer than
/// any run of backticks in the body, so no line of it closes the block.
pub(crate) fn fenced(info: &str, body: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(body) + 1).max(3));
    format!("{fence}{info}\n{body}\n{fence}")
}

fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// Appends `line` escaped: its first visible character when it would start a block, then
/// every character that is markup anywhere.
fn escape_line(line: &str, out: &mut String) {
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let (lead, rest) = line.split_at(indent);
    out.push_str(lead);
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    // `___` alone on a line is a rule, as `---` and `***` are.
    if digits == 0 && rest.starts_with(['#', '-', '+', '*', '=', '~', '_']) {
        out.push('\\');
    }
    for (position, c) in rest.chars().enumerate() {
        // `1.` or `1)` at the start would begin a numbered list.
        if position == digits && digits > 0 && matches!(c, '.' | ')') {
            out.push('\\');
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '[' | ']' | '|' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_never_survives_and_links_and_code_spans_cannot_open() {
        assert_eq!(
            text("<script>alert(1)</script> & [x](javascript:y) `z` a|b \\"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; \\[x\\](javascript:y) \\`z\\` a\\|b \\\\"
        );
        assert_eq!(text("mean_value of *xs*"), "mean_value of *xs*");
    }

    #[test]
    fn plan_lines_cannot_start_a_block() {
        assert_eq!(
            text("Intro.\n# Heading\n  - item\n> quote\n1. one\n```\n~~~\n==="),
            "Intro.\n\\# Heading\n  \\- item\n&gt; quote\n1\\. one\n\\`\\`\\`\n\\~~~\n\\==="
        );
        assert_eq!(line("a\n# b\r\nc"), "a # b  c");
        assert_eq!(
            text("Intro\r# Heading\r~~~\r\n___"),
            "Intro\n\\# Heading\n\\~~~\n\\___"
        );
        assert_eq!(line("2024 was"), "2024 was");
    }

    #[test]
    fn code_spans_and_fences_outlast_the_backticks_inside() {
        assert_eq!(code("name"), "`name`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(fenced("python", ">>> f()\n1"), "```python\n>>> f()\n1\n```");
        assert_eq!(fenced("text", "```\nx"), "````text\n```\nx\n````");
    }
}

//! The examples in a change request: what it says a function must return or raise for an
//! input. A request is a specification, and these are the parts of it a machine can check
//! ([`super::accept`] turns each into a test). Pure: nothing of the request is run, and every
//! value is kept only when [`crate::python::check_literal`] finds it to be a Python literal.
//!
//! The request is hostile text, read by rules that rather miss an example than invent one:
//!
//! ```text
//! example := CALL NOW VALUE                     `f('a')` returns 'b'      (expects 'b')
//!          | CALL SHOULD VALUE                  f(2) should return 4
//!          | CALL NOW VALUE ','? 'but' 'it'? SHOULD VALUE   bug: expects the second
//!          | CALL NOW VALUE 'instead of' VALUE  bug: expects the second
//!          | CALL SHOULD VALUE ','? ('not' | 'instead of') VALUE   bug: expects the first
//!          | CALL RAISES EXC                    f('') raises ValueError
//!          | VALUE BECOMES VALUE                'A B' becomes 'a-b'  (the function: see below)
//!          | TURNS VALUE ('into' | 'to') VALUE  turns 'A B' into 'a-b'
//!          | VALUE RAISES EXC                   '' should raise ValueError
//!          | '>>>' CALL LF OUTPUT               a doctest: OUTPUT is a VALUE line, or a
//!                                               traceback whose last line is `EXC` or `EXC: ...`
//! CALL    := NAME '(' (ARG (',' ARG)*)? ')'     NAME a plain identifier (no `obj.` before it)
//!          | WRAP '(' CALL ')'                  list(f(x)) is [...]: the result passed to
//!                                               WRAP := list | tuple | set | sorted | frozenset
//! ARG     := VALUE | IDENT '=' VALUE
//! VALUE   := a Python literal: a string in either quote (one line, not triple-quoted),
//!            a number, None/True/False, a list/tuple/dict/set of literals
//! NOW     := 'returns' | 'gives' | 'is' | 'equals' | 'yields' | 'evaluates to' | '==' | '->' | '=>' | '→'
//! SHOULD  := MODAL ('return' | 'give' | 'be' | 'equal' | 'yield' | 'evaluate to')
//! MODAL   := 'should' | 'must' | 'will' | 'shall' | 'would'
//! BECOMES := 'becomes' | 'gives' | 'yields' | 'maps to' | MODAL ('become' | 'give') | '->' | '=>' | '→'
//! TURNS   := 'turns' | 'turn' | 'converts' | 'convert' | 'maps' | 'map' | 'transforms'
//! RAISES  := MODAL? ('raise' | 'raises' | 'throw' | 'throws') ('a' | 'an')?
//! EXC     := an identifier that begins with an upper-case letter
//! ```
//!
//! A line break inside a paragraph is a space (requests are wrapped prose); a blank line, a
//! list item, a fence or a doctest line after it ends the sentence. Every example ends at the
//! end of a line or sentence (`. , ; : ! ? )`, or a remark in brackets) or before a joining
//! word (`and`, `but`, `or`, `for`, `when`, ...): "f(x) is 3 times faster" is no example.
//! Backticks around calls and values are ignored. A quote right after a letter is an
//! apostrophe ("don't"), and a string never spans lines. The forms without a call are tied to
//! the function the request names last before them: a call or signature (`slugify(s)`,
//! `f()`), a backticked name, or a snake_case name after `function`, `def`, `called` or
//! `named`; a builtin's name (`len`, `lower`) is never that function.
//!
//! An example is a bug report (it must fail before the change: it reproduces the bug) when it
//! contrasts what the function does with what it should do, or when the request speaks of a
//! bug (`bug`, `fix`, `broken`, `wrong`, `incorrect`).

use crate::python::{BUILTINS, CONSTRUCTORS, check_literal, is_identifier, is_name_char};

/// Builtins a request may pass a call's result to in an example (`list(f(x))` is `[...]`).
const WRAPPERS: &[&str] = &["list", "tuple", "set", "sorted", "frozenset"];
/// Requests longer than this are read up to here: the examples of a change are short, and
/// hostile input must not make the reading quadratic.
const MAX_REQUEST_CHARS: usize = 64 * 1024;
/// Examples kept at most.
const MAX_EXAMPLES: usize = 24;
/// The longest value (or argument list) kept, in characters.
const MAX_VALUE_CHARS: usize = 2_000;

/// What the request says a call must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expect {
    /// The call returns this value (Python source of a literal).
    Returns(String),
    /// The call raises this exception (a class name; a subclass passes too).
    Raises(String),
}

/// One example: `function(args)` must do `expect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Example {
    pub function: String,
    /// The arguments, Python source: literals and `name=literal`, joined by `, `.
    pub args: String,
    /// A builtin the request wraps the call's result in (`list`, `tuple`, `set`, `sorted`):
    /// a generator's example is written `list(f(x))` is `[...]`.
    pub wrap: Option<String>,
    pub expect: Expect,
    /// A bug report: the example must fail on the repository before the change.
    pub bug: bool,
    /// The parameter names of the function as the request writes its signature
    /// (`pairwise_differences(iterable)`); empty when it writes none.
    pub params: Vec<String>,
}

impl Example {
    pub(crate) fn call(&self) -> String {
        let call = format!("{}({})", self.function, self.args);
        match &self.wrap {
            Some(wrap) => format!("{wrap}({call})"),
            None => call,
        }
    }

    /// The example in words, for prompts, reports and the audit trail.
    pub(crate) fn describe(&self) -> String {
        match &self.expect {
            Expect::Returns(value) => format!("`{}` should return `{value}`", self.call()),
            Expect::Raises(exception) => format!("`{}` should raise {exception}", self.call()),
        }
    }
}

/// The examples of `request`, in the order they appear, without repeats.
pub(crate) fn extract(request: &str) -> Vec<Example> {
    let end = request
        .char_indices()
        .nth(MAX_REQUEST_CHARS)
        .map_or(request.len(), |(at, _)| at);
    let text = &request[..end];
    let bug_words = speaks_of_a_bug(text);
    let mut found = doctests(text);
    found.extend(prose(&lex(text)));
    let mut out = settle(found);
    for example in &mut out {
        example.bug |= bug_words;
        example.params = signature(text, &example.function);
    }
    out.truncate(MAX_EXAMPLES);
    out
}

/// The parameter names of the first signature of `function` in `text`: `function(` then
/// parameters only (`a`, `a=1`, `a: int`, `*args`, `**kw`) up to `)`. A call on values
/// (`f([1, 2])`) is no signature; nor is a name inside a longer one (`my_f(a)`).
fn signature(text: &str, function: &str) -> Vec<String> {
    for (at, _) in text.match_indices(&format!("{function}(")) {
        if text[..at].ends_with(is_name_char) || text[..at].ends_with('.') {
            continue;
        }
        let rest = &text[at + function.len() + 1..];
        let Some(inner) = rest.split_once(')').map(|(inner, _)| inner) else {
            continue;
        };
        if inner.contains(['(', '\n']) {
            continue;
        }
        let names: Option<Vec<String>> = inner
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty() && !matches!(*item, "*" | "/"))
            .map(|item| {
                let name = item.trim_start_matches('*');
                let name = name.split([':', '=']).next().unwrap_or_default().trim();
                is_identifier(name).then(|| name.to_string())
            })
            .collect();
        if let Some(names) = names.filter(|n| !n.is_empty()) {
            return names;
        }
    }
    Vec::new()
}

fn speaks_of_a_bug(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_ascii_lowercase)
        .any(|w| {
            matches!(
                w.as_str(),
                "bug" | "bugs" | "fix" | "fixes" | "broken" | "wrong" | "incorrect" | "regression"
            )
        })
}

/// One piece of the request, as the rules see it.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A Python literal (checked).
    Value(String),
    /// `name(args)` with literal arguments (normalised, checked), and the builtin of
    /// [`WRAPPERS`] its result is passed to, if any.
    Call(String, String, Option<String>),
    /// A function the request names without calling it on literals: `f(s)`, `` `f` ``.
    Named(String),
    /// A word, lower-cased; `exc` keeps its case when it could be an exception's name.
    Word(String, String),
    /// `==`, `->`, `=>`, `→`.
    Arrow,
    /// The end of a sentence or line: `. , ; : ! ? ) ] }` or a line break.
    Stop(char),
    Other,
}

/// The request as tokens (see the module doc). Total: any text gives tokens, never a panic.
fn lex(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (tok, next) = lex_one(&chars, i);
        if let Some(tok) = tok {
            out.push(tok);
        }
        i = next.max(i + 1);
    }
    out
}

fn lex_one(chars: &[char], i: usize) -> (Option<Tok>, usize) {
    let c = chars[i];
    let after_letter = i > 0 && is_name_char(chars[i - 1]);
    let next = chars.get(i + 1).copied();
    match c {
        '\n' if soft_break(chars, i) => (None, i + 1),
        '\n' => (Some(Tok::Stop('\n')), i + 1),
        c if c.is_whitespace() || c == '`' => (None, i + 1),
        '\'' | '"' if !after_letter => match string_end(chars, i) {
            Some(end) => (Some(value(&chars[i..end])), end),
            None => (Some(Tok::Other), i + 1),
        },
        '=' if next == Some('=') || next == Some('>') => (Some(Tok::Arrow), i + 2),
        '-' if next == Some('>') => (Some(Tok::Arrow), i + 2),
        '→' => (Some(Tok::Arrow), i + 1),
        '-' | '+' if !after_letter && next.is_some_and(|n| n.is_ascii_digit()) => number(chars, i),
        c if c.is_ascii_digit() && !after_letter => number(chars, i),
        // A remark in brackets after an example ends it, as a comma would.
        '[' | '(' | '{' => match group_end(chars, i).map(|end| (value(&chars[i..end]), end)) {
            Some((Tok::Other, _)) | None if c == '(' => (Some(Tok::Stop('(')), i + 1),
            Some((Tok::Other, _)) | None => (Some(Tok::Other), i + 1),
            Some((tok, end)) => (Some(tok), end),
        },
        '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '}' => (Some(Tok::Stop(c)), i + 1),
        c if (c.is_ascii_alphabetic() || c == '_') && !after_letter => word(chars, i),
        _ => (Some(Tok::Other), i + 1),
    }
}

/// Whether the line break at `i` only wraps a sentence of prose (Markdown's soft break: the
/// request `so f(x) is` / `[3, 5, 7]` on two lines is one example): both lines are prose and
/// the next one starts no paragraph, list item, quote, heading, table, fence or doctest.
fn soft_break(chars: &[char], i: usize) -> bool {
    let line_start = chars[..i]
        .iter()
        .rposition(|&c| c == '\n')
        .map_or(0, |p| p + 1);
    let this: String = chars[line_start..i].iter().collect();
    let next_end = (i + 1..chars.len())
        .find(|&k| chars[k] == '\n')
        .unwrap_or(chars.len());
    let next: String = chars[i + 1..next_end].iter().collect();
    let (this, next) = (this.trim(), next.trim_start());
    let starts_block = |line: &str| {
        line.is_empty()
            || line.starts_with(['-', '*', '+', '>', '#', '|'])
            || line.starts_with("```")
            || line.starts_with("~~~")
            || line.starts_with("...")
            || line
                .split_once(['.', ')'])
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let code = |line: &str| line.starts_with(['>', '|']) || line.starts_with("```");
    !this.is_empty() && !code(this) && !starts_block(next)
}

/// A number at `i`; digits glued to letters ("3rd", "2x") are a word, not a value.
fn number(chars: &[char], i: usize) -> (Option<Tok>, usize) {
    let mut end = i + 1;
    let digit_at = |k: usize| chars.get(k).is_some_and(|c| c.is_ascii_digit());
    while end < chars.len() {
        let c = chars[end];
        let sign_after_e =
            matches!(c, '+' | '-') && matches!(chars[end - 1], 'e' | 'E') && digit_at(end + 1);
        if c.is_ascii_alphanumeric() || c == '_' || sign_after_e || (c == '.' && digit_at(end + 1))
        {
            end += 1;
        } else {
            break;
        }
    }
    let text: String = chars[i..end].iter().collect();
    let digits = text.trim_start_matches(['-', '+']);
    // Python refuses what tree-sitter may read as a number: `0777`, `1__0`, `1_`.
    let refused = (digits.len() > 1
        && digits.starts_with('0')
        && digits[1..].starts_with(|c: char| c.is_ascii_digit()))
        || digits.contains("__")
        || digits.ends_with('_');
    if refused {
        return (Some(Tok::Other), end);
    }
    (Some(value(&chars[i..end])), end)
}

/// An identifier at `i`: a string prefix (`r'..'`, `b".."`), a call, a named function or a
/// word.
fn word(chars: &[char], i: usize) -> (Option<Tok>, usize) {
    let mut end = i;
    while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
        end += 1;
    }
    let name: String = chars[i..end].iter().collect();
    let after_dot = i > 0 && chars[i - 1] == '.';
    match chars.get(end) {
        Some('\'' | '"')
            if matches!(name.to_ascii_lowercase().as_str(), "r" | "b" | "rb" | "br") =>
        {
            match string_end(chars, end) {
                Some(close) => (Some(value(&chars[i..close])), close),
                None => (Some(Tok::Other), end + 1),
            }
        }
        Some('(') if !after_dot && is_identifier(&name) => call(chars, &name, end),
        _ => {
            let ticked = i > 0 && chars[i - 1] == '`' && chars.get(end) == Some(&'`');
            let tok = if matches!(name.as_str(), "None" | "True" | "False") {
                Tok::Value(name)
            } else if ticked && !after_dot && is_function_name(&name) {
                Tok::Named(name)
            } else {
                Tok::Word(name.to_ascii_lowercase(), name)
            };
            (Some(tok), end)
        }
    }
}

/// `name(` at `open`: a call on literals, else a mention of `name` (and the text inside the
/// brackets is read on, as prose).
fn call(chars: &[char], name: &str, open: usize) -> (Option<Tok>, usize) {
    if let Some(close) = group_end(chars, open) {
        let inner: String = chars[open + 1..close - 1].iter().collect();
        if CONSTRUCTORS.contains(&name) {
            let start = open - name.chars().count();
            if let tok @ Tok::Value(_) = value(&chars[start..close]) {
                return (Some(tok), close);
            }
        }
        if WRAPPERS.contains(&name)
            && let (Some(Tok::Call(f, args, None)), end) = word_at(chars, open + 1)
            && end + 1 == close
        {
            return (Some(Tok::Call(f, args, Some(name.to_string()))), close);
        }
        if !CONSTRUCTORS.contains(&name)
            && is_function_name(name)
            && let Some(args) = literal_args(&inner)
        {
            return (Some(Tok::Call(name.to_string(), args, None)), close);
        }
    }
    let tok = if is_function_name(name) {
        Tok::Named(name.to_string())
    } else {
        Tok::Other
    };
    (Some(tok), open + 1)
}

/// The call that starts at `i` (spaces skipped), read as [`word`] reads it.
fn word_at(chars: &[char], mut i: usize) -> (Option<Tok>, usize) {
    while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == '`') {
        i += 1;
    }
    match chars.get(i) {
        Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
            let (tok, mut end) = word(chars, i);
            while chars
                .get(end)
                .is_some_and(|c| c.is_whitespace() || *c == '`')
            {
                end += 1;
            }
            (tok, end)
        }
        _ => (None, i),
    }
}

/// A name that could be the function a request is about: no builtin (an example of `len`
/// would test Python, and could never be imported from the repository), no constant.
fn is_function_name(name: &str) -> bool {
    is_identifier(name)
        && !BUILTINS.contains(&name)
        && !matches!(
            name,
            "lower" | "upper" | "strip" | "split" | "join" | "replace" | "append" | "get"
        )
}

/// `chars[i..end]` as a value token when it is a literal (a constructor call such as
/// `set()` included), else [`Tok::Other`].
fn value(chars: &[char]) -> Tok {
    let text: String = chars.iter().collect();
    clean_literal(&text).map_or(Tok::Other, Tok::Value)
}

/// `text` when it is one Python literal that is safe to paste into a line of a test: checked
/// by tree-sitter, with no line break, comment or backslash outside its strings.
fn clean_literal(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > MAX_VALUE_CHARS || !plain_outside_strings(text) {
        return None;
    }
    check_literal(text).ok().map(|()| text.to_string())
}

/// No `#`, `\`, line break or triple quote outside the strings of `text`, and every string
/// closed.
fn plain_outside_strings(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\'' | '"' => match string_end(&chars, i) {
                Some(end) => i = end,
                None => return false,
            },
            '#' | '\\' | '\n' | '\r' => return false,
            _ => i += 1,
        }
    }
    true
}

/// The index after the string that opens at `i`: one line, backslash escapes, never
/// triple-quoted (`''` is the empty string).
fn string_end(chars: &[char], i: usize) -> Option<usize> {
    let quote = chars[i];
    if chars.get(i + 1) == Some(&quote) {
        return (chars.get(i + 2) != Some(&quote)).then_some(i + 2);
    }
    let mut k = i + 1;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 2,
            '\n' | '\r' => return None,
            c if c == quote => return Some(k + 1),
            _ => k += 1,
        }
    }
    None
}

/// The index after the bracket that closes the one at `i`, strings skipped; `None` when it
/// does not close on this line.
fn group_end(chars: &[char], i: usize) -> Option<usize> {
    let mut depth: Vec<char> = Vec::new();
    let mut k = i;
    while k < chars.len() {
        match chars[k] {
            '(' => depth.push(')'),
            '[' => depth.push(']'),
            '{' => depth.push('}'),
            ')' | ']' | '}' => {
                if depth.pop() != Some(chars[k]) {
                    return None;
                }
                if depth.is_empty() {
                    return Some(k + 1);
                }
            }
            '\'' | '"' => {
                k = string_end(chars, k)?;
                continue;
            }
            '\n' => return None,
            _ => {}
        }
        k += 1;
    }
    None
}

/// The arguments of a call when each is a literal or `name=literal`, joined by `, `.
fn literal_args(inner: &str) -> Option<String> {
    if inner.trim().is_empty() {
        return Some(String::new());
    }
    let mut out = Vec::new();
    for piece in split_top_level(inner)? {
        let piece = piece.trim();
        let (keyword, value) = match piece.split_once('=') {
            Some((k, v)) if is_identifier(k.trim()) && !v.starts_with('=') => (Some(k.trim()), v),
            _ => (None, piece),
        };
        let value = clean_literal(value)?;
        out.push(match keyword {
            Some(k) => format!("{k}={value}"),
            None => value,
        });
    }
    let args = out.join(", ");
    (args.chars().count() <= MAX_VALUE_CHARS).then_some(args)
}

/// `inner` split at its top-level commas (a trailing comma is allowed).
fn split_top_level(inner: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = inner.chars().collect();
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    let mut k = 0;
    while k < chars.len() {
        match chars[k] {
            '\'' | '"' => {
                k = string_end(&chars, k)?;
                continue;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                pieces.push(chars[start..k].iter().collect());
                start = k + 1;
            }
            _ => {}
        }
        k += 1;
    }
    let last: String = chars[start..].iter().collect();
    if !last.trim().is_empty() {
        pieces.push(last);
    }
    (!pieces.is_empty() && pieces.iter().all(|p: &String| !p.trim().is_empty())).then_some(pieces)
}

mod forms;

use forms::{doctests, prose, settle};

#[cfg(test)]
mod tests;

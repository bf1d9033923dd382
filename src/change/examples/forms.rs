//! The forms of the grammar in [`super`]: the prose forms over its tokens, the doctests over
//! its lines, and what is kept when the request says two things of one call.

use super::{Example, Expect, Tok, clean_literal, lex};

/// Words that end an example as a full stop does.
const JOINING: &[&str] = &[
    "and", "but", "or", "for", "when", "while", "if", "so", "then", "whereas", "instead", "not",
    "unlike", "since", "because", "as", "although", "though", "yet", "too", "also", "again",
];
/// Words that turn what follows into a contrast ("returns 'x' but should return 'y'").
const CONTRAST: &[&str] = &[
    "but", "instead", "whereas", "although", "though", "yet", "while", "ought", "expected",
];
/// Words before a call that say it is what happens now, not what is asked.
const CURRENTLY: &[&str] = &[
    "currently",
    "now",
    "today",
    "presently",
    "actually",
    "still",
];
const MODALS: &[&str] = &["should", "must", "will", "shall", "would"];
const TURNS: &[&str] = &[
    "turns",
    "turn",
    "converts",
    "convert",
    "maps",
    "map",
    "transforms",
];

/// An example as read, before [`settle`] decides what to keep.
#[derive(Debug, Clone)]
pub(super) struct ReadExample {
    example: Example,
    /// Said as what must happen (`should return`), not as what happens (`returns`).
    should: bool,
    /// Said as what happens now ("currently f(x) returns ..."): never tested, but it makes
    /// what should happen to the same call a bug report.
    current: bool,
}

fn found(function: &str, args: &str, expect: Expect, should: bool, bug: bool) -> ReadExample {
    ReadExample {
        example: Example {
            function: function.to_string(),
            args: args.to_string(),
            wrap: None,
            expect,
            bug,
            params: Vec::new(),
        },
        should,
        current: false,
    }
}

/// `found` of a call whose result the request wraps: `list(f(x))` is `[...]`.
fn wrapped(mut found: ReadExample, wrap: &Option<String>) -> ReadExample {
    found.example.wrap = wrap.clone();
    found
}

/// Of what the request says of one call, what to test: two different results are a report
/// of what it does and what it should do (the `should` one is kept, as a bug); a conflict
/// that says neither is dropped whole.
pub(super) fn settle(list: Vec<ReadExample>) -> Vec<Example> {
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let agree = |group: &[&ReadExample]| {
        group
            .windows(2)
            .all(|w| w[0].example.expect == w[1].example.expect)
    };
    for item in &list {
        let call = item.example.call();
        if seen.contains(&call) {
            continue;
        }
        seen.push(call.clone());
        let now_said = list.iter().any(|f| f.current && f.example.call() == call);
        let same: Vec<&ReadExample> = list
            .iter()
            .filter(|f| !f.current && f.example.call() == call)
            .collect();
        if same.is_empty() {
            continue;
        }
        if agree(&same) {
            let mut example = same[0].example.clone();
            example.bug = now_said || same.iter().any(|f| f.example.bug);
            out.push(example);
            continue;
        }
        let should: Vec<&ReadExample> = same.iter().copied().filter(|f| f.should).collect();
        if !should.is_empty() && agree(&should) {
            let mut example = should[0].example.clone();
            example.bug = true;
            out.push(example);
        }
    }
    out
}

fn word(toks: &[Tok], k: usize) -> Option<&str> {
    match toks.get(k) {
        Some(Tok::Word(w, _)) => Some(w.as_str()),
        _ => None,
    }
}

fn value(toks: &[Tok], k: usize) -> Option<&str> {
    match toks.get(k) {
        Some(Tok::Value(v)) => Some(v.as_str()),
        _ => None,
    }
}

fn is_word(toks: &[Tok], k: usize, words: &[&str]) -> bool {
    word(toks, k).is_some_and(|w| words.contains(&w))
}

/// Whether an example may end before `k`.
fn ends(toks: &[Tok], k: usize) -> bool {
    matches!(toks.get(k), None | Some(Tok::Stop(_))) || is_word(toks, k, JOINING)
}

/// `returns`, `is`, `==`, ...: the index after it.
fn now(toks: &[Tok], k: usize) -> Option<usize> {
    if matches!(toks.get(k), Some(Tok::Arrow)) {
        return Some(k + 1);
    }
    match word(toks, k)? {
        "returns" | "gives" | "is" | "equals" | "yields" => Some(k + 1),
        "evaluates" if word(toks, k + 1) == Some("to") => Some(k + 2),
        _ => None,
    }
}

/// `should return`, `must be`, ...: the index after it.
fn should(toks: &[Tok], k: usize) -> Option<usize> {
    if !is_word(toks, k, MODALS) {
        return None;
    }
    match word(toks, k + 1)? {
        "return" | "give" | "be" | "equal" | "yield" => Some(k + 2),
        "evaluate" if word(toks, k + 2) == Some("to") => Some(k + 3),
        _ => None,
    }
}

/// A result phrase at `k`: whether it says what should be, and the index after it.
fn result(toks: &[Tok], k: usize) -> Option<(bool, usize)> {
    should(toks, k)
        .map(|j| (true, j))
        .or_else(|| now(toks, k).map(|j| (false, j)))
}

/// `raises`, `should raise a`, ...: the index of the exception's name.
fn raises(toks: &[Tok], k: usize) -> Option<usize> {
    let k = if is_word(toks, k, MODALS) { k + 1 } else { k };
    if !is_word(toks, k, &["raise", "raises", "throw", "throws"]) {
        return None;
    }
    Some(if is_word(toks, k + 1, &["a", "an"]) {
        k + 2
    } else {
        k + 1
    })
}

/// An exception's name at `k`, ending the example.
fn exception(toks: &[Tok], k: usize) -> Option<String> {
    match toks.get(k) {
        Some(Tok::Word(_, name))
            if name.starts_with(|c: char| c.is_ascii_uppercase()) && ends(toks, k + 1) =>
        {
            Some(name.clone())
        }
        _ => None,
    }
}

/// The prose forms, in order; `Named` and calls set the function of the forms without one.
pub(super) fn prose(toks: &[Tok]) -> Vec<ReadExample> {
    let mut out = Vec::new();
    let mut named: Option<&str> = None;
    let mut last_call: Option<(&str, &str, &Option<String>)> = None;
    for (i, tok) in toks.iter().enumerate() {
        match tok {
            Tok::Call(name, args, wrap) => {
                let current = (i.saturating_sub(3)..i).any(|k| is_word(toks, k, CURRENTLY));
                out.extend(call_form(toks, i + 1, name, args, current).map(|f| wrapped(f, wrap)));
                if super::is_function_name(name) {
                    named = Some(name);
                }
                last_call = Some((name, args, wrap));
            }
            Tok::Named(name) => named = Some(name),
            // "a function slugify_title that ...": a snake_case name after such a word.
            Tok::Word(w, _) if matches!(w.as_str(), "function" | "def" | "called" | "named") => {
                if let Some(Tok::Word(_, name)) = toks.get(i + 1)
                    && name.contains('_')
                    && super::is_function_name(name)
                {
                    named = Some(name);
                }
            }
            Tok::Value(_) => out.extend(named.and_then(|f| value_form(toks, i, f))),
            Tok::Word(w, _) if w == "it" && i > 0 && matches!(toks[i - 1], Tok::Stop(_)) => {
                out.extend(
                    last_call
                        .and_then(|(f, a, w)| it_should(toks, i + 1, f, a).map(|x| wrapped(x, w))),
                );
            }
            Tok::Word(w, _) if TURNS.contains(&w.as_str()) => {
                out.extend(named.and_then(|f| turns_form(toks, i + 1, f)));
            }
            _ => {}
        }
    }
    out
}

/// After `CALL`: a result (maybe contrasted) or an exception.
fn call_form(toks: &[Tok], k: usize, name: &str, args: &str, current: bool) -> Option<ReadExample> {
    if let Some(at) = raises(toks, k) {
        let should = is_word(toks, k, MODALS);
        return exception(toks, at)
            .filter(|_| should || !current)
            .map(|e| found(name, args, Expect::Raises(e), should, false));
    }
    let (first_should, j) = result(toks, k)?;
    let first = value(toks, j)?;
    let k = j + 1;
    if let Some((expected, bug)) = contrast(toks, k, first_should, first) {
        return Some(found(name, args, Expect::Returns(expected), true, bug));
    }
    if !ends(toks, k) {
        return None;
    }
    let mut example = found(
        name,
        args,
        Expect::Returns(first.into()),
        first_should,
        false,
    );
    if !first_should && (current || modal_follows(toks, k)) {
        // What it does, said beside what it should do: only the latter is a specification.
        example.current = true;
    }
    Some(example)
}

/// Whether the sentence from `k` on says what should be (a modal verb) or contrasts.
fn modal_follows(toks: &[Tok], k: usize) -> bool {
    toks[k.min(toks.len())..]
        .iter()
        .take_while(|t| !matches!(t, Tok::Stop('.' | '\n' | ';' | '!' | '?')))
        .any(|t| matches!(t, Tok::Word(w, _) if MODALS.contains(&w.as_str()) || CONTRAST.contains(&w.as_str())))
}

/// `..., but (it) should return V2`, `instead of V2`, `, not V2` after a first value: the
/// value that should be, when exactly one of the two is said as what should be.
fn contrast(toks: &[Tok], k: usize, first_should: bool, first: &str) -> Option<(String, bool)> {
    let k0 = if matches!(toks.get(k), Some(Tok::Stop(','))) {
        k + 1
    } else {
        k
    };
    if word(toks, k0) == Some("instead") && word(toks, k0 + 1) == Some("of") {
        let second = value(toks, k0 + 2).filter(|_| ends(toks, k0 + 3))?;
        let expected = if first_should { first } else { second };
        return Some((expected.to_string(), true));
    }
    if first_should && word(toks, k0) == Some("not") {
        value(toks, k0 + 1).filter(|_| ends(toks, k0 + 2))?;
        return Some((first.to_string(), true));
    }
    if word(toks, k0) != Some("but") {
        return None;
    }
    let mut m = k0 + 1;
    if is_word(toks, m, &["it", "instead"]) {
        m += 1;
    }
    let (second_should, j) = result(toks, m)?;
    let second = value(toks, j).filter(|_| ends(toks, j + 1))?;
    match (first_should, second_should) {
        (false, true) => Some((second.to_string(), true)),
        (true, false) => Some((first.to_string(), true)),
        _ => None,
    }
}

/// `It should return V` at the start of a sentence: of the call before it.
fn it_should(toks: &[Tok], k: usize, name: &str, args: &str) -> Option<ReadExample> {
    let j = should(toks, k)?;
    let v = value(toks, j).filter(|_| ends(toks, j + 1))?;
    Some(found(name, args, Expect::Returns(v.into()), true, false))
}

/// `VALUE becomes VALUE`, `VALUE raises EXC`, for the function named last.
fn value_form(toks: &[Tok], i: usize, function: &str) -> Option<ReadExample> {
    let input = value(toks, i)?;
    if i > 0 && is_word(toks, i - 1, TURNS) {
        return None;
    }
    if let Some(at) = raises(toks, i + 1) {
        let should = is_word(toks, i + 1, MODALS);
        return exception(toks, at)
            .map(|e| found(function, input, Expect::Raises(e), should, false));
    }
    let (should, j) = becomes(toks, i + 1)?;
    let output = value(toks, j).filter(|_| ends(toks, j + 1))?;
    Some(found(
        function,
        input,
        Expect::Returns(output.into()),
        should,
        false,
    ))
}

fn becomes(toks: &[Tok], k: usize) -> Option<(bool, usize)> {
    if matches!(toks.get(k), Some(Tok::Arrow)) {
        return Some((false, k + 1));
    }
    match word(toks, k)? {
        "becomes" | "gives" | "yields" => Some((false, k + 1)),
        "maps" if word(toks, k + 1) == Some("to") => Some((false, k + 2)),
        w if MODALS.contains(&w) && is_word(toks, k + 1, &["become", "give"]) => {
            Some((true, k + 2))
        }
        _ => None,
    }
}

/// `turns VALUE into VALUE` (after the verb), for the function named last.
fn turns_form(toks: &[Tok], k: usize, function: &str) -> Option<ReadExample> {
    let input = value(toks, k)?;
    if !is_word(toks, k + 1, &["into", "to"]) {
        return None;
    }
    let output = value(toks, k + 2).filter(|_| ends(toks, k + 3))?;
    Some(found(
        function,
        input,
        Expect::Returns(output.into()),
        false,
        false,
    ))
}

/// `>>> CALL` lines and the output line under each.
pub(super) fn doctests(text: &str) -> Vec<ReadExample> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(source) = line.trim_start().strip_prefix(">>>") else {
            continue;
        };
        let toks = lex(source.trim());
        let [Tok::Call(name, args, wrap)] = toks.as_slice() else {
            continue;
        };
        let Some(output) = lines.get(i + 1).map(|l| l.trim()) else {
            continue;
        };
        let expect = if output.starts_with("Traceback") {
            traceback_exception(&lines[i + 2..]).map(Expect::Raises)
        } else if output.starts_with(">>>") || output.starts_with("...") {
            None
        } else {
            clean_literal(output.trim_matches('`')).map(Expect::Returns)
        };
        out.extend(expect.map(|e| wrapped(found(name, args, e, true, false), wrap)));
    }
    out
}

/// The exception of a doctest traceback: its last line, `Name` or `Name: message`.
fn traceback_exception(rest: &[&str]) -> Option<String> {
    let last = rest
        .iter()
        .take_while(|l| !l.trim().is_empty() && !l.trim_start().starts_with(">>>"))
        .last()?;
    let name = last.trim().split(':').next()?.trim();
    let name = name.rsplit('.').next()?;
    let name_like = name.is_ascii() && crate::python::is_identifier(name);
    (name_like && name.starts_with(|c: char| c.is_ascii_uppercase())).then(|| name.to_string())
}

//! What the model sees for a node: its specification, the code it may use, its file and tests.

use std::collections::BTreeMap;

use crate::fsutil::Workspace;
use crate::llm::{LlmRequest, Message, Role};
use crate::prompts::{self, PromptError, Template};
use crate::rpg::{Node, NodeKind, NodePos, ValidRpg};

pub use crate::python::import_path;

/// The first vote's temperature; vote `i` samples at this plus 0.1·i (the seed's §4.5).
pub(crate) const DIAGNOSE_TEMPERATURE: f32 = 0.3;

/// The node's specification block, shared by every template.
pub(crate) fn describe_node(node: &Node) -> String {
    let file = node.file_path.as_deref().unwrap_or("");
    let mut text = format!(
        "Function name: {}\nSignature: {}\nModule: {} (import path `{}`)\nSpecification:\n{}\n",
        node.name,
        node.signature
            .as_deref()
            .unwrap_or("(choose one that fits the specification)"),
        file,
        import_path(file),
        node.docstring.as_deref().unwrap_or("").trim_end()
    );
    if !node.examples.is_empty() {
        text.push_str("Examples:\n");
        for example in &node.examples {
            text.push_str(example.trim_end());
            text.push('\n');
        }
    }
    text
}

/// The interfaces of the node's direct dependencies in other files, grouped by file: each
/// function's signature and specification as the plan gives them, other kinds (classes) as
/// their file has them. A caller needs the contract, not the body; whole dependency files
/// made the prompt, evaluated at ~35 tokens/s on two cores, the slowest part of a node.
pub(crate) fn dependency_context(
    rpg: &ValidRpg,
    position: NodePos,
    workspace: &Workspace,
) -> String {
    let own = rpg.node(position).file_path.clone();
    let mut by_file: BTreeMap<String, Vec<&Node>> = BTreeMap::new();
    for dep in rpg.graph().dependencies_of(position) {
        let node = rpg.node(dep);
        match &node.file_path {
            Some(file) if node.is_leaf() && Some(file) != own.as_ref() => {
                by_file.entry(file.clone()).or_default().push(node);
            }
            _ => {}
        }
    }
    if by_file.is_empty() {
        return "(none)".into();
    }
    by_file
        .iter()
        .map(|(file, nodes)| {
            let content = workspace.read(file).ok().flatten().unwrap_or_default();
            let interfaces: Vec<String> = nodes
                .iter()
                .filter_map(|n| interface(n, &content))
                .collect();
            format!(
                "# {file} (import path `{}`)\n```python\n{}\n```\n",
                import_path(file),
                interfaces.join("\n\n")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a caller of `node` needs to know, or `None` when its file does not define it: a
/// data node's assignment, a long table cut ([`shortened`]).
fn interface(node: &Node, content: &str) -> Option<String> {
    let units = crate::symbols::split_units(content);
    if node.kind == NodeKind::Data {
        return units
            .iter()
            .find(|u| u.assigned_name() == Some(node.name.as_str()))
            .map(|u| shortened(&u.text));
    }
    let unit = units
        .into_iter()
        .find(|u| u.def_name() == Some(node.name.as_str()))?;
    match (&node.kind, &node.signature) {
        (NodeKind::Function, Some(signature)) => Some(documented_def(
            signature,
            node.docstring.as_deref().unwrap_or("").trim(),
        )),
        _ => Some(unit.text),
    }
}

/// `module` as a prompt shows it: the function `own` in full, every other function cut to its
/// signature, the first line of its docstring and `...`; a long module-level assignment (a
/// data table) cut to its first lines ([`shortened`]); the rest (imports, constants,
/// classes) as it is. What the code may call is what it needs, not how the callees work.
pub(crate) fn module_view(module: &str, own: &str) -> String {
    view_of(module, Own::Whole(own))
}

/// [`module_view`] with the function `left_out` not shown at all: a fix whose answer is begun
/// for it ([`answer_head`]) has the function's signature and specification there, so its
/// failing body says nothing the model should copy; shown the module as it was before the node
/// ([`PromptInputs::before`]), the view is the one its implementation was asked with, a prefix
/// the model's cache already holds.
fn module_view_without(module: &str, left_out: &str) -> String {
    view_of(module, Own::LeftOut(left_out))
}

/// How a view shows the node's own function; every other function is an outline.
#[derive(Clone, Copy)]
enum Own<'a> {
    Whole(&'a str),
    LeftOut(&'a str),
}

fn view_of(module: &str, own: Own) -> String {
    let parts: Vec<String> = crate::symbols::split_units(module)
        .iter()
        .filter(|u| !matches!(own, Own::LeftOut(n) if u.def_name() == Some(n)))
        .map(|u| match u.def_name() {
            Some(name) if !matches!(own, Own::Whole(n) if n == name) && is_function(&u.text) => {
                function_outline(&u.text)
            }
            _ if u.assigned_name().is_some() => shortened(&u.text),
            _ => u.text.clone(),
        })
        .collect();
    match parts.is_empty() {
        true => String::new(),
        false => parts.join("\n\n") + "\n",
    }
}

/// Lines of a module-level assignment a prompt shows before cutting it.
const SHOWN_ASSIGNMENT_LINES: usize = 24;

/// An assignment as a prompt shows it: whole up to [`SHOWN_ASSIGNMENT_LINES`] lines, else its
/// first lines and a comment saying how many more there are. A table of hundreds of entries
/// costs every prompt of its module seconds, and the code needs its shape, not every entry
/// (an answer's copy of the cut table is dropped: see [`crate::edit::shape_correction`]).
fn shortened(assignment: &str) -> String {
    let lines: Vec<&str> = assignment.lines().collect();
    if lines.len() <= SHOWN_ASSIGNMENT_LINES {
        return assignment.to_string();
    }
    let more = lines.len() - SHOWN_ASSIGNMENT_LINES;
    format!(
        "{}
# … {more} more lines of this assignment, not shown",
        lines[..SHOWN_ASSIGNMENT_LINES].join("\n")
    )
}

fn is_function(unit: &str) -> bool {
    unit.lines()
        .map(str::trim_start)
        .find(|l| !l.starts_with('@') && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("def ") || l.starts_with("async def "))
}

/// A function's decorators and signature (up to the `:` that closes it), its docstring's
/// first line, and `...`.
fn function_outline(unit: &str) -> String {
    let lines: Vec<&str> = unit.lines().collect();
    let mut depth = 0i32;
    let mut end = lines.len();
    let mut in_def = false;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        in_def |= trimmed.starts_with("def ") || trimmed.starts_with("async def ");
        if !in_def {
            continue;
        }
        let opened = line.matches(['(', '[']).count() as i32;
        depth += opened - line.matches([')', ']']).count() as i32;
        if depth <= 0 && line.trim_end().ends_with(':') {
            end = i + 1;
            break;
        }
    }
    let mut out: Vec<String> = lines[..end].iter().map(|l| l.to_string()).collect();
    if let Some(first) = lines.get(end).map(|l| l.trim()) {
        let bare = first.trim_start_matches(['r', 'R', 'u', 'U']);
        if let Some(quote) = [r#"""""#, "'''"].into_iter().find(|q| bare.starts_with(q)) {
            let closed = first.matches(quote).count() >= 2;
            out.push(format!("    {first}{}", if closed { "" } else { quote }));
        }
    }
    out.push("    ...".into());
    out.join("\n")
}

/// The values every template may use; `render` picks the ones a template names.
#[derive(Clone)]
pub(crate) struct PromptInputs {
    pub node: String,
    /// What the node's tests are asked to check (role `test`).
    pub tests_asked: TestsAsked,
    pub name: String,
    pub file_path: String,
    pub import_line: String,
    pub context: String,
    pub current: String,
    /// The node's module as it was before this node was written. A fix begun for the model
    /// is shown this, not `current`: the failing candidate's imports and helpers would change
    /// the view's first lines, and the fix's prompt would no longer begin with its
    /// implementation's, the prefix the model's cache holds.
    pub before: String,
    pub tests: String,
    pub failure: String,
    pub attempt: u32,
    /// The lettered options of a diagnosis vote (empty for other roles).
    pub options: String,
    /// How an implementation answer begins ([`answer_head`]); `None` when the plan gives no
    /// signature to begin it with.
    pub head: Option<String>,
    /// What a fix's failure points at outside the function ([`super::suspects`]), ending in
    /// a blank line; empty when it points only at the function (and for other roles).
    pub suspects: String,
}

/// What a node's tests are asked to check.
///
/// Where the plan gives a node examples, they are a gate and the model's expected values are
/// told apart from the code by agreement and votes. Where it gives none, the loop weighs a
/// model test's disputed value as no evidence at all (`engine::node::choice`): a crash is the
/// only verdict it draws from them. Tests with expected values were then tokens without
/// return, and more of them unusable; calls alone are shorter and say what is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestsAsked {
    /// Cases with expected values (`write_tests`).
    Cases,
    /// Calls that assert nothing about the result (`write_probes`): they fail only when the
    /// code raises, or does not raise an error the specification names.
    Probes,
}

/// The start of an implementation answer: the fence, the planned signature and a docstring
/// holding the specification and its examples, so that the model continues with the body.
/// This is the layout code models learn from (a signature, a docstring with `>>>` examples,
/// then the body), the body is conditioned on the contract right above it, and no token is
/// spent re-typing the docstring, which small models do whatever the prompt says. The engine
/// puts the plan's own docstring back afterwards. `None` for anything but a function with a
/// planned signature. `helpers` are the node's planned dependencies ([`call_first`]).
pub(crate) fn answer_head(node: &Node, helpers: &[&Node]) -> Option<String> {
    let signature = node.signature.as_deref().filter(|s| !s.contains('\n'))?;
    if node.kind != NodeKind::Function || signature.trim().is_empty() {
        return None;
    }
    let mut doc = node.docstring.as_deref().unwrap_or("").trim().to_string();
    if !node.examples.is_empty() {
        let examples: Vec<&str> = node.examples.iter().map(|e| e.trim_end()).collect();
        doc = format!("{doc}\n\nExamples:\n{}", examples.join("\n"));
    }
    // Plan text enters code only as an escaped literal: an example's `\n` stays a backslash
    // and an `n`, and no quote in the specification can end the docstring.
    let literal = crate::python::body_docstring_literal(&doc, "    ");
    Some(format!(
        "```python\n{}:\n    {literal}\n{}{}",
        def_line(signature),
        raises_first(&doc),
        call_first(helpers)
    ))
}

const HELPERS_NOTE: &str =
    "# Planned helpers, already written and tested: call them, do not re-write them:";

/// The planned dependencies that are functions, as comments that begin the body, so that the
/// body calls them: an RPG's dependency edge says the function uses the other, and the
/// dependency's code is already written and tested. On subgraphs20 the code used only 11 of
/// 20 planned dependencies (`variance` computed its own mean instead of calling `mean`),
/// against the seed's 80%; the prompt showed their interfaces but never asked for the calls.
fn call_first(helpers: &[&Node]) -> String {
    let calls: Vec<String> = helpers
        .iter()
        .filter(|n| n.kind == NodeKind::Function)
        .filter_map(|n| n.signature.as_deref().filter(|s| !s.contains('\n')))
        .map(|s| {
            let s = s.trim().trim_end_matches(':');
            let s = s.strip_prefix("async ").unwrap_or(s);
            crate::python::comment_text(s.strip_prefix("def ").unwrap_or(s))
        })
        .collect();
    if calls.is_empty() {
        return String::new();
    }
    let mut comments = format!("    {HELPERS_NOTE}\n");
    for call in calls {
        comments.push_str(&format!("    # - {call}\n"));
    }
    comments
}

/// `code` without the [`call_first`] block that the begun answer put in it (the header and
/// the list under it, which the model sometimes goes on with): it asks the model for
/// something and says nothing to a reader of the repository.
pub(crate) fn without_helper_notes(code: &str) -> String {
    let mut in_block = false;
    let mut kept: String = code
        .lines()
        .filter(|line| {
            let line = line.trim();
            in_block = line == HELPERS_NOTE || (in_block && line.starts_with("# - "));
            !in_block
        })
        .collect::<Vec<_>>()
        .join("\n");
    if code.ends_with('\n') {
        kept.push('\n');
    }
    kept
}

/// The documented errors as comments that begin the body, so that the checks come first.
/// On ml_lib, about half of the reference tests failed by passed and needs-review nodes were a
/// documented `ValueError` the code never raised (an empty list fell through to a
/// `ZeroDivisionError`): a condition read in the docstring is easily left out, so it is named
/// again where the body starts. Nothing when the docstring names no error.
///
/// A condition with alternatives ("different lengths or are empty") is listed again one
/// check a line, since the model wrote the first check of such a sentence and left out the
/// rest. Then come the special cases the docstring states ([`crate::python::special_cases`]).
fn raises_first(doc: &str) -> String {
    use crate::python::comment_text;
    let entries = crate::python::documented_raises(doc);
    let cases = crate::python::special_cases(doc);
    let mut comments = String::new();
    if !entries.is_empty() {
        comments.push_str("    # First raise what the docstring documents:\n");
    }
    for entry in &entries {
        comments.push_str(&format!("    # - {}\n", comment_text(entry)));
        for check in crate::python::raise_conditions(entry) {
            comments.push_str(&format!("    #   - check: {}\n", comment_text(&check)));
        }
    }
    if !cases.is_empty() {
        comments
            .push_str("    # Special cases the docstring states (each needs its own branch):\n");
    }
    for case in &cases {
        comments.push_str(&format!("    # - {}\n", comment_text(case)));
    }
    comments
}

/// `def SIGNATURE` (the plan may give the signature with or without `def` and the colon).
fn def_line(signature: &str) -> String {
    let signature = signature.trim().trim_end_matches(':');
    match signature.starts_with("def ") || signature.starts_with("async def ") {
        true => signature.to_string(),
        false => format!("def {signature}"),
    }
}

/// `def SIGNATURE:` with `doc` as its docstring, indented.
fn documented_def(signature: &str, doc: &str) -> String {
    let body: String = doc
        .lines()
        .map(|l| format!("    {l}").trim_end().to_string() + "\n")
        .collect();
    format!("{}:\n    \"\"\"\n{body}    \"\"\"", def_line(signature))
}

/// The token limit of a probes answer. Three calls are asked: on the dev half of the corpus
/// the probes of a plan without examples cost as many generated tokens as its
/// implementations (intervals-noexamples: 2,071 against 1,823), four calls at most 196
/// tokens, and longer answers repeated a call until cut off.
const PROBES_MAX_TOKENS: u32 = 240;

/// The first answer is the most likely one; retries sample, so they are not the same answer
/// again (seeded by the attempt, so a rerun is reproducible).
fn temperature_of(attempt: u32) -> f32 {
    if attempt == 0 { 0.0 } else { 0.4 }
}

/// How a probes answer begins: the fence, the imports every probe needs and the first probe
/// up to its call, so that the model writes calls (the 1.5B model, asked for calls without
/// asserts, still wrote expected values) and not the function under test again.
fn probes_head(import_line: &str, name: &str) -> String {
    format!("```python\nimport pytest\n{import_line}\n\n\ndef test_{name}_typical():\n    {name}(")
}

pub fn request(
    node_id: &str,
    role: Role,
    attempt: u32,
    inputs: &PromptInputs,
) -> Result<LlmRequest, PromptError> {
    // Tests are asked again, with why they were wrong, only after the vote blamed them.
    let rewrite = role == Role::Test && !inputs.failure.is_empty();
    let probes = role == Role::Test && !rewrite && inputs.tests_asked == TestsAsked::Probes;
    let template: Template = match role {
        Role::Test if rewrite => prompts::REWRITE_TESTS,
        Role::Test if probes => prompts::WRITE_PROBES,
        Role::Test => prompts::WRITE_TESTS,
        Role::Impl => prompts::WRITE_IMPL,
        Role::Fix => prompts::FIX_IMPL,
        Role::Diagnose => prompts::DIAGNOSE,
    };
    let mut values: BTreeMap<&str, String> = BTreeMap::new();
    values.insert("node", inputs.node.clone());
    // The vote judges the code against the specification: it needs neither the name of
    // what to write nor the code that may be called.
    if role != Role::Diagnose {
        values.insert("name", inputs.name.clone());
        values.insert("context", inputs.context.clone());
    }
    match role {
        Role::Test => {
            values.insert("import_line", inputs.import_line.clone());
        }
        Role::Impl | Role::Fix | Role::Diagnose => {
            values.insert("file_path", inputs.file_path.clone());
            // A fix whose answer is begun for it is written afresh from the failure: shown its
            // failing body, the 1.5B model copied it back (9 of 9 fix answers in one ml_lib
            // run), so the function is left out of the view (its head begins the answer).
            let view = match (role, &inputs.head) {
                (Role::Fix, Some(_)) => module_view_without(&inputs.before, &inputs.name),
                _ => module_view(&inputs.current, &inputs.name),
            };
            values.insert("current", view);
        }
    }
    match role {
        Role::Fix => {
            values.insert("tests", inputs.tests.clone());
            values.insert("failure", inputs.failure.clone());
            values.insert("attempt", inputs.attempt.to_string());
            values.insert("suspects", inputs.suspects.clone());
        }
        Role::Diagnose => {
            values.insert("tests", inputs.tests.clone());
            values.insert("failure", inputs.failure.clone());
            values.insert("options", inputs.options.clone());
        }
        Role::Test if rewrite => {
            values.insert("tests", inputs.tests.clone());
            values.insert("failure", inputs.failure.clone());
        }
        Role::Test | Role::Impl => {}
    }
    let user = template.render(&values)?;
    let (system, temperature, max_tokens) = match role {
        // The votes are spread over temperatures by `LlmRequest::candidate`; one letter.
        Role::Diagnose => (prompts::DIAGNOSE_SYSTEM, DIAGNOSE_TEMPERATURE, 8),
        // Three calls fit in far less than a case file; a runaway answer stops sooner (the
        // complete tests of a cut-off answer are kept).
        Role::Test if probes => (prompts::SYSTEM, temperature_of(attempt), PROBES_MAX_TOKENS),
        _ => (prompts::SYSTEM, temperature_of(attempt), 1024),
    };
    Ok(LlmRequest {
        node_id: node_id.to_string(),
        role,
        attempt,
        messages: vec![
            Message {
                role: "system".into(),
                content: system.into(),
            },
            Message {
                role: "user".into(),
                content: user,
            },
        ],
        temperature,
        max_tokens,
        seed: Some(u64::from(attempt)),
        template: template.label(),
        candidate: 0,
        prefill: match role {
            Role::Impl | Role::Fix => inputs.head.clone(),
            Role::Test if probes => Some(probes_head(&inputs.import_line, &inputs.name)),
            Role::Test | Role::Diagnose => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dependency_is_shown_as_its_interface_when_its_file_defines_it() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "id": "n", "name": "scale", "type": "function", "node_type": "leaf", "file_path": "m.py",
            "signature": "scale(x: float) -> float", "docstring": "Double x.\n\nArgs:\n    x: A number."
        }))
        .unwrap();
        let content = "import math\n\ndef scale(x: float) -> float:\n    return 2 * x\n";
        assert_eq!(
            interface(&node, content).unwrap(),
            "def scale(x: float) -> float:\n    \"\"\"\n    Double x.\n\n    Args:\n        x: A number.\n    \"\"\""
        );
        assert_eq!(interface(&node, "import math\n"), None);
    }

    #[test]
    fn a_data_dependency_is_shown_as_its_assignment_and_a_long_table_is_cut() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "id": "d", "name": "UNITS", "type": "data", "node_type": "leaf", "file_path": "m.py",
            "docstring": "Metres per unit."
        }))
        .unwrap();
        let content = "import math\n\n# Metres per unit.\nUNITS = {'m': 1.0}\n\n\ndef f():\n    return UNITS\n";
        assert_eq!(
            interface(&node, content).unwrap(),
            "# Metres per unit.\nUNITS = {'m': 1.0}"
        );
        assert_eq!(interface(&node, "UNITS_OTHER = 1\n"), None);
        let entries: Vec<String> = (0..40).map(|i| format!("    'u{i}': {i},")).collect();
        let table = format!("BIG = {{\n{}\n}}\n", entries.join("\n"));
        let view = module_view(&format!("{table}\n\ndef g():\n    return BIG\n"), "g");
        assert!(view.starts_with("BIG = {\n    'u0': 0,\n"), "{view}");
        assert!(
            view.contains(
                "    'u22': 22,\n# … 18 more lines of this assignment, not shown\n\ndef g():"
            ),
            "{view}"
        );
        assert!(!view.contains("'u23'"), "{view}");
    }

    #[test]
    fn an_implementation_answer_begins_with_the_signature_and_the_specification() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "id": "n", "name": "split", "type": "function", "node_type": "leaf", "file_path": "m.py",
            "signature": "def split(text: str) -> list[str]:", "docstring": "Split on \"\"\"newlines\"\"\".\n\nArgs:\n    text: Text.",
            "examples": [">>> split(\"a\\nb\")\n['a', 'b']"]
        }))
        .unwrap();
        assert_eq!(
            answer_head(&node, &[]).unwrap(),
            "```python\ndef split(text: str) -> list[str]:\n    \"\"\"Split on \\\"\\\"\\\"newlines\\\"\\\"\\\".\n\n    Args:\n        text: Text.\n\n    Examples:\n    >>> split(\"a\\\\nb\")\n    ['a', 'b']\n    \"\"\"\n"
        );
        let class = Node {
            kind: "class".into(),
            ..node.clone()
        };
        assert_eq!(answer_head(&class, &[]), None);
        let unsigned = Node {
            signature: None,
            ..node
        };
        assert_eq!(answer_head(&unsigned, &[]), None);
    }

    #[test]
    fn planned_function_dependencies_begin_the_body_as_calls_to_make() {
        let node = |name: &str, kind: &str, signature: &str| -> Node {
            serde_json::from_value(serde_json::json!({
                "id": name, "name": name, "type": kind, "node_type": "leaf", "file_path": "m.py",
                "signature": signature, "docstring": "Doc."
            }))
            .unwrap()
        };
        let variance = node(
            "variance",
            "function",
            "def variance(xs: list[float]) -> float:",
        );
        let mean = node("mean", "function", "def mean(xs: list[float]) -> float");
        let table = node("Table", "class", "class Table");
        let sneaky = node("x", "function", "x(a)\rimport os");
        let head = answer_head(&variance, &[&mean, &table, &sneaky]).unwrap();
        assert!(
            head.ends_with(
                "\"\"\"Doc.\"\"\"\n    # Planned helpers, already written and tested: call them, do not \
                 re-write them:\n    # - mean(xs: list[float]) -> float\n    # - x(a) import os\n"
            ),
            "{head}"
        );
        let answer = format!(
            "{head}    # - median(xs: list[float]) -> float\n    return sum((x - mean(xs)) ** 2 for x in xs)\n    # - keep me\n"
        );
        let kept = without_helper_notes(&answer);
        assert!(
            kept.ends_with("\"\"\"Doc.\"\"\"\n    return sum((x - mean(xs)) ** 2 for x in xs)\n    # - keep me\n"),
            "{kept}"
        );
        // Without planned functions the head is as before.
        assert!(
            answer_head(&variance, &[&table])
                .unwrap()
                .ends_with("\"\"\"Doc.\"\"\"\n")
        );
    }

    #[test]
    fn documented_errors_begin_the_body_as_comments_that_plan_text_cannot_leave() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "id": "n", "name": "mean", "type": "function", "node_type": "leaf", "file_path": "m.py",
            "signature": "def mean(xs: list[float]) -> float",
            "docstring": "Mean.\n\nRaises:\n    ValueError: If xs is\n        empty.\n    TypeError: If x\rimport os"
        }))
        .unwrap();
        let head = answer_head(&node, &[]).unwrap();
        assert!(
            head.ends_with("    \"\"\"\n    # First raise what the docstring documents:\n    # - ValueError: If xs is empty.\n    # - TypeError: If x import os\n"),
            "{head}"
        );
    }

    #[test]
    fn each_alternative_of_a_documented_error_and_each_special_case_is_a_comment_line() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "id": "n", "name": "spread", "type": "function", "node_type": "leaf", "file_path": "m.py",
            "signature": "def spread(xs: list[float]) -> float",
            "docstring": "Range of xs over its mean.\n\nWhen all values are equal the result\nis 0.0.\n\nRaises:\n    ValueError: If xs has NaN or is empty.\n\nExamples:\n>>> spread([1.0])\n0.0"
        }))
        .unwrap();
        let head = answer_head(&node, &[]).unwrap();
        assert!(
            head.ends_with(
                "    \"\"\"\n    # First raise what the docstring documents:\n    \
                 # - ValueError: If xs has NaN or is empty.\n    #   - check: xs has NaN\n    \
                 #   - check: xs is empty\n    # Special cases the docstring states (each needs \
                 its own branch):\n    # - When all values are equal the result is 0.0.\n"
            ),
            "{head}"
        );
    }

    #[test]
    fn a_fix_begun_for_the_model_does_not_show_the_failing_body() {
        let inputs = |head: Option<&str>| PromptInputs {
            node: "Function name: own\n".into(),
            tests_asked: TestsAsked::Cases,
            name: "own".into(),
            file_path: "m.py".into(),
            import_line: "from m import own".into(),
            context: "(none)".into(),
            current: "def own():\n    \"\"\"Return one.\"\"\"\n    return 2\n".into(),
            before: "def own():\n    \"\"\"Return one.\"\"\"\n    return 2\n".into(),
            tests: "def test_own():\n    assert own() == 1\n".into(),
            failure: "assert 2 == 1".into(),
            attempt: 1,
            options: String::new(),
            head: head.map(str::to_string),
            suspects: String::new(),
        };
        let user = |r: LlmRequest| r.messages[1].content.clone();
        let begun = request("n", Role::Fix, 1, &inputs(Some("```python\ndef own():\n"))).unwrap();
        assert_eq!(begun.prefill.as_deref(), Some("```python\ndef own():\n"));
        assert!(!user(begun).contains("return 2"));
        let whole = request("n", Role::Fix, 1, &inputs(None)).unwrap();
        assert!(user(whole).contains("return 2"));
        let tests = request("n", Role::Test, 0, &inputs(Some("x"))).unwrap();
        assert_eq!(tests.prefill, None);
    }

    #[test]
    fn nodes_of_one_module_share_its_view_and_a_fix_its_implementation_prompt_as_a_prefix() {
        let inputs = |name: &str, (before, current): (&str, &str), failure: &str| PromptInputs {
            node: format!("Function name: {name}\n"),
            tests_asked: TestsAsked::Cases,
            name: name.into(),
            file_path: "m.py".into(),
            import_line: format!("from m import {name}"),
            context: "(none)".into(),
            current: current.into(),
            before: before.into(),
            tests: "def test_it():\n    assert a() == 1\n".into(),
            failure: failure.into(),
            attempt: 1,
            options: String::new(),
            head: Some(format!("```python\ndef {name}():\n")),
            suspects: String::new(),
        };
        let user = |role: Role, i: &PromptInputs| {
            request("n", role, 0, i).unwrap().messages[1]
                .content
                .clone()
        };
        let before = "import math\n\n\ndef z():\n    \"\"\"Zed.\"\"\"\n    return math.pi\n";
        let impl_a = user(Role::Impl, &inputs("a", (before, before), ""));
        // The fix of `a` is asked with the whole head of its implementation's prompt (the
        // view, the specification, the context), though the failing candidate is in the
        // module with an import of its own at the top.
        let with_a = format!("import collections\n{before}\n\ndef a():\n    return 2\n");
        let fix_a = user(Role::Fix, &inputs("a", (before, &with_a), "assert 2 == 1"));
        let head = impl_a.split("Task:").next().unwrap();
        assert!(fix_a.starts_with(head), "{fix_a}");
        assert!(!fix_a.contains("return 2"), "{fix_a}");
        // The next node of the module begins with everything the module held before.
        let fixed = format!("{before}\n\ndef a():\n    return 1\n");
        let impl_b = user(Role::Impl, &inputs("b", (&fixed, &fixed), ""));
        let view_end = impl_a.find("\n```\n").unwrap();
        assert!(impl_b.starts_with(&impl_a[..view_end]), "{impl_b}");
        assert!(impl_b.contains("def a():\n    ...\n"), "{impl_b}");
    }

    #[test]
    fn without_examples_the_tests_asked_are_calls_begun_with_their_imports() {
        let inputs = |asked: TestsAsked, failure: &str| PromptInputs {
            node: "Function name: own\n".into(),
            tests_asked: asked,
            name: "own".into(),
            file_path: "m.py".into(),
            import_line: "from m import own".into(),
            context: "(none)".into(),
            current: String::new(),
            before: String::new(),
            tests: String::new(),
            failure: failure.into(),
            attempt: 0,
            options: String::new(),
            head: None,
            suspects: String::new(),
        };
        let probes = request("n", Role::Test, 0, &inputs(TestsAsked::Probes, "")).unwrap();
        assert_eq!(probes.template, prompts::WRITE_PROBES.label());
        assert_eq!(
            probes.prefill.as_deref(),
            Some(
                "```python\nimport pytest\nfrom m import own\n\n\ndef test_own_typical():\n    own("
            )
        );
        assert_eq!(probes.max_tokens, PROBES_MAX_TOKENS);
        let cases = request("n", Role::Test, 0, &inputs(TestsAsked::Cases, "")).unwrap();
        assert_eq!(cases.template, prompts::WRITE_TESTS.label());
        assert_eq!((cases.prefill, cases.max_tokens), (None, 1024));
        // Tests blamed by a vote are rewritten as cases whatever was asked first.
        let rewrite = request("n", Role::Test, 1, &inputs(TestsAsked::Probes, "E 1 != 2")).unwrap();
        assert_eq!(rewrite.template, prompts::REWRITE_TESTS.label());
    }

    #[test]
    fn other_functions_of_the_module_are_shown_as_outlines() {
        let module = "import math\n\n\n@cache\ndef a(x: int,\n      y: int) -> int:\n    \"\"\"Add them.\n\n    More.\n    \"\"\"\n    return x + y\n\n\ndef b() -> None:\n    '''One line.'''\n    pass\n\n\ndef own():\n    return 1\n";
        assert_eq!(
            module_view(module, "own"),
            "import math\n\n@cache\ndef a(x: int,\n      y: int) -> int:\n    \"\"\"Add them.\"\"\"\n    ...\n\ndef b() -> None:\n    '''One line.'''\n    ...\n\ndef own():\n    return 1\n"
        );
        assert_eq!(module_view("", "own"), "");
    }

    #[test]
    fn import_paths_follow_the_layout() {
        assert_eq!(
            import_path("src/ml_lib/data/loader.py"),
            "ml_lib.data.loader"
        );
        assert_eq!(import_path("pkg/mod.py"), "pkg.mod");
        assert_eq!(import_path("src/pkg/__init__.py"), "pkg");
    }
}

//! The requests `zerorepo code` sends: the plan, one file task, one correction. Pure.
//!
//! Scripted answers and recordings key on `node_id` and role: the plan is asked as node
//! `plan` (role `impl`, attempt 1 for the second try), a file task as its task id (role
//! `impl`; attempt N for its Nth asking again), a correction as node `correct` (role `fix`,
//! attempt = the rounds spent so far, from 0), the calls of a new function as node `probe`
//! (role `test`), the tests that reproduce a request as node `reproduce` (role `test`).
//!
//! Every request is built to the token budget ([`super::budget`]): the answer's room is
//! chosen first, then the prompt's long parts are cut to what is left: a check's output to
//! its failures ([`super::failures`]), the file to what the task touches ([`super::focus`]),
//! the files beside it likewise, the list of files to its head. A file shown cut is answered
//! by symbol ([`Form::Symbols`]), never whole: a whole answer would drop what was hidden.

use std::collections::BTreeMap;

use super::Check;
use super::answer::{Form, MAX_SEARCH_LINES};
use super::budget::{self, TooLarge, bytes, head, tokens};
use super::focus::{Focus, show};
use super::plan::{ChangePlan, Task};
use super::start::{self, Start};
use crate::llm::{LlmRequest, Message, Role, estimate_tokens};
use crate::prompts::{self, PromptError, Template};

/// Files of more lines than this are changed by symbol or with short SEARCH blocks, not
/// rewritten whole (a small model re-typing a long file drops parts of it, or runs out of
/// tokens).
const WHOLE_FILE_LINES: usize = 200;

/// How much of a file one answer may give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Extent {
    /// A short file whole or in part, whichever fits; a long one in part.
    AsFits,
    /// In part only: a whole answer for this file could not be used for what it re-typed
    /// (names dropped or shadowed: [`super::staging::Unusable::next_extent`]).
    InPart,
}

/// Characters of a check's output quoted in a prompt at most (cut to its failures).
pub(super) const ERROR_CHARS: usize = 6_000;

/// Tokens left unused by the first cut, for the headings around the parts.
const SLACK_TOKENS: u64 = 48;

pub(super) const PLAN_NODE: &str = "plan";
pub(super) const CORRECT_NODE: &str = "correct";
pub(super) const PROBE_NODE: &str = "probe";
pub(super) const REPRODUCE_NODE: &str = "reproduce";
const RIVAL_NODE: &str = "rival";

/// Tokens of a probes answer: four short calls (generate asks three, within 240).
const PROBE_ANSWER_TOKENS: u32 = 320;
/// Tokens of a version of a new function: a short function with its docstring.
const RIVAL_ANSWER_TOKENS: u32 = 400;
/// The most of the module a version's prompt shows: what the function may call, not the
/// whole module (its prompt is evaluated once per run).
const RIVAL_MODULE_BYTES: usize = 6_000;
/// Versions are sampled as answers asked again are ([`retry_temperature`]).
const RIVAL_TEMPERATURE: f32 = 0.7;

/// Tokens of a reproduction answer: three short tests.
const REPRODUCE_ANSWER_TOKENS: u32 = 400;

/// Why a request could not be built.
#[derive(Debug, thiserror::Error)]
pub(super) enum FitError {
    #[error(transparent)]
    Template(#[from] PromptError),
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
}

pub(super) fn plan_request(
    spec: &str,
    files: &[String],
    diagnosis: Option<&Check>,
    retry: Option<&str>,
) -> Result<LlmRequest, FitError> {
    let mut spec = spec.to_string();
    if let Some(why) = retry {
        spec.push_str(&format!(
            "\n\n(Your previous plan could not be used: {why}. Answer with the JSON list only.)"
        ));
    }
    let build = |listing: String, diagnosis: String| {
        let values = BTreeMap::from([
            ("spec", spec.clone()),
            ("files", listing),
            ("diagnosis", diagnosis),
        ]);
        let mut request = request(
            &prompts::CODE_PLAN,
            &values,
            PLAN_NODE,
            Role::Impl,
            0,
            budget::PLAN_ANSWER_TOKENS,
        )?;
        request.attempt = u32::from(retry.is_some());
        request.prefill = Some("```json\n[".into());
        Ok::<_, PromptError>(request)
    };
    let room = room(&build(String::new(), String::new())?, "the plan's prompt")?;
    let diagnosis = match diagnosis {
        Some(check) if check.passed => format!("`{}` passes.", check.command),
        Some(check) => {
            let output = super::failures::relevant(&check.output, bytes(room / 2).min(ERROR_CHARS));
            format!("`{}` fails:\n```\n{output}\n```", check.command)
        }
        None => "(no check command was found)".into(),
    };
    let listing = listing(files, bytes(room).saturating_sub(diagnosis.len()));
    let request = build(listing, diagnosis)?;
    budget::check(&request, "the plan's prompt")?;
    Ok(request)
}

/// The files, one a line, cut to `max` bytes.
fn listing(files: &[String], max: usize) -> String {
    if files.is_empty() {
        return "(none: the directory is empty, so every task creates a file)".to_string();
    }
    head(&files.join("\n"), max)
}

/// One file task: the task, the files of the tasks it depends on, the file's current text;
/// `retry` is why the previous answer could not be used.
pub(super) struct EditAsk<'a> {
    pub spec: &'a str,
    pub task: &'a Task,
    pub current: &'a str,
    pub context: &'a [(String, String)],
    pub retry: Option<&'a str>,
    pub attempt: u32,
    pub extent: Extent,
}

pub(super) fn edit_request(ask: &EditAsk<'_>) -> Result<(LlmRequest, Form), FitError> {
    let path = ask.task.path.clone().unwrap_or_default();
    let focus = Focus::of(&format!("{}\n{}", ask.task.description, ask.spec), &path);
    let what = format!("task {}'s prompt", ask.task.id);
    let start = start::for_task(&path, ask.spec, &ask.task.description, ask.current);
    let forms = forms(&path, ask.current, ask.extent);
    for (i, form) in forms.iter().copied().enumerate() {
        let build = |current: String, context: String| {
            let values = BTreeMap::from([
                ("spec", ask.spec.to_string()),
                ("kind", ask.task.kind.as_str().to_string()),
                ("path", path.clone()),
                ("description", ask.task.description.clone()),
                ("context", context),
                ("current", current),
                ("retry", retry_note(ask.retry)),
                (
                    "answer_format",
                    answer_format(form, &path, ask.current.is_empty()),
                ),
            ]);
            let max = answer_tokens(form, ask.current);
            let mut request = request(
                &prompts::CODE_EDIT,
                &values,
                &ask.task.id.0,
                Role::Impl,
                ask.attempt,
                max,
            )?;
            request.temperature = retry_temperature(ask.retry, request.temperature);
            request.prefill = prefill(form, &path, start.as_ref());
            Ok::<_, PromptError>(request)
        };
        let parts = Parts {
            path: &path,
            current: ask.current,
            context: ask.context,
            focus: &focus,
            whole_only: form == Form::Whole,
        };
        match fit(&build, &parts, &what) {
            Ok(Some(request)) => return Ok((request, form)),
            Ok(None) | Err(FitError::TooLarge(_)) if i + 1 < forms.len() => continue,
            Ok(None) => break,
            Err(e) => return Err(e),
        }
    }
    // The last form always fits or says why; a whole file that does not fit falls to it.
    Err(TooLarge {
        what,
        needed: tokens(ask.current),
        limit: budget::prompt_limit(budget::ANCHORED_ANSWER_TOKENS),
        answer: budget::ANCHORED_ANSWER_TOKENS,
    }
    .into())
}

/// What failed: a check's command line (or a task's kind) and its output.
pub(super) struct FailedCheck<'a> {
    pub command: &'a str,
    pub output: &'a str,
}

/// A correction of the file `path` after a check failed; `context` are the other files the
/// change touched, shown but not to be rewritten; `retry` is why the previous answer could
/// not be used.
pub(super) struct Correction<'a> {
    pub spec: &'a str,
    pub plan: &'a ChangePlan,
    pub failure: FailedCheck<'a>,
    pub path: &'a str,
    pub current: &'a str,
    pub context: &'a [(String, String)],
    pub retry: Option<&'a str>,
    pub round: u32,
    /// How the answer begins when it must be one new definition: a function the change
    /// added, written again ([`super::fresh`]), or one a check could not import from the
    /// file ([`start::for_missing`]). By symbol, at its `def`.
    pub added: Option<&'a Start>,
    pub extent: Extent,
    /// The functions the change names that its new definitions do not use
    /// ([`super::built_on`]): lines, or empty.
    pub unused: &'a str,
}

pub(super) fn correct_request(ask: &Correction<'_>) -> Result<(LlmRequest, Form), FitError> {
    let tasks = head(
        &task_list(ask.plan),
        bytes(budget::prompt_limit(budget::ANCHORED_ANSWER_TOKENS) / 8),
    );
    let start = match ask.added {
        Some(start) => Some(start.clone()),
        None => start::for_correction(ask.failure.output, ask.current, ask.round),
    };
    let build_with = |error: String, current: String, context: String, form: Form| {
        let values = BTreeMap::from([
            ("spec", ask.spec.to_string()),
            ("tasks", tasks.clone()),
            ("command", ask.failure.command.to_string()),
            ("error", error),
            // Apart from the output above it, when there is one.
            (
                "unused",
                match ask.unused {
                    "" => String::new(),
                    note => format!("\n{note}"),
                },
            ),
            ("context", context),
            ("path", ask.path.to_string()),
            ("current", current),
            ("retry", retry_note(ask.retry)),
            (
                "answer_format",
                answer_format(form, ask.path, ask.current.is_empty()),
            ),
        ]);
        let mut request = request(
            &prompts::CODE_CORRECT,
            &values,
            CORRECT_NODE,
            Role::Fix,
            ask.round,
            answer_tokens(form, ask.current),
        )?;
        request.temperature = retry_temperature(ask.retry, 0.3);
        request.prefill = prefill(form, ask.path, start.as_ref());
        Ok::<_, PromptError>(request)
    };
    let what = format!("the correction of {}", ask.path);
    let forms = match ask.added {
        Some(_) => vec![Form::Symbols],
        None => forms(ask.path, ask.current, ask.extent),
    };
    let mut last = None;
    for (i, form) in forms.iter().copied().enumerate() {
        let bare = build_with(String::new(), String::new(), String::new(), form)?;
        let error_room = match room(&bare, &what) {
            Ok(room) => room * 2 / 5,
            Err(e) if i + 1 < forms.len() => {
                last = Some(e);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let error =
            super::failures::relevant(ask.failure.output, bytes(error_room).min(ERROR_CHARS));
        // A function written again is written from the request: what it names is shown.
        let spec = ask.added.map_or("", |_| ask.spec);
        let focus = Focus::of(
            &format!("{spec}\n{}\n{error}", ask.failure.output),
            ask.path,
        );
        let build =
            |current: String, context: String| build_with(error.clone(), current, context, form);
        let parts = Parts {
            path: ask.path,
            current: ask.current,
            context: ask.context,
            focus: &focus,
            whole_only: form == Form::Whole,
        };
        match fit(&build, &parts, &what) {
            Ok(Some(request)) => return Ok((request, form)),
            Ok(None) => {}
            Err(FitError::TooLarge(e)) if i + 1 < forms.len() => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last
        .unwrap_or(TooLarge {
            what,
            needed: tokens(ask.current),
            limit: budget::prompt_limit(budget::ANCHORED_ANSWER_TOKENS),
            answer: budget::ANCHORED_ANSWER_TOKENS,
        })
        .into())
}

/// The tasks of the plan, one a line.
fn task_list(plan: &ChangePlan) -> String {
    plan.tasks
        .iter()
        .map(|t| {
            let target = t
                .path
                .as_deref()
                .or(t.command.as_deref())
                .unwrap_or_default();
            format!("- {} {target}: {}", t.kind.as_str(), t.description)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The long parts of a file prompt.
struct Parts<'a> {
    path: &'a str,
    current: &'a str,
    context: &'a [(String, String)],
    focus: &'a Focus,
    /// The form answers whole: the file must be shown whole, or this form does not fit.
    whole_only: bool,
}

/// The request `build` makes with the file and its context cut to fit; `None` when the form
/// needs the whole file and it does not fit; `Err` when not even the bare prompt fits.
fn fit(
    build: &dyn Fn(String, String) -> Result<LlmRequest, PromptError>,
    parts: &Parts<'_>,
    what: &str,
) -> Result<Option<LlmRequest>, FitError> {
    let bare = build(String::new(), String::new())?;
    let mut room = room(&bare, what)?;
    for _ in 0..4 {
        let file_room = match parts.context.is_empty() {
            true => room,
            false => room * 2 / 3,
        };
        let shown = show(parts.path, parts.current, parts.focus, bytes(file_room));
        if parts.whole_only && !shown.whole {
            return Ok(None);
        }
        let current = current_text(parts.path, parts.current, &shown.text, shown.whole);
        let context_room = bytes(room.saturating_sub(tokens(&current)));
        let context = related(parts.context, parts.focus, context_room);
        let request = build(current, context)?;
        if budget::fits(&request) {
            return Ok(Some(request));
        }
        room = room * 4 / 5;
    }
    Ok(None)
}

/// The tokens left for the long parts beside `bare` (the prompt without them); `Err` when
/// `bare` leaves too little.
fn room(bare: &LlmRequest, what: &str) -> Result<u64, TooLarge> {
    let limit = budget::prompt_limit(bare.max_tokens);
    let used = budget::prompt_tokens(bare) + SLACK_TOKENS;
    match limit.checked_sub(used) {
        Some(room) if room >= budget::MIN_ROOM_TOKENS / 4 => Ok(room),
        _ => Err(TooLarge {
            what: format!("{what}, without the file and the error,"),
            needed: used,
            limit,
            answer: bare.max_tokens,
        }),
    }
}

/// The forms to try for `path`, first the preferred: whole for new and short files (by
/// symbol when the whole does not fit), by symbol or SEARCH for long ones and for any file
/// asked [`Extent::InPart`].
///
/// A short file is asked whole even when the answer could be begun at one definition: begun
/// by symbol, the code corpus's dev half (five requests on short modules) lost one correct
/// change and gained none (reports/code-corpus.md).
fn forms(path: &str, current: &str, extent: Extent) -> Vec<Form> {
    let partial = match path.ends_with(".py") {
        true => Form::Symbols,
        false => Form::Search,
    };
    if current.is_empty() {
        vec![Form::Whole]
    } else if current.lines().count() > WHOLE_FILE_LINES || extent == Extent::InPart {
        vec![partial]
    } else {
        vec![Form::Whole, partial]
    }
}

/// The room the answer gets: a whole file written again and some, or a few definitions.
fn answer_tokens(form: Form, current: &str) -> u32 {
    match form {
        Form::Whole if current.is_empty() => budget::NEW_FILE_ANSWER_TOKENS,
        Form::Whole => (estimate_tokens(current) * 3 / 2 + 256).clamp(512, 4_096) as u32,
        Form::Symbols | Form::Search => budget::ANCHORED_ANSWER_TOKENS,
    }
}

/// How the answer begins: a whole file at its fence; one by symbol at the definition the
/// evidence names, when it names one ([`Start`]).
fn prefill(form: Form, path: &str, start: Option<&Start>) -> Option<String> {
    match (form, start) {
        (Form::Whole, _) => Some(format!("```{}\n", language(path))),
        (Form::Symbols, Some(start)) => Some(start.prefill()),
        (Form::Symbols | Form::Search, _) => None,
    }
}

/// How the answer must look.
fn answer_format(form: Form, path: &str, new: bool) -> String {
    match form {
        Form::Whole if new => {
            format!(
                "Answer with the complete content of {path} in one fenced block, and nothing else."
            )
        }
        Form::Whole => format!(
            "Answer with the complete new content of {path} in one fenced block, and nothing \
             else. Keep everything the task does not ask to change."
        ),
        Form::Symbols => format!(
            "Answer with only what changes, as blocks, and nothing else; every other line of \
             {path} stays as it is:\n\
             - a new function or class: a line `ADD AFTER name` (the definition it follows) or \
             `ADD AT END`, then a ```python block with only the new definition;\n\
             - a changed function or class: a line `REPLACE name`, then a ```python block with \
             its whole new definition (its `def` line, docstring and body);\n\
             - another changed line (an import, a constant): a SEARCH/REPLACE block: a line \
             `<<<<<<< SEARCH`, at most {MAX_SEARCH_LINES} lines copied exactly from the file, \
             `=======`, the lines that replace them, `>>>>>>> REPLACE`.\n\
             Never copy a definition you do not change, and never the lines marked `not shown`."
        ),
        Form::Search => format!(
            "Answer with SEARCH/REPLACE blocks for {path}, and nothing else: each is a line \
             `<<<<<<< SEARCH`, at most {MAX_SEARCH_LINES} lines copied exactly from the current \
             content, `=======`, the lines that replace them, `>>>>>>> REPLACE`. Quote only the \
             lines that change and a line around them."
        ),
    }
}

/// Asked again after an unusable answer, the model samples wider: at 0.2 and 0.3 the 1.5B
/// model answered three task prompts in a row, and two correction rounds, with the same
/// unusable code.
fn retry_temperature(retry: Option<&str>, first: f32) -> f32 {
    match retry {
        None => first,
        Some(_) => 0.7,
    }
}

fn retry_note(retry: Option<&str>) -> String {
    match retry {
        None => String::new(),
        Some(why) => format!(
            "\n## Your previous answer could not be used\n{why}\nAnswer again, in the form below.\n"
        ),
    }
}

fn request(
    template: &Template,
    values: &BTreeMap<&str, String>,
    node: &str,
    role: Role,
    attempt: u32,
    max_tokens: u32,
) -> Result<LlmRequest, PromptError> {
    Ok(LlmRequest {
        node_id: node.to_string(),
        role,
        attempt,
        messages: vec![
            Message {
                role: "system".into(),
                content: prompts::CODE_SYSTEM.into(),
            },
            Message {
                role: "user".into(),
                content: template.render(values)?,
            },
        ],
        temperature: 0.2,
        max_tokens,
        seed: Some(u64::from(attempt)),
        template: template.label(),
        candidate: 0,
        prefill: None,
    })
}

/// The calls of one new function ([`super::probe`]): `function` is its signature and
/// docstring. The answer is begun at the first call, its value named `result`, so that the
/// assert the prompt asks for follows it rather than replacing the call.
pub(super) fn probes_request(
    spec: &str,
    function: &super::probe::NewFunction,
    retry: Option<&str>,
) -> Result<LlmRequest, FitError> {
    let name = function.name.as_str();
    let given = match function.covered {
        false => "The request gives no example of it.",
        true => "The request's examples of it pass; these calls check the inputs they leave out.",
    };
    let values = BTreeMap::from([
        ("spec", spec.to_string()),
        ("function", function.shown.clone()),
        ("name", name.to_string()),
        ("given", given.to_string()),
    ]);
    let mut asked = request(
        &prompts::CODE_PROBES,
        &values,
        PROBE_NODE,
        Role::Test,
        0,
        PROBE_ANSWER_TOKENS,
    )?;
    asked.prefill = Some(super::probe::prefill(name));
    if let Some(why) = retry {
        asked.messages[1].content.push_str(&format!(
            "\n## Your previous calls never reached `{name}`\nEach failed before the call \
             returned, in the test's own code:\n{why}\nWrite calls that run: import what \
             the arguments need, and give the arguments the signature takes.\n"
        ));
        asked.temperature = retry_temperature(Some(why), asked.temperature);
        asked.attempt = 1;
        asked.seed = Some(1);
    }
    room(&asked, "the calls of a new function")?;
    Ok(asked)
}

/// The tests that show the request is not done yet ([`super::reproduce`]): the module the
/// plan changes first, cut to what the request names, imported as `module`.
pub(super) fn reproduce_request(
    spec: &str,
    path: &str,
    module: &str,
    current: &str,
    retry: Option<&str>,
) -> Result<LlmRequest, FitError> {
    let build = |code: String| {
        let values = BTreeMap::from([
            ("spec", spec.to_string()),
            ("path", path.to_string()),
            ("module", module.to_string()),
            ("code", code),
        ]);
        let mut asked = request(
            &prompts::CODE_REPRODUCE,
            &values,
            REPRODUCE_NODE,
            Role::Test,
            0,
            REPRODUCE_ANSWER_TOKENS,
        )?;
        asked.prefill = Some(super::reproduce::prefill(module));
        if let Some(why) = retry {
            asked.messages[1].content.push_str(&format!(
                "\n## Your previous tests showed nothing\n{why}: they pass already, or fail \
                 on a mistake of their own. Write tests of what the request says must \
                 change, in the form above.\n"
            ));
            asked.temperature = retry_temperature(Some(why), asked.temperature);
            asked.attempt = 1;
            asked.seed = Some(1);
        }
        Ok::<_, PromptError>(asked)
    };
    let room = room(&build(String::new())?, "the reproduction's prompt")?;
    let shown = show(path, current, &Focus::of(spec, path), bytes(room));
    let asked = build(shown.text)?;
    budget::check(&asked, "the reproduction's prompt")?;
    Ok(asked)
}

/// A version of a new function written apart from the change ([`super::rival`]): the module
/// as it was before the change, cut to what the request names, and the function's `def` line
/// and docstring, its body never shown. Sampled: the versions are meant to differ where the
/// request leaves room.
pub(super) fn rival_request(
    spec: &str,
    function: &super::probe::NewFunction,
    before: &str,
) -> Result<LlmRequest, FitError> {
    let build = |module: String| {
        let values = BTreeMap::from([
            ("spec", spec.to_string()),
            ("path", function.path.clone()),
            ("module", module),
            (
                "function",
                format!("{}\n    ...", function.signature.trim_end()),
            ),
        ]);
        let mut asked = request(
            &prompts::CODE_RIVAL,
            &values,
            RIVAL_NODE,
            Role::Impl,
            0,
            RIVAL_ANSWER_TOKENS,
        )?;
        asked.prefill = Some(super::rival::prefill(function));
        asked.temperature = RIVAL_TEMPERATURE;
        Ok::<_, PromptError>(asked)
    };
    let room = room(&build(String::new())?, "a version of a new function")?;
    let focus = Focus::of(&format!("{spec} {}", function.name), &function.path);
    let shown = show(
        &function.path,
        before,
        &focus,
        bytes(room).min(RIVAL_MODULE_BYTES),
    );
    let asked = build(shown.text)?;
    budget::check(&asked, "a version of a new function")?;
    Ok(asked)
}

/// The bare correction prompt around `spec`: what [`budget::check_spec`] measures a request
/// against (the largest template, with its long parts empty).
pub(super) fn bare_template() -> Result<String, PromptError> {
    let values = BTreeMap::from([
        ("spec", String::new()),
        ("tasks", String::new()),
        ("command", String::new()),
        ("error", String::new()),
        ("unused", String::new()),
        ("context", String::new()),
        ("path", String::new()),
        ("current", String::new()),
        ("retry", String::new()),
        ("answer_format", answer_format(Form::Symbols, "", false)),
    ]);
    Ok(format!(
        "{}\n{}",
        prompts::CODE_SYSTEM,
        prompts::CODE_CORRECT.render(&values)?
    ))
}

/// Other files of the change, each under a heading, for reading only, cut to `max` bytes
/// together (each to its share; one with no room left is named only).
fn related(context: &[(String, String)], focus: &Focus, max: usize) -> String {
    let mut out = String::new();
    let share = max / context.len().max(1);
    for (file, text) in context {
        let heading = format!("\n## {file} (as this change left it; do not rewrite it)\n");
        let room = share.saturating_sub(heading.len() + 40);
        if room < 200 {
            out.push_str(&format!(
                "\n## {file} is changed too (not shown: no room)\n"
            ));
            continue;
        }
        let shown = show(file, text, focus, room);
        out.push_str(&heading);
        out.push_str(&fenced(file, &shown.text));
        out.push('\n');
    }
    out
}

fn current_text(path: &str, current: &str, shown: &str, whole: bool) -> String {
    match (current.is_empty(), whole) {
        (true, _) => "(the file does not exist yet)".into(),
        (false, true) => fenced(path, shown),
        (false, false) => format!(
            "(cut to what the task touches: the lines marked `not shown` are hidden, and kept \
             as they are)\n{}",
            fenced(path, shown)
        ),
    }
}

fn fenced(path: &str, text: &str) -> String {
    let mut body = text.to_string();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    format!("```{}\n{body}```", language(path))
}

/// The fence tag of a file, by its extension.
fn language(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("py") => "python",
        Some("rs") => "rust",
        Some("go") => "go",
        Some("js" | "mjs" | "cjs") => "javascript",
        Some("ts") => "typescript",
        Some("md") => "markdown",
        Some("toml") => "toml",
        Some("json") => "json",
        Some("yml" | "yaml") => "yaml",
        Some("sh") => "bash",
        _ => "",
    }
}

#[cfg(test)]
mod tests;

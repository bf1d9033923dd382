//! The requests `zerorepo code` sends: the plan, one file task, one correction. Pure.
//!
//! Scripted answers and recordings key on `node_id` and role: the plan is asked as node
//! `plan` (role `impl`, attempt 1 for the second try), a file task as its task id (role
//! `impl`; attempt 1 for a repair), a correction as node `correct` (role `fix`, attempt = its
//! round, from 0).

use std::collections::BTreeMap;

use super::plan::{ChangePlan, Task};
use crate::llm::{LlmRequest, Message, Role, estimate_tokens};
use crate::prompts::{self, PromptError, Template};

/// Files of more lines than this are changed with SEARCH/REPLACE blocks, not rewritten whole
/// (a small model re-typing a long file drops parts of it).
const WHOLE_FILE_LINES: usize = 200;

/// Files listed in the plan prompt at most.
const LISTED_FILES: usize = 200;

/// Characters of a check's output quoted in a prompt (its tail: where errors are).
pub(super) const ERROR_CHARS: usize = 3_000;

pub(super) const PLAN_NODE: &str = "plan";
pub(super) const CORRECT_NODE: &str = "correct";

pub(super) fn plan_request(
    spec: &str,
    files: &[String],
    diagnosis: &str,
    retry: Option<&str>,
) -> Result<LlmRequest, PromptError> {
    let mut listing: Vec<&str> = files
        .iter()
        .take(LISTED_FILES)
        .map(String::as_str)
        .collect();
    if files.len() > LISTED_FILES {
        listing.push("...");
    }
    let listing = if listing.is_empty() {
        "(none: the directory is empty, so every task creates a file)".to_string()
    } else {
        listing.join("\n")
    };
    let mut spec = spec.to_string();
    if let Some(why) = retry {
        spec.push_str(&format!(
            "\n\n(Your previous plan could not be used: {why}. Answer with the JSON list only.)"
        ));
    }
    let values = BTreeMap::from([
        ("spec", spec),
        ("files", listing),
        ("diagnosis", diagnosis.to_string()),
    ]);
    let mut request = request(&prompts::CODE_PLAN, &values, PLAN_NODE, Role::Impl, 0, 768)?;
    request.attempt = u32::from(retry.is_some());
    request.prefill = Some("```json\n[".into());
    Ok(request)
}

/// One file task: the task, the files of the tasks it depends on, the file's current text.
pub(super) fn edit_request(
    spec: &str,
    task: &Task,
    current: &str,
    context: &[(String, String)],
    attempt: u32,
) -> Result<LlmRequest, PromptError> {
    let path = task.path.clone().unwrap_or_default();
    let (answer_format, prefill) = answer_format(&path, current);
    let values = BTreeMap::from([
        ("spec", spec.to_string()),
        ("kind", task.kind.as_str().to_string()),
        ("path", path.clone()),
        ("description", task.description.clone()),
        ("context", related(context)),
        ("current", current_text(&path, current)),
        ("answer_format", answer_format),
    ]);
    let max = max_tokens(current);
    let mut request = request(
        &prompts::CODE_EDIT,
        &values,
        &task.id.0,
        Role::Impl,
        attempt,
        max,
    )?;
    request.prefill = prefill;
    Ok(request)
}

/// What failed: a check's command line (or a task's kind) and its output.
pub(super) struct Failure<'a> {
    pub command: &'a str,
    pub output: &'a str,
}

/// A correction of the file `path` after a check failed; `context` are the other files the
/// change touched, shown but not to be rewritten.
pub(super) fn correct_request(
    spec: &str,
    plan: &ChangePlan,
    failure: &Failure<'_>,
    path: &str,
    current: &str,
    context: &[(String, String)],
    round: u32,
) -> Result<LlmRequest, PromptError> {
    let tasks = plan
        .tasks
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
        .join("\n");
    let (answer_format, prefill) = answer_format(path, current);
    let values = BTreeMap::from([
        ("spec", spec.to_string()),
        ("tasks", tasks),
        ("command", failure.command.to_string()),
        (
            "error",
            super::audit::tail(failure.output, ERROR_CHARS).to_string(),
        ),
        ("context", related(context)),
        ("path", path.to_string()),
        ("current", current_text(path, current)),
        ("answer_format", answer_format),
    ]);
    let max = max_tokens(current);
    let mut request = request(
        &prompts::CODE_CORRECT,
        &values,
        CORRECT_NODE,
        Role::Fix,
        round,
        max,
    )?;
    request.temperature = 0.3;
    request.prefill = prefill;
    Ok(request)
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

/// How the answer must look, and how it is begun: the whole file in a fence for short files,
/// SEARCH/REPLACE blocks for long ones.
fn answer_format(path: &str, current: &str) -> (String, Option<String>) {
    if current.lines().count() > WHOLE_FILE_LINES {
        let format = format!(
            "SEARCH/REPLACE blocks for {path}: each is a line `<<<<<<< SEARCH`, lines copied exactly \
             from the current content, `=======`, the lines that replace them, `>>>>>>> REPLACE`"
        );
        (format, None)
    } else {
        let format = format!("the complete new content of {path} in one fenced block");
        (format, Some(format!("```{}\n", language(path))))
    }
}

/// Other files of the change, each under a heading, for reading only.
fn related(context: &[(String, String)]) -> String {
    let mut out = String::new();
    for (file, text) in context {
        out.push_str(&format!(
            "\n## {file} (as this change left it; do not rewrite it)\n{}\n",
            fenced(file, text)
        ));
    }
    out
}

fn current_text(path: &str, current: &str) -> String {
    if current.is_empty() {
        "(the file does not exist yet)".into()
    } else {
        fenced(path, current)
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

/// Room for the whole file written again, and some.
fn max_tokens(current: &str) -> u32 {
    let needed = estimate_tokens(current) * 3 / 2 + 256;
    needed.clamp(512, 4_096) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::plan::{Risk, TaskId, TaskKind};

    #[test]
    fn short_files_are_asked_whole_and_long_ones_as_hunks() {
        let task = Task {
            id: TaskId("1".into()),
            kind: TaskKind::ModifyFile,
            description: "add multiply".into(),
            path: Some("calc.py".into()),
            command: None,
            depends_on: vec![],
            risk: Risk::Low,
        };
        let short =
            edit_request("spec", &task, "def add(a, b):\n    return a + b\n", &[], 0).unwrap();
        assert_eq!(short.prefill.as_deref(), Some("```python\n"));
        assert_eq!(short.node_id, "1");
        assert!(
            short.messages[1]
                .content
                .contains("complete new content of calc.py")
        );
        let long: String = (0..300).map(|i| format!("x{i} = {i}\n")).collect();
        let long = edit_request("spec", &task, &long, &[], 0).unwrap();
        assert_eq!(long.prefill, None);
        assert!(long.messages[1].content.contains("<<<<<<< SEARCH"));
    }

    #[test]
    fn an_empty_directory_is_said_in_the_plan_prompt() {
        let request = plan_request("make a cli", &[], "(no check)", Some("no JSON")).unwrap();
        assert!(
            request.messages[1]
                .content
                .contains("the directory is empty")
        );
        assert!(
            request.messages[1]
                .content
                .contains("could not be used: no JSON")
        );
        assert_eq!(request.attempt, 1);
    }
}

//! The task graph of a change, read from a model's answer or a plan file, checked, ordered,
//! and given a risk level by rules. Everything here is pure.
//!
//! A plan is a list of tasks; the model writes it as JSON, either a bare array or an object
//! with a `tasks` array:
//!
//! ```text
//! plan  := '[' task (',' task)* ']' | '{' '"tasks"' ':' '[' ... ']' ... '}'
//! task  := '{' "id": ID, "kind": KIND, "description": TEXT,
//!              ("path": PATH | "command": TEXT), "depends_on": [ID...], "risk": RISK '}'
//! KIND  := CREATE_FILE | MODIFY_FILE | DELETE_FILE | SHELL_COMMAND   (any case; "type" too)
//! RISK  := LOW | MEDIUM | HIGH                                       (optional)
//! ID    := string or number (missing: the task's position, from 1)
//! ```
//!
//! Prose and fences around the JSON are skipped ([`from_answer`] reads the first value that
//! parses as a plan). A plan file (`--plan-out`, `--plan`) is the same JSON written by
//! [`ChangePlan::to_json`] and read strictly by [`ChangePlan::from_json`].
//!
//! The model's risk level is never trusted downwards: [`assess`] computes the level from what
//! the task does, and the higher of the two stands. A path outside the repository is not a
//! risk but a refusal ([`Risk::Refused`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A task's name in its plan (`"1"`, `"add-multiply"`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(pub String);

impl std::fmt::Display for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskKind {
    CreateFile,
    ModifyFile,
    DeleteFile,
    ShellCommand,
}

impl TaskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::CreateFile => "CREATE_FILE",
            TaskKind::ModifyFile => "MODIFY_FILE",
            TaskKind::DeleteFile => "DELETE_FILE",
            TaskKind::ShellCommand => "SHELL_COMMAND",
        }
    }

    fn parse(text: &str) -> Option<TaskKind> {
        match text
            .trim()
            .to_ascii_uppercase()
            .replace(['-', ' '], "_")
            .as_str()
        {
            "CREATE_FILE" | "CREATE" => Some(TaskKind::CreateFile),
            "MODIFY_FILE" | "MODIFY" | "EDIT_FILE" | "EDIT" | "UPDATE_FILE" => {
                Some(TaskKind::ModifyFile)
            }
            "DELETE_FILE" | "DELETE" | "REMOVE_FILE" => Some(TaskKind::DeleteFile),
            "SHELL_COMMAND" | "SHELL" | "COMMAND" | "RUN" => Some(TaskKind::ShellCommand),
            _ => None,
        }
    }
}

/// How much a task can hurt, lowest first. `Refused` is never run, whatever is approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Risk {
    Low,
    Medium,
    High,
    Refused,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "LOW",
            Risk::Medium => "MEDIUM",
            Risk::High => "HIGH",
            Risk::Refused => "REFUSED",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub id: TaskId,
    pub kind: TaskKind,
    pub description: String,
    /// The file, relative to the repository root (file tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The command line (shell tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<TaskId>,
    #[serde(default = "low")]
    pub risk: Risk,
}

/// A file task for tests: low risk, no dependencies.
#[cfg(test)]
pub(super) fn file_task(id: &str, kind: TaskKind, path: &str, description: &str) -> Task {
    Task {
        id: TaskId(id.into()),
        kind,
        description: description.into(),
        path: Some(path.into()),
        command: None,
        depends_on: vec![],
        risk: Risk::Low,
    }
}

fn low() -> Risk {
    Risk::Low
}

/// The tasks of one change, in the order they were written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangePlan {
    pub tasks: Vec<Task>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the answer holds no JSON task list")]
    NoPlan,
    #[error("the plan has no tasks")]
    Empty,
    #[error("task {task}: {why}")]
    Task { task: String, why: String },
    #[error("two tasks are named {0}")]
    DuplicateId(TaskId),
    #[error("task {task} depends on {missing}, which is not in the plan")]
    UnknownDependency { task: TaskId, missing: TaskId },
    #[error("the tasks' dependencies form a cycle through {0}")]
    Cycle(TaskId),
    #[error("not a plan file: {0}")]
    Format(String),
}

impl ChangePlan {
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// A plan file, read strictly (unknown fields are an error), then checked.
    pub fn from_json(text: &str) -> Result<ChangePlan, PlanError> {
        let plan: ChangePlan =
            serde_json::from_str(text).map_err(|e| PlanError::Format(e.to_string()))?;
        plan.check()?;
        Ok(plan)
    }

    pub fn task(&self, id: &TaskId) -> Option<&Task> {
        self.tasks.iter().find(|t| &t.id == id)
    }

    /// Ids unique, dependencies known and acyclic, every task complete for its kind.
    pub fn check(&self) -> Result<(), PlanError> {
        if self.tasks.is_empty() {
            return Err(PlanError::Empty);
        }
        let mut seen = BTreeSet::new();
        for task in &self.tasks {
            if !seen.insert(&task.id) {
                return Err(PlanError::DuplicateId(task.id.clone()));
            }
            let incomplete = |why: &str| PlanError::Task {
                task: task.id.0.clone(),
                why: why.into(),
            };
            match task.kind {
                TaskKind::ShellCommand if task.command.as_deref().is_none_or(str::is_empty) => {
                    return Err(incomplete("a shell task needs a command"));
                }
                TaskKind::ShellCommand => {}
                _ if task.path.as_deref().is_none_or(str::is_empty) => {
                    return Err(incomplete("a file task needs a path"));
                }
                _ => {}
            }
        }
        for task in &self.tasks {
            if let Some(missing) = task.depends_on.iter().find(|d| !seen.contains(d)) {
                return Err(PlanError::UnknownDependency {
                    task: task.id.clone(),
                    missing: missing.clone(),
                });
            }
        }
        self.order().map(|_| ())
    }

    /// The tasks in the order they run: the dependency queue of `generate` with one job at a
    /// time, so a task runs after everything it depends on, and otherwise in plan order.
    pub fn order(&self) -> Result<Vec<usize>, PlanError> {
        let index: BTreeMap<&TaskId, usize> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (&t.id, i))
            .collect();
        let deps = self
            .tasks
            .iter()
            .map(|t| {
                t.depends_on
                    .iter()
                    .filter_map(|d| index.get(d).copied())
                    .collect()
            })
            .collect();
        let mut queue = crate::schedule::DependencyQueue::new(deps, 1);
        let mut order = Vec::with_capacity(self.tasks.len());
        while let Some(job) = queue.next_ready() {
            order.push(job);
            queue.finish(job, crate::schedule::JobOutcome::Passed);
        }
        match queue.waiting().first() {
            Some(&stuck) => Err(PlanError::Cycle(self.tasks[stuck].id.clone())),
            None => Ok(order),
        }
    }
}

/// The plan in a model's answer: the first JSON value in it that reads as a task list.
/// Lenient in what it accepts (see the module doc), then [`ChangePlan::check`]ed.
pub fn from_answer(answer: &str) -> Result<ChangePlan, PlanError> {
    let mut last_error = PlanError::NoPlan;
    for (at, _) in answer.match_indices(['[', '{']) {
        let mut values = serde_json::Deserializer::from_str(&answer[at..]).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else {
            continue;
        };
        let tasks = match &value {
            Value::Array(items) => items,
            Value::Object(map) => match map.get("tasks") {
                Some(Value::Array(items)) => items,
                _ => continue,
            },
            _ => continue,
        };
        match lenient_tasks(tasks).and_then(|plan| plan.check().map(|()| plan)) {
            Ok(plan) => return Ok(plan),
            Err(e) => last_error = e,
        }
    }
    Err(last_error)
}

fn lenient_tasks(items: &[Value]) -> Result<ChangePlan, PlanError> {
    let mut tasks = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(PlanError::NoPlan);
        };
        let text = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| map.get(*k))
                .and_then(scalar_text)
                .filter(|s| !s.is_empty())
        };
        let id = TaskId(text(&["id"]).unwrap_or_else(|| (i + 1).to_string()));
        let kind = text(&["kind", "type", "action"])
            .and_then(|k| TaskKind::parse(&k))
            .ok_or_else(|| PlanError::Task {
                task: id.0.clone(),
                why: "no kind (CREATE_FILE, MODIFY_FILE, DELETE_FILE or SHELL_COMMAND)".into(),
            })?;
        let depends_on = match map.get("depends_on").or_else(|| map.get("dependencies")) {
            Some(Value::Array(ds)) => ds.iter().filter_map(scalar_text).map(TaskId).collect(),
            Some(other) => scalar_text(other).map(TaskId).into_iter().collect(),
            None => Vec::new(),
        };
        let risk = match text(&["risk"]).map(|r| r.to_ascii_uppercase()).as_deref() {
            Some("MEDIUM") => Risk::Medium,
            Some("HIGH") => Risk::High,
            _ => Risk::Low,
        };
        let (path, command) = match kind {
            TaskKind::ShellCommand => (None, text(&["command", "cmd"])),
            _ => (text(&["path", "file", "file_path"]), None),
        };
        tasks.push(Task {
            id,
            kind,
            description: text(&["description", "desc", "task"]).unwrap_or_default(),
            path,
            command,
            depends_on,
            risk,
        });
    }
    Ok(ChangePlan { tasks })
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// What [`assess`] knows of the repository and its commands.
#[derive(Debug, Clone, Default)]
pub struct RiskContext {
    /// Directories of the repository (relative, `/`-separated).
    pub directories: BTreeSet<String>,
    /// The commands the repository's stacks use (`detect`), allowed as shell tasks.
    pub known_commands: Vec<String>,
}

/// Above this many deletions in one plan, each deletion is HIGH.
const MANY_DELETIONS: usize = 3;

/// Commands (argv prefixes) a shell task may run without confirmation: checks that read the
/// repository, never change or fetch anything.
const ALLOWED_COMMANDS: &[&[&str]] = &[
    &["python", "-m", "pytest"],
    &["python3", "-m", "pytest"],
    &["pytest"],
    &["python", "-m", "compileall"],
    &["python3", "-m", "compileall"],
    &["python", "-m", "unittest"],
    &["ruff", "check"],
    &["cargo", "test"],
    &["cargo", "build"],
    &["cargo", "check"],
    &["cargo", "clippy"],
    &["go", "test"],
    &["go", "build"],
    &["go", "vet"],
    &["npm", "test"],
    &["npm", "run"],
];

/// Programs and subcommands that reach the network.
const NETWORK: &[&[&str]] = &[
    &["curl"],
    &["wget"],
    &["ssh"],
    &["scp"],
    &["nc"],
    &["pip", "install"],
    &["pip3", "install"],
    &["python", "-m", "pip"],
    &["python3", "-m", "pip"],
    &["npm", "install"],
    &["npm", "i"],
    &["git", "clone"],
    &["git", "fetch"],
    &["git", "pull"],
    &["git", "push"],
    &["cargo", "install"],
    &["go", "get"],
];

/// Characters that make a command line need a shell: refused as a plain command.
const SHELL_SYNTAX: &[char] = &[
    '|', '&', ';', '$', '>', '<', '`', '(', ')', '*', '?', '~', '\n',
];

/// The risk of `task` within `plan` by rules, and why, the model's own level as a floor.
pub fn assess(task: &Task, plan: &ChangePlan, context: &RiskContext) -> (Risk, Vec<String>) {
    let mut risk = task.risk;
    let mut why = Vec::new();
    let mut raise = |level: Risk, reason: String, risk: &mut Risk| {
        if level > *risk {
            *risk = level;
        }
        why.push(reason);
    };
    match task.kind {
        TaskKind::ShellCommand => {
            let command = task.command.as_deref().unwrap_or_default();
            for (level, reason) in command_risk(command, context) {
                raise(level, reason, &mut risk);
            }
        }
        _ => {
            let path = task.path.as_deref().unwrap_or_default();
            if let Err(reason) = inside_repository(path) {
                raise(Risk::Refused, reason, &mut risk);
            } else if task.kind == TaskKind::DeleteFile {
                let path = path.trim_end_matches('/');
                let deletions = plan
                    .tasks
                    .iter()
                    .filter(|t| t.kind == TaskKind::DeleteFile)
                    .count();
                if context.directories.contains(path) {
                    raise(
                        Risk::High,
                        format!("deletes the directory {path}"),
                        &mut risk,
                    );
                } else if deletions > MANY_DELETIONS {
                    raise(
                        Risk::High,
                        format!("one of {deletions} deletions in this plan"),
                        &mut risk,
                    );
                } else {
                    raise(Risk::Medium, format!("deletes {path}"), &mut risk);
                }
            }
        }
    }
    (risk, why)
}

/// Why a path is not a file of the repository: absolute, `..`, zerorepo's or git's own in
/// any case, or holding a control character ([`crate::fsutil::beneath::check_repo_path`]).
/// One trailing `/` (a directory, for a deletion) is allowed.
pub fn inside_repository(path: &str) -> Result<(), String> {
    crate::fsutil::beneath::check_repo_path(path.strip_suffix('/').unwrap_or(path))
}

fn command_risk(command: &str, context: &RiskContext) -> Vec<(Risk, String)> {
    if command.contains(SHELL_SYNTAX) {
        return vec![(
            Risk::High,
            "needs a shell (pipes, redirections, variables or globs)".into(),
        )];
    }
    let Some(argv) = shlex::split(command).filter(|a| !a.is_empty()) else {
        return vec![(Risk::High, "not a readable command line".into())];
    };
    let starts_with = |prefix: &&[&str]| {
        argv.len() >= prefix.len() && prefix.iter().zip(&argv).all(|(p, a)| p == a)
    };
    if NETWORK.iter().any(starts_with) {
        return vec![(Risk::High, "reaches the network".into())];
    }
    let known = context
        .known_commands
        .iter()
        .any(|k| shlex::split(k).is_some_and(|k| k == argv));
    if known || ALLOWED_COMMANDS.iter().any(starts_with) {
        Vec::new()
    } else {
        vec![(
            Risk::High,
            format!("{} is not on the allowlist of checks", argv[0]),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, kind: TaskKind, path: &str, deps: &[&str]) -> Task {
        Task {
            id: TaskId(id.into()),
            kind,
            description: format!("task {id}"),
            path: (kind != TaskKind::ShellCommand).then(|| path.to_string()),
            command: (kind == TaskKind::ShellCommand).then(|| path.to_string()),
            depends_on: deps.iter().map(|d| TaskId(d.to_string())).collect(),
            risk: Risk::Low,
        }
    }

    #[test]
    fn a_plan_is_read_from_prose_fences_and_loose_fields() {
        let answer = "Here is the plan:\n```json\n[{\"id\": 1, \"type\": \"modify\", \"file\": \"calc.py\", \"description\": \"add multiply\"},\n {\"kind\": \"SHELL_COMMAND\", \"command\": \"python -m pytest -q\", \"depends_on\": [1], \"risk\": \"medium\"}]\n```\nDone.";
        let plan = from_answer(answer).unwrap();
        assert_eq!(plan.tasks.len(), 2);
        assert_eq!(plan.tasks[0].id, TaskId("1".into()));
        assert_eq!(plan.tasks[0].kind, TaskKind::ModifyFile);
        assert_eq!(plan.tasks[0].path.as_deref(), Some("calc.py"));
        assert_eq!(plan.tasks[1].id, TaskId("2".into()));
        assert_eq!(plan.tasks[1].depends_on, vec![TaskId("1".into())]);
        assert_eq!(plan.tasks[1].risk, Risk::Medium);
        let wrapped = "{\"tasks\": [{\"kind\": \"CREATE_FILE\", \"path\": \"a.py\", \"description\": \"x\"}]}";
        assert_eq!(
            from_answer(wrapped).unwrap().tasks[0].kind,
            TaskKind::CreateFile
        );
    }

    #[test]
    fn answers_without_a_usable_plan_say_why() {
        assert_eq!(from_answer("no json here"), Err(PlanError::NoPlan));
        assert_eq!(from_answer("[]"), Err(PlanError::Empty));
        assert!(matches!(
            from_answer("[{\"kind\": \"MODIFY_FILE\", \"description\": \"x\"}]"),
            Err(PlanError::Task { .. })
        ));
        assert!(matches!(
            from_answer("[{\"kind\": \"launch\", \"path\": \"a\"}]"),
            Err(PlanError::Task { .. })
        ));
    }

    #[test]
    fn order_follows_dependencies_then_plan_order_and_finds_cycles() {
        let plan = ChangePlan {
            tasks: vec![
                task("a", TaskKind::ModifyFile, "a.py", &["c"]),
                task("b", TaskKind::CreateFile, "b.py", &[]),
                task("c", TaskKind::CreateFile, "c.py", &[]),
            ],
        };
        assert_eq!(plan.order().unwrap(), vec![1, 2, 0]);
        let cyclic = ChangePlan {
            tasks: vec![
                task("a", TaskKind::ModifyFile, "a.py", &["b"]),
                task("b", TaskKind::ModifyFile, "b.py", &["a"]),
            ],
        };
        assert!(matches!(cyclic.check(), Err(PlanError::Cycle(_))));
        let unknown = ChangePlan {
            tasks: vec![task("a", TaskKind::ModifyFile, "a.py", &["z"])],
        };
        assert!(matches!(
            unknown.check(),
            Err(PlanError::UnknownDependency { .. })
        ));
    }

    #[test]
    fn plan_files_round_trip_and_reject_unknown_fields() {
        let plan = ChangePlan {
            tasks: vec![task("1", TaskKind::ModifyFile, "a.py", &[])],
        };
        assert_eq!(ChangePlan::from_json(&plan.to_json()).unwrap(), plan);
        let extra = plan
            .to_json()
            .replace("\"risk\"", "\"owner\": \"me\", \"risk\"");
        assert!(matches!(
            ChangePlan::from_json(&extra),
            Err(PlanError::Format(_))
        ));
    }

    #[test]
    fn risk_rules_raise_the_models_level_and_refuse_paths_outside() {
        let context = RiskContext {
            directories: ["src".to_string()].into(),
            known_commands: vec!["ruff check .".into()],
        };
        let level = |t: Task, plan: &ChangePlan| assess(&t, plan, &context).0;
        let one = ChangePlan::default();
        assert_eq!(
            level(task("1", TaskKind::ModifyFile, "a.py", &[]), &one),
            Risk::Low
        );
        assert_eq!(
            level(task("1", TaskKind::CreateFile, "../x.py", &[]), &one),
            Risk::Refused
        );
        assert_eq!(
            level(task("1", TaskKind::CreateFile, "/etc/x", &[]), &one),
            Risk::Refused
        );
        assert_eq!(
            level(task("1", TaskKind::ModifyFile, ".git/config", &[]), &one),
            Risk::Refused
        );
        assert_eq!(
            level(task("1", TaskKind::DeleteFile, "a.py", &[]), &one),
            Risk::Medium
        );
        assert_eq!(
            level(task("1", TaskKind::DeleteFile, "src/", &[]), &one),
            Risk::High
        );
        let many = ChangePlan {
            tasks: (0..4)
                .map(|i| task(&i.to_string(), TaskKind::DeleteFile, "x", &[]))
                .collect(),
        };
        assert_eq!(
            level(task("1", TaskKind::DeleteFile, "a.py", &[]), &many),
            Risk::High
        );
        let shell = |c: &str| level(task("1", TaskKind::ShellCommand, c, &[]), &one);
        assert_eq!(shell("python -m pytest -q"), Risk::Low);
        assert_eq!(shell("ruff check ."), Risk::Low);
        assert_eq!(shell("curl http://x"), Risk::High);
        assert_eq!(shell("pip install requests"), Risk::High);
        assert_eq!(shell("rm -rf build"), Risk::High);
        assert_eq!(shell("python -m pytest | tee log"), Risk::High);
        let mut high = task("1", TaskKind::ModifyFile, "a.py", &[]);
        high.risk = Risk::High;
        assert_eq!(
            level(high, &one),
            Risk::High,
            "the model's level is a floor"
        );
    }
}

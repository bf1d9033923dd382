//! Syntax check of Python source before it is written, and of files on disk.
//!
//! tree-sitter runs first because it is in-process and gives line/column of ERROR and MISSING
//! nodes at once. It is not the authority: its grammar lags the language and recovers where
//! CPython would not. The verdict comes from `ruff check --select E9,F` when ruff is found
//! (on `PATH` or in the set-up venv), else from CPython's own `compile()`, else — with neither
//! installed — from tree-sitter. The report names the checker that decided.
//!
//! Only syntax errors block a write. Pyflakes findings (`F401` unused import, `F821` undefined
//! name) are reported as findings: a half-finished edit that leaves an unused import is still a
//! file the next edit can work on, and refusing it would trap whoever edits step by step.
//! CPython is fed on stdin rather than through `py_compile`, which would leave `__pycache__`
//! files in the repository being edited.

use std::io::Write;
use std::process::{Command, Stdio};

use serde::Serialize;
use tree_sitter::Node;

use super::outline::{OutlineError, parse};
use crate::programs;

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Parse(#[from] OutlineError),
    #[error("running {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{program} gave output that could not be read: {detail}")]
    Output { program: String, detail: String },
}

impl CheckError {
    /// Starting `program`, or waiting for it, failed.
    pub(super) fn spawn(program: &std::path::Path) -> impl Fn(std::io::Error) -> Self + '_ {
        move |source| Self::Spawn {
            program: program.display().to_string(),
            source,
        }
    }

    /// `program` ran and said something that could not be read.
    pub(super) fn output(program: &std::path::Path, detail: impl Into<String>) -> Self {
        Self::Output {
            program: program.display().to_string(),
            detail: detail.into(),
        }
    }
}

/// Which checker gave the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Checker {
    #[serde(rename = "ruff")]
    Ruff,
    #[serde(rename = "python3")]
    Python,
    #[serde(rename = "tree-sitter")]
    TreeSitter,
}

/// One problem, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Issue {
    pub line: usize,
    pub column: usize,
    /// `None` for syntax errors; the ruff rule (`F821`) for findings.
    pub code: Option<String>,
    pub message: String,
}

/// `line 3, column 7: message` (the rule first for a finding): for people and for a model
/// told why its answer cannot be used.
impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}: ", self.line, self.column)?;
        if let Some(code) = &self.code {
            write!(f, "{code} ")?;
        }
        f.write_str(&self.message)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// No syntax error according to `checker`.
    pub ok: bool,
    pub checker: Checker,
    /// Syntax errors (they block a write).
    pub errors: Vec<Issue>,
    /// What tree-sitter saw; may disagree with the authority on new syntax.
    pub tree_sitter: Vec<Issue>,
    /// Non-blocking pyflakes findings (ruff only).
    pub findings: Vec<Issue>,
}

impl CheckReport {
    /// The first error as `line:column: message`, for error messages.
    pub fn summary(&self) -> String {
        match self.errors.first() {
            Some(e) => format!(
                "{}:{}: {} ({} error(s), checked by {:?})",
                e.line,
                e.column,
                e.message,
                self.errors.len(),
                self.checker
            ),
            None => "no syntax error".into(),
        }
    }
}

/// Whether `source` parses with no ERROR or MISSING node.
pub fn parses(source: &str) -> bool {
    tree_sitter_errors(source).is_ok_and(|e| e.is_empty())
}

/// ERROR and MISSING nodes of the source, in order.
pub(crate) fn tree_sitter_errors(source: &str) -> Result<Vec<Issue>, OutlineError> {
    let tree = parse(source)?;
    let mut out = Vec::new();
    if tree.root_node().has_error() {
        collect_errors(tree.root_node(), source, &mut out);
    }
    Ok(out)
}

fn collect_errors(node: Node, source: &str, out: &mut Vec<Issue>) {
    if node.is_missing() || node.is_error() {
        let at = node.start_position();
        let message = if node.is_missing() {
            format!("missing `{}`", node.kind())
        } else {
            let snippet: String = source
                .get(node.start_byte()..node.end_byte())
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            format!("unexpected `{}`", snippet.trim())
        };
        out.push(Issue {
            line: at.row + 1,
            column: at.column + 1,
            code: None,
            message,
        });
        if node.is_error() {
            return;
        }
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.has_error() || child.is_missing() {
            collect_errors(child, source, out);
        }
    }
}

/// Checks `source` as the content of `file_name` (used in messages and by ruff for its
/// per-file settings).
pub fn check_source(source: &str, file_name: &str) -> Result<CheckReport, CheckError> {
    let tree_sitter = tree_sitter_errors(source)?;
    if let Some(ruff) = programs::find("ruff") {
        let (errors, findings) = run_ruff(&ruff, source, file_name)?;
        return Ok(CheckReport {
            ok: errors.is_empty(),
            checker: Checker::Ruff,
            errors,
            tree_sitter,
            findings,
        });
    }
    if let Some(python) = programs::find("python3") {
        let errors = run_python(&python, source, file_name)?;
        return Ok(CheckReport {
            ok: errors.is_empty(),
            checker: Checker::Python,
            errors,
            tree_sitter,
            findings: Vec::new(),
        });
    }
    Ok(CheckReport {
        ok: tree_sitter.is_empty(),
        checker: Checker::TreeSitter,
        errors: tree_sitter.clone(),
        tree_sitter,
        findings: Vec::new(),
    })
}

/// CPython's own verdict on `source` as `file_name` (its `compile()`: nothing is run), for the
/// syntax errors tree-sitter's recovering grammar lets through (`return` outside a function,
/// a `nonlocal` binding nothing, a default argument before a plain one). `None` when no
/// `python3` is found or it could not be asked: no verdict either way.
pub(crate) fn cpython_errors(source: &str, file_name: &str) -> Option<Vec<Issue>> {
    let python = programs::find("python3")?;
    run_python(&python, source, file_name).ok()
}

/// The names the body of the top-level function `name` in `module` uses and nothing defines
/// (ruff's `F821`), once each in order: that line raises `NameError` whenever it runs, so
/// the function is wrong on every input that reaches it, whatever tests happen to pass.
/// Empty when ruff is not installed or says nothing readable (no evidence either way).
pub(crate) fn undefined_in_function(module: &str, name: &str) -> Vec<String> {
    let Some((first, last)) = super::stub::body_lines(module, name) else {
        return Vec::new();
    };
    let Some(ruff) = programs::find("ruff") else {
        return Vec::new();
    };
    let Ok((_, findings)) = run_ruff(&ruff, module, "module.py") else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for issue in findings {
        let inside = (first..=last).contains(&issue.line);
        let quoted = issue.message.split('`').nth(1);
        if let (true, Some("F821"), Some(quoted)) = (inside, issue.code.as_deref(), quoted)
            && !names.iter().any(|n| n == quoted)
        {
            names.push(quoted.to_string());
        }
    }
    names
}

/// ruff started from `/`: it reads the source on stdin, so it needs no working directory, and
/// none in the repository being edited is given it.
fn checker_command(program: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args).current_dir("/");
    command
}

fn run_with_stdin(
    program: &std::path::Path,
    args: &[&str],
    stdin: &str,
) -> Result<std::process::Output, CheckError> {
    let mut child = checker_command(program, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(CheckError::spawn(program))?;
    if let Some(mut input) = child.stdin.take() {
        // A checker that exits early closes the pipe; its output says why.
        let _ = input.write_all(stdin.as_bytes());
    }
    child.wait_with_output().map_err(CheckError::spawn(program))
}

#[derive(serde::Deserialize)]
struct RuffLocation {
    row: usize,
    column: usize,
}

#[derive(serde::Deserialize)]
struct RuffDiagnostic {
    code: Option<String>,
    message: String,
    location: RuffLocation,
    #[serde(default)]
    filename: String,
}

/// A pyflakes or syntax finding in one file of a repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FileIssue {
    /// Relative to the repository.
    pub path: String,
    #[serde(flatten)]
    pub issue: Issue,
}

/// `ruff check --select E9,F` over `files` of `repo`, in one process (ruff reads the files,
/// it never runs them): every finding, pyflakes' and syntax errors alike. `None` when ruff
/// is not installed; `Err` when it ran and said nothing readable.
pub fn lint_files(
    repo: &std::path::Path,
    files: &[String],
) -> Option<Result<Vec<FileIssue>, CheckError>> {
    let ruff = programs::find("ruff")?;
    if files.is_empty() {
        return Some(Ok(Vec::new()));
    }
    let output = Command::new(&ruff)
        .args(["check", "--select", "E9,F", "--output-format", "json"])
        .args(["--no-cache", "--isolated", "--exit-zero", "--"])
        .args(files)
        .current_dir(repo)
        .stdin(Stdio::null())
        .output()
        .map_err(CheckError::spawn(&ruff));
    Some(output.and_then(|output| {
        Ok(ruff_diagnostics(&output)?
            .into_iter()
            .map(|d| FileIssue {
                path: relative(repo, &d.filename),
                issue: d.into_issue(),
            })
            .collect())
    }))
}

/// The diagnostics of a `ruff check --output-format json` run.
fn ruff_diagnostics(output: &std::process::Output) -> Result<Vec<RuffDiagnostic>, CheckError> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).map_err(|e| CheckError::Output {
        program: "ruff".into(),
        detail: format!(
            "{e}; stderr: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
    })
}

impl RuffDiagnostic {
    fn into_issue(self) -> Issue {
        Issue {
            line: self.location.row,
            column: self.location.column,
            code: self.code,
            message: self.message,
        }
    }
}

/// Ruff reports absolute file names; the report shows them relative to the repository.
fn relative(repo: &std::path::Path, file: &str) -> String {
    let path = std::path::Path::new(file);
    let repo = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    path.strip_prefix(&repo)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Ruff marks syntax errors with no code (old versions), `invalid-syntax`, or `E9xx`.
fn is_syntax_code(code: Option<&str>) -> bool {
    match code {
        None => true,
        Some(c) => c == "invalid-syntax" || c.starts_with("E9"),
    }
}

fn run_ruff(
    ruff: &std::path::Path,
    source: &str,
    file_name: &str,
) -> Result<(Vec<Issue>, Vec<Issue>), CheckError> {
    let output = run_with_stdin(
        ruff,
        &[
            "check",
            "--select",
            "E9,F",
            "--output-format",
            "json",
            "--no-cache",
            "--isolated",
            "--exit-zero",
            "--stdin-filename",
            file_name,
            "-",
        ],
        source,
    )?;
    let (errors, findings): (Vec<Issue>, Vec<Issue>) = ruff_diagnostics(&output)?
        .into_iter()
        .map(RuffDiagnostic::into_issue)
        .partition(|i| is_syntax_code(i.code.as_deref()));
    let errors = errors
        .into_iter()
        .map(|i| Issue { code: None, ..i })
        .collect();
    Ok((errors, findings))
}

/// CPython's verdict (see [`super::cpython`]); a `compile()` that failed otherwise gives none.
fn run_python(
    python: &std::path::Path,
    source: &str,
    file_name: &str,
) -> Result<Vec<Issue>, CheckError> {
    super::cpython::compile_errors(python, source, file_name)?
        .ok_or_else(|| CheckError::output(python, "compile() failed without a syntax error"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_function_body_uses_and_nothing_defines_are_found_by_ruff() {
        if programs::find("ruff").is_none() {
            eprintln!("SKIPPED: ruff is not installed (scripts/setup.sh installs it)");
            return;
        }
        let module = "import math\n\n\ndef other():\n    return missing_a\n\n\n\
                      def f(x: Point) -> float:\n    if x:\n        return helper(x) + helper(1)\n    \
                      return math.sqrt(len(typo_name))\n";
        assert_eq!(undefined_in_function(module, "f"), ["helper", "typo_name"]);
        assert_eq!(undefined_in_function(module, "other"), ["missing_a"]);
        assert!(undefined_in_function(module, "absent").is_empty());
        assert!(undefined_in_function("def g():\n    return 1\n", "g").is_empty());
    }

    #[test]
    fn cpython_refuses_what_tree_sitter_parses() {
        let Some(errors) = cpython_errors("def f(x):\n    return x\n", "m.py") else {
            eprintln!("SKIPPED: no python3 found (scripts/setup.sh installs it)");
            return;
        };
        assert!(errors.is_empty(), "{errors:?}");
        for source in [
            "def f():\n    pass\nreturn 1\n",
            "def f(a=1, b):\n    return a\n",
        ] {
            assert!(parses(source), "tree-sitter accepts {source:?}");
            let errors = cpython_errors(source, "m.py").unwrap();
            assert_eq!(errors.len(), 1, "{source:?}: {errors:?}");
        }
    }

    #[test]
    fn tree_sitter_reports_missing_and_unexpected_tokens_with_positions() {
        assert!(
            tree_sitter_errors("def f(x):\n    return x\n")
                .unwrap()
                .is_empty()
        );
        let errors = tree_sitter_errors("def f(x:\n    return x\n").unwrap();
        assert!(!errors.is_empty());
        assert_eq!(errors[0].line, 1);
    }

    #[test]
    fn syntax_codes_are_told_from_pyflakes_findings() {
        assert!(is_syntax_code(None));
        assert!(is_syntax_code(Some("invalid-syntax")));
        assert!(is_syntax_code(Some("E999")));
        assert!(!is_syntax_code(Some("F401")));
    }

    #[test]
    fn the_checker_that_decided_is_named_and_refuses_broken_code() {
        let report = check_source("def f(:\n    pass\n", "x.py").unwrap();
        assert!(!report.ok, "{report:?}");
        assert!(!report.errors.is_empty());
        let report = check_source("import os\n", "x.py").unwrap();
        assert!(report.ok, "{report:?}");
        if report.checker == Checker::Ruff {
            assert_eq!(report.findings[0].code.as_deref(), Some("F401"));
        }
    }

    #[test]
    fn a_repository_is_linted_in_one_run_with_paths_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(dir.path().join("pkg/a.py"), "import os\n").unwrap();
        std::fs::write(dir.path().join("pkg/b.py"), "def f():\n    return g()\n").unwrap();
        let files = ["pkg/a.py".to_string(), "pkg/b.py".to_string()];
        let Some(found) = lint_files(dir.path(), &files) else {
            eprintln!("SKIPPED: ruff is not installed (scripts/setup.sh installs it)");
            return;
        };
        let found: Vec<(String, Option<String>)> = found
            .unwrap()
            .into_iter()
            .map(|f| (f.path, f.issue.code))
            .collect();
        assert_eq!(
            found,
            [
                ("pkg/a.py".to_string(), Some("F401".to_string())),
                ("pkg/b.py".to_string(), Some("F821".to_string()))
            ]
        );
    }
}

//! CPython's `compile()` verdict from one long-lived interpreter.
//!
//! The engine checks every module it is about to write with CPython (tree-sitter's grammar
//! accepts code CPython refuses), and the syntax check of `zerorepo code` falls back to it
//! without ruff. One `python3` start a check cost about 0.1 s on the 2-core machine kind,
//! a CPU the model decodes on: the scripted nightly went from 4.3 s to 12.5 s with it. So
//! one interpreter answers every check of a process, in turn, behind a lock.
//!
//! Grammar of the pipe (one request, then its whole answer, in order):
//!
//! ```text
//! request = source-len SP name-len LF name source   ; lengths in bytes, decimal
//! answer  = *( line TAB column TAB message LF ) "." LF
//!         / "?" LF "." LF                           ; no verdict (see below)
//! ```
//!
//! Nothing is run: `compile()` parses and compiles, and the interpreter is isolated (`-I`:
//! no `PYTHONPATH`, user site or working directory on its path), without `site` (`-S`: no
//! `.pth` file runs), warnings ignored (a `SyntaxWarning` would import the warnings
//! machinery and write to a pipe nobody reads), started from `/` with an empty
//! environment. A source `compile()` fails on otherwise (a null byte, nesting deep enough
//! for `RecursionError`) has no verdict, as a crash has: the interpreter that dies or
//! answers something unreadable is dropped, and the next check starts a new one.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use super::check::{CheckError, Issue};

const SCRIPT: &str = "\
import sys
r, w = sys.stdin.buffer, sys.stdout
while True:
    head = r.readline()
    if not head:
        break
    size, name_size = map(int, head.split())
    name = r.read(name_size).decode('utf-8', 'replace')
    source = r.read(size).decode('utf-8')
    try:
        compile(source, name, 'exec', dont_inherit=True)
    except SyntaxError as e:
        message = ' '.join(str(e.msg).split())
        w.write(f'{e.lineno or 1}\\t{e.offset or 1}\\t{message}\\n')
    except Exception:
        w.write('?\\n')
    w.write('.\\n')
    w.flush()
";

/// The interpreter running `script`: see the module's doc for each flag.
fn command(python: &Path, script: &str) -> Command {
    let mut command = Command::new(python);
    command
        .args(["-I", "-S", "-X", "utf8", "-W", "ignore", "-c", script])
        .current_dir("/")
        .env_clear();
    command
}

struct Interpreter {
    python: PathBuf,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Interpreter {
    fn start(python: &Path) -> Result<Self, CheckError> {
        let mut child = command(python, SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(CheckError::spawn(python))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(CheckError::output(python, "its pipes could not be opened"));
        };
        Ok(Self {
            python: python.to_path_buf(),
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    /// One request and its answer; `Ok(None)` is the interpreter's "no verdict".
    fn ask(&mut self, source: &str, file_name: &str) -> Result<Option<Vec<Issue>>, CheckError> {
        let lost = |e: std::io::Error| CheckError::output(&self.python, e.to_string());
        let head = format!("{} {}\n", source.len(), file_name.len());
        let request = [head.as_bytes(), file_name.as_bytes(), source.as_bytes()].concat();
        self.stdin.write_all(&request).map_err(lost)?;
        self.stdin.flush().map_err(lost)?;
        let mut issues = Vec::new();
        let mut verdict = true;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).map_err(lost)? == 0 {
                return Err(CheckError::output(&self.python, "it exited during a check"));
            }
            match line.trim_end_matches('\n') {
                "." => return Ok(verdict.then_some(issues)),
                "?" => verdict = false,
                answer => issues.push(parse_issue(answer).ok_or_else(|| {
                    CheckError::output(&self.python, format!("it said {answer:?}"))
                })?),
            }
        }
    }
}

impl Drop for Interpreter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `line TAB column TAB message`.
fn parse_issue(answer: &str) -> Option<Issue> {
    let mut parts = answer.splitn(3, '\t');
    Some(Issue {
        line: parts.next()?.parse().ok()?,
        column: parts.next()?.parse().ok()?,
        code: None,
        message: parts.next()?.to_string(),
    })
}

/// An interpreter started on the first check and kept for the next ones.
struct Held(Mutex<Option<Interpreter>>);

impl Held {
    const fn new() -> Self {
        Self(Mutex::new(None))
    }

    fn check(
        &self,
        python: &Path,
        source: &str,
        file_name: &str,
    ) -> Result<Option<Vec<Issue>>, CheckError> {
        let mut held = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if held.as_ref().is_some_and(|i| i.python != python) {
            *held = None;
        }
        let interpreter = match held.as_mut() {
            Some(interpreter) => interpreter,
            None => held.insert(Interpreter::start(python)?),
        };
        let answer = interpreter.ask(source, file_name);
        if answer.is_err() {
            *held = None;
        }
        answer
    }
}

/// The process's one interpreter.
static INTERPRETER: Held = Held::new();

/// CPython's syntax errors in `source` compiled as `file_name`: empty when it compiles,
/// `Ok(None)` when `compile()` failed otherwise (no verdict), `Err` when the interpreter
/// could not be started or asked (it is dropped; the next check starts another).
pub(super) fn compile_errors(
    python: &Path,
    source: &str,
    file_name: &str,
) -> Result<Option<Vec<Issue>>, CheckError> {
    INTERPRETER.check(python, source, file_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python() -> Option<PathBuf> {
        let found = crate::programs::find("python3");
        if found.is_none() {
            eprintln!("SKIPPED: no python3 found (scripts/setup.sh installs it)");
        }
        found
    }

    fn pid(held: &Held) -> Option<u32> {
        let held = held.0.lock().unwrap_or_else(|p| p.into_inner());
        held.as_ref().map(|i| i.child.id())
    }

    #[test]
    fn the_interpreter_starts_from_the_root_directory_with_no_environment() {
        let Some(python) = python() else { return };
        let script = "import os, sys\nprint(os.getcwd(), sys.flags.isolated, sys.flags.no_site)\nfor k in os.environ: print(k)";
        let output = command(&python, script).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut lines = stdout.lines();
        assert_eq!(lines.next(), Some("/ 1 1"));
        // A launcher (a pyenv shim) sets its own few; nothing of this process's comes through.
        let launchers = |k: &str| {
            ["PATH", "PWD", "SHLVL", "LC_CTYPE"].contains(&k)
                || k.trim_start_matches('_').starts_with("PYENV")
        };
        let inherited: Vec<&str> = lines
            .filter(|k| !launchers(k) && std::env::var_os(k).is_some())
            .collect();
        assert!(inherited.is_empty(), "{inherited:?}");
        assert!(
            std::env::var_os("HOME").is_some(),
            "the test runs with HOME set"
        );
    }

    #[test]
    fn one_interpreter_answers_many_checks_and_a_dead_one_is_replaced() {
        let Some(python) = python() else { return };
        let held = Held::new();
        // Names and sources with newlines, tabs and non-ASCII text stay inside their request.
        let name = "odd\nname\t€.py";
        let broken = "def f(a=1, b):\n    return 'é'\n";
        for _ in 0..3 {
            let fine = held.check(&python, "x = '€'\n\n", name).unwrap();
            assert_eq!(fine, Some(Vec::new()));
            let errors = held.check(&python, broken, name).unwrap().unwrap();
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].line, 1);
        }
        // A null byte: compile() refuses it in one way or another, and the checks go on.
        let odd = held.check(&python, "x = 1\0\n", "m.py").unwrap();
        assert!(
            odd.as_ref().is_none_or(|errors| errors.len() == 1),
            "{odd:?}"
        );
        let first = pid(&held).expect("an interpreter is held");
        assert_eq!(
            held.check(&python, "y = 2\n", "m.py").unwrap(),
            Some(Vec::new())
        );
        assert_eq!(pid(&held), Some(first), "the same interpreter answered");

        let killed = std::process::Command::new("kill")
            .args(["-9", &first.to_string()])
            .status();
        assert!(killed.is_ok_and(|s| s.success()));
        // The check that finds it dead has no verdict; the next starts a new one.
        assert!(held.check(&python, "z = 3\n", "m.py").is_err());
        assert_eq!(
            held.check(&python, "z = 3\n", "m.py").unwrap(),
            Some(Vec::new())
        );
        assert_ne!(pid(&held), Some(first));
    }

    #[test]
    fn answers_are_read_by_the_grammar() {
        assert_eq!(
            parse_issue("3\t7\tinvalid syntax"),
            Some(Issue {
                line: 3,
                column: 7,
                code: None,
                message: "invalid syntax".to_string(),
            })
        );
        assert_eq!(parse_issue("x\t7\tm"), None);
        assert_eq!(parse_issue("3\t7"), None);
    }
}

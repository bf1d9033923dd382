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
//!
//! The source is hostile (a model's answer merged into a repository's module, which may be
//! any size), and `compile()` of a few megabytes takes seconds and gigabytes on the host: a
//! 7 MB list literal took 8 s and 830 MB with CPython 3.11. So the interpreter runs under
//! [`CheckLimits`]: its address space is capped (a `MemoryError` is no verdict) and each check
//! may spend a bounded CPU time (past it the kernel's `SIGXCPU` ends the interpreter: the
//! check has no verdict and the next one starts another).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use super::check::{CheckError, Issue};

/// `python -c SCRIPT MEMORY_BYTES CPU_SECONDS`: the soft CPU limit is set before each check
/// to the time spent so far plus the check's share, the hard one left as it was.
const SCRIPT: &str = "\
import resource, sys
r, w = sys.stdin.buffer, sys.stdout
memory, seconds = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
while True:
    head = r.readline()
    if not head:
        break
    size, name_size = map(int, head.split())
    name = r.read(name_size).decode('utf-8', 'replace')
    source = r.read(size).decode('utf-8')
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime) + 1 + seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
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

/// What the interpreter may take: its address space, and the CPU time of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CheckLimits {
    memory_bytes: u64,
    cpu_seconds: u32,
}

/// A generated module compiles in milliseconds; a 1 MiB data table (the largest literal a
/// plan may give) in about a second and 120 MB.
const LIMITS: CheckLimits = CheckLimits {
    memory_bytes: 1 << 31,
    cpu_seconds: 20,
};

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
    fn start(python: &Path, limits: CheckLimits) -> Result<Self, CheckError> {
        let mut child = command(python, SCRIPT)
            .args([
                limits.memory_bytes.to_string(),
                limits.cpu_seconds.to_string(),
            ])
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

/// An interpreter started on the first check and kept for the next ones, under `limits`.
struct Held {
    limits: CheckLimits,
    interpreter: Mutex<Option<Interpreter>>,
}

impl Held {
    const fn new(limits: CheckLimits) -> Self {
        Self {
            limits,
            interpreter: Mutex::new(None),
        }
    }

    fn check(
        &self,
        python: &Path,
        source: &str,
        file_name: &str,
    ) -> Result<Option<Vec<Issue>>, CheckError> {
        let mut held = self
            .interpreter
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if held.as_ref().is_some_and(|i| i.python != python) {
            *held = None;
        }
        let interpreter = match held.as_mut() {
            Some(interpreter) => interpreter,
            None => held.insert(Interpreter::start(python, self.limits)?),
        };
        let answer = interpreter.ask(source, file_name);
        if answer.is_err() {
            *held = None;
        }
        answer
    }
}

/// The process's one interpreter.
static INTERPRETER: Held = Held::new(LIMITS);

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
        let held = held.interpreter.lock().unwrap_or_else(|p| p.into_inner());
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
        let held = Held::new(LIMITS);
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

    /// A list literal of `n` numbers: about 7 bytes of source each.
    fn list_of(n: usize) -> String {
        let numbers: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        format!("x = [{}]\n", numbers.join(", "))
    }

    #[test]
    fn a_check_past_its_memory_or_cpu_time_has_no_verdict_and_the_next_one_is_answered() {
        let Some(python) = python() else { return };
        // About 4 MB of source: half a gigabyte and several seconds of CPU to compile.
        let big = list_of(600_000);
        let small_memory = Held::new(CheckLimits {
            memory_bytes: 200 << 20,
            cpu_seconds: 20,
        });
        assert_eq!(small_memory.check(&python, &big, "m.py").unwrap(), None);
        let no_time = Held::new(CheckLimits {
            memory_bytes: LIMITS.memory_bytes,
            cpu_seconds: 0,
        });
        assert!(no_time.check(&python, &big, "m.py").is_err());
        for held in [&small_memory, &no_time] {
            assert_eq!(
                held.check(&python, "y = 2\n", "m.py").unwrap(),
                Some(Vec::new())
            );
        }
        // The largest data table a plan may give (1 MiB) is checked under the engine's own.
        let table = list_of(150_000);
        assert!(table.len() > 1 << 20);
        assert_eq!(
            Held::new(LIMITS).check(&python, &table, "m.py").unwrap(),
            Some(Vec::new())
        );
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

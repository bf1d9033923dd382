//! The request as a specification: its examples ([`super::examples`]) become acceptance tests
//! that a change must pass, besides the repository's own checks.
//!
//! Why: a change that passes the repository's old tests can still not do what was asked (a
//! new function that copies an existing one passes every old test). So each example becomes
//! one pytest function, written into the sandbox's scratch copy only, in a file of its own at
//! the copy's root ([`FILE`]; another name when the repository has one of that name) and run
//! there by naming it, after the profile's checks, so the repository's suite never sees it.
//! It is never in the overlay, so it is never committed.
//!
//! Each test imports the example's function from the module that defines it in the staged
//! copy (a file the plan edits first, else the shortest path), else from the first Python
//! file the plan edits (where it should appear), and compares with `==` (floats
//! approximately) and, as a doctest would, by the type of each number shown (`5400` is not
//! `5400.0`), or checks the exception's class by name, so no import of it is needed.
//! Everything pasted into the test is a checked literal, a Python identifier, or a module
//! path of identifiers: nothing of the request runs on the host, and in the sandbox only as
//! such values.
//!
//! A bug report's examples are run before the change too (error-first): one that passes on
//! the repository as it is does not reproduce the bug; it is dropped, the audit trail says
//! so, and the suite stays the only check of it.

use std::path::Path;

use serde::Serialize;

use super::examples::{Example, Expect};
use super::{Check, CodeError, Request, Run, audit, run_check, scratch_copy};

/// The acceptance tests' file, at the root of the scratch copy.
pub(super) const FILE: &str = "test_zerorepo_acceptance.py";
/// Characters of pytest's own output kept before the summary of the examples.
const OUTPUT_CHARS: usize = 2_000;
/// Python files larger than this are not read for the definition of a function.
const MAX_SOURCE_BYTES: u64 = 1 << 20;

/// What became of one of the request's examples, for the outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExampleReport {
    /// The example in words: `` `f('a')` should return `'b'` ``.
    pub example: String,
    /// `passed`, `failed`, `not run`, or `does not reproduce` (a bug report's example that
    /// already passed before the change: not checked further).
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The examples of one run and what the last check of them found.
#[derive(Debug, Clone, Default)]
pub(super) struct Acceptance {
    /// The examples still checked.
    examples: Vec<Example>,
    /// The Python files the approved plan creates or edits, in plan order.
    planned: Vec<String>,
    /// The command line of the last acceptance check (to know it among the checks).
    command: Option<String>,
    /// The file the first failing example's function is (or should be) in.
    blame: Option<String>,
    /// Per example of the last check: `Err(why)` when it failed.
    results: Vec<Result<(), String>>,
    /// Examples of a bug report that passed before the change.
    not_reproduced: Vec<Example>,
}

impl Acceptance {
    pub(super) fn set_planned(&mut self, plan: &super::plan::ChangePlan) {
        self.planned = plan
            .tasks
            .iter()
            .filter_map(|t| t.path.clone())
            .filter(|p| p.ends_with(".py"))
            .collect();
    }

    /// The functions the request's examples call.
    pub(super) fn functions(&self) -> Vec<String> {
        self.examples.iter().map(|e| e.function.clone()).collect()
    }

    /// The calls of the request's examples, as Python source (`f(1, 2)`), unwrapped.
    pub(super) fn calls(&self) -> Vec<(String, String)> {
        self.examples
            .iter()
            .map(|e| (e.function.clone(), format!("{}({})", e.function, e.args)))
            .collect()
    }

    /// Whether the request gave any example, checked or found not to reproduce.
    pub(super) fn any_found(&self) -> bool {
        !self.examples.is_empty() || !self.not_reproduced.is_empty()
    }

    /// Whether `check` is the acceptance check.
    pub(super) fn is_check(&self, check: &Check) -> bool {
        self.command.as_deref() == Some(check.command.as_str())
    }

    /// The file a failing acceptance check points at.
    pub(super) fn blame(&self) -> Option<String> {
        self.blame.clone()
    }

    /// Why the change was not written, when the acceptance check still fails.
    pub(super) fn failure_reason(&self, rounds: u32) -> String {
        let failed: Vec<String> = self
            .examples
            .iter()
            .zip(&self.results)
            .filter_map(|(e, r)| {
                r.as_ref()
                    .err()
                    .map(|why| format!("{}: {why}", e.describe()))
            })
            .collect();
        let failed = match failed.is_empty() {
            true => "pytest did not pass the acceptance tests (see `accept` in the trail)".into(),
            false => failed.join("; "),
        };
        format!(
            "the request's example fails after {rounds} correction round(s) (acceptance test \
             {FILE}): {failed}"
        )
    }

    pub(super) fn report(&self) -> Vec<ExampleReport> {
        let mut out: Vec<ExampleReport> = self
            .not_reproduced
            .iter()
            .map(|e| ExampleReport {
                example: e.describe(),
                status: "does not reproduce".into(),
                why: Some("it passed before the change".into()),
            })
            .collect();
        for (i, example) in self.examples.iter().enumerate() {
            let (status, why) = match self.results.get(i) {
                None => ("not run", None),
                Some(Ok(())) => ("passed", None),
                Some(Err(why)) => ("failed", Some(why.clone())),
            };
            out.push(ExampleReport {
                example: example.describe(),
                status: status.into(),
                why,
            });
        }
        out
    }

    /// The sentence [`Self::hand_on`] adds to each task: the request's examples in words.
    fn note(&self) -> Option<String> {
        if self.examples.is_empty() {
            return None;
        }
        let list: Vec<String> = self.examples.iter().map(Example::describe).collect();
        Some(format!(
            "The request's examples, checked by tests after the change: {}.",
            list.join("; ")
        ))
    }

    /// Each file task's description ends with the request's examples: the task the planner
    /// hands on must not lose them.
    pub(super) fn hand_on(&self, mut plan: super::plan::ChangePlan) -> super::plan::ChangePlan {
        let Some(note) = self.note() else {
            return plan;
        };
        for task in &mut plan.tasks {
            let python = task.path.as_deref().is_some_and(|p| p.ends_with(".py"));
            if python && !task.description.contains(&note) {
                task.description = format!("{} {note}", task.description.trim_end());
            }
        }
        plan
    }

    /// `answer` without the sentence [`Self::hand_on`] added to its task: the model copies a
    /// task's words into the docstring it writes (dev half: a new function's docstring ended
    /// with it), and the engine's words never belong in the repository.
    pub(super) fn scrub(&self, answer: &str) -> String {
        match self.note() {
            Some(note) => answer.replace(&format!(" {note}"), "").replace(&note, ""),
            None => answer.to_string(),
        }
    }
}

impl Run {
    /// The request's examples, found once before planning; a bug report's are reproduced on
    /// the repository as it is (see the module doc).
    pub(super) async fn find_examples(
        &mut self,
        request: &Request,
        spec: &str,
    ) -> Result<(), CodeError> {
        let examples = super::examples::extract(spec);
        if examples.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = examples.iter().map(Example::describe).collect();
        let detail = format!("{} example(s) in the request", examples.len());
        self.audit
            .record("examples", None, "found", &detail, &list.join("\n"), None)?;
        self.accept.examples = examples;
        if !self.accept.examples.iter().any(|e| e.bug) {
            return Ok(());
        }
        let scratch = scratch_copy(&request.repo, &self.overlay)?;
        let bugs: Vec<Example> = self
            .accept
            .examples
            .iter()
            .filter(|e| e.bug)
            .cloned()
            .collect();
        let Some((check, results)) = run_examples(request, scratch.path(), &bugs, &[]).await?
        else {
            return Ok(());
        };
        if check.unavailable {
            self.audit.record(
                "reproduce",
                None,
                "unavailable",
                &check.command,
                &check.output,
                None,
            )?;
            return Ok(());
        }
        for (example, result) in bugs.iter().zip(results) {
            let (outcome, why) = match &result {
                Ok(()) => (
                    "does not reproduce",
                    "it passes before the change; the suite stays the only check",
                ),
                Err(why) => ("reproduced", why.as_str()),
            };
            self.audit
                .record("reproduce", None, outcome, &example.describe(), why, None)?;
            if result.is_ok() {
                self.accept.examples.retain(|e| e != example);
                self.accept.not_reproduced.push(example.clone());
            }
        }
        self.outcome.examples = self.accept.report();
        Ok(())
    }

    /// The acceptance check on a scratch copy the profile's checks ran in; `None` when there
    /// is nothing to check.
    pub(super) async fn check_examples(
        &mut self,
        request: &Request,
        scratch: &Path,
    ) -> Result<Option<Check>, CodeError> {
        let examples = self.accept.examples.clone();
        let planned = self.accept.planned.clone();
        let Some((check, results)) = run_examples(request, scratch, &examples, &planned).await?
        else {
            return Ok(None);
        };
        let files = super::list_files(scratch)?;
        self.accept.blame = examples
            .iter()
            .zip(&results)
            .find(|(_, r)| r.is_err())
            .and_then(|(e, _)| target(&e.function, &planned, &files, scratch))
            .map(|t| t.path);
        self.accept.command = Some(check.command.clone());
        self.accept.results = results;
        self.outcome.examples = self.accept.report();
        let outcome = match (check.unavailable, check.passed) {
            (true, _) => "unavailable",
            (_, true) => "passed",
            _ => "failed",
        };
        self.audit
            .record("accept", None, outcome, &check.command, &check.output, None)?;
        Ok(Some(check))
    }
}

/// Writes the tests of `examples` into `scratch` and runs them: the check (its output ends
/// with a summary per example) and each example's result. `None` when there is no example
/// or no Python in the copy to test.
async fn run_examples(
    request: &Request,
    scratch: &Path,
    examples: &[Example],
    planned: &[String],
) -> Result<Option<(Check, Vec<Result<(), String>>)>, CodeError> {
    if examples.is_empty() {
        return Ok(None);
    }
    let files = super::list_files(scratch)?;
    if !files.iter().any(|f| f.ends_with(".py")) {
        return Ok(None);
    }
    let name = file_name(&files);
    let targets: Vec<Option<ImportSite>> = examples
        .iter()
        .map(|e| target(&e.function, planned, &files, scratch))
        .collect();
    std::fs::write(scratch.join(&name), render(examples, &targets))?;
    let command = format!("python -m pytest -q -rA --tb=short -p no:cacheprovider {name}");
    let mut check = run_check(request, scratch, &command).await?;
    let results = read_results(&check.output, &name, examples.len());
    let summary = summary(examples, &results, &name);
    check.output = format!("{}\n{summary}", audit::tail(&check.output, OUTPUT_CHARS));
    check.passed = check.passed && results.iter().all(Result::is_ok);
    Ok(Some((check, results)))
}

/// [`FILE`], or a name no file of the repository has.
fn file_name(files: &[String]) -> String {
    let mut name = FILE.to_string();
    let mut n = 1;
    while files.contains(&name) {
        name = format!("test_zerorepo_acceptance_{n}.py");
        n += 1;
    }
    name
}

/// Where a function is imported from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ImportSite {
    /// The file, relative to the copy's root.
    pub path: String,
    /// Its dotted module name.
    pub module: String,
    /// The directory to put on `sys.path` ("" for the root).
    pub root: String,
}

impl ImportSite {
    /// The lines, each indented by `indent`, that import `function` (as `alias`) from this
    /// module, its root put on `sys.path` first (the file imports `os` and `sys` as `_os`
    /// and `_sys`).
    pub(super) fn import(&self, function: &str, alias: Option<&str>, indent: &str) -> String {
        let mut out = self.on_path(indent);
        let alias = alias.map(|a| format!(" as {a}")).unwrap_or_default();
        out.push_str(&format!(
            "{indent}from {} import {function}{alias}\n",
            self.module
        ));
        out
    }
}

impl ImportSite {
    /// The line that puts the module's root on `sys.path` (none for the copy's root).
    pub(super) fn on_path(&self, indent: &str) -> String {
        match self.root.is_empty() {
            true => String::new(),
            false => format!(
                "{indent}_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), '{}'))\n",
                self.root
            ),
        }
    }
}

/// The module that defines `function` in the copy (a planned file first), else the first
/// planned Python file that is not a test.
fn target(
    function: &str,
    planned: &[String],
    files: &[String],
    scratch: &Path,
) -> Option<ImportSite> {
    let defines = |path: &String| {
        let full = scratch.join(path);
        let small = std::fs::metadata(&full).is_ok_and(|m| m.len() <= MAX_SOURCE_BYTES);
        small
            && std::fs::read_to_string(&full).is_ok_and(|text| {
                crate::symbols::split_units(&text)
                    .iter()
                    .any(|u| u.def_name() == Some(function))
            })
    };
    let source = |p: &&String| p.ends_with(".py") && !super::fault::is_test_file(p);
    let mut defining: Vec<&String> = files.iter().filter(source).filter(|p| defines(p)).collect();
    defining.sort_by_key(|p| (!planned.contains(p), p.len()));
    let chosen = defining
        .first()
        .copied()
        .or_else(|| planned.iter().find(source))?;
    module_of(chosen, files)
}

/// `src/pkg/m.py` → `pkg.m` with `src` on the path: the module root is the first directory
/// up from the file that is not a package. `None` when a part is not an identifier.
pub(super) fn module_of(path: &str, files: &[String]) -> Option<ImportSite> {
    let stem = path.strip_suffix(".py")?;
    let parts: Vec<&str> = stem.split('/').collect();
    let mut root_len = parts.len() - 1;
    while root_len > 0 && files.contains(&format!("{}/__init__.py", parts[..root_len].join("/"))) {
        root_len -= 1;
    }
    let mut module: Vec<&str> = parts[root_len..].to_vec();
    if module.len() > 1 && module.last() == Some(&"__init__") {
        module.pop();
    }
    let root = parts[..root_len].join("/");
    let safe_dir = |p: &str| {
        !p.is_empty()
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    let ok = module.iter().all(|m| crate::python::is_identifier(m))
        && parts[..root_len].iter().all(|p| safe_dir(p));
    ok.then(|| ImportSite {
        path: path.to_string(),
        module: module.join("."),
        root,
    })
}

/// The test file: one function per example, named `test_example_N` (from 1).
fn render(examples: &[Example], targets: &[Option<ImportSite>]) -> String {
    let mut out = String::from(
        "\"\"\"The request's examples as tests, written by zerorepo in the sandbox's copy only.\"\"\"\n\
         import os as _os\nimport sys as _sys\n\nimport pytest as _pytest\n",
    );
    for (i, (example, target)) in examples.iter().zip(targets).enumerate() {
        out.push_str(&format!("\n\ndef test_example_{}():\n", i + 1));
        let Some(target) = target else {
            out.push_str(&format!(
                "    _pytest.fail('no module of the repository defines {}')\n",
                example.function
            ));
            continue;
        };
        out.push_str(&target.import(&example.function, Some("_zr_function"), "    "));
        out.push_str(&body(example));
    }
    // Last, so that the line numbers a failure shows the correction stay those of the
    // examples whatever the helpers grow to.
    out.push_str(SAME_KIND);
    out
}

fn body(example: &Example) -> String {
    let call = format!("_zr_function({})", example.args);
    let call = match &example.wrap {
        Some(wrap) => format!("{wrap}({call})"),
        None => call,
    };
    match &example.expect {
        Expect::Returns(value) => {
            let compare = if is_float(value) {
                "_pytest.approx(_zr_expected)"
            } else {
                "_zr_expected"
            };
            let again = match &example.wrap {
                Some(wrap) => format!("{wrap}(_zr_function(*_zr_pos, **_zr_kw))"),
                None => "_zr_function(*_zr_pos, **_zr_kw)".into(),
            };
            format!(
                "    _zr_expected = {value}\n    _zr_result = {call}\n    assert _zr_result == {compare}, \
                 'got ' + repr(_zr_result) + ', expected ' + repr(_zr_expected)\n{KIND_ASSERT}{}",
                ITERATOR_VARIANT
                    .replace("SAID", &said(&example.params))
                    .replace("ARGS", &example.args)
                    .replace("AGAIN", &again)
                    .replace("COMPARE", compare)
            )
        }
        Expect::Raises(name) => format!(
            "    with _pytest.raises(BaseException) as _zr_caught:\n        {call}\n    \
             _zr_names = [k.__name__ for k in type(_zr_caught.value).__mro__]\n    \
             assert '{name}' in _zr_names, 'raised ' + type(_zr_caught.value).__name__ + ', not {name}'\n"
        ),
    }
}

/// A number an example shows says its type too, as in a doctest (which compares `repr`s):
/// `5400.0` is a float, `2` an int, `False` a bool, inside lists, tuples and dict values as
/// well. `==` alone lets `5400` pass for `5400.0` and `0` for `False`, so a function that
/// returns the wrong type passed the request's own example; `zerorepo generate` already reads
/// a plan's examples by `repr`. Other types (a `Decimal`, a `Fraction`) are not judged here.
const SAME_KIND: &str = "\n\nimport numbers as _numbers\n\n\ndef _zr_kind(value):\n    if isinstance(value, bool):\n        return 'bool'\n    \
if isinstance(value, _numbers.Integral):\n        return 'int'\n    \
return 'float' if isinstance(value, float) else None\n\n\n\
def _zr_same_kind(got, expected):\n    kinds = (_zr_kind(got), _zr_kind(expected))\n    \
if None not in kinds:\n        return kinds[0] == kinds[1]\n    \
if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)) and len(got) == len(expected):\n        \
return all(_zr_same_kind(g, e) for g, e in zip(got, expected))\n    \
if isinstance(expected, dict) and isinstance(got, dict):\n        \
return all(_zr_same_kind(got[k], v) for k, v in expected.items() if k in got)\n    return True\n";

/// The check of [`SAME_KIND`] after a value compared equal.
const KIND_ASSERT: &str = "    assert _zr_same_kind(_zr_result, _zr_expected), 'got ' + repr(_zr_result) + ' (' + \
type(_zr_result).__name__ + '), expected ' + repr(_zr_expected) + ' (' + type(_zr_expected).__name__ + \
'): the example shows the type too, as a doctest does'\n";

/// The example again with each list or tuple given to a parameter whose name says
/// `iterable` passed as a one-shot iterator of the same items: in Python an iterable is
/// anything `for` can walk once, and a function written for lists only (`len(iterable)`,
/// `iterable[i - 1]`) passed the request's own example and failed every generator the
/// library's users pass (code corpus, dev half). The names are read from the function at run
/// time, and from the request's own signature of it at the same place: the model renamed the
/// request's `iterable` to `possible_sequence` and indexed it (dev half again). With no such
/// parameter the variant checks nothing.
const ITERATOR_VARIANT: &str = "    import inspect as _inspect\n    _zr_said = SAID\n    _zr_pos, _zr_kw = (lambda *a, **k: (list(a), k))(ARGS)\n    \
try:\n        _zr_params = list(_inspect.signature(_zr_function).parameters.values())\n    \
except (TypeError, ValueError):\n        _zr_params = []\n    _zr_turned = []\n    \
for _zr_at, _zr_value in enumerate(_zr_pos):\n        \
_zr_param = _zr_params[min(_zr_at, len(_zr_params) - 1)] if _zr_params else None\n        \
if _zr_param is None or (_zr_at >= len(_zr_params) and _zr_param.kind != _zr_param.VAR_POSITIONAL):\n            break\n        \
_zr_names = _zr_param.name + ' ' + (_zr_said[_zr_at] if _zr_at < len(_zr_said) else '')\n        \
if 'iterable' in _zr_names.lower() and isinstance(_zr_value, (list, tuple)):\n            \
_zr_pos[_zr_at] = iter(_zr_value)\n            _zr_turned.append(_zr_param.name)\n    \
if _zr_turned:\n        _zr_how = 'with ' + ', '.join(_zr_turned) + ' given as an iterator (the request says iterable), '\n        \
try:\n            _zr_again = AGAIN\n        except Exception as _zr_error:\n            \
raise AssertionError(_zr_how + 'the call raised ' + type(_zr_error).__name__ + ': ' + str(_zr_error)) from None\n        \
assert _zr_again == COMPARE, _zr_how + 'got ' + repr(_zr_again) + ', expected ' + repr(_zr_expected)\n";

/// `params` as a Python list of strings; each is an identifier ([`super::examples`] keeps no
/// other), so nothing of the request can close the quotes.
fn said(params: &[String]) -> String {
    let quoted: Vec<String> = params
        .iter()
        .filter(|p| crate::python::is_identifier(p))
        .map(|p| format!("'{p}'"))
        .collect();
    format!("[{}]", quoted.join(", "))
}

fn is_float(value: &str) -> bool {
    let digits = value.trim_start_matches(['-', '+']);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.contains(['.', 'e', 'E'])
        && !digits.starts_with("0x")
}

/// Per example, from pytest's `-rA` summary: `Ok` for a `PASSED` line, else the reason of
/// its `FAILED`/`ERROR` line (or of an error collecting the file), whole from its traceback
/// when that is in the output.
fn read_results(output: &str, file: &str, count: usize) -> Vec<Result<(), String>> {
    let mut results: Vec<Result<(), String>> = (0..count)
        .map(|_| Err("did not run (see the output)".to_string()))
        .collect();
    for line in output.lines() {
        let Some((status, rest)) = line.split_once(' ') else {
            continue;
        };
        if !matches!(status, "PASSED" | "FAILED" | "ERROR") {
            continue;
        }
        let (id, why) = rest.split_once(" - ").unwrap_or((rest, ""));
        let why = if why.is_empty() {
            status.to_lowercase()
        } else {
            why.to_string()
        };
        let Some(tail) = id.strip_prefix(file) else {
            continue;
        };
        let Some(n) = tail.strip_prefix("::test_example_") else {
            // The file itself failed to collect: every example with it.
            results.iter_mut().for_each(|r| *r = Err(why.clone()));
            continue;
        };
        let Some(slot) = n
            .parse::<usize>()
            .ok()
            .and_then(|n| results.get_mut(n.checked_sub(1)?))
        else {
            continue;
        };
        *slot = if status == "PASSED" { Ok(()) } else { Err(why) };
    }
    // The summary line may be cut to the terminal's width; the traceback's `E` line is whole.
    for (n, why) in error_lines(output) {
        if let Some(Err(slot)) = n.checked_sub(1).and_then(|i| results.get_mut(i)) {
            *slot = why;
        }
    }
    results
}

/// The first `E   ...` line of each failing test's section (`___ test_example_N ___`).
fn error_lines(output: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<usize> = None;
    for line in output.lines() {
        let trimmed = line.trim_matches(|c: char| c == '_' || c == ' ');
        if line.starts_with("___") {
            current = trimmed
                .strip_prefix("test_example_")
                .and_then(|n| n.parse().ok());
            continue;
        }
        if let (Some(n), Some(why)) = (current, line.strip_prefix("E ")) {
            out.push((n, why.trim().to_string()));
            current = None;
        }
    }
    out
}

/// The examples' results in words, for the correction prompt and the trail.
fn summary(examples: &[Example], results: &[Result<(), String>], file: &str) -> String {
    let mut out = format!(
        "The request's examples, checked by tests zerorepo wrote from them ({file}, not part of \
         the repository; change the code, not the tests):\n"
    );
    for (example, result) in examples.iter().zip(results) {
        match result {
            Ok(()) => out.push_str(&format!("- passed: {}\n", example.describe())),
            Err(why) => out.push_str(&format!("- FAILED: {}: {why}\n", example.describe())),
        }
    }
    out
}

#[cfg(test)]
mod tests;

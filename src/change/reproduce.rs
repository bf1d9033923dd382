//! Tests that show the request is not done yet, written by the model and run on the
//! repository as it is, before anything is staged: seed 003's error-first rule for requests
//! that give no example to check.
//!
//! Why: a request that describes a change of existing behaviour in words ("adding one month
//! to 31 January 1900 lands on 29 February") has no example [`super::examples`] can read, so
//! only the repository's suite judged the change, and that suite had passed the code the
//! request was about. So the model writes three tests of what the request asks; they run in
//! a scratch copy of the repository before the change, and only those that fail there on an
//! assertion (or `pytest.raises` that did not see its error), or with an exception raised in
//! the repository's own code, are kept: they reproduce. A test that passes already, or fails
//! in its own frame (a wrong call, a date that does not exist, a bad import), shows nothing
//! and goes.
//!
//! When no test reproduces, the model is asked once more, told that its tests showed
//! nothing, at a wider temperature; when that shows nothing either, nothing is staged and the
//! run ends saying why and what the user can give. Error-first, strictly: on the code
//! corpus's dev half, requests whose reproduction showed nothing went on to spend their whole
//! correction budget (`mi-all-equal-empty`, ten minutes), and a change that no check can tell
//! from the code as it is, written because the old suite still passes, is a change written
//! unverified, which is what `zerorepo code` promises never to do.
//!
//! After the change the kept tests run with the checks ([`FILE`], in the scratch copy only,
//! never committed), and the change needs **one** of them to pass: the model's expected
//! values are weak evidence (a small model's are wrong about a third of the time), so a
//! test that turns from failing to passing is what a change must show, not all of them.
//!
//! Nothing is asked when the request gives examples (they are the acceptance tests, or
//! showed that the request's bug is not there), when it asks for something new or for the
//! same behaviour in another form (its first word, [`asks`]: nothing exists yet to fail
//! before, or nothing may fail after, and the suite is that check), when the repository's
//! own tests already fail before the change (they reproduce it, and they are the
//! maintainers' word: on the code corpus's dev half a model's test that expected a wrong
//! value kept a fix that turned them green from being written), or when the plan changes no
//! existing Python module.

use super::accept::{ImportSite, module_of};
use super::fault::is_test_file;
use super::plan::{ChangePlan, TaskKind};
use super::probe::{sections, test_units};
use super::{Check, CodeError, Request, Run, audit, run_check, scratch_copy};

/// The tests' file, at the root of the scratch copy.
pub(super) const FILE: &str = "test_zerorepo_reproduce.py";
/// Characters of pytest's output kept in the check.
const OUTPUT_CHARS: usize = 3_000;
/// Tries at a reproduction: the second is told why the first showed nothing and sampled
/// wider (the greedy answer would repeat the same tests).
const TRIES: usize = 2;

/// Why a try of the reproduction found nothing: its outcome in the trail, and the reason's
/// words.
#[derive(Debug, Clone, Copy)]
enum Miss {
    /// No prompt fitted, or no answer came.
    NotAsked,
    /// The answer held no test function.
    Unusable,
    /// The tests ran, and none failed as the request's change would show.
    NoFailure,
}

impl Miss {
    fn outcome(self) -> &'static str {
        match self {
            Miss::NotAsked => "skipped",
            Miss::Unusable => "unusable",
            Miss::NoFailure => "does not reproduce",
        }
    }
}

/// What one try at a reproduction found.
enum Tried {
    /// Tests that fail on the code as it is were kept.
    Reproduced,
    /// pytest is not there to run: no check can reproduce, the run goes on without.
    Unavailable,
    /// Nothing reproduced, for this reason.
    Nothing(String),
}

/// The tests that reproduced, kept for the checks after the change.
#[derive(Debug, Clone, Default)]
pub(super) struct Reproduction {
    /// The test file of the kept tests only (empty: nothing reproduced, or nothing asked).
    file: String,
    names: Vec<String>,
    /// The module the tests are about: the file a failure of them blames.
    path: String,
    command: Option<String>,
}

impl Reproduction {
    /// Whether `check` is the reproduction's check.
    pub(super) fn is_check(&self, check: &Check) -> bool {
        self.command.as_deref() == Some(check.command.as_str())
    }

    /// The module a failing reproduction check points at.
    pub(super) fn blame(&self) -> Option<String> {
        (!self.path.is_empty()).then(|| self.path.clone())
    }
}

/// The start of the answer: the fence, pytest, and every public name of the module (begun
/// at `from module import `, the 1.5B model wrote a comment there, and nothing ran).
pub(super) fn prefill(module: &str) -> String {
    format!("```python\nimport pytest\n\nfrom {module} import *\n")
}

/// What a request asks of existing behaviour, read from its first word (markdown marks such
/// as a heading's `#` skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asks {
    /// Something new ("add", "create"): nothing exists yet to fail before.
    New,
    /// The same behaviour in another form ("refactor", "rename", "tidy", "document"): the
    /// repository's tests passing before and after is the check, and no test can fail first.
    SameBehaviour,
    /// A fix or a change of behaviour: a test must fail before it.
    Change,
}

pub(super) fn asks(spec: &str) -> Asks {
    let first = spec
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .find(|w| !w.is_empty())
        .unwrap_or_default()
        .to_ascii_lowercase();
    match first.as_str() {
        "add" | "create" | "write" | "implement" | "introduce" | "new" => Asks::New,
        "refactor" | "rename" | "tidy" | "clean" | "reformat" | "format" | "document"
        | "annotate" | "simplify" | "reorganize" | "reorganise" | "restructure" | "move"
        | "split" | "extract" | "inline" | "deduplicate" => Asks::SameBehaviour,
        _ => Asks::Change,
    }
}

/// The existing, non-test Python module the plan changes first.
fn planned_module(plan: &ChangePlan, files: &[String]) -> Option<String> {
    plan.tasks
        .iter()
        .filter(|t| t.kind == TaskKind::ModifyFile)
        .filter_map(|t| t.path.clone())
        .find(|p| p.ends_with(".py") && !is_test_file(p) && files.contains(p))
}

/// Python that makes the target module's functions taking an iterable check, on each call
/// with a list, that a one-shot iterator of the same items gives the same result.
const ITERABLE_GUARD: &str = include_str!("iterable_guard.py");

/// The model's tests as a file (the module's root on `sys.path`, its imports and `test_`
/// functions, those named in `keep` only when given) and the names of its tests.
///
/// The kept tests (`keep` given) are the file run after the change, and it guards the
/// module's public functions with a parameter named like `iterable` ([`ITERABLE_GUARD`]): a
/// request in words ("an empty iterable gives False") reproduced with a list only let a
/// change written for lists only (`if not iterable`) pass, where a one-shot iterator got
/// `None` (code corpus, dev half). It is the rule the request's own examples follow
/// ([`super::accept`]), for tests the model wrote.
pub(super) fn render(
    answer: &str,
    target: &ImportSite,
    keep: Option<&[String]>,
) -> (String, Vec<String>) {
    let mut file = format!(
        "\"\"\"Tests of what the request asks, written by the model before the change; run by \
         zerorepo in the sandbox's copy only.\"\"\"\nimport os as _os\nimport sys as _sys\n\n{}",
        target.on_path("")
    );
    if keep.is_some() {
        // The module name is dotted identifiers ([`module_of`]): nothing can close the quotes.
        file.push_str(&format!(
            "\n{ITERABLE_GUARD}\n\n_zr_guard_iterables('{}')\n",
            target.module
        ));
    }
    let mut names = Vec::new();
    for unit in test_units(answer) {
        if let Some(name) = &unit.test {
            if keep.is_some_and(|k| !k.contains(name)) || names.contains(name) {
                continue;
            }
            names.push(name.clone());
        }
        file.push_str(&format!("\n\n{}\n", unit.text));
    }
    match names.is_empty() {
        true => (String::new(), names),
        false => (file, names),
    }
}

/// The tests pytest (`-rA`) reports with `status` (`PASSED`, `FAILED`) in [`FILE`].
fn with_status(output: &str, status: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix(status)?.strip_prefix(' '))
        .filter_map(|id| id.strip_prefix(FILE)?.strip_prefix("::"))
        .map(|rest| base_name(rest.split(" - ").next().unwrap_or(rest)))
        .collect()
}

/// A test's name without its parameters (`test_x[1-2]` is `test_x`).
fn base_name(id: &str) -> String {
    id.split('[').next().unwrap_or(id).trim().to_string()
}

/// The tests that reproduce, from pytest's output (`-rA --tb=short`) on the code as it is:
/// failed on an assertion or an unseen `pytest.raises`, or with an exception raised outside
/// the test file in one of the repository's `files`.
pub(super) fn reproducing(
    output: &str,
    names: &[String],
    documented: &[String],
    files: &[String],
) -> Vec<String> {
    let failed = with_status(output, "FAILED");
    let sections = sections(output);
    names
        .iter()
        .filter(|n| failed.contains(n))
        .filter(|n| {
            sections
                .iter()
                .filter(|(name, _)| base_name(name) == **n)
                .any(|(_, section)| shows_the_request(section, documented, files))
        })
        .cloned()
        .collect()
}

/// A failing test's section shows what the request asks, not a mistake of the test. An
/// error that was not raised counts only when the request names it (`documented`): the
/// model expected a `ValueError` of a request that said the call gives `False`. An
/// exception counts when it was raised in a file of the repository (`files`): one raised in
/// the standard library on the test's own input is no change's to fix.
fn shows_the_request(section: &str, documented: &[String], files: &[String]) -> bool {
    let frame = section
        .lines()
        .rfind(|l| !l.starts_with([' ', 'E']) && l.contains(": in "));
    let in_repository = frame
        .and_then(|l| l.split(':').next())
        .is_some_and(|path| path != FILE && files.iter().any(|f| f == path));
    let asserted = section.lines().any(|l| {
        let error = l.strip_prefix('E').map(str::trim_start).unwrap_or_default();
        let unraised = error.strip_prefix("Failed: DID NOT RAISE");
        let named = |text: &str| documented.iter().any(|d| text.contains(d.as_str()));
        error.starts_with("assert ")
            || error.starts_with("AssertionError")
            || unraised.is_some_and(named)
    });
    asserted || in_repository
}

fn command() -> String {
    format!("python -m pytest -q -rA --tb=short -p no:cacheprovider {FILE}")
}

impl Run {
    /// Step 4's reproduction, when the request needs one: not in self-heal or the single-answer
    /// baseline, and not when the repository's own tests fail before the change (`diagnosis`):
    /// they reproduce it already, and they are the maintainers' word, so the model's tests
    /// would only add weak evidence that can block a change that turns them green. `Some(why)`
    /// when nothing reproduced: nothing is staged.
    pub(super) async fn reproduce_first(
        &mut self,
        request: &Request,
        spec: &str,
        plan: &ChangePlan,
        diagnosis: Option<&Check>,
    ) -> Result<Option<String>, CodeError> {
        if request.options.mode == super::Mode::SelfHeal || request.options.single_answer {
            return Ok(None);
        }
        if diagnosis.is_some_and(|d| !d.passed && !d.unavailable) {
            let why = "the repository's tests fail before the change";
            self.note("skipped", why, "", None)?;
            return Ok(None);
        }
        self.reproduce(request, spec, plan).await
    }

    /// Before the change: the model's tests of the request, run on the repository as it is;
    /// those that reproduce are kept (see the module doc). `Some(why)` when the request
    /// needed a reproduction and none was found: nothing is staged.
    pub(super) async fn reproduce(
        &mut self,
        request: &Request,
        spec: &str,
        plan: &ChangePlan,
    ) -> Result<Option<String>, CodeError> {
        if self.accept.any_found() || asks(spec) != Asks::Change {
            return Ok(None);
        }
        let Some(path) = planned_module(plan, &self.files) else {
            return Ok(None);
        };
        let Some(target) = module_of(&path, &self.files) else {
            return Ok(None);
        };
        if self.files.iter().any(|f| f == FILE) {
            return Ok(None);
        }
        let mut retry = None;
        for _ in 0..TRIES {
            match self
                .try_reproduce(request, spec, &path, &target, retry.as_deref())
                .await?
            {
                Tried::Reproduced | Tried::Unavailable => return Ok(None),
                Tried::Nothing(why) => retry = Some(why),
            }
        }
        Ok(retry.map(|why| {
            format!(
                "nothing shows the request is not done yet: the request gives no example, the \
                 repository's tests pass, and {why}; a change no check can tell from the code \
                 as it is would be written unverified. Give an example of a call and what it \
                 must return (`f(a)` returns `b`), or a failing test, and run again"
            )
        }))
    }

    /// One try at tests that fail on the code as it is; `retry` says why the last try's did
    /// not (asked again at a wider temperature).
    async fn try_reproduce(
        &mut self,
        request: &Request,
        spec: &str,
        path: &str,
        target: &ImportSite,
        retry: Option<&str>,
    ) -> Result<Tried, CodeError> {
        let current = self.overlay.read(path)?.unwrap_or_default();
        let prompt = super::prompt::reproduce_request(spec, path, &target.module, &current, retry);
        let asked = match prompt {
            Ok(asked) => asked,
            Err(why) => return self.nothing(Miss::NotAsked, path, &why.to_string(), None),
        };
        let mut answer = match self.ask(request, &asked).await {
            Ok(answer) => answer,
            Err(why) => return self.nothing(Miss::NotAsked, path, &why.to_string(), None),
        };
        if !answer.starts_with("```") {
            answer = format!("{}{answer}", asked.prefill.clone().unwrap_or_default());
        }
        let usage = self.last_usage.take();
        let (file, names) = render(&answer, target, None);
        if file.is_empty() {
            return self.nothing(
                Miss::Unusable,
                path,
                "no test function in the answer",
                usage,
            );
        }
        self.audit
            .record("reproduce", None, "asked", &names.join(", "), &file, usage)?;
        let scratch = scratch_copy(&request.repo, &self.overlay)?;
        std::fs::write(scratch.path().join(FILE), &file)?;
        let check = run_check(request, scratch.path(), &command()).await?;
        if check.unavailable {
            let output = audit::tail(&check.output, OUTPUT_CHARS);
            self.note("unavailable", &command(), output, None)?;
            return Ok(Tried::Unavailable);
        }
        let documented = super::probe::named_errors(spec);
        let kept = reproducing(&check.output, &names, &documented, &self.files);
        let output = audit::tail(&check.output, OUTPUT_CHARS);
        if kept.is_empty() {
            let why = format!(
                "the model's tests of it ({}) do not fail on the code as it is",
                names.join(", ")
            );
            return self.nothing(Miss::NoFailure, &why, output, None);
        }
        self.audit.record(
            "reproduce",
            None,
            "reproduced",
            &kept.join(", "),
            output,
            None,
        )?;
        let (file, names) = render(&answer, target, Some(&kept));
        self.reproduction = Reproduction {
            file,
            names,
            path: path.to_string(),
            command: None,
        };
        Ok(Tried::Reproduced)
    }

    /// A try that found nothing, in the trail; `detail` is what the reason hands on.
    fn nothing(
        &mut self,
        miss: Miss,
        detail: &str,
        excerpt: &str,
        usage: Option<crate::llm::Usage>,
    ) -> Result<Tried, CodeError> {
        self.note(miss.outcome(), detail, excerpt, usage)?;
        let why = match miss {
            Miss::NotAsked => format!("the tests of it could not be asked ({detail}: {excerpt})"),
            Miss::Unusable => format!("the model's tests of it could not be used ({detail})"),
            Miss::NoFailure => detail.to_string(),
        };
        Ok(Tried::Nothing(why))
    }

    /// A step of the reproduction in the trail.
    fn note(
        &mut self,
        outcome: &str,
        detail: &str,
        excerpt: &str,
        usage: Option<crate::llm::Usage>,
    ) -> Result<(), CodeError> {
        self.audit
            .record("reproduce", None, outcome, detail, excerpt, usage)?;
        Ok(())
    }

    /// After the change, on a scratch copy the other checks ran in: the kept tests, of which
    /// one must pass. `None` when nothing reproduced.
    pub(super) async fn check_reproduction(
        &mut self,
        request: &Request,
        scratch: &std::path::Path,
    ) -> Result<Option<Check>, CodeError> {
        if self.reproduction.file.is_empty() || scratch.join(FILE).exists() {
            return Ok(None);
        }
        std::fs::write(scratch.join(FILE), &self.reproduction.file)?;
        let command = command();
        let mut check = run_check(request, scratch, &command).await?;
        self.reproduction.command = Some(command.clone());
        if check.unavailable {
            return Ok(Some(check));
        }
        let passed = with_status(&check.output, "PASSED");
        check.passed = self.reproduction.names.iter().any(|n| passed.contains(n));
        let tail = audit::tail(&check.output, OUTPUT_CHARS).to_string();
        check.output = match check.passed {
            true => tail,
            false => format!(
                "{tail}\nThese tests of the request failed before the change and still fail, \
                 every one of them ({FILE}, written from the request before the change, not \
                 part of the repository; change the code, not the tests): {}\n",
                self.reproduction.names.join(", ")
            ),
        };
        let outcome = if check.passed {
            "passed"
        } else {
            "still fails"
        };
        self.audit
            .record("reproduce", None, outcome, &command, &check.output, None)?;
        Ok(Some(check))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> ImportSite {
        module_of(
            "src/isodate/duration.py",
            &[
                "src/isodate/__init__.py".into(),
                "src/isodate/duration.py".into(),
            ],
        )
        .unwrap()
    }

    #[test]
    fn only_a_fix_or_a_change_of_behaviour_is_reproduced() {
        let new = "Add `re_count(regex, s)` to funcy/strings.py";
        assert_eq!(asks(new), Asks::New);
        assert_eq!(asks("implement a parser"), Asks::New);
        assert_eq!(
            asks("# Add multiplication to calc\n\nAdd `multiply(a, b)`."),
            Asks::New
        );
        assert_eq!(asks("Tidy text.py."), Asks::SameBehaviour);
        assert_eq!(asks("Rename `f` to `g` everywhere"), Asks::SameBehaviour);
        let words = "isodate treats every year divisible by 4 as a leap year";
        assert_eq!(asks(words), Asks::Change);
        let change = "Change `all_equal` so that an empty iterable gives False";
        assert_eq!(asks(change), Asks::Change);
        assert_eq!(asks("Fix the off-by-one in chunked"), Asks::Change);
    }

    #[test]
    fn the_file_keeps_imports_and_tests_and_can_keep_only_some() {
        let answer = format!(
            "{}from isodate.duration import max_days_in_month\n\nX = 1\n\n\ndef helper():\n    pass\n\n\ndef test_request_1900():\n    assert max_days_in_month(1900, 2) == 28\n\n\ndef test_request_2000():\n    assert max_days_in_month(2000, 2) == 29\n```\nDone.",
            prefill("isodate.duration")
        );
        let (file, names) = render(&answer, &target(), None);
        assert_eq!(names, ["test_request_1900", "test_request_2000"]);
        assert!(file.contains("'src'))\n"), "{file}");
        assert!(
            file.contains("from isodate.duration import max_days_in_month\n"),
            "{file}"
        );
        assert!(!file.contains("X = 1") && !file.contains("helper") && !file.contains("Done"));
        let (kept, names) = render(&answer, &target(), Some(&["test_request_1900".into()]));
        assert_eq!(names, ["test_request_1900"]);
        assert!(kept.contains("test_request_1900") && !kept.contains("test_request_2000"));
        // Only the file run after the change guards the module's functions, once its root
        // is on the path.
        let guard = "_zr_guard_iterables('isodate.duration')\n";
        assert!(!file.contains(guard), "{file}");
        let (path_at, guard_at) = (kept.find("'src'))").unwrap(), kept.find(guard).unwrap());
        assert!(path_at < guard_at && guard_at < kept.find("def test_").unwrap());
        assert_eq!(render("no code here", &target(), None).0, "");
    }

    #[test]
    fn an_error_that_was_not_raised_reproduces_only_when_the_request_names_it() {
        let output = "\
=================================== FAILURES ===================================
_____________________________ test_request_empty _______________________________
test_zerorepo_reproduce.py:9: in test_request_empty
    with pytest.raises(ValueError):
E   Failed: DID NOT RAISE <class 'ValueError'>
=========================== short test summary info ============================
FAILED test_zerorepo_reproduce.py::test_request_empty - Failed: DID NOT RAISE
";
        let names = ["test_request_empty".to_string()];
        assert!(reproducing(output, &names, &[], &[]).is_empty());
        let documented = ["ValueError".to_string()];
        assert_eq!(reproducing(output, &names, &documented, &[]), names);
    }

    #[test]
    fn a_failure_reproduces_on_an_assertion_or_in_the_repositorys_code_only() {
        let output = "\
FFF.                                                                     [100%]
=================================== FAILURES ===================================
_______________________________ test_request_a _________________________________
test_zerorepo_reproduce.py:9: in test_request_a
    assert max_days_in_month(1900, 2) == 28
E   assert 29 == 28
_______________________________ test_request_b _________________________________
test_zerorepo_reproduce.py:13: in test_request_b
    date(1900, 1, 31) + Duration(months=1)
src/isodate/duration.py:200: in __add__
    return date(y, m, d)
E   ValueError: day is out of range for month
_______________________________ test_request_c _________________________________
test_zerorepo_reproduce.py:17: in test_request_c
    date(1900, 2, 29)
E   ValueError: day is out of range for month
_______________________________ test_request_e _________________________________
test_zerorepo_reproduce.py:21: in test_request_e
    datetime.strptime('1900-02-29', '%Y-%m-%d')
/usr/lib/python3.11/_strptime.py:568: in _strptime_datetime
    tt, fraction, gmtoff_fraction = _strptime(data_string, format)
E   ValueError: day is out of range for month
______________________________ test_request_f[1900] ____________________________
test_zerorepo_reproduce.py:25: in test_request_f
    assert max_days_in_month(year, 2) == 28
E   assert 29 == 28
=========================== short test summary info ============================
PASSED test_zerorepo_reproduce.py::test_request_d
FAILED test_zerorepo_reproduce.py::test_request_a - assert 29 == 28
FAILED test_zerorepo_reproduce.py::test_request_b - ValueError: day is out of range
FAILED test_zerorepo_reproduce.py::test_request_c - ValueError: day is out of range
FAILED test_zerorepo_reproduce.py::test_request_e - ValueError: day is out of range
FAILED test_zerorepo_reproduce.py::test_request_f[1900] - assert 29 == 28
PASSED test_zerorepo_reproduce.py::test_request_f[2000]
";
        let names: Vec<String> = ["a", "b", "c", "d", "e", "f"]
            .iter()
            .map(|n| format!("test_request_{n}"))
            .collect();
        // c fails in its own frame, e in the standard library: neither is the repository's.
        assert_eq!(
            reproducing(
                output,
                &names,
                &[],
                &["src/isodate/duration.py".to_string()]
            ),
            ["test_request_a", "test_request_b", "test_request_f"]
        );
        assert_eq!(
            with_status(output, "PASSED"),
            ["test_request_d", "test_request_f"]
        );
    }
}

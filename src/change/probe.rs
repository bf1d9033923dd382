//! A new public function called on inputs the model picks, to see whether it crashes, and
//! whether it returns what is expected of it: first those the request gives no example of,
//! then those its examples call.
//!
//! Why: such a function has no acceptance test, and the repository's suite does not know it,
//! so a change that adds it passed every check whatever its body did (on the code corpus's
//! dev half, `re_count` was written as done twice without a call of it ever run). The
//! model's expected values are weak evidence (a third of a small model's are wrong), but an
//! exception raised in the new function's own code, on an input the request allows, that the
//! request does not name, is strong: the function breaks there whatever was expected
//! (`generate` weighs it the same way, [`crate::python::crashed_in`]). So the
//! model writes calls, once per run (at most [`MAX_FUNCTIONS`] functions), they run in
//! the sandbox's scratch copy after the acceptance tests ([`FILE`], never in the overlay,
//! never committed), and the check fails on such a crash; a call that fails in its own
//! frame before the function returned (a wrong argument) counts for nothing. A call the
//! model wrapped in `pytest.raises` of an error the request names, where the function
//! returned, fails the check the same way ([`missed`]): that outcome is the request's, not
//! the model's guess.
//!
//! But a file in which **no** call reached the function is no evidence at all (on the dev
//! half, `re_count` crashed on every input, and was written because all three calls failed
//! first on a `compile` and an `re` they never imported). So at least one call must run to
//! its end; when none does, the model is asked once more with pytest's reasons, sampled
//! wider, and when none of those runs either the change is not written
//! ([`Probes::unverified`]): a function no check ever ran is not a change that does what was
//! asked.
//!
//! And a call that returned is still no evidence that it returned the right thing: on the
//! code corpus's test half (its fourth run), a new function whose calls all ran was written
//! as done and failed every acceptance test. So the calls assert what they expect back, written from the request and
//! the new function's signature and docstring, never its body. A small model's expected
//! values are wrong about a third of the time, so one disputed value proves nothing; but a
//! function that as many of them dispute ([`disputed`]) as confirm ([`confirmed`]: a bare
//! call that returned confirms nothing) is more likely wrong than the values are. Such a change is not written ([`Probes::unverified`]), and not corrected towards
//! the values either: code made to match them would no longer be checked by them. Where the
//! request gives no example, an unwritten change costs a second try with one; a wrong change
//! written as done costs the user a bug.
//!
//! A function the request's examples call is probed too, after those no example covers, once
//! its examples pass: two or three examples leave most of the inputs a request allows
//! unchecked (on the code corpus's test half, its sixteenth run, an addition that passed its
//! examples and the suite was written as done and failed the hidden tests). But the examples
//! are ground truth, and the model's calls weigh less beside them: a crash counts only when it
//! is raised in the function's own frame ([`raised_in`]), disputed values only when they
//! outnumber the confirmed ones and are two at least, and calls that never reach it take
//! nothing away and are not asked again. While the examples fail, they are what the
//! corrections go by, and the probes wait (on the dev half, disputes asked beside a failing
//! example stopped two requests before the corrections that make one of them right).

use std::path::Path;

use super::accept::module_of;
use super::fault::is_test_file;
use super::{Check, CodeError, Request, Run, audit, run_check};
use crate::python::words;
use crate::symbols::{UnitKind, split_units};

/// The calls' file, at the root of the scratch copy.
pub(super) const FILE: &str = "test_zerorepo_probes.py";
/// New functions probed in one run, at most: each costs a model answer.
const MAX_FUNCTIONS: usize = 2;
/// Characters of pytest's output kept in the check.
const OUTPUT_CHARS: usize = 3_000;

/// A new public top-level function of the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NewFunction {
    /// The module that defines it.
    pub path: String,
    pub name: String,
    /// Its `def` line and docstring, the body left out.
    pub shown: String,
    /// Its `def` line alone (decorators and all): what its versions are begun with, so that
    /// none is led by the docstring the change's own answer wrote.
    pub signature: String,
    /// Whether an example of the request calls it (then its calls are a second check).
    pub covered: bool,
}

/// The calls the model wrote for a run's new functions, asked once (and once more when none
/// of them ran).
#[derive(Debug, Clone, Default)]
pub(super) struct Probes {
    /// `None` until asked; then the test file's text (empty: nothing usable).
    pub file: Option<String>,
    /// The functions the file calls.
    pub functions: Vec<NewFunction>,
    /// Whether the file is the second one asked.
    retried: bool,
    /// Why a function's calls could not be asked, when one could not.
    unusable: Option<String>,
    /// Set when no call of either file ran: why the change is not written.
    pub unverified: Option<String>,
}

/// The public top-level functions `after` defines and `before` does not, outside tests.
pub(super) fn new_functions(path: &str, before: &str, after: &str) -> Vec<NewFunction> {
    if !path.ends_with(".py") || is_test_file(path) {
        return Vec::new();
    }
    // Both sides read alike: a definition under a module-level `if` or `try` (more-itertools
    // defines `pairwise` so) is one the outline sees, and was there before.
    let names = |text: &str| -> Vec<String> {
        crate::symbols::outline::locate_all(text)
            .map(|all| {
                all.into_iter()
                    .filter(|l| l.symbol.qualified_name == l.symbol.name)
                    .map(|l| l.symbol.name)
                    .collect()
            })
            .unwrap_or_default()
    };
    let old = names(before);
    let Ok(located) = crate::symbols::outline::locate_all(after) else {
        return Vec::new();
    };
    located
        .iter()
        .filter(|l| l.symbol.qualified_name == l.symbol.name)
        .filter(|l| {
            use crate::symbols::outline::SymbolKind::{AsyncFunction, Function};
            matches!(l.symbol.kind, Function | AsyncFunction)
        })
        .filter(|l| !l.symbol.name.starts_with('_') && !old.contains(&l.symbol.name))
        .map(|l| {
            let docstring = l.docstring.map_or("", |(a, b)| &after[a..b]);
            let shown = match docstring.is_empty() {
                true => format!("{}\n    ...", l.symbol.signature),
                false => format!("{}\n    {docstring}\n    ...", l.symbol.signature),
            };
            NewFunction {
                path: path.to_string(),
                name: l.symbol.name.clone(),
                shown,
                signature: l.symbol.signature.clone(),
                covered: false,
            }
        })
        .collect()
}

/// The start of the answer: the fence, pytest, and the first call begun, its value kept for
/// the assert that follows.
pub(super) fn prefill(name: &str) -> String {
    format!("```python\nimport pytest\n\n\ndef test_{name}_typical():\n    result = {name}(")
}

/// The model's calls as a test file: its imports and `test_` functions only, after the
/// imports of the functions themselves. Empty when nothing usable is left.
pub(super) fn render(answers: &[(NewFunction, String)], files: &[String]) -> String {
    let mut head = String::from(
        "\"\"\"Calls of the change's new functions, written by the model; run by zerorepo in the \
         sandbox's copy only.\"\"\"\nimport os as _os\nimport sys as _sys\n\nimport pytest\n",
    );
    let mut body = String::new();
    for (function, answer) in answers {
        let Some(target) = module_of(&function.path, files) else {
            continue;
        };
        head.push_str(&target.import(&function.name, None, ""));
        for unit in test_units(answer) {
            body.push_str(&format!("\n\n{}\n", unit.text));
        }
    }
    match body.is_empty() {
        true => String::new(),
        false => format!("{head}{body}"),
    }
}

/// One import or `test_` function the model wrote.
pub(super) struct TestUnit {
    /// The test's name; `None` for an import.
    pub test: Option<String>,
    pub text: String,
}

/// The imports and `test_` functions of a model's answer of tests, in order: everything else
/// (constants, helpers, prose) is left out, and so is a last test cut off at the token limit
/// (an answer without its closing fence ends inside it) and a unit that does not parse: one
/// broken call stops pytest from collecting the file, and then no call runs at all.
pub(super) fn test_units(answer: &str) -> Vec<TestUnit> {
    let mut kept: Vec<TestUnit> = Vec::new();
    for unit in split_units(&fenced(answer)) {
        let test = match &unit.kind {
            UnitKind::Import => None,
            UnitKind::Def(name) if name.starts_with("test_") => Some(name.clone()),
            _ => continue,
        };
        kept.push(TestUnit {
            test,
            text: unit.text.trim_end().to_string(),
        });
    }
    if answer.matches("```").count() < 2 && kept.last().is_some_and(|u| u.test.is_some()) {
        kept.pop();
    }
    kept.retain(|u| crate::symbols::check::parses(&u.text));
    kept
}

/// The code of the answer's first fenced block (the whole answer when it has none).
pub(super) fn fenced(answer: &str) -> String {
    let Some(open) = answer.find("```") else {
        return answer.to_string();
    };
    let after = &answer[open + 3..];
    let after = after.split_once('\n').map_or("", |(_, rest)| rest);
    after.split("```").next().unwrap_or_default().to_string()
}

/// The exceptions `spec` names (`ValueError`, `KeyError`): a documented error is no crash.
pub(super) fn named_errors(spec: &str) -> Vec<String> {
    let mut names: Vec<String> = words(spec)
        .filter(|w| w.ends_with("Error") || w.ends_with("Exception"))
        // "an Error", "raises an Exception": no class named.
        .filter(|w| !matches!(*w, "Error" | "Exception"))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// pytest's failure sections: (test name, section).
type Sections = Vec<(String, String)>;

/// pytest's failure sections (`--tb=short`), by test name.
pub(super) fn sections(output: &str) -> Sections {
    let mut found = Sections::new();
    for line in output.lines() {
        let trimmed = line.trim();
        let header = trimmed.starts_with("___") && trimmed.ends_with("___");
        if header {
            let name = trimmed.trim_matches('_').trim();
            found.push((name.to_string(), String::new()));
            continue;
        }
        if trimmed.starts_with("===") || trimmed.starts_with("---") {
            // The end of a section (the summary, captured output).
            if let Some(last) = found.last_mut() {
                last.1.push('\u{0}');
            }
            continue;
        }
        if let Some(last) = found.last_mut()
            && !last.1.contains('\u{0}')
        {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    for (_, section) in &mut found {
        section.retain(|c| c != '\u{0}');
    }
    found
}

/// The calls that crashed in a new function's module, with their sections.
pub(super) fn crashes(
    output: &str,
    functions: &[NewFunction],
    documented: &[String],
) -> Vec<(String, String)> {
    sections(output)
        .into_iter()
        .filter(|(_, section)| {
            functions.iter().any(|f| {
                crate::python::crashed_in(section, &f.path, documented)
                    && (!f.covered || raised_in(section, f))
            })
        })
        .collect()
}

/// Whether the innermost frame of a pytest section (`--tb=short`) is `function`'s own.
///
/// Why: a function its examples ran and passed that breaks further down, in a helper of the
/// module, on a model's call, was more often handed an argument of the wrong kind than wrong
/// itself (on the code corpus's dev half, `cut_affixes(('<b>', '<', '>'), '<', '>b')` broke in
/// `cut_prefix` on the tuple; the function was right).
fn raised_in(section: &str, function: &NewFunction) -> bool {
    innermost_frame(section)
        .is_some_and(|(file, name)| file == function.path && name == function.name)
}

/// The file and function of a pytest section's innermost frame (`path:line: in name`).
fn innermost_frame(section: &str) -> Option<(&str, &str)> {
    let (place, name) = section
        .lines()
        .rfind(|l| l.contains(": in "))?
        .split_once(": in ")?;
    Some((place.split(':').next()?, name.trim()))
}

/// Whether every function probed is one the request's examples call.
fn covered_only(functions: &[NewFunction]) -> bool {
    functions.iter().all(|f| f.covered)
}

impl Run {
    /// The probes check on a scratch copy the other checks ran in: `None` when the change
    /// adds no public function, or when no call could run (then, for a function no example
    /// covers, [`Probes::unverified`] says why, and the change is not written).
    pub(super) async fn check_probes(
        &mut self,
        request: &Request,
        scratch: &Path,
        examples: ExampleOutcome,
    ) -> Result<Option<Check>, CodeError> {
        // While the examples fail, they are what the corrections go by; the functions they
        // call are probed once they pass.
        if examples == ExampleOutcome::Failed {
            let functions = match self.probes.file {
                None => self.new_functions(request)?,
                Some(_) => self.probes.functions.clone(),
            };
            if covered_only(&functions) {
                return Ok(None);
            }
        }
        if self.probes.file.is_none() {
            self.ask_probes(request, scratch, None).await?;
        }
        if self.probes.functions.is_empty() {
            return Ok(None);
        }
        let files = super::list_files(scratch)?;
        if files.iter().any(|f| f == FILE) {
            return Ok(None);
        }
        let mut ran = self.run_probes(request, scratch).await?;
        // The examples already ran a covered function: calls that never reached it take
        // nothing away, and are not worth a second answer.
        let covered = covered_only(&self.probes.functions);
        if covered && matches!(ran, Ran::Nothing(_)) {
            return Ok(None);
        }
        if let Ran::Nothing(why) = &ran
            && !self.probes.retried
        {
            let why = why.clone();
            self.ask_probes(request, scratch, Some(&why)).await?;
            ran = self.run_probes(request, scratch).await?;
        }
        let names: Vec<&str> = self
            .probes
            .functions
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        match ran {
            Ran::Checked(check) | Ran::Unavailable(check) => Ok(Some(check)),
            Ran::Disputed(why) if covered => {
                self.probes.unverified = Some(format!(
                    "the new {} passes the request's examples but disagrees with most values \
                     expected of it on other inputs: {why}; it may do less than the request \
                     asks. Give an example of the case it misses (`f(a)` returns `b`), and \
                     run again",
                    names.join(", ")
                ));
                Ok(None)
            }
            Ran::Disputed(why) => {
                self.probes.unverified = Some(format!(
                    "the new {} disagrees with most values expected of it: {why}; a new \
                     function the request gives no example of would be written unverified. \
                     Give an example of a call and what it must return (`f(a)` returns `b`), \
                     and run again",
                    names.join(", ")
                ));
                Ok(None)
            }
            Ran::Nothing(why) => {
                self.probes.unverified = Some(format!(
                    "no call of the new {} ran (asked twice): {why}; a new function the \
                     request gives no example of, never run, would be written unverified. Give \
                     an example of a call and what it must return (`f(a)` returns `b`), and \
                     run again",
                    names.join(", ")
                ));
                Ok(None)
            }
        }
    }

    /// The probe file, run once on `scratch` (the file removed after, so that a second file
    /// can run on the same copy).
    async fn run_probes(&mut self, request: &Request, scratch: &Path) -> Result<Ran, CodeError> {
        let file = self.probes.file.clone().unwrap_or_default();
        if file.is_empty() {
            let why = self.probes.unusable.clone().unwrap_or_else(|| {
                "the model's calls could not be used (no test function in the answer)".into()
            });
            return Ok(Ran::Nothing(why));
        }
        std::fs::write(scratch.join(FILE), &file)?;
        let command = format!("python -m pytest -q -rA --tb=short -p no:cacheprovider {FILE}");
        let mut check = run_check(request, scratch, &command).await?;
        std::fs::remove_file(scratch.join(FILE))?;
        if check.unavailable {
            return Ok(Ran::Unavailable(check));
        }
        let documented = named_errors(&request.spec);
        let crashed = crashes(&check.output, &self.probes.functions, &documented);
        let (missed, boundary) = never_raised(
            missed(&check.output, &documented),
            raised_as_expected(&check.output, &file, &documented),
        );
        let mut disputed = disputed(&check.output, &crashed);
        disputed.extend(boundary);
        // A file pytest could not collect ran no call, and a call that failed in its own
        // frame never reached the function: no evidence, never a pass. Nor is an assert that
        // compared the iterator a call returned: no value of it was looked at.
        if crashed.is_empty()
            && missed.is_empty()
            && disputed.is_empty()
            && passed(&check.output) == 0
        {
            let why = summary(&check.output);
            self.audit.record(
                "probe",
                None,
                "not run",
                &command,
                audit::tail(&check.output, OUTPUT_CHARS),
                None,
            )?;
            return Ok(Ran::Nothing(why));
        }
        let confirmed = confirmed(&check.output, &file);
        // Functions the request's examples ran and passed have ground truth on their side:
        // weak evidence must outnumber what confirms them, and one value is never enough.
        let outweighed = match covered_only(&self.probes.functions) {
            true => disputed.len() > confirmed.max(1),
            false => !disputed.is_empty() && disputed.len() >= confirmed,
        };
        if crashed.is_empty() && missed.is_empty() && outweighed {
            let shown = disputed
                .iter()
                .map(|(_, s)| s.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let excerpt = audit::tail(&shown, OUTPUT_CHARS);
            self.audit
                .record("probe", None, "disputed", &command, excerpt, None)?;
            return Ok(Ran::Disputed(format!(
                "{} of {} calls of it returned what the model's asserts expected ({FILE}, \
                 written from the request, the signature and the docstring): {}",
                confirmed,
                confirmed + disputed.len(),
                audit::tail(&shown, 600).trim()
            )));
        }
        check.passed = crashed.is_empty() && missed.is_empty();
        check.output = match check.passed {
            true => audit::tail(&check.output, OUTPUT_CHARS).to_string(),
            false => failing(&crashed, &missed, &file),
        };
        let outcome = match (crashed.is_empty(), missed.is_empty()) {
            (true, true) => "passed",
            (false, _) => "crashed",
            (true, false) => "missed an error the request names",
        };
        self.audit
            .record("probe", None, outcome, &command, &check.output, None)?;
        Ok(Ran::Checked(check))
    }

    /// The model's calls of the change's new functions: asked once per run, and once more,
    /// told `retry` (why none of the first ran), sampled wider.
    async fn ask_probes(
        &mut self,
        request: &Request,
        scratch: &Path,
        retry: Option<&str>,
    ) -> Result<(), CodeError> {
        let functions = match retry {
            Some(_) => self.probes.functions.clone(),
            None => self.new_functions(request)?,
        };
        let mut answers = Vec::new();
        let mut unusable = None;
        for function in &functions {
            let asked = super::prompt::probes_request(&request.spec, function, retry)
                .map_err(|e| e.to_string());
            // A trial puts back the probes its verification asked: the same prompt, asked
            // again, has the answer it had.
            let key = asked
                .as_ref()
                .ok()
                .map(|a| serde_json::to_string(a).unwrap_or_default());
            if let Some(answer) = key.as_ref().and_then(|k| self.probe_answers.get(k)) {
                answers.push((function.clone(), answer.clone()));
                continue;
            }
            // No prompt that fits and no answer are the same to the run: no calls.
            let answered = match asked {
                Ok(asked) => match self.ask(request, &asked).await {
                    Ok(answer) => Ok((asked, answer)),
                    Err(why) => Err(why.to_string()),
                },
                Err(why) => Err(why),
            };
            let (asked, mut answer) = match answered {
                Ok(answered) => answered,
                Err(why) => {
                    self.audit
                        .record("probe", None, "skipped", &function.name, &why, None)?;
                    unusable = Some(format!(
                        "the calls of {} could not be asked: {why}",
                        function.name
                    ));
                    continue;
                }
            };
            let prefill = asked.prefill.clone().unwrap_or_default();
            if !answer.starts_with("```") {
                answer = format!("{prefill}{answer}");
            }
            let detail = format!("calls of {}", function.name);
            let usage = self.last_usage.take();
            self.audit
                .record("probe", None, "asked", &detail, "", usage)?;
            if let Some(key) = key {
                self.probe_answers.insert(key, answer.clone());
            }
            answers.push((function.clone(), answer));
        }
        let files = super::list_files(scratch)?;
        self.probes = Probes {
            file: Some(render(&answers, &files)),
            functions,
            retried: retry.is_some(),
            unusable,
            unverified: None,
        };
        Ok(())
    }

    /// The change's new public functions, those no example covers first, [`MAX_FUNCTIONS`]
    /// at most.
    fn new_functions(&self, request: &Request) -> Result<Vec<NewFunction>, CodeError> {
        let covered: Vec<String> = self.accept.functions();
        let mut functions = Vec::new();
        for path in self.overlay.entries().keys().cloned().collect::<Vec<_>>() {
            let after = self.overlay.read(&path)?.unwrap_or_default();
            // Beneath the repository, never through a link; unreadable counts as new.
            let disk = crate::fsutil::Workspace::new(&request.repo);
            let before = disk.read(&path).ok().flatten().unwrap_or_default();
            functions.extend(new_functions(&path, &before, &after).into_iter().map(|f| {
                NewFunction {
                    covered: covered.contains(&f.name),
                    ..f
                }
            }));
        }
        functions.sort_by_key(|f| f.covered);
        functions.truncate(MAX_FUNCTIONS);
        Ok(functions)
    }
}

/// What the request's examples said of the change, as far as the probes care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ExampleOutcome {
    /// They passed, or the request gives none.
    Passed,
    Failed,
}

/// What one run of the probe file showed.
enum Ran {
    /// At least one call reached a new function: the check (failed on a crash).
    Checked(Check),
    /// pytest is not there to run.
    Unavailable(Check),
    /// No call reached a new function, for this reason.
    Nothing(String),
    /// No call crashed, and the model's asserts disputed at least as many calls' values as
    /// they confirmed: these.
    Disputed(String),
}

/// The calls of the probe file that ran to their end (pytest `-rA` reports them `PASSED`).
fn passed(output: &str) -> usize {
    output
        .lines()
        .filter(|l| l.starts_with("PASSED ") && l.contains(FILE))
        .count()
}

/// The calls of the probe file that passed an assert of their own (or a `pytest.raises`): a
/// bare call that returned confirms no value.
fn confirmed(output: &str, file: &str) -> usize {
    passed_units(output, file, |text| {
        text.contains("assert ") || text.contains("pytest.raises")
    })
}

/// The test functions of the probe file whose text is `checking` and that pytest passed.
fn passed_units(output: &str, file: &str, checking: impl Fn(&str) -> bool) -> usize {
    let checking: Vec<String> = split_units(file)
        .into_iter()
        .filter(|u| checking(&u.text))
        .filter_map(|u| match u.kind {
            UnitKind::Def(name) => Some(name),
            _ => None,
        })
        .collect();
    output
        .lines()
        .filter_map(|l| l.strip_prefix("PASSED ")?.split_once("::"))
        .filter(|(path, _)| *path == FILE)
        .filter(|(_, test)| {
            let name = test.split(['[', ' ']).next().unwrap_or_default();
            checking.iter().any(|c| c == name)
        })
        .count()
}

/// What the corrections are shown of the calls that crashed or returned where the request
/// says the function raises.
fn failing(crashed: &[(String, String)], missed: &[(String, String)], file: &str) -> String {
    // pytest shows the `with pytest.raises` line, not the call under it: the call's test is
    // shown whole, so the correction sees the input.
    let units = split_units(file);
    let missed: Sections = missed
        .iter()
        .map(|(name, section)| {
            let test = units
                .iter()
                .find(|u| u.def_name() == name.split('[').next())
                .map(|u| u.text.clone());
            let shown = match test {
                Some(test) => format!("{test}\n{section}"),
                None => section.clone(),
            };
            (name.clone(), shown)
        })
        .collect();
    // Each kind gets the whole room when it is alone.
    let room = match crashed.is_empty() || missed.is_empty() {
        true => OUTPUT_CHARS,
        false => OUTPUT_CHARS / 2,
    };
    let part = |found: &[(String, String)], why: &str| -> String {
        if found.is_empty() {
            return String::new();
        }
        let shown: Vec<&str> = found.iter().map(|(_, s)| s.as_str()).collect();
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        format!(
            "{}\n{why} ({FILE}, written by zerorepo, not part of the repository; change the \
             code, not the calls): {}\n",
            audit::tail(&shown.join("\n"), room),
            names.join(", ")
        )
    };
    let crashes = part(
        crashed,
        "The new function crashed, in its own code, on calls with inputs the request allows",
    );
    let misses = part(
        &missed,
        "The new function returned on calls for which the request says it raises the error \
         named in `pytest.raises`",
    );
    format!("{crashes}{misses}")
}

/// The calls that expected, inside `pytest.raises`, an exception the request names
/// (`documented`), where the function returned instead.
///
/// Why: the outcome such a call asserts is the request's own words ("raise `ValueError` for
/// those"); only its input is the model's choice, and matching an input to a stated case is
/// far surer than working out a value. A function that returns where the request says it
/// raises breaks its specification as surely as one that crashes where it says it returns
/// (but see [`never_raised`]). Before, pytest's `DID NOT RAISE` counted for nothing:
/// neither a crash nor a disputed value.
pub(super) fn missed(output: &str, documented: &[String]) -> Sections {
    sections(output)
        .into_iter()
        .filter(|(_, section)| {
            error_lines(section).any(|e| {
                let Some(expected) = e.strip_prefix("Failed: DID NOT RAISE ") else {
                    return false;
                };
                // pytest 8 writes `ValueError` or `any of (ValueError, KeyError)`, older ones
                // `<class 'ValueError'>`; a class may come with its module.
                expected
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                    .filter_map(|w| w.rsplit('.').next())
                    .any(|class| documented.iter().any(|d| d == class))
            })
        })
        .collect()
}

/// The `missed` calls as (failures of the check, disputed values), given how many calls
/// raised what their `pytest.raises` expected.
///
/// Why: a function that returned on every call expected to raise the error the request
/// names never raises it; one that raised on some has the case, and a call it returned on
/// is a dispute over where the case begins, which the model's input decides, and a model
/// picks such inputs wrong too (on the dev half, `take_exactly(0, range(1))` expected to
/// raise "when the iterable has fewer than `n` items").
fn never_raised(missed: Sections, raised: usize) -> (Sections, Sections) {
    match raised {
        0 => (missed, Vec::new()),
        _ => (Vec::new(), missed),
    }
}

/// The calls of the probe file inside a `pytest.raises` of an error the request names
/// (`documented`) that passed: they raised what was expected.
fn raised_as_expected(output: &str, file: &str, documented: &[String]) -> usize {
    passed_units(output, file, |text| {
        text.contains("pytest.raises") && documented.iter().any(|d| text.contains(d.as_str()))
    })
}

/// The calls, other than `crashed`, that returned a value the model's assert disputes: the
/// last frame is the probe file's and pytest reports a failed `assert`.
pub(super) fn disputed(output: &str, crashed: &[(String, String)]) -> Vec<(String, String)> {
    sections(output)
        .into_iter()
        .filter(|(name, _)| !crashed.iter().any(|(c, _)| c == name))
        .filter(|(_, section)| {
            let in_file = innermost_frame(section).is_some_and(|(file, _)| file == FILE);
            let assertion = error_lines(section)
                .any(|e| e.starts_with("assert ") || e.starts_with("AssertionError"));
            in_file && assertion && !compares_an_iterator(section)
        })
        .collect()
}

/// The error lines of a pytest section (`E   ...`), without their mark.
fn error_lines(section: &str) -> impl Iterator<Item = &str> {
    section
        .lines()
        .filter_map(|l| l.strip_prefix('E').map(str::trim_start))
}

/// Whether the failed assert compared a lazy iterator's object (`<generator object f at
/// 0x…>`, `<map object …>`) with a value: the function's values were never looked at (a
/// model's `assert f(x) == [3, 5, 7]` for a generator, seen on the dev half), so the call
/// disputes nothing.
fn compares_an_iterator(section: &str) -> bool {
    error_lines(section).any(|e| {
        let Some(compared) = e.strip_prefix("assert <") else {
            return false;
        };
        let kind = compared.split([' ', '.']).next().unwrap_or_default();
        matches!(
            kind,
            "generator" | "map" | "filter" | "zip" | "itertools" | "enumerate" | "reversed"
        ) || kind.ends_with("iterator")
    })
}

/// pytest's short summary of the failures (`FAILED …`, `ERROR …` lines), cut short: why no
/// call ran, for the model's second try and the run's reason.
fn summary(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .filter(|l| l.starts_with("FAILED ") || l.starts_with("ERROR "))
        .take(6)
        .collect();
    match lines.is_empty() {
        true => "pytest ran no call".into(),
        false => audit::tail(&lines.join("\n"), 1_000).to_string(),
    }
}

#[cfg(test)]
mod tests;

//! A new public function the request gives no example of, called on inputs the model picks,
//! to see whether it crashes, and whether it returns what is expected of it.
//!
//! Why: such a function has no acceptance test, and the repository's suite does not know it,
//! so a change that adds it passed every check whatever its body did (on the code corpus's
//! dev half, `re_count` was written as done twice without a call of it ever run). The
//! model's expected values are weak evidence (a third of a small model's are wrong), but an
//! exception raised in the new function's own code, on an input the request allows, that the
//! request does not name, is strong: the function breaks there whatever was expected
//! (`generate` weighs it the same way, [`crate::engine::testfile::crashed_in`]). So the
//! model writes calls, once per run (at most [`MAX_FUNCTIONS`] functions), they run in
//! the sandbox's scratch copy after the acceptance tests ([`FILE`], never in the overlay,
//! never committed), and the check fails on such a crash; a call that fails in its own
//! frame before the function returned (a wrong argument) counts for nothing.
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
fn fenced(answer: &str) -> String {
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

/// pytest's failure sections (`--tb=short`), by test name.
pub(super) fn sections(output: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
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
            functions
                .iter()
                .any(|f| crate::engine::testfile::crashed_in(section, &f.path, documented))
        })
        .collect()
}

impl Run {
    /// The probes check on a scratch copy the other checks ran in: `None` when the change
    /// adds no public function the request gives no example of, or when no call could run
    /// (then [`Probes::unverified`] says why, and the change is not written).
    pub(super) async fn check_probes(
        &mut self,
        request: &Request,
        scratch: &Path,
    ) -> Result<Option<Check>, CodeError> {
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
        let disputed = disputed(&check.output, &crashed);
        // A file pytest could not collect ran no call, and a call that failed in its own
        // frame never reached the function: no evidence, never a pass. Nor is an assert that
        // compared the iterator a call returned: no value of it was looked at.
        if crashed.is_empty() && disputed.is_empty() && passed(&check.output) == 0 {
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
        if crashed.is_empty() && !disputed.is_empty() && disputed.len() >= confirmed {
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
        check.passed = crashed.is_empty();
        check.output = match crashed.is_empty() {
            true => audit::tail(&check.output, OUTPUT_CHARS).to_string(),
            false => {
                let shown: Vec<String> = crashed.iter().map(|(_, s)| s.clone()).collect();
                format!(
                    "{}\nThe new function crashed, in its own code, on calls with inputs the \
                     request allows ({FILE}, written by zerorepo, not part of the repository; \
                     change the code, not the calls): {}\n",
                    audit::tail(&shown.join("\n"), OUTPUT_CHARS),
                    crashed
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        };
        let outcome = if check.passed { "passed" } else { "crashed" };
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
            let asked = super::prompt::probes_request(
                &request.spec,
                &function.name,
                &function.shown,
                retry,
            )
            .map_err(|e| e.to_string());
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

    /// The change's new public functions no example covers, [`MAX_FUNCTIONS`] at most.
    fn new_functions(&self, request: &Request) -> Result<Vec<NewFunction>, CodeError> {
        let covered: Vec<String> = self.accept.functions();
        let mut functions = Vec::new();
        for path in self.overlay.entries().keys().cloned().collect::<Vec<_>>() {
            let after = self.overlay.read(&path)?.unwrap_or_default();
            // Beneath the repository, never through a link; unreadable counts as new.
            let disk = crate::fsutil::Workspace::new(&request.repo);
            let before = disk.read(&path).ok().flatten().unwrap_or_default();
            functions.extend(
                new_functions(&path, &before, &after)
                    .into_iter()
                    .filter(|f| !covered.contains(&f.name)),
            );
        }
        functions.truncate(MAX_FUNCTIONS);
        Ok(functions)
    }
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
    let checking: Vec<String> = split_units(file)
        .into_iter()
        .filter(|u| u.text.contains("assert ") || u.text.contains("pytest.raises"))
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

/// The calls, other than `crashed`, that returned a value the model's assert disputes: the
/// last frame is the probe file's and pytest reports a failed `assert`.
pub(super) fn disputed(output: &str, crashed: &[(String, String)]) -> Vec<(String, String)> {
    sections(output)
        .into_iter()
        .filter(|(name, _)| !crashed.iter().any(|(c, _)| c == name))
        .filter(|(_, section)| {
            let last_frame = section.lines().rfind(|l| l.contains(": in "));
            let in_file = last_frame.is_some_and(|l| l.split(':').next() == Some(FILE));
            let assertion = section.lines().any(|l| {
                l.strip_prefix('E')
                    .map(str::trim_start)
                    .is_some_and(|e| e.starts_with("assert ") || e.starts_with("AssertionError"))
            });
            in_file && assertion && !compares_an_iterator(section)
        })
        .collect()
}

/// Whether the failed assert compared a lazy iterator's object (`<generator object f at
/// 0x…>`, `<map object …>`) with a value: the function's values were never looked at (a
/// model's `assert f(x) == [3, 5, 7]` for a generator, seen on the dev half), so the call
/// disputes nothing.
fn compares_an_iterator(section: &str) -> bool {
    section.lines().any(|l| {
        let Some(compared) = l
            .strip_prefix('E')
            .map(str::trim_start)
            .and_then(|e| e.strip_prefix("assert <"))
        else {
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
mod tests {
    use super::*;

    const BEFORE: &str = "import re\n\n\ndef re_iter(regex, s):\n    \"\"\"Iterate matches.\"\"\"\n    return re.finditer(regex, s)\n";

    #[test]
    fn only_new_public_top_level_functions_are_probed() {
        let after = format!(
            "{BEFORE}\n\ndef re_count(regex, s, flags=0):\n    \"\"\"Count the matches.\"\"\"\n    return len(re_iter(regex, s))\n\n\ndef _helper():\n    pass\n\n\nclass K:\n    def method(self):\n        pass\n"
        );
        let found = new_functions("funcy/strings.py", BEFORE, &after);
        assert_eq!(
            found,
            vec![NewFunction {
                path: "funcy/strings.py".into(),
                name: "re_count".into(),
                shown:
                    "def re_count(regex, s, flags=0):\n    \"\"\"Count the matches.\"\"\"\n    ..."
                        .into(),
            }]
        );
        assert!(new_functions("tests/test_strings.py", BEFORE, &after).is_empty());
        assert!(new_functions("funcy/strings.py", &after, &after).is_empty());
        let guarded = "import sys\n\nif sys.version_info >= (3, 10):\n    from itertools import pairwise\nelse:\n    def pairwise(it):\n        \"\"\"Pairs.\"\"\"\n        return zip(it, it[1:])\n";
        let grown =
            format!("{guarded}\n\ndef diffs(it):\n    return [b - a for a, b in pairwise(it)]\n");
        let found: Vec<String> = new_functions("mi/recipes.py", guarded, &grown)
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(
            found,
            ["diffs"],
            "a definition under an `if` was there before"
        );
    }

    #[test]
    fn the_file_keeps_imports_and_tests_only_and_imports_the_function() {
        let function = NewFunction {
            path: "src/pkg/text.py".into(),
            name: "re_count".into(),
            shown: String::new(),
        };
        let files = vec![
            "src/pkg/__init__.py".to_string(),
            "src/pkg/text.py".to_string(),
        ];
        let answer = format!(
            "{}'a', 'aa')\n\n\nimport re\nX = 1\n\n\ndef helper():\n    pass\n\n\ndef test_re_count_empty():\n    re_count('a', '')\n```\nThat is all.",
            prefill("re_count")
        );
        let file = render(&[(function.clone(), answer)], &files);
        assert!(
            file.contains("'src'))\nfrom pkg.text import re_count\n"),
            "{file}"
        );
        assert!(
            file.contains("def test_re_count_typical():\n    result = re_count('a', 'aa')"),
            "{file}"
        );
        assert!(file.contains("def test_re_count_empty():") && file.contains("\nimport re\n"));
        assert!(
            !file.contains("X = 1")
                && !file.contains("def helper")
                && !file.contains("That is all")
        );
        assert_eq!(render(&[(function.clone(), "no code".into())], &files), "");
        // Cut off inside its second call: the first stays, the unfinished one goes.
        let cut = format!(
            "{}'a')\n\n\ndef test_re_count_long():\n    re_count('a', 'a' *",
            prefill("re_count")
        );
        let file = render(&[(function, cut)], &files);
        assert!(
            file.contains("test_re_count_typical") && !file.contains("test_re_count_long"),
            "{file}"
        );
    }

    #[test]
    fn a_call_that_does_not_parse_is_left_out_and_the_others_run() {
        // Seen on the code corpus's dev half: one `re_count(.compile(...))` stopped pytest
        // from collecting the file, and a change whose function crashes on every call was
        // written with no call of it run.
        let answer = format!(
            "{}r'\\d', 'a1b2')\n\n\ndef test_re_count_compiled():\n    re_count(.compile(r'\\d'), '12')\n\n\ndef test_re_count_none():\n    re_count(r'x', 'abc')\n```",
            prefill("re_count")
        );
        let names: Vec<Option<String>> = test_units(&answer).into_iter().map(|u| u.test).collect();
        assert_eq!(
            names,
            [
                None,
                Some("test_re_count_typical".to_string()),
                Some("test_re_count_none".to_string())
            ]
        );
    }

    #[test]
    fn only_an_undocumented_exception_in_the_new_functions_module_is_a_crash() {
        let output = "\
F.F                                                                      [100%]
=================================== FAILURES ===================================
_____________________________ test_re_count_typical ____________________________
test_zerorepo_probes.py:9: in test_re_count_typical
    re_count('a', 'aa')
funcy/strings.py:12: in re_count
    return len(re_iter(regex, s))
E   TypeError: object of type 'map' has no len()
______________________________ test_re_count_bad _______________________________
test_zerorepo_probes.py:13: in test_re_count_bad
    re_count()
E   TypeError: re_count() missing 2 required positional arguments
______________________________ test_re_count_none ______________________________
funcy/strings.py:12: in re_count
E   ValueError: empty pattern
=========================== short test summary info ============================
FAILED test_zerorepo_probes.py::test_re_count_typical - TypeError
";
        let functions = [NewFunction {
            path: "funcy/strings.py".into(),
            name: "re_count".into(),
            shown: String::new(),
        }];
        let documented = named_errors("It raises ValueError for an empty pattern.");
        assert_eq!(documented, ["ValueError"]);
        let crashed: Vec<String> = crashes(output, &functions, &documented)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(crashed, ["test_re_count_typical"]);
    }

    #[test]
    fn calls_pass_or_are_disputed_only_in_the_probe_file() {
        let none = "FF\nFAILED test_zerorepo_probes.py::test_f_typical - NameError: name 're' is not defined\nFAILED test_zerorepo_probes.py::test_f_bad - TypeError: f() missing 1 required positional argument\n";
        assert_eq!(passed(none), 0);
        assert_eq!(
            summary(none),
            none.lines().skip(1).collect::<Vec<_>>().join("\n")
        );
        let one = format!("{none}PASSED test_zerorepo_probes.py::test_f_empty\n");
        assert_eq!(passed(&one), 1);
        assert_eq!(passed("PASSED tests/test_other.py::test_x\n"), 0);
        assert_eq!(summary("1 error in 0.1s"), "pytest ran no call");

        // pytest 8's own words (-rA --tb=short), for f(x) = x + 1.
        let output = "F.FF\n=== FAILURES ===\n\
            ___ test_f_a ___\n\
            test_zerorepo_probes.py:4: in test_f_a\n    assert result == 3\nE   assert 2 == 3\n\
            ___ test_f_c ___\n\
            test_zerorepo_probes.py:8: in test_f_c\n    assert f(2) == [3]\nE   assert 3 == [3]\nE    +  where 3 = f(2)\n\
            ___ test_f_d ___\n\
            test_zerorepo_probes.py:10: in test_f_d\n    assert f(re.compile('a'))\nE   NameError: name 're' is not defined\n\
            ___ test_f_e ___\n\
            test_zerorepo_probes.py:12: in test_f_e\n    f(None)\nsrc/m.py:2: in f\n    assert x\nE   AssertionError\n\
            === short test summary info ===\n\
            PASSED test_zerorepo_probes.py::test_f_b\n";
        let names = |found: Vec<(String, String)>| -> Vec<String> {
            found.into_iter().map(|(n, _)| n).collect()
        };
        assert_eq!(
            names(disputed(output, &[])),
            ["test_f_a", "test_f_c"],
            "a call that never returned, or an assert in the function's own code, disputes \
             no value"
        );
        let lazy = "F\n=== FAILURES ===\n___ test_g ___\n\
            test_zerorepo_probes.py:4: in test_g\n    assert result == []\nE   assert <generator ob...x7f1e99510b80> == []\n";
        assert!(
            disputed(lazy, &[]).is_empty(),
            "a generator compared with a list disputes no value"
        );
        let crashed = vec![("test_f_a".to_string(), String::new())];
        assert_eq!(names(disputed(output, &crashed)), ["test_f_c"]);
        assert_eq!(passed(output), 1);

        let file = "import pytest\n\n\ndef test_f_b():\n    result = f(1)\n    assert result == 2\n\n\ndef test_f_bare():\n    f(3)\n";
        let both = format!("{output}PASSED test_zerorepo_probes.py::test_f_bare\n");
        assert_eq!(passed(&both), 2);
        assert_eq!(confirmed(&both, file), 1, "a bare call confirms no value");
    }
}

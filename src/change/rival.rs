//! A new public function run beside versions of it written apart from the change, on the
//! same calls: where the versions agree with each other and not with it, it is not written.
//!
//! Why: the last check of an addition is the model's calls of it ([`super::probe`]), whose
//! expected values come from the same model that wrote the body; a function that passed the
//! request's examples and those calls was still written wrong (the code corpus's test half,
//! its sixteenth and seventeenth runs: hidden tests failed where nothing of the run looked).
//! Independent samples of one model that agree are the standard evidence for code without
//! tests (self-consistency, the clustering of sampled programs by behaviour): where two
//! versions, each written from the request alone, without the change's body, return the
//! same thing on an input, and the change returns another, the change is more likely wrong
//! there than both of them.
//!
//! So, once every other check passed, [`VERSIONS`] versions of each probed function are asked
//! in one batch, at a sampling temperature (each from the module as it was before the change,
//! so none copies the change, and begun with the function's `def` line alone: its docstring
//! is the change's own reading of the request, and versions begun with it share any misreading
//! in it), once per run: they do not depend on the change's code, so one answer serves every
//! verification ([`Rivals`]). In the sandbox's scratch copy the probe file runs again, each
//! call of the function made also to every version (in a copy of the module's namespace: a
//! version's imports and helpers change nothing of the module), and the request's examples
//! are called the same way. What each returned or raised comes back as one JSON line per call
//! ([`records`]); [`disputes`] weighs them:
//! - the examples are ground truth, and the change passed them: a version that differs from
//!   it on one of them is wrong, and has no say;
//! - a version that crashed with an error the request does not name, where the change
//!   returned, broke on its own;
//! - a call is disputed when at least two versions are left, all agree with each other, and
//!   none with the change.
//!
//! The model's calls are typical ones, and an addition written wrong on the test half a
//! third time had versions agreeing with it on every one of them. So the file also runs each
//! of its tests again with one literal changed ([`VARIANT_TEST`]; the harness's
//! `_zr_variants`): a number made 0 or one more, a string emptied or halved, the first number
//! written in a string made 0 or one more (a date, a duration, a version or an address read
//! from text keeps its shape, where an emptied or halved one is only an error), a list emptied
//! or without its first item, only in what the test passes the function (never in what it
//! asserts), and never a negated or upper-cased input, which requests often leave open. They
//! run in a forked child killed when its seconds are up, so code that loops, exits or catches
//! everything there loses the variants' records only. Such an input is still one nobody wrote
//! and the request may not allow, so there only values count ([`is_variant`]): an error
//! raised on it, by the change or a version, may be the right answer.
//!
//! A disputed call stops the change, as disputed values do ([`super::probe::Probes::unverified`]),
//! and is not corrected towards the versions: two samples are evidence, not a specification.
//! Versions that could not be asked, or a run that printed nothing, are no evidence and take
//! nothing away.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::accept::module_of;
use super::probe::{NewFunction, named_errors};
use super::{CodeError, Request, Run, audit};
use crate::llm::LlmRequest;
use crate::symbols::{UnitKind, split_units};

/// The file the calls run from, at the root of the scratch copy.
const FILE: &str = "test_zerorepo_versions.py";
/// Versions asked of each function, in one batch.
const VERSIONS: u32 = 2;
/// The helpers the file runs the calls with.
const HARNESS: &str = include_str!("rival_harness.py");
/// Test names of the request's examples in the file.
const EXAMPLE_TEST: &str = "test_zerorepo_example_";
/// The test that runs the file's other tests again, each with one literal changed.
const VARIANT_TEST: &str = "test_zy_zerorepo_variants";

/// The versions asked in this run, by function (its path, name and `def` line): asked once,
/// whatever the change's code and docstring become.
#[derive(Debug, Default)]
pub(super) struct Rivals {
    asked: BTreeMap<(String, String, String), Vec<String>>,
}

/// What one call returned or raised.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Behaviour {
    /// Its value's `repr`, cut short.
    Returned(String),
    /// The exception's class and its bases, innermost first.
    Raised(Vec<String>),
}

/// One call of a new function, as the file prints it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(super) struct WatchedCall {
    /// The test that made it.
    pub test: String,
    pub function: String,
    /// The call, with its arguments' `repr`s.
    pub call: String,
    pub written: Behaviour,
    /// Per version; `None` where the version's answer defined no function.
    pub versions: Vec<Option<Behaviour>>,
    /// Per version: whether it did what the written function did.
    pub agree: Vec<bool>,
    /// Whether the versions that ran agree with each other.
    pub versions_agree: bool,
}

/// The calls on which the versions left agree with each other and not with the change.
pub(super) fn disputes(records: &[WatchedCall], documented: &[String]) -> Vec<WatchedCall> {
    let wrong_on_examples = |function: &str, i: usize| {
        records
            .iter()
            .filter(|r| r.function == function && r.test.starts_with(EXAMPLE_TEST))
            .any(|r| !r.agree.get(i).copied().unwrap_or(false))
    };
    records
        .iter()
        .filter(|r| !r.test.starts_with(EXAMPLE_TEST))
        .filter(|r| !is_variant(r) || matches!(r.written, Behaviour::Returned(_)))
        .filter(|r| {
            let voters: Vec<usize> = (0..r.versions.len())
                .filter(|&i| !wrong_on_examples(&r.function, i))
                .filter(|&i| match &r.versions[i] {
                    None => false,
                    Some(Behaviour::Raised(_)) if is_variant(r) => false,
                    Some(Behaviour::Raised(names)) => {
                        !matches!(r.written, Behaviour::Returned(_))
                            || names.iter().any(|n| documented.contains(n))
                    }
                    Some(Behaviour::Returned(_)) => true,
                })
                .collect();
            let all_ran = voters.len() == r.versions.iter().flatten().count();
            voters.len() >= 2
                && voters
                    .iter()
                    .all(|&i| !r.agree.get(i).copied().unwrap_or(true))
                && r.versions_agree
                && all_ran
        })
        .cloned()
        .collect()
}

/// Whether `record` is a call of a variant: a test run again with one literal changed. Its
/// input is one nobody wrote, that the request may not allow, so only values count there:
/// an error raised on it, by the change or a version, may be the right answer.
fn is_variant(record: &WatchedCall) -> bool {
    record.test == VARIANT_TEST
}

/// The records the file printed, each on a line that begins with `tag`.
pub(super) fn records(output: &str, tag: &str) -> Vec<WatchedCall> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix(tag))
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect()
}

/// A version's answer as the source the file runs: its imports and definitions, when one of
/// them is `name` and all of them parse. `prefill` is put back where the answer left it out.
pub(super) fn version_source(answer: &str, prefill: &str, name: &str) -> Option<String> {
    let answer = match answer.trim_start().starts_with("```") {
        true => answer.to_string(),
        false => format!("{prefill}{answer}"),
    };
    let units = split_units(&super::probe::fenced(&answer));
    let defines = units
        .iter()
        .any(|u| matches!(&u.kind, UnitKind::Def(n) if n == name));
    let kept: Vec<String> = units
        .into_iter()
        .filter(|u| matches!(&u.kind, UnitKind::Import | UnitKind::Def(_)))
        .filter(|u| crate::symbols::check::parses(&u.text))
        .map(|u| u.text.trim_end().to_string())
        .collect();
    (defines && !kept.is_empty()).then(|| kept.join("\n\n") + "\n")
}

/// The start of a version's answer: the fence and the function's `def` line, never the
/// docstring the change's answer wrote (its reading of the request is what is checked).
pub(super) fn prefill(function: &NewFunction) -> String {
    format!("```python\n{}\n", function.signature.trim_end())
}

/// The file that runs the probe calls and the examples through the versions: `probes` (the
/// probe file, as it ran), then the harness, then each function's `name` bound to its watcher,
/// then the examples and the test that prints the records.
pub(super) fn render(
    probes: &str,
    setups: &[(String, String, Vec<String>)],
    examples: &[(String, String)],
    tag: &str,
) -> String {
    let mut out = format!("{}\n{HARNESS}", probes.trim_end());
    for (module, name, sources) in setups {
        let sources: Vec<String> = sources
            .iter()
            .map(|s| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()))
            .collect();
        out.push_str(&format!(
            "\n\n{name} = _zr_watch({name:?}, *_zr_versions({module:?}, {name:?}, [{}]))\n",
            sources.join(", ")
        ));
    }
    let watched: Vec<&str> = setups.iter().map(|(_, n, _)| n.as_str()).collect();
    let mut n = 0;
    for (function, call) in examples {
        if !watched.contains(&function.as_str()) {
            continue;
        }
        n += 1;
        out.push_str(&format!(
            "\n\ndef {EXAMPLE_TEST}{n}():\n    try:\n        {call}\n    except Exception:\n        pass\n"
        ));
    }
    let watched: Vec<String> = watched.iter().map(|n| format!("{n:?}")).collect();
    out.push_str(&format!(
        "\n\ndef {VARIANT_TEST}():\n    _zr_variants({{{}}})\n",
        watched.join(", ")
    ));
    out.push_str(&format!(
        "\n\ndef test_zz_zerorepo_versions_report():\n    _zr_report({tag:?})\n"
    ));
    out
}

/// A tag no version's output is likely to print by chance.
fn tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("ZEROREPO-VERSIONS-{nanos:08x}:")
}

impl Run {
    /// After every other check passed: `Some(why)` when versions of a new function written
    /// apart from the change agree with each other against it on a call.
    pub(super) async fn check_rivals(
        &mut self,
        request: &Request,
        scratch: &Path,
    ) -> Result<Option<String>, CodeError> {
        let probes = self.probes.file.clone().unwrap_or_default();
        if probes.is_empty() {
            return Ok(None);
        }
        let files = super::list_files(scratch)?;
        let mut setups = Vec::new();
        for function in self.probes.functions.clone() {
            // A module the file cannot import is no reason to ask for versions.
            let Some(site) = module_of(&function.path, &files) else {
                continue;
            };
            let versions = self.versions_of(request, &function).await?;
            if versions.len() >= 2 {
                setups.push((site.module, function.name.clone(), versions));
            }
        }
        if setups.is_empty() {
            return Ok(None);
        }
        let tag = tag();
        let file = render(&probes, &setups, &self.accept.calls(), &tag);
        std::fs::write(scratch.join(FILE), &file)?;
        let command =
            format!("python -m pytest -q -s --tb=no -p no:cacheprovider -p no:warnings {FILE}");
        let argv = shlex::split(&command).unwrap_or_default();
        let run = request
            .runner
            .run_command(scratch, &argv, &request.cancel)
            .await?;
        std::fs::remove_file(scratch.join(FILE))?;
        let records = records(&run.stdout, &tag);
        let disputed = disputes(&records, &named_errors(&request.spec));
        let shown: Vec<String> = disputed.iter().map(describe).collect();
        let outcome = match (records.is_empty(), disputed.is_empty()) {
            (true, _) => "not run",
            (false, true) => "agreed",
            (false, false) => "disputed",
        };
        let variants = records.iter().filter(|r| is_variant(r)).count();
        let detail = format!("{} calls, {variants} of them variants", records.len());
        self.audit
            .record("versions", None, outcome, &detail, &shown.join("\n"), None)?;
        Ok((!disputed.is_empty()).then(|| {
            format!(
                "versions of {} written apart from the change, from the request alone, agree \
                 with each other and not with it: {}; it may not do what the request asks there. \
                 Give an example of such a call and what it must return (`f(a)` returns `b`), \
                 and run again",
                names(&disputed),
                audit::tail(&shown.join("; "), 600).trim()
            )
        }))
    }

    /// The usable versions of `function`, asked once per run.
    async fn versions_of(
        &mut self,
        request: &Request,
        function: &NewFunction,
    ) -> Result<Vec<String>, CodeError> {
        let key = (
            function.path.clone(),
            function.name.clone(),
            function.signature.clone(),
        );
        if let Some(versions) = self.rivals.asked.get(&key) {
            return Ok(versions.clone());
        }
        let disk = crate::fsutil::Workspace::new(&request.repo);
        let before = disk.read(&function.path).ok().flatten().unwrap_or_default();
        let asked = match super::prompt::rival_request(&request.spec, function, &before) {
            Ok(asked) => asked,
            Err(why) => {
                let why = why.to_string();
                self.audit
                    .record("versions", None, "skipped", &function.name, &why, None)?;
                self.rivals.asked.insert(key, Vec::new());
                return Ok(Vec::new());
            }
        };
        // A version that does not parse is no version: the check needs two, and one of two
        // samples at this temperature came back as `return x if c else raise E` (dev half),
        // so the check did not run and a change that never raised was written. Asked once
        // more, with other seeds.
        let prefill = prefill(function);
        let mut versions = Vec::new();
        for batch in 0..2 {
            if versions.len() >= VERSIONS as usize {
                break;
            }
            let asked = LlmRequest {
                attempt: batch,
                seed: Some(u64::from(batch * VERSIONS)),
                ..asked.clone()
            };
            let answers = match self.ask_many(request, &asked, VERSIONS).await {
                Ok(answers) => answers,
                Err(why) => {
                    let why = why.to_string();
                    self.audit
                        .record("versions", None, "skipped", &function.name, &why, None)?;
                    break;
                }
            };
            let usage = self.last_usage.take();
            let detail = format!("{} versions of {}", answers.len(), function.name);
            self.audit
                .record("versions", None, "asked", &detail, "", usage)?;
            versions.extend(
                (answers.iter()).filter_map(|a| version_source(a, &prefill, &function.name)),
            );
        }
        versions.truncate(VERSIONS as usize);
        self.rivals.asked.insert(key, versions.clone());
        Ok(versions)
    }
}

/// A disputed call in words.
fn describe(record: &WatchedCall) -> String {
    let said = |o: &Behaviour| match o {
        Behaviour::Returned(value) => format!("returns {value}"),
        Behaviour::Raised(names) => format!("raises {}", names.first().map_or("", |n| n.as_str())),
    };
    let theirs = record.versions.iter().flatten().next().map(said);
    let variant = match is_variant(record) {
        true => " (a call of the checks with one literal changed)",
        false => "",
    };
    format!(
        "`{}`{variant} {} in the change, {} in the versions",
        record.call,
        said(&record.written),
        theirs.unwrap_or_default()
    )
}

fn names(records: &[WatchedCall]) -> String {
    let mut names: Vec<&str> = records.iter().map(|r| r.function.as_str()).collect();
    names.sort();
    names.dedup();
    names.join(", ")
}

#[cfg(test)]
mod tests;

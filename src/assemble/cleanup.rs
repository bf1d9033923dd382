//! Unused and duplicated imports out of the assembled repository, so that it passes
//! `ruff check --select E9,F`: ruff finds them and says how to fix them **in the sandbox**,
//! zerorepo chooses which fixes are safe and writes them **through the output's journal**.
//!
//! Why ruff and not our own tree-sitter pass: the goal is ruff's verdict, and its fixes are
//! the exact complement of its findings (it resolves scopes, `__all__`, string annotations,
//! `TYPE_CHECKING` blocks, shadowing and submodule imports). An approximation of that in
//! tree-sitter would either miss findings ruff then reports or, worse, remove an import that
//! is used. Why in the sandbox: ruff reads hostile files, and `ruff --fix` would write
//! through whatever links the tree holds; so it only reads, in the sandbox, isolated
//! (`--isolated`: no `pyproject.toml` or `ruff.toml` of the generated tree is read), on the
//! read-only repository, and prints its findings with their fix edits as data. A small
//! script there ([`REPORT_SCRIPT`]) keeps what the cleanup may use, compactly, under an
//! output budget (the sandbox keeps only the tail of a run's output). The backends put ruff
//! at [`crate::sandbox::RUFF_IN_SANDBOX`] (`TestRunner::ruff`); where a sandbox has none, the
//! cleanup says so and changes nothing.
//!
//! What is applied, and why it cannot change behaviour:
//! - only fixes ruff marks *safe*, and only of [`RULES`]: an unused import (F401), the
//!   second import of the very same name (F811; ruff offers that fix only when both bind the
//!   same thing), an f-string without placeholders (F541, the same string), an unused
//!   `except ... as e` binding (F841's safe form). Other safe fixes (`x is 1` to `x == 1`)
//!   can change what code does and are left to the report;
//! - an edit of ruff's may only take characters away: its new text must be a subsequence of
//!   the text it replaces, so no fix can write code that was not there;
//! - no import is removed from an `__init__.py` (what it imports is the package's
//!   interface, `__all__` or not), nor an import another file takes from this module
//!   (`from pkg.stats import helper` in a test, `pkg.stats.helper`, or `from pkg.stats
//!   import *`): there it is a re-export, not an unused name. It gets the one edit zerorepo
//!   writes itself, ` as helper` after `helper`, the explicit re-export ruff and pyflakes
//!   recognise: the same name bound to the same object ([`Cleanup::explicit`]);
//! - a file whose fixed text does not parse is not written.
//!
//! Removing an import still skips loading that module at that point; generated code gets
//! its effects from calls, not from import-time side effects, and its tests run after.
//!
//! Fixes that overlap wait for the next round (each round is one sandbox run over every
//! Python file, at most [`ROUNDS`]); each round's files are handed to the caller as one
//! batch, which assembly journals and writes all or nothing. Every round leaves a tree that
//! behaves as the one before, so a run cut between rounds leaves a consistent repository,
//! and the next assembly goes on. What ruff still finds after the cleanup is the
//! validation's lint, listed in the report; the fixes left out on purpose are listed beside
//! it ([`Cleanup::kept`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::python::is_name_char;
use crate::sandbox::TestRunner;
use crate::symbols::units::ImportItems;

/// The rules whose safe fixes the cleanup applies.
pub(crate) const RULES: [&str; 4] = ["F401", "F811", "F541", "F841"];
/// Sandbox runs at most; a round with nothing left to fix ends the cleanup earlier.
const ROUNDS: usize = 6;
/// Bytes of fixes one round prints (the sandbox keeps 16 KiB of a run's output by default).
const OUTPUT_BUDGET: usize = 8 * 1024;

/// Run in the sandbox by its interpreter (`-I`: nothing of the repository is importable):
/// ruff over the files, then each finding with a safe fix, and each unused import (F401)
/// with or without one, as one JSON line, as many as fit the budget, then one line of
/// counts. `argv`: ruff, the budget, the files.
pub(crate) const REPORT_SCRIPT: &str = r#"import json, os, subprocess, sys
ruff, budget, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"), "RAYON_NUM_THREADS": "2"}
command = [ruff, "check", "--isolated", "--no-cache", "--select", "E9,F", "--output-format", "json", "--exit-zero", "--"] + files
try:
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
except OSError as e:
    print(json.dumps({"error": "cannot run %s: %s" % (ruff, e)}))
    sys.exit(0)
if done.returncode != 0:
    print(json.dumps({"error": "ruff exited with %d: %s" % (done.returncode, done.stderr.decode("utf-8", "replace")[-1500:])}))
    sys.exit(0)
found = json.loads(done.stdout)
here = os.path.realpath(os.getcwd())
offered = shown = used = 0
for d in found:
    fix = d.get("fix") or {}
    safe = fix.get("applicability") == "safe"
    if not safe and d.get("code") != "F401":
        continue
    offered += 1
    at, end = d["location"], d["end_location"]
    edits = [[e["location"]["row"], e["location"]["column"], e["end_location"]["row"], e["end_location"]["column"], e["content"]] for e in fix.get("edits", [])] if safe else []
    line = json.dumps({"path": os.path.relpath(os.path.realpath(d["filename"]), here), "code": d.get("code") or "", "row": at["row"], "column": at["column"], "end_row": end["row"], "end_column": end["column"], "safe": safe, "edits": edits})
    if used + len(line) + 1 > budget:
        continue
    print(line)
    used += len(line) + 1
    shown += 1
print(json.dumps({"findings": len(found), "offered": offered, "shown": shown}))
"#;

/// What the cleanup did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cleanup {
    /// Fixes applied, per rule.
    pub fixed: BTreeMap<String, usize>,
    /// Unused imports that are re-exports, made explicit (`from m import f as f`):
    /// `path:line: why`.
    pub explicit: Vec<String>,
    /// Files changed.
    pub files: Vec<String>,
    /// Safe fixes ruff offered that were left out on purpose: `path:line: CODE why`.
    pub kept: Vec<String>,
    /// Why the cleanup did not run, or stopped before it was done.
    pub problem: Option<String>,
}

impl Cleanup {
    /// Findings the cleanup's fixes resolved.
    pub fn fixes(&self) -> usize {
        self.fixed.values().sum()
    }

    /// Adds what the round's `plans` did to the files of `batch` (those written).
    fn add(&mut self, plans: &BTreeMap<String, FilePlan>, batch: &BTreeMap<String, String>) {
        for (path, plan) in plans.iter().filter(|(p, _)| batch.contains_key(*p)) {
            for (code, n) in &plan.fixed {
                *self.fixed.entry(code.clone()).or_default() += n;
            }
            self.explicit.extend(plan.explicit.iter().cloned());
            if !self.files.contains(path) {
                self.files.push(path.clone());
            }
        }
        self.files.sort();
    }
}

/// One safe fix ruff offered, as the sandbox script prints it: the finding's range and the
/// edits (1-based rows, columns in characters), all of which apply or none.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Offered {
    pub path: String,
    pub code: String,
    pub row: usize,
    pub column: usize,
    pub end_row: usize,
    pub end_column: usize,
    /// Ruff marks its fix safe; `false` for an unused import ruff offers no safe fix for
    /// (in an `__init__.py`), which the script prints too.
    pub safe: bool,
    pub edits: Vec<(usize, usize, usize, usize, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ReportLine {
    Fix(Offered),
    Counts { offered: usize, shown: usize },
    Error { error: String },
}

/// What one sandbox run said: the findings it printed, and how many it had to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    pub offered: Vec<Offered>,
    pub total: usize,
}

/// Reads the script's output; its last line must be the counts (else the output was cut).
pub(crate) fn read_report(stdout: &str) -> Result<Report, String> {
    let mut offered = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<ReportLine>(line) {
            Ok(ReportLine::Fix(fix)) => offered.push(fix),
            Ok(ReportLine::Counts {
                offered: total,
                shown,
                ..
            }) if shown == offered.len() => {
                return Ok(Report { offered, total });
            }
            Ok(ReportLine::Counts { shown, .. }) => {
                return Err(format!(
                    "ruff's report lists {} fixes but says {shown}",
                    offered.len()
                ));
            }
            Ok(ReportLine::Error { error }) => return Err(error),
            Err(e) => return Err(format!("unreadable line in ruff's report ({e})")),
        }
    }
    Err("ruff's report ended early (no counts line)".into())
}

/// One replacement of `start..end` (bytes) by `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Splice {
    start: usize,
    end: usize,
    content: String,
}

/// Byte offsets where each line of `text` starts (one more than its lines when it ends with
/// a newline: the position after it).
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// The byte offset of 1-based `row` and `column` (in characters); `None` when the position
/// is not in `text`, or only past the end of its line.
fn offset(text: &str, starts: &[usize], row: usize, column: usize) -> Option<usize> {
    let start = *starts.get(row.checked_sub(1)?)?;
    let line = text[start..].split('\n').next().unwrap_or("");
    let skip = column.checked_sub(1)?;
    match line.char_indices().nth(skip) {
        Some((at, _)) => Some(start + at),
        None if skip == line.chars().count() => Some(start + line.len()),
        None => None,
    }
}

/// Whether `short` is `long` with characters taken away.
fn is_subsequence(short: &str, long: &str) -> bool {
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|l| l == c))
}

/// The edits of a fix in `text`, or why they cannot be applied.
fn edits_of(text: &str, starts: &[usize], fix: &Offered) -> Result<Vec<Splice>, &'static str> {
    let mut edits = Vec::new();
    for (row, column, end_row, end_column, content) in &fix.edits {
        let at = |r, c| offset(text, starts, r, c).ok_or("its positions are not in the file");
        let (start, end) = (at(*row, *column)?, at(*end_row, *end_column)?);
        if start > end {
            return Err("its positions are not in the file");
        }
        if !is_subsequence(content, &text[start..end]) {
            return Err("it would add text");
        }
        edits.push(Splice {
            start,
            end,
            content: content.clone(),
        });
    }
    if edits.is_empty() {
        return Err("it has no edits");
    }
    Ok(edits)
}

/// The name an import binds, from the text ruff points at: `os.path` binds `os`,
/// `List as L` binds `L`.
fn bound_name(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.rsplit_once(" as ") {
        Some((_, alias)) => alias.to_string(),
        None => flat.split('.').next().unwrap_or("").to_string(),
    }
}

/// The module a file is (`src/pkg/a.py` is `pkg.a`, `src/pkg/__init__.py` is `pkg`) and the
/// package its relative imports start from.
fn module_and_package(path: &str) -> (String, String) {
    let module = crate::python::import_path(path);
    let package = if path.ends_with("__init__.py") {
        module.clone()
    } else {
        module
            .rsplit_once('.')
            .map_or(String::new(), |(p, _)| p.to_string())
    };
    (module, package)
}

/// `from` of an import in `package` as an absolute module (`..m` from `a.b` is `a.m`).
fn absolute(from: &str, package: &str) -> Option<String> {
    let dots = from.len() - from.trim_start_matches('.').len();
    let rest = &from[dots..];
    if dots == 0 {
        return Some(rest.to_string());
    }
    let mut parts: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
    for _ in 1..dots {
        parts.pop()?;
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    Some(parts.join("."))
}

/// `(module, name)` pairs that files take from other modules (`from m import name`,
/// `m.name` after `import m`, `*` for a star import), with a file that does it. Comments are
/// stripped before reading, so `# noqa` cannot hide a statement.
pub(crate) fn taken_names(
    sources: &BTreeMap<String, String>,
) -> BTreeMap<(String, String), String> {
    let mut taken = BTreeMap::new();
    for (path, text) in sources.iter().filter(|(p, _)| p.ends_with(".py")) {
        let (_, package) = module_and_package(path);
        let mut found = Imported::default();
        for statement in crate::symbols::outline::import_statements(text) {
            let plain: Vec<&str> = statement
                .lines()
                .map(|l| l.split('#').next().unwrap_or(""))
                .collect();
            if let Some(import) = ImportItems::parse(&plain.join("\n")) {
                found.read(&import, &package);
            }
        }
        for (module, spelled) in &found.modules {
            for chain in attribute_chains(text, spelled) {
                let mut owner = module.clone();
                for part in chain.split('.') {
                    found.names.insert((owner.clone(), part.to_string()));
                    owner = join(&owner, part);
                }
            }
        }
        for key in found.names {
            taken.entry(key).or_insert_with(|| path.clone());
        }
    }
    taken
}

/// What one file's imports take: `(module, name)` pairs, and the modules it binds with the
/// name each is spelled by in its code (`import a.b` spells `a` and `a.b`; `from a import b
/// as c` may bind the module `a.b` as `c`).
#[derive(Default)]
struct Imported {
    names: BTreeSet<(String, String)>,
    modules: BTreeSet<(String, String)>,
}

impl Imported {
    fn read(&mut self, import: &ImportItems, package: &str) {
        let Some(from) = &import.from else {
            for (module, alias) in &import.items {
                match alias {
                    Some(alias) => {
                        self.modules.insert((module.clone(), alias.clone()));
                    }
                    None => {
                        let parts: Vec<&str> = module.split('.').collect();
                        for n in 1..=parts.len() {
                            let prefix = parts[..n].join(".");
                            self.modules.insert((prefix.clone(), prefix));
                        }
                    }
                }
            }
            return;
        };
        let Some(module) = absolute(from, package) else {
            return;
        };
        for (name, alias) in &import.items {
            self.names.insert((module.clone(), name.clone()));
            if name != "*" {
                let bound = alias.clone().unwrap_or_else(|| name.clone());
                self.modules.insert((join(&module, name), bound));
            }
        }
    }
}

fn join(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}.{name}")
    }
}

/// The dotted names that follow `spelled.` in `text` where `spelled` is not itself part of a
/// longer name (`np.mean.x` gives `mean.x` for `np`).
fn attribute_chains(text: &str, spelled: &str) -> Vec<String> {
    let needle = format!("{spelled}.");
    let mut chains = Vec::new();
    for (at, _) in text.match_indices(&needle) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| is_name_char(c) || c == '.') {
            continue;
        }
        let chain: String = text[at + needle.len()..]
            .chars()
            .take_while(|c| is_name_char(*c) || *c == '.')
            .collect();
        let chain = chain.trim_end_matches('.');
        if !chain.is_empty() {
            chains.push(chain.to_string());
        }
    }
    chains
}

/// What to do with one finding ruff offered.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    /// Ruff's own safe fix.
    Fix(Vec<Splice>),
    /// An unused import that is a re-export: ` as name` after the name, which says so
    /// (pyflakes and ruff take `import x as x` as an explicit re-export). `why` says whose.
    Explicit { edit: Splice, why: String },
    /// Left as it is, for this reason (listed in the report).
    Keep(String),
    /// Not ours to fix (no safe fix): ruff's finding stays, and the lint lists it.
    Pass,
}

/// What to do with `fix` in `path` (whose text is `text`).
fn decide(
    path: &str,
    text: &str,
    starts: &[usize],
    fix: &Offered,
    taken: &BTreeMap<(String, String), String>,
) -> Decision {
    if fix.code == "F401" {
        let at = offset(text, starts, fix.row, fix.column)
            .zip(offset(text, starts, fix.end_row, fix.end_column))
            .filter(|(start, end)| start <= end);
        let Some((start, end)) = at else {
            return Decision::Keep("its positions are not in the file".into());
        };
        if let Some(why) = reexport(path, &text[start..end], taken) {
            let spelled = &text[start..end];
            if !aliasable(text, start, spelled) {
                return Decision::Keep(format!(
                    "{why}, and `{spelled}` cannot take a redundant alias"
                ));
            }
            let edit = Splice {
                start: end,
                end,
                content: format!(" as {spelled}"),
            };
            return Decision::Explicit { edit, why };
        }
    }
    if !fix.safe {
        return Decision::Pass;
    }
    if !RULES.contains(&fix.code.as_str()) {
        return Decision::Keep("not a rule the cleanup applies".into());
    }
    match edits_of(text, starts, fix) {
        Ok(edits) => Decision::Fix(edits),
        Err(why) => Decision::Keep(why.into()),
    }
}

/// Whether the name `spelled` at `start` of `text` can take ` as spelled`: a plain name
/// (`os.path` cannot), not itself an alias (ruff points at `p` in `path as p`).
fn aliasable(text: &str, start: usize, spelled: &str) -> bool {
    let plain = !spelled.is_empty() && spelled.chars().all(is_name_char);
    let before = text[..start].trim_end();
    let aliased = before
        .strip_suffix("as")
        .is_some_and(|rest| rest.ends_with(char::is_whitespace));
    plain && !aliased
}

/// Why an import that ruff finds unused in `path` is a re-export (`spelled` is the text
/// ruff points at), if it is: every import of an `__init__.py` is the package's interface,
/// and an import another file takes from this module is part of it.
fn reexport(
    path: &str,
    spelled: &str,
    taken: &BTreeMap<(String, String), String>,
) -> Option<String> {
    if path.ends_with("__init__.py") {
        return Some("an `__init__.py` import is the package's interface".into());
    }
    let name = bound_name(spelled);
    let (module, _) = module_and_package(path);
    [name.as_str(), "*"].iter().find_map(|n| {
        let by = taken.get(&(module.clone(), n.to_string()))?;
        (by != path).then(|| format!("{by} imports `{name}` from here"))
    })
}

/// What one round does to one file: its new text (`None`: unchanged), the fixes applied per
/// rule, the imports made explicit re-exports, and the fixes left out with why.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct FilePlan {
    pub text: Option<String>,
    pub fixed: BTreeMap<String, usize>,
    pub explicit: Vec<String>,
    pub kept: Vec<String>,
}

/// Whether `edits` overlap any of `chosen` (an insertion counts as one character wide).
fn overlaps(edits: &[Splice], chosen: &[Splice]) -> bool {
    edits.iter().any(|e| {
        chosen
            .iter()
            .any(|c| e.start < c.end.max(c.start + 1) && c.start < e.end.max(e.start + 1))
    })
}

/// The fixes of `fixes` that [`decide`] takes, applied to `text` (the file `path`); `taken`
/// is [`taken_names`] of the repository. A fix whose edits overlap one taken already waits
/// for the next round; one identical to a fix taken is the same fix (ruff gives an unused
/// duplicate import both F811 and F401).
pub(crate) fn plan_file(
    path: &str,
    text: &str,
    fixes: &[&Offered],
    taken: &BTreeMap<(String, String), String>,
) -> FilePlan {
    let mut plan = FilePlan::default();
    if text.contains('\r') {
        plan.kept.extend(fixes.iter().filter(|f| f.safe).map(|f| {
            format!(
                "{path}:{}: {} kept: the file has \\r line ends",
                f.row, f.code
            )
        }));
        return plan;
    }
    let starts = line_starts(text);
    let mut chosen: Vec<Splice> = Vec::new();
    let mut sorted: Vec<&&Offered> = fixes.iter().collect();
    sorted.sort_by_key(|f| (f.row, f.column, f.edits.first().map(|e| (e.0, e.1))));
    for fix in sorted {
        let (edits, explicit) = match decide(path, text, &starts, fix, taken) {
            Decision::Fix(edits) => (edits, None),
            Decision::Explicit { edit, why } => (vec![edit], Some(why)),
            Decision::Keep(why) => {
                plan.kept
                    .push(format!("{path}:{}: {} kept: {why}", fix.row, fix.code));
                continue;
            }
            Decision::Pass => continue,
        };
        let same = edits.iter().all(|e| chosen.contains(e));
        if !same && overlaps(&edits, &chosen) {
            continue;
        }
        if !same {
            chosen.extend(edits);
        }
        match explicit {
            Some(why) => plan.explicit.push(format!("{path}:{}: {why}", fix.row)),
            None => *plan.fixed.entry(fix.code.clone()).or_default() += 1,
        }
    }
    if !chosen.is_empty() {
        chosen.sort_by_key(|e| std::cmp::Reverse(e.start));
        let mut new = text.to_string();
        for edit in &chosen {
            new.replace_range(edit.start..edit.end, &edit.content);
        }
        plan.text = Some(new);
    }
    plan.kept.sort();
    plan.kept.dedup();
    plan
}

/// One round over the repository: per file, the [`FilePlan`] of the fixes offered for it.
/// Paths the report names that are not among `sources` are ignored.
pub(crate) fn plan_round(
    sources: &BTreeMap<String, String>,
    offered: &[Offered],
) -> BTreeMap<String, FilePlan> {
    let taken = taken_names(sources);
    let mut by_file: BTreeMap<&str, Vec<&Offered>> = BTreeMap::new();
    for fix in offered {
        by_file.entry(fix.path.as_str()).or_default().push(fix);
    }
    by_file
        .into_iter()
        .filter_map(|(path, fixes)| {
            let text = sources.get(path)?;
            Some((path.to_string(), plan_file(path, text, &fixes, &taken)))
        })
        .collect()
}

/// Runs the report script in the sandbox over `files` of `repo`.
async fn report(
    repo: &Path,
    files: &[String],
    ruff: &str,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<Report, String> {
    let mut argv: Vec<String> = ["python3", "-I", "-c", REPORT_SCRIPT, ruff]
        .map(String::from)
        .to_vec();
    argv.push(OUTPUT_BUDGET.to_string());
    argv.extend(files.iter().cloned());
    let run = runner
        .run_command(repo, &argv, cancel)
        .await
        .map_err(|e| format!("the sandbox could not run ruff: {e}"))?;
    if run.cancelled {
        return Err("interrupted".into());
    }
    if run.exit_code != Some(0) {
        return Err(format!(
            "ruff's report script failed in the sandbox ({}): {}",
            run.killed_by
                .clone()
                .unwrap_or_else(|| format!("exit code {:?}", run.exit_code)),
            run.stderr.trim()
        ));
    }
    read_report(&run.stdout).map_err(|why| match why.starts_with("cannot run") {
        // The Docker image predates the cleanup (or ruff went missing since it was built).
        true => format!("{why} (`zerorepo sandbox build-image` puts ruff into the image)"),
        false => why,
    })
}

/// Cleans the Python files of `repo` (`sources`: path → text as on disk) in rounds. Each
/// round's new texts go to `commit`, which may still change them (assembly regroups the
/// imports) and writes them, all or nothing; `sources` follows what it wrote. Stops at the
/// first round with nothing to apply.
pub async fn clean<E: std::fmt::Display>(
    repo: &Path,
    sources: &mut BTreeMap<String, String>,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
    mut commit: impl FnMut(&mut BTreeMap<String, String>) -> Result<(), E>,
) -> Result<Cleanup, E> {
    let mut cleanup = Cleanup::default();
    let Some(ruff) = runner.ruff() else {
        cleanup.problem = Some(format!(
            "the {} sandbox has no ruff (scripts/setup.sh installs it), so unused imports stay",
            runner.name()
        ));
        return Ok(cleanup);
    };
    let files: Vec<String> = sources.keys().cloned().collect();
    if files.is_empty() {
        return Ok(cleanup);
    }
    for _ in 0..ROUNDS {
        let report = match report(repo, &files, &ruff, runner, cancel).await {
            Ok(report) => report,
            Err(why) => {
                cleanup.problem = Some(why);
                return Ok(cleanup);
            }
        };
        let plans = plan_round(sources, &report.offered);
        let (mut batch, unparsable) = parsable(&plans);
        cleanup.kept = plans.values().flat_map(|p| p.kept.clone()).collect();
        cleanup.kept.extend(unparsable);
        if batch.is_empty() {
            if report.total > report.offered.len() {
                cleanup.problem = Some(format!(
                    "ruff reported {} findings to consider, more than one report holds; {} were",
                    report.total,
                    report.offered.len()
                ));
            }
            return Ok(cleanup);
        }
        commit(&mut batch)?;
        cleanup.add(&plans, &batch);
        sources.extend(batch);
    }
    cleanup.problem = Some(format!(
        "stopped after {ROUNDS} rounds; ruff may offer more fixes"
    ));
    Ok(cleanup)
}

/// What a cleanup's outcome depends on besides the tree: the sandbox and the ruff it runs
/// (the host's, mounted or copied into the image; the image's id is in the identity).
pub(crate) async fn identity(runner: &dyn TestRunner) -> String {
    let ruff = crate::programs::find("ruff")
        .map(|p| crate::sandbox::file_identity(&p))
        .unwrap_or_default();
    format!("{}\nruff {ruff}", runner.identity().await)
}

/// A cleanup kept with the fingerprint of the tree it left ([`super::validate::fingerprint`]).
#[derive(Serialize, Deserialize)]
struct KeptCleanup {
    fingerprint: String,
    cleanup: Cleanup,
}

/// The cleanup kept by the last run, if `repo` is still as it left it and the sandbox is
/// the same ([`identity`]).
pub(crate) fn kept(repo: &Path, identity: &str) -> Option<Cleanup> {
    let bytes = std::fs::read(repo.join(crate::layout::CLEANUP)).ok()?;
    let kept: KeptCleanup = serde_json::from_slice(&bytes).ok()?;
    (kept.fingerprint == super::validate::fingerprint(repo, identity)).then_some(kept.cleanup)
}

/// Keeps `cleanup` for the next run, with the fingerprint of `repo` as it is now.
pub(crate) fn keep(repo: &Path, identity: &str, cleanup: &Cleanup) {
    let kept = KeptCleanup {
        fingerprint: super::validate::fingerprint(repo, identity),
        cleanup: cleanup.clone(),
    };
    if let Ok(json) = serde_json::to_vec(&kept) {
        // Only a saving for the next run: failing to keep it changes nothing now.
        let _ = crate::fsutil::write_atomic(&repo.join(crate::layout::CLEANUP), &json);
    }
}

/// The new texts of a round's `plans` but those that do not parse (a fix should never do
/// that; if one does, the file stays as it is), and those left out, as `kept` lines.
fn parsable(plans: &BTreeMap<String, FilePlan>) -> (BTreeMap<String, String>, Vec<String>) {
    let mut left_out = Vec::new();
    let kept = plans
        .iter()
        .filter_map(|(path, plan)| Some((path.clone(), plan.text.clone()?)))
        .filter(|(path, text)| {
            let broken = crate::symbols::check::tree_sitter_errors(text)
                .map_or(true, |errors| !errors.is_empty());
            if broken {
                left_out.push(format!(
                    "{path}: not cleaned: the fixed text does not parse"
                ));
            }
            !broken
        })
        .collect();
    (kept, left_out)
}

#[cfg(test)]
mod tests;

//! From generated node files to a conventional Python project, after the last node.
//!
//! Skipped functions get stubs first (so every planned name can be imported), then [`imports`]
//! groups each module's imports (stdlib / third party / local) and lists its requirements,
//! [`packages`] writes `__init__.py` exports and finds import cycles, [`project`] the packaging
//! metadata, [`readme`] the README, [`report`] the generation report and JUnit results,
//! [`html`] the same report as a page with the plan drawn by [`graph`]; those are pure. Then
//! [`cleanup`] removes unused and duplicated imports with ruff's safe fixes, found in the
//! sandbox, each round written as one journalled, all-or-nothing batch through an
//! [`Overlay`]. [`validate`] checks the result (compile, `pip install -e .`, `pytest tests/`
//! in the sandbox, ruff's lint), and [`assemble`](Assembler::assemble) runs the whole step:
//! every file is written atomically and only when its content changes, so assembling twice
//! changes nothing.

pub mod cleanup;
pub mod deps;
pub mod graph;
pub mod html;
pub mod imports;
pub mod markdown;
pub mod packages;
pub mod project;
pub mod readme;
pub mod report;
pub mod validate;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::checkpoint::Checkpoint;
use crate::fsutil::{FsError, Workspace};
use crate::layout::{JUNIT, REPORT, REPORT_HTML, RPG_EXPORT};
use crate::records::NodeRecords;
use crate::records::NodeStatus;
use crate::rpg::ValidRpg;
use crate::sandbox::TestRunner;
use crate::workspace::git::Git;
use crate::workspace::overlay::{Author, Overlay, OverlayError};

pub use validate::Validation;

const ASSEMBLY_COMMIT: &str = "chore: assemble repository";

/// How the repository was generated, for `docs/rpg.json` and the report. Times come from
/// the checkpoint's records, not from this invocation, so a rerun that generates nothing
/// writes the same bytes (and makes no new commit).
#[derive(Debug, Clone, Serialize)]
pub struct GenerationInfo {
    pub engine: String,
    pub model: String,
    pub sandbox: String,
    pub prompt_templates: Vec<String>,
    /// Timestamps of the first and last node records.
    pub started_at: String,
    pub finished_at: String,
    /// Time spent in nodes, summed over every run that produced the current records.
    pub node_time_ms: u64,
    /// Records with a duration (nodes that were run, not skipped).
    pub nodes_timed: usize,
}

impl GenerationInfo {
    pub fn new(model: String, sandbox: String, records: &NodeRecords) -> GenerationInfo {
        // Compared as instants, not as text: records of earlier versions have whole seconds
        // (`...:28Z`), later ones milliseconds (`...:28.135Z`), and `Z` sorts after `.`.
        let instant = |t: &String| chrono::DateTime::parse_from_rfc3339(t).ok();
        let first = records
            .values()
            .map(|r| &r.timestamp)
            .min_by_key(|t| instant(t));
        let last = records
            .values()
            .map(|r| &r.timestamp)
            .max_by_key(|t| instant(t));
        let durations: Vec<u64> = records.values().filter_map(|r| r.duration_ms).collect();
        GenerationInfo {
            engine: format!("zerorepo {}", env!("CARGO_PKG_VERSION")),
            model,
            sandbox,
            prompt_templates: crate::prompts::ALL.iter().map(|t| t.label()).collect(),
            started_at: first.cloned().unwrap_or_default(),
            finished_at: last.cloned().unwrap_or_default(),
            node_time_ms: durations.iter().sum(),
            nodes_timed: durations.len(),
        }
    }
}

/// What the assembly step did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assembly {
    pub files_written: Vec<String>,
    pub validation: Validation,
    /// The validation was the last run's: nothing it depends on changed
    /// ([`validate::fingerprint`]).
    pub validation_reused: bool,
    pub import_cycles: Vec<Vec<String>>,
    /// The planned dependencies checked in the code ([`deps`]).
    pub dependencies: deps::DependencyCheck,
    /// What ruff's safe fixes changed before the validation ([`cleanup`]).
    pub cleanup: cleanup::Cleanup,
}

#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    #[error(transparent)]
    Workspace(#[from] FsError),
    #[error(transparent)]
    Git(#[from] crate::workspace::git::GitError),
    /// The cleanup's batch was refused (a file changed on disk since it was read).
    #[error(transparent)]
    Overlay(#[from] OverlayError),
    #[error(transparent)]
    Checkpoint(#[from] crate::checkpoint::CheckpointError),
    /// Cancelled (Ctrl-C) while validating: no report was written, nothing committed.
    #[error("interrupted while validating the assembled repository")]
    Interrupted,
    #[error("cannot write docs/rpg.json: {0}")]
    Export(#[from] serde_json::Error),
}

/// The RPG with each node's final status and the generation metadata, indented.
pub(crate) fn rpg_export(
    rpg: &ValidRpg,
    records: &NodeRecords,
    info: &GenerationInfo,
) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(rpg.rpg())?;
    if let Some(nodes) = value.get_mut("nodes").and_then(|n| n.as_array_mut()) {
        for node in nodes.iter_mut() {
            let id = node.get("id").and_then(|i| i.as_str()).unwrap_or_default();
            let status = records
                .get(id)
                .map_or("pending", |r| r.status.as_str())
                .to_string();
            if let Some(object) = node.as_object_mut() {
                object.insert("status".into(), status.into());
            }
        }
    }
    if let Some(object) = value.as_object_mut() {
        let metadata = object
            .entry("metadata")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.insert("generation".into(), serde_json::to_value(info)?);
        }
    }
    Ok(serde_json::to_string_pretty(&value)? + "\n")
}

/// Every Python file of the repository (relative path → text), outside hidden directories.
fn python_sources(root: &Path) -> BTreeMap<String, String> {
    crate::workspace::publish::files_under(root)
        .into_iter()
        .filter(|rel| rel.ends_with(".py"))
        .filter_map(|rel| {
            let text = std::fs::read_to_string(root.join(&rel)).ok()?;
            Some((rel, text))
        })
        .collect()
}

/// Which files have their imports grouped stdlib / third party / local ([`imports`]): the
/// generated modules and their test files, with the project's own top-level packages.
struct Grouping {
    local: std::collections::BTreeSet<String>,
    files: std::collections::BTreeSet<String>,
}

impl Grouping {
    fn new(rpg: &ValidRpg) -> Grouping {
        let leaves = || {
            rpg.order()
                .iter()
                .map(|&p| rpg.node(p))
                .filter(|n| n.is_leaf())
        };
        let local = leaves()
            .filter_map(|n| n.file_path.as_deref())
            .filter_map(|f| {
                let dotted = crate::python::import_path(f);
                dotted.split('.').next().map(str::to_string)
            })
            .collect();
        let files = leaves()
            .flat_map(|n| n.file_path.clone().into_iter().chain(n.test_file()))
            .collect();
        Grouping { local, files }
    }

    /// `text` of `path` with its imports regrouped, when it is one of the grouped files and
    /// the grouping changes it.
    fn regroup(&self, path: &str, text: &str) -> Option<String> {
        if !self.files.contains(path) {
            return None;
        }
        let grouped = imports::group_imports(text, &self.local);
        (grouped != text).then_some(grouped)
    }

    /// [`Self::regroup`] for a file the cleanup changed; where no import is left at its top,
    /// the blank lines between its statements are evened out instead (the module's docstring
    /// would otherwise stand three blank lines above its first function). Only blank lines
    /// between top-level statements change, as every merge of an answer changes them.
    fn tidy(&self, path: &str, text: &str) -> Option<String> {
        if let Some(grouped) = self.regroup(path, text) {
            return Some(grouped);
        }
        let units = crate::symbols::split_units(text);
        if !self.files.contains(path)
            || units
                .iter()
                .any(|u| u.kind == crate::symbols::UnitKind::Import)
        {
            return None;
        }
        let even = crate::edit::merge::render(&units);
        (even != text).then_some(even)
    }
}

/// The generated modules and test files whose imports are not grouped stdlib / third party /
/// local, with their regrouped text.
fn grouped_imports(rpg: &ValidRpg, sources: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let grouping = Grouping::new(rpg);
    sources
        .iter()
        .filter_map(|(path, text)| Some((path.clone(), grouping.regroup(path, text)?)))
        .collect()
}

/// Stubs for the functions of skipped nodes (their dependency did not pass, so they never
/// ran), merged into their modules: a reference or user test that imports several names from
/// a module in one statement then still collects, and only the missing function fails.
/// Failed nodes already keep a candidate or a stub of their own.
fn skipped_stubs(
    rpg: &ValidRpg,
    records: &NodeRecords,
    sources: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    for node in rpg.order().iter().map(|&p| rpg.node(p)) {
        let Some(record) = records.get(&node.id) else {
            continue;
        };
        let Some(file) = node.file_path.as_deref().filter(|f| f.ends_with(".py")) else {
            continue;
        };
        if record.status != NodeStatus::Skipped
            || !node.is_leaf()
            || node.kind != crate::rpg::NodeKind::Function
        {
            continue;
        }
        let text = modules
            .entry(file.to_string())
            .or_insert_with(|| sources.get(file).cloned().unwrap_or_default());
        if crate::symbols::stub::defines(text, &node.name) {
            continue;
        }
        let reason = record.failure_reason.as_deref().unwrap_or("it was skipped");
        let doc = node.docstring.as_deref().unwrap_or("");
        if let Some(stub) = crate::symbols::stub::function_stub(&node.name, doc, reason) {
            *text = crate::edit::merge_python(text, &stub);
        }
    }
    modules
        .into_iter()
        .filter(|(path, text)| sources.get(path) != Some(text))
        .collect()
}

/// What assembly reads and where it writes: the plan and the node records, the output tree,
/// the staging copy (regrouped imports go there too, so the next flush finds nothing to
/// publish), the output's git repository, and the sandbox that validates the result.
pub(crate) struct Assembler<'a> {
    pub rpg: &'a ValidRpg,
    pub records: &'a NodeRecords,
    pub workspace: &'a Workspace,
    pub staging: &'a Workspace,
    pub git: &'a Git,
    pub runner: &'a dyn TestRunner,
    pub generation: &'a GenerationInfo,
    pub cancel: &'a CancellationToken,
    /// The subgraphs' integration tests, for the report.
    pub integration: &'a [crate::records::IntegrationRecord],
}

/// What assembly found about the repository, for the report.
struct Checked<'a> {
    validation: &'a Validation,
    cycles: &'a [Vec<String>],
    dependencies: &'a deps::DependencyCheck,
    cleanup: &'a cleanup::Cleanup,
}

/// Writes a file of the output only when its text changes, journalling it as published
/// before it is written, so on resume the engine can tell an assembly cut short by a crash
/// from a user's edit.
struct Writer<'a> {
    workspace: &'a Workspace,
    checkpoint: &'a mut Checkpoint,
    written: Vec<String>,
}

impl Writer<'_> {
    fn write(&mut self, path: &str, text: &str) -> Result<(), AssembleError> {
        if self.workspace.read(path)?.as_deref() != Some(text) {
            let hash = crate::fsutil::content_hash(text.as_bytes());
            self.checkpoint
                .record_flush([(path.to_string(), hash)].into())?;
            self.workspace.write(path, text)?;
            self.written.push(path.to_string());
        }
        Ok(())
    }
}

impl Assembler<'_> {
    /// Writes the project files, validates the result, writes the report and JUnit results,
    /// and commits them as one assembly commit.
    pub async fn assemble(&self, checkpoint: &mut Checkpoint) -> Result<Assembly, AssembleError> {
        let mut out = Writer {
            workspace: self.workspace,
            checkpoint,
            written: Vec::new(),
        };
        let mut sources = python_sources(self.workspace.root());
        self.write_stubs(&mut out, &mut sources)?;
        let info = self.write_project(&mut out, &mut sources)?;
        let identity = cleanup::identity(self.runner).await;
        let cleanup = self.clean(&mut out, &mut sources, &identity).await?;
        if cleanup.problem.is_none() && !self.cancel.is_cancelled() {
            cleanup::keep(self.workspace.root(), &identity, &cleanup);
        }
        let import_cycles = packages::import_cycles(&sources);
        let dependencies = self.planned_dependencies(&sources);
        let files: Vec<String> = sources.keys().cloned().collect();
        let (validation, validation_reused) =
            validate::validate_or_reuse(self.workspace.root(), &files, self.runner, self.cancel)
                .await;
        if validation_reused {
            tracing::info!("validation unchanged since the last run: nothing it checks changed");
        }
        if self.cancel.is_cancelled() {
            // A report of a validation cut short would say "0 collected" and be committed.
            return Err(AssembleError::Interrupted);
        }
        if let Some(xml) = report::junit(&validation) {
            out.write(JUNIT, &xml)?;
        }
        let checked = Checked {
            validation: &validation,
            cycles: &import_cycles,
            dependencies: &dependencies,
            cleanup: &cleanup,
        };
        let (text, html) = self.report(&info, &checked)?;
        out.write(REPORT, &text)?;
        out.write(REPORT_HTML, &html)?;
        self.git
            .commit_all(&format!("{ASSEMBLY_COMMIT} (metadata, docs, reports)"))?;
        Ok(Assembly {
            files_written: out.written,
            validation,
            validation_reused,
            import_cycles,
            dependencies,
            cleanup,
        })
    }

    /// Ruff's safe fixes ([`cleanup`]), found in the sandbox; each round's files are one
    /// batch ([`Self::write_batch`]). The result is kept with the fingerprint of the tree
    /// that assembly then leaves, and reused while the tree and the sandbox are unchanged (a
    /// rerun that generates nothing asks the sandbox nothing and writes the same report).
    async fn clean(
        &self,
        out: &mut Writer<'_>,
        sources: &mut BTreeMap<String, String>,
        identity: &str,
    ) -> Result<cleanup::Cleanup, AssembleError> {
        let root = self.workspace.root();
        if let Some(kept) = cleanup::kept(root, identity) {
            return Ok(kept);
        }
        let grouping = Grouping::new(self.rpg);
        cleanup::clean(root, sources, self.runner, self.cancel, |batch| {
            self.write_batch(out, &grouping, batch)
        })
        .await
    }

    /// Writes one round of the cleanup all or nothing: an [`Overlay`] whose commit journals
    /// the batch before writing any file of it. A grouped file is grouped again first
    /// ([`Grouping::tidy`]: that also evens out the blank lines a removed import leaves, and
    /// the next assembly finds nothing to regroup). The staging copy follows where it held what the output held, so
    /// the next flush finds nothing to publish (an `__init__.py`, whose exports only the
    /// output has, is left as staged).
    fn write_batch(
        &self,
        out: &mut Writer<'_>,
        grouping: &Grouping,
        batch: &mut BTreeMap<String, String>,
    ) -> Result<(), AssembleError> {
        for (path, text) in batch.iter_mut() {
            if let Some(tidy) = grouping.tidy(path, text) {
                *text = tidy;
            }
        }
        let mut overlay = Overlay::new(self.workspace.clone());
        for (path, text) in batch.iter() {
            if self.staging.read(path)? == self.workspace.read(path)? {
                self.staging.write(path, text)?;
            }
            overlay.write(path, text.clone(), Author::Generated)?;
        }
        let done = overlay.commit(|files| out.checkpoint.record_flush(files))?;
        for path in done.written {
            if !out.written.contains(&path) {
                out.written.push(path);
            }
        }
        Ok(())
    }

    /// The planned dependencies of the nodes whose code the engine wrote (passed, needs
    /// review or failed; a failed node's stub is left out by [`deps::check`]), checked
    /// against `sources`.
    fn planned_dependencies(&self, sources: &BTreeMap<String, String>) -> deps::DependencyCheck {
        deps::check(self.rpg, sources, |node| {
            self.records.get(&node.id).is_some_and(|r| {
                matches!(
                    r.status,
                    NodeStatus::Passed | NodeStatus::NeedsReview | NodeStatus::Failed
                )
            })
        })
    }

    /// Stubs of the skipped functions, into `sources` and the output (the staging copy is
    /// written first, so the next run's flush finds nothing to publish).
    fn write_stubs(
        &self,
        out: &mut Writer<'_>,
        sources: &mut BTreeMap<String, String>,
    ) -> Result<(), AssembleError> {
        for (path, text) in skipped_stubs(self.rpg, self.records, sources) {
            self.staging.write(&path, &text)?;
            out.write(&path, &text)?;
            sources.insert(path, text);
        }
        Ok(())
    }

    /// Regrouped imports, package exports, and the project files written from the plan;
    /// `sources` follows the Python files.
    fn write_project(
        &self,
        out: &mut Writer<'_>,
        sources: &mut BTreeMap<String, String>,
    ) -> Result<project::ProjectInfo, AssembleError> {
        let (rpg, records) = (self.rpg, self.records);
        for (path, text) in grouped_imports(rpg, sources) {
            self.staging.write(&path, &text)?;
            out.write(&path, &text)?;
            sources.insert(path, text);
        }
        for (path, text) in packages::init_files(rpg, records, sources) {
            out.write(&path, &text)?;
            sources.insert(path, text);
        }
        let info = project::project_info(rpg, records, sources);
        out.write("pyproject.toml", &project::pyproject(&info))?;
        out.write("requirements.txt", &project::requirements(&info))?;
        out.write("requirements-dev.txt", &project::requirements_dev())?;
        out.write("README.md", &readme::readme(rpg, records, &info))?;
        out.write(RPG_EXPORT, &rpg_export(rpg, records, self.generation)?)?;
        Ok(info)
    }

    fn report(
        &self,
        info: &project::ProjectInfo,
        checked: &Checked<'_>,
    ) -> Result<(String, String), AssembleError> {
        let status = crate::status::summarize(Some(self.rpg.rpg()), self.records);
        // Earlier assembly commits are left out: the report describes the subgraphs' history,
        // and listing them would make every rerun change the report and commit again.
        let git_log: Vec<_> = self
            .git
            .log()?
            .into_iter()
            .filter(|e| !e.subject.starts_with(ASSEMBLY_COMMIT))
            .collect();
        let input = report::ReportInput {
            rpg: self.rpg,
            records: self.records,
            status: &status,
            info,
            generation: self.generation,
            validation: checked.validation,
            cycles: checked.cycles,
            dependencies: checked.dependencies,
            cleanup: checked.cleanup,
            git_log: &git_log,
            out: &self.workspace.root().display().to_string(),
            integration: self.integration,
        };
        Ok((
            report::generation_report(&input),
            html::generation_report_html(&input),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::NodeRecord;

    #[test]
    fn first_and_last_records_are_compared_as_instants_across_precisions() {
        let at = |t: &str| NodeRecord {
            timestamp: t.into(),
            ..NodeRecord::now(NodeStatus::Passed)
        };
        let records: NodeRecords = [
            ("a".into(), at("2026-11-24T04:00:28Z")),
            ("b".into(), at("2026-11-24T04:00:28.500Z")),
            ("c".into(), at("2026-11-24T04:00:27.900Z")),
        ]
        .into_iter()
        .collect();
        let info = GenerationInfo::new("m".into(), "s".into(), &records);
        assert_eq!(info.started_at, "2026-11-24T04:00:27.900Z");
        assert_eq!(info.finished_at, "2026-11-24T04:00:28.500Z");
    }
}

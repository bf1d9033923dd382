//! A corpus plan made ready to run: the plan file to generate from, the reference directory
//! `zerorepo eval --reference` takes, and the support modules to copy into every generated
//! repository before it is measured.
//!
//! A hand-written plan is ready as it is (its paths are checked). An sdist plan is fetched
//! (cached, digest-checked), unpacked into the plan's work directory, extracted in-process
//! with `rpg::extract` (never executed), and its reference is built from the sdist's own test
//! directory: the directory is copied whole (helpers, data files and `conftest.py` go with the
//! tests), and `select.txt` ([`crate::eval::SELECTION_FILE`]) says which files and node ids run.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::file::{CorpusPlan, PlanSource, SdistPlan, TestSelection};
use super::sdist::{self, Pin, SdistError};
use crate::rpg::extract::{self, ExtractError};
use crate::sandbox::TestRunner;

/// What running a plan needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedPlan {
    /// The plan to generate from.
    pub plan: PathBuf,
    /// The reference directory for the evaluation.
    pub reference: PathBuf,
    /// Modules of the sdist copied into each generated repository before the evaluation.
    pub support: Vec<Support>,
    /// The library's names the plan leaves out (a subset's other functions, constants that are
    /// not literals), added to each generated package before the evaluation ([`super::rest`]).
    pub rest: Vec<super::rest::Rest>,
}

/// One support module: a file or a package directory of the sdist, and where it goes in the
/// generated repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    pub from: PathBuf,
    /// Relative to the repository root: `src/boltons/dictutils.py`.
    pub to: PathBuf,
}

/// Why a plan could not be made ready; the plan is reported with the stage and the reason,
/// and the others go on.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("{0}")]
    Missing(String),
    #[error(transparent)]
    Sdist(#[from] SdistError),
    #[error("extraction: {0}")]
    Extract(#[from] ExtractError),
    #[error("reference: {0}")]
    Reference(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl PrepareError {
    /// The step that failed, for the report: `download`, `unpack`, `extract`, `reference`,
    /// `plan`.
    pub fn stage(&self) -> &'static str {
        match self {
            PrepareError::Missing(_) => "plan",
            PrepareError::Sdist(SdistError::Download(_) | SdistError::Digest { .. }) => "download",
            PrepareError::Sdist(_) => "unpack",
            PrepareError::Extract(_) => "extract",
            PrepareError::Reference(_) | PrepareError::Io { .. } => "reference",
        }
    }
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PrepareError + '_ {
    move |source| PrepareError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Makes `plan` ready in `work` (the plan's own directory, created), fetching sdists into
/// `cache` with `fetcher` (a sandbox with the network).
pub async fn prepare(
    plan: &CorpusPlan,
    work: &Path,
    cache: &Path,
    fetcher: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<PreparedPlan, PrepareError> {
    match &plan.source {
        PlanSource::HandWritten { fixture, reference } => hand_written(fixture, reference),
        PlanSource::Sdist(sdist) => {
            let pin = Pin {
                package: &sdist.package,
                version: &sdist.version,
                sha256: &sdist.sha256,
            };
            let archive = sdist::fetch(pin, cache, fetcher, cancel).await?;
            from_sdist(sdist, plan.examples, &archive, work)
        }
    }
}

fn hand_written(fixture: &Path, reference: &Path) -> Result<PreparedPlan, PrepareError> {
    if !fixture.is_file() {
        return Err(PrepareError::Missing(format!(
            "fixture {}: no such file (paths are from the repository root: run from there)",
            fixture.display()
        )));
    }
    if !reference.join("tests").is_dir() {
        return Err(PrepareError::Missing(format!(
            "reference {}: no tests/ directory in it",
            reference.display()
        )));
    }
    Ok(PreparedPlan {
        plan: fixture.to_path_buf(),
        reference: reference.to_path_buf(),
        support: Vec::new(),
        rest: Vec::new(),
    })
}

/// Unpacks `archive` into `work/sdist`, writes `work/rpg.json` and `work/reference`.
fn from_sdist(
    sdist: &SdistPlan,
    examples: bool,
    archive: &Path,
    work: &Path,
) -> Result<PreparedPlan, PrepareError> {
    std::fs::create_dir_all(work).map_err(io(work))?;
    let unpacked = work.join("sdist");
    remove_dir(&unpacked)?;
    let root = sdist::unpack(archive, &unpacked)?;
    let src = root.join(&sdist.src);
    let sources = extract::read_sources(&src)?;
    let options = extract::ExtractOptions {
        modules: sdist.modules.clone(),
        examples,
        reference_tests: None,
        project_name: None,
        functions: sdist.functions.clone(),
    };
    let extraction = extract::extract(&sources, &options)?;
    let plan = work.join("rpg.json");
    let text = serde_json::to_string_pretty(&extraction.rpg)
        .map_err(|e| PrepareError::Reference(e.to_string()))?
        + "\n";
    std::fs::write(&plan, text).map_err(io(&plan))?;
    let reference = work.join("reference");
    remove_dir(&reference)?;
    build_reference(&root, &sdist.reference, &reference)?;
    let support = sdist
        .support
        .iter()
        .map(|module| support_module(&src, module))
        .collect::<Result<_, _>>()?;
    let rest = super::rest::rest_of(&src, &extraction.rpg, &sdist.support);
    Ok(PreparedPlan {
        plan,
        reference,
        support,
        rest,
    })
}

fn remove_dir(dir: &Path) -> Result<(), PrepareError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(dir)(e)),
        _ => Ok(()),
    }
}

/// `reference/tests` as a copy of the directory that holds the selected test files (links
/// left out), and `reference/select.txt` naming them.
fn build_reference(
    root: &Path,
    selected: &[TestSelection],
    reference: &Path,
) -> Result<(), PrepareError> {
    let dirs: Vec<&Path> = selected.iter().filter_map(|s| s.file.parent()).collect();
    let Some(dir) = dirs.first().copied() else {
        return Err(PrepareError::Reference(
            "no reference test is listed".into(),
        ));
    };
    if dirs.iter().any(|d| *d != dir) {
        return Err(PrepareError::Reference(
            "the listed test files must share one directory".into(),
        ));
    }
    for selection in selected {
        let path = root.join(&selection.file);
        let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if !regular {
            return Err(PrepareError::Reference(format!(
                "{}: not a file of the sdist",
                selection.file.display()
            )));
        }
    }
    let tests = reference.join("tests");
    crate::fsutil::copy_tree(&root.join(dir), &tests, crate::fsutil::NOT_THE_REPOSITORY)
        .map_err(io(&tests))?;
    let select = reference.join(crate::eval::SELECTION_FILE);
    std::fs::write(&select, selection_text(selected)).map_err(io(&select))?;
    Ok(())
}

/// The selection file's lines: `test_more.py::ChunkedTests`, or the file name alone.
pub(crate) fn selection_text(selected: &[TestSelection]) -> String {
    let mut text =
        String::from("# the reference tests the corpus lists; see `zerorepo bench --help`\n");
    for selection in selected {
        text.push_str(&selection.file_name());
        if let Some(node) = &selection.node {
            text.push_str("::");
            text.push_str(node);
        }
        text.push('\n');
    }
    text
}

/// Where support module `dotted` is in the sdist's source directory (a module file or a
/// package directory) and where it goes in a generated repository.
fn support_module(src: &Path, dotted: &str) -> Result<Support, PrepareError> {
    let rel: PathBuf = dotted.split('.').collect();
    let file = rel.with_extension("py");
    for (candidate, is_dir) in [(file, false), (rel, true)] {
        let from = src.join(&candidate);
        let found = std::fs::symlink_metadata(&from)
            .is_ok_and(|m| if is_dir { m.is_dir() } else { m.is_file() });
        if found {
            return Ok(Support {
                from,
                to: Path::new("src").join(candidate),
            });
        }
    }
    Err(PrepareError::Reference(format!(
        "support module {dotted}: not found in the sdist's source directory"
    )))
}

/// Copies the support modules into the generated repository `out`. A support module never
/// replaces generated code: a file already there with other content is an error.
pub fn copy_support(out: &Path, support: &[Support]) -> Result<(), PrepareError> {
    for item in support {
        let target = out.join(&item.to);
        if item.from.is_dir() {
            if target.exists() {
                return Err(PrepareError::Reference(format!(
                    "support package {}: the generated repository already has it",
                    item.to.display()
                )));
            }
            crate::fsutil::copy_tree(&item.from, &target, crate::fsutil::NOT_THE_REPOSITORY)
                .map_err(io(&target))?;
            continue;
        }
        let content = std::fs::read(&item.from).map_err(io(&item.from))?;
        match std::fs::read(&target) {
            Ok(existing) if existing == content => continue,
            Ok(_) => {
                return Err(PrepareError::Reference(format!(
                    "support module {}: the generated repository has its own (the plan covers it)",
                    item.to.display()
                )));
            }
            Err(_) => {}
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&target, content).map_err(io(&target))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_reference_is_the_test_directory_with_a_selection() {
        let sdist = tempfile::tempdir().unwrap();
        write(sdist.path(), "tests/test_a.py", "def test_a(): pass\n");
        write(sdist.path(), "tests/test_b.py", "class BTests: pass\n");
        write(sdist.path(), "tests/data/rows.txt", "1\n");
        write(sdist.path(), "tests/conftest.py", "\n");
        let selected = [
            TestSelection {
                file: "tests/test_a.py".into(),
                node: None,
            },
            TestSelection {
                file: "tests/test_b.py".into(),
                node: Some("BTests".into()),
            },
        ];
        let out = tempfile::tempdir().unwrap();
        let reference = out.path().join("reference");
        build_reference(sdist.path(), &selected, &reference).unwrap();
        for rel in [
            "tests/test_a.py",
            "tests/test_b.py",
            "tests/data/rows.txt",
            "tests/conftest.py",
        ] {
            assert!(reference.join(rel).is_file(), "{rel}");
        }
        let select = std::fs::read_to_string(reference.join("select.txt")).unwrap();
        assert!(
            select.ends_with("test_a.py\ntest_b.py::BTests\n"),
            "{select}"
        );

        let missing = [TestSelection {
            file: "tests/test_gone.py".into(),
            node: None,
        }];
        let err = build_reference(sdist.path(), &missing, &out.path().join("r2")).unwrap_err();
        assert!(
            err.to_string().contains("tests/test_gone.py: not a file"),
            "{err}"
        );
        let apart = [
            selected[0].clone(),
            TestSelection {
                file: "other/test_c.py".into(),
                node: None,
            },
        ];
        let err = build_reference(sdist.path(), &apart, &out.path().join("r3")).unwrap_err();
        assert!(err.to_string().contains("share one directory"), "{err}");
    }

    #[test]
    fn support_modules_are_found_as_files_or_packages_and_never_replace_generated_code() {
        let src = tempfile::tempdir().unwrap();
        write(src.path(), "lib/tables.py", "WIDE = []\n");
        write(src.path(), "lib/data/__init__.py", "X = 1\n");
        let file = support_module(src.path(), "lib.tables").unwrap();
        assert_eq!(file.to, Path::new("src/lib/tables.py"));
        let package = support_module(src.path(), "lib.data").unwrap();
        assert_eq!(package.to, Path::new("src/lib/data"));
        assert!(support_module(src.path(), "lib.nope").is_err());

        let out = tempfile::tempdir().unwrap();
        let support = [file, package];
        copy_support(out.path(), &support[..1]).unwrap();
        copy_support(out.path(), &support[..1]).unwrap(); // again: the same content is fine
        copy_support(out.path(), &support[1..]).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.path().join("src/lib/tables.py")).unwrap(),
            "WIDE = []\n"
        );
        assert!(out.path().join("src/lib/data/__init__.py").is_file());
        write(out.path(), "src/lib/tables.py", "generated\n");
        let err = copy_support(out.path(), &support[..1]).unwrap_err();
        assert!(err.to_string().contains("has its own"), "{err}");
    }

    #[test]
    fn a_missing_fixture_says_where_paths_are_from() {
        let err = hand_written(
            Path::new("/nonexistent/rpg.json"),
            Path::new("/nonexistent"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("repository root"), "{err}");
        assert_eq!(err.stage(), "plan");
    }
}

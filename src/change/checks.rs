//! The checks of a change, run in the sandbox on a scratch copy of the repository with the
//! overlay applied: which a profile runs, one command line's run, and the copy itself.

use std::collections::BTreeSet;
use std::path::Path;

use super::{Check, CodeError, Profile, Request, SKIPPED_DIRS, failures};
use crate::detect::Commands;
use crate::workspace::overlay::Overlay;

/// The checks a profile runs, given the stacks detected in the staged tree.
/// With no stack detected, Python files are at least compiled (`has_python`).
pub(super) fn profile_commands(
    profile: Profile,
    commands: &[Commands],
    has_python: bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |c: Option<&String>| {
        if let Some(c) = c
            && !out.contains(c)
        {
            out.push(c.clone());
        }
    };
    for stack in commands {
        match profile {
            Profile::Smoke => {}
            Profile::Fast => push(Some(&stack.diagnostic_command)),
            Profile::Strict => {
                push(Some(&stack.diagnostic_command));
                push(stack.primary_test.as_ref());
                push(stack.build.as_ref());
                push(stack.lint.as_ref());
            }
        }
    }
    let python = commands
        .iter()
        .any(|c| c.stack == crate::detect::Stack::Python);
    if (profile == Profile::Smoke && python) || (out.is_empty() && has_python) {
        out.push("python -m compileall -q .".into());
    }
    out
}

/// Characters of a check's output kept (its tail).
const OUTPUT_CHARS: usize = 12_000;

/// One command line in the sandbox, on `dir`.
pub(super) async fn run_check(
    request: &Request,
    dir: &Path,
    command: &str,
) -> Result<Check, CodeError> {
    let argv = shlex::split(command).unwrap_or_default();
    let run = request
        .runner
        .run_command(dir, &argv, &request.cancel)
        .await?;
    let unavailable = run.exit_code == Some(127) && run.output.contains("cannot run");
    Ok(Check {
        command: command.to_string(),
        passed: run.exit_code == Some(0) && !run.timed_out && !run.cancelled,
        unavailable,
        exit_code: run.exit_code,
        // The failing tests' sections and the summary, not only the tail ([`failures`]);
        // without the temp paths and timings that change from run to run, so that the same
        // failure gives the same prompt (a run's `/tmp/run-…` name in a correction prompt
        // made two runs of one request, same seeds, sample different answers).
        output: failures::relevant(&run.stable_output(), OUTPUT_CHARS),
    })
}

/// The repository's files (relative, sorted), without [`SKIPPED_DIRS`], symbolic links
/// and paths no task could name ([`crate::fsutil::beneath::list_files`]: the listing never
/// follows a link).
pub(super) fn list_files(repo: &Path) -> std::io::Result<Vec<String>> {
    crate::fsutil::beneath::list_files(repo, SKIPPED_DIRS)
}

pub(super) fn directories(files: &[String]) -> BTreeSet<String> {
    let mut dirs = BTreeSet::new();
    for file in files {
        let mut path = Path::new(file);
        while let Some(parent) = path.parent() {
            if parent.as_os_str().is_empty() {
                break;
            }
            dirs.insert(parent.to_string_lossy().into_owned());
            path = parent;
        }
    }
    dirs
}

/// A temporary copy of the repository with the overlay's changes applied, for the sandbox.
pub(super) fn scratch_copy(repo: &Path, overlay: &Overlay) -> Result<tempfile::TempDir, CodeError> {
    let scratch = tempfile::Builder::new()
        .prefix("zerorepo-code-")
        .tempdir()?;
    // Regular files only, each read beneath the repository: symbolic links are left out of
    // the copy (a link to `/root` or to another tree would put what it points at in the
    // sandbox's view).
    for file in list_files(repo)? {
        let to = scratch.path().join(&file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if let Some(bytes) = crate::fsutil::beneath::read(repo, &file)? {
            std::fs::write(&to, bytes)?;
            if let Some(mode) = crate::fsutil::beneath::mode(repo, &file)? {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode & 0o777))?;
            }
        }
    }
    for (path, entry) in overlay.entries() {
        let to = scratch.path().join(path);
        match &entry.content {
            Some(text) => {
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&to, text)?;
            }
            None => {
                let _ = std::fs::remove_file(&to);
            }
        }
    }
    Ok(scratch)
}

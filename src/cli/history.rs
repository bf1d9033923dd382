//! `zerorepo history`: the audit trail of `zerorepo code` in a repository.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::change::audit;
use crate::exit;

/// Show what `zerorepo code` did in a repository: every run's diagnostic, plan, approval,
/// risk decisions, tasks, checks, corrections, and whether it wrote or rolled back
/// (.zerorepo/execution_history.json, secrets redacted).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The repository.
    #[arg(default_value = ".")]
    repo: PathBuf,
    /// Only the last run.
    #[arg(long)]
    last: bool,
    /// Print the entries as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    if !args.repo.is_dir() {
        return Err(CliError::bad_input(format!(
            "{} is not a directory",
            args.repo.display()
        )));
    }
    super::code::recover(&args.repo)?;
    let mut entries = audit::history(&args.repo).map_err(|e| CliError::Failed(e.into()))?;
    if args.last
        && let Some(run) = entries.last().map(|e| e.run.clone())
    {
        entries.retain(|e| e.run == run);
    }
    if args.json {
        print!("{}", render::json(&entries)?);
    } else {
        print!("{}", render::history(&args.repo, &entries));
    }
    Ok(exit::OK)
}

//! `zerorepo detect`: a repository's stacks and the commands to test, build and lint it.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;

/// Detect a repository's stacks and the commands to test, build and lint it, with the
/// diagnostic command to run first (error-first).
#[derive(clap::Args)]
pub(crate) struct Args {
    dir: PathBuf,
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    // A change that kill -9 cut off is rolled back first, so the stacks are the repository's.
    super::code::recover(&args.dir)?;
    // Detection only reads the directory: failing to is the user's pointing at the wrong place.
    let found = crate::detect::detect(&args.dir).map_err(CliError::bad_input)?;
    if args.json {
        print!("{}", render::json(&found)?);
    } else {
        print!("{}", render::detect(&args.dir, &found));
    }
    Ok(exit::OK)
}

//! `zerorepo derive-script`: a scripted-provider script from a fixture's reference solution,
//! so tests and benchmarks can generate a repository without a model.

use std::path::PathBuf;

use super::error::CliError;
use super::validate::load_valid;
use crate::exit;
use crate::llm::derive::derive_script;

/// Derive a scripted-provider script from a fixture's reference solution (for tests and benchmarks).
#[derive(clap::Args)]
pub(crate) struct Args {
    rpg: PathBuf,
    /// Directory holding the reference `src/...` and `tests/test_<module>.py` files.
    #[arg(long)]
    reference: PathBuf,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let valid = load_valid(&args.rpg)?;
    // A reference that does not cover the plan is the user's input to fix.
    let script = derive_script(&valid, &args.reference).map_err(CliError::bad_input)?;
    // JSON lines, the format `--llm scripted:PATH` reads: one compact entry per line.
    for entry in script {
        println!("{}", serde_json::to_string(&entry)?);
    }
    Ok(exit::OK)
}

//! `zerorepo status`: what an output directory's checkpoint says, read-only.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::report;

/// Show what an output directory's checkpoint says: counts per subgraph, failures, ETA.
#[derive(clap::Args)]
pub(crate) struct Args {
    dir: PathBuf,
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    // A directory without a readable checkpoint is the user's pointing at the wrong place.
    let status = report::status(&args.dir).map_err(CliError::bad_input)?;
    if args.json {
        print!("{}", render::json(&status)?);
    } else {
        print!("{}", report::render_text(&status));
    }
    Ok(exit::OK)
}

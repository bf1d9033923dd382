//! `zerorepo rollback`: back to the newest subgraph that passed completely.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::engine;
use crate::exit;

/// Roll the output back to the newest subgraph that passed completely (its git tag); the
/// nodes after it are set back to pending, so running `generate` again redoes them.
#[derive(clap::Args)]
pub(crate) struct Args {
    dir: PathBuf,
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let done = engine::rollback(&args.dir)?;
    if args.json {
        print!("{}", render::json(&done)?);
    } else {
        print!("{}", render::rollback(&args.dir, &done));
    }
    Ok(exit::OK)
}

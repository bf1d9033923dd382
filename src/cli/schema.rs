//! `zerorepo schema`: the JSON Schemas of the files zerorepo reads and writes.

use clap::ValueEnum;

use super::error::CliError;
use super::render;
use crate::exit;

/// Print a JSON Schema (the committed copies live in schemas/).
#[derive(clap::Args)]
pub(crate) struct Args {
    which: Kind,
}

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    Rpg,
    Checkpoint,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let schema = match args.which {
        Kind::Rpg => schemars::schema_for!(crate::rpg::Rpg),
        Kind::Checkpoint => schemars::schema_for!(crate::checkpoint::CheckpointMap),
    };
    print!("{}", render::json(&schema)?);
    Ok(exit::OK)
}

//! `zerorepo schema`: the JSON Schemas of the files zerorepo reads and writes.

use clap::ValueEnum;

use super::error::CliError;
use crate::exit;

/// Print a JSON Schema (the committed copies live in schemas/).
#[derive(clap::Args)]
pub(crate) struct Args {
    which: SchemaKind,
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaKind {
    Rpg,
    Checkpoint,
    /// What `zerorepo eval --json` prints.
    Eval,
    /// The reports of `zerorepo bench` (reports/nightly/DATE.json).
    Nightly,
    /// zerorepo.toml, the configuration file.
    Config,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    // The same text as the committed copies under schemas/, from the one place that makes it.
    print!(
        "{}",
        match args.which {
            SchemaKind::Rpg => crate::schemas::rpg(),
            SchemaKind::Checkpoint => crate::schemas::checkpoint(),
            SchemaKind::Eval => crate::schemas::eval(),
            SchemaKind::Nightly => crate::schemas::nightly(),
            SchemaKind::Config => crate::schemas::config(),
        }
    );
    Ok(exit::OK)
}

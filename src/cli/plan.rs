//! `zerorepo plan`: the generation order, without generating anything.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use super::validate::load_valid;
use crate::exit;
use crate::schedule;

/// Show the generation order as a tree per subgraph.
#[derive(clap::Args)]
pub(crate) struct Args {
    rpg: PathBuf,
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let valid = load_valid(&args.rpg)?;
    let plan = schedule::plan::build(&valid);
    if args.json {
        print!("{}", render::json(&plan)?);
    } else {
        print!("{}", render::terminal(&schedule::plan::render_text(&plan)));
    }
    Ok(exit::OK)
}

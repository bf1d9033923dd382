//! `zerorepo view`: a Python file's outline, or a symbol's source, in a generated repository.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::code::CodeTools;
use crate::exit;

/// Show a Python file's outline, or the source of a symbol with file:line (every match
/// when the name is ambiguous). Exit 2 when DIR, the file or the symbol is not there.
#[derive(clap::Args)]
pub(crate) struct Args {
    dir: PathBuf,
    /// A path relative to DIR (its outline), or a plain or qualified symbol name
    /// (`mean`, `Stats.mean`, `pkg.stats.Stats.mean`).
    target: String,
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let view = CodeTools::new(&args.dir).and_then(|tools| tools.view(&args.target))?;
    if args.json {
        print!("{}", render::json(&view)?);
    } else {
        print!("{}", crate::code::tools::render_text(&view));
    }
    Ok(exit::OK)
}

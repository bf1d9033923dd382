//! `zerorepo rename`: a symbol renamed everywhere in a Python tree, all files or none.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::symbols::SymbolTools;
use crate::symbols::lsp::ServerSpec;

/// Rename a Python symbol (a function, class or method) and every use of it under DIR: by a
/// language server (`ty` or `pyright`) when one is installed, else by name. Every changed file
/// is syntax-checked and all are written or none; a new name that is not an identifier, or
/// that is already defined where the symbol is, is refused (exit 2).
#[derive(clap::Args)]
pub(crate) struct Args {
    dir: PathBuf,
    /// The symbol: a plain or qualified name (`mean`, `Stats.mean`).
    symbol: String,
    /// Its new name.
    new_name: String,
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: Args) -> Result<u8, CliError> {
    let renamed = SymbolTools::new(&args.dir)?
        .with_server(ServerSpec::detect())
        .rename(&args.symbol, &args.new_name)
        .await?;
    match args.json {
        true => print!("{}", render::json(&renamed)?),
        false => print!("{}", render::renamed(&renamed)),
    }
    Ok(exit::OK)
}

//! `zerorepo view`: a Python file's outline, a symbol's source, or every use of a symbol, in
//! a generated repository (or any Python tree).

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::symbols::SymbolTools;
use crate::symbols::lsp::ServerSpec;

/// Show a Python file's outline, or the source of a symbol with file:line (every match
/// when the name is ambiguous); with `--references`, every use of the symbol. Exit 2 when
/// DIR, the file or the symbol is not there.
#[derive(clap::Args)]
pub(crate) struct Args {
    dir: PathBuf,
    /// A path relative to DIR (its outline), or a plain or qualified symbol name
    /// (`mean`, `Stats.mean`, `pkg.stats.Stats.mean`).
    target: String,
    /// Every use of the symbol: by a Python language server (`ty` or `pyright`) when one is
    /// installed, else by name (marked approximate: it may hold unrelated uses of the name).
    #[arg(long)]
    references: bool,
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: Args) -> Result<u8, CliError> {
    let tools = SymbolTools::new(&args.dir)?;
    if args.references {
        let found = tools
            .with_server(ServerSpec::detect())
            .references(&args.target)
            .await?;
        match args.json {
            true => print!("{}", render::json(&found)?),
            false => print!("{}", render::references(&found)),
        }
        return Ok(exit::OK);
    }
    let view = tools.view(&args.target)?;
    match args.json {
        true => print!("{}", render::json(&view)?),
        // The source shown is generated code: its string literals may hold any control.
        false => print!(
            "{}",
            render::terminal(&crate::symbols::tools::render_text(&view))
        ),
    }
    Ok(exit::OK)
}

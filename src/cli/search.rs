//! `zerorepo search`: the nodes of a generated repository's plan that match a question.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::localize::{EmbedderChoice, Localizer, LocalizerOptions};

/// Find the nodes of a generated repository's plan that match a question (localization).
///
/// Ranks node names and docstrings by sentence-embedding similarity when the embedder is
/// pulled (`zerorepo model pull embedder`), else by BM25 over identifier parts and words.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// An output directory of `zerorepo generate` (its RPG: docs/rpg.json or .zerorepo/rpg.json).
    dir: PathBuf,
    /// What to look for: words, an identifier or a question ("where is the mean computed").
    query: String,
    /// Search every subgraph (the default unless --subgraph is given).
    #[arg(long, conflicts_with = "subgraph")]
    all: bool,
    /// Search only this subgraph.
    #[arg(long, value_name = "S")]
    subgraph: Option<String>,
    /// How many hits to show.
    #[arg(short, default_value_t = 5,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    k: usize,
    /// Rank by BM25 even when the embedder is there.
    #[arg(long)]
    lexical: bool,
    /// Read the RPG from this file instead of the directory.
    #[arg(long, value_name = "PATH")]
    rpg: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: Args) -> Result<u8, CliError> {
    let Args {
        dir,
        query,
        all: _,
        subgraph,
        k,
        lexical,
        rpg,
        json,
    } = args;
    let options = LocalizerOptions {
        embedder: if lexical {
            EmbedderChoice::Off
        } else {
            EmbedderChoice::Default
        },
        ..LocalizerOptions::default()
    };
    // Loading the embedder and embedding the nodes is CPU work: off the async threads.
    let result = tokio::task::spawn_blocking(move || {
        let mut localizer = Localizer::open_dir(&dir, rpg.as_deref(), options)?;
        localizer.search(&query, k, subgraph.as_deref())
    })
    .await??;
    if json {
        print!("{}", render::json(&result)?);
    } else {
        // Snippets are the plan's docstrings.
        print!("{}", render::terminal(&render::search(&result)));
    }
    Ok(exit::OK)
}

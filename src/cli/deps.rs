//! `zerorepo deps`: what a node depends on and what depends on it.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::localize::{EmbedderChoice, Localizer, LocalizerOptions};

/// Show what a node depends on and what depends on it, two hops out, failed nodes marked.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// An output directory of `zerorepo generate`.
    dir: PathBuf,
    /// A node id, or a unique node name.
    node: String,
    /// How many levels to follow each way (at most 5).
    #[arg(long, default_value_t = crate::localize::DEFAULT_HOPS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=5))]
    hops: usize,
    /// Read the RPG from this file instead of the directory.
    #[arg(long, value_name = "PATH")]
    rpg: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let options = LocalizerOptions {
        // Dependencies need no ranking: do not load (or warn about) the embedder.
        embedder: EmbedderChoice::Off,
        ..LocalizerOptions::default()
    };
    let mut localizer = Localizer::open_dir(&args.dir, args.rpg.as_deref(), options)?;
    let view = localizer.deps(&args.node, args.hops)?;
    if args.json {
        print!("{}", render::json(&view)?);
    } else {
        print!("{}", crate::localize::deps::render_text(&view));
    }
    Ok(exit::OK)
}

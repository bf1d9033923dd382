//! `zerorepo generate`: the one long-running command. Besides its flags it owns what only a
//! run needs: the SIGINT/SIGTERM handling that stops a run cleanly so it can be resumed.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::EXIT_CODES;
use super::error::CliError;
use super::llm_args::LlmArgs;
use super::render;
use super::sandbox_args::SandboxArgs;
use super::validate::load_valid;
use crate::engine::{GenerateOptions, GenerateRequest, LoopSettings};
use crate::exit;
use crate::pipeline::{self, Summary};

/// Generate the repository: tests first, then code, node by node, checkpointed.
///
/// Running the same command again resumes: passed nodes are kept, failed and interrupted
/// ones are retried.
#[derive(clap::Args)]
#[command(after_help = EXIT_CODES)]
pub(crate) struct Args {
    rpg: PathBuf,
    /// Output repository directory (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Regenerate this node and every node after it in the order (its dependencies must
    /// have passed); earlier nodes are left as they are.
    #[arg(long, value_name = "ID")]
    start_from_node: Option<String>,
    /// Answers asked after a node's first implementation round, while its code fails a
    /// gate (a round of N candidates spends N; every round spends at least one).
    #[arg(long, default_value_t = crate::engine::DEFAULT_MAX_RETRIES,
          value_parser = clap::value_parser!(u32).range(0..=100))]
    max_retries: u32,
    /// The baseline to measure the engine against: ask the model once per node for an
    /// implementation, with no tests, and keep what it wrote without running it (every node
    /// ends `needs_review`). Compare with `zerorepo eval`.
    #[arg(long, conflicts_with = "start_from_node")]
    one_shot: bool,
    /// Candidates asked for each fix round and fresh start (the first round is the greedy
    /// answer alone): all are run against the node's tests and the best by evidence is kept
    /// (the local model decodes them together; see reports/batching.md). 1 asks for one.
    #[arg(long, value_name = "N", default_value_t = crate::engine::DEFAULT_CANDIDATES,
          value_parser = clap::value_parser!(u32).range(1..=4))]
    candidates: u32,
    /// Let the model vote on a dispute between code that passes the plan's examples and a
    /// model-written test it fails (the test rewritten, or the code fixed). Off by default:
    /// the embedded model's votes were measured no better than chance (docs/loop.md).
    #[arg(long)]
    votes: bool,
    /// Nodes generated at once (nodes sharing a file never run together). The embedded model
    /// decodes their requests together; a remote model answers them in parallel.
    #[arg(long, default_value_t = crate::engine::DEFAULT_JOBS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    jobs: usize,
    /// Passed nodes between two writes of the output tree (nodes work in a staging copy;
    /// each subgraph's end and the run's end write too). 1 publishes every passed node.
    #[arg(long, value_name = "N", default_value_t = crate::workspace::publish::FLUSH_EVERY,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000),
          env = "ZEROREPO_FLUSH_EVERY")]
    flush_every: usize,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Print the final summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: Args, quiet: bool) -> Result<u8, CliError> {
    // Everything that can reject the input does so before anything is written: the
    // sandbox, the RPG, the model.
    let runner = args.sandbox.runner()?;
    let valid = Arc::new(load_valid(&args.rpg)?);
    let llm = args.llm.provider()?;
    let cancel = CancellationToken::new();
    spawn_signal_handler(cancel.clone());
    // Bars only when a person watches both streams; `--json` keeps stdout for the summary.
    let bars = !args.json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let mut view = crate::progress::ProgressView::new(bars, quiet);
    let options = GenerateOptions {
        out: args.out,
        start_from: args.start_from_node,
        settings: LoopSettings {
            max_retries: args.max_retries,
            one_shot: args.one_shot,
            candidates: args.candidates,
            votes: args.votes,
        },
        jobs: args.jobs,
        flush_every: args.flush_every,
        phases: view.phases(),
    };
    let request = GenerateRequest {
        rpg: valid,
        llm,
        runner,
        options,
        cancel,
    };
    let summary = pipeline::generate(request, |event| view.show(&event)).await;
    view.finish();
    let summary = summary.map_err(|e| CliError::from(e).context("generation stopped"))?;
    if args.json {
        print!("{}", render::json(&summary)?);
    } else {
        print!("{}", render::generate_summary(&summary));
    }
    Ok(exit_code(&summary))
}

/// A run that ended: 130 when interrupted (resumable), 0 when everything passed and the
/// repository checks out, else 1.
fn exit_code(summary: &Summary) -> u8 {
    if summary.nodes.interrupted {
        exit::INTERRUPTED
    } else if summary.succeeded() {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// First SIGINT/SIGTERM: stop starting nodes, let the current write finish, exit 130.
/// A second one exits at once.
pub(crate) fn spawn_signal_handler(cancel: CancellationToken) {
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("cannot listen for SIGTERM: {e}");
                    return;
                }
            };
        for round in 0..2 {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            if round == 0 {
                // Cancel first, and never panic on a closed stderr: a reader that went away
                // must not keep the run from stopping cleanly.
                cancel.cancel();
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "interrupted: finishing the current write; press Ctrl-C again to quit at once"
                );
            } else {
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    });
}

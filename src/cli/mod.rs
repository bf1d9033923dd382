//! The `zerorepo` command line: the top layer, over every other module of the library.
//!
//! This module owns what is common to all commands: the parser (`Cli`, with the global
//! flags), the logging set-up, the async runtime, and the one place that turns a command's
//! result into the process's exit code. Each command lives in its own file, with its
//! arguments (`Args`, whose doc comment is the command's help) and its `run`; the human
//! readable output of every command is in `render`, and the one error type in `error`.
//!
//! Nothing else in the library uses this module: it only calls down.

mod bench;
pub(crate) mod code;
mod completions;
mod config;
mod deps;
mod derive_script;
mod detect;
mod error;
mod eval;
mod generate;
mod history;
mod llm_args;
mod model;
mod plan;
mod rename;
mod render;
mod report;
mod rollback;
mod rpg;
mod sandbox;
mod sandbox_args;
mod schema;
mod search;
mod status;
mod validate;
mod view;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::exit;
use error::CliError;

/// The exit codes, shown under the top-level help and `generate`'s (the command that uses
/// all of them).
const EXIT_CODES: &str = "Exit codes: 0 ok (nodes that need review are listed, not failures), 1 finished with failed/skipped nodes (or an operation failed), 2 bad input (nothing written), 130 interrupted (resume by running the same command again).";

#[derive(Parser)]
#[command(
    name = "zerorepo",
    version,
    about = "Turn a Repository Planning Graph (RPG) into a tested Python repository, and change existing repositories safely (`zerorepo code`)"
)]
#[command(
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Flags every command accepts (before or after its name).
#[derive(clap::Args)]
struct GlobalArgs {
    /// More log output (-v debug, -vv trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only warnings and errors; no progress lines.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// The configuration file (default: ~/.config/zerorepo/zerorepo.toml, with a
    /// ./zerorepo.toml over it that may set harmless options only). Its settings are the
    /// defaults of the flags they stand for: flags > environment > file > defaults; see
    /// `zerorepo config show`.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
}

/// One variant per command; each command's help is the doc comment of its `Args`.
#[derive(Subcommand)]
enum Command {
    Validate(validate::Args),
    Plan(plan::Args),
    Generate(generate::Args),
    Status(status::Args),
    Report(report::Args),
    Rollback(rollback::Args),
    DeriveScript(derive_script::Args),
    Detect(detect::Args),
    View(view::Args),
    Rename(rename::Args),
    Search(search::Args),
    Deps(deps::Args),
    /// Plans themselves: `rpg extract` writes one from existing Python source.
    #[command(subcommand)]
    Rpg(rpg::Command),
    Eval(eval::Args),
    Code(code::Args),
    Bench(bench::Args),
    History(history::Args),
    /// The local models (code model, embedder): fetch them, or show where they live.
    #[command(subcommand)]
    Model(model::Command),
    /// Sandbox maintenance.
    #[command(subcommand)]
    Sandbox(sandbox::Command),
    Schema(schema::Args),
    Completions(completions::Args),
    /// zerorepo.toml: the settings it holds and how they resolve.
    #[command(subcommand)]
    Config(config::Command),
}

/// The whole program: parse, set up logging and the runtime, run the command, and turn its
/// outcome into the exit code (an error is printed once, here, as `error: ...`).
pub fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The file sets the parser's defaults, so it is read first; a bad file stops everything.
    let loaded = match config::load(&argv) {
        Ok(loaded) => loaded,
        Err(e) => {
            let err = config::bad_file(e);
            eprintln!("error: {err}");
            return ExitCode::from(err.exit_code());
        }
    };
    let matches = config::with_file_defaults(Cli::command(), &loaded.config).get_matches_from(argv);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    init_logging(cli.global.verbose, cli.global.quiet);
    if let Some(path) = &loaded.path {
        tracing::debug!("settings from {}", path.display());
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    match runtime.block_on(run(cli.command, &cli.global, &loaded)) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("zerorepo={level}")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .init();
}

/// Whether logs are coloured: only on a terminal, and not when `NO_COLOR` is set to anything
/// but the empty string (the convention of no-color.org). A `2> file` capture stays plain.
fn colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Runs one command. `Ok` carries the exit code of a command that ran to its end (a finished
/// generation with failed nodes, or an invalid RPG under `validate --json`, is not an error).
async fn run(
    command: Command,
    global: &GlobalArgs,
    loaded: &config::Loaded,
) -> Result<u8, CliError> {
    match command {
        Command::Validate(args) => validate::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Generate(args) => generate::run(args, global.quiet).await,
        Command::Status(args) => status::run(args),
        Command::Report(args) => report::run(args),
        Command::Rollback(args) => rollback::run(args),
        Command::DeriveScript(args) => derive_script::run(args),
        Command::Detect(args) => detect::run(args),
        Command::View(args) => view::run(args).await,
        Command::Rename(args) => rename::run(args).await,
        Command::Search(args) => search::run(args).await,
        Command::Deps(args) => deps::run(args),
        Command::Rpg(command) => rpg::run(command),
        Command::Eval(args) => eval::run(args).await,
        Command::Code(args) => code::run(args).await,
        Command::Bench(args) => bench::run(args, global.quiet).await,
        Command::History(args) => history::run(args),
        Command::Model(command) => model::run(command, global.quiet).await,
        Command::Sandbox(command) => sandbox::run(command).await,
        Command::Schema(args) => schema::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Config(command) => config::run(command, loaded, &Cli::command()),
    }
}

#[cfg(test)]
mod tests {
    use super::colour;
    use std::ffi::OsStr;

    #[test]
    fn logs_are_coloured_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some(OsStr::new(""))));
        assert!(!colour(true, Some(OsStr::new("1"))));
        assert!(!colour(false, None));
    }
}

//! `zerorepo completions`: shell completion scripts, written by clap's generator from the
//! same parser the program uses, so they never fall behind a flag.

use clap::CommandFactory;

use super::error::CliError;
use crate::exit;

/// Print a completion script for a shell.
///
/// bash: `zerorepo completions bash > ~/.local/share/bash-completion/completions/zerorepo`;
/// zsh: `zerorepo completions zsh > "${fpath[1]}/_zerorepo"`;
/// fish: `zerorepo completions fish > ~/.config/fish/completions/zerorepo.fish`.
#[derive(clap::Args)]
pub(crate) struct Args {
    shell: clap_complete::Shell,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let mut command = super::Cli::command();
    clap_complete::generate(args.shell, &mut command, "zerorepo", &mut std::io::stdout());
    Ok(exit::OK)
}

//! `zerorepo sandbox`: maintenance of the sandbox generated tests run in.

use clap::Subcommand;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::sandbox::docker;

/// The `sandbox` commands (a group: its help is on `cli::Command::Sandbox`).
#[derive(Subcommand)]
pub(crate) enum Command {
    /// Build the Docker sandbox image offline from this machine's /usr/bin/python3, pytest and ruff
    /// (no registry is contacted). Needs a running Docker engine (DOCKER_HOST).
    BuildImage {
        #[arg(long, default_value = docker::DEFAULT_IMAGE)]
        tag: String,
    },
}

pub(crate) async fn run(command: Command) -> Result<u8, CliError> {
    match command {
        Command::BuildImage { tag } => {
            // What this machine lacks for the build (Docker, python3, pytest) is for the
            // user to provide.
            let tag = docker::build_image(&tag)
                .await
                .map_err(CliError::bad_input)?;
            print!("{}", render::built_image(&tag));
            Ok(exit::OK)
        }
    }
}

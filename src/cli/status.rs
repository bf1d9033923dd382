//! `zerorepo status`: what an output directory's checkpoint says, read-only.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::status;

/// Show what an output directory's checkpoint says: counts per subgraph, failures, ETA.
#[derive(clap::Args)]
pub(crate) struct Args {
    dir: PathBuf,
    /// One node (id, or a name the plan gives one node): its loop, its vote, and where each
    /// of its fixes looked (the localization's queries and suspects).
    #[arg(long, value_name = "ID")]
    node: Option<String>,
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    if let Some(node) = &args.node {
        let view = status::node_status(&args.dir, node).map_err(CliError::bad_input)?;
        match args.json {
            true => print!("{}", render::json(&view)?),
            false => print!("{}", render::terminal(&status::render_node(&view))),
        }
        return Ok(exit::OK);
    }
    // A directory without a readable checkpoint is the user's pointing at the wrong place.
    let report = status::status(&args.dir).map_err(CliError::bad_input)?;
    if args.json {
        print!("{}", render::json(&report)?);
    } else {
        print!("{}", render::terminal(&status::render_text(&report)));
    }
    Ok(exit::OK)
}

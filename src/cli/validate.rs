//! `zerorepo validate`, and the loading of an RPG that every command taking one shares.
//!
//! Both go through `check_rpg`, so `validate` accepts exactly the RPGs the other commands
//! accept, and says why in the same words.

use std::path::{Path, PathBuf};

use super::error::CliError;
use super::render;
use crate::engine;
use crate::exit;
use crate::rpg::{self, ValidRpg};

/// Check an RPG: schema, ids, references, paths, cycles. Exit 2 when invalid.
#[derive(clap::Args)]
pub(crate) struct Args {
    rpg: PathBuf,
    /// Also check that no file path escapes this output directory through a symlink.
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

/// Why an RPG was rejected: unreadable/unparsable, or invalid.
pub(crate) enum Invalid {
    Load(rpg::LoadError),
    Rpg(Vec<rpg::RpgError>),
    /// The output directory cannot be generated into (a file, a `.git` link, foreign files).
    Out(Vec<String>),
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let path = &args.rpg;
    let result = check_rpg(path, args.out.as_deref());
    if args.json {
        // An invalid RPG is the answer asked for here, not an error: the JSON says why.
        print!("{}", render::json(&json_report(&result))?);
        return Ok(if result.is_ok() {
            exit::OK
        } else {
            exit::BAD_INPUT
        });
    }
    let valid = result.map_err(|invalid| CliError::bad_input(render::invalid(path, &invalid)))?;
    warn_all(&valid);
    print!("{}", render::valid(path, &valid));
    Ok(exit::OK)
}

/// Loads and validates the RPG a command works on, logging its warnings; any problem is the
/// user's (exit 2).
pub(crate) fn load_valid(path: &Path) -> Result<ValidRpg, CliError> {
    let valid = check_rpg(path, None)
        .map_err(|invalid| CliError::bad_input(render::invalid(path, &invalid)))?;
    warn_all(&valid);
    Ok(valid)
}

fn warn_all(valid: &ValidRpg) {
    for warning in valid.warnings() {
        tracing::warn!("{warning}");
    }
}

/// Loads and validates `path`, and with `out`, checks that the RPG can be generated there.
fn check_rpg(path: &Path, out: Option<&Path>) -> Result<ValidRpg, Invalid> {
    let rpg = rpg::load_file(path).map_err(Invalid::Load)?;
    let valid = rpg::validate(rpg).map_err(Invalid::Rpg)?;
    if let Some(out) = out {
        rpg::check_output_paths(valid.rpg(), out, crate::layout::ENGINE_FILES)
            .map_err(Invalid::Rpg)?;
        let problems = engine::outdir::problems(out);
        if !problems.is_empty() {
            return Err(Invalid::Out(problems));
        }
    }
    Ok(valid)
}

/// `validate --json`: the same outcome as the text, with one entry per problem rather than
/// one multi-line message.
fn json_report(result: &Result<ValidRpg, Invalid>) -> serde_json::Value {
    let errors: Vec<String> = match result {
        Ok(valid) => {
            return serde_json::json!({
                "valid": true,
                "nodes": valid.rpg().nodes.len(),
                "errors": [],
                "warnings": valid.warnings().iter().map(|w| w.0.clone()).collect::<Vec<_>>(),
            });
        }
        Err(Invalid::Load(rpg::LoadError::Format { problems, .. })) => problems.clone(),
        Err(Invalid::Load(e)) => vec![e.to_string()],
        Err(Invalid::Rpg(errors)) => errors.iter().map(|e| e.to_string()).collect(),
        Err(Invalid::Out(problems)) => problems.clone(),
    };
    serde_json::json!({"valid": false, "errors": errors, "warnings": []})
}

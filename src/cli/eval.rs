//! `zerorepo eval`: a generated repository measured by hidden reference tests, in the sandbox.

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use super::error::CliError;
use super::render;
use super::sandbox_args::SandboxArgs;
use crate::eval::{self, EvalError, Reference};
use crate::exit;

/// Measure a generated repository with reference tests it never saw, run in the sandbox.
///
/// Copies OUT to a scratch directory (OUT is never changed), puts DIR/tests beside it, runs
/// each reference file in the sandbox, and reports pass rates overall, per subgraph, per node
/// (with its generation status) and per file. Exit codes: 0 the evaluation ran (whatever the
/// pass rate), 1 the sandbox failed, 2 bad input, 130 interrupted.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// An output directory of `zerorepo generate`.
    out: PathBuf,
    /// The reference: a directory with `tests/test_<module>.py`, and optionally select.txt, one
    /// pytest node id per line (`test_x.py` or `test_x.py::Class`): then only those run and count.
    #[arg(long, value_name = "DIR")]
    reference: PathBuf,
    /// Read the RPG from this file instead of OUT (docs/rpg.json or .zerorepo/rpg.json).
    #[arg(long, value_name = "PATH")]
    rpg: Option<PathBuf>,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Print the evaluation as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: Args) -> Result<u8, CliError> {
    // The input is checked before a sandbox is set up.
    let reference = Reference::load(&args.out, &args.reference, args.rpg.as_deref())?;
    let runner = args.sandbox.runner()?;
    let cancel = CancellationToken::new();
    let on_ctrl_c = tokio::spawn(stop_on_ctrl_c(cancel.clone()));
    let evaluated = eval::evaluate(&reference, runner.as_ref(), &cancel).await;
    on_ctrl_c.abort();
    let evaluation = match evaluated {
        Err(EvalError::Interrupted) => {
            eprint!("{}", render::eval_interrupted());
            return Ok(exit::INTERRUPTED);
        }
        other => other.map_err(|e| CliError::from(e).context("evaluation stopped"))?,
    };
    if args.json {
        print!("{}", render::json(&evaluation)?);
    } else {
        // Test reasons are the generated code's own exception messages.
        print!("{}", render::terminal(&render::eval(&evaluation)));
    }
    Ok(exit::OK)
}

/// First Ctrl-C: stop the file that is running, release the sandbox, remove the scratch copy,
/// exit 130. A second one exits at once (the sandbox dies with its parent).
async fn stop_on_ctrl_c(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(i32::from(exit::INTERRUPTED));
    }
}

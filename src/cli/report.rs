//! `zerorepo report`: where an output directory's generation report is, and opening it.

use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::exit;
use crate::layout::{REPORT, REPORT_HTML};

/// Print the path of a generated repository's HTML report (docs/generation_report.html, a
/// self-contained page: the plan drawn with each node's status, a timeline, tokens and time
/// per node, failures and diagnoses, the validation); `--open` opens it in a browser.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The output directory of `zerorepo generate`.
    dir: PathBuf,
    /// Also open the page with the desktop's opener (xdg-open, or open on macOS) when there
    /// is one; without one, the path is printed and that is all.
    #[arg(long)]
    open: bool,
    /// Print both reports' paths as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Paths {
    html: PathBuf,
    markdown: PathBuf,
}

pub(crate) fn run(args: Args) -> Result<u8, CliError> {
    let html = args.dir.join(REPORT_HTML);
    if !html.is_file() {
        return Err(CliError::bad_input(format!(
            "{} has no {REPORT_HTML}: a report is written when `zerorepo generate` assembles \
             the repository (run it, or run it again to finish an interrupted run)",
            args.dir.display()
        )));
    }
    let html = html.canonicalize().unwrap_or(html);
    let paths = Paths {
        markdown: html.with_file_name(std::path::Path::new(REPORT).file_name().unwrap_or_default()),
        html,
    };
    if args.json {
        print!("{}", render::json(&paths)?);
    } else {
        println!("{}", paths.html.display());
    }
    if args.open {
        open(&paths.html);
    }
    Ok(exit::OK)
}

/// Hands the page to the desktop's opener; says so on stderr when there is none or it fails,
/// since the path is already printed.
fn open(page: &std::path::Path) {
    let opener = ["xdg-open", "open"]
        .into_iter()
        .find_map(crate::programs::on_path);
    let Some(opener) = opener else {
        eprintln!("no browser opener (xdg-open) found: open the path above yourself");
        return;
    };
    let status = std::process::Command::new(&opener)
        .arg(page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!(
            "{} could not open the page: open the path above yourself",
            opener.display()
        );
    }
}

//! `zerorepo rpg`: commands on plans themselves; `rpg extract` writes a plan from existing
//! Python source (the reading is `rpg::extract`, pure; this module finds the files, resolves
//! the flags and writes the plan).

use std::path::{Component, Path, PathBuf};

use clap::Subcommand;

use super::error::{CliError, UserFault};
use super::render;
use crate::exit;
use crate::rpg::extract::{self, ExtractError, ExtractOptions};

/// The `rpg` commands (a group: its help is on `cli::Command::Rpg`).
#[derive(Subcommand)]
pub(crate) enum Command {
    Extract(ExtractArgs),
}

/// Write an RPG from existing Python source, parsed with tree-sitter and never run: package
/// and module composites, a leaf per public top-level function and class (signature,
/// docstring, doctest examples), `function_call` and `inherits` edges from the calls and base
/// classes between them, one subgraph per module. What cannot be planned (no docstring, a
/// function in `__init__.py`, a module the validator refuses, an edge closing a cycle) is
/// listed on stderr (or in `--json`). Exit 2 on bad input.
#[derive(clap::Args)]
pub(crate) struct ExtractArgs {
    /// A directory holding packages (directories with `__init__.py`) and top-level modules,
    /// or a package directory itself.
    src: PathBuf,
    /// Only this module (dotted, `pkg.mod`, or a path, `pkg/mod.py`); a package means every
    /// module beneath it. Repeatable; default: every module found.
    #[arg(long = "module", value_name = "M")]
    modules: Vec<String>,
    /// Only the leaf of this name (a function or class of the selected modules) and the
    /// leaves it calls, at any depth. Repeatable; default: every leaf.
    #[arg(long = "function", value_name = "NAME")]
    functions: Vec<String>,
    /// Drop doctest examples (`>>>` lines and their output) instead of moving them into the
    /// nodes' `examples`.
    #[arg(long)]
    no_examples: bool,
    /// The reference tests' directory, recorded as `metadata.reference_tests` (relative to
    /// the plan's directory, unless the two share nothing but the root).
    #[arg(long, value_name = "DIR")]
    tests: Option<PathBuf>,
    /// Where to write the plan.
    #[arg(long, value_name = "PATH")]
    out: PathBuf,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

impl UserFault for ExtractError {
    fn is_user_fault(&self) -> bool {
        self.is_bad_input()
    }
}

pub(crate) fn run(command: Command) -> Result<u8, CliError> {
    match command {
        Command::Extract(args) => run_extract(args),
    }
}

fn run_extract(args: ExtractArgs) -> Result<u8, CliError> {
    if !args.src.is_dir() {
        return Err(CliError::bad_input(format!(
            "{}: not a directory",
            args.src.display()
        )));
    }
    let reference_tests = match &args.tests {
        Some(tests) => Some(recorded_tests(tests, &args.out)?),
        None => None,
    };
    let sources = extract::read_sources(&args.src)?;
    let modules = args
        .modules
        .iter()
        .map(|m| module_name(&args.src, m))
        .collect();
    let options = ExtractOptions {
        modules,
        examples: !args.no_examples,
        reference_tests,
        project_name: None,
        functions: args.functions,
    };
    let done = extract::extract(&sources, &options)?;
    let text = serde_json::to_string_pretty(&done.rpg)? + "\n";
    crate::fsutil::write_atomic(&args.out, text.as_bytes())
        .map_err(|e| CliError::Failed(anyhow::Error::new(e).context("writing the plan")))?;
    if args.json {
        let report = serde_json::json!({
            "out": args.out,
            "nodes": done.rpg.nodes.len(),
            "summary": done.summary,
        });
        print!("{}", render::json(&report)?);
    } else {
        eprint!("{}", render::extracted(&args.out, &done.summary));
    }
    Ok(exit::OK)
}

/// A `--module` value as a dotted name: `pkg/mod.py`, `SRC/pkg/mod.py` and `pkg.mod` all
/// give `pkg.mod` (with the package's own name first when SRC is a package directory).
fn module_name(src: &Path, given: &str) -> String {
    if !given.contains('/') && !given.ends_with(".py") {
        return given.to_string();
    }
    let path = Path::new(given);
    let inside = path.strip_prefix(src).unwrap_or(path);
    let text = inside.to_string_lossy();
    let text = text.trim_end_matches(".py").trim_end_matches("/__init__");
    let dotted = text.trim_matches('/').replace('/', ".");
    let package = src
        .join("__init__.py")
        .is_file()
        .then(|| src.canonicalize().ok())
        .flatten()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    match package {
        Some(package) if dotted != package && !dotted.starts_with(&format!("{package}.")) => {
            format!("{package}.{dotted}")
        }
        _ => dotted,
    }
}

/// The tests directory as the plan records it: relative to the plan's own directory.
fn recorded_tests(tests: &Path, out: &Path) -> Result<String, CliError> {
    let tests = tests
        .canonicalize()
        .ok()
        .filter(|t| t.is_dir())
        .ok_or_else(|| {
            CliError::bad_input(format!("--tests {}: not a directory", tests.display()))
        })?;
    let plan_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let plan_dir = plan_dir
        .canonicalize()
        .map_err(|e| CliError::bad_input(format!("--out {}: {e}", out.display())))?;
    // Sharing no more than the root, the two do not move together: the absolute path is
    // the one that stays true.
    let shared = tests
        .components()
        .zip(plan_dir.components())
        .take_while(|(a, b)| a == b)
        .count();
    let recorded = match shared > 1 {
        true => relative(&tests, &plan_dir),
        false => tests,
    };
    Ok(recorded.to_string_lossy().into_owned())
}

/// `to` relative to `from` (both absolute), with `..` where it climbs.
fn relative(to: &Path, from: &Path) -> PathBuf {
    let to: Vec<Component> = to.components().collect();
    let from: Vec<Component> = from.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_directories_are_recorded_relative_to_the_plan() {
        assert_eq!(
            relative(Path::new("/a/b/tests"), Path::new("/a/plans")),
            PathBuf::from("../b/tests")
        );
        assert_eq!(
            relative(Path::new("/a/tests"), Path::new("/a")),
            PathBuf::from("tests")
        );
        assert_eq!(
            relative(Path::new("/a"), Path::new("/a")),
            PathBuf::from(".")
        );
    }

    #[test]
    fn module_paths_and_dotted_names_give_one_dotted_name() {
        let src = Path::new("/nonexistent/src");
        assert_eq!(module_name(src, "pkg.mod"), "pkg.mod");
        assert_eq!(module_name(src, "pkg/mod.py"), "pkg.mod");
        assert_eq!(
            module_name(src, "/nonexistent/src/pkg/sub/__init__.py"),
            "pkg.sub"
        );
    }
}

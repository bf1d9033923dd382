//! Error-first command detection: which stacks a repository uses, the commands that build,
//! test and lint it, and the one *diagnostic command* to run first.
//!
//! The strategy is "error-first": before reading files or editing anything, run the command
//! that fails loudest and earliest, and let its real errors pick the next change; then re-run
//! the same command to confirm the fix. This module owns only the choice of commands; running
//! them belongs to the callers (`sandbox` and whatever drives it).
//!
//! It is split like the rest of the crate: [`scan`] is the only I/O (it lists the directory,
//! bounded in depth, and reads a few marker files), and [`detect_from_files`] is the pure
//! core that turns the facts in [`Files`] into [`Commands`]. [`detect`] is the two together.
//!
//! One [`Commands`] is returned per stack found, in the order Rust, Go, Node, Python (the
//! order of [`Stack`]'s variants): compiled stacks come first because their build or test
//! command type-checks the whole tree, so their errors are the most blocking; Node's `build`
//! script is usually a compiler too; Python errors only surface when code is imported or
//! tested. A caller that wants a single command takes the first entry's
//! `diagnostic_command`. A directory with no recognised stack gives an empty list, not an
//! error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Directories more than this many levels below the root are not listed.
const MAX_DEPTH: usize = 6;

/// Python test files (`test_*.py`, `*_test.py`) count only this many directories deep.
const PYTHON_TEST_DEPTH: usize = 2;

/// Directories never listed: dependencies, build output, caches, Go fixtures. Names starting
/// with `.` (`.git`, `.venv`, `.tox`, ...) are skipped as well.
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "vendor",
    "__pycache__",
    "venv",
    "site-packages",
    "testdata",
];

/// Text of the `test` script that `npm init` writes; a script containing it is no test.
const NPM_PLACEHOLDER: &str = "Error: no test specified";

const CARGO_TEST: &str = "cargo test";
const CARGO_BUILD: &str = "cargo build";
const CARGO_CLIPPY: &str = "cargo clippy";
const GO_TEST: &str = "go test ./...";
const GO_BUILD: &str = "go build ./...";
const GO_VET: &str = "go vet ./...";
const NPM_BUILD: &str = "npm run build";
const NPM_TEST: &str = "npm test";
const NPM_LINT: &str = "npm run lint";
/// Node's diagnostic when `package.json` has no build, test or lint script: it exits
/// non-zero when declared dependencies are missing or invalid, writes nothing and needs no
/// network (unlike `npm install --dry-run`, which resolves against the registry).
const NPM_LS: &str = "npm ls";
const PYTEST: &str = "python -m pytest -q";
const COMPILEALL: &str = "python -m compileall -q .";
const RUFF: &str = "ruff check .";

/// A technology stack this module recognises. The variant order is the order of
/// [`detect`]'s result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stack {
    /// `Cargo.toml` at the root.
    Rust,
    /// `go.mod` at the root.
    Go,
    /// `package.json` at the root.
    Node,
    /// `pyproject.toml`, `setup.py`, `setup.cfg`, `requirements.txt`, or `*.py` at the root
    /// or under `src/` (two levels).
    Python,
}

/// The commands for one stack, each a shell command line run from the repository root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Commands {
    pub stack: Stack,
    /// Runs the test suite; `None` when the stack has no tests to run.
    pub primary_test: Option<String>,
    pub build: Option<String>,
    pub lint: Option<String>,
    /// The command to run first: the one whose errors say most about the repository's health.
    pub diagnostic_command: String,
}

/// What [`scan`] found in a repository: the only input of [`detect_from_files`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Files {
    /// `Cargo.toml` at the root.
    pub cargo_toml: bool,
    /// A `.rs` file under a `tests/` directory, or `#[test]`, `#[cfg(test)]` or
    /// `#[tokio::test` in a `.rs` file under a `src/` directory.
    pub rust_tests: bool,
    /// `go.mod` at the root.
    pub go_mod: bool,
    /// Any `*_test.go` file.
    pub go_tests: bool,
    /// `Some` when `package.json` is at the root: its string-valued `scripts`, by name.
    pub package_scripts: Option<BTreeMap<String, String>>,
    /// Any of the Python markers listed on [`Stack::Python`].
    pub python: bool,
    /// A `tests/` directory at the root, `test_*.py` or `*_test.py` at most two directories
    /// deep, `conftest.py` or `pytest.ini` at the root, or pytest configuration in
    /// `pyproject.toml` (`[tool.pytest...]`), `setup.cfg` (`[tool:pytest]`) or `tox.ini`
    /// (`[pytest]`).
    pub python_tests: bool,
    /// `ruff.toml` or `.ruff.toml` at the root, or `[tool.ruff...]` in `pyproject.toml`.
    pub ruff_config: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: invalid JSON: {source}")]
    PackageJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {message}")]
    PackageJsonShape {
        path: PathBuf,
        message: &'static str,
    },
}

/// Detects the stacks of the repository at `repo` and their commands (see the module doc
/// for the order). Reads the directory and a few marker files; runs nothing.
pub fn detect(repo: &Path) -> Result<Vec<Commands>, DetectError> {
    Ok(detect_from_files(&scan(repo)?))
}

/// The pure core of [`detect`]: one [`Commands`] per stack present in `files`, ordered Rust,
/// Go, Node, Python.
pub(crate) fn detect_from_files(files: &Files) -> Vec<Commands> {
    let mut found = Vec::new();
    if files.cargo_toml {
        found.push(rust_commands(files.rust_tests));
    }
    if files.go_mod {
        found.push(go_commands(files.go_tests));
    }
    if let Some(scripts) = &files.package_scripts {
        found.push(node_commands(scripts));
    }
    if files.python {
        found.push(python_commands(files.python_tests, files.ruff_config));
    }
    found
}

fn rust_commands(has_tests: bool) -> Commands {
    Commands {
        stack: Stack::Rust,
        primary_test: Some(CARGO_TEST.to_string()),
        build: Some(CARGO_BUILD.to_string()),
        lint: Some(CARGO_CLIPPY.to_string()),
        diagnostic_command: if has_tests { CARGO_TEST } else { CARGO_BUILD }.to_string(),
    }
}

fn go_commands(has_tests: bool) -> Commands {
    Commands {
        stack: Stack::Go,
        primary_test: Some(GO_TEST.to_string()),
        build: Some(GO_BUILD.to_string()),
        lint: Some(GO_VET.to_string()),
        diagnostic_command: if has_tests { GO_TEST } else { GO_BUILD }.to_string(),
    }
}

/// Diagnostic: build, else test, else lint, else [`NPM_LS`].
fn node_commands(scripts: &BTreeMap<String, String>) -> Commands {
    let command_for = |script: &str, command: &str| {
        scripts
            .get(script)
            .is_some_and(|body| is_real_script(body))
            .then(|| command.to_string())
    };
    let build = command_for("build", NPM_BUILD);
    let primary_test = command_for("test", NPM_TEST);
    let lint = command_for("lint", NPM_LINT);
    let diagnostic_command = build
        .as_ref()
        .or(primary_test.as_ref())
        .or(lint.as_ref())
        .cloned()
        .unwrap_or_else(|| NPM_LS.to_string());
    Commands {
        stack: Stack::Node,
        primary_test,
        build,
        lint,
        diagnostic_command,
    }
}

/// An empty script, or npm's placeholder test script, does nothing worth running.
fn is_real_script(body: &str) -> bool {
    !body.trim().is_empty() && !body.contains(NPM_PLACEHOLDER)
}

fn python_commands(has_tests: bool, has_ruff: bool) -> Commands {
    let primary_test = has_tests.then(|| PYTEST.to_string());
    Commands {
        stack: Stack::Python,
        diagnostic_command: primary_test
            .clone()
            .unwrap_or_else(|| COMPILEALL.to_string()),
        primary_test,
        build: Some(COMPILEALL.to_string()),
        lint: has_ruff.then(|| RUFF.to_string()),
    }
}

/// The I/O half of [`detect`]: lists `repo` (at most [`MAX_DEPTH`] levels, skipping hidden
/// and dependency directories, following no symlinks) and reads the marker files it needs.
pub fn scan(repo: &Path) -> Result<Files, DetectError> {
    let mut tree = Tree::default();
    walk(repo, repo, 0, &mut tree)?;

    let cargo_toml = repo.join("Cargo.toml").is_file();
    let rust_tests = cargo_toml && (tree.rust_test_dir || any_rust_test(&tree.rust_sources)?);
    let go_mod = repo.join("go.mod").is_file();

    let package_json = repo.join("package.json");
    let package_scripts = match read_optional(&package_json)? {
        Some(text) => Some(parse_package_scripts(&text, &package_json)?),
        None => None,
    };

    let pyproject = read_optional(&repo.join("pyproject.toml"))?;
    let setup_cfg = read_optional(&repo.join("setup.cfg"))?;
    let python = pyproject.is_some()
        || setup_cfg.is_some()
        || repo.join("setup.py").is_file()
        || repo.join("requirements.txt").is_file()
        || tree.python_source;
    let python_tests = python
        && (repo.join("tests").is_dir()
            || tree.python_test_file
            || repo.join("conftest.py").is_file()
            || repo.join("pytest.ini").is_file()
            || pyproject
                .as_deref()
                .is_some_and(|text| has_section(text, "tool.pytest"))
            || setup_cfg
                .as_deref()
                .is_some_and(|text| has_section(text, "tool:pytest"))
            || read_optional(&repo.join("tox.ini"))?
                .as_deref()
                .is_some_and(|text| has_section(text, "pytest")));
    let ruff_config = python
        && (repo.join("ruff.toml").is_file()
            || repo.join(".ruff.toml").is_file()
            || pyproject
                .as_deref()
                .is_some_and(|text| has_section(text, "tool.ruff")));

    Ok(Files {
        cargo_toml,
        rust_tests,
        go_mod,
        go_tests: tree.go_test_file,
        package_scripts,
        python,
        python_tests,
        ruff_config,
    })
}

/// Facts collected while listing the repository.
#[derive(Debug, Default)]
struct Tree {
    /// `*.py` at the root, or under `src/` at most two directories deep.
    python_source: bool,
    /// `test_*.py` or `*_test.py` at most [`PYTHON_TEST_DEPTH`] directories deep.
    python_test_file: bool,
    go_test_file: bool,
    /// A `.rs` file with a `tests` directory in its path.
    rust_test_dir: bool,
    /// `.rs` files with a `src` directory in their path (and no `tests` one).
    rust_sources: Vec<PathBuf>,
}

/// Lists `dir` (which is `depth` levels below `root`) into `tree`, recursing into
/// subdirectories up to [`MAX_DEPTH`].
fn walk(root: &Path, dir: &Path, depth: usize, tree: &mut Tree) -> Result<(), DetectError> {
    let entries = std::fs::read_dir(dir).map_err(|source| io_error(dir, source))?;
    for entry in entries {
        let entry = entry.map_err(|source| io_error(dir, source))?;
        let path = entry.path();
        let file_type = entry
            .file_type()
            .map_err(|source| io_error(&path, source))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if file_type.is_dir() {
            let skipped = name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref());
            if depth < MAX_DEPTH && !skipped {
                walk(root, &path, depth + 1, tree)?;
            }
        } else if file_type.is_file() {
            note_file(root, &path, &name, depth, tree);
        }
    }
    Ok(())
}

/// Records what the file `name` at `path` (`depth` directories below `root`) says.
fn note_file(root: &Path, path: &Path, name: &str, depth: usize, tree: &mut Tree) {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let dirs: Vec<&str> = rel
        .parent()
        .map(|parent| {
            parent
                .components()
                .filter_map(|c| c.as_os_str().to_str())
                .collect()
        })
        .unwrap_or_default();
    if let Some(stem) = name.strip_suffix(".py") {
        let under_src = dirs.first() == Some(&"src") && depth <= 2;
        if depth == 0 || under_src {
            tree.python_source = true;
        }
        let test_name = stem.starts_with("test_") || stem.ends_with("_test");
        if test_name && depth <= PYTHON_TEST_DEPTH {
            tree.python_test_file = true;
        }
    } else if name.ends_with("_test.go") {
        tree.go_test_file = true;
    } else if name.ends_with(".rs") {
        if dirs.contains(&"tests") {
            tree.rust_test_dir = true;
        } else if dirs.contains(&"src") {
            tree.rust_sources.push(path.to_path_buf());
        }
    }
}

/// Whether any of `sources` holds a unit test; stops at the first that does.
fn any_rust_test(sources: &[PathBuf]) -> Result<bool, DetectError> {
    for path in sources {
        let bytes = std::fs::read(path).map_err(|source| io_error(path, source))?;
        let text = String::from_utf8_lossy(&bytes);
        if ["#[test]", "#[cfg(test)]", "#[tokio::test"]
            .iter()
            .any(|marker| text.contains(marker))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The file's text (lossily decoded), or `None` when it does not exist. The repository may
/// be hostile: the file is read beneath its directory, and a link or a FIFO in its place
/// (`package.json -> /root/.ssh/id_rsa`) counts as absent, never followed or waited on.
fn read_optional(path: &Path) -> Result<Option<String>, DetectError> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Ok(None);
    };
    match crate::fsutil::beneath::read(dir, name) {
        Ok(bytes) => Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned())),
        Err(err) if err.kind() == std::io::ErrorKind::InvalidInput => {
            tracing::warn!("{}: {err}; taken as absent", path.display());
            Ok(None)
        }
        Err(source) => Err(io_error(path, source)),
    }
}

fn io_error(path: &Path, source: std::io::Error) -> DetectError {
    DetectError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether a TOML or INI text has a section header `[name]` or `[name.<sub>]`. A line scan,
/// not a parser: enough to spot `[tool.pytest.ini_options]`, `[tool.ruff.lint]`, `[tool:pytest]`.
fn has_section(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let Some(rest) = line.trim().strip_prefix('[') else {
            return false;
        };
        let Some((header, _)) = rest.split_once(']') else {
            return false;
        };
        let header = header.trim();
        header == name
            || header
                .strip_prefix(name)
                .is_some_and(|sub| sub.starts_with('.'))
    })
}

/// The string-valued `scripts` of a `package.json` text; `path` only labels errors.
fn parse_package_scripts(text: &str, path: &Path) -> Result<BTreeMap<String, String>, DetectError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|source| DetectError::PackageJson {
            path: path.to_path_buf(),
            source,
        })?;
    let shape_error = |message| DetectError::PackageJsonShape {
        path: path.to_path_buf(),
        message,
    };
    let object = value
        .as_object()
        .ok_or_else(|| shape_error("the top level is not a JSON object"))?;
    let scripts = match object.get("scripts") {
        None | Some(serde_json::Value::Null) => return Ok(BTreeMap::new()),
        Some(serde_json::Value::Object(scripts)) => scripts,
        Some(_) => return Err(shape_error("`scripts` is not a JSON object")),
    };
    Ok(scripts
        .iter()
        .filter_map(|(name, body)| body.as_str().map(|body| (name.clone(), body.to_string())))
        .collect())
}

#[cfg(test)]
mod tests;

//! The paths a plan may write: inside the output by construction, names every file system
//! takes, no hidden or engine-owned place, nothing packaging tools run or read as
//! configuration (assembly runs `pip install -e .` on the output, so a node writing `setup.py`
//! would run a plan's code on the host), no module that shadows the standard library, and,
//! checked against the real directory, no symlink out of it.

use std::path::{Component, Path};

use super::super::model::{Node, Rpg};
use super::{MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_COMPONENTS, RpgError, TEST_RUNNER_MODULES};
use crate::python::{is_bidi_control, is_identifier};

/// Why `path` may not be written by a plan because it lies in the generated tests' directory.
pub(super) fn tests_dir_problem(path: &str) -> Option<&'static str> {
    let (first, rest) = path.split_once('/').unwrap_or((path, ""));
    (first.eq_ignore_ascii_case("tests")).then_some(if rest.is_empty() {
        "is the `tests` directory, where the generated tests are written; a plan may not write there"
    } else {
        "lies under `tests/`, where the generated tests are written (`tests/test_<module>.py`); a plan module there would collide with them"
    })
}

/// The module `path` would shadow, and what that module is, if it would: the path's
/// top-level name at an import root (the repository root, and `src/`, both on `sys.path` in
/// the sandbox) is a module of the standard library or one the test runner imports.
/// `src/json.py`, `json/x.py` and `linecache.py` do; `src/pkg/json.py` does not (`import json`
/// never finds it).
pub(crate) fn shadowed_module(path: &str) -> Option<(&str, &'static str)> {
    let parts: Vec<&str> = path.split('/').collect();
    let under_src = parts.len() > 1 && parts[0] == "src";
    let roots = std::iter::once(0).chain(under_src.then_some(1));
    for at in roots {
        let part = parts[at];
        let name = if at + 1 == parts.len() {
            part.strip_suffix(".py").unwrap_or(part)
        } else {
            part
        };
        if crate::python::is_stdlib(name) {
            return Some((name, "the standard-library module"));
        }
        if TEST_RUNNER_MODULES.contains(&name) {
            return Some((name, "the test runner's module"));
        }
    }
    None
}

/// Why `path` cannot be a file or directory the engine writes, if it cannot. A path must stay
/// inside the output repository by construction, be a name every file system takes, keep out
/// of hidden and engine-owned places, and name nothing packaging tools run or read
/// ([`reserved_path`]).
pub(crate) fn file_path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("is empty");
    }
    if path.contains('\0') {
        return Some("contains a NUL byte");
    }
    if path.chars().any(char::is_control) {
        return Some("contains a control character");
    }
    if path.chars().any(is_bidi_control) {
        return Some(
            "contains a Unicode bidirectional control character, which reorders the text shown around it",
        );
    }
    if path.contains('\\') {
        return Some("contains a backslash (use `/`)");
    }
    if path.len() > MAX_PATH_BYTES {
        return Some("is longer than 1024 bytes");
    }
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && bytes.get(2).is_none_or(|&c| c == b'/');
    if path.starts_with('/') || drive {
        return Some("is absolute (it must be relative to the output directory)");
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts.contains(&"..") {
        return Some("contains `..`");
    }
    if parts.len() > MAX_PATH_COMPONENTS {
        return Some("has more than 32 components (packages nested too deep)");
    }
    for part in &parts {
        let problem = if part.is_empty() {
            "has an empty component (`//`, or a `/` at the end of a file)"
        } else if *part == "." {
            "has a `.` component (write the path without `./`)"
        } else if part.starts_with('.') {
            "has a component starting with `.`: hidden files and directories such as `.git`, `.github`, `.gitignore` and the engine's own `.zerorepo` are off limits"
        } else if part.contains(':') {
            "has a component containing `:` (a drive, URL or stream name)"
        } else if part.len() > MAX_NAME_BYTES {
            "has a component longer than 255 bytes"
        } else {
            continue;
        };
        return Some(problem);
    }
    // A Python file and the packages above it are imported by name, and the names are
    // written into generated code (`from .stats import mean`): each must be an identifier.
    if let Some(stem) = path.strip_suffix(".py")
        && stem.split('/').any(|part| !is_identifier(part))
    {
        return Some(
            "has a directory or module name that is not a Python identifier, or is a keyword (Python could not import it)",
        );
    }
    reserved_path(path)
}

/// File names no plan may write at any depth: packaging tools and Python run or read them.
pub(super) const RESERVED_NAMES: &[(&str, &str)] = &[
    (
        "setup.py",
        "names `setup.py`, which `pip install -e .` runs when the repository is assembled; a plan may not write it",
    ),
    (
        "setup.cfg",
        "names `setup.cfg`, which setuptools reads as configuration when the repository is installed; a plan may not write it",
    ),
    (
        "pyproject.toml",
        "names `pyproject.toml`, which pip reads to install the repository (assembly writes the root one); a plan may not write it",
    ),
    (
        "sitecustomize.py",
        "names `sitecustomize.py`, which Python runs at start-up when it can import it; a plan may not write it",
    ),
    (
        "usercustomize.py",
        "names `usercustomize.py`, which Python runs at start-up when it can import it; a plan may not write it",
    ),
    (
        "MANIFEST.in",
        "names `MANIFEST.in`, which setuptools reads as configuration when the repository is installed; a plan may not write it",
    ),
];

/// Paths from the repository root that assembly writes (or pytest runs) at fixed places.
const RESERVED_AT_ROOT: &[(&str, &str)] = &[
    (
        "conftest.py",
        "names the root `conftest.py`, which pytest runs before any test when the repository is assembled; a plan may not write it",
    ),
    (
        "README.md",
        "names `README.md`, which assembly writes; a plan may not write it",
    ),
    (
        "requirements.txt",
        "names `requirements.txt`, which assembly writes; a plan may not write it",
    ),
    (
        "requirements-dev.txt",
        "names `requirements-dev.txt`, which assembly writes; a plan may not write it",
    ),
    (
        "test_results.xml",
        "names `test_results.xml`, which assembly writes; a plan may not write it",
    ),
    (
        "docs/rpg.json",
        "names `docs/rpg.json`, which assembly writes; a plan may not write it",
    ),
    (
        "docs/generation_report.md",
        "names `docs/generation_report.md`, which assembly writes; a plan may not write it",
    ),
    (
        "docs/generation_checkpoint.json",
        "names `docs/generation_checkpoint.json`, the engine's checkpoint; a plan may not write it",
    ),
];

/// Why no plan may write `path` (relative to the output root, `/`-separated), if it may not:
/// it, or a directory it lies in, is a file that packaging tools execute or read as
/// configuration (`setup.py`, `setup.cfg`, `pyproject.toml`, `sitecustomize.py`,
/// `usercustomize.py`, `MANIFEST.in`, `*.pth`, the root `conftest.py`), or one that assembly
/// writes itself (`README.md`, `requirements*.txt`, `docs/...`, `test_results.xml`).
///
/// Names compare without regard to ASCII case, as they do on the file systems of macOS and
/// Windows, where `Setup.py` is `setup.py`. Hidden files (`.gitignore`, `.zerorepo/`) are
/// refused by [`file_path_problem`] already.
pub(crate) fn reserved_path(path: &str) -> Option<&'static str> {
    let mut prefix_end = 0;
    for part in path.split('/') {
        prefix_end += part.len();
        let prefix = &path[..prefix_end];
        prefix_end += 1; // the `/` after this part
        let named = |list: &[(&str, &'static str)], text: &str| {
            list.iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(text))
                .map(|&(_, why)| why)
        };
        if let Some(why) = named(RESERVED_NAMES, part).or_else(|| named(RESERVED_AT_ROOT, prefix)) {
            return Some(why);
        }
        let pth = part.len() >= 4
            && part.is_char_boundary(part.len() - 4)
            && part[part.len() - 4..].eq_ignore_ascii_case(".pth");
        if pth {
            return Some(
                "names a `.pth` file, whose lines Python's site module runs at start-up; a plan may not write one",
            );
        }
    }
    None
}

/// Checks, against the real output directory, that no node's path (nor any of `extra`, the
/// engine's own files) escapes it through a symlink (a link inside `out` pointing outside).
/// Missing components are fine: they will be created as plain directories.
pub(crate) fn check_output_paths(
    rpg: &Rpg,
    out: &Path,
    extra: &[&str],
) -> Result<(), Vec<RpgError>> {
    let Ok(root) = out.canonicalize() else {
        return Ok(()); // the directory does not exist yet: nothing can be a link
    };
    let mut errors = Vec::new();
    let mut paths: Vec<(&Node, String)> = rpg
        .nodes
        .iter()
        .filter_map(|n| n.file_path.clone().map(|p| (n, p)))
        .collect();
    paths.extend(
        rpg.nodes
            .iter()
            .filter_map(|n| n.test_file().map(|p| (n, p))),
    );
    let engine = Node {
        id: "(engine state)".into(),
        ..rpg.nodes[0].clone()
    };
    paths.extend(extra.iter().map(|p| (&engine, p.to_string())));
    for (node, path) in paths {
        let mut at = root.clone();
        for part in Path::new(&path).components() {
            let Component::Normal(part) = part else {
                continue;
            };
            at.push(part);
            let Ok(meta) = std::fs::symlink_metadata(&at) else {
                break;
            };
            if meta.file_type().is_symlink() {
                let escapes = at
                    .canonicalize()
                    .map_or(true, |real| !real.starts_with(&root));
                if escapes {
                    errors.push(RpgError::SymlinkEscape {
                        node: node.id.clone(),
                        path: path.clone(),
                        link: at.clone(),
                    });
                }
                break;
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

//! The code corpus file (`fixtures/code-corpus.toml`) and each request's folder, read into
//! typed requests. Parsing the TOML is pure; [`load`] then reads each request's folder
//! (`request.md`, `test_acceptance.py`, `reference.toml`) from beside the file, so a request
//! whose acceptance tests are missing is refused before anything runs.
//!
//! Every path a request names (the library's files, a plant's file, an edit's file) is
//! relative, made of plain components: it is joined beneath a fresh copy, never outside it.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::corpus::{Half, HalfChoice};

/// Why the corpus file or a request's folder was refused.
#[derive(Debug, thiserror::Error)]
pub enum CodeCorpusError {
    #[error("the code corpus file: {0}")]
    Syntax(String),
    #[error("library `{library}`: {problem}")]
    Library { library: String, problem: String },
    #[error("request `{request}`: {problem}")]
    Request { request: String, problem: String },
    #[error("no request named `{name}` in the code corpus (requests: {known})")]
    Unknown { name: String, known: String },
    #[error("request `{name}` is in the {actual} half, not the {asked} half")]
    OtherHalf {
        name: String,
        actual: &'static str,
        asked: &'static str,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One `[[library]]`: a pinned sdist and the files of it that make the repository.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Library {
    pub name: String,
    /// `NAME==VERSION`, the sdist fetched like the generation corpus's.
    pub pypi: String,
    pub sha256: String,
    /// Files or directories of the unpacked sdist (relative to its root), copied with the
    /// same relative paths: the repository the request is made on.
    pub files: Vec<String>,
    /// The library's own test files (relative paths in the repository): its suite.
    pub suite: Vec<String>,
    /// Tests of the suite that cannot pass outside an installed package (one that reads the
    /// package's installed metadata): pytest node ids, left out of every run.
    #[serde(default)]
    pub deselect: Vec<String>,
}

impl Library {
    /// `(package, version)` of the pin.
    pub fn pin(&self) -> Option<(&str, &str)> {
        self.pypi.split_once("==")
    }
}

/// What kind of change a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestKind {
    /// A new function, built from what the library has.
    Add,
    /// A change of behaviour; the library's tests that expect the old one must change too.
    Change,
    /// The fix of a bug the bench plants before the run.
    Fix,
}

impl RequestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Add => "add",
            RequestKind::Change => "change",
            RequestKind::Fix => "fix",
        }
    }
}

/// An exact replacement in one file: `search` must occur exactly once (an empty `search`
/// appends `replace` to the file, creating it when missing).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReferenceEdit {
    pub file: String,
    #[serde(default)]
    pub search: String,
    pub replace: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    name: String,
    library: String,
    half: String,
    kind: RequestKind,
    /// Whether the request's text shows an example of the expected result.
    examples: bool,
    #[serde(default)]
    plant: Option<ReferenceEdit>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    library: Vec<Library>,
    request: Vec<RawRequest>,
}

/// One request, its folder read.
#[derive(Debug, Clone)]
pub struct CodeRequest {
    pub name: String,
    pub library: Library,
    pub half: Half,
    pub kind: RequestKind,
    pub examples: bool,
    /// The bug planted before the run (`kind = "fix"` only).
    pub plant: Option<ReferenceEdit>,
    /// What the user types: `request.md`.
    pub text: String,
    /// The judge's tests, never shown to the model: `test_acceptance.py`.
    pub acceptance: String,
    /// The hand-written correct change, for `--self-check`: `reference.toml`.
    pub reference: Vec<ReferenceEdit>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReference {
    edit: Vec<ReferenceEdit>,
}

/// The corpus file's requests, each folder (`DIR/NAME` beside the file, `DIR` the file's
/// stem) read and checked.
pub fn load(path: &Path) -> Result<Vec<CodeRequest>, CodeCorpusError> {
    let text = read(path)?;
    let folder = path.with_extension("");
    let raw = parse(&text)?;
    raw.into_iter()
        .map(|(request, library)| {
            let dir = folder.join(&request.name);
            finish(request, library, &dir)
        })
        .collect()
}

fn read(path: &Path) -> Result<String, CodeCorpusError> {
    std::fs::read_to_string(path).map_err(|source| CodeCorpusError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The requests of the file's text, each with its library, checked but not yet read.
fn parse(text: &str) -> Result<Vec<(RawRequest, Library)>, CodeCorpusError> {
    let file: RawFile = toml::from_str(text).map_err(|e| CodeCorpusError::Syntax(e.to_string()))?;
    for library in &file.library {
        check_library(library)?;
    }
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for request in file.request {
        let bad = |problem: String| CodeCorpusError::Request {
            request: request.name.clone(),
            problem,
        };
        if !plain_name(&request.name) {
            return Err(bad("the name must be letters, digits, `-` and `_`".into()));
        }
        if !names.insert(request.name.clone()) {
            return Err(bad("the name is used twice".into()));
        }
        let library = file
            .library
            .iter()
            .find(|l| l.name == request.library)
            .cloned()
            .ok_or_else(|| bad(format!("no library `{}`", request.library)))?;
        if half(&request.half).is_none() {
            return Err(bad(format!("half `{}` is not dev or test", request.half)));
        }
        match (&request.plant, request.kind) {
            (None, RequestKind::Fix) => return Err(bad("a fix needs a `plant`".into())),
            (Some(_), RequestKind::Add | RequestKind::Change) => {
                return Err(bad("only a fix has a `plant`".into()));
            }
            (Some(plant), RequestKind::Fix)
                if plant.search.is_empty() || !relative(&plant.file) =>
            {
                return Err(bad(
                    "the plant needs a relative `file` and a `search`".into()
                ));
            }
            _ => {}
        }
        out.push((request, library));
    }
    Ok(out)
}

fn check_library(library: &Library) -> Result<(), CodeCorpusError> {
    let bad = |problem: &str| CodeCorpusError::Library {
        library: library.name.clone(),
        problem: problem.to_string(),
    };
    if library.pin().is_none() {
        return Err(bad("`pypi` must be NAME==VERSION"));
    }
    let hex = library.sha256.len() == 64 && library.sha256.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex {
        return Err(bad("`sha256` must be 64 hex digits"));
    }
    if library.files.is_empty() || library.suite.is_empty() {
        return Err(bad("`files` and `suite` must not be empty"));
    }
    let mut deselected = library
        .deselect
        .iter()
        .map(|d| d.split_once("::").map_or(d.as_str(), |(file, _)| file));
    let mut paths = library
        .files
        .iter()
        .chain(&library.suite)
        .map(String::as_str);
    if !paths.all(relative) || !deselected.all(relative) {
        return Err(bad("every path must be relative, without `..`"));
    }
    Ok(())
}

fn finish(
    request: RawRequest,
    library: Library,
    folder: &Path,
) -> Result<CodeRequest, CodeCorpusError> {
    let text = read(&folder.join("request.md"))?;
    let acceptance = read(&folder.join("test_acceptance.py"))?;
    let reference: RawReference =
        toml::from_str(&read(&folder.join("reference.toml"))?).map_err(|e| {
            CodeCorpusError::Request {
                request: request.name.clone(),
                problem: format!("reference.toml: {e}"),
            }
        })?;
    if !reference.edit.iter().all(|e| relative(&e.file)) {
        return Err(CodeCorpusError::Request {
            request: request.name,
            problem: "reference.toml: every `file` must be relative, without `..`".into(),
        });
    }
    Ok(CodeRequest {
        half: half(&request.half).unwrap_or(Half::Dev),
        name: request.name,
        library,
        kind: request.kind,
        examples: request.examples,
        plant: request.plant,
        text: text.trim().to_string(),
        acceptance,
        reference: reference.edit,
    })
}

fn half(text: &str) -> Option<Half> {
    match text {
        "dev" => Some(Half::Dev),
        "test" => Some(Half::Test),
        _ => None,
    }
}

fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A path of plain components only: no root, no `..`, not empty.
pub(crate) fn relative(path: &str) -> bool {
    let path = Path::new(path);
    !path.as_os_str().is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// The requests `--half` and `--request` choose, in file order (`dev` by default).
pub fn select<'a>(
    requests: &'a [CodeRequest],
    choice: Option<HalfChoice>,
    names: &[String],
) -> Result<Vec<&'a CodeRequest>, CodeCorpusError> {
    let holds = |c: HalfChoice, h: Half| match c {
        HalfChoice::All => true,
        HalfChoice::Dev => h == Half::Dev,
        HalfChoice::Test => h == Half::Test,
    };
    if names.is_empty() {
        let wanted = choice.unwrap_or(HalfChoice::Dev);
        return Ok(requests.iter().filter(|r| holds(wanted, r.half)).collect());
    }
    let mut chosen: Vec<&CodeRequest> = Vec::new();
    for name in names {
        let request =
            requests
                .iter()
                .find(|r| &r.name == name)
                .ok_or_else(|| CodeCorpusError::Unknown {
                    name: name.clone(),
                    known: requests
                        .iter()
                        .map(|r| r.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        if let Some(asked) = choice.filter(|c| !holds(*c, request.half)) {
            return Err(CodeCorpusError::OtherHalf {
                name: name.clone(),
                actual: request.half.as_str(),
                asked: asked.as_str(),
            });
        }
        if !chosen.iter().any(|r| r.name == request.name) {
            chosen.push(request);
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = r#"
[[library]]
name = "lib"
pypi = "lib==1.0"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
files = ["lib/__init__.py", "tests/test_lib.py"]
suite = ["tests/test_lib.py"]
"#;

    fn parsed(requests: &str) -> Result<Vec<(RawRequest, Library)>, CodeCorpusError> {
        parse(&format!("{LIB}{requests}"))
    }

    #[test]
    fn a_request_needs_a_known_library_a_half_and_a_plant_only_when_it_is_a_fix() {
        let ok = r#"
[[request]]
name = "a"
library = "lib"
half = "test"
kind = "fix"
examples = false
plant = { file = "lib/__init__.py", search = "x", replace = "y" }
"#;
        assert_eq!(parsed(ok).unwrap().len(), 1);
        let cases = [
            (
                ok.replace("\"lib\"\nhalf", "\"nope\"\nhalf"),
                "no library `nope`",
            ),
            (ok.replace("\"test\"", "\"both\""), "is not dev or test"),
            (ok.replace("\"fix\"", "\"add\""), "only a fix has a `plant`"),
            (ok.replace("plant = {", "# {"), "a fix needs a `plant`"),
            (ok.replace("lib/__init__.py", "../x.py"), "relative `file`"),
            (format!("{ok}{ok}"), "used twice"),
            (ok.replace("examples", "exmples"), "unknown field"),
        ];
        for (text, expected) in cases {
            let err = parsed(&text).unwrap_err().to_string();
            assert!(err.contains(expected), "expected `{expected}` in: {err}");
        }
    }

    #[test]
    fn library_paths_must_stay_relative() {
        let text = LIB.replace("\"lib/__init__.py\"", "\"/etc/passwd\"");
        let err = parse(&format!("request = []\n{text}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("relative"), "{err}");
        assert!(relative("a/b.py") && !relative("a/../b") && !relative("") && !relative("/a"));
    }
}

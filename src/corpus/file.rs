//! The corpus file (`fixtures/corpus.toml`) read into typed plans, purely: text in, plans or
//! one error naming the plan and the key out. Nothing here touches the disk or the network;
//! whether a fixture path exists is the preparation's question, asked when the plan is run.
//!
//! The checks are those a reader of the file's header comment expects: a plan is either
//! hand-written (`fixture` + `reference` directory) or extracted from a pinned sdist (`pypi`,
//! `sha256`, `modules`, `reference` tests), never a mix; names are unique and usable as
//! directory names; every path is relative and stays inside its root; a plan and its
//! `-noexamples` variant share a half. An unknown key is an error, so a typo is not a silently
//! ignored setting.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// Which half of the corpus a plan belongs to: `dev` may be looked at while tuning, `test`
/// is run only to report figures.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Half {
    Dev,
    Test,
}

impl Half {
    pub fn as_str(self) -> &'static str {
        match self {
            Half::Dev => "dev",
            Half::Test => "test",
        }
    }
}

/// One `[[plan]]` of the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusPlan {
    pub name: String,
    pub domain: String,
    pub half: Half,
    /// Whether docstrings keep their examples (`false`: extracted with `--no-examples`).
    pub examples: bool,
    pub notes: Option<String>,
    pub source: PlanSource,
}

/// Where a plan and its reference tests come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanSource {
    /// Written by hand, in this repository: paths from the repository root.
    HandWritten {
        /// The plan (an `rpg.json`).
        fixture: PathBuf,
        /// A reference directory as `zerorepo eval --reference` takes it.
        reference: PathBuf,
    },
    /// Extracted from a pinned source distribution of a real library, fetched at run time.
    Sdist(SdistPlan),
}

/// A plan extracted from a pinned sdist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdistPlan {
    /// The distribution's name, as the package registry spells it.
    pub package: String,
    pub version: String,
    /// The sdist file's SHA-256, lower-case hex.
    pub sha256: String,
    /// The directory inside the unpacked sdist that holds the import root (`.` by default).
    pub src: PathBuf,
    /// Dotted modules to extract.
    pub modules: Vec<String>,
    /// When not empty: only these functions (and the leaves they call) are kept.
    pub functions: Vec<String>,
    /// Dotted modules copied verbatim into each generated repository before the evaluation.
    pub support: Vec<String>,
    /// The library's own tests to run: files, or pytest node ids within them.
    pub reference: Vec<TestSelection>,
}

/// A reference test file of an sdist, whole or narrowed to some of its tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestSelection {
    /// Relative to the unpacked sdist's root, `tests/test_more.py`.
    pub file: PathBuf,
    /// The node id within the file (`ChunkedTests`, `TestK::test_m`); `None`: the whole file.
    pub node: Option<String>,
}

impl TestSelection {
    /// The file's name, `test_more.py`.
    pub fn file_name(&self) -> String {
        self.file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Why a corpus file, or a selection of its plans, was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorpusError {
    #[error("the corpus file is not valid TOML: {0}")]
    Syntax(String),
    #[error("the corpus file: {0}")]
    File(String),
    #[error("plan `{plan}`, key `{key}`: {problem}")]
    Key {
        plan: String,
        key: String,
        problem: String,
    },
    #[error("plan `{plan}`: {problem}")]
    Plan { plan: String, problem: String },
    #[error("no plan named `{name}` in the corpus (plans: {known})")]
    UnknownPlan { name: String, known: String },
    #[error("plan `{name}` is in the {actual} half, not the {asked} half")]
    OtherHalf {
        name: String,
        actual: &'static str,
        asked: &'static str,
    },
}

/// Keys every plan may have, and those of each source.
const COMMON_KEYS: &[&str] = &["name", "domain", "half", "examples", "notes", "reference"];
const FIXTURE_KEYS: &[&str] = &["fixture"];
const SDIST_KEYS: &[&str] = &["pypi", "sha256", "src", "modules", "functions", "support"];

/// The variant suffix of a plan whose examples were removed.
const NO_EXAMPLES_SUFFIX: &str = "-noexamples";

/// Parses the corpus file's text.
pub fn parse(text: &str) -> Result<Vec<CorpusPlan>, CorpusError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        CorpusError::Syntax(e.to_string().lines().next().unwrap_or_default().to_string())
    })?;
    if let Some(other) = table.keys().find(|k| *k != "plan") {
        return Err(CorpusError::File(format!(
            "unknown top-level key `{other}` (only [[plan]] tables)"
        )));
    }
    let Some(entries) = table.get("plan") else {
        return Err(CorpusError::File("no [[plan]] table".into()));
    };
    let entries = entries
        .as_array()
        .ok_or_else(|| CorpusError::File("`plan` must be an array of tables ([[plan]])".into()))?;
    let mut plans = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let label = format!("#{}", i + 1);
        let table = entry.as_table().ok_or_else(|| CorpusError::Plan {
            plan: label.clone(),
            problem: "not a table".into(),
        })?;
        plans.push(plan(table, &label)?);
    }
    check_names(&plans)?;
    Ok(plans)
}

/// The plans to run: those named (each must exist, and be in `half` when one is given), or
/// without names every plan of `half` (the dev half when none is given: the test half is run
/// only when asked for).
pub fn select<'a>(
    plans: &'a [CorpusPlan],
    half: Option<HalfChoice>,
    names: &[String],
) -> Result<Vec<&'a CorpusPlan>, CorpusError> {
    let wanted = half.unwrap_or(HalfChoice::Dev);
    if names.is_empty() {
        return Ok(plans.iter().filter(|p| wanted.holds(p.half)).collect());
    }
    let mut chosen = Vec::new();
    for name in names {
        let plan =
            plans
                .iter()
                .find(|p| &p.name == name)
                .ok_or_else(|| CorpusError::UnknownPlan {
                    name: name.clone(),
                    known: plans
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        if let Some(asked) = half.filter(|h| !h.holds(plan.half)) {
            return Err(CorpusError::OtherHalf {
                name: name.clone(),
                actual: plan.half.as_str(),
                asked: asked.as_str(),
            });
        }
        if !chosen.iter().any(|p: &&CorpusPlan| p.name == plan.name) {
            chosen.push(plan);
        }
    }
    Ok(chosen)
}

/// `--half`: one half, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HalfChoice {
    Dev,
    Test,
    All,
}

impl HalfChoice {
    fn holds(self, half: Half) -> bool {
        match self {
            HalfChoice::All => true,
            HalfChoice::Dev => half == Half::Dev,
            HalfChoice::Test => half == Half::Test,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            HalfChoice::Dev => "dev",
            HalfChoice::Test => "test",
            HalfChoice::All => "all",
        }
    }
}

/// One `[[plan]]` table; `label` names it in errors until its name is known.
fn plan(table: &toml::Table, label: &str) -> Result<CorpusPlan, CorpusError> {
    let keys = Keys { table, plan: label };
    let name = keys.string("name")?.ok_or_else(|| keys.missing("name"))?;
    let keys = Keys { table, plan: &name };
    check_name(&keys, &name)?;
    let source = match (table.contains_key("fixture"), table.contains_key("pypi")) {
        (true, true) => {
            return Err(
                keys.plan_error("has both `fixture` and `pypi`: a plan is one or the other")
            );
        }
        (false, false) => {
            return Err(keys.plan_error("needs `fixture` (hand-written) or `pypi` (an sdist)"));
        }
        (true, false) => {
            keys.only(&[COMMON_KEYS, FIXTURE_KEYS])?;
            hand_written(&keys)?
        }
        (false, true) => {
            keys.only(&[COMMON_KEYS, SDIST_KEYS])?;
            PlanSource::Sdist(sdist(&keys)?)
        }
    };
    let half = match keys.string("half")?.as_deref() {
        Some("dev") => Half::Dev,
        Some("test") => Half::Test,
        Some(other) => {
            return Err(keys.key_error("half", format!("`{other}`: expected \"dev\" or \"test\"")));
        }
        None => return Err(keys.missing("half")),
    };
    Ok(CorpusPlan {
        domain: keys
            .string("domain")?
            .ok_or_else(|| keys.missing("domain"))?,
        half,
        examples: keys.boolean("examples")?,
        notes: keys.string("notes")?,
        source,
        name,
    })
}

fn hand_written(keys: &Keys) -> Result<PlanSource, CorpusError> {
    let path = |key: &str| -> Result<PathBuf, CorpusError> {
        let value = keys.string(key)?.ok_or_else(|| keys.missing(key))?;
        relative_path(&value).map_err(|p| keys.key_error(key, p))
    };
    if keys.table.get("reference").is_some_and(|v| !v.is_str()) {
        return Err(keys.key_error(
            "reference",
            "a hand-written plan's reference is one directory (a string)".into(),
        ));
    }
    Ok(PlanSource::HandWritten {
        fixture: path("fixture")?,
        reference: path("reference")?,
    })
}

fn sdist(keys: &Keys) -> Result<SdistPlan, CorpusError> {
    let pin = keys.string("pypi")?.unwrap_or_default();
    let (package, version) = pin
        .split_once("==")
        .filter(|(n, v)| distribution_name(n) && version_text(v))
        .ok_or_else(|| keys.key_error("pypi", format!("`{pin}`: expected \"NAME==VERSION\"")))?;
    let sha256 = keys
        .string("sha256")?
        .ok_or_else(|| keys.missing("sha256"))?;
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(keys.key_error("sha256", "expected 64 hexadecimal digits".into()));
    }
    let src = match keys.string("src")? {
        Some(src) => relative_path(&src).map_err(|p| keys.key_error("src", p))?,
        None => PathBuf::from("."),
    };
    let modules = keys.dotted_list("modules")?;
    if modules.is_empty() {
        return Err(keys.missing("modules"));
    }
    let functions = keys.list("functions")?;
    if let Some(bad) = functions.iter().find(|f| !crate::python::is_identifier(f)) {
        return Err(keys.key_error("functions", format!("`{bad}` is not a Python identifier")));
    }
    let reference = keys
        .list("reference")?
        .iter()
        .map(|r| test_selection(r).map_err(|p| keys.key_error("reference", p)))
        .collect::<Result<Vec<_>, _>>()?;
    if reference.is_empty() {
        return Err(keys.missing("reference"));
    }
    Ok(SdistPlan {
        package: package.to_string(),
        version: version.to_string(),
        sha256: sha256.to_ascii_lowercase(),
        src,
        modules,
        functions,
        support: keys.dotted_list("support")?,
        reference,
    })
}

/// `tests/test_more.py` or `tests/test_more.py::ChunkedTests`.
fn test_selection(text: &str) -> Result<TestSelection, String> {
    let (file, node) = match text.split_once("::") {
        Some((file, node)) => (file, Some(node)),
        None => (text, None),
    };
    let file = relative_path(file)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !(name.starts_with("test_") && name.ends_with(".py")) {
        return Err(format!(
            "`{text}`: a reference test file is named test_*.py"
        ));
    }
    if let Some(node) = node
        && !node.split("::").all(crate::python::is_identifier)
    {
        return Err(format!(
            "`{text}`: after `::` come class and test names (`Class::test_name`)"
        ));
    }
    Ok(TestSelection {
        file,
        node: node.map(String::from),
    })
}

/// A relative path that stays beneath its root: no `..`, not absolute, not empty.
fn relative_path(text: &str) -> Result<PathBuf, String> {
    let path = Path::new(text);
    let normal = path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if text.is_empty() || !normal {
        return Err(format!(
            "`{text}`: expected a relative path with no `..` component"
        ));
    }
    Ok(path.to_path_buf())
}

/// A distribution name as the package registry accepts it.
fn distribution_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A pinned version: what a version may hold, never a space or an option.
fn version_text(version: &str) -> bool {
    version.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'!' | b'_' | b'-'))
}

/// A plan name is a directory name of the run: letters, digits, `-`, `_`, `.`, not leading.
fn check_name(keys: &Keys, name: &str) -> Result<(), CorpusError> {
    let ok = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(keys.key_error(
            "name",
            format!(
                "`{name}`: use letters, digits, `-`, `_` and `.`, starting with a letter or digit"
            ),
        ))
    }
}

/// Names are unique, and a plan and its examples-free variant are in the same half.
fn check_names(plans: &[CorpusPlan]) -> Result<(), CorpusError> {
    let mut seen: BTreeMap<&str, Half> = BTreeMap::new();
    for plan in plans {
        if seen.insert(&plan.name, plan.half).is_some() {
            return Err(CorpusError::Plan {
                plan: plan.name.clone(),
                problem: "a second plan has this name".into(),
            });
        }
    }
    for plan in plans {
        let Some(base) = plan.name.strip_suffix(NO_EXAMPLES_SUFFIX) else {
            continue;
        };
        if let Some(&half) = seen.get(base)
            && half != plan.half
        {
            return Err(CorpusError::Plan {
                plan: plan.name.clone(),
                problem: format!(
                    "in the {} half but `{base}` is in the {}: a plan and its examples-free variant share a half",
                    plan.half.as_str(),
                    half.as_str()
                ),
            });
        }
    }
    Ok(())
}

/// Typed reads of one plan's keys, with errors naming the plan and the key.
struct Keys<'a> {
    table: &'a toml::Table,
    plan: &'a str,
}

impl Keys<'_> {
    fn key_error(&self, key: &str, problem: String) -> CorpusError {
        CorpusError::Key {
            plan: self.plan.to_string(),
            key: key.to_string(),
            problem,
        }
    }

    fn plan_error(&self, problem: &str) -> CorpusError {
        CorpusError::Plan {
            plan: self.plan.to_string(),
            problem: problem.to_string(),
        }
    }

    fn missing(&self, key: &str) -> CorpusError {
        self.key_error(key, "missing (or empty)".into())
    }

    /// Every key is one of `allowed`'s.
    fn only(&self, allowed: &[&[&str]]) -> Result<(), CorpusError> {
        let allowed: BTreeSet<&str> = allowed.iter().flat_map(|k| k.iter().copied()).collect();
        match self.table.keys().find(|k| !allowed.contains(k.as_str())) {
            Some(key) => Err(self.key_error(key, "not a key of this kind of plan".into())),
            None => Ok(()),
        }
    }

    /// A string key; an empty string counts as missing.
    fn string(&self, key: &str) -> Result<Option<String>, CorpusError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.key_error(key, "expected a string".into())),
        }
    }

    fn boolean(&self, key: &str) -> Result<bool, CorpusError> {
        match self.table.get(key) {
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(_) => Err(self.key_error(key, "expected true or false".into())),
            None => Err(self.missing(key)),
        }
    }

    /// A list of strings; absent is empty.
    fn list(&self, key: &str) -> Result<Vec<String>, CorpusError> {
        let Some(value) = self.table.get(key) else {
            return Ok(Vec::new());
        };
        let not_strings = || self.key_error(key, "expected a list of strings".into());
        value
            .as_array()
            .ok_or_else(not_strings)?
            .iter()
            .map(|v| v.as_str().map(String::from).ok_or_else(not_strings))
            .collect()
    }

    /// A list of dotted module names.
    fn dotted_list(&self, key: &str) -> Result<Vec<String>, CorpusError> {
        let list = self.list(key)?;
        if let Some(bad) = list
            .iter()
            .find(|m| !m.split('.').all(crate::python::is_identifier))
        {
            return Err(self.key_error(key, format!("`{bad}` is not a dotted module name")));
        }
        Ok(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HAND: &str = r#"
[[plan]]
name = "chain"
domain = "arithmetic"
half = "dev"
examples = true
fixture = "fixtures/chain/rpg.json"
reference = "fixtures/chain/reference"
"#;

    const SDIST: &str = r#"
[[plan]]
name = "more"
domain = "iterators"
half = "test"
examples = false
pypi = "more-itertools==10.7.0"
sha256 = "9FDDD5403BE01A94B204FAADCFF459EC3568CF110265D3C54323E1E866AD29D3"
modules = ["more_itertools.more"]
functions = ["chunked"]
support = ["more_itertools.recipes"]
reference = ["tests/test_more.py::ChunkedTests", "tests/test_x.py"]
"#;

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_hand_written_plan_reads_into_its_paths() {
        let plans = parse(HAND).unwrap();
        assert_eq!(
            plans,
            [CorpusPlan {
                name: "chain".into(),
                domain: "arithmetic".into(),
                half: Half::Dev,
                examples: true,
                notes: None,
                source: PlanSource::HandWritten {
                    fixture: "fixtures/chain/rpg.json".into(),
                    reference: "fixtures/chain/reference".into(),
                },
            }]
        );
    }

    #[test]
    fn an_sdist_plan_reads_its_pin_modules_and_node_ids() {
        let plans = parse(SDIST).unwrap();
        let PlanSource::Sdist(sdist) = &plans[0].source else {
            panic!("not an sdist: {:?}", plans[0].source);
        };
        assert_eq!(
            sdist,
            &SdistPlan {
                package: "more-itertools".into(),
                version: "10.7.0".into(),
                sha256: "9fddd5403be01a94b204faadcff459ec3568cf110265d3c54323e1e866ad29d3".into(),
                src: ".".into(),
                modules: vec!["more_itertools.more".into()],
                functions: vec!["chunked".into()],
                support: vec!["more_itertools.recipes".into()],
                reference: vec![
                    TestSelection {
                        file: "tests/test_more.py".into(),
                        node: Some("ChunkedTests".into()),
                    },
                    TestSelection {
                        file: "tests/test_x.py".into(),
                        node: None,
                    },
                ],
            }
        );
        assert_eq!(plans[0].half, Half::Test);
    }

    #[test]
    fn the_repository_corpus_parses_with_both_halves_and_both_sources() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus.toml"),
        )
        .unwrap();
        let plans = parse(&text).unwrap();
        assert_eq!(plans.len(), 16);
        let test_half = select(&plans, Some(HalfChoice::Test), &[]).unwrap();
        assert!(test_half.iter().all(|p| p.half == Half::Test));
        assert_eq!(test_half.len(), 7);
        assert!(
            plans
                .iter()
                .any(|p| matches!(p.source, PlanSource::Sdist(_)))
        );
        assert!(
            plans
                .iter()
                .any(|p| matches!(p.source, PlanSource::HandWritten { .. }))
        );
    }

    #[test]
    fn errors_name_the_plan_and_the_key() {
        let cases = [
            (
                HAND.replace("\"dev\"", "\"train\""),
                "plan `chain`, key `half`: `train`",
            ),
            (
                HAND.replace("examples = true\n", ""),
                "plan `chain`, key `examples`: missing",
            ),
            (
                HAND.replace("examples = true", "examples = \"yes\""),
                "key `examples`: expected true or false",
            ),
            (
                HAND.replace("fixtures/chain/rpg.json", "../elsewhere/rpg.json"),
                "plan `chain`, key `fixture`: `../elsewhere/rpg.json`",
            ),
            (
                HAND.replace("fixtures/chain/rpg.json", "/etc/rpg.json"),
                "key `fixture`: `/etc/rpg.json`",
            ),
            (
                format!("{HAND}sha256 = \"{}\"\n", "a".repeat(64)),
                "plan `chain`, key `sha256`: not a key of this kind",
            ),
            (HAND.replace("domain", "domian"), "key `domian`: not a key"),
            (
                HAND.replace("name = \"chain\"", "name = \"../x\""),
                "key `name`: `../x`",
            ),
            (
                HAND.replace("name = \"chain\"\n", ""),
                "plan `#1`, key `name`: missing",
            ),
            (
                SDIST.replace("more-itertools==10.7.0", "more-itertools>=10"),
                "plan `more`, key `pypi`: `more-itertools>=10`",
            ),
            (
                SDIST.replace("==10.7.0", "==10.7.0 --index-url x"),
                "key `pypi`",
            ),
            (
                SDIST.replace("9FDDD", "9FDDZ"),
                "plan `more`, key `sha256`: expected 64",
            ),
            (
                SDIST.replace("tests/test_x.py", "tests/../../x/test_x.py"),
                "plan `more`, key `reference`: `tests/../../x/test_x.py`",
            ),
            (
                SDIST.replace("tests/test_x.py", "tests/helpers.py"),
                "key `reference`: `tests/helpers.py`: a reference test file",
            ),
            (
                SDIST.replace("::ChunkedTests", "::Chunked Tests"),
                "key `reference`: `tests/test_more.py::Chunked Tests`",
            ),
            (
                SDIST.replace("more_itertools.recipes", "more_itertools/recipes.py"),
                "plan `more`, key `support`",
            ),
            (
                SDIST.replace("[\"chunked\"]", "[\"chunked()\"]"),
                "plan `more`, key `functions`",
            ),
            (
                SDIST.replace("modules = [\"more_itertools.more\"]", "modules = []"),
                "plan `more`, key `modules`: missing",
            ),
            (
                format!("{SDIST}fixture = \"x\"\n"),
                "plan `more`: has both `fixture` and `pypi`",
            ),
            (
                HAND.replace("fixture = \"fixtures/chain/rpg.json\"\n", ""),
                "plan `chain`: needs `fixture`",
            ),
            (
                format!("{HAND}{HAND}"),
                "plan `chain`: a second plan has this name",
            ),
            (
                format!("title = \"x\"\n{HAND}"),
                "unknown top-level key `title`",
            ),
            ("[[plan]\n".to_string(), "not valid TOML"),
        ];
        for (text, expected) in cases {
            let got = error(&text);
            assert!(got.contains(expected), "expected `{expected}` in: {got}");
        }
    }

    #[test]
    fn a_variant_without_examples_shares_its_plans_half() {
        let variant = HAND
            .replace("name = \"chain\"", "name = \"chain-noexamples\"")
            .replace("\"dev\"", "\"test\"");
        let got = error(&format!("{HAND}{variant}"));
        assert!(
            got.contains("plan `chain-noexamples`: in the test half but `chain` is in the dev"),
            "{got}"
        );
    }

    #[test]
    fn selection_by_half_and_by_name() {
        let test_plan = SDIST;
        let plans = parse(&format!("{HAND}{test_plan}")).unwrap();
        let names =
            |chosen: Vec<&CorpusPlan>| chosen.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(select(&plans, None, &[]).unwrap()), ["chain"]);
        assert_eq!(
            names(select(&plans, Some(HalfChoice::Test), &[]).unwrap()),
            ["more"]
        );
        assert_eq!(
            names(select(&plans, Some(HalfChoice::All), &[]).unwrap()),
            ["chain", "more"]
        );
        assert_eq!(
            names(select(&plans, None, &["more".into(), "more".into()]).unwrap()),
            ["more"]
        );
        let unknown = select(&plans, None, &["nope".into()])
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("no plan named `nope`") && unknown.contains("chain, more"),
            "{unknown}"
        );
        let other = select(&plans, Some(HalfChoice::Dev), &["more".into()])
            .unwrap_err()
            .to_string();
        assert_eq!(other, "plan `more` is in the test half, not the dev half");
    }
}

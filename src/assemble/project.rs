//! Packaging metadata: `pyproject.toml` (PEP 621, setuptools), `requirements.txt` and
//! `requirements-dev.txt`, derived from the RPG's metadata and the imports actually present.
//!
//! Missing metadata gets a placeholder and a warning in the report rather than an error: an
//! installable project with a placeholder name is more useful than none.

use std::collections::{BTreeMap, BTreeSet};

use super::imports::{imported_modules, is_stdlib, requirement_for};
use crate::python::import_path;
use crate::records::NodeRecords;
use crate::rpg::ValidRpg;

/// What the project is called and how it is laid out.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProjectInfo {
    pub name: String,
    pub description: String,
    /// `src` when the code lives under `src/`, `flat` otherwise.
    pub layout: &'static str,
    /// Top-level packages (import names).
    pub packages: Vec<String>,
    /// Console scripts: `name = "module:function"`.
    pub scripts: Vec<(String, String)>,
    /// Third-party requirements found in the code.
    pub requirements: Vec<String>,
    /// What had to be guessed.
    pub warnings: Vec<String>,
}

pub(crate) fn project_info(
    rpg: &ValidRpg,
    records: &NodeRecords,
    sources: &BTreeMap<String, String>,
) -> ProjectInfo {
    let layout = if sources.keys().any(|p| p.starts_with("src/")) {
        "src"
    } else {
        "flat"
    };
    let packages = packages(sources, layout);
    let mut warnings = Vec::new();
    let name = project_name(rpg, &packages, &mut warnings);
    let description = description(rpg, &name, &mut warnings);
    let scripts = console_scripts(rpg, records, &name);
    let requirements = third_party(sources, &packages);
    ProjectInfo {
        name,
        description,
        layout,
        packages: packages.into_iter().collect(),
        scripts,
        requirements,
        warnings,
    }
}

/// A string from the plan's metadata.
fn metadata_text(rpg: &ValidRpg, key: &str) -> Option<String> {
    rpg.rpg()
        .metadata
        .get(key)
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// Top-level packages: directories with an `__init__.py` directly under the layout's root,
/// the tests excepted.
fn packages(sources: &BTreeMap<String, String>, layout: &str) -> BTreeSet<String> {
    let prefix = if layout == "src" { "src/" } else { "" };
    sources
        .keys()
        .filter_map(|p| p.strip_prefix(prefix)?.strip_suffix("/__init__.py"))
        .filter(|dir| !dir.contains('/') && *dir != "tests")
        .map(str::to_string)
        .collect()
}

/// The plan's `project_name` as a distribution name, else the first package, else a
/// placeholder (with a warning).
fn project_name(rpg: &ValidRpg, packages: &BTreeSet<String>, warnings: &mut Vec<String>) -> String {
    metadata_text(rpg, "project_name")
        .map(|n| distribution_name(&n))
        .filter(|n| !n.is_empty())
        .or_else(|| packages.iter().next().cloned())
        .unwrap_or_else(|| {
            warnings
                .push("the RPG's metadata has no `project_name`; using `generated-project`".into());
            "generated-project".into()
        })
}

/// The first sentence of the plan's `description`, else a placeholder (with a warning).
fn description(rpg: &ValidRpg, name: &str, warnings: &mut Vec<String>) -> String {
    metadata_text(rpg, "description")
        .map(|d| first_sentence(&d))
        .unwrap_or_else(|| {
            warnings.push("the RPG's metadata has no `description`; using a placeholder".into());
            format!("{name}, generated from a Repository Planning Graph")
        })
}

/// One console script named after the project, for the first `main` function that passed.
fn console_scripts(rpg: &ValidRpg, records: &NodeRecords, name: &str) -> Vec<(String, String)> {
    rpg.order()
        .iter()
        .map(|&p| rpg.node(p))
        .filter(|n| n.is_leaf() && n.name == "main")
        .filter(|n| records.get(&n.id).is_some_and(|r| r.status.is_usable()))
        .filter_map(|n| {
            Some((
                name.to_string(),
                format!("{}:main", import_path(n.file_path.as_deref()?)),
            ))
        })
        .take(1)
        .collect()
}

/// Requirements for what the code (not the tests) imports from outside the standard library
/// and the project's own packages; sorted, once each.
fn third_party(sources: &BTreeMap<String, String>, packages: &BTreeSet<String>) -> Vec<String> {
    let local: BTreeSet<&str> = packages.iter().map(String::as_str).collect();
    let requirements: BTreeSet<String> = sources
        .iter()
        .filter(|(p, _)| !p.starts_with("tests/") && p.ends_with(".py"))
        .flat_map(|(_, text)| imported_modules(text))
        .filter(|m| !is_stdlib(m) && !local.contains(m.as_str()))
        .map(|m| requirement_for(&m))
        .collect();
    requirements.into_iter().collect()
}

/// A distribution name packaging tools accept (letters, digits, `.`, `_`, `-`, starting and
/// ending with a letter or digit): anything else in the plan's `project_name` becomes `-`.
fn distribution_name(text: &str) -> String {
    let mapped: String = text
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    mapped
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// The first sentence of `text` on one line (packaging metadata's summary allows no newline).
fn first_sentence(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = text.as_str();
    let sentence = text
        .split(". ")
        .next()
        .unwrap_or(text)
        .trim()
        .trim_end_matches('.');
    let mut short: String = sentence.chars().take(200).collect();
    short.push('.');
    short
}

/// A TOML basic string holding exactly `text`: plan metadata may contain quotes, newlines or
/// NUL, and each must stay inside the string (TOML forbids raw control characters there).
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(crate) fn pyproject(info: &ProjectInfo) -> String {
    let dependencies: Vec<String> = info
        .requirements
        .iter()
        .map(|r| format!("    {},", toml_string(r)))
        .collect();
    let mut text = format!(
        "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
         [project]\nname = {}\nversion = \"0.1.0\"\ndescription = {}\nreadme = \"README.md\"\n\
         requires-python = \">=3.9\"\nclassifiers = [\n    \"Programming Language :: Python :: 3\",\n    \"Development Status :: 3 - Alpha\",\n]\n\
         dependencies = [{}]\n\n[project.optional-dependencies]\ndev = [\"pytest>=7\"]\n",
        toml_string(&info.name),
        toml_string(&info.description),
        if dependencies.is_empty() {
            String::new()
        } else {
            format!("\n{}\n", dependencies.join("\n"))
        },
    );
    if !info.scripts.is_empty() {
        text.push_str("\n[project.scripts]\n");
        for (name, target) in &info.scripts {
            text.push_str(&format!(
                "{} = {}\n",
                toml_string(name),
                toml_string(target)
            ));
        }
    }
    let (find_where, pythonpath) = if info.layout == "src" {
        ("src", "src")
    } else {
        (".", ".")
    };
    let include: Vec<String> = info
        .packages
        .iter()
        .map(|p| toml_string(&format!("{p}*")))
        .collect();
    text.push_str(&format!(
        "\n[tool.setuptools.packages.find]\nwhere = [\"{find_where}\"]\ninclude = [{}]\n\n\
         [tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"{pythonpath}\"]\n",
        include.join(", ")
    ));
    text
}

pub(crate) fn requirements(info: &ProjectInfo) -> String {
    let mut text = String::from("# Third-party packages imported by the generated code.\n");
    for r in &info.requirements {
        text.push_str(r);
        text.push('\n');
    }
    text
}

pub(crate) fn requirements_dev() -> String {
    "-r requirements.txt\npytest>=7,<9\n".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_project_name_and_description_become_valid_metadata() {
        assert_eq!(distribution_name(" my lib\n[x]\0 "), "my-lib--x");
        assert_eq!(distribution_name("ok_name-1.2"), "ok_name-1.2");
        assert_eq!(distribution_name("\"\"\""), "");
        assert_eq!(first_sentence("One\nline.  Two."), "One line.");
    }

    #[test]
    fn metadata_with_newlines_quotes_and_nul_stays_one_toml_string() {
        assert_eq!(
            toml_string("a \"b\"\nversion = \"9\"\0\\"),
            r#""a \"b\"\nversion = \"9\"\u0000\\""#
        );
    }

    fn info() -> ProjectInfo {
        ProjectInfo {
            name: "ml_lib".into(),
            description: "A \"small\" library.".into(),
            layout: "src",
            packages: vec!["ml_lib".into()],
            scripts: vec![("ml_lib".into(), "ml_lib.cli:main".into())],
            requirements: vec!["numpy>=1.24,<3".into()],
            warnings: vec![],
        }
    }

    #[test]
    fn pyproject_is_pep_621_with_src_layout_and_scripts() {
        let text = pyproject(&info());
        for expected in [
            "name = \"ml_lib\"",
            "description = \"A \\\"small\\\" library.\"",
            "dependencies = [\n    \"numpy>=1.24,<3\",\n]",
            "[project.scripts]\n\"ml_lib\" = \"ml_lib.cli:main\"",
            "where = [\"src\"]\ninclude = [\"ml_lib*\"]",
            "pythonpath = [\"src\"]",
        ] {
            assert!(text.contains(expected), "{expected} missing in\n{text}");
        }
        assert_eq!(
            requirements(&info()),
            "# Third-party packages imported by the generated code.\nnumpy>=1.24,<3\n"
        );
    }

    #[test]
    fn long_descriptions_keep_their_first_sentence() {
        assert_eq!(first_sentence("A lib. It does x."), "A lib.");
    }
}

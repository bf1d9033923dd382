//! What generated code imports, sorted into standard library, third party and local, so the
//! requirements list only what the code really needs.
//!
//! A line-based scan is enough here: the files have passed `py_compile` and their tests, and
//! only top-level module names matter. Imports inside strings could be miscounted; that costs
//! at most an extra requirement, which the report lists for review.
//!
//! [`group_imports`] sorts a module's import block into PEP 8's sections. It runs at assembly,
//! not while nodes are generated, because the model is shown the files as they are: regrouping
//! them mid-run would change its prompts (and every recorded exchange keyed by them).

use std::collections::BTreeSet;

use crate::python::is_name_char;
pub(crate) use crate::python::is_stdlib;

/// Top-level module names imported anywhere in `source` (absolute imports only).
pub(crate) fn imported_modules(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                if let Some(name) = top_level(part.split_whitespace().next().unwrap_or("")) {
                    found.insert(name);
                }
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let module = rest.split_whitespace().next().unwrap_or("");
            if !module.starts_with('.')
                && let Some(name) = top_level(module)
            {
                found.insert(name);
            }
        }
    }
    found
}

fn top_level(dotted: &str) -> Option<String> {
    let name = dotted.split('.').next()?.trim();
    let valid = !name.is_empty()
        && name.chars().all(is_name_char)
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then(|| name.to_string())
}

/// PEP 8's import sections, in the order they appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ImportGroup {
    Future,
    Stdlib,
    ThirdParty,
    Local,
}

/// The section of one import statement. `local` holds the project's own top-level names;
/// relative imports are local too. `import a, b` is placed by its first module.
pub(crate) fn import_group(statement: &str, local: &BTreeSet<String>) -> ImportGroup {
    let words: Vec<&str> = statement.split_whitespace().collect();
    let module = match words.as_slice() {
        ["from", module, ..] | ["import", module, ..] => module.trim_end_matches(','),
        _ => "",
    };
    if module.starts_with('.') {
        return ImportGroup::Local;
    }
    match top_level(module) {
        Some(name) if name == "__future__" => ImportGroup::Future,
        Some(name) if local.contains(&name) => ImportGroup::Local,
        Some(name) if is_stdlib(&name) => ImportGroup::Stdlib,
        _ => ImportGroup::ThirdParty,
    }
}

/// `source` with the imports at its top (after the docstring) sorted into sections,
/// standard library, third party, local, with a blank line between sections. Within a section
/// the order is kept. Idempotent; a module without imports comes back unchanged.
pub(crate) fn group_imports(source: &str, local: &BTreeSet<String>) -> String {
    use crate::symbols::{UnitKind, split_units};
    let mut units = split_units(source);
    let start = usize::from(units.first().is_some_and(|u| u.kind == UnitKind::Docstring));
    let end = units[start..]
        .iter()
        .position(|u| u.kind != UnitKind::Import)
        .map_or(units.len(), |n| start + n);
    if end == start {
        return source.to_string();
    }
    units[start..end].sort_by_key(|u| import_group(&u.text, local));
    crate::edit::merge::render_grouped(&units, |u| import_group(&u.text, local) as u8)
}

/// The distribution that provides an import name, where the two differ, with a version range
/// for well-known packages (lower bound: a release from the last years; upper: the next major).
pub(crate) fn requirement_for(module: &str) -> String {
    let known: &[(&str, &str)] = &[
        ("numpy", "numpy>=1.24,<3"),
        ("pandas", "pandas>=1.5,<3"),
        ("scipy", "scipy>=1.10,<2"),
        ("sklearn", "scikit-learn>=1.2,<2"),
        ("matplotlib", "matplotlib>=3.6,<4"),
        ("seaborn", "seaborn>=0.12,<1"),
        ("requests", "requests>=2.28,<3"),
        ("yaml", "PyYAML>=6,<7"),
        ("PIL", "Pillow>=9,<12"),
        ("cv2", "opencv-python>=4.7,<5"),
        ("bs4", "beautifulsoup4>=4.11,<5"),
        ("dateutil", "python-dateutil>=2.8,<3"),
        ("attr", "attrs>=22,<26"),
        ("click", "click>=8,<9"),
        ("pydantic", "pydantic>=2,<3"),
    ];
    known
        .iter()
        .find(|(m, _)| *m == module)
        .map_or_else(|| module.to_string(), |(_, r)| r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_grouped_stdlib_third_party_local_once() {
        let local: BTreeSet<String> = ["ml_lib".to_string()].into();
        let code = "\"\"\"Doc.\"\"\"\n\nfrom ml_lib.data import load\nimport numpy as np\nimport os\nfrom . import util\nimport pytest\nfrom __future__ import annotations\nimport json\n\n\ndef f():\n    return 1\n";
        let grouped = group_imports(code, &local);
        assert_eq!(
            grouped,
            "\"\"\"Doc.\"\"\"\n\nfrom __future__ import annotations\n\nimport os\nimport json\n\nimport numpy as np\nimport pytest\n\nfrom ml_lib.data import load\nfrom . import util\n\n\ndef f():\n    return 1\n"
        );
        assert_eq!(group_imports(&grouped, &local), grouped, "idempotent");
        let plain = "def f():\n    return 1\n";
        assert_eq!(group_imports(plain, &local), plain);
        assert_eq!(import_group("import os.path", &local), ImportGroup::Stdlib);
        assert_eq!(
            import_group("from ml_lib import x", &local),
            ImportGroup::Local
        );
        assert_eq!(
            import_group("from sklearn import svm", &local),
            ImportGroup::ThirdParty
        );
    }

    #[test]
    fn requirements_are_detected_from_code() {
        let code = "import os, sys\nimport numpy as np\nfrom pandas.core import frame\nfrom .local import x\nfrom ml_lib.data import y\n    import json\n";
        let found = imported_modules(code);
        assert_eq!(
            found.iter().map(String::as_str).collect::<Vec<_>>(),
            ["ml_lib", "numpy", "os", "pandas", "sys", "json"]
                .iter()
                .copied()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
        let third_party: Vec<&String> = found
            .iter()
            .filter(|m| !is_stdlib(m) && *m != "ml_lib")
            .collect();
        assert_eq!(third_party, ["numpy", "pandas"]);
        assert_eq!(requirement_for("numpy"), "numpy>=1.24,<3");
        assert_eq!(requirement_for("sklearn"), "scikit-learn>=1.2,<2");
        assert_eq!(requirement_for("tqdm"), "tqdm");
    }
}

//! What generated code imports, sorted into standard library, third party and local, so the
//! requirements list only what the code really needs.
//!
//! A line-based scan is enough here: the files have passed `py_compile` and their tests, and
//! only top-level module names matter. Imports inside strings could be miscounted; that costs
//! at most an extra requirement, which the report lists for review.

use std::collections::BTreeSet;

/// Top-level module names of the standard library (Python 3.11's `sys.stdlib_module_names`,
/// without private ones).
const STDLIB: &str = include_str!("stdlib.txt");

pub fn is_stdlib(module: &str) -> bool {
    module == "__future__" || STDLIB.lines().any(|l| l == module)
}

/// Top-level module names imported anywhere in `source` (absolute imports only).
pub fn imported_modules(source: &str) -> BTreeSet<String> {
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
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then(|| name.to_string())
}

/// The distribution that provides an import name, where the two differ, with a version range
/// for well-known packages (lower bound: a release from the last years; upper: the next major).
pub fn requirement_for(module: &str) -> String {
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

//! Merging a code fragment into a Python module.
//!
//! Rules, chosen so that re-applying the same fragment is a no-op (which makes a resumed run
//! byte-identical to an uninterrupted one):
//! - the module docstring stays first; the fragment's is used only if the file has none;
//! - new import lines are appended to the import block, duplicates dropped;
//! - a definition replaces the top-level definition of the same name in place, or is appended;
//! - other statements are appended unless already present verbatim.
//!
//! The output is normalised: one blank line after the imports block, two between definitions.

use crate::code::{Unit, UnitKind, split_units};

/// Returns `existing` with `fragment` merged in.
pub fn merge_python(existing: &str, fragment: &str) -> String {
    let mut units = split_units(existing);
    for unit in split_units(fragment) {
        match &unit.kind {
            UnitKind::Docstring => {
                if !units.iter().any(|u| u.kind == UnitKind::Docstring) {
                    units.insert(0, unit);
                }
            }
            UnitKind::Import => {
                if !units
                    .iter()
                    .any(|u| u.kind == UnitKind::Import && u.text == unit.text)
                {
                    let at = units
                        .iter()
                        .rposition(|u| matches!(u.kind, UnitKind::Import | UnitKind::Docstring))
                        .map_or(0, |p| p + 1);
                    units.insert(at, unit);
                }
            }
            UnitKind::Def(name) => match units.iter().position(|u| u.def_name() == Some(name)) {
                Some(at) => units[at] = unit,
                None => units.push(unit),
            },
            UnitKind::Other => {
                if !units.iter().any(|u| u.text == unit.text) {
                    units.push(unit);
                }
            }
        }
    }
    render(&units)
}

/// Joins units with conventional spacing: imports grouped, two blank lines around definitions.
pub fn render(units: &[Unit]) -> String {
    let mut out = String::new();
    for (i, unit) in units.iter().enumerate() {
        if i > 0 {
            let previous = &units[i - 1].kind;
            let gap = match (previous, &unit.kind) {
                (UnitKind::Import, UnitKind::Import) => "\n",
                (UnitKind::Docstring, _) => "\n\n",
                (_, UnitKind::Def(_)) | (UnitKind::Def(_), _) => "\n\n\n",
                _ => "\n\n",
            };
            out.push_str(gap);
        }
        out.push_str(&unit.text);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "\"\"\"Stats.\"\"\"\n\nimport math\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n";

    #[test]
    fn replaces_a_definition_in_place() {
        let merged = merge_python(BASE, "def a():\n    return 10\n");
        assert_eq!(merged, BASE.replace("return 1\n", "return 10\n"));
    }

    #[test]
    fn appends_new_definitions_and_hoists_imports() {
        let merged = merge_python(
            BASE,
            "import statistics\nimport math\n\ndef c():\n    return statistics.mean([1])\n",
        );
        assert_eq!(
            merged,
            "\"\"\"Stats.\"\"\"\n\nimport math\nimport statistics\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return statistics.mean([1])\n"
        );
    }

    #[test]
    fn merging_the_same_fragment_twice_is_a_no_op() {
        let fragment = "from x import y\n\n\ndef c():\n    return y\n";
        let once = merge_python(BASE, fragment);
        assert_eq!(merge_python(&once, fragment), once);
    }

    #[test]
    fn empty_file_takes_the_fragment_normalised() {
        assert_eq!(
            merge_python("", "import os\ndef f():\n    pass"),
            "import os\n\n\ndef f():\n    pass\n"
        );
    }
}

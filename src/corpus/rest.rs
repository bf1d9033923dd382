//! The library's own names that a plan leaves out, bound into the generated package before
//! the evaluation.
//!
//! A plan with `functions` keeps a few functions of a module, and its reference is the
//! library's test classes for them. Those test modules still touch other names of the library
//! at import (`cls = mi.peekable` in a class body), and one missing name stops the whole test
//! module from being collected, on both sides alike, so nothing is measured. A plan of whole
//! modules leaves names out too: `rpg extract` plans only data whose value is a literal, so a
//! constant built by an expression (`UTC = Utc()`, `D_ALT_EXT = "P" + DATE_EXT_COMPLETE`) that
//! the package's `__init__.py` re-exports is missing, and with it every test module that
//! imports it (isodate: four of five, on both sides). So before the evaluation each package
//! that holds a planned module gets:
//!
//! - the library's original module copied beside the generated one, as `_corpus_<m>.py`
//!   (nothing generated imports it);
//! - a block at the end of its `__init__.py`, after [`REST_MARKER`], that binds every public
//!   name of those copies and of the support modules in the same package which the package
//!   does not bind already **and the plan does not plan**. A planned name is never taken from
//!   the library, even when the generated code lacks it: what the reference scores is only
//!   generated code.
//!
//! Only regular files of the sdist are copied; a copy that fails to import binds nothing.
//! Applying the block twice gives the same bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::prepare::{PrepareError, Support, io};
use crate::rpg::Rpg;

/// Where the block begins in a package's `__init__.py`.
pub(crate) const REST_MARKER: &str = "# --- zerorepo bench: names of the library that the plan leaves out (not generated, not scored) ---";

/// One package's part: the original modules to copy and the block for its `__init__.py`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rest {
    pub copies: Vec<Support>,
    /// The package's `__init__.py`, relative to the repository root.
    pub init: PathBuf,
    pub block: String,
}

/// The parts for the leaves of `rpg`, whose modules are read from the sdist's source directory
/// `src`; `support` are the plan's support modules (dotted).
pub fn rest_of(src: &Path, rpg: &Rpg, support: &[String]) -> Vec<Rest> {
    // package dir (`src/more_itertools`) -> (planned names, module stems)
    let mut packages: BTreeMap<&str, (BTreeSet<&str>, BTreeSet<&str>)> = BTreeMap::new();
    for leaf in rpg.nodes.iter().filter(|n| n.is_leaf()) {
        let Some((dir, file)) = leaf.file_path.as_deref().and_then(|f| f.rsplit_once('/')) else {
            continue;
        };
        let Some(stem) = file.strip_suffix(".py").filter(|s| *s != "__init__") else {
            continue;
        };
        let entry = packages.entry(dir).or_default();
        entry.0.insert(leaf.name.as_str());
        entry.1.insert(stem);
    }
    let mut parts = Vec::new();
    for (dir, (planned, stems)) in packages {
        let Some(inside) = dir.strip_prefix("src/") else {
            continue;
        };
        let dotted = inside.replace('/', ".");
        let mut modules: Vec<String> = stems.iter().map(|s| format!("._corpus_{s}")).collect();
        modules.extend(
            support
                .iter()
                .filter_map(|s| s.strip_prefix(&dotted)?.strip_prefix('.'))
                .filter(|rest| !rest.contains('.'))
                .map(|rest| format!(".{rest}")),
        );
        let copies = stems
            .iter()
            .map(|stem| Support {
                from: src.join(inside).join(format!("{stem}.py")),
                to: Path::new(dir).join(format!("_corpus_{stem}.py")),
            })
            .collect();
        parts.push(Rest {
            copies,
            init: Path::new(dir).join("__init__.py"),
            block: block(&planned, &modules),
        });
    }
    parts
}

/// The Python block that binds the left-out names of `modules` (relative dotted names).
fn block(planned: &BTreeSet<&str>, modules: &[String]) -> String {
    let quote = |s: &str| format!("\"{s}\"");
    let planned: Vec<String> = planned.iter().map(|n| quote(n)).collect();
    let modules: Vec<String> = modules.iter().map(|m| quote(m)).collect();
    format!(
        "{REST_MARKER}\n\
         def _zerorepo_bench_rest():\n\
         \x20   import importlib\n\
         \x20   planned = {{{planned}}}\n\
         \x20   for dotted in ({modules},):\n\
         \x20       try:\n\
         \x20           module = importlib.import_module(dotted, __name__)\n\
         \x20       except Exception:\n\
         \x20           continue\n\
         \x20       names = getattr(module, \"__all__\", None)\n\
         \x20       if names is None:\n\
         \x20           names = [n for n in vars(module) if not n.startswith(\"_\")]\n\
         \x20       for name in names:\n\
         \x20           if name not in planned and name not in globals() and hasattr(module, name):\n\
         \x20               globals()[name] = getattr(module, name)\n\
         \n\
         \n\
         _zerorepo_bench_rest()\n\
         del _zerorepo_bench_rest\n",
        planned = planned.join(", "),
        modules = modules.join(", "),
    )
}

/// Copies the originals into the generated repository `out` and appends each block; a package
/// the generation did not write is left alone.
pub fn add_rest(out: &Path, parts: &[Rest]) -> Result<(), PrepareError> {
    for part in parts {
        let init = out.join(&part.init);
        let Ok(text) = std::fs::read_to_string(&init) else {
            continue;
        };
        for copy in &part.copies {
            // Only a regular file of the sdist is copied, never what a link points at.
            let regular = std::fs::symlink_metadata(&copy.from).is_ok_and(|m| m.is_file());
            if !regular {
                continue;
            }
            let target = out.join(&copy.to);
            std::fs::copy(&copy.from, &target).map_err(io(&target))?;
        }
        let kept = text
            .split_once(REST_MARKER)
            .map_or(text.as_str(), |(before, _)| before)
            .trim_end();
        std::fs::write(&init, format!("{kept}\n\n\n{}", part.block)).map_err(io(&init))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpg::Node;

    /// What `code` prints, run with the repository's `src` on the path; stderr on failure.
    fn run_python(repo: &Path, code: &str) -> String {
        let python = std::env::var_os("ZEROREPO_PYTHON").unwrap_or_else(|| "python3".into());
        let output = std::process::Command::new(python)
            .args(["-c", code])
            .env("PYTHONPATH", repo.join("src"))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn leaf(name: &str, file: &str) -> Node {
        Node::function_for_test(&format!("{file}:{name}"), name, file)
    }

    #[test]
    fn the_package_binds_what_the_plan_leaves_out_and_never_a_planned_name() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("lib")).unwrap();
        let original = "def chunked(xs):\n    return 'library'\n\n\
                        def first(xs):\n    return 'library'\n\n\
                        class peekable:\n    pass\n\n\
                        def _private():\n    pass\n";
        std::fs::write(src.path().join("lib/more.py"), original).unwrap();
        let rpg = Rpg {
            nodes: vec![
                leaf("chunked", "src/lib/more.py"),
                leaf("first", "src/lib/more.py"),
            ],
            edges: vec![],
            metadata: Default::default(),
            extra: Default::default(),
        };
        let parts = rest_of(src.path(), &rpg, &["lib.recipes".into(), "other.x".into()]);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].init, Path::new("src/lib/__init__.py"));
        assert!(
            parts[0]
                .block
                .contains("planned = {\"chunked\", \"first\"}\n    for dotted in (\"._corpus_more\", \".recipes\",):"),
            "{}",
            parts[0].block
        );

        // The generated package: `chunked` written, `first` missing.
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(out.path().join("src/lib")).unwrap();
        std::fs::write(
            out.path().join("src/lib/more.py"),
            "def chunked(xs):\n    return 'generated'\n",
        )
        .unwrap();
        std::fs::write(
            out.path().join("src/lib/__init__.py"),
            "from .more import chunked\n",
        )
        .unwrap();
        add_rest(out.path(), &parts).unwrap();
        add_rest(out.path(), &parts).unwrap(); // again: the same bytes
        let init = std::fs::read_to_string(out.path().join("src/lib/__init__.py")).unwrap();
        assert_eq!(init.matches(REST_MARKER).count(), 1, "{init}");
        assert!(out.path().join("src/lib/_corpus_more.py").is_file());

        let probe = "import lib\n\
                     print(lib.chunked([]), hasattr(lib, 'first'), hasattr(lib, 'peekable'), hasattr(lib, '_private'))\n";
        assert_eq!(
            run_python(out.path(), probe),
            "generated False True False\n"
        );
    }

    /// A plan of whole modules: `rpg extract` plans only literal data, so constants built by
    /// an expression are missing from the generated package; they come from the library,
    /// and a planned name still never does.
    #[test]
    fn a_whole_module_plan_gets_the_constants_no_literal_could_plan() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("lib")).unwrap();
        let original = "DATE = '%Y'\n\n\nclass Utc:\n    origin = 'library'\n\n\n\
                        UTC = Utc()\nFULL = DATE + 'T'\n";
        std::fs::write(src.path().join("lib/tz.py"), original).unwrap();
        let rpg = Rpg {
            nodes: vec![leaf("Utc", "src/lib/tz.py"), leaf("DATE", "src/lib/tz.py")],
            edges: vec![],
            metadata: Default::default(),
            extra: Default::default(),
        };
        let parts = rest_of(src.path(), &rpg, &[]);
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(out.path().join("src/lib")).unwrap();
        let generated = "DATE = '%Y'\n\n\nclass Utc:\n    origin = 'generated'\n";
        std::fs::write(out.path().join("src/lib/tz.py"), generated).unwrap();
        std::fs::write(
            out.path().join("src/lib/__init__.py"),
            "from .tz import DATE, Utc\n",
        )
        .unwrap();
        add_rest(out.path(), &parts).unwrap();

        let probe = "from lib import UTC, FULL, Utc\nprint(FULL, Utc.origin, type(UTC).__name__)\n";
        assert_eq!(run_python(out.path(), probe), "%YT generated Utc\n");
    }
}

//! The crate's layers, as `src/lib.rs` draws them, hold in the code: a module uses only
//! modules of its own layer or below, no two modules use each other, and every module of
//! `lib.rs` is in the drawing. The drawing is read from `lib.rs` itself, so the diagram a
//! newcomer reads and the rule the code obeys cannot drift apart.
//!
//! "Uses" means a `crate::<module>` path in the module's code outside comments and outside
//! its `#[cfg(test)]` part (tests may reach anywhere).
//!
//! Two rules of names ride along: no type name is defined twice (one name, one concept), and
//! no `pub` item is used only in its own file (the modules the tests, benches and fuzz
//! targets use are `pub mod`, so inside them only a narrower visibility lets the compiler's
//! dead-code check see an item nothing calls any more; the others are `pub(crate)`, where
//! it sees every item).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `(layer, modules)` from the first ```text block of lib.rs's `//!` doc, top layer first.
fn drawn_layers(lib: &str) -> Vec<(String, Vec<String>)> {
    let doc: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = doc
        .iter()
        .position(|l| *l == "```text")
        .expect("a ```text block");
    doc[start + 1..]
        .iter()
        .take_while(|l| **l != "```")
        .map(|line| {
            let mut words = line.split_whitespace().filter(|w| *w != "·");
            let layer = words.next().expect("a layer name").to_string();
            (layer, words.map(String::from).collect())
        })
        .collect()
}

/// The modules `lib.rs` declares (`pub mod x;`, `pub(crate) mod x;` or an inline `pub mod x {`).
fn declared_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("pub(crate) mod "))
        })
        .map(|rest| rest.trim_end_matches([';', '{', ' ']).to_string())
        .collect()
}

/// The code of a file: without comments and without its `#[cfg(test)]` part.
fn code_of(text: &str) -> String {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `.rs` file under `src/`: its path relative to `src/`, and its text.
fn rs_files() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src()).unwrap().to_path_buf();
                files.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The top-level modules each top-level module's code names as `crate::<name>`.
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in rs_files() {
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let code = code_of(&text);
        let used = uses.entry(module.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                used.insert(name);
            }
        }
    }
    uses
}

#[test]
fn no_module_uses_a_module_above_its_layer_or_one_that_uses_it() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let layers = drawn_layers(&lib);
    assert!(layers.len() >= 3, "lib.rs draws no layers: {layers:?}");
    // Rank 0 is the bottom layer.
    let rank: BTreeMap<&str, (usize, &str)> = layers
        .iter()
        .rev()
        .enumerate()
        .flat_map(|(r, (layer, modules))| {
            modules
                .iter()
                .map(move |m| (m.as_str(), (r, layer.as_str())))
        })
        .collect();
    let declared = declared_modules(&lib);
    let drawn: BTreeSet<String> = rank.keys().map(|m| m.to_string()).collect();
    assert_eq!(
        declared, drawn,
        "lib.rs's modules and its layer drawing name different modules"
    );
    let uses = uses();
    let mut wrong = Vec::new();
    for (module, used) in &uses {
        let (own, own_layer) = rank[module.as_str()];
        for other in used {
            let Some(&(theirs, their_layer)) = rank.get(other.as_str()) else {
                wrong.push(format!(
                    "{module} uses crate::{other}, which lib.rs does not declare"
                ));
                continue;
            };
            if theirs > own {
                wrong.push(format!(
                    "{module} ({own_layer}) uses {other} ({their_layer}), a layer above it"
                ));
            }
            if uses.get(other).is_some_and(|back| back.contains(module)) && module < other {
                wrong.push(format!("{module} and {other} use each other"));
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
    assert_no_cycle(&uses);
}

/// Longer cycles (a → b → c → a) within a layer, by depth-first search.
fn assert_no_cycle(uses: &BTreeMap<String, BTreeSet<String>>) {
    fn visit<'a>(
        module: &'a str,
        uses: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            panic!("import cycle: {} -> {module}", path[at..].join(" -> "));
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for next in uses.get(module).into_iter().flatten() {
            visit(next, uses, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in uses.keys() {
        visit(module, uses, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_layer_check_sees_an_upward_import_and_a_cycle() {
    // The parser the test relies on, on a drawing and code it must reject.
    let lib =
        "//! ```text\n//! top  a\n//! bottom  b · c\n//! ```\npub mod a;\npub mod b;\npub mod c;\n";
    let layers = drawn_layers(lib);
    assert_eq!(
        layers,
        [
            ("top".to_string(), vec!["a".to_string()]),
            ("bottom".to_string(), vec!["b".to_string(), "c".to_string()])
        ]
    );
    assert_eq!(
        declared_modules(lib),
        ["a", "b", "c"].map(String::from).into()
    );
    let code = code_of(
        "use crate::b::X;\n// crate::a in a comment\nfn f() {}\n#[cfg(test)]\nmod tests { use crate::a; }\n",
    );
    assert!(code.contains("crate::b") && !code.contains("crate::a"));
    let cyclic: BTreeMap<String, BTreeSet<String>> = [
        ("b".to_string(), ["c".to_string()].into()),
        ("c".to_string(), ["b".to_string()].into()),
    ]
    .into();
    let caught = std::panic::catch_unwind(|| assert_no_cycle(&cyclic));
    assert!(caught.is_err(), "b -> c -> b must be reported");
}

/// The type names (`struct`, `enum`, `trait`, `type`) a file's code defines.
fn defined_types(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in code.lines() {
        let mut words = line.split_whitespace().peekable();
        // Skip `pub`, `pub(crate)`, `pub(super)`.
        while words.peek().is_some_and(|w| w.starts_with("pub")) {
            words.next();
        }
        let (Some(keyword), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        if !matches!(keyword, "struct" | "enum" | "trait" | "type") {
            continue;
        }
        // An indented `type` is an associated type (`type Target = str;` of a `Deref` impl):
        // it names the trait's item, not a type of the crate.
        if keyword == "type" && line.starts_with(char::is_whitespace) {
            continue;
        }
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            names.push(name);
        }
    }
    names
}

/// Every file under `src/` but the unit tests' own (`tests.rs`), with its path.
fn source_files() -> Vec<(String, String)> {
    rs_files()
        .into_iter()
        .filter(|(rel, _)| rel.file_name().is_some_and(|n| n != "tests.rs"))
        .map(|(rel, text)| (rel.display().to_string(), text))
        .collect()
}

/// The names defined in more than one place, with where: one name, one concept. A command
/// module's `Args` and `Command` (one module per command, as jj does) are the exception.
fn twice_defined(files: &[(String, String)]) -> Vec<String> {
    let mut places: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (path, text) in files {
        for name in defined_types(&code_of(text)) {
            if path.starts_with("cli/") && matches!(name.as_str(), "Args" | "Command") {
                continue;
            }
            places.entry(name).or_default().push(path);
        }
    }
    places
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(name, at)| format!("{name} in {}", at.join(", ")))
        .collect()
}

#[test]
fn no_type_name_is_defined_twice() {
    let twice = twice_defined(&source_files());
    assert!(
        twice.is_empty(),
        "a type name defined in two places names two things:\n{}",
        twice.join("\n")
    );
}

#[test]
fn the_name_check_sees_a_name_defined_twice() {
    let files = [
        (
            "a.rs".to_string(),
            "pub struct Run {\n}\npub(crate) enum Kind { A }\n".to_string(),
        ),
        (
            "b/c.rs".to_string(),
            "struct Run;\n// struct Kind\n#[cfg(test)]\nmod tests { struct Kind; }\n".to_string(),
        ),
        (
            "cli/x.rs".to_string(),
            "pub(crate) struct Args {}\n".to_string(),
        ),
        (
            "cli/y.rs".to_string(),
            "pub(crate) struct Args {}\n".to_string(),
        ),
    ];
    assert_eq!(twice_defined(&files), ["Run in a.rs, b/c.rs"]);
}

/// A `pub` item's keyword and name when `line` defines one (`pub fn x`, `pub async fn x`,
/// `pub struct X`...); `pub(crate)` and `pub(super)` are not `pub`.
fn pub_item(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    if words.next()? != "pub" {
        return None;
    }
    let mut keyword = words.next()?;
    if keyword == "async" || keyword == "unsafe" {
        keyword = words.next()?;
    }
    if !matches!(
        keyword,
        "fn" | "struct" | "enum" | "const" | "trait" | "type" | "static"
    ) {
        return None;
    }
    let name: String = words
        .next()?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Whether `text` holds `name` as a whole word.
fn names(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The text of every `pub` line of `code` up to where it ends: a signature to its `{` or
/// `;` (over several lines), a field to its `,`, a `pub enum` to its closing brace (its
/// variants' fields are as public as it is), and a trait impl's associated type
/// (`type Err = UnknownX;`), which hands its type out as surely as a signature does.
fn pub_signatures(code: &str) -> Vec<String> {
    let lines: Vec<&str> = code.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut found = Vec::new();
    for (i, first) in lines.iter().enumerate() {
        let head = first.trim();
        let associated = indent(first) > 0 && head.starts_with("type ") && head.contains('=');
        if !head.starts_with("pub ") && !associated {
            continue;
        }
        let is_enum = head.starts_with("pub enum ");
        let is_fn = [
            "pub fn ",
            "pub async fn ",
            "pub unsafe fn ",
            "pub const fn ",
        ]
        .iter()
        .any(|k| head.starts_with(k));
        let mut text = String::new();
        for line in &lines[i..] {
            text.push_str(line);
            text.push('\n');
            let end = line.trim_end();
            let done = match (is_enum, is_fn) {
                (true, _) => end.trim() == "}" && indent(line) == indent(first),
                (false, true) => end.ends_with(['{', ';']),
                (false, false) => end.ends_with(['{', ';', ',', '}']),
            };
            if done {
                break;
            }
        }
        found.push(text);
    }
    found
}

/// The `pub` items of `files` (the crate's, their code without tests) that no other file
/// names (`users`: the crate's other files, and the tests, benches and fuzz targets that use the library)
/// and no other `pub` line of their own file shows (a field or a signature that hands them
/// out): they belong in `pub(crate)` or private, where the compiler's dead-code check sees
/// them.
fn pub_used_only_at_home(files: &[(String, String)], users: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, code) in files {
        for line in code.lines() {
            let Some(name) = pub_item(line.trim()) else {
                continue;
            };
            let elsewhere = users
                .iter()
                .any(|(other, text)| other != path && names(text, &name));
            let handed_out = pub_signatures(code)
                .iter()
                .any(|sig| pub_item(sig.trim()).as_deref() != Some(&name) && names(sig, &name));
            if !elsewhere && !handed_out {
                found.push(format!("{name} in {path}"));
            }
        }
    }
    found
}

/// The tests', benches' and fuzz targets' files, the library's users from outside the crate.
fn outside_users() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in ["tests", "benches", "fuzz/fuzz_targets"] {
        let mut stack = vec![root.join(dir)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    found.push((path.display().to_string(), text));
                }
            }
        }
    }
    found
}

#[test]
fn no_pub_item_is_used_only_in_its_own_file() {
    let files: Vec<(String, String)> = source_files()
        .into_iter()
        .map(|(path, text)| (path, code_of(&text)))
        .collect();
    let mut users = files.clone();
    users.extend(outside_users());
    let found = pub_used_only_at_home(&files, &users);
    assert!(
        found.is_empty(),
        "`pub` items nothing outside their file uses (make them `pub(crate)` or private, so \
         the compiler finds them when they die):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_visibility_check_sees_a_pub_item_nobody_else_uses() {
    let files = [
        (
            "a.rs".to_string(),
            "pub fn lonely() {}\npub struct Shown;\npub fn give() -> Shown { Shown }\npub(crate) fn inner() {}\npub const USED: u8 = 1;\npub struct Late;\npub fn late(\n    x: u8,\n) -> Late {\n    Late\n}\npub struct InVariant;\npub enum E {\n    A { x: InVariant },\n}\npub struct Parsed;\npub struct Bad;\nimpl FromStr for Parsed {\n    type Err = Bad;\n}\n"
                .to_string(),
        ),
        (
            "b.rs".to_string(),
            "fn f() { a::give(); a::USED; a::late(1); a::E; a::Parsed; }\n".to_string(),
        ),
    ];
    assert_eq!(pub_used_only_at_home(&files, &files), ["lonely in a.rs"]);
}

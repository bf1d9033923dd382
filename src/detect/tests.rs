use super::*;

#[test]
fn a_manifest_that_is_a_link_or_a_fifo_is_absent_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "[project]\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        dir.path().join("pyproject.toml"),
    )
    .unwrap();
    nix::unistd::mkfifo(
        &dir.path().join("package.json"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    assert_eq!(
        read_optional(&dir.path().join("pyproject.toml")).unwrap(),
        None
    );
    assert_eq!(
        read_optional(&dir.path().join("package.json")).unwrap(),
        None
    );
    assert!(detect(dir.path()).is_ok());
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

fn some(command: &str) -> Option<String> {
    Some(command.to_string())
}

fn node(
    primary_test: Option<String>,
    build: Option<String>,
    lint: Option<String>,
    diagnostic: &str,
) -> Commands {
    Commands {
        stack: Stack::Node,
        primary_test,
        build,
        lint,
        diagnostic_command: diagnostic.to_string(),
    }
}

fn python(tests: bool, ruff: bool) -> Commands {
    Commands {
        stack: Stack::Python,
        primary_test: tests.then(|| PYTEST.to_string()),
        build: some(COMPILEALL),
        lint: ruff.then(|| RUFF.to_string()),
        diagnostic_command: if tests { PYTEST } else { COMPILEALL }.to_string(),
    }
}

#[test]
fn node_repo_with_build_script_diagnoses_with_the_build() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "package.json",
        r#"{"name": "app", "scripts": {"build": "tsc", "test": "vitest run", "lint": "eslint ."}}"#,
    );
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![node(
            some(NPM_TEST),
            some(NPM_BUILD),
            some(NPM_LINT),
            "npm run build"
        )]
    );
}

#[test]
fn node_repo_with_only_a_test_script_diagnoses_with_npm_test() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "package.json",
        r#"{"scripts": {"test": "jest"}}"#,
    );
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![node(some(NPM_TEST), None, None, "npm test")]
    );
}

#[test]
fn node_placeholder_test_script_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "package.json",
        r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1", "lint": "eslint ."}}"#,
    );
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![node(None, None, some(NPM_LINT), "npm run lint")]
    );
}

#[test]
fn node_repo_without_scripts_diagnoses_its_dependency_tree() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "package.json",
        r#"{"name": "lib", "scripts": {"build": " "}}"#,
    );
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![node(None, None, None, "npm ls")]
    );
}

#[test]
fn invalid_package_json_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "package.json", "{\"scripts\": {\"build\": }");
    let err = detect(dir.path()).unwrap_err();
    assert!(matches!(err, DetectError::PackageJson { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&dir.path().join("package.json").display().to_string()),
        "{message}"
    );
    assert!(message.contains("line 1"), "{message}");
}

#[test]
fn package_json_with_non_object_scripts_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "package.json", r#"{"scripts": ["build"]}"#);
    let err = detect(dir.path()).unwrap_err();
    assert!(
        matches!(err, DetectError::PackageJsonShape { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("package.json"), "{err}");
}

#[test]
fn python_repo_with_tests_dir_diagnoses_with_pytest() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pyproject.toml", "[project]\nname = \"pkg\"\n");
    write(dir.path(), "src/pkg/__init__.py", "");
    write(
        dir.path(),
        "tests/test_pkg.py",
        "def test_ok():\n    pass\n",
    );
    assert_eq!(detect(dir.path()).unwrap(), vec![python(true, false)]);
}

#[test]
fn python_test_file_two_levels_deep_counts_as_tests() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "requirements.txt", "requests\n");
    write(dir.path(), "pkg/sub/parser_test.py", "");
    assert_eq!(detect(dir.path()).unwrap(), vec![python(true, false)]);
}

#[test]
fn python_test_file_three_levels_deep_does_not_count() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "main.py", "print('hi')\n");
    write(dir.path(), "a/b/c/test_deep.py", "");
    assert_eq!(detect(dir.path()).unwrap(), vec![python(false, false)]);
}

#[test]
fn python_repo_without_tests_diagnoses_with_compileall() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "main.py", "print('hi')\n");
    assert_eq!(detect(dir.path()).unwrap(), vec![python(false, false)]);
}

#[test]
fn pytest_config_in_pyproject_counts_as_tests_and_ruff_config_enables_lint() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pyproject.toml",
        "[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool.ruff.lint]\nselect = [\"E\"]\n",
    );
    assert_eq!(detect(dir.path()).unwrap(), vec![python(true, true)]);
}

#[test]
fn setup_cfg_pytest_section_and_ruff_toml_are_recognised() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "setup.cfg",
        "[metadata]\nname = x\n\n[tool:pytest]\n",
    );
    write(dir.path(), "ruff.toml", "line-length = 100\n");
    assert_eq!(detect(dir.path()).unwrap(), vec![python(true, true)]);
}

#[test]
fn go_repo_with_test_files_diagnoses_with_go_test() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "go.mod", "module example.com/m\n\ngo 1.22\n");
    write(dir.path(), "main.go", "package main\n");
    write(
        dir.path(),
        "internal/parse/parse_test.go",
        "package parse\n",
    );
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![Commands {
            stack: Stack::Go,
            primary_test: some("go test ./..."),
            build: some("go build ./..."),
            lint: some("go vet ./..."),
            diagnostic_command: "go test ./...".to_string(),
        }]
    );
}

#[test]
fn go_repo_without_test_files_diagnoses_with_go_build() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "go.mod", "module example.com/m\n");
    write(dir.path(), "main.go", "package main\n");
    // Files under vendor/ and testdata/ are not the module's own tests.
    write(dir.path(), "vendor/x/x_test.go", "package x\n");
    write(dir.path(), "testdata/y_test.go", "package y\n");
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![Commands {
            stack: Stack::Go,
            primary_test: some("go test ./..."),
            build: some("go build ./..."),
            lint: some("go vet ./..."),
            diagnostic_command: "go build ./...".to_string(),
        }]
    );
}

#[test]
fn rust_repo_with_unit_tests_diagnoses_with_cargo_test() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Cargo.toml", "[package]\nname = \"x\"\n");
    write(
        dir.path(),
        "src/lib.rs",
        "pub fn f() {}\n#[cfg(test)]\nmod tests {}\n",
    );
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![Commands {
            stack: Stack::Rust,
            primary_test: some("cargo test"),
            build: some("cargo build"),
            lint: some("cargo clippy"),
            diagnostic_command: "cargo test".to_string(),
        }]
    );
}

#[test]
fn rust_repo_with_integration_tests_dir_diagnoses_with_cargo_test() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Cargo.toml", "[package]\nname = \"x\"\n");
    write(dir.path(), "src/lib.rs", "pub fn f() {}\n");
    write(dir.path(), "tests/it.rs", "");
    assert_eq!(
        detect(dir.path()).unwrap()[0].diagnostic_command,
        "cargo test"
    );
}

#[test]
fn rust_repo_without_tests_diagnoses_with_cargo_build() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Cargo.toml", "[package]\nname = \"x\"\n");
    write(dir.path(), "src/main.rs", "fn main() {}\n");
    // Build output is never scanned.
    write(
        dir.path(),
        "target/debug/build/gen.rs",
        "#[test]\nfn t() {}\n",
    );
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![Commands {
            stack: Stack::Rust,
            primary_test: some("cargo test"),
            build: some("cargo build"),
            lint: some("cargo clippy"),
            diagnostic_command: "cargo build".to_string(),
        }]
    );
}

#[test]
fn empty_directory_detects_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(detect(dir.path()).unwrap(), Vec::new());
}

#[test]
fn missing_directory_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = detect(&missing).unwrap_err();
    assert!(
        matches!(&err, DetectError::Io { path, .. } if *path == missing),
        "{err:?}"
    );
}

#[test]
fn repo_with_python_and_node_gives_both_node_first() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "package.json",
        r#"{"scripts": {"build": "vite build"}}"#,
    );
    write(dir.path(), "requirements.txt", "flask\n");
    write(dir.path(), "app.py", "");
    write(dir.path(), "test_app.py", "");
    assert_eq!(
        detect(dir.path()).unwrap(),
        vec![
            node(None, some(NPM_BUILD), None, "npm run build"),
            python(true, false),
        ]
    );
}

#[test]
fn all_four_stacks_come_in_rust_go_node_python_order() {
    let files = Files {
        cargo_toml: true,
        go_mod: true,
        package_scripts: Some(BTreeMap::new()),
        python: true,
        ..Files::default()
    };
    let stacks: Vec<Stack> = detect_from_files(&files)
        .iter()
        .map(|commands| commands.stack)
        .collect();
    assert_eq!(
        stacks,
        vec![Stack::Rust, Stack::Go, Stack::Node, Stack::Python]
    );
}

#[test]
fn commands_serialize_with_snake_case_stack() {
    let json = serde_json::to_value(python(false, false)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "stack": "python",
            "primary_test": null,
            "build": "python -m compileall -q .",
            "lint": null,
            "diagnostic_command": "python -m compileall -q .",
        })
    );
}

#[test]
fn section_match_needs_the_whole_name_or_a_dotted_child() {
    assert!(has_section("[tool.ruff]\n", "tool.ruff"));
    assert!(has_section("  [ tool.ruff.lint ]\n", "tool.ruff"));
    assert!(!has_section("[tool.ruffian]\n", "tool.ruff"));
    assert!(!has_section("x = \"[tool.ruff]\"\n", "tool.ruff"));
}

//! Small CLI behaviours: help texts, detection.

use super::support::{fixture, run, zerorepo};

#[test]
fn detect_finds_the_python_stack_of_a_reference_repository() {
    let (code, stdout, stderr) = run(zerorepo()
        .arg("detect")
        .arg(fixture("ml_lib").join("reference"))
        .arg("--json"));
    assert_eq!(code, 0, "{stderr}");
    let found: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        found,
        serde_json::json!([{
            "stack": "python",
            "primary_test": "python -m pytest -q",
            "build": "python -m compileall -q .",
            "lint": null,
            "diagnostic_command": "python -m pytest -q"
        }])
    );
}

#[test]
fn generate_help_explains_resume_sandbox_and_exit_codes() {
    let (code, stdout, _) = run(zerorepo().args(["generate", "--help"]));
    assert_eq!(code, 0);
    for needle in [
        "resumes",
        "--start-from-node",
        "--sandbox",
        "bubblewrap",
        "none",
        "Exit codes",
    ] {
        assert!(
            stdout.contains(needle),
            "`{needle}` missing from:\n{stdout}"
        );
    }
}

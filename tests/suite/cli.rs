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

#[test]
fn completion_scripts_know_every_command_and_bash_reads_its_script() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, stdout, stderr) = run(zerorepo().args(["completions", shell]));
        assert_eq!(code, 0, "{stderr}");
        // fish names long flags without their dashes (`-l max-retries`).
        for needle in ["generate", "eval", "max-retries", "start-from-node"] {
            assert!(stdout.contains(needle), "{shell}: `{needle}` missing");
        }
    }
    let (_, script, _) = run(zerorepo().args(["completions", "bash"]));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zerorepo.bash");
    std::fs::write(&path, script).unwrap();
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let (code, _, stderr) = run(zerorepo().args(["completions", "powershell-or-not"]));
    assert_eq!(code, 2, "{stderr}");
}

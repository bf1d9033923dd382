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

/// zerorepo.toml (issue 17): found in the current directory or named with --config; its
/// settings are flag defaults (flags > environment > file > defaults); a bad file stops the
/// command with exit 2, naming the file and the key, and never echoes a secret.
#[test]
fn the_config_file_sets_defaults_under_flags_and_environment_and_bad_files_are_refused() {
    if super::support::require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Provider and backend decide what runs: the user's own file (issue 38), not ./zerorepo.toml.
    let home = dir.path().join("config");
    std::fs::create_dir_all(home.join("zerorepo")).unwrap();
    std::fs::write(
        home.join("zerorepo/zerorepo.toml"),
        format!(
            "[model]\nprovider = \"scripted:{}\"\n[sandbox]\nbackend = \"docker\"\n\
             test_timeout_secs = 45\n[generate]\ncandidates = 2\n",
            super::generation::script_of("chain").display()
        ),
    )
    .unwrap();
    let show = |extra: &[(&str, &str)]| {
        let mut cmd = zerorepo();
        cmd.current_dir(dir.path())
            .env_remove("ZEROREPO_SANDBOX")
            .env("XDG_CONFIG_HOME", &home)
            .args(["config", "show", "--json"]);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let (code, stdout, stderr) = run(&mut cmd);
        assert_eq!(code, 0, "{stderr}");
        let shown: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let find = |key: &str| {
            let s = shown["settings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["key"] == key)
                .unwrap()
                .clone();
            (
                s["value"].as_str().unwrap().to_string(),
                s["source"].as_str().unwrap().to_string(),
            )
        };
        (
            find("sandbox.backend"),
            find("sandbox.test_timeout_secs"),
            find("generate.jobs"),
        )
    };
    let (backend, timeout, jobs) = show(&[]);
    assert_eq!(backend, ("docker".into(), "file".into()));
    assert_eq!(timeout, ("45".into(), "file".into()));
    assert_eq!(jobs, ("2".into(), "default".into()));
    let (backend, _, _) = show(&[("ZEROREPO_SANDBOX", "none")]);
    assert_eq!(backend, ("none".into(), "environment".into()));

    // A real run takes its provider from the file; a flag overrides the file's sandbox.
    let (code, stdout, stderr) = run(zerorepo()
        .current_dir(dir.path())
        .env_remove("ZEROREPO_SANDBOX")
        .env("XDG_CONFIG_HOME", &home)
        .arg("generate")
        .arg(fixture("chain").join("rpg.json"))
        .arg("--out")
        .arg(&out)
        .args(["--sandbox", super::support::sandbox_backend(), "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");

    // Bad files: an unknown key, a secret, a file that is not there.
    for (text, expected) in [
        ("[generate]\njob = 2\n", "unknown field `job`"),
        (
            "[model]\napi_key = \"sk-live-123\"\n",
            "looks like a secret",
        ),
    ] {
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, text).unwrap();
        let (code, stdout, stderr) =
            run(zerorepo().arg("--config").arg(&bad).arg("status").arg(&out));
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(
            stderr.contains("bad.toml") && stderr.contains(expected),
            "{stderr}"
        );
        assert!(!stderr.contains("sk-live-123"), "{stderr}");
    }
    let (code, _, stderr) = run(zerorepo()
        .args(["--config", "/nonexistent/zerorepo.toml", "status"])
        .arg(&out));
    assert_eq!(code, 2);
    assert!(stderr.contains("/nonexistent/zerorepo.toml"), "{stderr}");
}

/// A base URL may carry credentials: `config show` names where it came from, never them.
#[test]
fn config_show_never_prints_credentials_written_into_a_base_url() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zerorepo.toml");
    std::fs::write(
        &file,
        "[model]\nbase_url = [\"https://me:hunter2-secret@gpu1:8000/v1\", \"http://gpu2:8000/v1?api_key=abc123\"]\n",
    )
    .unwrap();
    for json in [false, true] {
        let mut cmd = zerorepo();
        cmd.arg("--config").arg(&file).args(["config", "show"]);
        if json {
            cmd.arg("--json");
        }
        let (code, stdout, stderr) = run(&mut cmd);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            !stdout.contains("hunter2") && !stdout.contains("abc123"),
            "{stdout}"
        );
        assert!(
            stdout.contains("https://[REDACTED]@gpu1:8000/v1")
                && stdout.contains("http://gpu2:8000/v1?api_key=[REDACTED]"),
            "{stdout}"
        );
    }
}

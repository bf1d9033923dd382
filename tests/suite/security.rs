//! What an outside probe found around the sandbox, each as a regression test named after it:
//! plan text that became code on the host, secrets a test run could read or print, and an
//! output directory that led git somewhere else.

use std::path::Path;

use super::support;

/// A fake key, set in zerorepo's environment the way a user's real one would be.
const SECRET: &str = "zr-probe-secret-0123456789abcdef";

/// `generate RPG --out DIR --llm scripted:SCRIPT`, run from `cwd` with `OPENAI_API_KEY` set.
fn generate(cwd: &Path, rpg: &str, script: &str, extra: &[&str]) -> (i32, String, String) {
    std::fs::write(cwd.join("rpg.json"), rpg).unwrap();
    std::fs::write(cwd.join("script.jsonl"), script).unwrap();
    support::run(
        support::zerorepo()
            .current_dir(cwd)
            .env("OPENAI_API_KEY", SECRET)
            .args([
                "generate",
                "rpg.json",
                "--out",
                "out",
                "--llm",
                "scripted:script.jsonl",
            ])
            .args(extra),
    )
}

/// Every file under `root` whose bytes contain `needle`.
fn files_containing(root: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn a_module_docstring_with_triple_quotes_cannot_inject_code() {
    let Some(python) = support::require_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let docstring = "x.\"\"\"\nimport os\nopen('canary.txt','a').write('ran')\n\"\"\"";
    let rpg = serde_json::json!({"nodes": [
        {"id": "pkg", "name": "pkg", "type": "package", "node_type": "composite",
         "file_path": "src/pkg"},
        {"id": "mod", "name": "mod", "type": "module", "node_type": "composite",
         "file_path": "src/pkg/mod.py", "docstring": docstring, "parent": "pkg"}
    ]});
    let (code, _, stderr) = generate(dir.path(), &rpg.to_string(), "", &[]);
    assert_eq!(code, 0, "{stderr}");
    for place in [dir.path().to_path_buf(), dir.path().join("out")] {
        assert!(
            !place.join("canary.txt").exists(),
            "the plan's code ran in {place:?}"
        );
    }
    // The module is one docstring, exactly the plan's text, and nothing else.
    let module = dir.path().join("out/src/pkg/mod.py");
    let check = "import ast, sys\ntree = ast.parse(open(sys.argv[1]).read())\nassert len(tree.body) == 1, ast.dump(tree)\nprint(ast.get_docstring(tree, clean=False), end='')";
    let out = std::process::Command::new(python)
        .args(["-c", check])
        .arg(&module)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A docstring of several lines ends on a line of its own.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{docstring}\n")
    );
}

#[test]
fn a_setup_py_node_is_refused_and_nothing_runs_on_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let docstring = "x.\"\"\"\nimport os\nopen('canary.txt','a').write('ran')\n\"\"\"";
    let rpg = serde_json::json!({"nodes": [
        {"id": "setup", "name": "setup", "type": "module", "node_type": "composite",
         "file_path": "setup.py", "docstring": docstring}
    ]});
    let (code, _, stderr) = generate(dir.path(), &rpg.to_string(), "", &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("setup.py"), "{stderr}");
    assert!(!dir.path().join("canary.txt").exists());
    assert!(!dir.path().join("out").exists());
}

/// The install check runs the package's build code: it must run in the sandbox, so a
/// `setup.py` that a node's test file set up cannot touch the host. (Validation refuses a
/// plan's `setup.py`; this covers build code that arrives some other way: a hand-placed file.)
#[test]
fn the_install_check_runs_build_code_inside_the_sandbox() {
    if support::sandbox_backend() == "none" {
        return; // announced by sandbox_backend
    }
    let dir = tempfile::tempdir().unwrap();
    let rpg = serde_json::json!({"nodes": [
        {"id": "pkg", "name": "pkg", "type": "package", "node_type": "composite",
         "file_path": "src/pkg"}
    ]});
    let (code, _, stderr) = generate(dir.path(), &rpg.to_string(), "", &[]);
    assert_eq!(code, 0, "{stderr}");
    let canary = dir.path().join("host-canary.txt");
    let setup = format!(
        "open({:?}, 'a').write('ran')\nfrom setuptools import setup\nsetup()\n",
        canary.display().to_string()
    );
    std::fs::write(dir.path().join("out/setup.py"), setup).unwrap();
    let (_, _, stderr) = generate(dir.path(), &rpg.to_string(), "", &[]);
    assert!(
        !canary.exists(),
        "setup.py ran on the host during the install check: {stderr}"
    );
}

#[test]
fn known_secrets_never_reach_the_journal_checkpoint_report_or_logs() {
    if support::require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rpg = serde_json::json!({"nodes": [
        {"id": "mod", "name": "m", "type": "module", "node_type": "composite",
         "file_path": "src/leak/m.py", "docstring": "Leaks."},
        {"id": "leak", "name": "leak", "type": "function", "node_type": "leaf",
         "file_path": "src/leak/m.py", "docstring": "Returns 2.", "parent": "mod",
         "examples": [">>> leak()\n2"]}
    ]});
    // The code returns 1, so the plan's example fails it: the node fails with the test output
    // as its reason (code that passed the example would be kept for review instead).
    // A test that prints the secret as it is and base64-encoded (behind 0, 1 and 2 bytes), as
    // a test that read it from somewhere would. The source holds it reversed: a secret in a
    // model's answer is refused before it reaches a prompt, which is another wall.
    let reversed: String = SECRET.chars().rev().collect();
    let test = format!(
        "```python\nimport base64\nfrom leak.m import leak\n\n\ndef test_leak():\n    s = {reversed:?}[::-1].encode()\n    shown = [base64.b64encode(p + s).decode() for p in (b'', b'x', b'xy')]\n    print(s.decode(), shown)\n    assert leak() == 2, (s.decode(), shown)\n```\n"
    );
    let script = [
        serde_json::json!({"node": "leak", "role": "test", "attempt": 0, "answer": test}),
        serde_json::json!({"node": "leak", "role": "impl", "attempt": 0,
            "answer": "```python\ndef leak():\n    return 1\n```\n"}),
    ]
    .map(|e| e.to_string())
    .join("\n");
    let (code, stdout, stderr) = generate(
        dir.path(),
        &rpg.to_string(),
        &script,
        // `--votes`: only then is the model's test asked beside the node's example.
        &["--max-retries", "1", "-v", "--votes"],
    );
    assert_eq!(code, 1, "the node must fail: {stderr}");
    let encoded: Vec<String> = {
        // What Python's b64encode gives for the three alignments, minus the edge characters
        // that depend on the neighbouring bytes.
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import base64,sys\ns=sys.argv[1].encode()\nfor p in (b'', b'x', b'xy'):\n    print(base64.b64encode(p+s).decode()[4:-4])",
                SECRET,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect()
    };
    assert_eq!(encoded.len(), 3);
    for needle in std::iter::once(SECRET.to_string()).chain(encoded) {
        assert!(!stdout.contains(&needle), "stdout leaks {needle}");
        assert!(!stderr.contains(&needle), "stderr leaks {needle}: {stderr}");
        let leaks = files_containing(&dir.path().join("out"), &needle);
        assert!(leaks.is_empty(), "{needle} leaked into {leaks:?}");
    }
    // The failure was recorded, redacted, not dropped.
    let checkpoint =
        std::fs::read_to_string(dir.path().join("out/docs/generation_checkpoint.json")).unwrap();
    assert!(checkpoint.contains("[REDACTED]"), "{checkpoint}");
}

/// `generate fixtures/chain --out OUT --llm scripted:EMPTY` plus `extra`.
fn generate_chain(out: &Path, extra: &[&str]) -> (i32, String, String) {
    let script = tempfile::NamedTempFile::new().unwrap();
    let mut llm = std::ffi::OsString::from("scripted:");
    llm.push(script.path());
    support::run(
        support::zerorepo()
            .arg("generate")
            .arg(support::fixture("chain").join("rpg.json"))
            .arg("--out")
            .arg(out)
            .arg("--llm")
            .arg(llm)
            .args(extra),
    )
}

#[test]
fn numeric_flags_out_of_range_are_bad_input_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (flag, value) in [
        ("--test-timeout", "18446744073709551615"),
        ("--test-timeout", "0"),
        ("--max-retries", "4294967295"),
        ("--jobs", "0"),
        ("--jobs", "18446744073709551615"),
        ("--llm-timeout", "18446744073709551615"),
        ("--flush-every", "0"),
    ] {
        let (code, _, stderr) = generate_chain(&out, &[flag, value]);
        assert_eq!(code, 2, "{flag} {value}: {stderr}");
        assert!(!stderr.contains("panicked"), "{flag} {value}: {stderr}");
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
        assert!(!out.exists());
    }
}

#[test]
fn a_git_symlink_or_gitdir_file_in_the_output_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();

    let linked = dir.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(&elsewhere, linked.join(".git")).unwrap();
    let (code, _, stderr) = generate_chain(&linked, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is a symlink"), "{stderr}");

    let gitfile = dir.path().join("gitfile");
    std::fs::create_dir(&gitfile).unwrap();
    let link = format!("gitdir: {}\n", elsewhere.display());
    std::fs::write(gitfile.join(".git"), &link).unwrap();
    let (code, _, stderr) = generate_chain(&gitfile, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("gitdir:"), "{stderr}");

    assert!(
        support::is_empty_dir(&elsewhere),
        "git wrote into the link's target"
    );
    for out in [&linked, &gitfile] {
        let names: Vec<_> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [".git"], "something was written into {out:?}");
    }
}

#[test]
fn an_output_that_is_a_file_or_holds_a_foreign_repository_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "not a directory").unwrap();
    let (code, _, stderr) = generate_chain(&file, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.matches("is not a directory").count(), 1, "{stderr}");
    let (code, _, stderr) = support::run(
        support::zerorepo()
            .arg("validate")
            .arg(support::fixture("chain").join("rpg.json"))
            .arg("--out")
            .arg(&file),
    );
    assert_eq!(code, 2, "validate --out FILE: {stderr}");

    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    let repo = git2::Repository::init(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("notes.txt")).unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let me = git2::Signature::now("me", "me@example.invalid").unwrap();
    repo.commit(Some("HEAD"), &me, &me, "mine", &tree, &[])
        .unwrap();
    let (code, _, stderr) = generate_chain(&foreign, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("notes.txt"), "{stderr}");
    assert_eq!(
        repo.head()
            .unwrap()
            .peel_to_commit()
            .unwrap()
            .message()
            .unwrap(),
        "mine"
    );
    assert!(!foreign.join(".zerorepo").exists());
}

#[test]
fn sigint_during_assembly_exits_130_and_commits_no_report() {
    use std::io::BufRead;
    if support::require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let script = support::fixture("chain").join("script.jsonl");
    let mut child = support::zerorepo()
        .arg("generate")
        .arg(support::fixture("chain").join("rpg.json"))
        .arg("--out")
        .arg(&out)
        .arg("--llm")
        .arg(format!("scripted:{}", script.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        if line.contains("assembling") {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGINT,
            )
            .unwrap();
        }
        seen.push(line);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen:?}");
    let repo = git2::Repository::open(&out).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    assert!(
        !head.message().unwrap_or("").starts_with("chore: assemble"),
        "an interrupted assembly was committed"
    );
    let report = std::fs::read_to_string(out.join("docs/generation_report.md")).unwrap_or_default();
    assert!(!report.contains("0 collected"), "{report}");
    let (code, _, stderr) = support::run(
        support::zerorepo()
            .arg("generate")
            .arg(support::fixture("chain").join("rpg.json"))
            .arg("--out")
            .arg(&out)
            .arg("--llm")
            .arg(format!("scripted:{}", script.display())),
    );
    assert_eq!(code, 0, "{stderr}");
}

/// Security wave 3, finding 1: the end-of-run syntax check started `python3 -c` on the host
/// with the output directory as its working directory, so a generated `linecache.py` at the
/// output's root was imported (a `SyntaxWarning` in any file imports `linecache`) and ran as
/// the user. The check now runs in the sandbox, isolated: the planted module never runs on
/// the host, and the syntax error elsewhere is still found.
#[tokio::test]
async fn the_syntax_check_runs_no_generated_module_on_the_host() {
    if !support::bwrap_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide bubblewrap"
        );
        eprintln!("SKIPPED: bubblewrap or /usr/bin/python3 with pytest is missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("out");
    let marker = dir.path().join("ran-on-the-host");
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(
        repo.join("linecache.py"),
        format!(
            "open({:?}, 'w').write('pwned')\n\ndef getline(*a, **k):\n    return ''\n\ndef checkcache(*a, **k):\n    pass\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(
        repo.join("warns.py"),
        "def f(n):\n    if n is 1:\n        return n\n",
    )
    .unwrap();
    std::fs::write(repo.join("broken.py"), "def f(:\n").unwrap();
    std::fs::write(repo.join("tests/test_ok.py"), "def test_ok():\n    pass\n").unwrap();
    let runner = zerorepo::sandbox::BwrapRunner::new(
        zerorepo::sandbox::SandboxPolicy::default(),
        "/usr/bin/python3",
    )
    .unwrap();
    let files: Vec<String> = ["linecache.py", "warns.py", "broken.py"]
        .map(String::from)
        .to_vec();
    let validation = zerorepo::assemble::validate::validate(
        &repo,
        &files,
        &runner,
        &tokio_util::sync::CancellationToken::new(),
    )
    .await;
    zerorepo::sandbox::TestRunner::shutdown(&runner).await;
    assert!(!marker.exists(), "a generated module ran on the host");
    assert_eq!(
        validation.syntax_errors.len(),
        1,
        "{:?}",
        validation.syntax_errors
    );
    assert!(validation.syntax_errors[0].starts_with("broken.py:"));
}

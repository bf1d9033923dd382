//! The host's Python, probed for what an image needs: which packages a pytest session
//! imports and which extension modules the standard library has.

use super::SandboxError;

/// Run by the host's python: a tiny pytest session (with JUnit XML, as the runner does), then
/// every third-party package it imported on stdout and the standard library's extension
/// modules on stderr. The image then holds exactly what a run needs.
const PROBE: &str = r#"
import glob, io, os, sys, sysconfig, tempfile, contextlib
import pytest
d = tempfile.mkdtemp()
open(os.path.join(d, "test_probe.py"), "w").write("def test_probe():\n    assert True\n")
with contextlib.redirect_stdout(io.StringIO()):
    pytest.main(["-q", "-p", "no:cacheprovider", "--junitxml", os.path.join(d, "j.xml"), d])
stdlib = sysconfig.get_paths()["stdlib"]
paths = {os.path.realpath(sys.executable), "/usr/bin/python3", stdlib}
for mod in list(sys.modules.values()):
    f = getattr(mod, "__file__", None) or ""
    for site in [p for p in sys.path if p.endswith(("dist-packages", "site-packages"))]:
        if f.startswith(site + "/"):
            top = f[len(site) + 1:].split("/")[0]
            paths.add(os.path.join(site, top))
print("\n".join(sorted(paths)))
print("\n".join(glob.glob(stdlib + "/lib-dynload/*.so")), file=sys.stderr)
"#;

/// Runs [`PROBE`]; returns the paths it imported and the extension modules it found. On the
/// host, so from `/` with `PATH` alone: `-c` imports first from the working directory, which
/// may be a hostile repository (its `glob.py` would run with the user's rights).
pub(super) async fn probe_python() -> Result<(Vec<String>, Vec<String>), SandboxError> {
    let out = probe_command()
        .output()
        .await
        .map_err(|source| SandboxError::Spawn {
            program: "/usr/bin/python3".into(),
            source,
        })?;
    if !out.status.success() {
        return Err(SandboxError::Unavailable("/usr/bin/python3 with pytest is needed to build the image (apt-get install python3-pytest)".into()));
    }
    let lines = |bytes: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(str::to_string)
            .collect()
    };
    Ok((lines(&out.stdout), lines(&out.stderr)))
}

fn probe_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new("/usr/bin/python3");
    command
        .args(["-c", PROBE])
        .current_dir("/")
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_image_probe_runs_from_the_root_directory_with_only_path() {
        let probe = probe_command();
        let envs: Vec<_> = probe.as_std().get_envs().map(|(k, _)| k).collect();
        assert_eq!(envs, [std::ffi::OsStr::new("PATH")]);
        assert_eq!(probe.as_std().get_current_dir(), Some(Path::new("/")));
    }
}

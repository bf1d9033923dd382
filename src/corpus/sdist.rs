//! A pinned source distribution: fetched once into a cache, checked against its SHA-256
//! before any use, and unpacked into a fresh directory.
//!
//! The sdist is hostile. Fetching it is done by the ordinary client (`pip download`), but pip
//! prepares an sdist's metadata after downloading it, which runs the package's build code: so
//! the client runs in the sandbox ([`crate::sandbox::TestRunner::run_command`], with a runner
//! whose policy gives it the network and a writable directory, and nothing else of the host),
//! in hash-checking mode, so a file that is not the pinned one is refused before any of it runs.
//! The file is checked again here, before it enters the cache and every time it is used.
//!
//! Unpacking is done here, in Rust, entry by entry: only regular files and directories, each
//! path relative with no `..`, written with `create_new` beneath a fresh directory that holds no
//! link (none is ever made), within limits of size and count. A member that is a link, a
//! device, an absolute path or a climb refuses the whole archive: a pinned sdist has none, so
//! one means the file is not what it claims to be.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use sha2::Digest;
use tokio_util::sync::CancellationToken;

use crate::sandbox::TestRunner;

/// Bytes an sdist may unpack to, and members it may hold: far above any library's, far below
/// what fills a disk.
const MAX_UNPACKED_BYTES: u64 = 512 * 1024 * 1024;
const MAX_MEMBERS: usize = 50_000;

#[derive(Debug, thiserror::Error)]
pub enum SdistError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the download failed: {0}")]
    Download(String),
    #[error(
        "{path} has SHA-256 {actual}, not the pinned {expected}: refused (remove it to fetch again)"
    )]
    Digest {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("{archive}: member `{member}` refused: {why}")]
    Member {
        archive: PathBuf,
        member: String,
        why: &'static str,
    },
    #[error("{archive}: {problem}")]
    Archive { archive: PathBuf, problem: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SdistError + '_ {
    move |source| SdistError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The SHA-256 of a file, lower-case hex.
fn file_sha256(path: &Path) -> Result<String, SdistError> {
    let mut file = std::fs::File::open(path).map_err(io(path))?;
    let mut hash = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hash).map_err(io(path))?;
    Ok(format!("{:x}", hash.finalize()))
}

/// Fails unless `path`'s SHA-256 is `expected`.
pub fn verify(path: &Path, expected: &str) -> Result<(), SdistError> {
    let actual = file_sha256(path)?;
    if actual == expected {
        Ok(())
    } else {
        Err(SdistError::Digest {
            path: path.to_path_buf(),
            expected: expected.to_string(),
            actual,
        })
    }
}

/// What to fetch: `package==version` whose sdist has `sha256`.
#[derive(Debug, Clone, Copy)]
pub struct Pin<'a> {
    pub package: &'a str,
    pub version: &'a str,
    pub sha256: &'a str,
}

impl Pin<'_> {
    fn requirement(&self) -> String {
        format!("{}=={}", self.package, self.version)
    }

    /// The cache's directory for this pin: one file in it, the sdist.
    fn cache_dir(&self, cache: &Path) -> PathBuf {
        cache.join(format!("{}-{}", self.package, self.version))
    }
}

/// The sdist of `pin`, from `cache` or fetched into it by `pip download` in `runner`, checked
/// against the pin either way. A cached file with another digest is refused, not replaced.
pub async fn fetch(
    pin: Pin<'_>,
    cache: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<PathBuf, SdistError> {
    let dir = pin.cache_dir(cache);
    if let Some(cached) = sdist_in(&dir)? {
        verify(&cached, pin.sha256)?;
        return Ok(cached);
    }
    std::fs::create_dir_all(cache).map_err(io(cache))?;
    let scratch = tempfile::Builder::new()
        .prefix(".download-")
        .tempdir_in(cache)
        .map_err(io(cache))?;
    download(pin, scratch.path(), runner, cancel).await?;
    let file = sdist_in(scratch.path())?.ok_or_else(|| {
        SdistError::Download(format!("pip saved no .tar.gz for {}", pin.requirement()))
    })?;
    verify(&file, pin.sha256)?;
    let name = file.file_name().map(PathBuf::from).unwrap_or_default();
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let kept = dir.join(name);
    std::fs::rename(&file, &kept).map_err(io(&kept))?;
    Ok(kept)
}

/// The one `.tar.gz` directly in `dir`, if any; `None` when `dir` does not exist.
fn sdist_in(dir: &Path) -> Result<Option<PathBuf>, SdistError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tar.gz") && entry.file_type().map_err(io(dir))?.is_file() {
            found.push(entry.path());
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(SdistError::Archive {
            archive: dir.to_path_buf(),
            problem: "holds more than one .tar.gz: remove the directory to fetch again".into(),
        }),
    }
}

/// `pip download` of the pin into `dir`, in the sandbox, in hash-checking mode.
async fn download(
    pin: Pin<'_>,
    dir: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<(), SdistError> {
    let requirements = dir.join("requirements.txt");
    let line = format!("{} --hash=sha256:{}\n", pin.requirement(), pin.sha256);
    std::fs::write(&requirements, line).map_err(io(&requirements))?;
    // As root the sandbox's user is nobody with the directory's group: it must write here.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o770)).map_err(io(dir))?;
    let run = runner
        .run_command(dir, &download_argv(), cancel)
        .await
        .map_err(|e| SdistError::Download(e.to_string()))?;
    if run.cancelled {
        return Err(SdistError::Download("interrupted".into()));
    }
    if run.exit_code != Some(0) {
        let tail: Vec<&str> = run.output.lines().rev().take(6).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(SdistError::Download(format!(
            "pip download of {} exited {:?}: {}",
            pin.requirement(),
            run.exit_code,
            tail.join(" | ")
        )));
    }
    Ok(())
}

/// The client's command line, run from the download directory. `--require-hashes` makes pip
/// refuse any file but the pinned one before it prepares (runs) anything of it.
pub(crate) fn download_argv() -> Vec<String> {
    [
        "python3",
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--require-hashes",
        "-r",
        "requirements.txt",
        "-d",
        ".",
    ]
    .map(String::from)
    .to_vec()
}

/// Unpacks the gzipped tar `archive` into `dest` (which must not exist yet) and returns the
/// directory it unpacks to: the one top-level directory every sdist has.
pub fn unpack(archive: &Path, dest: &Path) -> Result<PathBuf, SdistError> {
    unpack_at_most(archive, dest, MAX_UNPACKED_BYTES)
}

/// [`unpack`], refusing an archive whose files add up to more than `most` bytes.
fn unpack_at_most(archive: &Path, dest: &Path, most: u64) -> Result<PathBuf, SdistError> {
    std::fs::create_dir(dest).map_err(io(dest))?;
    let file = std::fs::File::open(archive).map_err(io(archive))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let refuse = |member: &str, why| SdistError::Member {
        archive: archive.to_path_buf(),
        member: member.to_string(),
        why,
    };
    let broken = |e: std::io::Error| SdistError::Archive {
        archive: archive.to_path_buf(),
        problem: e.to_string(),
    };
    let mut written: u64 = 0;
    let mut tops: Vec<String> = Vec::new();
    for (count, entry) in tar.entries().map_err(broken)?.enumerate() {
        let mut entry = entry.map_err(broken)?;
        let raw = entry.path_bytes();
        let member = String::from_utf8_lossy(&raw).into_owned();
        if count >= MAX_MEMBERS {
            return Err(refuse(&member, "the archive has too many members"));
        }
        let kind = entry.header().entry_type();
        let rel = member_path(&member).ok_or_else(|| {
            refuse(
                &member,
                "its path is absolute, climbs out with `..` or is empty",
            )
        })?;
        if !(kind.is_file() || kind.is_dir()) {
            let why = if kind.is_symlink() || kind.is_hard_link() {
                "it is a link"
            } else {
                "it is neither a file nor a directory"
            };
            return Err(refuse(&member, why));
        }
        if let Some(Component::Normal(top)) = rel.components().next() {
            let top = top.to_string_lossy().into_owned();
            if !tops.contains(&top) {
                tops.push(top);
            }
        }
        let target = dest.join(&rel);
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(io(&target))?;
            continue;
        }
        // The size the entry's data has, a PAX `size` included (the ustar header's field
        // can say 0 before a PAX record of 100 GB); the copy is held to it as well.
        let size = entry.size();
        written = written.saturating_add(size);
        if written > most {
            return Err(refuse(&member, "the archive unpacks to too many bytes"));
        }
        write_member(&mut entry.by_ref().take(size), &target)?;
    }
    match tops.as_slice() {
        [one] if dest.join(one).is_dir() => Ok(dest.join(one)),
        _ => Err(SdistError::Archive {
            archive: archive.to_path_buf(),
            problem: format!(
                "an sdist unpacks to one directory; this one to {}",
                if tops.is_empty() {
                    "nothing".into()
                } else {
                    tops.join(", ")
                }
            ),
        }),
    }
}

/// A member's path as a relative path of plain components (`./` dropped), or `None`.
fn member_path(member: &str) -> Option<PathBuf> {
    let mut rel = PathBuf::new();
    for component in Path::new(member).components() {
        match component {
            Component::Normal(part) => rel.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!rel.as_os_str().is_empty()).then_some(rel)
}

/// Writes one file member as a new file (never over an existing one, never through a link:
/// the tree beneath `dest` holds only what this unpacking made).
fn write_member(entry: &mut impl Read, target: &Path) -> Result<(), SdistError> {
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)
        .map_err(io(target))?;
    std::io::copy(entry, &mut out).map_err(io(target))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member: its path, its kind, and its content or link target.
    type Member<'a> = (&'a str, tar::EntryType, &'a str);

    /// A gzipped tar with the given members: `(path, kind, content or link target)`. The
    /// header's name is written raw, so hostile paths go in as an attacker writes them.
    fn archive(dir: &Path, members: &[Member]) -> PathBuf {
        let path = dir.join("x-1.0.tar.gz");
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        let mut builder = tar::Builder::new(gz);
        for (name, kind, body) in members {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_mode(0o644);
            let bytes = name.as_bytes();
            header.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
            if kind.is_symlink() || kind.is_hard_link() {
                header.set_link_name(body).unwrap();
                header.set_size(0);
                header.set_cksum();
                builder.append(&header, std::io::empty()).unwrap();
            } else {
                header.set_size(body.len() as u64);
                header.set_cksum();
                builder.append(&header, body.as_bytes()).unwrap();
            }
        }
        builder.into_inner().unwrap().finish().unwrap();
        path
    }

    use tar::EntryType::{Directory, Regular, Symlink};

    #[test]
    fn a_pax_size_above_the_limit_is_refused_whatever_the_ustar_size_says() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x-1.0.tar.gz");
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        let mut builder = tar::Builder::new(gz);
        let body = vec![0u8; 4096];
        builder
            .append_pax_extensions([("size", body.len().to_string().as_bytes())])
            .unwrap();
        let mut header = tar::Header::new_ustar();
        header.set_path("x-1.0/big.py").unwrap();
        header.set_entry_type(Regular);
        header.set_mode(0o644);
        header.set_size(0);
        header.set_cksum();
        builder.append(&header, std::io::empty()).unwrap();
        // The bytes the PAX size announces, zeros, follow the header (after the end blocks
        // the builder wrote, which are zeros too).
        let mut raw = builder.into_inner().unwrap();
        raw.write_all(&body).unwrap();
        raw.write_all(&[0u8; 1024]).unwrap();
        raw.finish().unwrap();
        let refused = unpack_at_most(&path, &dir.path().join("out"), 1024).unwrap_err();
        assert!(refused.to_string().contains("too many bytes"), "{refused}");
        let root = unpack_at_most(&path, &dir.path().join("out2"), 8192).unwrap();
        assert_eq!(std::fs::metadata(root.join("big.py")).unwrap().len(), 4096);
    }

    #[test]
    fn a_plain_sdist_unpacks_to_its_one_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = archive(
            dir.path(),
            &[
                ("x-1.0/", Directory, ""),
                ("x-1.0/x/__init__.py", Regular, "A = 1\n"),
                ("./x-1.0/tests/test_x.py", Regular, "def test_a(): pass\n"),
            ],
        );
        let root = unpack(&path, &dir.path().join("out")).unwrap();
        assert_eq!(root, dir.path().join("out/x-1.0"));
        let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();
        assert_eq!(read("x/__init__.py"), "A = 1\n");
        assert_eq!(read("tests/test_x.py"), "def test_a(): pass\n");
    }

    #[test]
    fn climbing_absolute_and_link_members_refuse_the_archive_and_write_nothing_outside() {
        let cases: [(&[Member], &str); 5] = [
            (
                &[("x-1.0/../../escaped.py", Regular, "boom")],
                "`x-1.0/../../escaped.py` refused: its path is absolute, climbs",
            ),
            (
                &[("/tmp/absolute-escape.py", Regular, "boom")],
                "`/tmp/absolute-escape.py` refused: its path is absolute",
            ),
            (
                &[("x-1.0/link", Symlink, "/etc")],
                "`x-1.0/link` refused: it is a link",
            ),
            (
                &[("x-1.0/hard", tar::EntryType::Link, "/etc/passwd")],
                "`x-1.0/hard` refused: it is a link",
            ),
            (
                &[("x-1.0/fifo", tar::EntryType::Fifo, "")],
                "neither a file nor a directory",
            ),
        ];
        for (members, expected) in cases {
            let dir = tempfile::tempdir().unwrap();
            let path = archive(dir.path(), members);
            let out = dir.path().join("a/b/out");
            std::fs::create_dir_all(out.parent().unwrap()).unwrap();
            let err = unpack(&path, &out).unwrap_err().to_string();
            assert!(err.contains(expected), "expected `{expected}` in: {err}");
            assert!(!dir.path().join("a/escaped.py").exists());
            assert!(!dir.path().join("escaped.py").exists());
            assert!(std::fs::symlink_metadata(out.join("x-1.0/link")).is_err());
        }
        assert!(!Path::new("/tmp/absolute-escape.py").exists());
    }

    #[test]
    fn a_member_written_twice_or_two_top_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let twice = archive(
            dir.path(),
            &[("x-1.0/a.py", Regular, "1"), ("x-1.0/a.py", Regular, "2")],
        );
        let err = unpack(&twice, &dir.path().join("o1"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a.py"), "{err}");
        let two = archive(
            dir.path(),
            &[("x-1.0/a.py", Regular, "1"), ("y/b.py", Regular, "2")],
        );
        let err = unpack(&two, &dir.path().join("o2"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("one directory; this one to x-1.0, y"), "{err}");
    }

    #[test]
    fn the_digest_is_checked_and_a_mismatch_names_both() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.tar.gz");
        std::fs::write(&file, "abc").unwrap();
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        verify(&file, abc).unwrap();
        let err = verify(&file, &"0".repeat(64)).unwrap_err().to_string();
        assert!(err.contains(abc) && err.contains("refused"), "{err}");
    }

    #[tokio::test]
    async fn a_cached_sdist_with_another_digest_is_refused_without_fetching() {
        let cache = tempfile::tempdir().unwrap();
        let pin = Pin {
            package: "x",
            version: "1.0",
            sha256: &"0".repeat(64),
        };
        let dir = cache.path().join("x-1.0");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("x-1.0.tar.gz"), "tampered").unwrap();
        // A runner that must not be asked: `none` of a missing interpreter fails if it is.
        let runner = crate::sandbox::LocalRunner::new(
            PathBuf::from("/nonexistent/python"),
            std::time::Duration::from_secs(1),
        );
        let err = fetch(pin, cache.path(), &runner, &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(matches!(err, SdistError::Digest { .. }), "{err}");
    }

    #[test]
    fn the_client_runs_in_hash_checking_mode_without_dependencies_or_wheels() {
        let argv = download_argv().join(" ");
        assert_eq!(
            argv,
            "python3 -m pip download --no-deps --no-binary :all: --require-hashes -r requirements.txt -d ."
        );
    }
}

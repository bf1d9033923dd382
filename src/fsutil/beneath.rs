//! Paths as capabilities: every file operation on a directory that is not ours (the
//! repository given to `zerorepo code`) resolves beneath its root with no symbolic link on
//! the way, whatever the tree holds.
//!
//! Each operation opens the root, then resolves the relative path from that descriptor:
//! `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it, else one
//! component at a time with `O_NOFOLLOW | O_DIRECTORY`. A link anywhere in the path (`src`
//! pointing to `/etc`, `.git` pointing to another repository's) is an error, never followed;
//! so is anything that is not a regular file where a file is read (a FIFO would block).
//! Writes are atomic within the file's own directory descriptor: temp file, `fsync`,
//! `renameat`, `fsync` of the directory.
//!
//! [`check_repo_path`] is the naming policy for paths a model or a plan proposes: relative,
//! no `.`/`..`/empty part, no control or bidi character, and never inside `.git` or
//! `.zerorepo` in any case. This module does not decide what to write; it only makes sure
//! the bytes land where the path says, beneath the root.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat, openat2, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// Directory names that are never a repository's own files: git's store and zerorepo's state.
/// Compared without regard to case (`.GIT` is `.git` on a case-insensitive file system, and
/// a tool may copy the tree to one).
pub(crate) const PRIVATE_DIRS: &[&str] = &[".git", ".zerorepo"];

/// The bits of a mode zerorepo reads and writes: read, write and execute for each class.
pub(crate) const PERMISSION_BITS: u32 = 0o777;

/// Why `rel` is not a path zerorepo may create, change or delete in a repository.
pub(crate) fn check_repo_path(rel: &str) -> Result<(), String> {
    let shown = rel.escape_debug();
    if rel.is_empty() {
        return Err("an empty path".into());
    }
    if rel.len() > 4096 {
        return Err(format!("a path of {} bytes is too long", rel.len()));
    }
    if rel.starts_with('/') || rel.starts_with('~') {
        return Err(format!("`{shown}` is outside the repository"));
    }
    if let Some(c) = rel.chars().find(|c| c.is_control() || is_bidi(*c)) {
        return Err(format!(
            "`{shown}` holds the character {}",
            c.escape_unicode()
        ));
    }
    for part in rel.split('/') {
        match part {
            "" | "." => return Err(format!("`{shown}` has an empty or `.` part")),
            ".." => return Err(format!("`{shown}` is outside the repository")),
            _ => {}
        }
        if let Some(private) = PRIVATE_DIRS.iter().find(|p| part.eq_ignore_ascii_case(p)) {
            return Err(format!("`{shown}` is inside {private}"));
        }
    }
    Ok(())
}

/// The characters that reorder text on a terminal (Trojan Source).
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

fn refused(rel: &str, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("`{}` {why}", rel.escape_debug()),
    )
}

/// The parts of a relative path; anything that could climb or is empty is refused.
fn parts(rel: &str) -> io::Result<Vec<&str>> {
    let parts: Vec<&str> = rel.split('/').collect();
    if rel.starts_with('/') || rel.contains('\0') {
        return Err(refused(rel, "is not a relative path"));
    }
    if parts.iter().any(|p| matches!(*p, "" | "." | "..")) {
        return Err(refused(rel, "has an empty, `.` or `..` part"));
    }
    Ok(parts)
}

fn from_errno(rel: &str, errno: Errno) -> io::Error {
    match errno {
        // ELOOP: a link met with RESOLVE_NO_SYMLINKS or O_NOFOLLOW; EXDEV: an escape refused
        // by RESOLVE_BENEATH; ENOTDIR: a link (or file) where a directory was opened.
        Errno::ELOOP | Errno::EXDEV => refused(
            rel,
            "passes through a symbolic link or leaves the directory; refused",
        ),
        other => io::Error::from(other),
    }
}

/// Opens the root directory itself (following links in the root's own path is the
/// caller's choice: it named the directory).
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    nix::fcntl::open(
        root,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// [`open_root`], `None` when the root does not exist (so nothing beneath it does either).
fn open_existing_root(root: &Path) -> io::Result<Option<OwnedFd>> {
    match open_root(root) {
        Ok(fd) => Ok(Some(fd)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens `rel` beneath `root` with no symbolic link on the way (the last part included).
pub fn open(root: &OwnedFd, rel: &str, flags: OFlag, mode: Mode) -> io::Result<OwnedFd> {
    let parts = parts(rel)?;
    let how = OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW)
        .mode(mode)
        .resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_MAGICLINKS,
        );
    match openat2(root, rel, how) {
        Ok(fd) => Ok(fd),
        // Kernels before 5.6, or a seccomp filter that does not know the call.
        Err(Errno::ENOSYS) | Err(Errno::EPERM) => walk(root, &parts, flags, mode),
        Err(e) => Err(from_errno(rel, e)),
    }
}

/// [`open`] one component at a time: each directory with `O_NOFOLLOW | O_DIRECTORY` from
/// the previous one's descriptor. With no `..` part this resolves exactly as `openat2` does.
fn walk(root: &OwnedFd, parts: &[&str], flags: OFlag, mode: Mode) -> io::Result<OwnedFd> {
    let rel = parts.join("/");
    let Some((last, dirs)) = parts.split_last() else {
        return Err(refused(&rel, "is empty"));
    };
    let mut dir = openat(root, ".", dir_flags(), Mode::empty()).map_err(io::Error::from)?;
    for part in dirs {
        dir = openat(&dir, *part, dir_flags(), Mode::empty()).map_err(|e| from_errno(&rel, e))?;
    }
    openat(
        &dir,
        *last,
        flags | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW,
        mode,
    )
    .map_err(|e| from_errno(&rel, e))
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn is_regular(stat: &FileStat) -> bool {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG
}

/// The bytes of the regular file `rel` beneath `root`; `None` when it does not exist.
pub fn read(root: &Path, rel: &str) -> io::Result<Option<Vec<u8>>> {
    let Some(root) = open_existing_root(root)? else {
        return Ok(None);
    };
    // O_NONBLOCK: opening a FIFO planted in the tree must not hang the run.
    let fd = match open(
        &root,
        rel,
        OFlag::O_RDONLY | OFlag::O_NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !is_regular(&fstat(&fd).map_err(io::Error::from)?) {
        return Err(refused(rel, "is not a regular file"));
    }
    let mut bytes = Vec::new();
    File::from(fd).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// The permission bits of the regular file `rel`; `None` when there is none.
pub fn mode(root: &Path, rel: &str) -> io::Result<Option<u32>> {
    let Some(root) = open_existing_root(root)? else {
        return Ok(None);
    };
    match open(&root, rel, OFlag::O_PATH, Mode::empty()) {
        Ok(fd) => {
            let stat = fstat(&fd).map_err(io::Error::from)?;
            Ok(is_regular(&stat).then_some(stat.st_mode & PERMISSION_BITS))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The directory holding `rel` (opened beneath `root`, created when `create`) and the
/// file's name in it; `None` when a parent is missing and not to be created.
fn parent<'r>(
    root: &OwnedFd,
    rel: &'r str,
    create: bool,
) -> io::Result<Option<(OwnedFd, &'r str)>> {
    let parts = parts(rel)?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(refused(rel, "is empty"));
    };
    let mut dir = openat(root, ".", dir_flags(), Mode::empty()).map_err(io::Error::from)?;
    for part in dirs {
        dir = match openat(&dir, *part, dir_flags(), Mode::empty()) {
            Ok(next) => next,
            Err(Errno::ENOENT) if create => {
                match mkdirat(&dir, *part, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(from_errno(rel, e)),
                }
                openat(&dir, *part, dir_flags(), Mode::empty()).map_err(|e| from_errno(rel, e))?
            }
            Err(Errno::ENOENT) => return Ok(None),
            // ENOTDIR with O_NOFOLLOW|O_DIRECTORY is also what a link to a directory gives.
            Err(Errno::ENOTDIR) => {
                return Err(refused(
                    rel,
                    "passes through a symbolic link (or a file) where a directory should be; refused",
                ));
            }
            Err(e) => return Err(from_errno(rel, e)),
        };
    }
    Ok(Some((dir, last)))
}

/// Part of every temp file name (as in [`super::write_atomic`]), so a crash's leftovers can
/// be found.
pub(crate) fn temp_name(name: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        ".{name}{}{}-{unique}",
        super::TEMP_MARKER,
        std::process::id()
    )
}

/// Writes `rel` beneath `root` atomically, creating its directories: a temp file in the
/// same directory descriptor, `fsync`, `renameat` over the name, `fsync` of the directory.
/// `mode`: the permission bits (`None`: those of the file it replaces, else 0666 less the
/// umask). A link at the name itself is replaced, never followed.
pub(crate) fn write_atomic(
    root: &Path,
    rel: &str,
    content: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    // The root is the caller's to name, so it is created as named; what is beneath it is not.
    std::fs::create_dir_all(root)?;
    let root_fd = open_root(root)?;
    let Some((dir, name)) = parent(&root_fd, rel, true)? else {
        return Err(refused(rel, "has no directory to write to"));
    };
    // Permission bits only: no setuid, setgid or sticky bit is ever written, whatever a
    // record or the file before asked (a hostile intent record asked for 0o4755).
    let mode = match mode {
        Some(mode) => Some(mode & PERMISSION_BITS),
        None => match openat(&dir, name, OFlag::O_PATH | OFlag::O_NOFOLLOW, Mode::empty()) {
            Ok(fd) => {
                let stat = fstat(&fd).map_err(io::Error::from)?;
                is_regular(&stat).then_some(stat.st_mode & PERMISSION_BITS)
            }
            Err(_) => None,
        },
    };
    let tmp = temp_name(name);
    let result = (|| -> io::Result<()> {
        let fd = openat(
            &dir,
            tmp.as_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o666),
        )
        .map_err(io::Error::from)?;
        if let Some(mode) = mode {
            fchmod(&fd, Mode::from_bits_truncate(mode)).map_err(io::Error::from)?;
        }
        let mut file = File::from(fd);
        file.write_all(content)?;
        file.sync_data()?;
        renameat(&dir, tmp.as_str(), &dir, name).map_err(|e| from_errno(rel, e))?;
        nix::unistd::fsync(&dir).map_err(io::Error::from)
    })();
    if result.is_err() {
        let _ = unlinkat(&dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
    }
    result
}

/// Deletes the file `rel` beneath `root` (a link at the name is removed itself, not what it
/// points at). `false` when there was nothing to delete.
pub fn remove(root: &Path, rel: &str) -> io::Result<bool> {
    let Some(root_fd) = open_existing_root(root)? else {
        return Ok(false);
    };
    let Some((dir, name)) = parent(&root_fd, rel, false)? else {
        return Ok(false);
    };
    match unlinkat(&dir, name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) => {
            nix::unistd::fsync(&dir).map_err(io::Error::from)?;
            Ok(true)
        }
        Err(Errno::ENOENT) => Ok(false),
        Err(e) => Err(from_errno(rel, e)),
    }
}

/// `Ok` when no part of `rel` beneath `root` is a symbolic link (parts that do not exist
/// yet are fine): the check a plan's paths pass before anything is staged.
pub(crate) fn no_link(root: &Path, rel: &str) -> io::Result<()> {
    let Some(root_fd) = open_existing_root(root)? else {
        return Ok(());
    };
    let Some((dir, name)) = parent(&root_fd, rel, false)? else {
        return Ok(());
    };
    match nix::sys::stat::fstatat(&dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK => {
            Err(refused(rel, "is a symbolic link; refused"))
        }
        _ => Ok(()),
    }
}

/// Removes the directory `rel` beneath `root` if it is empty; `false` if it was not removed.
pub(crate) fn remove_dir_if_empty(root: &Path, rel: &str) -> io::Result<bool> {
    let Some(root_fd) = open_existing_root(root)? else {
        return Ok(false);
    };
    let Some((dir, name)) = parent(&root_fd, rel, false)? else {
        return Ok(false);
    };
    match unlinkat(&dir, name, UnlinkatFlags::RemoveDir) {
        Ok(()) => Ok(true),
        Err(Errno::ENOENT | Errno::ENOTEMPTY | Errno::EEXIST | Errno::ENOTDIR) => Ok(false),
        Err(e) => Err(from_errno(rel, e)),
    }
}

/// A directory's entries: each name with `Some(true)` for a directory, `Some(false)` for a
/// regular file, `None` for anything else.
pub(crate) type Listing = Vec<(String, Option<bool>)>;

/// The names in the directory `rel` beneath `root` (`""`: the root), each with whether it is
/// a directory, a regular file, or something else (links, devices: `None`). Listing never
/// follows a link; `None` when the directory does not exist.
pub(crate) fn list_dir(root: &Path, rel: &str) -> io::Result<Option<Listing>> {
    let Some(root_fd) = open_existing_root(root)? else {
        return Ok(None);
    };
    let dir = if rel.is_empty() {
        root_fd
    } else {
        match open(
            &root_fd,
            rel,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
    };
    let mut listing = nix::dir::Dir::from_fd(dir).map_err(io::Error::from)?;
    let mut read = Vec::new();
    for entry in listing.iter() {
        let entry = entry.map_err(io::Error::from)?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let Some(name) = name.to_str() else {
            continue; // not UTF-8: no path zerorepo could name
        };
        read.push((name.to_string(), entry.file_type()));
    }
    let mut out = Vec::new();
    for (name, kind) in read {
        let kind = match kind {
            Some(nix::dir::Type::Directory) => Some(true),
            Some(nix::dir::Type::File) => Some(false),
            Some(_) => None,
            // The file system does not say: ask, without following a link.
            None => {
                let stat = nix::sys::stat::fstatat(
                    &listing,
                    name.as_str(),
                    nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                )
                .map_err(|e| from_errno(&name, e))?;
                match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
                    SFlag::S_IFDIR => Some(true),
                    SFlag::S_IFREG => Some(false),
                    _ => None,
                }
            }
        };
        out.push((name, kind));
    }
    out.sort();
    Ok(Some(out))
}

/// Every regular file beneath `root` (relative, sorted), leaving out directories named in
/// `skipped` and every path [`check_repo_path`] refuses. Symbolic links are left out, to
/// files and to directories alike: what they point at is not the repository's.
pub(crate) fn list_files(root: &Path, skipped: &[&str]) -> io::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let Some(entries) = list_dir(root, &dir)? else {
            continue;
        };
        for (name, kind) in entries {
            let rel = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            if check_repo_path(&rel).is_err() {
                continue;
            }
            match kind {
                Some(true) if !skipped.contains(&name.as_str()) => stack.push(rel),
                Some(false) => files.push(rel),
                _ => {}
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A root with `inside/` and, beside it, `outside/` holding `secret.txt`; links from the
    /// root to the outside, to a file, and to a directory.
    fn hostile() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        std::fs::write(root.join("pkg/a.py"), "a = 1\n").unwrap();
        symlink(&outside, root.join("out")).unwrap();
        symlink(outside.join("secret.txt"), root.join("linked.txt")).unwrap();
        symlink("../outside", root.join("pkg/up")).unwrap();
        (dir, root, outside)
    }

    #[test]
    fn links_are_never_followed_to_read_write_or_delete() {
        let (_dir, root, outside) = hostile();
        for rel in ["out/secret.txt", "linked.txt", "pkg/up/secret.txt"] {
            assert!(read(&root, rel).is_err(), "read {rel}");
            assert!(
                mode(&root, rel).is_err() || rel == "linked.txt",
                "mode {rel}"
            );
        }
        for rel in ["out/secret.txt", "linked.txt", "pkg/up/x", "out"] {
            assert!(no_link(&root, rel).is_err(), "no_link {rel}");
        }
        assert!(no_link(&root, "pkg/a.py").is_ok() && no_link(&root, "pkg/new/b.py").is_ok());
        for rel in ["out/secret.txt", "out/new.txt", "pkg/up/new/deep.txt"] {
            assert!(write_atomic(&root, rel, b"x", None).is_err(), "write {rel}");
            assert!(remove(&root, rel).is_err(), "remove {rel}");
        }
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
            "secret\n"
        );
        let outside_names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(outside_names, vec![std::ffi::OsString::from("secret.txt")]);
        // A link at the name itself is replaced or removed, its target untouched.
        write_atomic(&root, "linked.txt", b"mine\n", None).unwrap();
        assert!(!root.join("linked.txt").is_symlink());
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
            "secret\n"
        );
        assert!(remove(&root, "out").unwrap());
        assert!(outside.join("secret.txt").exists());
    }

    #[test]
    fn the_component_walk_refuses_links_as_openat2_does() {
        let (_dir, root, _outside) = hostile();
        let fd = open_root(&root).unwrap();
        let parts = |r: &'static str| r.split('/').collect::<Vec<_>>();
        for rel in ["out/secret.txt", "linked.txt", "pkg/up/secret.txt"] {
            assert!(walk(&fd, &parts(rel), OFlag::O_RDONLY, Mode::empty()).is_err());
        }
        assert!(walk(&fd, &parts("pkg/a.py"), OFlag::O_RDONLY, Mode::empty()).is_ok());
    }

    #[test]
    fn files_are_written_read_and_removed_beneath_the_root() {
        let dir = tempfile::tempdir().unwrap();
        write_atomic(dir.path(), "a/b/c.py", b"x = 1\n", Some(0o755)).unwrap();
        assert_eq!(read(dir.path(), "a/b/c.py").unwrap().unwrap(), b"x = 1\n");
        assert_eq!(mode(dir.path(), "a/b/c.py").unwrap(), Some(0o755));
        write_atomic(dir.path(), "a/b/c.py", b"x = 2\n", None).unwrap();
        assert_eq!(mode(dir.path(), "a/b/c.py").unwrap(), Some(0o755));
        assert_eq!(read(dir.path(), "missing/x").unwrap(), None);
        assert!(remove(dir.path(), "a/b/c.py").unwrap());
        assert!(!remove(dir.path(), "a/b/c.py").unwrap());
        assert!(remove_dir_if_empty(dir.path(), "a/b").unwrap());
        for bad in ["../x", "/etc/passwd", "a//b", "a/./b", ""] {
            assert!(write_atomic(dir.path(), bad, b"", None).is_err(), "{bad}");
        }
        let names: Vec<_> = std::fs::read_dir(dir.path().join("a"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn a_fifo_is_refused_instead_of_blocking_the_read() {
        let dir = tempfile::tempdir().unwrap();
        nix::unistd::mkfifo(&dir.path().join("pipe"), Mode::from_bits_truncate(0o644)).unwrap();
        assert!(read(dir.path(), "pipe").is_err());
    }

    #[test]
    fn listing_skips_links_private_dirs_and_unnameable_paths() {
        let (_dir, root, _outside) = hostile();
        std::fs::create_dir_all(root.join(".GIT/hooks")).unwrap();
        std::fs::write(root.join(".GIT/hooks/pre-commit"), "x").unwrap();
        std::fs::write(root.join("new\nline.py"), "x").unwrap();
        std::fs::create_dir_all(root.join("node_modules")).unwrap();
        std::fs::write(root.join("node_modules/x.js"), "x").unwrap();
        assert_eq!(
            list_files(&root, &["node_modules"]).unwrap(),
            vec!["pkg/a.py".to_string()]
        );
    }

    #[test]
    fn private_dirs_in_any_case_and_odd_characters_are_refused() {
        for bad in [
            ".git/hooks/pre-commit",
            ".GIT/config",
            ".Git/hooks/x",
            "a/../.git/x",
            "src/.ZeroRepo/x",
            "../x",
            "/etc/passwd",
            "~/x",
            "a\nb.py",
            "a\tb.py",
            "a\0b",
            "a\u{202E}b.py",
            "a//b",
            "a/./b",
            "a/",
            "",
        ] {
            assert!(check_repo_path(bad).is_err(), "{bad:?}");
        }
        for good in [
            "src/a.py",
            ".github/workflows/ci.yml",
            ".gitignore",
            "a.git/x",
        ] {
            assert_eq!(check_repo_path(good), Ok(()), "{good}");
        }
    }
}

//! Checks of the output directory itself, before anything is written into it.
//!
//! The engine writes only inside DIR, so what DIR already holds decides whether a run is
//! safe: a `.git` that is a symlink or a `gitdir:` file, holds a symlink or names another
//! work tree would make every commit land, or write, somewhere else
//! ([`crate::workspace::git::refuse_foreign_store`], the check `code --git-commit` makes
//! too); a git history or files that zerorepo did not make would be committed
//! along with the generated code (or break assembly on every run). Each is refused, with
//! nothing written, as bad input. DIR is generate's only when it holds generate's mark
//! ([`GENERATED_MARK`]), which `zerorepo code` never writes: a user's repository that holds
//! the `.zerorepo/` folder `code` leaves behind is still the user's. The engine's state
//! folder and its staging copy must be real directories: through a symlink, a run would
//! write wherever it points.

use std::path::Path;

use crate::layout::{GENERATED_MARK, LEGACY_MARK, STATE_DIR, WORK_DIR};

/// Why DIR cannot be generated into, one sentence each; empty when it can.
pub(crate) fn problems(out: &Path) -> Vec<String> {
    let shown = out.display();
    let meta = match std::fs::symlink_metadata(out) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => return vec![format!("{shown}: cannot be read: {e}")],
    };
    if !out.is_dir() {
        let what = if meta.file_type().is_symlink() {
            "a symlink to something that is not a directory"
        } else {
            "not a directory"
        };
        return vec![format!(
            "--out {shown} is {what}; name a new or empty directory"
        )];
    }
    let mut found = Vec::new();
    // A `.git` that is a link or a `gitdir:` file, holds a link, or names another work tree.
    if let Err(why) = crate::workspace::git::refuse_foreign_store(out) {
        found.push(why);
    }
    for state in [STATE_DIR, WORK_DIR] {
        let path = out.join(state);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            found.push(format!(
                "{} is a symlink: zerorepo would write its state wherever it points",
                path.display()
            ));
        }
    }
    if !found.is_empty() || is_generated(out) {
        return found;
    }
    let foreign = foreign_entries(out);
    if !foreign.is_empty() {
        found.push(format!(
            "{shown} already holds files that zerorepo did not write ({}); they would be committed with the generated code. Generate into a new or empty directory",
            foreign.join(", ")
        ));
    }
    found
}

/// Whether DIR was made by `generate` (its mark, or the journal of a run before the mark),
/// read without following a symlink.
pub(crate) fn is_generated(out: &Path) -> bool {
    [GENERATED_MARK, LEGACY_MARK].iter().any(|mark| {
        std::fs::symlink_metadata(out.join(mark)).is_ok_and(|m| m.file_type().is_file())
    })
}

/// What lies in a DIR without generate's mark, sorted, at most a few names.
fn foreign_entries(out: &Path) -> Vec<String> {
    const SHOWN: usize = 5;
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if names.len() > SHOWN {
        let more = names.len() - SHOWN;
        names.truncate(SHOWN);
        names.push(format!("and {more} more"));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_or_empty_directory_or_one_of_ours_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        assert!(problems(&dir.path().join("new")).is_empty());
        assert!(problems(dir.path()).is_empty());
        std::fs::create_dir(dir.path().join(STATE_DIR)).unwrap();
        std::fs::write(dir.path().join(GENERATED_MARK), "").unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join("README.md"), "x").unwrap();
        assert!(problems(dir.path()).is_empty());
    }

    #[test]
    fn a_users_repository_with_the_state_folder_code_leaves_is_still_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(STATE_DIR).join("changes")).unwrap();
        std::fs::write(dir.path().join("README.md"), "mine").unwrap();
        let found = problems(dir.path());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("did not write"), "{found:?}");
    }

    #[test]
    fn state_folders_that_are_symlinks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join(STATE_DIR)).unwrap();
        std::fs::write(out.join(GENERATED_MARK), "").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), out.join(WORK_DIR)).unwrap();
        let found = problems(&out);
        assert!(found[0].contains("work is a symlink"), "{found:?}");
    }

    #[test]
    fn a_file_a_git_link_or_foreign_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(problems(&file)[0].contains("is not a directory"));

        let linked = dir.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(dir.path(), linked.join(".git")).unwrap();
        assert!(problems(&linked)[0].contains("is a symlink"));

        let gitfile = dir.path().join("gitfile");
        std::fs::create_dir(&gitfile).unwrap();
        std::fs::write(gitfile.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(problems(&gitfile)[0].contains("gitdir:"));

        let foreign = dir.path().join("foreign");
        std::fs::create_dir_all(foreign.join(".git")).unwrap();
        std::fs::write(foreign.join("notes.txt"), "x").unwrap();
        let found = problems(&foreign);
        assert_eq!(found.len(), 1);
        assert!(found[0].contains("(.git, notes.txt)"), "{found:?}");

        // A store whose work tree is elsewhere: commits and resets would go there.
        let elsewhere = dir.path().join("elsewhere");
        crate::workspace::git::Git::open_or_init(&elsewhere).unwrap();
        let config = elsewhere.join(".git/config");
        let text = std::fs::read_to_string(&config).unwrap();
        let text = text.replace(
            "[core]",
            &format!("[core]\n\tworktree = {}", dir.path().display()),
        );
        std::fs::write(&config, text).unwrap();
        assert!(problems(&elsewhere)[0].contains("another work tree"));
    }
}

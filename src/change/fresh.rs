//! A function the change added, written again without its failed code in view. Pure.
//!
//! Asked to correct a function it had just added, the 1.5B model gave the failing code back
//! unchanged: on the code corpus's dev half, both additions whose example failed were asked
//! three rounds of three samples at 0.7, and all eighteen answers were the failed function
//! again, token for token. Shown the code, the model copies it; the request and the failure
//! do not outweigh it. A function the change added has nothing to keep but what the request
//! says, so after a round whose answers all gave the failed file back, the added function the
//! failure names is taken out of the file the next round shows and answers against, and the
//! answer is begun as a new definition in its place ([`Start::Add`]): the model writes it
//! again from the request and the failure. A copy of the old text is still told apart: it
//! gives the failed file back. A function the repository had is never taken out: its code is
//! what a fix must keep.

use std::collections::BTreeSet;

use super::start::Start;
use crate::python::words;
use crate::symbols::edit::remove_definition;
use crate::symbols::outline::{SymbolKind, locate_all};

/// The file a fresh start answers against and how its answer begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fresh {
    /// The current text without the function.
    pub base: String,
    /// `ADD AFTER` the definition it followed (`ADD AT END` when it was the first), then its
    /// `def`.
    pub start: Start,
    pub name: String,
}

/// The fresh start of `current` (the file as the change has it; `original` as the repository
/// has it, `None` for a new file) after a check printed `failure`: the first top-level
/// function the change added whose name the failure mentions. `None` when there is none, or
/// when it is all the file has.
pub(super) fn fresh(original: Option<&str>, current: &str, failure: &str) -> Option<Fresh> {
    let had: BTreeSet<String> = match original {
        Some(text) => (locate_all(text).ok()?.into_iter())
            .map(|l| l.symbol.qualified_name)
            .collect(),
        None => BTreeSet::new(),
    };
    let mentioned: BTreeSet<&str> = words(failure).collect();
    let all = locate_all(current).ok()?;
    let top: Vec<_> = (all.iter())
        .filter(|l| !l.symbol.qualified_name.contains('.'))
        .collect();
    let at = top.iter().position(|l| {
        l.symbol.kind == SymbolKind::Function
            && !had.contains(&l.symbol.qualified_name)
            && mentioned.contains(l.symbol.name.as_str())
    })?;
    let name = top[at].symbol.name.clone();
    let (base, _) = remove_definition(current, &name).ok()?;
    if base.trim().is_empty() {
        // Nothing is left to answer against by symbol: the whole file is the answer, as a new
        // file's first task was.
        return None;
    }
    let after = at.checked_sub(1).map(|i| top[i].symbol.name.clone());
    Some(Fresh {
        base,
        start: Start::Add {
            name: name.clone(),
            after,
        },
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "import re\n\n\ndef width(text):\n    return len(text)\n\n\n\
                            def pad(text, n):\n    return text.ljust(n)\n";

    fn with_added(added: &str) -> String {
        format!("{ORIGINAL}\n\n{added}")
    }

    #[test]
    fn the_added_function_the_failure_names_is_taken_out_and_begun_again_after_its_neighbour() {
        let current = with_added("def ljust(text, n):\n    return text + ' ' * n\n");
        let failure = "`ljust('ab', 4)` should return `'ab  '`: got 'ab    '";
        let fresh = fresh(Some(ORIGINAL), &current, failure).expect("a fresh start");
        assert_eq!(fresh.base, ORIGINAL);
        assert_eq!(fresh.name, "ljust");
        assert_eq!(
            fresh.start,
            Start::Add {
                name: "ljust".into(),
                after: Some("pad".into())
            }
        );
    }

    #[test]
    fn a_function_the_repository_had_is_never_taken_out() {
        let changed = ORIGINAL.replace("len(text)", "len(text) + 1");
        assert_eq!(fresh(Some(ORIGINAL), &changed, "width('a') gave 2"), None);
    }

    #[test]
    fn an_added_function_the_failure_does_not_name_stays() {
        let current = with_added("def ljust(text, n):\n    return text\n");
        assert_eq!(
            fresh(Some(ORIGINAL), &current, "pad('a', 2) gave 'a'"),
            None
        );
    }

    #[test]
    fn in_a_new_file_every_function_is_the_changes_and_the_first_one_begins_at_the_end() {
        let current = "import re\n\n\ndef ljust(text, n):\n    return text\n";
        let fresh = fresh(None, current, "ljust('a', 2) gave 'a'").expect("a fresh start");
        assert_eq!(fresh.base, "import re\n");
        assert_eq!(
            fresh.start,
            Start::Add {
                name: "ljust".into(),
                after: None
            }
        );
        let alone = "def ljust(text, n):\n    return text\n";
        assert_eq!(super::fresh(None, alone, "ljust('a', 2) gave 'a'"), None);
    }
}

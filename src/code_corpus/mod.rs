//! The code corpus (issue 40): change requests on real libraries, judged by acceptance tests
//! the model never sees, `zerorepo code` against the single-answer baseline, by `zerorepo
//! bench --code-corpus`.
//!
//! `zerorepo code` checks a change with the request's own examples; that says nothing about
//! whether it did what was asked in general. This corpus is the independent judge: for each
//! request, tests written apart from the request's text, a library's suite that must stay
//! green (a change of behaviour must update the tests that expect the old one), and a
//! reference change written by hand that shows the tests can be passed (`--self-check`).
//!
//! This module owns what is the corpus's own: the file and each request's folder (`file`,
//! read and checked before anything runs), the request's repository and the exact edits
//! (`repo`: the library's files from its pinned sdist, fetched and unpacked by
//! [`crate::corpus`], a git repository, the planted bug), the judge (`judge`: the suite and
//! the acceptance tests in the sandbox), and the figures (`report`, pure). It does not change
//! code: the command runs [`crate::change::run`], as `zerorepo code --yes` does.

mod file;
mod judge;
mod repo;
mod report;

pub use file::{CodeRequest, load, select};
pub use judge::judge;
pub use repo::{apply_edits, copy_library, make_repository};
pub use report::{
    Before, CodeCorpusReport, RequestResult, RequestSide, RequestVerdict, SidesAsked,
    render_markdown,
};

//! The judge: the library's suite and the request's acceptance tests, run in the sandbox on a
//! scratch copy of a repository (never on the host: the repository holds what a model wrote).

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::file::CodeRequest;
use super::repo::{ACCEPTANCE_FILE, RequestRepoError, judge_copy};
use crate::sandbox::{SandboxError, TestRunner};

/// What the judge found on one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub suite_passed: bool,
    pub acceptance_passed: bool,
    /// The tail of the failing run's output, for the report and the self-check's message.
    pub output: String,
}

#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Repo(#[from] RequestRepoError),
    #[error("the sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    #[error("interrupted")]
    Interrupted,
}

/// The suite, then the acceptance tests, on a copy of `repo`.
pub async fn judge(
    request: &CodeRequest,
    repo: &Path,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<Judgement, JudgeError> {
    let copy = judge_copy(repo, Some(&request.acceptance))?;
    let mut output = String::new();
    let mut suite = request.library.suite.clone();
    for node in &request.library.deselect {
        suite.extend(["--deselect".to_string(), node.clone()]);
    }
    let suite = pytest(copy.path(), &suite, runner, cancel, &mut output).await?;
    let acceptance = [ACCEPTANCE_FILE.to_string()];
    let accepted = pytest(copy.path(), &acceptance, runner, cancel, &mut output).await?;
    Ok(Judgement {
        suite_passed: suite,
        acceptance_passed: accepted,
        output,
    })
}

/// `python -m pytest -q ARGS` in the sandbox; a failure's tail is added to `output`.
async fn pytest(
    dir: &Path,
    files: &[String],
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
    output: &mut String,
) -> Result<bool, JudgeError> {
    let mut argv: Vec<String> = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        .map(String::from)
        .to_vec();
    argv.extend(files.iter().cloned());
    let run = runner.run_command(dir, &argv, cancel).await?;
    if run.cancelled {
        return Err(JudgeError::Interrupted);
    }
    let passed = run.exit_code == Some(0) && !run.timed_out;
    if !passed {
        let tail = tail(&run.output, 1_500);
        let killed = match &run.killed_by {
            Some(by) => format!(" (killed: {by})"),
            None => String::new(),
        };
        output.push_str(&format!("$ {}{killed}\n{tail}\n", argv.join(" ")));
    }
    Ok(passed)
}

/// The last `chars` characters of `text`: where pytest's summary is.
fn tail(text: &str, chars: usize) -> &str {
    let count = text.chars().count();
    let skip = count.saturating_sub(chars);
    text.char_indices()
        .nth(skip)
        .map_or("", |(at, _)| &text[at..])
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tail_keeps_the_last_characters_whole() {
        assert_eq!(super::tail("abcdé", 2), "dé");
        assert_eq!(super::tail("ab", 5), "ab");
        assert_eq!(super::tail("", 5), "");
    }
}

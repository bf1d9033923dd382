//! The one error type of the command line, and the one place that picks its exit code.
//!
//! A command fails in one of two ways: the user's input was rejected (exit 2: a bad RPG,
//! flag, directory, node or symbol; nothing was written), or an operation failed (exit 1).
//! Which one is decided when the library's error becomes a `CliError`: by the library where
//! it knows (`UserFault`), by the command at the call site where only the command knows
//! (`CliError::bad_input`), and as "failed" for everything else (`From`).

use std::fmt;

use crate::engine::EngineError;
use crate::eval::EvalError;
use crate::exit;
use crate::llm::model::ModelError;
use crate::localize::LocalizeError;
use crate::pipeline::GenerateError;
use crate::symbols::tools::ToolsError;

/// Why a command stopped. Printed once by `cli::main` as `error: {self}`.
#[derive(Debug)]
pub(crate) enum CliError {
    /// The input was rejected. Only the message is kept: it says what to fix, and the
    /// library's error already names the file or value.
    BadInput(anyhow::Error),
    /// An operation failed; the whole chain of causes is printed.
    Failed(anyhow::Error),
}

impl CliError {
    /// The input was rejected, for the reason `e` gives.
    pub(crate) fn bad_input(e: impl fmt::Display) -> CliError {
        CliError::BadInput(anyhow::Error::msg(e.to_string()))
    }

    /// Says what was being done when the error happened (`what: error`), keeping its kind.
    pub(crate) fn context(self, what: &'static str) -> CliError {
        match self {
            CliError::BadInput(e) => CliError::BadInput(e.context(what)),
            CliError::Failed(e) => CliError::Failed(e.context(what)),
        }
    }

    /// The process's exit code for this error: the only place that decides it.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::BadInput(_) => exit::BAD_INPUT,
            CliError::Failed(_) => exit::FAILED,
        }
    }
}

impl fmt::Display for CliError {
    /// The error and its causes on one line, `outer: inner: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::BadInput(e) | CliError::Failed(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for CliError {}

/// Library errors that know whether the user's input caused them (a missing node or symbol,
/// a checkpoint of another RPG) or an operation failed.
pub(crate) trait UserFault {
    fn is_user_fault(&self) -> bool;
}

impl UserFault for EngineError {
    fn is_user_fault(&self) -> bool {
        self.is_bad_input()
    }
}

impl UserFault for GenerateError {
    fn is_user_fault(&self) -> bool {
        self.is_bad_input()
    }
}

impl UserFault for ToolsError {
    fn is_user_fault(&self) -> bool {
        self.is_bad_input()
    }
}

impl UserFault for EvalError {
    fn is_user_fault(&self) -> bool {
        self.is_bad_input()
    }
}

impl UserFault for LocalizeError {
    fn is_user_fault(&self) -> bool {
        self.is_bad_input()
    }
}

/// The one mapping from a library error that knows its fault to the CLI's error.
impl<E> From<E> for CliError
where
    E: UserFault + std::error::Error + Send + Sync + 'static,
{
    fn from(e: E) -> CliError {
        if e.is_user_fault() {
            CliError::bad_input(e)
        } else {
            CliError::Failed(anyhow::Error::new(e))
        }
    }
}

/// Errors that never mean the input was bad: an operation failed.
macro_rules! failed_from {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for CliError {
            fn from(e: $error) -> CliError {
                CliError::Failed(e.into())
            }
        })*
    };
}

// A model pull that fails (network, pip, checksum) is an operation failing; the one
// `ModelError` that is the user's, an unknown model name, is mapped where it is asked for.
failed_from!(
    anyhow::Error,
    serde_json::Error,
    std::io::Error,
    tokio::task::JoinError,
    ModelError,
);

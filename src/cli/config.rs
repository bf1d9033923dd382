//! `zerorepo.toml` on the command line: finding the file before parsing, turning its settings
//! into the defaults of the flags they stand for, and `zerorepo config show`.
//!
//! The file's values become clap defaults, so clap's own order decides: a flag, then its
//! environment variable, then the file, then the built-in default.

use std::ffi::OsString;
use std::path::PathBuf;

use super::error::CliError;
use super::render;
use crate::config::{self, Config, ConfigError};
use crate::exit;

/// The files in use, if any, and what they say together.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// The trusted file: `--config FILE`, else the user's own.
    pub(crate) path: Option<PathBuf>,
    /// `./zerorepo.toml`, harmless settings only (read over the trusted file).
    pub(crate) local: Option<PathBuf>,
    pub(crate) config: Config,
}

/// The value of `--config FILE` / `--config=FILE` in the raw arguments (it must be known
/// before the parser is built, since the file sets the parser's defaults).
fn config_flag(args: &[OsString]) -> Option<PathBuf> {
    let mut iter = args.iter().skip(1);
    while let Some(arg) = iter.next() {
        if arg == "--" {
            break;
        }
        if arg == "--config" {
            return iter.next().map(PathBuf::from);
        }
        if let Some(value) = arg.to_str().and_then(|a| a.strip_prefix("--config=")) {
            return Some(PathBuf::from(value));
        }
    }
    None
}

/// The configuration for these arguments: the file they name, else the user's own with
/// `./zerorepo.toml` over it (harmless settings only: [`config::load_untrusted`]).
pub(crate) fn load(args: &[OsString]) -> Result<Loaded, ConfigError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let user = config::user_file(|name| std::env::var_os(name));
    let (path, local) = config::locate(config_flag(args).as_deref(), user.as_deref(), &cwd);
    let mut config = match &path {
        Some(path) => config::load(path)?,
        None => Config::default(),
    };
    if let Some(local) = &local {
        config = config.overlaid_by(config::load_untrusted(local, &ceilings())?);
    }
    Ok(Loaded {
        path,
        local,
        config,
    })
}

/// `command` with the file's settings as the defaults of the flags they stand for, in every
/// subcommand that has that flag.
pub(crate) fn with_file_defaults(mut command: clap::Command, config: &Config) -> clap::Command {
    for setting in config.settings() {
        let Some(value) = setting.value else {
            continue;
        };
        let names: Vec<String> = command
            .get_subcommands()
            .filter(|sc| sc.get_arguments().any(|a| a.get_id() == setting.arg))
            .map(|sc| sc.get_name().to_string())
            .collect();
        for name in names {
            let value = value.clone();
            command = command.mut_subcommand(name, |sc| {
                sc.mut_arg(setting.arg, |a| a.default_value(value))
            });
        }
    }
    command
}

/// Where a resolved value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum ValueSource {
    Environment,
    File,
    Default,
    Unset,
}

#[derive(Debug, serde::Serialize)]
struct Resolved {
    key: &'static str,
    flag: String,
    env: Option<String>,
    value: Option<String>,
    source: ValueSource,
}

#[derive(Debug, serde::Serialize)]
struct ShownConfig {
    /// The trusted file (`--config`, else the user's own).
    file: Option<PathBuf>,
    /// `./zerorepo.toml`, which may set harmless options only.
    local_file: Option<PathBuf>,
    settings: Vec<Resolved>,
}

/// Every setting as a run without flags would see it, given the environment `env`. `base`
/// is the parser without the file's defaults.
fn resolve(
    base: &clap::Command,
    config: &Config,
    env: impl Fn(&str) -> Option<String>,
) -> Vec<Resolved> {
    config
        .settings()
        .into_iter()
        .map(|setting| {
            let arg = base
                .get_subcommands()
                .flat_map(|sc| sc.get_arguments())
                .find(|a| a.get_id() == setting.arg);
            let flag = arg
                .and_then(|a| a.get_long())
                .map_or_else(String::new, |l| format!("--{l}"));
            let env_name = arg
                .and_then(|a| a.get_env())
                .map(|e| e.to_string_lossy().into_owned());
            let from_env = env_name.as_deref().and_then(&env);
            let default = arg
                .and_then(|a| a.get_default_values().first())
                .map(|v| v.to_string_lossy().into_owned());
            // A base URL may carry credentials (`https://user:secret@host`): never shown.
            let from_env = from_env.map(|v| crate::redact::redact(&v).into_owned());
            let file_value = setting
                .value
                .map(|v| crate::redact::redact(&v).into_owned());
            let (value, source) = match (from_env, file_value, default) {
                (Some(v), _, _) => (Some(v), ValueSource::Environment),
                (None, Some(v), _) => (Some(v), ValueSource::File),
                (None, None, Some(v)) => (Some(v), ValueSource::Default),
                (None, None, None) => (None, ValueSource::Unset),
            };
            Resolved {
                key: setting.key,
                flag,
                env: env_name,
                value,
                source,
            }
        })
        .collect()
}

/// Configuration files.
#[derive(clap::Subcommand)]
pub(crate) enum Command {
    /// Print every setting zerorepo.toml can hold as a run without flags resolves it (flags >
    /// environment > file > defaults), and where each value came from.
    Show(ShowArgs),
}

#[derive(clap::Args)]
pub(crate) struct ShowArgs {
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(command: Command, loaded: &Loaded, base: &clap::Command) -> Result<u8, CliError> {
    let Command::Show(args) = command;
    // Only the variables the settings name are read, and only to show their values.
    let shown = ShownConfig {
        file: loaded.path.clone(),
        local_file: loaded.local.clone(),
        settings: resolve(base, &loaded.config, |name| std::env::var(name).ok()),
    };
    if args.json {
        print!("{}", render::json(&shown)?);
    } else {
        print!("{}", text(&shown));
    }
    Ok(exit::OK)
}

fn text(shown: &ShownConfig) -> String {
    let mut out = match &shown.file {
        Some(path) => format!("file: {}\n", path.display()),
        None => "file: none (no ~/.config/zerorepo/zerorepo.toml; --config FILE names one)\n"
            .to_string(),
    };
    if let Some(local) = &shown.local_file {
        out.push_str(&format!(
            "local file: {} (harmless settings only; {} come from the file above)\n",
            local.display(),
            config::TRUSTED_ONLY.join(", ")
        ));
    }
    for r in &shown.settings {
        let source = match r.source {
            ValueSource::Environment => format!("environment ({})", r.env.as_deref().unwrap_or("")),
            ValueSource::File => "file".into(),
            ValueSource::Default => "default".into(),
            ValueSource::Unset => "unset".into(),
        };
        out.push_str(&format!(
            "{:<28} {:<32} {:<18} {source}\n",
            r.key,
            r.value.as_deref().unwrap_or("-"),
            r.flag
        ));
    }
    out
}

/// The file named `path` is the user's input: an error in it is exit 2.
pub(crate) fn bad_file(e: ConfigError) -> CliError {
    CliError::bad_input(e)
}

/// The sandbox's built-in limits: the most a `./zerorepo.toml` may ask for.
fn ceilings() -> config::Ceilings {
    let policy = crate::sandbox::SandboxPolicy::default();
    config::Ceilings {
        test_timeout_secs: crate::sandbox::DEFAULT_TIMEOUT.as_secs(),
        memory_mb: policy.memory_mb,
        max_processes: policy.max_processes,
        cpu_secs: policy.cpu_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::path::Path;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_config_flag_is_found_in_either_spelling_before_parsing() {
        let found = |list: &[&str]| config_flag(&args(list));
        assert_eq!(
            found(&["z", "generate", "--config", "a.toml"]),
            Some("a.toml".into())
        );
        assert_eq!(
            found(&["z", "--config=b.toml", "status", "d"]),
            Some("b.toml".into())
        );
        assert_eq!(found(&["z", "status", "d"]), None);
        assert_eq!(found(&["z", "code", "--", "--config", "x"]), None);
    }

    fn file(text: &str) -> Config {
        config::parse(text, Path::new("zerorepo.toml")).unwrap()
    }

    #[test]
    fn flags_beat_the_environment_which_beats_the_file_which_beats_defaults() {
        let config = file("[sandbox]\nbackend = \"docker\"\ntest_timeout_secs = 7\n");
        let command = with_file_defaults(super::super::Cli::command(), &config);
        let sandbox_of = |argv: &[&str]| {
            let m = command.clone().try_get_matches_from(argv).unwrap();
            let (_, sub) = m.subcommand().unwrap();
            (
                sub.get_one::<crate::sandbox::Backend>("sandbox").copied(),
                sub.get_one::<u64>("test_timeout").copied(),
            )
        };
        // The file's values where nothing else says.
        assert_eq!(
            sandbox_of(&["z", "eval", "d", "--reference", "r"]),
            (Some(crate::sandbox::Backend::Docker), Some(7))
        );
        // A flag wins.
        assert_eq!(
            sandbox_of(&[
                "z",
                "eval",
                "d",
                "--reference",
                "r",
                "--sandbox",
                "none",
                "--test-timeout",
                "9"
            ]),
            (Some(crate::sandbox::Backend::None), Some(9))
        );
        // The environment over the file: shown by `resolve`, which reads the same table.
        let base = super::super::Cli::command();
        let resolved = resolve(&base, &config, |name| {
            (name == "ZEROREPO_SANDBOX").then(|| "bwrap".to_string())
        });
        let backend = resolved
            .iter()
            .find(|r| r.key == "sandbox.backend")
            .unwrap();
        assert_eq!(
            (backend.value.as_deref(), backend.source),
            (Some("bwrap"), ValueSource::Environment)
        );
        let timeout = resolved
            .iter()
            .find(|r| r.key == "sandbox.test_timeout_secs")
            .unwrap();
        assert_eq!(
            (timeout.value.as_deref(), timeout.source),
            (Some("7"), ValueSource::File)
        );
        let jobs = resolved.iter().find(|r| r.key == "generate.jobs").unwrap();
        assert_eq!(
            (jobs.value.as_deref(), jobs.source),
            (
                Some(crate::engine::DEFAULT_JOBS.to_string().as_str()),
                ValueSource::Default
            )
        );
        assert_eq!(jobs.flag, "--jobs");
    }

    #[test]
    fn every_setting_names_a_flag_that_exists() {
        let base = super::super::Cli::command();
        for r in resolve(&base, &Config::default(), |_| None) {
            assert!(r.flag.starts_with("--"), "{} has no flag", r.key);
        }
    }
}

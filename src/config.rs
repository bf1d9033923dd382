//! `zerorepo.toml`: the settings a user would otherwise repeat as flags, in one file.
//!
//! Configuration has an owner. The trusted file is the one named by `--config FILE`, else
//! the user's own, `$XDG_CONFIG_HOME/zerorepo/zerorepo.toml` (`~/.config/zerorepo/...`).
//! Without `--config`, a `zerorepo.toml` in the current directory is read too, over the
//! user's file, but it may be an untrusted repository's (`zerorepo code` defaults to
//! `--repo .`), so it may set only harmless options (timeouts, limits, candidates, jobs,
//! profile...): a key in [`TRUSTED_ONLY`] there (the sandbox backend, the Docker engines,
//! the model provider, its file, its endpoints, the variable that holds the key) is an
//! error naming the key and the file, before anything runs. Those settings come only from
//! the user's file, `--config`, flags and the environment. There, too, a sandbox limit may
//! be lowered but not raised above the built-in one ([`Ceilings`]): the limits bound that
//! repository's own tests.
//!
//! Each setting is the default of a command-line flag (the table in [`Config::settings`]),
//! so the precedence is the command line's own: a flag beats its environment variable, which
//! beats the files, which beat the built-in default. `zerorepo config show` prints what that
//! resolves to, and where each value came from.
//!
//! ```toml
//! [model]
//! provider = "openai:gpt-4o-mini,local"   # --llm
//! base_url = ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]   # --llm-base-url: a pool
//! api_key_env = "MY_ENDPOINT_KEY"         # the variable that holds the key, never the key
//! [sandbox]
//! backend = "docker"                      # --sandbox
//! test_timeout_secs = 60                  # --test-timeout
//! docker_hosts = ["unix:///run/docker.sock", "tcp://10.0.0.2:2376"]   # a pool of engines
//! [generate]
//! candidates = 3
//! jobs = 2
//! [code]
//! profile = "strict"
//! ```
//!
//! A key the file does not know is an error naming the key, its line and the file, rather
//! than a setting silently ignored. Secrets are read from the environment only: a key that
//! looks like one (`api_key`, `token`, `password`, `secret`) is refused, so that a key never
//! lands in a file that gets committed. Pure apart from reading the file.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) const FILE_NAME: &str = "zerorepo.toml";

/// Settings that decide what runs and where data goes: a program, a host, an endpoint, a
/// sandbox, the variable whose secret is sent. Only a trusted file may set them.
pub const TRUSTED_ONLY: &[&str] = &[
    "model.provider",
    "model.path",
    "model.base_url",
    "model.api_key_env",
    "sandbox.backend",
    "sandbox.docker_hosts",
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the configuration file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error(
        "{}: `{key}` looks like a secret; secrets are read only from the environment \
         (name the variable with model.api_key_env)",
        path.display()
    )]
    Secret { path: PathBuf, key: String },
    #[error(
        "{}: `{key}` decides what runs or where data is sent, and a zerorepo.toml in the \
         current directory may be an untrusted repository's; set it in your own \
         configuration (~/.config/zerorepo/zerorepo.toml), with --config FILE, a flag or \
         the environment; nothing was run",
        path.display()
    )]
    Untrusted { path: PathBuf, key: String },
    #[error(
        "{}: `{key} = {value}` raises a sandbox limit above its default ({ceiling}), and a \
         zerorepo.toml in the current directory may be an untrusted repository's, whose own \
         tests that limit bounds; there a limit may only be lowered; raise it in your own \
         configuration, with --config FILE, a flag or the environment; nothing was run",
        path.display()
    )]
    Loosens {
        path: PathBuf,
        key: &'static str,
        value: u64,
        ceiling: u64,
    },
}

/// The sandbox's built-in limits, which a file that may be an untrusted repository's may
/// lower but never raise: they bound that repository's own tests (a fork bomb, a memory hog,
/// a test that never ends). The caller gives them, as the sandbox owns them.
#[derive(Debug, Clone, Copy)]
pub struct Ceilings {
    pub test_timeout_secs: u64,
    pub memory_mb: u64,
    pub max_processes: u64,
    pub cpu_secs: u64,
}

/// The whole file. Every section and key is optional.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub model: ModelConfig,
    #[serde(default)]
    pub sandbox: SandboxConfig,
    #[serde(default)]
    pub generate: GenerateConfig,
    #[serde(default)]
    pub code: CodeConfig,
}

/// Which model writes the code (`generate`, `code`, `bench`).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Provider chain, as `--llm`: `local[:PATH]`, `openai:MODEL`, `scripted:PATH`,
    /// `replay:DIR`, comma-separated, tried in order.
    pub provider: Option<String>,
    /// GGUF file of the local model, as `--model`.
    pub path: Option<String>,
    /// Base URL of the OpenAI-compatible endpoint, as `--llm-base-url`; a list (or a
    /// comma-separated string) of several is a pool of endpoints.
    pub base_url: Option<OneOrMany>,
    /// The name of the environment variable that holds the API key, as `--api-key-env`.
    pub api_key_env: Option<String>,
    /// Seconds one HTTP call to the endpoint may take, as `--llm-timeout`.
    pub timeout_secs: Option<u64>,
}

/// Where generated code runs (`generate`, `eval`, `code`, `bench`).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// As `--sandbox`.
    pub backend: Option<Backend>,
    /// Wall-clock limit of one test run in seconds, as `--test-timeout`.
    pub test_timeout_secs: Option<u64>,
    /// Docker engine URLs for `backend = "docker"`, as `--docker-host` (several: a pool); a
    /// list or a comma-separated string.
    pub docker_hosts: Option<OneOrMany>,
    /// Memory of one test run in MiB, as `--memory-mb`.
    pub memory_mb: Option<u64>,
    /// Processes of one test run at once, as `--max-processes`.
    pub max_processes: Option<u64>,
    /// CPU seconds of one test run, as `--cpu-secs`.
    pub cpu_secs: Option<u64>,
}

/// One value, or a list of them (written to the flag comma-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// Which backend runs the tests (`--sandbox`; `sandbox::Backend` is this type).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// bubblewrap when it is installed and works, otherwise an error that says what to install.
    Auto,
    Bwrap,
    /// One long-lived container (needs a Docker engine and `zerorepo sandbox build-image`).
    Docker,
    /// No isolation at all: a plain subprocess (explicit only).
    None,
}

/// The node loop of `generate`.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateConfig {
    /// As `--max-retries`.
    pub max_retries: Option<u32>,
    /// As `--candidates`.
    pub candidates: Option<u32>,
    /// As `--jobs`.
    pub jobs: Option<u32>,
    /// As `--flush-every`.
    pub flush_every: Option<u32>,
}

/// `zerorepo code`.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeConfig {
    /// As `--profile`.
    pub profile: Option<Profile>,
    /// As `--max-corrections`.
    pub max_corrections: Option<u32>,
}

/// What `zerorepo code` verifies on the staged change.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The diagnostic, the tests, the build and the lint the repository's stacks use.
    Strict,
    /// The diagnostic command.
    Fast,
    /// Only that the code parses and compiles.
    Smoke,
}

/// One setting of the file: its key, the flag (clap argument id) whose default it sets, and
/// its value in the flag's syntax when the file gives one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub key: &'static str,
    pub arg: &'static str,
    pub value: Option<String>,
}

/// A value in the syntax of its flag: strings as they are, lists comma-separated.
fn lower<T: Serialize>(value: &Option<T>) -> Option<String> {
    fn flag(value: serde_json::Value) -> String {
        match value {
            serde_json::Value::String(s) => s,
            serde_json::Value::Array(items) => {
                items.into_iter().map(flag).collect::<Vec<_>>().join(",")
            }
            other => other.to_string(),
        }
    }
    value
        .as_ref()
        .and_then(|v| serde_json::to_value(v).ok())
        .map(flag)
}

impl Config {
    /// Every key the file knows, in the file's order, with the flag it stands for.
    pub fn settings(&self) -> Vec<Setting> {
        let (m, s, g, c) = (&self.model, &self.sandbox, &self.generate, &self.code);
        let table = [
            ("model.provider", "llm", lower(&m.provider)),
            ("model.path", "model", lower(&m.path)),
            ("model.base_url", "llm_base_url", lower(&m.base_url)),
            ("model.api_key_env", "api_key_env", lower(&m.api_key_env)),
            ("model.timeout_secs", "llm_timeout", lower(&m.timeout_secs)),
            ("sandbox.backend", "sandbox", lower(&s.backend)),
            (
                "sandbox.test_timeout_secs",
                "test_timeout",
                lower(&s.test_timeout_secs),
            ),
            (
                "sandbox.docker_hosts",
                "docker_host",
                lower(&s.docker_hosts),
            ),
            ("sandbox.memory_mb", "memory_mb", lower(&s.memory_mb)),
            (
                "sandbox.max_processes",
                "max_processes",
                lower(&s.max_processes),
            ),
            ("sandbox.cpu_secs", "cpu_secs", lower(&s.cpu_secs)),
            ("generate.max_retries", "max_retries", lower(&g.max_retries)),
            ("generate.candidates", "candidates", lower(&g.candidates)),
            ("generate.jobs", "jobs", lower(&g.jobs)),
            ("generate.flush_every", "flush_every", lower(&g.flush_every)),
            ("code.profile", "profile", lower(&c.profile)),
            (
                "code.max_corrections",
                "max_corrections",
                lower(&c.max_corrections),
            ),
        ];
        table
            .into_iter()
            .map(|(key, arg, value)| Setting { key, arg, value })
            .collect()
    }
}

/// The user's own file: `$XDG_CONFIG_HOME/zerorepo/zerorepo.toml` (an absolute
/// `XDG_CONFIG_HOME` only, as the XDG spec says), else `$HOME/.config/zerorepo/zerorepo.toml`.
pub fn user_file(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("zerorepo").join(FILE_NAME))
}

/// Which files to read: `(trusted, local)`. The trusted one is the file named by `--config`,
/// else the user's file if there is one; the local one is `zerorepo.toml` in `cwd`, read
/// only without `--config` and when it is not the user's file itself.
pub fn locate(
    explicit: Option<&Path>,
    user: Option<&Path>,
    cwd: &Path,
) -> (Option<PathBuf>, Option<PathBuf>) {
    if let Some(path) = explicit {
        return (Some(path.to_path_buf()), None);
    }
    let user = user.filter(|p| p.is_file()).map(Path::to_path_buf);
    let local = cwd.join(FILE_NAME);
    let same = |a: &Path, b: &Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
    let local =
        (local.is_file() && !user.as_deref().is_some_and(|u| same(u, &local))).then_some(local);
    (user, local)
}

/// Reads a file that may be an untrusted repository's: any key of [`TRUSTED_ONLY`] in it, or
/// a sandbox limit above `ceilings`, is an error naming the key and the file.
pub fn load_untrusted(path: &Path, ceilings: &Ceilings) -> Result<Config, ConfigError> {
    let config = load(path)?;
    if let Some(key) = untrusted_key(&config) {
        return Err(ConfigError::Untrusted {
            path: path.to_path_buf(),
            key: key.to_string(),
        });
    }
    match loosened(&config, ceilings) {
        Some((key, value, ceiling)) => Err(ConfigError::Loosens {
            path: path.to_path_buf(),
            key,
            value,
            ceiling,
        }),
        None => Ok(config),
    }
}

/// The first sandbox limit `config` raises above `ceilings`: its key, value and ceiling.
fn loosened(config: &Config, ceilings: &Ceilings) -> Option<(&'static str, u64, u64)> {
    let s = &config.sandbox;
    [
        (
            "sandbox.test_timeout_secs",
            s.test_timeout_secs,
            ceilings.test_timeout_secs,
        ),
        ("sandbox.memory_mb", s.memory_mb, ceilings.memory_mb),
        (
            "sandbox.max_processes",
            s.max_processes,
            ceilings.max_processes,
        ),
        ("sandbox.cpu_secs", s.cpu_secs, ceilings.cpu_secs),
    ]
    .into_iter()
    .find_map(|(key, value, ceiling)| value.filter(|v| *v > ceiling).map(|v| (key, v, ceiling)))
}

/// The first key of [`TRUSTED_ONLY`] that `config` sets.
pub(crate) fn untrusted_key(config: &Config) -> Option<&'static str> {
    config
        .settings()
        .into_iter()
        .find(|s| s.value.is_some() && TRUSTED_ONLY.contains(&s.key))
        .map(|s| s.key)
}

impl Config {
    /// `self` with every setting `over` gives replaced by `over`'s.
    pub fn overlaid_by(self, over: Config) -> Config {
        macro_rules! pick {
            ($($section:ident . $field:ident),* $(,)?) => {{
                let mut out = self;
                $( if over.$section.$field.is_some() {
                    out.$section.$field = over.$section.$field;
                } )*
                out
            }};
        }
        pick!(
            model.provider,
            model.path,
            model.base_url,
            model.api_key_env,
            model.timeout_secs,
            sandbox.backend,
            sandbox.test_timeout_secs,
            sandbox.docker_hosts,
            sandbox.memory_mb,
            sandbox.max_processes,
            sandbox.cpu_secs,
            generate.max_retries,
            generate.candidates,
            generate.jobs,
            generate.flush_every,
            code.profile,
            code.max_corrections,
        )
    }
}

pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// Reads the file's text; `path` only names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| invalid(one_line(&e, text)))?;
    if let Some(key) = secret_key(&table, "") {
        return Err(ConfigError::Secret {
            path: path.to_path_buf(),
            key,
        });
    }
    toml::from_str(text).map_err(|e| invalid(one_line(&e, text)))
}

/// The toml error without its source excerpt (which could echo a value): `line L: message`.
fn one_line(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim();
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            format!("line {}: {message}", before.matches('\n').count() + 1)
        }
        None => message.to_string(),
    }
}

/// The dotted path of the first key that looks like a secret.
fn secret_key(table: &toml::Table, prefix: &str) -> Option<String> {
    for (key, value) in table {
        let path = format!("{prefix}{key}");
        let lowered = key.to_ascii_lowercase();
        let secret = ["key", "token", "secret", "password"]
            .iter()
            .any(|word| lowered.contains(word))
            && lowered != "api_key_env";
        if secret {
            return Some(path);
        }
        if let toml::Value::Table(inner) = value
            && let Some(found) = secret_key(inner, &format!("{path}."))
        {
            return Some(found);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Config, ConfigError> {
        parse(text, Path::new("zerorepo.toml"))
    }

    #[test]
    fn every_section_is_read_and_becomes_flag_defaults() {
        let config = parse_text(
            "[model]\nprovider = \"openai:m,local\"\nbase_url = \"http://h/v1\"\n\
             timeout_secs = 30\n[sandbox]\nbackend = \"docker\"\ntest_timeout_secs = 60\n\
             docker_hosts = [\"unix:///a.sock\", \"tcp://b:2376\"]\n\
             [generate]\ncandidates = 5\njobs = 2\n[code]\nprofile = \"strict\"\n",
        )
        .unwrap();
        let set: Vec<(&str, &str, String)> = config
            .settings()
            .into_iter()
            .filter_map(|s| Some((s.key, s.arg, s.value?)))
            .collect();
        assert_eq!(
            set,
            [
                ("model.provider", "llm", "openai:m,local".to_string()),
                ("model.base_url", "llm_base_url", "http://h/v1".into()),
                ("model.timeout_secs", "llm_timeout", "30".into()),
                ("sandbox.backend", "sandbox", "docker".into()),
                ("sandbox.test_timeout_secs", "test_timeout", "60".into()),
                (
                    "sandbox.docker_hosts",
                    "docker_host",
                    "unix:///a.sock,tcp://b:2376".into()
                ),
                ("generate.candidates", "candidates", "5".into()),
                ("generate.jobs", "jobs", "2".into()),
                ("code.profile", "profile", "strict".into()),
            ]
        );
    }

    #[test]
    fn lists_and_comma_separated_strings_are_the_same_setting() {
        let as_list =
            parse_text("[model]\nbase_url = [\"http://a/v1\", \"http://b/v1\"]\n").unwrap();
        let as_text = parse_text("[model]\nbase_url = \"http://a/v1,http://b/v1\"\n").unwrap();
        let value = |c: &Config| {
            c.settings()
                .into_iter()
                .find(|s| s.key == "model.base_url")
                .and_then(|s| s.value)
        };
        assert_eq!(value(&as_list).as_deref(), Some("http://a/v1,http://b/v1"));
        assert_eq!(value(&as_list), value(&as_text));
    }

    #[test]
    fn an_empty_file_sets_nothing() {
        let config = parse_text("").unwrap();
        assert_eq!(config, Config::default());
        assert!(config.settings().iter().all(|s| s.value.is_none()));
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_the_key_and_the_file() {
        let err = parse_text("[generate]\ncandidate = 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("zerorepo.toml: line 2: "), "{err}");
        assert!(err.contains("candidate"), "{err}");
        let err = parse_text("[models]\n").unwrap_err().to_string();
        assert!(err.contains("models"), "{err}");
    }

    #[test]
    fn a_value_of_the_wrong_kind_is_an_error() {
        let err = parse_text("[sandbox]\nbackend = \"dockr\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("dockr"), "{err}");
        let err = parse_text("[generate]\njobs = \"two\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("zerorepo.toml"), "{err}");
    }

    #[test]
    fn secrets_are_refused_without_echoing_them() {
        for text in [
            "[model]\napi_key = \"sk-123456\"\n",
            "[model]\nOPENAI_API_KEY = \"sk-123456\"\n",
            "token = \"sk-123456\"\n",
            "[sandbox.registry]\npassword = \"sk-123456\"\n",
        ] {
            let err = parse_text(text).unwrap_err();
            assert!(matches!(err, ConfigError::Secret { .. }), "{text}: {err}");
            assert!(!err.to_string().contains("sk-123456"), "{err}");
        }
        // The name of the variable is not a secret.
        assert!(parse_text("[model]\napi_key_env = \"MY_KEY\"\n").is_ok());
    }

    #[test]
    fn the_trusted_file_is_the_named_one_else_the_users_and_the_directory_is_local() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("home/zerorepo").join(FILE_NAME);
        assert_eq!(locate(None, Some(&user), dir.path()), (None, None));
        std::fs::write(dir.path().join(FILE_NAME), "").unwrap();
        let local = Some(dir.path().join(FILE_NAME));
        assert_eq!(locate(None, Some(&user), dir.path()), (None, local.clone()));
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(&user, "").unwrap();
        assert_eq!(
            locate(None, Some(&user), dir.path()),
            (Some(user.clone()), local)
        );
        // Run from the user's own config directory, the file is read once, as trusted.
        assert_eq!(
            locate(None, Some(&user), user.parent().unwrap()),
            (Some(user.clone()), None)
        );
        let other = Path::new("/elsewhere/z.toml");
        assert_eq!(
            locate(Some(other), Some(&user), dir.path()),
            (Some(other.to_path_buf()), None)
        );
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(
            user_file(env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/zerorepo/zerorepo.toml"))
        );
        assert_eq!(
            user_file(env(&[("XDG_CONFIG_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.config/zerorepo/zerorepo.toml"))
        );
        assert_eq!(user_file(env(&[])), None);
    }

    #[test]
    fn a_local_file_may_not_choose_programs_hosts_or_keys() {
        for key in TRUSTED_ONLY {
            let (section, name) = key.split_once('.').unwrap();
            let value = if *key == "sandbox.backend" {
                "\"none\""
            } else {
                "\"x\""
            };
            let config = parse_text(&format!("[{section}]\n{name} = {value}\n")).unwrap();
            assert_eq!(untrusted_key(&config), Some(*key));
        }
        let harmless = parse_text(
            "[model]\ntimeout_secs = 5\n[sandbox]\ntest_timeout_secs = 9\n\
             [generate]\njobs = 2\n[code]\nprofile = \"smoke\"\n",
        )
        .unwrap();
        assert_eq!(untrusted_key(&harmless), None);
        let user = parse_text("[sandbox]\nbackend = \"docker\"\ntest_timeout_secs = 1\n").unwrap();
        let merged = user.overlaid_by(harmless);
        assert_eq!(merged.sandbox.backend, Some(Backend::Docker));
        assert_eq!(merged.sandbox.test_timeout_secs, Some(9));
    }

    #[test]
    fn a_local_file_may_lower_a_sandbox_limit_but_not_raise_it() {
        let ceilings = Ceilings {
            test_timeout_secs: 30,
            memory_mb: 512,
            max_processes: 64,
            cpu_secs: 30,
        };
        let lower = parse_text(
            "[sandbox]\ntest_timeout_secs = 10\nmemory_mb = 512\nmax_processes = 8\ncpu_secs = 5\n",
        )
        .unwrap();
        assert_eq!(loosened(&lower, &ceilings), None);
        for (key, value) in [
            ("test_timeout_secs", 86_400),
            ("memory_mb", 1 << 20),
            ("max_processes", 65_536),
            ("cpu_secs", 31),
        ] {
            let config = parse_text(&format!("[sandbox]\n{key} = {value}\n")).unwrap();
            let found = loosened(&config, &ceilings).unwrap();
            assert_eq!(
                (found.0, found.1),
                (format!("sandbox.{key}").as_str(), value)
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "[sandbox]\nmax_processes = 65536\n").unwrap();
        let refused = load_untrusted(&path, &ceilings).unwrap_err().to_string();
        assert!(
            refused.contains("`sandbox.max_processes = 65536`") && refused.contains("(64)"),
            "{refused}"
        );
    }
}

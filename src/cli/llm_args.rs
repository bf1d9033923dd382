//! The flags that choose the model which writes the code, shared by the commands that call
//! one (today `generate`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::error::CliError;
use crate::llm::LlmProvider;
use crate::llm::chain;

/// Which model writes the code.
#[derive(clap::Args)]
pub(crate) struct LlmArgs {
    /// Model provider(s), tried in order: `local[:PATH]` (the embedded model, default),
    /// `openai:MODEL` (any OpenAI-compatible endpoint), `scripted:PATH`, `replay:DIR`.
    /// Example: `--llm openai:gpt-4o-mini,local`.
    #[arg(long, env = "ZEROREPO_LLM")]
    llm: Option<String>,
    /// GGUF file for `local` (default: the pulled Qwen2.5-Coder-1.5B).
    #[arg(long, env = "ZEROREPO_MODEL")]
    model: Option<PathBuf>,
    /// Base URL of the OpenAI-compatible endpoint; several, comma-separated, make a pool:
    /// each request goes to the endpoint with the fewest requests in flight, and one that
    /// fails is taken out for 30 s while the others answer.
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
    /// The provider chain these flags describe. A spec that names no usable provider (an
    /// unknown kind, a missing model file or script) is the user's to fix.
    pub(crate) fn provider(&self) -> Result<Arc<dyn LlmProvider>, CliError> {
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
        .map_err(CliError::bad_input)
    }
}

use super::*;
use crate::llm::Role;

/// Two requests of different nodes sent at once are decoded in shared steps and both
/// answered. Needs the model: CI pulls it; elsewhere a missing model skips loudly.
#[tokio::test]
async fn two_requests_at_once_are_decoded_in_shared_steps() {
    let Ok(path) = crate::llm::model::resolve(None) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must pull the model (scripts/test.sh runs `zerorepo model pull`)"
        );
        eprintln!("SKIPPED: no local model; run `zerorepo model pull`");
        return;
    };
    let provider = LocalProvider::load(&path).unwrap();
    let ask = |node: &str, task: &str| LlmRequest {
        node_id: node.into(),
        role: Role::Impl,
        attempt: 0,
        messages: vec![super::super::Message {
            role: "user".into(),
            content: format!("Write a Python function {task}. Reply with one code block."),
        }],
        temperature: 0.0,
        max_tokens: 24,
        seed: None,
        template: "test@1".into(),
        candidate: 0,
        prefill: Some("```python\ndef ".into()),
    };
    let add = ask("a", "add(a, b) that returns a + b");
    let upper = ask("b", "shout(text) that returns text.upper()");
    let (first, second) = tokio::join!(provider.complete_many(&add, 2), provider.complete(&upper));
    let shared = provider.shared_decodes();
    assert!(shared > 0, "the two requests never shared a decode step");
    assert_eq!(first.len(), 2);
    for answer in first.iter().chain(std::iter::once(&second)) {
        let answer = answer.as_ref().unwrap();
        assert!(answer.usage.completion_tokens > 0, "{answer:?}");
        assert!(answer.text.starts_with("```python\ndef "), "{answer:?}");
    }
    // A request alone shares nothing, and finds its prompt in its slot's cache.
    let again = provider.complete(&upper).await.unwrap();
    assert_eq!(provider.shared_decodes(), shared);
    assert!(again.usage.prompt_tokens > 0);
}

/// The texts users see are the ones the worker formatted by hand before it had an error type.
#[test]
fn messages_are_the_old_texts() {
    let path = Path::new("/m/q.gguf");
    let cases: Vec<(LocalError, String)> = vec![
        (
            LocalError::Backend(LlamaCppError::BackendAlreadyInitialized),
            format!("llama.cpp: {}", LlamaCppError::BackendAlreadyInitialized),
        ),
        (
            LocalError::Load {
                path: path.to_path_buf(),
                source: LlamaModelLoadError::NullResult,
            },
            format!(
                "cannot load {}: {}",
                path.display(),
                LlamaModelLoadError::NullResult
            ),
        ),
        (
            LocalError::Context(LlamaContextLoadError::NullReturn),
            format!(
                "cannot create a llama.cpp context: {}",
                LlamaContextLoadError::NullReturn
            ),
        ),
        (
            LocalError::NoChatTemplate {
                path: path.to_path_buf(),
                source: ChatTemplateError::MissingTemplate,
            },
            format!(
                "{} has no usable chat template: {}",
                path.display(),
                ChatTemplateError::MissingTemplate
            ),
        ),
        (
            ApplyChatTemplateError::NullResult.into(),
            ApplyChatTemplateError::NullResult.to_string(),
        ),
        (LocalError::EmptyPrompt, "empty prompt".to_string()),
        (
            LocalError::PromptTooLong {
                tokens: 9000,
                context: CONTEXT_TOKENS,
            },
            "prompt of 9000 tokens does not fit the 8192 token context".to_string(),
        ),
        (
            BatchAddError::InsufficientSpace(3).into(),
            BatchAddError::InsufficientSpace(3).to_string(),
        ),
        (
            DecodeError::NoKvCacheSlot.into(),
            DecodeError::NoKvCacheSlot.to_string(),
        ),
    ];
    for (error, text) in cases {
        assert_eq!(error.to_string(), text);
        assert_eq!(
            failed(error),
            LlmError::Permanent {
                provider: "local".into(),
                message: text
            }
        );
    }
}

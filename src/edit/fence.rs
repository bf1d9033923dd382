//! Extracting code from a chat answer: fenced blocks (with or without a language tag, closing
//! fence optional at the end), or the whole answer when it is bare code.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error(
        "the answer contains no code: expected a ```python fenced block (answer began: {preview:?})"
    )]
    NoCode { preview: String },
}

/// Returns the Python code of an answer: all fenced blocks tagged python/py or untagged,
/// joined by blank lines. Answers without fences are accepted when they look like code.
pub fn extract_code(answer: &str) -> Result<String, ExtractError> {
    let answer = answer.replace("\r\n", "\n");
    let mut blocks = Vec::new();
    let mut lines = answer.lines();
    while let Some(line) = lines.next() {
        let Some(tag) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let tag = tag.trim().to_ascii_lowercase();
        let mut block = Vec::new();
        for inner in lines.by_ref() {
            if inner.trim_start().starts_with("```") {
                break;
            }
            block.push(inner);
        }
        if matches!(tag.as_str(), "" | "python" | "py" | "python3") {
            blocks.push(block.join("\n"));
        }
    }
    let code = if blocks.is_empty() && looks_like_code(&answer) {
        answer.trim().to_string()
    } else {
        blocks.join("\n\n").trim_matches('\n').to_string()
    };
    if code.trim().is_empty() {
        let preview: String = answer.chars().take(80).collect();
        return Err(ExtractError::NoCode { preview });
    }
    Ok(code)
}

fn looks_like_code(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("def ")
            || l.starts_with("async def ")
            || l.starts_with("class ")
            || l.starts_with("import ")
            || l.starts_with("from ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_python_blocks_and_drops_prose() {
        let answer = "Here you go:\n```python\ndef f():\n    return 1\n```\nAnd a shell line:\n```bash\nls\n```\n";
        assert_eq!(extract_code(answer).unwrap(), "def f():\n    return 1");
    }

    #[test]
    fn missing_closing_fence_and_crlf_are_tolerated() {
        assert_eq!(
            extract_code("```py\r\ndef f():\r\n    pass\r\n").unwrap(),
            "def f():\n    pass"
        );
    }

    #[test]
    fn bare_code_is_accepted_and_prose_is_rejected() {
        assert_eq!(
            extract_code("def g():\n    pass\n").unwrap(),
            "def g():\n    pass"
        );
        let err = extract_code("I cannot help with that.").unwrap_err();
        assert!(err.to_string().contains("no code"), "{err}");
    }
}

//! What the model sees for a node: its specification, the code it may use, its file and tests.

use std::collections::BTreeMap;

use crate::fsutil::Workspace;
use crate::llm::{LlmRequest, Message, Role};
use crate::prompts::{self, PromptError, Template};
use crate::rpg::{Node, NodePos, ValidRpg};

pub use crate::python::import_path;

/// The node's specification block, shared by every template.
pub fn describe_node(node: &Node) -> String {
    let file = node.file_path.as_deref().unwrap_or("");
    let mut text = format!(
        "Function name: {}\nSignature: {}\nModule: {} (import path `{}`)\nSpecification:\n{}\n",
        node.name,
        node.signature
            .as_deref()
            .unwrap_or("(choose one that fits the specification)"),
        file,
        import_path(file),
        node.docstring.as_deref().unwrap_or("").trim_end()
    );
    if !node.examples.is_empty() {
        text.push_str("Examples:\n");
        for example in &node.examples {
            text.push_str(example.trim_end());
            text.push('\n');
        }
    }
    text
}

/// Current content of the files of the node's direct dependencies (other than its own file).
pub fn dependency_context(rpg: &ValidRpg, position: NodePos, workspace: &Workspace) -> String {
    let own = rpg.node(position).file_path.clone();
    let mut files: Vec<String> = rpg
        .graph()
        .dependencies_of(position)
        .into_iter()
        .map(|p| rpg.node(p))
        .filter(|n| n.is_leaf())
        .filter_map(|n| n.file_path.clone())
        .filter(|f| Some(f) != own.as_ref())
        .collect();
    files.sort();
    files.dedup();
    if files.is_empty() {
        return "(none)".into();
    }
    files
        .iter()
        .map(|f| {
            let content = workspace.read(f).ok().flatten().unwrap_or_default();
            format!(
                "# {f} (import path `{}`)\n```python\n{}```\n",
                import_path(f),
                content
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The values every template may use; `render` picks the ones a template names.
pub struct PromptInputs {
    pub node: String,
    pub name: String,
    pub file_path: String,
    pub import_line: String,
    pub context: String,
    pub current: String,
    pub tests: String,
    pub failure: String,
    pub attempt: u32,
}

pub fn request(
    node_id: &str,
    role: Role,
    attempt: u32,
    inputs: &PromptInputs,
) -> Result<LlmRequest, PromptError> {
    let template: Template = match role {
        Role::Test => prompts::WRITE_TESTS,
        Role::Impl => prompts::WRITE_IMPL,
        Role::Fix => prompts::FIX_IMPL,
    };
    let mut values: BTreeMap<&str, String> = BTreeMap::new();
    values.insert("node", inputs.node.clone());
    values.insert("name", inputs.name.clone());
    values.insert("context", inputs.context.clone());
    match role {
        Role::Test => {
            values.insert("import_line", inputs.import_line.clone());
        }
        Role::Impl | Role::Fix => {
            values.insert("file_path", inputs.file_path.clone());
            values.insert("current", inputs.current.clone());
            values.insert("tests", inputs.tests.clone());
        }
    }
    if role == Role::Fix {
        values.insert("failure", inputs.failure.clone());
        values.insert("attempt", inputs.attempt.to_string());
    }
    let user = template.render(&values)?;
    Ok(LlmRequest {
        node_id: node_id.to_string(),
        role,
        attempt,
        messages: vec![
            Message {
                role: "system".into(),
                content: prompts::SYSTEM.into(),
            },
            Message {
                role: "user".into(),
                content: user,
            },
        ],
        // The first answer is the most likely one; retries sample, so they are not the same
        // answer again (seeded by the attempt, so a rerun is reproducible).
        temperature: if attempt == 0 { 0.0 } else { 0.4 },
        max_tokens: 1024,
        seed: Some(u64::from(attempt)),
        template: template.label(),
        candidate: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_paths_follow_the_layout() {
        assert_eq!(
            import_path("src/ml_lib/data/loader.py"),
            "ml_lib.data.loader"
        );
        assert_eq!(import_path("pkg/mod.py"), "pkg.mod");
        assert_eq!(import_path("src/pkg/__init__.py"), "pkg");
    }
}

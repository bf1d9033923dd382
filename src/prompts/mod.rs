//! Versioned prompt templates (`src/prompts/*.md`, compiled in with `include_str!`).
//!
//! Each file starts with `<!-- id: NAME version: N -->`; placeholders are `{{name}}`.
//! Rendering fails when a placeholder has no value or a value has no placeholder, so a
//! template and the code that fills it cannot drift apart silently.

use std::collections::BTreeMap;

pub const SYSTEM: &str = "You are an expert Python engineer. You write small, correct, \
standard-library-only Python 3.11 code with type hints. Answer with one ```python fenced block \
and nothing else.";

#[derive(Debug, Clone, Copy)]
pub struct Template {
    pub id: &'static str,
    pub version: u32,
    body: &'static str,
}

pub const WRITE_TESTS: Template = Template {
    id: "write_tests",
    version: 5,
    body: include_str!("write_tests.md"),
};
/// A node's tests when its specification gives no examples: calls alone, whose only verdict
/// is whether the code crashes (role `test`; `engine::prompt::TestsAsked`).
pub const WRITE_PROBES: Template = Template {
    id: "write_probes",
    version: 3,
    body: include_str!("write_probes.md"),
};
/// A subgraph's integration test (node `integration:SUBGRAPH`, role `test`).
pub const WRITE_INTEGRATION: Template = Template {
    id: "write_integration",
    version: 2,
    body: include_str!("write_integration.md"),
};
/// Tests that the vote judged wrong, asked once more with the reason (role `test`).
pub const REWRITE_TESTS: Template = Template {
    id: "rewrite_tests",
    version: 1,
    body: include_str!("rewrite_tests.md"),
};
pub const WRITE_IMPL: Template = Template {
    id: "write_impl",
    version: 7,
    body: include_str!("write_impl.md"),
};
/// A data node's module-level assignment, from its docstring (role `impl`).
pub const WRITE_DATA: Template = Template {
    id: "write_data",
    version: 1,
    body: include_str!("write_data.md"),
};
pub const FIX_IMPL: Template = Template {
    id: "fix_impl",
    version: 8,
    body: include_str!("fix_impl.md"),
};

pub const DIAGNOSE: Template = Template {
    id: "diagnose",
    version: 2,
    body: include_str!("diagnose.md"),
};

/// The system message of the diagnosis votes: one letter, no code.
pub const DIAGNOSE_SYSTEM: &str = "You are an expert Python engineer reviewing a disputed test. \
You judge by the specification. Answer with one letter and nothing else.";

/// `zerorepo code`: a change's spec to a task graph (node `plan`, role `impl`).
pub const CODE_PLAN: Template = Template {
    id: "code_plan",
    version: 2,
    body: include_str!("code_plan.md"),
};
/// `zerorepo code`: one file task of a change (role `impl`).
pub const CODE_EDIT: Template = Template {
    id: "code_edit",
    version: 2,
    body: include_str!("code_edit.md"),
};
/// `zerorepo code`: a change whose check fails, the file at fault (role `fix`).
pub const CODE_CORRECT: Template = Template {
    id: "code_correct",
    version: 3,
    body: include_str!("code_correct.md"),
};
/// `zerorepo code`: calls of a new function on inputs the request's examples leave out
/// (role `test`).
pub const CODE_PROBES: Template = Template {
    id: "code_probes",
    version: 3,
    body: include_str!("code_probes.md"),
};
/// `zerorepo code`: tests that show what the request asks is not done yet (role `test`).
pub const CODE_REPRODUCE: Template = Template {
    id: "code_reproduce",
    version: 1,
    body: include_str!("code_reproduce.md"),
};

/// `zerorepo code`: a new function written again, apart from the change, to be run beside it
/// (role `impl`).
pub const CODE_RIVAL: Template = Template {
    id: "code_rival",
    version: 2,
    body: include_str!("code_rival.md"),
};

/// The system message of `zerorepo code`: any language, answers in the format asked.
pub const CODE_SYSTEM: &str = "You are an expert software engineer. You make small, correct \
changes to existing code and keep its style. Answer in the format asked for, and nothing else.";

/// Every template of `generate`, for the record of what produced a repository.
pub const ALL: [Template; 8] = [
    WRITE_TESTS,
    WRITE_PROBES,
    REWRITE_TESTS,
    WRITE_IMPL,
    WRITE_DATA,
    FIX_IMPL,
    DIAGNOSE,
    WRITE_INTEGRATION,
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    #[error("template {template}: no value for placeholder {{{{{name}}}}}")]
    Missing {
        template: &'static str,
        name: String,
    },
    #[error("template {template}: value `{name}` has no placeholder")]
    Unused {
        template: &'static str,
        name: String,
    },
    #[error(
        "template {template}: value `{name}` contains the secret held in ${variable}; refusing to send it to a model"
    )]
    Secret {
        template: &'static str,
        name: String,
        variable: String,
    },
}

impl Template {
    /// `id@version`, recorded with every call.
    pub fn label(&self) -> String {
        format!("{}@{}", self.id, self.version)
    }

    /// The template text without its header line.
    fn text(&self) -> &'static str {
        match self.body.split_once('\n') {
            Some((first, rest)) if first.starts_with("<!--") => rest,
            _ => self.body,
        }
    }

    pub fn render(&self, values: &BTreeMap<&str, String>) -> Result<String, PromptError> {
        if let Some((name, variable)) = find_secret(values, std::env::vars()) {
            return Err(PromptError::Secret {
                template: self.id,
                name,
                variable,
            });
        }
        let text = self.text();
        let mut out =
            String::with_capacity(text.len() + values.values().map(String::len).sum::<usize>());
        let mut used = std::collections::BTreeSet::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else {
                out.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let name = after[..end].trim();
            let value = values.get(name).ok_or_else(|| PromptError::Missing {
                template: self.id,
                name: name.to_string(),
            })?;
            used.insert(name);
            out.push_str(value);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        if let Some(name) = values.keys().find(|k| !used.contains(*k)) {
            return Err(PromptError::Unused {
                template: self.id,
                name: name.to_string(),
            });
        }
        Ok(out)
    }
}

/// A value that contains the content of a secret-looking environment variable (`*KEY*`,
/// `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, 8+ characters): code read from a repository could
/// carry a key, and a prompt is sent elsewhere.
fn find_secret(
    values: &BTreeMap<&str, String>,
    env: impl Iterator<Item = (String, String)>,
) -> Option<(String, String)> {
    let secrets: Vec<(String, String)> = env
        .filter(|(k, v)| {
            let k = k.to_ascii_uppercase();
            v.len() >= 8
                && ["KEY", "TOKEN", "SECRET", "PASSWORD"]
                    .iter()
                    .any(|w| k.contains(w))
        })
        .collect();
    values.iter().find_map(|(name, value)| {
        secrets
            .iter()
            .find(|(_, secret)| value.contains(secret.as_str()))
            .map(|(var, _)| (name.to_string(), var.clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_has_a_matching_header() {
        for t in ALL {
            let header = t.body.lines().next().unwrap_or_default();
            assert_eq!(
                header,
                format!("<!-- id: {} version: {} -->", t.id, t.version)
            );
        }
    }

    #[test]
    fn values_holding_a_secret_from_the_environment_are_refused() {
        let values: BTreeMap<&str, String> =
            [("current", "API = 'sk-live-abcdefgh123'".to_string())].into();
        let env = vec![
            ("MY_API_KEY".to_string(), "sk-live-abcdefgh123".to_string()),
            ("HOME".to_string(), "/root/sk-x".to_string()),
        ];
        assert_eq!(
            find_secret(&values, env.clone().into_iter()),
            Some(("current".into(), "MY_API_KEY".into()))
        );
        let clean: BTreeMap<&str, String> = [("current", "x = 1".to_string())].into();
        assert_eq!(find_secret(&clean, env.into_iter()), None);
    }

    #[test]
    fn render_checks_placeholders_both_ways() {
        let t = Template {
            id: "t",
            version: 1,
            body: "<!-- id: t version: 1 -->\nHello {{who}}!",
        };
        let values = |pairs: &[(&'static str, &str)]| {
            pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
        };
        assert_eq!(t.render(&values(&[("who", "you")])).unwrap(), "Hello you!");
        assert!(matches!(
            t.render(&values(&[])),
            Err(PromptError::Missing { .. })
        ));
        assert!(matches!(
            t.render(&values(&[("who", "a"), ("x", "b")])),
            Err(PromptError::Unused { .. })
        ));
    }
}

//! The committed JSON Schemas and scripted-provider scripts are generated artifacts: these
//! tests fail when they are stale, and say how to regenerate them.

use super::support::{fixture, repo_root, run, zerorepo};

#[test]
fn committed_schemas_are_up_to_date() {
    for (file, generated) in [
        ("rpg.schema.json", zerorepo::schemas::rpg()),
        ("checkpoint.schema.json", zerorepo::schemas::checkpoint()),
        ("eval.schema.json", zerorepo::schemas::eval()),
        ("nightly.schema.json", zerorepo::schemas::nightly()),
        ("config.schema.json", zerorepo::schemas::config()),
    ] {
        let path = repo_root().join("schemas").join(file);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "schemas/{file} is stale: run `cargo run -q -- schema {} > schemas/{file}`",
            file.split('.').next().unwrap_or_default()
        );
    }
}

#[test]
fn rpg_schema_documents_the_edge_kinds_and_required_fields() {
    let schema: serde_json::Value = serde_json::from_str(&zerorepo::schemas::rpg()).unwrap();
    let text = schema.to_string();
    for kind in [
        "function_call",
        "imports",
        "inherits",
        "uses",
        "data_flow",
        "contains",
    ] {
        assert!(
            text.contains(kind),
            "edge kind {kind} missing from the schema"
        );
    }
    let node_required = &schema["$defs"]["Node"]["required"];
    assert_eq!(
        node_required,
        &serde_json::json!(["id", "name", "type", "node_type"])
    );
}

/// The data leaf is part of the format: its type word and its `value`, a literal expression,
/// are described where a plan's author looks them up.
#[test]
fn rpg_schema_describes_the_data_leaf_and_its_literal_value() {
    let schema: serde_json::Value = serde_json::from_str(&zerorepo::schemas::rpg()).unwrap();
    let node = &schema["$defs"]["Node"]["properties"];
    let kind = node["type"]["description"].as_str().unwrap_or_default();
    assert!(kind.contains("`data`"), "{kind}");
    assert_eq!(node["type"]["type"], "string");
    let value = &node["value"];
    assert_eq!(value["type"], serde_json::json!(["string", "null"]));
    let described = value["description"].as_str().unwrap_or_default();
    for needed in [
        "literal expression",
        "frozenset",
        "No name",
        "Only data nodes",
    ] {
        assert!(described.contains(needed), "{needed}: {described}");
    }
}

#[test]
fn committed_scripts_match_their_reference_solutions() {
    for name in ["chain", "diamond", "subgraphs20", "ml_lib"] {
        let dir = fixture(name);
        let (code, stdout, stderr) = run(zerorepo()
            .arg("derive-script")
            .arg(dir.join("rpg.json"))
            .arg("--reference")
            .arg(dir.join("reference")));
        assert_eq!(code, 0, "{name}: {stderr}");
        let committed = std::fs::read_to_string(dir.join("script.jsonl")).unwrap_or_default();
        assert!(
            committed == stdout,
            "fixtures/{name}/script.jsonl is stale: run `cargo run -q -- derive-script fixtures/{name}/rpg.json --reference fixtures/{name}/reference > fixtures/{name}/script.jsonl`"
        );
        let leaves = std::fs::read_to_string(dir.join("rpg.json"))
            .unwrap()
            .matches("\"leaf\"")
            .count();
        let integration = stdout.matches("\"node\":\"integration:").count();
        assert_eq!(
            stdout.lines().count() - integration,
            2 * leaves,
            "{name}: one test and one impl answer per leaf"
        );
        // One integration answer per subgraph whose functions are joined by a dependency.
        let expected = match name {
            "subgraphs20" => 3,
            "ml_lib" => 5,
            _ => 1,
        };
        assert_eq!(integration, expected, "{name}");
    }
}

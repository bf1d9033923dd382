//! The JSON Schemas published in `schemas/`, generated from the serde types so they cannot
//! drift: a test compares the committed files with these strings.

/// `schemas/rpg.schema.json`: the input plan.
pub fn rpg() -> String {
    pretty(schemars::schema_for!(crate::rpg::Rpg))
}

/// `schemas/checkpoint.schema.json`: `docs/generation_checkpoint.json`.
pub fn checkpoint() -> String {
    pretty(schemars::schema_for!(crate::checkpoint::CheckpointMap))
}

fn pretty(schema: schemars::Schema) -> String {
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

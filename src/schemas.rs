//! The JSON Schemas published in `schemas/`, generated from the serde types so they cannot
//! drift: a test compares the committed files with these strings.

/// `schemas/rpg.schema.json`: the input plan.
pub fn rpg() -> String {
    pretty(schemars::schema_for!(crate::rpg::Rpg))
}

/// `schemas/checkpoint.schema.json`: `docs/generation_checkpoint.json`.
pub fn checkpoint() -> String {
    pretty(schemars::schema_for!(crate::records::NodeRecords))
}

/// `schemas/eval.schema.json`: what `zerorepo eval --json` prints.
pub fn eval() -> String {
    pretty(schemars::schema_for!(crate::eval::Evaluation))
}

/// `schemas/nightly.schema.json`: the reports of `zerorepo bench` (`reports/nightly/*.json`).
pub fn nightly() -> String {
    pretty(schemars::schema_for!(crate::nightly::NightlyReport))
}

/// `schemas/config.schema.json`: `zerorepo.toml` (TOML, described as the JSON it maps to).
pub fn config() -> String {
    pretty(schemars::schema_for!(crate::config::Config))
}

/// The schema as the committed files hold it: pretty JSON and a final newline.
///
/// Serialising cannot fail, so a failure is a bug worth a panic rather than an empty file: a
/// `Schema` is a `serde_json::Value` (its keywords put in a fixed order), serde_json fails only
/// on a map key that is not a string or a `Serialize` impl that fails, and a `Value` has
/// neither; the output goes to memory, so no I/O can fail either.
#[expect(
    clippy::expect_used,
    reason = "a schemars Schema is a serde_json Value, which always serialises"
)]
fn pretty(schema: schemars::Schema) -> String {
    serde_json::to_string_pretty(&schema).expect("a JSON value always serialises") + "\n"
}

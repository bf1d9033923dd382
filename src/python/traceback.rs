//! What a pytest traceback says about the code under test: read from pytest's text, never by
//! running anything. `generate` (a node's tests) and `zerorepo code` (a change's probes) both
//! weigh a crash in the code with an exception the specification does not name as strong
//! evidence, so the reading is here, below both.

/// Whether one test's pytest section (`--tb=short`) shows `code_file` raising an exception
/// that is not named in `documented` (and is neither an assertion nor pytest's own `Failed`).
pub(crate) fn crashed_in(section: &str, code_file: &str, documented: &[String]) -> bool {
    let passes_code = section
        .lines()
        .any(|l| l.split(':').next() == Some(code_file) && l.contains(": in "));
    let raised = section.lines().rev().find_map(|line| {
        let name = line
            .strip_prefix('E')?
            .trim_start()
            .split([':', ' '])
            .next()?;
        let exception =
            (name.ends_with("Error") || name.ends_with("Exception") || name == "Failed")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        exception.then_some(name.rsplit('.').next().unwrap_or(name))
    });
    // `Failed` is pytest's own: `DID NOT RAISE` or `pytest.fail`, a disputed value.
    raised.is_some_and(|name| {
        passes_code
            && !matches!(name, "AssertionError" | "Failed")
            && !documented.iter().any(|d| d == name)
    })
}

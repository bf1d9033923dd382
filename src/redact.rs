//! One redaction of known secret values, for every text that leaves a test run.
//!
//! Generated code is untrusted, and what a test prints becomes a failure reason, which is
//! written to the journal, the checkpoint, the report, the next prompt and the logs. The
//! sandbox never sees the host's environment, but this is the second wall: any known secret
//! value, plain or base64-encoded, is replaced by `[REDACTED]` before text leaves a run.
//!
//! Secrets are the values of environment variables whose names say they are secret (`KEY`,
//! `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`, `AUTH`), at least
//! [`MIN_SECRET_LEN`] bytes long, read once on first use, plus whatever [`register`] adds (the
//! OpenAI-compatible provider registers the key it reads, whatever its variable is called).

use std::borrow::Cow;
use std::sync::{OnceLock, RwLock};

/// Shorter values are not treated as secrets: redacting `1` or `true` would garble text.
pub const MIN_SECRET_LEN: usize = 8;
/// What a secret is replaced with.
pub const MARK: &str = "[REDACTED]";

const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

fn needles() -> &'static RwLock<Vec<String>> {
    static NEEDLES: OnceLock<RwLock<Vec<String>>> = OnceLock::new();
    NEEDLES.get_or_init(|| {
        let mut found = Vec::new();
        for (name, value) in std::env::vars_os() {
            let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
                continue;
            };
            let upper = name.to_ascii_uppercase();
            if SECRET_WORDS.iter().any(|w| upper.contains(w)) {
                add_needles(&mut found, value);
            }
        }
        RwLock::new(found)
    })
}

/// Adds `value` (and its base64 forms) to what [`redact`] removes; short values are ignored.
pub fn register(value: &str) {
    let mut guard = match needles().write() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    add_needles(&mut guard, value);
}

fn add_needles(needles: &mut Vec<String>, value: &str) {
    let value = value.trim();
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    for needle in std::iter::once(value.to_string()).chain(base64_forms(value.as_bytes())) {
        if needle.len() >= MIN_SECRET_LEN && !needles.contains(&needle) {
            needles.push(needle);
        }
    }
    // Longest first, so a needle that contains another is replaced whole.
    needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
}

/// `text` with every known secret replaced by [`MARK`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let guard = match needles().read() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    redact_with(text, &guard)
}

/// Redacts `text` in place (for struct fields).
pub fn redact_in_place(text: &mut String) {
    if let Cow::Owned(clean) = redact(text) {
        *text = clean;
    }
}

fn redact_with<'a>(text: &'a str, needles: &[String]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for needle in needles {
        if out.contains(needle.as_str()) {
            out = Cow::Owned(out.replace(needle.as_str(), MARK));
        }
    }
    out
}

/// The base64 texts that appear in the encoding of anything that contains `value`, whatever
/// its alignment: for each of the three offsets, the whole 3-byte groups of `value` from that
/// offset encode to the same characters wherever they sit. Standard and URL-safe alphabets.
fn base64_forms(value: &[u8]) -> Vec<String> {
    const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut forms = Vec::new();
    for offset in 0..3 {
        let Some(rest) = value.get(offset..) else {
            break;
        };
        let whole = &rest[..rest.len() / 3 * 3];
        for alphabet in [STANDARD, URL_SAFE] {
            let text: String = whole
                .chunks(3)
                .flat_map(|g| {
                    let n = (u32::from(g[0]) << 16) | (u32::from(g[1]) << 8) | u32::from(g[2]);
                    [18, 12, 6, 0].map(|shift| char::from(alphabet[((n >> shift) & 63) as usize]))
                })
                .collect();
            forms.push(text);
        }
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles_for(value: &str) -> Vec<String> {
        let mut needles = Vec::new();
        add_needles(&mut needles, value);
        needles
    }

    #[test]
    fn a_secret_is_removed_plain_and_base64_encoded_at_any_alignment() {
        let secret = "sk-test-0123456789abcdef";
        let needles = needles_for(secret);
        // base64 of the secret behind 0, 1 and 2 other bytes, as Python's b64encode gives it.
        for encoded in [
            "c2stdGVzdC0wMTIzNDU2Nzg5YWJjZGVm",
            "eHNrLXRlc3QtMDEyMzQ1Njc4OWFiY2RlZg==",
            "eHhzay10ZXN0LTAxMjM0NTY3ODlhYmNkZWY=",
        ] {
            let text = format!("E   AssertionError: {secret} / {encoded}");
            let clean = redact_with(&text, &needles);
            assert!(!clean.contains(secret), "{clean}");
            assert!(
                clean.starts_with("E   AssertionError: [REDACTED] / "),
                "{clean}"
            );
            assert!(
                clean.len() < text.len() - encoded.len() / 2,
                "the base64 form {encoded} was not redacted: {clean}"
            );
        }
    }

    #[test]
    fn short_values_and_ordinary_text_are_left_alone() {
        assert!(needles_for("1234567").is_empty());
        let needles = needles_for("hunter2hunter2");
        assert_eq!(
            redact_with("2 passed, 1 failed", &needles),
            Cow::Borrowed("2 passed, 1 failed")
        );
    }
}

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
//! Credentials written into a URL (`https://user:secret@host/v1`, `?api_key=secret`) are
//! removed whatever their value, since a base URL is configuration that `config show`, an
//! error message or a log line repeats.

use std::borrow::Cow;
use std::sync::{OnceLock, RwLock};

/// Shorter values are not treated as secrets: redacting `1` or `true` would garble text.
pub(crate) const MIN_SECRET_LEN: usize = 8;
/// What a secret is replaced with.
pub(crate) const MARK: &str = "[REDACTED]";

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
    match url_credentials(&out) {
        Cow::Owned(clean) => Cow::Owned(clean),
        Cow::Borrowed(_) => out,
    }
}

/// Query parameters whose value is a credential.
const SECRET_PARAMETERS: &[&str] = &[
    "key",
    "api_key",
    "apikey",
    "api-key",
    "token",
    "access_token",
    "auth",
    "password",
    "secret",
    "sig",
    "signature",
];

/// `text` with the user information of every URL (`scheme://user:secret@host`) and the
/// values of its credential query parameters (`?api_key=…`) replaced by [`MARK`].
pub(crate) fn url_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = at + 3;
        out.push_str(&rest[..start]);
        let url_end = rest[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | ','))
            .map_or(rest.len(), |e| start + e);
        let url = &rest[start..url_end];
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let (authority, tail) = url.split_at(authority_end);
        match authority.rfind('@') {
            Some(at_sign) => {
                out.push_str(MARK);
                out.push_str(&authority[at_sign..]);
                changed = true;
            }
            None => out.push_str(authority),
        }
        let (clean_tail, tail_changed) = without_secret_parameters(tail);
        out.push_str(&clean_tail);
        changed |= tail_changed;
        rest = &rest[url_end..];
    }
    out.push_str(rest);
    match changed {
        true => Cow::Owned(out),
        false => Cow::Borrowed(text),
    }
}

/// A URL's path and query with the values of [`SECRET_PARAMETERS`] replaced.
fn without_secret_parameters(tail: &str) -> (String, bool) {
    let Some((path, query)) = tail.split_once('?') else {
        return (tail.to_string(), false);
    };
    let mut changed = false;
    let parameters: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((name, value))
                if !value.is_empty()
                    && SECRET_PARAMETERS.contains(&name.to_ascii_lowercase().as_str()) =>
            {
                changed = true;
                format!("{name}={MARK}")
            }
            _ => p.to_string(),
        })
        .collect();
    (format!("{path}?{}", parameters.join("&")), changed)
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

    #[test]
    fn credentials_in_a_url_are_removed_whatever_their_value() {
        let text = "error sending request for url (https://me:hunter2@gpu1:8000/v1/chat?api_key=abc&n=1), \
                    then http://gpu2:8000/v1?x=1 and https://tok@h/v1";
        assert_eq!(
            url_credentials(text),
            "error sending request for url (https://[REDACTED]@gpu1:8000/v1/chat?api_key=[REDACTED]&n=1), \
             then http://gpu2:8000/v1?x=1 and https://[REDACTED]@h/v1"
        );
        // Text without a URL credential is borrowed as it is.
        assert!(matches!(
            url_credentials("http://gpu1:8000/v1 and no scheme@here"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(redact_with("plain", &[]), Cow::Borrowed(_)));
        assert_eq!(
            redact_with("u=https://a:b@h/", &[]),
            "u=https://[REDACTED]@h/"
        );
    }
}

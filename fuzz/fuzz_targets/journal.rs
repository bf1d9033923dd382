//! The checkpoint journal as resume reads it (`checkpoint::parse_journal`): whatever a crash,
//! a full disk or a person left in `.zerorepo/journal.jsonl`, reading must not panic. And on a
//! valid journal cut at any byte (a crash during an append):
//!
//! - every record whose line, newline included, lies before the cut is still read, and
//!   nothing after it;
//! - the torn tail is reported at the byte where its line starts, which is where resume cuts
//!   the file;
//! - after that cut, appending a record gives a journal that reads cleanly again.
//!
//! Input: two bytes choosing the cut (little-endian, modulo the length), then the journal.

#![no_main]

use libfuzzer_sys::fuzz_target;
use zerorepo::checkpoint::parse_journal;

/// What `Checkpoint::record` appends.
const APPENDED: &str = r#"{"kind":"node","node":"fuzz_appended","status":"passed","timestamp":"2026-01-01T00:00:00Z","retry_count":0}"#;

fuzz_target!(|data: &[u8]| {
    let (cut, journal) = match data {
        [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        _ => (0, data),
    };
    let Ok(full) = parse_journal(journal) else {
        return;
    };
    if full.torn.is_some() || !journal.ends_with(b"\n") {
        return;
    }
    // A clean, valid journal: cut it as a crash would.
    let cut = cut % (journal.len() + 1);
    let kept = &journal[..cut];
    let Some(line_end) = kept.iter().rposition(|&b| b == b'\n').map(|i| i + 1) else {
        // Not even the header survived: corrupt, and resume starts over.
        assert!(parse_journal(kept).is_err(), "a journal without a header");
        return;
    };
    let complete = parse_journal(&kept[..line_end])
        .unwrap_or_else(|e| panic!("whole lines of a valid journal are a valid journal: {e}"));
    assert_eq!(complete.torn, None);
    let read = parse_journal(kept).unwrap_or_else(|e| panic!("a torn tail is not corruption: {e}"));
    assert_eq!(read.rpg_sha256, full.rpg_sha256);
    assert_eq!(
        read.records, complete.records,
        "the records are those of the complete lines"
    );
    assert_eq!(read.published, complete.published);
    let torn_at = (line_end < cut).then_some(line_end as u64);
    assert_eq!(read.torn, torn_at, "where the torn line starts, in bytes");

    // Resume cuts the torn line off, then appends.
    let mut resumed = kept[..read.torn.map_or(cut, |t| t as usize)].to_vec();
    resumed.extend_from_slice(APPENDED.as_bytes());
    resumed.push(b'\n');
    let after = parse_journal(&resumed)
        .unwrap_or_else(|e| panic!("the journal after resuming is corrupt: {e}"));
    assert_eq!(after.torn, None);
    assert!(after.records.contains_key("fuzz_appended"));
    assert_eq!(after.records.len(), {
        let mut r = complete.records.clone();
        r.remove("fuzz_appended");
        r.len() + 1
    });
});

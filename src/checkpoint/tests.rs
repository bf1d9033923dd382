use super::*;
use crate::records::TestCounts;

fn passed() -> NodeRecord {
    NodeRecord {
        test_results: Some(TestCounts {
            passed: 3,
            failed: 0,
        }),
        ..NodeRecord::now(NodeStatus::Passed)
    }
}

#[test]
fn records_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert_eq!(report, OpenReport::default());
    cp.record("node_001", NodeRecord::now(NodeStatus::InProgress))
        .unwrap();
    cp.record("node_001", passed()).unwrap();
    drop(cp);
    let (cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert_eq!(report.resumed, 1);
    assert_eq!(cp.status_of("node_001"), NodeStatus::Passed);
    let compact = load_compact(dir.path()).unwrap().unwrap();
    assert_eq!(compact["node_001"], passed_like(&compact["node_001"]));
}

fn passed_like(r: &NodeRecord) -> NodeRecord {
    NodeRecord {
        timestamp: r.timestamp.clone(),
        ..passed()
    }
}

#[test]
fn torn_last_line_is_ignored_and_the_journal_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cp, _) = Checkpoint::open(dir.path(), "abc").unwrap();
    cp.record("a", passed()).unwrap();
    drop(cp);
    let path = dir.path().join(JOURNAL);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"kind":"node","node":"b","sta"#).unwrap();
    let (mut cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert!(report.torn_tail && report.corrupt.is_none());
    cp.record("b", passed()).unwrap();
    drop(cp);
    let (cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert!(!report.torn_tail);
    assert_eq!(
        (cp.status_of("a"), cp.status_of("b")),
        (NodeStatus::Passed, NodeStatus::Passed)
    );
}

#[test]
fn a_damaged_compact_file_is_rebuilt_from_the_intact_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cp, _) = Checkpoint::open(dir.path(), "abc").unwrap();
    cp.record("a", passed()).unwrap();
    drop(cp);
    std::fs::write(dir.path().join(COMPACT), "{ not json").unwrap();
    let (cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert!(report.corrupt.is_none());
    let (moved, why) = report.compact_rebuilt.unwrap();
    assert_eq!(moved.len(), 1);
    assert!(why.contains(COMPACT), "{why}");
    assert_eq!(std::fs::read_to_string(&moved[0]).unwrap(), "{ not json");
    assert_eq!(cp.records().len(), 1);
    assert!(load_compact(dir.path()).unwrap().unwrap().contains_key("a"));
}

#[test]
fn a_corrupt_journal_is_backed_up_and_started_over() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cp, _) = Checkpoint::open(dir.path(), "abc").unwrap();
    cp.record("a", passed()).unwrap();
    drop(cp);
    std::fs::write(dir.path().join(JOURNAL), "not a journal\n").unwrap();
    let (cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    let (moved, _) = report.corrupt.unwrap();
    assert_eq!(moved.len(), 2);
    assert!(cp.records().is_empty());
}

#[test]
fn parse_journal_reads_what_the_checkpoint_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cp, _) = Checkpoint::open(dir.path(), "abc").unwrap();
    cp.record("a", passed()).unwrap();
    cp.record_flush(BTreeMap::from([("src/a.py".into(), "h1".into())]))
        .unwrap();
    cp.record_flush(BTreeMap::from([("src/a.py".into(), "h2".into())]))
        .unwrap();
    let (records, published) = (cp.records().clone(), cp.published().clone());
    drop(cp);
    let mut bytes = std::fs::read(dir.path().join(JOURNAL)).unwrap();
    let clean_len = bytes.len() as u64;
    let read = parse_journal(&bytes).unwrap();
    assert_eq!(
        read,
        JournalContents {
            rpg_sha256: "abc".into(),
            records: records.clone(),
            published: published.clone(),
            torn: None,
        }
    );
    assert_eq!(read.published.before_last_flush["src/a.py"], "h1");
    bytes.extend_from_slice(br#"{"kind":"node","no"#);
    let read = parse_journal(&bytes).unwrap();
    assert_eq!((read.records, read.torn), (records, Some(clean_len)));
}

#[test]
fn parse_journal_refuses_what_is_not_a_torn_tail() {
    let header = r#"{"kind":"header","version":1,"rpg_sha256":"abc"}"#;
    let cases = [
        ("".to_string(), "journal has no header"),
        (format!("{header}\nnot json\n"), "line 2:"),
        (
            format!("{header}\n{header}\n"),
            "line 2: header out of place",
        ),
        (
            r#"{"kind":"header","version":9,"rpg_sha256":"abc"}"#.to_string() + "\n",
            "journal version 9",
        ),
        (r#"{"kind":"head"#.to_string(), "line 1:"),
    ];
    for (text, why) in cases {
        let err = parse_journal(text.as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with(why), "{text:?}: {err}");
    }
}

/// Found by fuzzing (fuzz/fuzz_targets/journal.rs): a crash that cut only the newline off
/// the last record left a line that parses, so it was kept; the next append then ran on
/// from it, and the resume after that found the line corrupt and started over.
#[test]
fn a_record_cut_off_before_its_newline_is_torn_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cp, _) = Checkpoint::open(dir.path(), "abc").unwrap();
    cp.record("a", NodeRecord::now(NodeStatus::InProgress))
        .unwrap();
    cp.record("a", passed()).unwrap();
    drop(cp);
    let path = dir.path().join(JOURNAL);
    let mut bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    std::fs::write(&path, &bytes).unwrap();
    let (mut cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert!(report.torn_tail && report.corrupt.is_none(), "{report:?}");
    assert_eq!(cp.status_of("a"), NodeStatus::InProgress);
    cp.record("b", passed()).unwrap();
    drop(cp);
    let (cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert_eq!(
        report,
        OpenReport {
            resumed: 2,
            ..OpenReport::default()
        }
    );
    assert_eq!(cp.status_of("b"), NodeStatus::Passed);
    // A header without its newline is no header: nothing was recorded, resume starts over.
    let header = r#"{"kind":"header","version":1,"rpg_sha256":"abc"}"#;
    assert!(parse_journal(header.as_bytes()).is_err());
}

/// Found by fuzzing (fuzz/fuzz_targets/journal.rs): offsets were counted in the text with
/// U+FFFD (3 bytes) in place of each byte that is not UTF-8, so with such a byte in an
/// earlier record, resume cut the file past the start of the torn line and left a piece of
/// it in front of the next record: corrupt at the resume after.
#[test]
fn bytes_that_are_not_utf8_do_not_move_where_the_torn_tail_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    drop(Checkpoint::open(dir.path(), "abc").unwrap());
    let path = dir.path().join(JOURNAL);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"kind\":\"node\",\"node\":\"a\",\"status\":\"failed\",\"timestamp\":\"t\",")
        .unwrap();
    f.write_all(b"\"failure_reason\":\"disk error here: \xff\xfe\"}\n")
        .unwrap();
    let clean = std::fs::metadata(&path).unwrap().len();
    f.write_all(br#"{"kind":"node","node":"b","sta"#).unwrap();
    drop(f);
    assert_eq!(
        parse_journal(&std::fs::read(&path).unwrap()).unwrap().torn,
        Some(clean)
    );
    let (mut cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert!(report.torn_tail && report.corrupt.is_none(), "{report:?}");
    cp.record("b", passed()).unwrap();
    drop(cp);
    let (cp, report) = Checkpoint::open(dir.path(), "abc").unwrap();
    assert!(report.corrupt.is_none(), "{report:?}");
    assert_eq!(
        (cp.status_of("a"), cp.status_of("b")),
        (NodeStatus::Failed, NodeStatus::Passed)
    );
}

#[test]
fn checkpoint_of_another_rpg_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Checkpoint::open(dir.path(), "abc").unwrap());
    let err = Checkpoint::open(dir.path(), "def").unwrap_err();
    assert!(matches!(err, CheckpointError::DifferentRpg { .. }), "{err}");
}

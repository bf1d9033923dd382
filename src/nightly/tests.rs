use super::*;

fn night(date: &str, wall: f64, passed: usize, reference: u32) -> NightlyReport {
    NightlyReport {
        date: date.into(),
        version: "0".into(),
        fixture: "fixtures/ml_lib".into(),
        cpus: 2,
        note: None,
        engine: Some(EngineRun {
            jobs: 2,
            faults: vec![],
            wall_s: wall,
            loops_s: 1.0,
            sandbox_s: 1.0,
            model_s: 0.0,
            engine_s: 0.5,
            assembly_s: 2.0,
            sandbox_runs: 100,
            runs_per_s: 10.0,
            nodes: NodeCounts {
                passed,
                ..NodeCounts::default()
            },
        }),
        real: Some(RealRun {
            provider: "local".into(),
            jobs: 1,
            wall_s: 3000.0,
            model_s: 2900.0,
            model_s_by_role: BTreeMap::new(),
            sandbox_s: 20.0,
            tokens: UsageByRole::new(),
            first_try_rate: 0.3,
            debug_success_rate: 0.5,
            diagnosis: BTreeMap::new(),
            nodes: NodeCounts::default(),
            reference_passed: reference,
            reference_total: 154,
            resumed: false,
        }),
    }
}

fn verdict(c: &[Comparison], name: &str) -> Trend {
    c.iter()
        .find(|x| x.name == name)
        .map(|x| x.verdict)
        .unwrap_or(Trend::Same)
}

#[test]
fn noise_is_same_and_real_changes_have_a_direction() {
    let before = night("2026-11-23", 10.0, 70, 82);
    let noisy = compare(&before, &night("2026-11-24", 10.9, 70, 82));
    assert_eq!(verdict(&noisy, "engine: wall s"), Trend::Same);
    assert_eq!(verdict(&noisy, "real: reference tests passed"), Trend::Same);
    let moved = compare(&before, &night("2026-11-24", 7.0, 69, 90));
    assert_eq!(verdict(&moved, "engine: wall s"), Trend::Better);
    assert_eq!(verdict(&moved, "engine: nodes passed"), Trend::Worse);
    assert_eq!(
        verdict(&moved, "real: reference tests passed"),
        Trend::Better
    );
}

#[test]
fn model_time_summed_over_nodes_is_compared_only_at_the_same_jobs() {
    let before = night("2026-11-23", 10.0, 70, 82);
    let mut now = night("2026-11-24", 10.0, 70, 82);
    let compared = |now: &NightlyReport| {
        compare(&before, now)
            .iter()
            .any(|c| c.name == "real: model s")
    };
    assert!(compared(&now));
    if let Some(real) = now.real.as_mut() {
        real.jobs = 2;
        real.model_s = 5800.0;
    }
    assert!(
        !compared(&now),
        "2 jobs' model time is summed over overlapping nodes"
    );
    let throughput = compare(&before, &now);
    assert!(
        throughput
            .iter()
            .any(|c| c.name == "real: generated tokens per wall s"),
        "{throughput:?}"
    );
}

#[test]
fn model_time_is_summed_by_role_and_shown_with_its_share() {
    let node = |test_ms, impl_ms| {
        let mut record = crate::records::NodeRecord::now(crate::records::NodeStatus::Passed);
        let mut work = crate::records::NodeWork::default();
        for (role, ms) in [(Role::Test, test_ms), (Role::Impl, impl_ms)] {
            work.model_ms += ms;
            work.model_ms_by_role.insert(role, ms);
        }
        record.work = Some(work);
        record
    };
    let records: NodeRecords = [
        ("a".into(), node(1000, 2000)),
        ("b".into(), node(2000, 5000)),
    ]
    .into_iter()
    .collect();
    let facts = RealRunFacts {
        provider: "local".into(),
        jobs: 2,
        wall_s: 10.0,
        reference_passed: 1,
        reference_total: 2,
        resumed: false,
    };
    let run = RealRun::from_records(facts, &records);
    assert_eq!(run.model_s, 10.0);
    assert_eq!(
        run.model_s_by_role,
        BTreeMap::from([(Role::Test, 3.0), (Role::Impl, 7.0)])
    );
    let section = real_section(&run);
    assert!(
        section
            .contains("| model time by role, summed over nodes | test 3 s (30%); impl 7 s (70%) |"),
        "{section}"
    );
    assert!(section.contains("--jobs 2"), "{section}");
}

#[test]
fn a_report_without_jobs_ran_one() {
    let mut json = serde_json::to_value(night("2026-11-23", 10.0, 70, 82)).unwrap();
    json["real"].as_object_mut().unwrap().remove("jobs");
    let old: NightlyReport = serde_json::from_value(json).unwrap();
    assert_eq!(old.real.map(|r| r.jobs), Some(1));
}

#[test]
fn the_previous_report_is_the_newest_earlier_date() {
    let dir = tempfile::tempdir().unwrap();
    for date in ["2026-11-20", "2026-11-22", "2026-11-24"] {
        let text = serde_json::to_string(&night(date, 1.0, 1, 1)).unwrap();
        std::fs::write(dir.path().join(format!("{date}.json")), text).unwrap();
    }
    std::fs::write(dir.path().join("history.jsonl"), "{}\n").unwrap();
    let (path, report) = previous(dir.path(), "2026-11-24").unwrap();
    assert!(path.ends_with("2026-11-22.json"));
    assert_eq!(report.date, "2026-11-22");
    assert!(previous(dir.path(), "2026-11-20").is_none());
}

#[test]
fn the_history_plot_has_a_point_per_night_that_has_the_figure() {
    let history = "{\"date\":\"2026-11-23\",\"figures\":{\"real: wall s\":3007.0}}\n\
                       {\"date\":\"2026-11-24\",\"figures\":{\"real: wall s\":3128.0,\"engine: wall s\":4.4}}\n\
                       not json\n";
    let svg = history_svg(history);
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    assert_eq!(
        svg.matches("<circle").count(),
        3,
        "two wall times and one engine time"
    );
    assert!(svg.contains("2026-11-23: 3007"), "{svg}");
    assert!(
        svg.contains("no night has it yet"),
        "the charts without data say so"
    );
    assert_eq!(
        history_svg(history),
        svg,
        "the same history, the same bytes"
    );
}

//! Localization: search (lexical, and semantic with the pulled embedder), the dependency view,
//! subgraph scoping, the attempt budget, and the `search` / `deps` commands.
//!
//! `fixtures/localize` is a small statistics plan with three subgraphs and the chain
//! calculate_mean ← calculate_variance ← standard_deviation. The semantic test needs the
//! embedder: CI pulls it (scripts/test.sh); elsewhere a missing model skips loudly.

use zerorepo::llm::model;
use zerorepo::localize::{
    EmbedderChoice, LocalizeError, Localizer, LocalizerOptions, NodeState, SearchMethod, Statuses,
};
use zerorepo::records::NodeRecords;
use zerorepo::records::{NodeRecord, NodeStatus};
use zerorepo::rpg::{self, Rpg};

use super::support::{fixture, run, zerorepo};

fn plan() -> Rpg {
    rpg::load_file(&fixture("localize").join("rpg.json")).unwrap()
}

fn lexical() -> LocalizerOptions {
    LocalizerOptions {
        embedder: EmbedderChoice::Off,
        cache_dir: None,
        ..LocalizerOptions::default()
    }
}

fn ids(result: &zerorepo::localize::SearchResult) -> Vec<&str> {
    result.hits.iter().map(|h| h.node.id.as_str()).collect()
}

/// An output directory as `generate` leaves it: the RPG copy and a checkpoint in which
/// calculate_variance failed and everything else passed.
fn output_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::copy(
        fixture("localize").join("rpg.json"),
        dir.path().join("docs/rpg.json"),
    )
    .unwrap();
    let mut records = NodeRecords::new();
    for node in &plan().nodes {
        let mut record = NodeRecord::now(NodeStatus::Passed);
        if node.id == "stats_003" {
            record.status = NodeStatus::Failed;
            record.failure_reason = Some("AssertionError: variance of [1, 2] was 0.5".into());
        }
        records.insert(node.id.clone(), record);
    }
    std::fs::write(
        dir.path().join("docs/generation_checkpoint.json"),
        serde_json::to_string_pretty(&records).unwrap(),
    )
    .unwrap();
    dir
}

#[test]
fn calculate_mean_is_found_lexically_by_its_words() {
    let mut localizer = Localizer::new(plan(), Statuses::new(), lexical());
    assert_eq!(localizer.method(), SearchMethod::Lexical);
    let result = localizer.search("calculate mean", 3, None).unwrap();
    assert_eq!(result.hits[0].node.id, "stats_001");
    assert_eq!(result.hits[0].node.name, "calculate_mean");
    assert_eq!(result.hits[0].matched, ["calculate", "mean"]);
    assert_eq!(
        result.hits[0].snippet,
        "**calculate_mean**: **Calculate** arithmetic **mean** of numbers."
    );
    assert!(result.hits[0].score > result.hits[1].score);
    // A question phrased in other words still lands on the same node.
    let question = localizer.search("where is the mean computed", 1, None);
    assert_eq!(ids(&question.unwrap()), ["stats_001"]);
}

#[test]
fn average_finds_calculate_mean_semantically_with_the_embedder() {
    let dir = model::embedder_dir();
    let missing = model::embedder_missing(&dir);
    if !missing.is_empty() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must pull the embedder (scripts/test.sh runs `zerorepo model pull embedder`); missing in {}: {missing:?}",
            dir.display()
        );
        eprintln!(
            "SKIPPED average_finds_calculate_mean_semantically_with_the_embedder: no embedder in {} (missing {missing:?}); run `zerorepo model pull embedder`",
            dir.display()
        );
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let options = LocalizerOptions {
        embedder: EmbedderChoice::Default,
        cache_dir: Some(cache.path().to_path_buf()),
        ..LocalizerOptions::default()
    };
    let mut localizer = Localizer::new(plan(), Statuses::new(), options.clone());
    assert_eq!(
        localizer.method(),
        SearchMethod::Embedding,
        "{:?}",
        localizer.notice()
    );
    let result = localizer.search("average", 3, None).unwrap();
    assert_eq!(result.method, SearchMethod::Embedding);
    assert_eq!(ids(&result)[0], "stats_001", "{result:#?}");
    assert!(
        result.hits[0].matched.is_empty(),
        "no word is shared: the match is by meaning"
    );
    // Lexical search cannot make that connection.
    let mut words_only = Localizer::new(plan(), Statuses::new(), lexical());
    assert!(
        words_only
            .search("average", 3, None)
            .unwrap()
            .hits
            .is_empty()
    );
    // The vectors were cached; a second index is built from the cache with the same ranking.
    let cached = std::fs::read_dir(cache.path()).unwrap().count();
    assert_eq!(cached, 1, "one cache file per model");
    let mut again = Localizer::new(plan(), Statuses::new(), options);
    let second = again.search("average", 3, None).unwrap();
    assert_eq!(ids(&second), ids(&result));
}

#[test]
fn deps_of_the_middle_of_a_chain_shows_both_ends() {
    let mut localizer = Localizer::new(plan(), Statuses::new(), lexical());
    let view = localizer.deps("stats_003", 2).unwrap();
    assert_eq!(view.node.name, "calculate_variance");
    let names = |trees: &[zerorepo::localize::DepTree]| -> Vec<String> {
        trees.iter().map(|t| t.node.name.clone()).collect()
    };
    assert_eq!(names(&view.depends_on), ["calculate_mean"]);
    assert_eq!(view.depends_on[0].via, ["dependencies", "function_call"]);
    assert_eq!(names(&view.used_by), ["standard_deviation"]);
    // The second hop: who uses standard_deviation.
    assert_eq!(names(&view.used_by[0].children), ["format_summary"]);
    assert_eq!(view.parent.as_ref().unwrap().name, "descriptive");
}

#[test]
fn the_twenty_first_query_of_an_iteration_is_refused_and_the_history_is_kept() {
    let mut localizer = Localizer::new(plan(), Statuses::new(), lexical());
    for i in 0..20 {
        if i % 2 == 0 {
            localizer.search("mean", 2, None).unwrap();
        } else {
            localizer.deps("stats_001", 1).unwrap();
        }
    }
    assert_eq!(localizer.remaining(), 0);
    let err = localizer.search("mean", 2, None).unwrap_err();
    assert!(
        matches!(
            err,
            LocalizeError::LocalizationExhausted {
                limit: 20,
                iteration: 1
            }
        ),
        "{err:?}"
    );
    assert!(matches!(
        localizer.deps("stats_001", 1),
        Err(LocalizeError::LocalizationExhausted { .. })
    ));
    assert_eq!(localizer.history().len(), 20);
    assert_eq!(localizer.next_iteration(), 2);
    let result = localizer.search("median", 1, None).unwrap();
    assert_eq!((result.iteration, result.attempt), (2, 1));
    let history = serde_json::to_value(localizer.history()).unwrap();
    assert_eq!(history.as_array().unwrap().len(), 21);
    assert_eq!(
        history[20],
        serde_json::json!({"iteration": 2, "attempt": 1, "kind": "search", "text": "median",
            "k": 1, "scope": null, "found": ["stats_002"]})
    );
}

#[test]
fn search_is_limited_to_one_subgraph_unless_scope_is_all() {
    let mut localizer = Localizer::new(plan(), Statuses::new(), lexical());
    let everywhere = localizer.search("mean", 10, None).unwrap();
    let subgraphs: std::collections::BTreeSet<&str> = everywhere
        .hits
        .iter()
        .map(|h| h.node.subgraph.as_str())
        .collect();
    assert_eq!(
        subgraphs.into_iter().collect::<Vec<_>>(),
        ["io", "stats", "text"]
    );
    let text = localizer.search("mean", 10, Some("text")).unwrap();
    assert_eq!(ids(&text), ["text_003"]);
    assert_eq!(text.scope.as_deref(), Some("text"));
    let unknown = localizer.search("mean", 10, Some("plots")).unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "no subgraph `plots` in the RPG (known: io, stats, text)"
    );
}

#[test]
fn failed_nodes_are_marked_in_the_deps_view() {
    let dir = output_dir();
    let (code, stdout, stderr) = run(zerorepo()
        .arg("deps")
        .arg(dir.path())
        .arg("standard_deviation"));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "stats_004 standard_deviation [function] src/tinystats/descriptive.py  [passed]\n\
         \x20 in stats_mod descriptive [module] src/tinystats/descriptive.py  [passed]\n\
         |-- depends on\n\
         |   `-- stats_003 calculate_variance [function] src/tinystats/descriptive.py  [FAILED]: AssertionError: variance of [1, 2] was 0.5  (dependencies, function_call)\n\
         |       `-- stats_001 calculate_mean [function] src/tinystats/descriptive.py  [passed]  (dependencies, function_call)\n\
         `-- used by\n\
         \x20   `-- io_002 format_summary [function] src/tinystats/files.py  [passed]  (dependencies, function_call)\n"
    );
    let (code, stdout, _) = run(zerorepo()
        .arg("deps")
        .arg(dir.path())
        .arg("stats_004")
        .arg("--json"));
    assert_eq!(code, 0);
    let view: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let variance = &view["depends_on"][0];
    assert_eq!(variance["id"], "stats_003");
    assert_eq!(variance["status"], "failed");
    assert_eq!(variance["failed"], true);
    assert_eq!(view["node"]["failed"], false);
}

#[test]
fn search_json_output_parses_and_carries_hits_and_budget() {
    let dir = output_dir();
    let (code, stdout, stderr) = run(zerorepo()
        .env("ZEROREPO_EMBEDDER", dir.path().join("no-model"))
        .args(["-q", "search"])
        .arg(dir.path())
        .args(["calculate mean", "-k", "2", "--subgraph", "stats", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["method"], "lexical");
    assert_eq!(result["scope"], "stats");
    assert_eq!(result["remaining"], 19);
    let hits = result["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["id"], "stats_001");
    assert_eq!(hits[0]["rank"], 1);
    assert_eq!(hits[0]["status"], "passed");
    assert_eq!(hits[0]["matched"], serde_json::json!(["calculate", "mean"]));
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_lexical_fallback_is_announced_once_with_the_command_that_fixes_it() {
    let dir = output_dir();
    let (code, stdout, stderr) = run(zerorepo()
        .env("ZEROREPO_EMBEDDER", dir.path().join("no-model"))
        .arg("search")
        .arg(dir.path())
        .arg("calculate mean"));
    assert_eq!(code, 0, "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("zerorepo model pull embedder"),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("\"calculate mean\" in all subgraphs (lexical, BM25): 5 hit(s)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1. stats_001 calculate_mean [function] stats"),
        "{stdout}"
    );
}

#[test]
fn a_directory_without_an_rpg_is_bad_input() {
    let empty = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(zerorepo().arg("search").arg(empty.path()).arg("mean"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("holds no RPG"), "{stderr}");
    assert!(stderr.contains("--rpg PATH"), "{stderr}");
    // --rpg names the plan explicitly; an unknown node is bad input too.
    let (code, _, stderr) = run(zerorepo()
        .arg("deps")
        .arg(empty.path())
        .arg("no_such_node")
        .arg("--rpg")
        .arg(fixture("localize").join("rpg.json")));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no node `no_such_node`"), "{stderr}");
}

#[test]
fn statuses_come_from_the_rpg_when_there_is_no_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let mut value: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("localize").join("rpg.json")).unwrap(),
    )
    .unwrap();
    value["nodes"][1]["status"] = "failed".into();
    let zr = dir.path().join(".zerorepo");
    std::fs::create_dir_all(&zr).unwrap();
    std::fs::write(zr.join("rpg.json"), value.to_string()).unwrap();
    let (_, statuses): (Rpg, Statuses) =
        zerorepo::localize::load_output_dir(dir.path(), None).unwrap();
    assert_eq!(
        statuses.get("stats_001"),
        Some(&NodeState {
            status: NodeStatus::Failed,
            failure_reason: None
        })
    );
    assert_eq!(statuses.len(), 1);
}

/// Issue 5's "done when": on a generated ml_lib, the commands find a node by its
/// description, its dependencies, and its source.
#[test]
fn search_deps_and_view_work_on_a_generated_ml_lib() {
    if super::support::require_python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ml_lib");
    let (code, stdout, stderr) =
        super::generation::generate("ml_lib", &super::generation::script_of("ml_lib"), &out, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let (code, stdout, stderr) = run(zerorepo()
        .args(["search", "--lexical", "--json"])
        .arg(&out)
        .arg("squared differences between targets and predictions"));
    assert_eq!(code, 0, "{stderr}");
    let search: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(search["hits"][0]["name"], "mean_squared_error");
    let id = search["hits"][0]["id"].as_str().unwrap().to_string();
    let (code, stdout, stderr) = run(zerorepo()
        .args(["deps", "--json"])
        .arg(&out)
        .arg("node_070"));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&id),
        "regression_report uses mean_squared_error: {stdout}"
    );
    let (code, stdout, stderr) = run(zerorepo()
        .args(["view", "--json"])
        .arg(&out)
        .arg("mean_squared_error"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("def mean_squared_error("), "{stdout}");
    let (code, stdout, stderr) = run(zerorepo()
        .args(["view", "--json"])
        .arg(&out)
        .arg("src/ml_lib/evaluation/regression_metrics.py"));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("mean_squared_error") && stdout.contains("r2_score"),
        "{stdout}"
    );
}

//! `zerorepo rpg extract`: a plan from Python source, written by the binary and accepted by
//! its own `validate`.

use std::path::Path;

use serde_json::Value;

use super::support::{fixture, zerorepo};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn validates(plan: &Path) {
    let out = zerorepo().arg("validate").arg(plan).output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn read(plan: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(plan).unwrap()).unwrap()
}

fn node<'a>(plan: &'a Value, id: &str) -> &'a Value {
    plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .unwrap_or_else(|| panic!("no node {id}"))
}

/// A small package: calls inside a module and across modules, mutual recursion, doctests,
/// a test suite and a setup.py that are not planned.
fn small_package(root: &Path) {
    write(
        root,
        "src/geo/__init__.py",
        "\"\"\"Plane geometry.\"\"\"\nfrom .points import distance\n",
    );
    write(
        root,
        "src/geo/points.py",
        r#""""Points as (x, y) tuples."""
import math


def distance(a, b):
    """Euclidean distance between two points.

    >>> distance((0, 0), (3, 4))
    5.0
    """
    return math.hypot(a[0] - b[0], a[1] - b[1])


def is_even(n: int) -> bool:
    """Whether n is even, by mutual recursion."""
    return n == 0 or is_odd(n - 1)


def is_odd(n: int) -> bool:
    """Whether n is odd, by mutual recursion."""
    return n != 0 and is_even(n - 1)
"#,
    );
    write(
        root,
        "src/geo/shapes.py",
        r#""""Shapes built on points."""
from geo import distance


def perimeter(points: list[tuple[float, float]]) -> float:
    """Length of the closed polygon through ``points``.

    Examples:
        >>> perimeter([(0, 0), (3, 0), (3, 4)])
        12.0

    Returns:
        float: The perimeter.
    """
    return sum(distance(p, q) for p, q in zip(points, points[1:] + points[:1]))


def _helper():
    """Private."""
"#,
    );
    write(
        root,
        "src/setup.py",
        "from setuptools import setup\nsetup()\n",
    );
    write(root, "tests/test_points.py", "def test_x():\n    pass\n");
}

#[test]
fn an_extracted_package_validates_with_call_edges_and_the_cycle_dropped() {
    let dir = tempfile::tempdir().unwrap();
    small_package(dir.path());
    let plan = dir.path().join("rpg.json");
    let out = zerorepo()
        .args(["rpg", "extract"])
        .arg(dir.path().join("src"))
        .arg("--tests")
        .arg(dir.path().join("tests"))
        .arg("--out")
        .arg(&plan)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    validates(&plan);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["functions"], 4);
    assert_eq!(
        report["summary"]["dropped_edges"],
        serde_json::json!([{
            "source": "geo.points.is_odd",
            "target": "geo.points.is_even",
            "cycle": ["geo.points.is_even", "geo.points.is_odd"]
        }])
    );
    let rpg = read(&plan);
    let edges: Vec<(String, String, String)> = rpg["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap().to_string();
            (s("source"), s("target"), s("type"))
        })
        .collect();
    assert_eq!(
        edges,
        [
            (
                "geo.points.is_even".to_string(),
                "geo.points.is_odd".to_string(),
                "function_call".to_string()
            ),
            (
                "geo.shapes.perimeter".to_string(),
                "geo.points.distance".to_string(),
                "function_call".to_string()
            ),
        ]
    );
    let perimeter = node(&rpg, "geo.shapes.perimeter");
    assert_eq!(perimeter["file_path"], "src/geo/shapes.py");
    assert_eq!(
        perimeter["dependencies"],
        serde_json::json!(["geo.points.distance"])
    );
    assert_eq!(
        perimeter["signature"],
        "def perimeter(points: list[tuple[float, float]]) -> float"
    );
    assert_eq!(
        perimeter["examples"],
        serde_json::json!([">>> perimeter([(0, 0), (3, 0), (3, 4)])\n12.0"])
    );
    assert_eq!(rpg["metadata"]["reference_tests"], "tests");
    assert_eq!(node(&rpg, "geo")["docstring"], "Plane geometry.");
    assert!(
        rpg["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["id"] != "geo.shapes._helper" && n["id"] != "setup")
    );

    // The same input gives the same bytes.
    let again = dir.path().join("again.json");
    let status = zerorepo()
        .args(["rpg", "extract", "--quiet"])
        .arg(dir.path().join("src"))
        .arg("--tests")
        .arg(dir.path().join("tests"))
        .arg("--out")
        .arg(&again)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        std::fs::read(&plan).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn no_examples_keeps_the_docstring_text_without_its_doctests() {
    let dir = tempfile::tempdir().unwrap();
    small_package(dir.path());
    let plan = dir.path().join("plain.json");
    let out = zerorepo()
        .args([
            "rpg",
            "extract",
            "--no-examples",
            "--module",
            "geo/shapes.py",
        ])
        .arg("src")
        // A bare file name: the plan goes to the working directory.
        .args(["--out", "plain.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    validates(&plan);
    let rpg = read(&plan);
    let perimeter = node(&rpg, "geo.shapes.perimeter");
    assert_eq!(
        perimeter["docstring"],
        "Length of the closed polygon through ``points``.\n\nReturns:\n    float: The perimeter."
    );
    assert!(perimeter.get("examples").is_none());
    // Only the selected module is planned: its call into `points` has no node to point at.
    assert_eq!(rpg["edges"], serde_json::json!([]));
    assert!(
        rpg["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["id"] != "geo.points")
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 function(s)"), "{stderr}");
}

#[test]
fn an_unknown_module_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    small_package(dir.path());
    let out = zerorepo()
        .args(["rpg", "extract", "--module", "geo.nope"])
        .arg(dir.path().join("src"))
        .arg("--out")
        .arg(dir.path().join("x.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--module geo.nope: no such module"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.path().join("x.json").exists());
}

/// ml_lib's reference solution extracted gives back the fixture plan's functions and edges.
#[test]
fn the_ml_lib_reference_solution_extracts_to_the_fixtures_graph() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("ml_lib.json");
    let reference = fixture("ml_lib").join("reference");
    let out = zerorepo()
        .args(["rpg", "extract"])
        .arg(reference.join("src"))
        .arg("--out")
        .arg(&plan)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    validates(&plan);
    let names = |rpg: &Value| -> (Vec<String>, Vec<(String, String)>) {
        let nodes = rpg["nodes"].as_array().unwrap();
        let name = |id: &Value| {
            nodes.iter().find(|n| n["id"] == *id).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let mut leaves: Vec<String> = nodes
            .iter()
            .filter(|n| n["node_type"] == "leaf")
            .map(|n| n["name"].as_str().unwrap().to_string())
            .collect();
        leaves.sort();
        let mut edges: Vec<(String, String)> = rpg["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (name(&e["source"]), name(&e["target"])))
            .collect();
        edges.sort();
        (leaves, edges)
    };
    let fixture_plan = read(&fixture("ml_lib").join("rpg.json"));
    assert_eq!(names(&read(&plan)), names(&fixture_plan));
}

//! The HTML report (issue 17), looked at in a real browser: headless Chromium loads
//! `docs/generation_report.html` of a run with passed, failed and skipped nodes, and
//! - the DOM it builds has one drawn box per plan node, with the node's status from the
//!   checkpoint and that status's colour;
//! - its screenshot shows each status's colour over at least the area of its boxes;
//! - its network log has no request made for the page (the same check flags a page that
//!   loads an image and a stylesheet from elsewhere, so it can fail).
//!
//! Chromium comes from `scripts/setup.sh`; without it the test says so and skips, and fails
//! in CI. `ZEROREPO_REPORT_SCREENSHOT=path.png` keeps the screenshot (reports/ holds one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::generation::{checkpoint, generate, script_with_a_failed_node};
use super::support::{fixture, require_python, run, zerorepo};

/// The colours of `zerorepo::assemble::html::status_colour`, as the browser must show them.
const COLOURS: [(&str, [u8; 3]); 3] = [
    ("passed", [0x3f, 0xae, 0x5a]),
    ("failed", [0xe0, 0x50, 0x4a]),
    ("skipped", [0xa9, 0xae, 0xb4]),
];

fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(zerorepo::programs::on_path);
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("CI must provide Chromium (scripts/setup.sh installs Debian's chromium)");
        }
        eprintln!("SKIPPED: chromium is not installed; scripts/setup.sh installs it");
    }
    found
}

/// Runs headless Chromium on `page` with the flags the issue names, a fresh profile, the
/// network log in `profile/net.json`, and `extra`; returns stdout.
fn browse(browser: &Path, profile: &Path, page: &Path, extra: &[&str]) -> String {
    let (code, stdout, stderr) = run(Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.join("profile").display()
        ))
        .arg(format!(
            "--log-net-log={}",
            profile.join("net.json").display()
        ))
        .args(extra)
        .arg(format!("file://{}", page.display())));
    assert_eq!(code, 0, "chromium failed: {stderr}");
    stdout
}

/// The URLs the page asked for: requests whose network isolation key is the page's own
/// (`file://`), as opposed to the browser's background traffic (keyed `null` or by its own
/// sites), which the flags reduce but do not stop.
fn requests_for_the_page(net_log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(net_log).expect("net log");
    // Chromium may end the log without closing it.
    let log: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|_| {
        let cut = text.trim_end().trim_end_matches(',');
        serde_json::from_str(&format!("{cut}]}}")).expect("net log is JSON")
    });
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| {
            let p = &e["params"];
            let key = p["network_isolation_key"].as_str()?;
            let url = p["url"].as_str()?;
            (key.starts_with("file://") && !url.starts_with("file:") && !url.starts_with("data:"))
                .then(|| url.to_string())
        })
        .collect()
}

/// `(data-node, data-status, fill)` of every node box in `html`.
fn node_boxes(html: &str) -> Vec<(String, String, String)> {
    let attr = |tag: &str, name: &str| -> String {
        let start = tag.find(&format!("{name}=\"")).map(|i| i + name.len() + 2);
        start
            .and_then(|s| tag[s..].find('"').map(|e| tag[s..s + e].to_string()))
            .unwrap_or_default()
    };
    html.split("<rect ")
        .skip(1)
        .map(|rest| &rest[..rest.find('>').unwrap_or(rest.len())])
        .filter(|tag| tag.contains("data-node=") && tag.contains("class=\"node "))
        .map(|tag| {
            (
                attr(tag, "data-node"),
                attr(tag, "data-status"),
                attr(tag, "fill"),
            )
        })
        .collect()
}

fn pixels_of(png: &Path) -> BTreeMap<[u8; 3], usize> {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png).expect("screenshot"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let step = info.color_type.samples();
    let mut counts = BTreeMap::new();
    for px in buf[..info.buffer_size()].chunks(step) {
        *counts.entry([px[0], px[1], px[2]]).or_insert(0) += 1;
    }
    counts
}

#[test]
fn the_html_report_draws_every_node_in_its_status_colour_and_requests_nothing() {
    if require_python().is_none() {
        return;
    }
    let Some(browser) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let broken = script_with_a_failed_node(dir.path());
    let out = dir.path().join("o");
    let (code, stdout, stderr) = generate("ml_lib", &broken, &out, &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let (code, printed, stderr) = run(zerorepo().arg("report").arg(&out));
    assert_eq!(code, 0, "{stderr}");
    let page = PathBuf::from(printed.trim());
    assert!(page.ends_with("docs/generation_report.html"), "{printed}");

    // The checkpoint's status of every plan node, as the page must show it.
    let expected: BTreeMap<String, String> = checkpoint(&out)
        .into_iter()
        .map(|(id, r)| (id, r["status"].as_str().unwrap_or("pending").to_string()))
        .collect();
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("ml_lib").join("rpg.json")).unwrap())
            .unwrap();
    assert_eq!(expected.len(), plan["nodes"].as_array().unwrap().len());
    assert!(expected.values().any(|s| s == "failed") && expected.values().any(|s| s == "skipped"));

    // What the browser built from the page.
    let dom = browse(&browser, &dir.path().join("dom"), &page, &["--dump-dom"]);
    let boxes = node_boxes(&dom);
    assert_eq!(boxes.len(), expected.len(), "one drawn box per plan node");
    let colour = |status: &str| {
        zerorepo::assemble::html::status_colour(serde_json::from_value(status.into()).ok())
    };
    for (id, status, fill) in &boxes {
        assert_eq!(Some(status), expected.get(id), "status of {id}");
        assert_eq!(fill, colour(status), "colour of {id}");
    }
    assert!(
        requests_for_the_page(&dir.path().join("dom/net.json")).is_empty(),
        "the report made requests"
    );

    // What it drew: each status's colour over at least its boxes' area (a box is about
    // 100 by 20 pixels; the legend's and cards' swatches are 12 by 12).
    let shot = std::env::var_os("ZEROREPO_REPORT_SCREENSHOT")
        .map_or_else(|| dir.path().join("report.png"), PathBuf::from);
    browse(
        &browser,
        &dir.path().join("shot"),
        &page,
        &[
            "--window-size=1400,2600",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let pixels = pixels_of(&shot);
    for (status, rgb) in COLOURS {
        let nodes = expected.values().filter(|s| *s == status).count();
        let seen = pixels.get(&rgb).copied().unwrap_or(0);
        assert!(
            seen >= nodes * 800 + 3 * 144,
            "{status}: {seen} pixels of its colour for {nodes} nodes"
        );
    }

    // The network check can fail: a page that loads from elsewhere is caught.
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<html><body><img src=\"http://example.invalid/x.png\">\
         <link rel=\"stylesheet\" href=\"https://fonts.example.invalid/a.css\"></body></html>",
    )
    .unwrap();
    browse(&browser, &dir.path().join("bad"), &bad, &["--dump-dom"]);
    let caught = requests_for_the_page(&dir.path().join("bad/net.json"));
    assert_eq!(caught.len(), 2, "{caught:?}");
}

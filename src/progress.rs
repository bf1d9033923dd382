//! What a long generation shows while it runs.
//!
//! On a terminal: an overall bar with ETA and one line for each node in flight with its
//! phase (writing tests, writing code, running tests, fixing), drawn by indicatif; finished
//! nodes are printed above the bars. Anywhere else (a pipe, a CI log, `--json`): plain lines,
//! one per finished node, plus a summary line every [`SUMMARY_EVERY`] nodes, because bars in
//! a log file are noise.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::{PhaseSink, Progress};
use crate::records::NodeStatus;

pub(crate) const SUMMARY_EVERY: usize = 10;

/// "Completed 30/71 nodes (42%), ETA 1m20s": the ETA is the mean time per finished node so
/// far times the nodes left.
pub(crate) fn summary_line(done: usize, total: usize, elapsed: Duration) -> String {
    let percent = (done * 100).checked_div(total).unwrap_or(0);
    let eta = (done > 0).then(|| elapsed.as_secs_f64() / done as f64 * (total - done) as f64);
    match eta {
        Some(eta) => format!(
            "Completed {done}/{total} nodes ({percent}%), ETA {}m{:02}s",
            eta as u64 / 60,
            eta as u64 % 60
        ),
        None => format!("Completed {done}/{total} nodes ({percent}%)"),
    }
}

/// One line for a finished node, with the controls a plan or a test's output may carry
/// escaped ([`crate::rpg::terminal_safe`]): a failure's reason is the first `E` line of a
/// generated function's own exception, and its message is the model's to write.
pub(crate) fn finished_line(event: &Progress) -> Option<String> {
    line_of(event).map(|line| crate::rpg::terminal_safe(&line).into_owned())
}

fn line_of(event: &Progress) -> Option<String> {
    match event {
        Progress::Notice(text) => Some(text.clone()),
        Progress::Started { .. } => None,
        Progress::Finished {
            position,
            total,
            id,
            name,
            status,
            attempts,
            duration,
            reason,
        } => {
            let width = total.to_string().len();
            let detail = match (status, reason) {
                (NodeStatus::Failed | NodeStatus::NeedsReview, Some(r)) => format!(": {r}"),
                _ => String::new(),
            };
            Some(format!(
                "[{position:>width$}/{total}] {id} {name}: {} ({attempts} attempt(s), {:.1}s){detail}",
                status.as_str(),
                duration.as_secs_f64()
            ))
        }
        Progress::Skipped { id, because_of } => Some(format!(
            "  skipped {id}: dependency {because_of} did not pass"
        )),
    }
}

enum Display {
    Bars {
        overall: ProgressBar,
        multi: MultiProgress,
        nodes: Arc<Mutex<HashMap<crate::rpg::NodeId, ProgressBar>>>,
    },
    Lines {
        started: Instant,
        done: usize,
    },
    Quiet,
}

pub struct ProgressView {
    display: Display,
}

impl ProgressView {
    /// Bars when `bars` (a terminal, no `--json`), plain lines otherwise, nothing when quiet.
    pub fn new(bars: bool, quiet: bool) -> ProgressView {
        let display = if quiet {
            Display::Quiet
        } else if bars {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let overall = multi.add(ProgressBar::new(0));
            overall.set_style(
                ProgressStyle::with_template(
                    "{bar:32.cyan/blue} {pos}/{len} nodes  {elapsed_precise}  ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            Display::Bars {
                overall,
                multi,
                nodes: Arc::default(),
            }
        } else {
            Display::Lines {
                started: Instant::now(),
                done: 0,
            }
        };
        ProgressView { display }
    }

    /// The sink the engine reports node phases to (a no-op without bars).
    pub fn phases(&self) -> PhaseSink {
        match &self.display {
            Display::Bars { nodes, .. } => {
                let nodes = nodes.clone();
                PhaseSink::new(move |id, phase| {
                    if let Ok(nodes) = nodes.lock()
                        && let Some(bar) = nodes.get(id)
                    {
                        bar.set_message(format!("{id}: {phase}"));
                    }
                })
            }
            _ => PhaseSink::default(),
        }
    }

    pub fn show(&mut self, event: &Progress) {
        match &mut self.display {
            Display::Quiet => {}
            Display::Lines { started, done } => {
                if let Some(line) = finished_line(event) {
                    eprintln!("{line}");
                }
                if let Progress::Finished { total, .. } = event {
                    *done += 1;
                    if (*done).is_multiple_of(SUMMARY_EVERY) {
                        eprintln!("{}", summary_line(*done, *total, started.elapsed()));
                    }
                }
            }
            Display::Bars {
                overall,
                multi,
                nodes,
            } => {
                if let Progress::Started {
                    total, id, name, ..
                } = event
                {
                    overall.set_length(*total as u64);
                    let bar = multi.add(ProgressBar::new_spinner());
                    bar.enable_steady_tick(Duration::from_millis(120));
                    let text = format!("{id} {name}: starting");
                    bar.set_message(crate::rpg::terminal_safe(&text).into_owned());
                    if let Ok(mut nodes) = nodes.lock() {
                        nodes.insert(id.clone(), bar);
                    }
                    return;
                }
                if let Progress::Finished { id, total, .. } = event {
                    overall.set_length(*total as u64);
                    overall.inc(1);
                    if let Some(bar) = nodes.lock().ok().and_then(|mut n| n.remove(id)) {
                        bar.finish_and_clear();
                        multi.remove(&bar);
                    }
                }
                if let Some(line) = finished_line(event) {
                    let _ = multi.println(line);
                }
            }
        }
    }

    /// Clears the bars before the final summary is printed.
    pub fn finish(&self) {
        if let Display::Bars { overall, .. } = &self.display {
            overall.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_estimate_the_rest_from_the_mean_so_far() {
        assert_eq!(
            summary_line(30, 50, Duration::from_secs(600)),
            "Completed 30/50 nodes (60%), ETA 6m40s"
        );
        assert_eq!(
            summary_line(0, 50, Duration::ZERO),
            "Completed 0/50 nodes (0%)"
        );
    }

    #[test]
    fn a_failure_reason_shows_its_controls_escaped() {
        // The reason is the first `E` line of a generated function's own exception.
        let event = Progress::Finished {
            position: 1,
            total: 2,
            id: crate::rpg::NodeId::from("n1"),
            name: "f".into(),
            status: NodeStatus::Failed,
            attempts: 1,
            duration: Duration::from_secs(1),
            reason: Some("ValueError: \u{1b}]0;pwned\u{7}\u{1b}[2J".into()),
        };
        let line = finished_line(&event).unwrap();
        assert!(
            !line.contains('\u{1b}') && !line.contains('\u{7}'),
            "{line:?}"
        );
        assert!(
            line.starts_with("[1/2] n1 f: failed") && line.contains("pwned"),
            "{line}"
        );
    }
}

//! Timing helpers shared by the benches (each bench is its own binary and includes this with
//! `mod support;`). Medians, because these machines are noisy.

#![allow(dead_code)] // not every bench uses every helper

use std::time::{Duration, Instant};

/// Median of `runs` timings of `f`.
pub fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

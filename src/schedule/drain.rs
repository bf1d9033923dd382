//! The async drain loop: start every ready job up to the limit, wait for one to end, record
//! it, repeat. It only returns when nothing is running, so no job is ever abandoned mid-write;
//! after cancellation it starts nothing new but still waits for the jobs in flight.

use std::future::Future;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::queue::{DependencyQueue, Finished, JobOutcome};

/// What the drain loop tells its caller, in the order things happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DrainEvent<R> {
    Started(usize),
    Ended(usize, R),
    Skipped(Finished),
}

/// Runs jobs from `queue` with `run(job, draft_of)` until the queue is drained or `cancel`
/// fires (`draft_of`: the dependency that did not pass, when the job runs as a draft).
/// `outcome` maps a job's result to pass/fail; `on_event` sees every start, end and skip
/// (it is where the checkpoint is written, on the single task that owns it).
pub async fn drain<R, F, Fut>(
    queue: &mut DependencyQueue,
    cancel: &CancellationToken,
    mut run: F,
    outcome: impl Fn(&R) -> JobOutcome,
    mut on_event: impl FnMut(DrainEvent<&R>),
) where
    R: Send + 'static,
    F: FnMut(usize, Option<usize>) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
{
    let mut running: JoinSet<(usize, R)> = JoinSet::new();
    loop {
        while !cancel.is_cancelled() {
            let Some(job) = queue.next_ready() else { break };
            on_event(DrainEvent::Started(job));
            let fut = run(job, queue.draft_of(job));
            running.spawn(async move { (job, fut.await) });
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        let Ok((job, result)) = joined else {
            // A job task panicked; nothing to record for it, and its dependents stay waiting.
            tracing::error!("a node task panicked");
            continue;
        };
        let skipped = queue.finish(job, outcome(&result));
        on_event(DrainEvent::Ended(job, &result));
        for finished in skipped {
            on_event(DrainEvent::Skipped(finished));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn runs_every_job_and_respects_the_limit() {
        let deps = vec![vec![], vec![], vec![], vec![0, 1, 2]];
        let mut queue = DependencyQueue::new(deps, 2);
        let live = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut ended = Vec::new();
        drain(
            &mut queue,
            &CancellationToken::new(),
            |job, _| {
                let (live, peak) = (live.clone(), peak.clone());
                async move {
                    let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    live.fetch_sub(1, Ordering::SeqCst);
                    job
                }
            },
            |_| JobOutcome::Passed,
            |e| {
                if let DrainEvent::Ended(job, _) = e {
                    ended.push(job)
                }
            },
        )
        .await;
        assert_eq!(peak.load(Ordering::SeqCst), 2);
        assert_eq!(ended.len(), 4);
        assert_eq!(ended[3], 3, "the job needing all others ends last");
    }

    #[tokio::test]
    async fn cancellation_starts_nothing_new_but_waits_for_running_jobs() {
        let mut queue = DependencyQueue::new(vec![vec![], vec![0], vec![1]], 1);
        let cancel = CancellationToken::new();
        let mut events = Vec::new();
        let c = cancel.clone();
        drain(
            &mut queue,
            &cancel,
            move |job, _| {
                let c = c.clone();
                async move {
                    c.cancel();
                    job
                }
            },
            |_| JobOutcome::Passed,
            |e| events.push(format!("{e:?}")),
        )
        .await;
        assert_eq!(events, vec!["Started(0)", "Ended(0, 0)"]);
        assert_eq!(queue.waiting(), vec![1, 2]);
    }
}

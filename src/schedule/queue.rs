//! A pure dependency queue over jobs `0..n`, in the spirit of cargo's job queue.
//!
//! Lower job numbers have priority, so with jobs numbered in topological order the hand-out
//! order is deterministic. A job is ready when all its dependencies passed and it is the
//! lowest-numbered unfinished job of each of its resources (file paths): jobs sharing a
//! resource never run together, and they run in job order, whatever order the jobs of other
//! resources finish in. That is what makes a file written by several jobs the same for any
//! limit: the jobs of one file merge into it in plan order. It cannot deadlock when jobs are
//! numbered topologically: a job only ever waits for lower-numbered ones. No I/O, no clocks:
//! tested with integers.

use std::collections::{BTreeMap, BTreeSet};

/// How a job ended, as reported by whoever ran it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    Passed,
    Failed,
    /// Failed and left nothing in its files: with [`OnFailure::Draft`] its dependents are
    /// skipped all the same, since a draft written above a function that is not there yet
    /// would put the module's functions out of plan order once it is.
    FailedEmpty,
}

/// What becomes of the dependents of a job that did not pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnFailure {
    /// Every transitive dependent is skipped: it never runs.
    Skip,
    /// Every transitive dependent still runs, as a draft ([`DependencyQueue::draft_of`]):
    /// whoever runs it knows that something it needs did not pass.
    Draft,
}

/// A job that will not run because something it needs did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub job: usize,
    /// The dependency that did not pass (the first one found, by job number).
    pub because_of: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Running,
    Passed,
    /// Failed, or left out of this run without having passed.
    Unavailable,
    Skipped,
}

#[derive(Debug, Clone)]
pub struct DependencyQueue {
    dependents: Vec<Vec<usize>>,
    resources: Vec<Vec<String>>,
    state: Vec<State>,
    /// Dependencies of each job that have not passed yet.
    unmet: Vec<usize>,
    /// Waiting jobs whose dependencies all passed, by priority (they may still wait for a
    /// resource). Keeping this set makes hand-out O(log n) instead of a scan of every job.
    ready: BTreeSet<usize>,
    held: BTreeSet<String>,
    /// Per resource, the jobs needing it that have not finished (waiting or running).
    unfinished: BTreeMap<String, BTreeSet<usize>>,
    running: usize,
    limit: usize,
    on_failure: OnFailure,
    /// For a job that runs as a draft, the dependency that did not pass (the first one).
    draft_of: Vec<Option<usize>>,
}

impl DependencyQueue {
    /// `deps[j]` lists the jobs job `j` needs. Out-of-range numbers are ignored.
    pub fn new(deps: Vec<Vec<usize>>, limit: usize) -> DependencyQueue {
        let n = deps.len();
        let mut dependents = vec![Vec::new(); n];
        let deps: Vec<Vec<usize>> = deps
            .into_iter()
            .map(|mut d| {
                d.retain(|&x| x < n);
                d.sort_unstable();
                d.dedup();
                d
            })
            .collect();
        for (job, needs) in deps.iter().enumerate() {
            for &dep in needs {
                dependents[dep].push(job);
            }
        }
        let unmet: Vec<usize> = deps.iter().map(Vec::len).collect();
        let ready = (0..n).filter(|&j| unmet[j] == 0).collect();
        DependencyQueue {
            dependents,
            resources: vec![Vec::new(); n],
            state: vec![State::Waiting; n],
            unmet,
            ready,
            held: BTreeSet::new(),
            unfinished: BTreeMap::new(),
            running: 0,
            limit: limit.max(1),
            on_failure: OnFailure::Skip,
            draft_of: vec![None; n],
        }
    }

    /// What becomes of the dependents of a job that fails (skipped, unless set otherwise).
    pub(crate) fn on_failure(&mut self, on_failure: OnFailure) {
        self.on_failure = on_failure;
    }

    /// The dependency that did not pass, when `job` runs as a draft.
    pub(crate) fn draft_of(&self, job: usize) -> Option<usize> {
        self.draft_of.get(job).copied().flatten()
    }

    /// Jobs sharing a resource never run at the same time, and run in job order.
    pub(crate) fn set_resources(&mut self, job: usize, resources: Vec<String>) {
        if job >= self.resources.len() {
            return;
        }
        self.forget_resources(job);
        if matches!(self.state[job], State::Waiting | State::Running) {
            for r in &resources {
                self.unfinished.entry(r.clone()).or_default().insert(job);
            }
        }
        self.resources[job] = resources;
    }

    /// The job is finished (passed, failed, skipped or left out): it no longer holds back
    /// the later jobs of its resources.
    fn forget_resources(&mut self, job: usize) {
        for r in &self.resources[job] {
            if let Some(jobs) = self.unfinished.get_mut(r) {
                jobs.remove(&job);
                if jobs.is_empty() {
                    self.unfinished.remove(r);
                }
            }
        }
    }

    /// Whether `job` may take its resources now: none is held, and no lower job needing one
    /// of them is unfinished.
    fn resources_free(&self, job: usize) -> bool {
        self.resources[job].iter().all(|r| {
            !self.held.contains(r)
                && self
                    .unfinished
                    .get(r)
                    .and_then(|jobs| jobs.first())
                    .is_none_or(|&first| first == job)
        })
    }

    /// Marks a waiting job as already passed (from a checkpoint); it will not be handed out.
    pub(crate) fn preset_passed(&mut self, job: usize) {
        if self.state.get(job) == Some(&State::Waiting) {
            self.ready.remove(&job);
            self.pass(job);
        }
    }

    /// Marks a waiting job as not run in this invocation without having passed; its
    /// dependents are skipped. Returns the skipped jobs.
    pub(crate) fn preset_unavailable(&mut self, job: usize) -> Vec<Finished> {
        if self.state.get(job) != Some(&State::Waiting) {
            return Vec::new();
        }
        self.ready.remove(&job);
        self.state[job] = State::Unavailable;
        self.forget_resources(job);
        self.skip_dependents_of(job)
    }

    /// The next job to run, or `None` if nothing is ready now (or the limit is reached).
    pub fn next_ready(&mut self) -> Option<usize> {
        if self.running >= self.limit {
            return None;
        }
        let job = self
            .ready
            .iter()
            .copied()
            .find(|&j| self.resources_free(j))?;
        self.ready.remove(&job);
        self.state[job] = State::Running;
        self.running += 1;
        self.held.extend(self.resources[job].iter().cloned());
        Some(job)
    }

    /// Records the end of a running job. On failure every transitive dependent still waiting
    /// is skipped, and returned so the caller can record it; or, with [`OnFailure::Draft`],
    /// its direct dependents stop waiting for it and will run as drafts (a draft never
    /// passes, so theirs will too).
    pub fn finish(&mut self, job: usize, outcome: JobOutcome) -> Vec<Finished> {
        if self.state.get(job) != Some(&State::Running) {
            return Vec::new();
        }
        self.running -= 1;
        for r in &self.resources[job] {
            self.held.remove(r);
        }
        match outcome {
            JobOutcome::Passed => {
                self.pass(job);
                Vec::new()
            }
            JobOutcome::Failed | JobOutcome::FailedEmpty => {
                self.state[job] = State::Unavailable;
                self.forget_resources(job);
                match (self.on_failure, outcome) {
                    (OnFailure::Skip, _) | (_, JobOutcome::FailedEmpty) => {
                        self.skip_dependents_of(job)
                    }
                    (OnFailure::Draft, _) => {
                        self.draft_dependents_of(job);
                        Vec::new()
                    }
                }
            }
        }
    }

    /// The waiting dependents of `job` no longer wait for it, and run as drafts.
    fn draft_dependents_of(&mut self, job: usize) {
        for &next in &self.dependents[job] {
            if self.state[next] != State::Waiting {
                continue;
            }
            self.draft_of[next].get_or_insert(job);
            self.unmet[next] -= 1;
            if self.unmet[next] == 0 {
                self.ready.insert(next);
            }
        }
    }

    fn pass(&mut self, job: usize) {
        self.state[job] = State::Passed;
        self.forget_resources(job);
        for &next in &self.dependents[job] {
            self.unmet[next] -= 1;
            if self.unmet[next] == 0 && self.state[next] == State::Waiting {
                self.ready.insert(next);
            }
        }
    }

    fn skip_dependents_of(&mut self, job: usize) -> Vec<Finished> {
        let mut skipped = Vec::new();
        let mut stack = vec![job];
        while let Some(at) = stack.pop() {
            for i in 0..self.dependents[at].len() {
                let next = self.dependents[at][i];
                if self.state[next] == State::Waiting {
                    self.state[next] = State::Skipped;
                    self.ready.remove(&next);
                    self.forget_resources(next);
                    skipped.push(Finished {
                        job: next,
                        because_of: at,
                    });
                    stack.push(next);
                }
            }
        }
        skipped.sort_by_key(|f| f.job);
        skipped
    }

    pub fn running(&self) -> usize {
        self.running
    }

    /// True when nothing runs and nothing more can ever become ready (the tests' invariant).
    #[cfg(test)]
    fn is_drained(&self) -> bool {
        self.running == 0 && self.ready.is_empty()
    }

    /// Jobs still waiting, which can only happen if the caller stopped early (cancellation).
    pub fn waiting(&self) -> Vec<usize> {
        (0..self.state.len())
            .filter(|&j| self.state[j] == State::Waiting)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_all(queue: &mut DependencyQueue, fail: &[usize]) -> (Vec<usize>, Vec<usize>) {
        let (mut ran, mut skipped) = (Vec::new(), Vec::new());
        while let Some(job) = queue.next_ready() {
            ran.push(job);
            let outcome = if fail.contains(&job) {
                JobOutcome::Failed
            } else {
                JobOutcome::Passed
            };
            skipped.extend(queue.finish(job, outcome).into_iter().map(|f| f.job));
        }
        (ran, skipped)
    }

    #[test]
    fn with_drafts_a_failure_lets_every_transitive_dependent_run_as_a_draft() {
        // 0 <- 1 <- 2 <- 3, and 4 independent, 5 needs 0 and 1.
        let deps = vec![vec![], vec![0], vec![1], vec![2], vec![], vec![0, 1]];
        let mut q = DependencyQueue::new(deps, 1);
        q.on_failure(OnFailure::Draft);
        // A draft never passes: its dependents are drafts too, because of it.
        let (ran, skipped) = run_all(&mut q, &[1, 2, 3, 5]);
        assert_eq!(ran, vec![0, 1, 2, 3, 4, 5]);
        assert!(skipped.is_empty());
        let drafts: Vec<_> = (0..6).map(|j| q.draft_of(j)).collect();
        assert_eq!(drafts, [None, None, Some(1), Some(2), None, Some(1)]);
        assert!(q.is_drained());
        // A draft waits for its other dependencies as any job does.
        let mut q = DependencyQueue::new(vec![vec![], vec![], vec![0, 1]], 2);
        q.on_failure(OnFailure::Draft);
        assert_eq!((q.next_ready(), q.next_ready()), (Some(0), Some(1)));
        q.finish(0, JobOutcome::Failed);
        assert_eq!(q.next_ready(), None, "2 still waits for 1");
        q.finish(1, JobOutcome::Passed);
        assert_eq!((q.next_ready(), q.draft_of(2)), (Some(2), Some(0)));
        // A job that failed and left nothing skips its dependents even so.
        let mut q = DependencyQueue::new(vec![vec![], vec![0], vec![1]], 1);
        q.on_failure(OnFailure::Draft);
        assert_eq!(q.next_ready(), Some(0));
        let skipped = q.finish(0, JobOutcome::FailedEmpty);
        assert_eq!(skipped.iter().map(|f| f.job).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(q.next_ready(), None);
    }

    #[test]
    fn linear_chain_runs_in_order() {
        let mut q = DependencyQueue::new(vec![vec![], vec![0], vec![1]], 1);
        assert_eq!(run_all(&mut q, &[]), (vec![0, 1, 2], vec![]));
        assert!(q.is_drained());
    }

    #[test]
    fn diamond_hands_out_both_middles_when_limit_allows() {
        let mut q = DependencyQueue::new(vec![vec![], vec![0], vec![0], vec![1, 2]], 4);
        assert_eq!(q.next_ready(), Some(0));
        assert_eq!(q.next_ready(), None, "1 and 2 wait for 0");
        q.finish(0, JobOutcome::Passed);
        assert_eq!(
            (q.next_ready(), q.next_ready(), q.next_ready()),
            (Some(1), Some(2), None)
        );
        q.finish(2, JobOutcome::Passed);
        assert_eq!(q.next_ready(), None, "3 waits for 1 too");
        q.finish(1, JobOutcome::Passed);
        assert_eq!(q.next_ready(), Some(3));
    }

    #[test]
    fn concurrency_limit_is_respected() {
        let mut q = DependencyQueue::new(vec![vec![]; 5], 2);
        assert_eq!(
            (q.next_ready(), q.next_ready(), q.next_ready()),
            (Some(0), Some(1), None)
        );
        assert_eq!(q.running(), 2);
        q.finish(1, JobOutcome::Passed);
        assert_eq!(q.next_ready(), Some(2));
    }

    #[test]
    fn failure_skips_every_transitive_dependent_but_not_others() {
        // 0 <- 1 <- 2 <- 3, and 4 independent, 5 needs 0 only.
        let mut q =
            DependencyQueue::new(vec![vec![], vec![0], vec![1], vec![2], vec![], vec![0]], 1);
        let (ran, skipped) = run_all(&mut q, &[1]);
        assert_eq!(ran, vec![0, 1, 4, 5]);
        assert_eq!(skipped, vec![2, 3]);
        assert!(q.is_drained());
    }

    #[test]
    fn skip_reports_the_failed_dependency() {
        let mut q = DependencyQueue::new(vec![vec![], vec![0], vec![1]], 1);
        assert_eq!(q.next_ready(), Some(0));
        let skipped = q.finish(0, JobOutcome::Failed);
        assert_eq!(
            skipped,
            vec![
                Finished {
                    job: 1,
                    because_of: 0
                },
                Finished {
                    job: 2,
                    because_of: 1
                }
            ]
        );
    }

    #[test]
    fn shared_resource_serialises_jobs() {
        let mut q = DependencyQueue::new(vec![vec![]; 3], 3);
        q.set_resources(0, vec!["a.py".into()]);
        q.set_resources(1, vec!["a.py".into()]);
        q.set_resources(2, vec!["b.py".into()]);
        assert_eq!(
            (q.next_ready(), q.next_ready(), q.next_ready()),
            (Some(0), Some(2), None)
        );
        q.finish(0, JobOutcome::Passed);
        assert_eq!(q.next_ready(), Some(1));
    }

    #[test]
    fn jobs_of_one_resource_run_in_job_order_whatever_finishes_first() {
        // 1 needs 0 (another file); 2 shares 1's file and is ready at once.
        let mut q = DependencyQueue::new(vec![vec![], vec![0], vec![]], 3);
        q.set_resources(0, vec!["g.py".into()]);
        q.set_resources(1, vec!["f.py".into()]);
        q.set_resources(2, vec!["f.py".into()]);
        assert_eq!(q.next_ready(), Some(0));
        assert_eq!(
            q.next_ready(),
            None,
            "2 waits for 1, the earlier job of f.py"
        );
        q.finish(0, JobOutcome::Passed);
        assert_eq!(q.next_ready(), Some(1));
        q.finish(1, JobOutcome::Failed);
        assert_eq!(
            q.next_ready(),
            Some(2),
            "a failed job no longer holds its file"
        );
    }

    #[test]
    fn a_skipped_job_no_longer_holds_back_its_file() {
        let mut q = DependencyQueue::new(vec![vec![], vec![0], vec![]], 2);
        q.set_resources(1, vec!["f.py".into()]);
        q.set_resources(2, vec!["f.py".into()]);
        assert_eq!(q.next_ready(), Some(0));
        assert_eq!(q.next_ready(), None);
        q.finish(0, JobOutcome::Failed);
        assert_eq!(q.next_ready(), Some(2));
    }

    #[test]
    fn presets_resume_from_a_checkpoint() {
        // 10 jobs in a chain; the first 4 passed before the crash.
        let deps = (0..10)
            .map(|j| if j == 0 { vec![] } else { vec![j - 1] })
            .collect();
        let mut q = DependencyQueue::new(deps, 1);
        for j in 0..4 {
            q.preset_passed(j);
        }
        let (ran, skipped) = run_all(&mut q, &[]);
        assert_eq!(ran, (4..10).collect::<Vec<_>>());
        assert!(skipped.is_empty());
    }

    #[test]
    fn unavailable_preset_skips_its_dependents() {
        let mut q = DependencyQueue::new(vec![vec![], vec![0], vec![]], 1);
        let skipped = q.preset_unavailable(0);
        assert_eq!(
            skipped,
            vec![Finished {
                job: 1,
                because_of: 0
            }]
        );
        assert_eq!(run_all(&mut q, &[]), (vec![2], vec![]));
    }

    #[test]
    fn finishing_a_job_that_is_not_running_changes_nothing() {
        let mut q = DependencyQueue::new(vec![vec![], vec![0]], 1);
        assert!(q.finish(1, JobOutcome::Failed).is_empty());
        assert_eq!(run_all(&mut q, &[]), (vec![0, 1], vec![]));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use proptest::sample::Index;

        /// Job statuses a plain reading of the rules gives: in job order (dependencies come
        /// first), a job whose dependency failed or was skipped is skipped; otherwise it runs
        /// and fails exactly when it is in `failing`.
        fn reference(deps: &[Vec<usize>], failing: &BTreeSet<usize>) -> Vec<&'static str> {
            let mut status: Vec<&'static str> = Vec::with_capacity(deps.len());
            for (job, needs) in deps.iter().enumerate() {
                status.push(if needs.iter().any(|&d| status[d] != "passed") {
                    "skipped"
                } else if failing.contains(&job) {
                    "failed"
                } else {
                    "passed"
                });
            }
            status
        }

        /// A random DAG over jobs `0..n` (dependencies on earlier jobs), the jobs that fail,
        /// a concurrency limit, and the choices of which running job ends next.
        fn case() -> impl Strategy<Value = (Vec<Vec<usize>>, BTreeSet<usize>, usize, Vec<Index>)> {
            (1..60usize).prop_flat_map(|n| {
                (
                    proptest::collection::vec(proptest::collection::vec(any::<Index>(), 0..4), n)
                        .prop_map(|picks| {
                            picks
                                .into_iter()
                                .enumerate()
                                .map(|(job, picks)| {
                                    if job == 0 {
                                        Vec::new()
                                    } else {
                                        picks.into_iter().map(|p| p.index(job)).collect()
                                    }
                                })
                                .collect::<Vec<Vec<usize>>>()
                        }),
                    proptest::collection::btree_set(0..n, 0..4),
                    1..5usize,
                    proptest::collection::vec(any::<Index>(), 2 * n),
                )
            })
        }

        /// Runs the queue to the end, ending one running job (chosen by `choices`) at a time;
        /// returns every job's status and the order the jobs started in.
        fn drive(
            queue: &mut DependencyQueue,
            deps: &[Vec<usize>],
            failing: &BTreeSet<usize>,
            limit: usize,
            choices: Vec<Index>,
        ) -> Result<(Vec<&'static str>, Vec<usize>), proptest::test_runner::TestCaseError> {
            let mut status = vec!["waiting"; deps.len()];
            let mut started = Vec::new();
            let mut running: Vec<usize> = Vec::new();
            let mut choices = choices.into_iter().cycle();
            loop {
                while let Some(job) = queue.next_ready() {
                    prop_assert_eq!(status[job], "waiting");
                    started.push(job);
                    running.push(job);
                }
                prop_assert!(running.len() <= limit);
                if running.is_empty() {
                    break;
                }
                let Some(pick) = choices.next() else { break };
                let job = running.swap_remove(pick.index(running.len()));
                let outcome = if failing.contains(&job) {
                    status[job] = "failed";
                    JobOutcome::Failed
                } else {
                    status[job] = "passed";
                    JobOutcome::Passed
                };
                for skipped in queue.finish(job, outcome) {
                    prop_assert_eq!(status[skipped.job], "waiting");
                    prop_assert!(deps[skipped.job].contains(&skipped.because_of));
                    status[skipped.job] = "skipped";
                }
            }
            Ok((status, started))
        }

        proptest! {
            #[test]
            fn a_failure_skips_exactly_its_transitive_dependents(
                (deps, failing, limit, choices) in case()
            ) {
                let expected = reference(&deps, &failing);
                let mut queue = DependencyQueue::new(deps.clone(), limit);
                let (status, _) = drive(&mut queue, &deps, &failing, limit, choices)?;
                prop_assert!(queue.is_drained());
                prop_assert_eq!(status, expected);
            }

            #[test]
            fn jobs_sharing_a_file_start_in_job_order_and_every_job_ends(
                (deps, failing, limit, choices) in case(),
                files in proptest::collection::vec(0..3usize, 60),
            ) {
                let expected = reference(&deps, &failing);
                let mut queue = DependencyQueue::new(deps.clone(), limit);
                for (job, file) in files.iter().take(deps.len()).enumerate() {
                    queue.set_resources(job, vec![format!("f{file}.py")]);
                }
                let (status, started) = drive(&mut queue, &deps, &failing, limit, choices)?;
                prop_assert!(queue.is_drained(), "nothing is left waiting: no deadlock");
                prop_assert_eq!(status, expected);
                for file in 0..3 {
                    let jobs: Vec<usize> =
                        started.iter().copied().filter(|&j| files[j] == file).collect();
                    prop_assert!(jobs.windows(2).all(|w| w[0] < w[1]), "{:?}", jobs);
                }
            }
        }
    }
}

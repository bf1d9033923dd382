//! Spreading work over interchangeable members (model endpoints, Docker engines): which
//! member to try first, second, ... given how busy each is and which failed recently.
//!
//! [`order`] decides, purely, and is tested with integers; [`Members`] keeps the counters and
//! the clock around it for a pool that runs requests concurrently.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What [`order`] needs to know of a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberState {
    pub in_flight: usize,
    /// Out of the pool until then, in milliseconds on any monotonic clock.
    pub down_until_ms: Option<u64>,
}

/// The order to try the members in at `now_ms`: those in the pool by fewest requests in
/// flight, ties from `turn` on (round robin); then those out of it, soonest back first, so a
/// request still has somewhere to go when every member has failed recently.
pub fn order(members: &[MemberState], now_ms: u64, turn: usize) -> Vec<usize> {
    let n = members.len();
    let rotated = |i: usize| (i + n - turn % n.max(1)) % n.max(1);
    let up = |m: &MemberState| m.down_until_ms.is_none_or(|t| t <= now_ms);
    let mut healthy: Vec<usize> = (0..n).filter(|&i| up(&members[i])).collect();
    healthy.sort_by_key(|&i| (members[i].in_flight, rotated(i)));
    let mut down: Vec<usize> = (0..n).filter(|&i| !up(&members[i])).collect();
    down.sort_by_key(|&i| (members[i].down_until_ms, rotated(i)));
    healthy.extend(down);
    healthy
}

/// A pool's members with their bookkeeping: requests in flight, and until when a member that
/// failed stays out.
pub struct Members<T> {
    members: Vec<Member<T>>,
    turn: AtomicUsize,
    epoch: Instant,
    cool_down: Duration,
}

struct Member<T> {
    value: T,
    in_flight: AtomicUsize,
    down_until: Mutex<Option<Instant>>,
}

/// A request in flight on a member; counted until dropped, however the request ends.
pub struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<T> Members<T> {
    /// A member that fails stays out for `cool_down` (unless every member is out).
    pub fn new(values: Vec<T>, cool_down: Duration) -> Members<T> {
        Members {
            members: values
                .into_iter()
                .map(|value| Member {
                    value,
                    in_flight: AtomicUsize::new(0),
                    down_until: Mutex::new(None),
                })
                .collect(),
            turn: AtomicUsize::new(0),
            epoch: Instant::now(),
            cool_down,
        }
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn get(&self, index: usize) -> &T {
        &self.members[index].value
    }

    fn ms(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_millis() as u64
    }

    /// The order to try the members in for the next request ([`order`], taking a turn).
    pub fn next_order(&self) -> Vec<usize> {
        let states: Vec<MemberState> = self
            .members
            .iter()
            .map(|m| MemberState {
                in_flight: m.in_flight.load(Ordering::SeqCst),
                down_until_ms: m.down_until.lock().ok().and_then(|d| d.map(|t| self.ms(t))),
            })
            .collect();
        let turn = self.turn.fetch_add(1, Ordering::SeqCst);
        order(&states, self.ms(Instant::now()), turn)
    }

    /// Counts a request on member `index` until the guard is dropped.
    pub fn start(&self, index: usize) -> InFlight<'_> {
        let counter = &self.members[index].in_flight;
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter)
    }

    /// Puts member `index` back in the pool (`ok`) or takes it out for the cool-down.
    pub fn mark(&self, index: usize, ok: bool) {
        if let Ok(mut until) = self.members[index].down_until.lock() {
            *until = (!ok).then(|| Instant::now() + self.cool_down);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(in_flight: usize) -> MemberState {
        MemberState {
            in_flight,
            down_until_ms: None,
        }
    }

    #[test]
    fn the_least_busy_endpoint_goes_first_and_ties_take_turns() {
        assert_eq!(order(&[up(2), up(0), up(1)], 0, 0), [1, 2, 0]);
        assert_eq!(order(&[up(0), up(0), up(0)], 0, 0), [0, 1, 2]);
        assert_eq!(order(&[up(0), up(0), up(0)], 0, 1), [1, 2, 0]);
        assert_eq!(order(&[up(0), up(0), up(0)], 0, 5), [2, 0, 1]);
    }

    #[test]
    fn an_endpoint_out_of_the_pool_comes_last_until_its_cool_down_ends() {
        let down = |until| MemberState {
            in_flight: 0,
            down_until_ms: Some(until),
        };
        assert_eq!(order(&[down(100), up(3)], 50, 0), [1, 0]);
        assert_eq!(order(&[down(100), up(3)], 100, 0), [0, 1]);
        // Every endpoint out: the one back soonest first.
        assert_eq!(order(&[down(300), down(200)], 0, 0), [1, 0]);
        assert!(order(&[], 0, 7).is_empty());
    }

    #[test]
    fn members_count_requests_in_flight_and_put_a_failed_one_last() {
        let members = Members::new(vec!["a", "b"], Duration::from_secs(60));
        let first = members.next_order();
        assert_eq!(first, [0, 1]);
        let busy = members.start(0);
        assert_eq!(members.next_order(), [1, 0], "the idle one first");
        drop(busy);
        members.mark(1, false);
        assert_eq!(members.next_order(), [0, 1]);
        assert_eq!(
            members.next_order(),
            [0, 1],
            "out of turn while out of the pool"
        );
        members.mark(1, true);
        // Back in the pool: with both idle, ties take turns again, so `b` leads one of two.
        let (one, two) = (members.next_order(), members.next_order());
        assert!(one[0] == 1 || two[0] == 1, "{one:?} {two:?}");
        assert_ne!(one, two, "ties take turns");
        assert_eq!(*members.get(1), "b");
    }
}

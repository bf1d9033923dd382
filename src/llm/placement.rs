//! Where the embedded provider runs a job: which slot of its KV cache, and which idle slots'
//! cached prompts it drops to make room (see `super::local`'s module doc). A pure function of
//! what each slot holds, so it is tested without a model.

/// What placing a job needs to know of a slot.
#[derive(Debug, Clone, Copy)]
pub(super) struct SlotView {
    /// Prompt tokens its cache already holds.
    pub(super) shared: usize,
    /// Cache cells it holds (a busy slot: all its job may need).
    pub(super) cells: usize,
    pub(super) busy: bool,
    pub(super) last_used: u64,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Placement {
    /// Run in `slot` after emptying the caches of the idle slots `evict`.
    Slot { slot: usize, evict: Vec<usize> },
    /// No slot is idle, or the busy ones leave too little room: wait for one to finish.
    Wait,
}

/// Where a job needing `need` cells goes: the idle slot sharing the longest prefix with its
/// prompt (the least recently used among equals), after evicting other idle slots' caches,
/// least recently used first, until the job fits in `capacity`.
pub(super) fn place(slots: &[SlotView], need: usize, capacity: usize) -> Placement {
    let Some(slot) = (0..slots.len())
        .filter(|&i| !slots[i].busy)
        .max_by_key(|&i| (slots[i].shared, std::cmp::Reverse(slots[i].last_used)))
    else {
        return Placement::Wait;
    };
    let mut used: usize = (0..slots.len())
        .filter(|&i| i != slot)
        .map(|i| slots[i].cells)
        .sum();
    let mut idle: Vec<usize> = (0..slots.len())
        .filter(|&i| i != slot && !slots[i].busy && slots[i].cells > 0)
        .collect();
    idle.sort_by_key(|&i| slots[i].last_used);
    let mut evict = Vec::new();
    for i in idle {
        if used + need <= capacity {
            break;
        }
        used -= slots[i].cells;
        evict.push(i);
    }
    if used + need <= capacity {
        Placement::Slot { slot, evict }
    } else {
        Placement::Wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(shared: usize, cells: usize, busy: bool, last_used: u64) -> SlotView {
        SlotView {
            shared,
            cells,
            busy,
            last_used,
        }
    }

    #[test]
    fn a_job_goes_to_the_idle_slot_sharing_most_of_its_prompt() {
        let slots = [
            view(900, 1000, true, 5),
            view(10, 1000, false, 1),
            view(300, 400, false, 2),
            view(0, 0, false, 0),
        ];
        assert_eq!(
            place(&slots, 3000, 16384),
            Placement::Slot {
                slot: 2,
                evict: vec![]
            }
        );
    }

    #[test]
    fn among_equals_the_least_recently_used_slot_is_taken() {
        let slots = [
            view(0, 500, false, 7),
            view(0, 500, false, 3),
            view(0, 500, false, 9),
        ];
        assert_eq!(
            place(&slots, 100, 16384),
            Placement::Slot {
                slot: 1,
                evict: vec![]
            }
        );
    }

    #[test]
    fn idle_caches_are_evicted_oldest_first_until_the_job_fits() {
        let slots = [
            view(0, 6000, true, 8),
            view(0, 3000, false, 4),
            view(0, 3000, false, 2),
            view(50, 3000, false, 6),
        ];
        // Slot 3 shares a prefix; 6000 + 3000 + 3000 + 5000 > 16000, so the oldest idle
        // other slot (2) goes, and that is enough.
        assert_eq!(
            place(&slots, 5000, 16000),
            Placement::Slot {
                slot: 3,
                evict: vec![2]
            }
        );
        assert_eq!(
            place(&slots, 9000, 16000),
            Placement::Slot {
                slot: 3,
                evict: vec![2, 1]
            }
        );
    }

    #[test]
    fn a_job_waits_while_busy_slots_leave_too_little_room_or_none_is_idle() {
        let crowded = [view(0, 9000, true, 1), view(0, 0, false, 0)];
        assert_eq!(place(&crowded, 8000, 16384), Placement::Wait);
        let all_busy = [view(0, 10, true, 1), view(0, 10, true, 2)];
        assert_eq!(place(&all_busy, 10, 16384), Placement::Wait);
    }
}

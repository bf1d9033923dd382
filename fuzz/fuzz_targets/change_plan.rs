//! The `zerorepo code` plan parser: a model's answer (or a `--plan FILE` the user edited) ->
//! task list -> checks -> order. The answer is hostile text; none of it may panic, hang or
//! overflow the stack.
//!
//! On a plan that passes its checks, the order keeps its promise: every task listed once, each
//! after the tasks it depends on; and the plan survives its own JSON round trip.

#![no_main]

use libfuzzer_sys::fuzz_target;
use zerorepo::change::plan::{ChangePlan, from_answer};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = ChangePlan::from_json(text) {
        let _ = e.to_string();
    }
    let plan = match from_answer(text) {
        Ok(plan) => plan,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let order = plan.order().expect("a checked plan has an order");
    assert_eq!(order.len(), plan.tasks.len());
    let mut seen = vec![false; plan.tasks.len()];
    for &at in &order {
        assert!(!seen[at], "task listed twice");
        for dependency in &plan.tasks[at].depends_on {
            let before = plan
                .tasks
                .iter()
                .position(|t| &t.id == dependency)
                .expect("a checked plan names only its own tasks");
            assert!(seen[before], "a task came before what it depends on");
        }
        seen[at] = true;
    }
    let again = ChangePlan::from_json(&plan.to_json()).expect("a plan reads back its own JSON");
    assert_eq!(again.tasks.len(), plan.tasks.len());
});

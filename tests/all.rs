//! The one integration test binary: `cargo test --test all`. Modules live in `tests/suite/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;

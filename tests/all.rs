//! The one integration test binary: `cargo test --test all`. Modules live in `tests/suite/`.

mod suite;

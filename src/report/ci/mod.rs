//! The report in CI: [`gate`] turns the model's verdicts into a pass/fail,
//! [`baseline`] keeps baselines per device identity, [`lava`] writes LAVA test-case
//! signals.

pub mod baseline;
pub mod gate;
pub mod lava;

//! What the rows of a run are keyed by, in runs.csv and beside it.

/// Where one run sits in the matrix: what the rows of `runs.csv` are keyed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunKey {
    pub run: u32,
    pub label: String,
    pub config: String,
    pub workload: String,
    pub repetition: u32,
    pub warmup: bool,
}

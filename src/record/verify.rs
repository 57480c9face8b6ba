//! `verify_errors.csv`: the bad blocks verify found, one row per block reported (the first
//! [`MAX_BAD_REPORTED`](crate::workload::engine::clone_io::MAX_BAD_REPORTED) of each job clone and
//! run; `runs.csv`'s `verify_errors` has the full count). Written before the run's rows
//! of `runs.csv`, so a run in runs.csv has all of its rows here.

use crate::workload::WorkloadResult;
use serde::{Deserialize, Serialize};

pub const VERIFY_ERRORS_CSV: &str = "verify_errors.csv";

/// One bad block of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyErrorRow {
    pub run: u32,
    pub config: String,
    pub workload: String,
    pub job: String,
    /// Byte offset of the block on the target.
    pub offset: u64,
    /// What was wrong with it (no header, checksum mismatch and which bytes differ, ...).
    pub problem: String,
}

/// The rows of one run's result (none when verify found nothing).
pub fn rows_for(run: u32, config: &str, result: &WorkloadResult) -> Vec<VerifyErrorRow> {
    let mut rows = Vec::new();
    for job in &result.jobs {
        for (offset, problem) in job.verify.iter().flat_map(|v| &v.first_bad) {
            rows.push(VerifyErrorRow {
                run,
                config: config.to_string(),
                workload: result.workload.clone(),
                job: job.job.clone(),
                offset: *offset,
                problem: problem.clone(),
            });
        }
    }
    rows
}

//! The byte ranges a plan will write, worked out without I/O (`mmcab run --dry-run`
//! shows them; the run itself checks them against the data on the device before the
//! first write, [`crate::workload::Target::check_data`]).

use super::Session;
use crate::workload::engine::job::write_regions;
use crate::workload::{EngineOptions, Target};
use anyhow::Result;

/// One job clone's writes in one or more configs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlannedWrite {
    pub workload: String,
    pub job: String,
    /// The configs it writes in (all of them unless a config changes the workload).
    pub configs: Vec<String>,
    /// Bytes `[start, end)` of the target.
    pub start: u64,
    pub end: u64,
}

/// Every job clone's writes, per workload, in plan order, for `--dry-run`. The target is
/// opened read-only (its size and block size; nothing is read or written).
pub fn planned_writes(session: &Session) -> Result<Vec<PlannedWrite>> {
    let target = Target::open(&session.target, false)?;
    let engine = EngineOptions {
        scale_down: session.scale_down.unwrap_or(1),
        seed: session.seed,
        cache_bytes: stated_cache_bytes(session),
        ..EngineOptions::default()
    };
    writes_on(session, &target, &engine)
}

/// The cache the target's card states, as the run will size `past_cache` writes by (0
/// when the target is no eMMC, or its card cannot be found or read).
pub fn stated_cache_bytes(session: &Session) -> u64 {
    super::device_state::Observer::open(&session.target, false)
        .map_or(0, |o| o.stated_cache_bytes())
}

/// Every job clone's writes on `target` as `engine` runs them, per workload, in plan
/// order; what the run checks before its first write and `--dry-run` shows.
pub fn writes_on(
    session: &Session,
    target: &Target,
    engine: &EngineOptions,
) -> Result<Vec<PlannedWrite>> {
    let mut out: Vec<PlannedWrite> = Vec::new();
    for &w in &session.workloads {
        for config in &session.configs {
            let spec = config.workload(&session.plan.workload[w]);
            for (job, start, end) in write_regions(&spec, target, engine)? {
                let same = out.iter_mut().find(|p| {
                    p.workload == spec.name && p.job == job && (p.start, p.end) == (start, end)
                });
                match same {
                    Some(p) => p.configs.push(config.name.clone()),
                    None => out.push(PlannedWrite {
                        workload: spec.name.clone(),
                        job,
                        configs: vec![config.name.clone()],
                        start,
                        end,
                    }),
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "planned_writes_docs_tests.rs"]
mod docs_tests;

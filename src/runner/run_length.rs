//! What `--dry-run` can say, before any I/O, of how long the plan's runs will last and
//! how much its write runs will write (the rules of [`crate::plan::length`]; the report
//! says the same of the runs as they went, report::load::run_length).
//!
//! Without a time floor (`min_runtime`, or `time_based` with `runtime`) a job's length
//! is its amount of I/O over the card's speed, which the dry run does not know: such a
//! job may be too short to trust on a fast card, and is warned about. A floor under
//! [`length::MIN_RUN`] (a short `min_runtime`, one divided by `--scale-down`, or a
//! `runtime` that stops the job sooner) is too short on any card. Where the target's
//! card states a cache, a write job whose amount stays under twice it is named too.

use super::Session;
use crate::plan::length;
use crate::plan::workload::{takes_min_runtime, JobSpec};
use crate::workload::engine::job::{past_cache, scaled};
use std::time::Duration;

/// One job's warning.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LengthWarning {
    pub workload: String,
    pub job: String,
    #[serde(flatten)]
    pub kind: LengthKind,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LengthKind {
    /// No time floor: the job's length is its amount of I/O (`bytes`; None: the rest of
    /// the target) over the card's speed.
    SizeOnly { bytes: Option<u64> },
    /// The job's floor (`key`: `min_runtime`, or `runtime` of a time-based job) or its
    /// `runtime` cap is `seconds`, under `min_s`; `scale_down` the `--scale-down` that
    /// divided it (1: none).
    ShortFloor {
        key: &'static str,
        seconds: f64,
        min_s: f64,
        scale_down: u32,
    },
    /// A write job whose amount of I/O (`bytes`) stays under twice the card's stated
    /// cache.
    InsideCache { bytes: u64, cache_bytes: u64 },
}

/// The warnings of every job of the session's workloads, as they will run on a card
/// stating a cache of `cache_bytes` (0: none) with a clock of `resolution_ns`.
pub fn warnings(
    session: &Session,
    cache_bytes: u64,
    resolution_ns: Option<u64>,
) -> Vec<LengthWarning> {
    let scale_down = session.scale_down.unwrap_or(1).max(1);
    let min_s = length::min_seconds(resolution_ns);
    let mut out = Vec::new();
    for &w in &session.workloads {
        let workload = &session.plan.workload[w];
        for written in &workload.job {
            let job = past_cache(scaled(written, scale_down), cache_bytes);
            let warn = |kind| LengthWarning {
                workload: workload.name.clone(),
                job: job.name.clone(),
                kind,
            };
            if let Some(kind) = length_kind(&job, min_s, scale_down) {
                out.push(warn(kind));
            }
            let bytes = job.io_size.or(job.size);
            if let Some(bytes) =
                bytes.filter(|&b| job.rw.writes() && length::inside_cache(b, cache_bytes))
            {
                out.push(warn(LengthKind::InsideCache { bytes, cache_bytes }));
            }
        }
    }
    out
}

/// The length warning of one job (scaled as it runs), if any. iozone and verify jobs
/// cannot wrap, so no floor can be given them: the report judges their runs.
fn length_kind(job: &JobSpec, min_s: f64, scale_down: u32) -> Option<LengthKind> {
    if !takes_min_runtime(job) {
        return None;
    }
    let short = |key, d: Duration| {
        (d.as_secs_f64() < min_s).then_some(LengthKind::ShortFloor {
            key,
            seconds: d.as_secs_f64(),
            min_s,
            scale_down: if key == "min_runtime" { scale_down } else { 1 },
        })
    };
    if let Some(cap) = job.runtime {
        if let Some(k) = short("runtime", cap) {
            return Some(k);
        }
        if job.time_based {
            return None;
        }
    }
    match job.min_runtime {
        Some(min) => short("min_runtime", min),
        None => Some(LengthKind::SizeOnly {
            bytes: job.io_size.or(job.size),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::test_job;

    #[test]
    fn a_job_without_a_floor_a_short_floor_and_a_short_cap_are_named() {
        let kind = |text: &str, scale: u32| {
            length_kind(&scaled(&test_job(text).unwrap(), scale), 1.0, scale)
        };
        assert_eq!(
            kind("rw = \"write\"\nbs = \"1M\"\nsize = \"4M\"", 1),
            Some(LengthKind::SizeOnly {
                bytes: Some(4 << 20)
            })
        );
        assert_eq!(kind("rw = \"read\"\nmin_runtime = \"1s\"", 1), None);
        assert_eq!(
            kind("rw = \"read\"\nmin_runtime = \"1s\"", 16),
            Some(LengthKind::ShortFloor {
                key: "min_runtime",
                seconds: 0.0625,
                min_s: 1.0,
                scale_down: 16
            })
        );
        assert_eq!(
            kind("rw = \"read\"\nruntime = 10\ntime_based = true", 1),
            None
        );
        assert_eq!(
            kind(
                "rw = \"read\"\nruntime = \"500ms\"\nmin_runtime = \"200ms\"",
                1
            ),
            Some(LengthKind::ShortFloor {
                key: "runtime",
                seconds: 0.5,
                min_s: 1.0,
                scale_down: 1
            })
        );
        assert_eq!(
            kind("rw = \"iozone\"\nsize = \"1M\"", 1),
            None,
            "iozone cannot wrap"
        );
    }

    #[test]
    fn past_cache_sizes_a_write_past_twice_the_cache() {
        let job =
            test_job("rw = \"write\"\nbs = \"1M\"\nsize = \"4M\"\npast_cache = true").unwrap();
        let sized = past_cache(job.clone(), 3 << 20);
        assert_eq!((sized.size, sized.io_size), (Some(6 << 20), Some(6 << 20)));
        assert_eq!(past_cache(job.clone(), 0), job, "no cache stated");
        let small = past_cache(job.clone(), 1 << 20);
        assert_eq!((small.size, small.io_size), (Some(4 << 20), Some(4 << 20)));
        let off = test_job("rw = \"write\"\nbs = \"1M\"\nsize = \"4M\"").unwrap();
        assert_eq!(past_cache(off.clone(), 64 << 20), off);
        assert!(length::inside_cache(4 << 20, 64 << 20));
    }
}

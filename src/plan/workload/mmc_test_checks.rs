//! The checks of a job with `engine = "mmc_test"` and of its workload (the test itself:
//! [`crate::plan::mmc_test`]).

use super::{Engine, JobSpec, Rw, WorkloadSpec};
use crate::plan::mmc_test::MmcTestCase;
use anyhow::{bail, Result};

/// The plan's `rw` that says the test's direction and order.
pub fn rw_of(case: MmcTestCase) -> Rw {
    match (case.is_random(), case.writes()) {
        (false, false) => Rw::Read,
        (false, true) => Rw::Write,
        (true, false) => Rw::RandRead,
        (true, true) => Rw::RandWrite,
    }
}

/// The keys of a job with `engine = "mmc_test"` (or an `mmc_test` key): the test, an
/// `rw` that says its direction, and `bs`, the transfer size whose row stands for the
/// run in the statistics (every size the test measures is recorded); mmc_test picks the
/// amount, the place and the time itself, so the keys that would say them are refused
/// rather than ignored.
pub fn check_job(job: &JobSpec) -> Result<()> {
    let case = match (job.engine == Engine::MmcTest, job.mmc_test) {
        (false, None) => return Ok(()),
        (false, Some(_)) => bail!("`mmc_test` applies to jobs with engine = \"mmc_test\""),
        (true, None) => bail!(
            "engine = \"mmc_test\" needs `mmc_test`, the test to run: one of {}",
            MmcTestCase::words()
        ),
        (true, Some(case)) => case,
    };
    if job.rw != rw_of(case) {
        bail!(
            "`rw` = \"{}\" does not say what mmc_test = \"{}\" does: use rw = \"{}\"",
            job.rw.as_str(),
            case.as_str(),
            rw_of(case).as_str()
        );
    }
    let refused = [
        (job.size.is_some(), "size"),
        (job.io_size.is_some(), "io_size"),
        (job.offset != 0, "offset"),
        (job.offset_increment != 0, "offset_increment"),
        (job.runtime.is_some(), "runtime"),
        (job.time_based, "time_based"),
        (job.min_runtime.is_some(), "min_runtime"),
        (job.past_cache.is_some(), "past_cache"),
        (job.ramp_time.is_some(), "ramp_time"),
        (job.iodepth != 1, "iodepth"),
        (
            job.iodepth_batch_complete_min.is_some(),
            "iodepth_batch_complete_min",
        ),
        (job.numjobs != 1, "numjobs"),
        (!job.direct, "direct"),
        (job.fsync != 0, "fsync"),
        (job.end_fsync, "end_fsync"),
        (job.randseed.is_some(), "randseed"),
        (job.verify, "verify"),
        (job.packed.is_some(), "packed"),
        (job.rwmixread.is_some(), "rwmixread"),
    ];
    if let Some((_, key)) = refused.iter().find(|(set, _)| *set) {
        bail!(
            "`{key}` does not apply to engine = \"mmc_test\": the kernel's test picks its \
             transfer sizes, amounts, places and times itself (docs/plans.md, \"mmc_test\"): \
             remove it"
        );
    }
    Ok(())
}

/// A workload that runs mmc_test runs it alone: one job, no `precondition` nor
/// `shared_window` (the test holds the card's host while it runs).
pub fn check_workload(spec: &WorkloadSpec) -> Result<()> {
    if !spec.uses_mmc_test() {
        return Ok(());
    }
    if spec.job.len() != 1 {
        bail!(
            "workload '{}': a job with engine = \"mmc_test\" runs alone (the kernel's test \
             holds the card's host): put each in a workload of its own",
            spec.name
        );
    }
    if spec.precondition || spec.shared_window {
        bail!(
            "workload '{}': `{}` does not apply to engine = \"mmc_test\" (the test prepares \
             its own area): remove it",
            spec.name,
            if spec.precondition {
                "precondition"
            } else {
                "shared_window"
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_job as job;
    use crate::plan::mmc_test::MmcTestCase;

    #[test]
    fn a_job_names_its_test_and_nothing_mmc_test_picks_itself() {
        let j = job("rw = \"write\"\nengine = \"mmc_test\"\nmmc_test = \"seq-write\"").unwrap();
        assert_eq!(j.mmc_test, Some(MmcTestCase::SeqWrite));
        for (text, says) in [
            ("rw = \"read\"\nengine = \"mmc_test\"", "needs `mmc_test`"),
            (
                "rw = \"read\"\nmmc_test = \"seq-read\"",
                "applies to jobs with",
            ),
            (
                "rw = \"read\"\nengine = \"mmc_test\"\nmmc_test = \"seq-write\"",
                "use rw = \"write\"",
            ),
            (
                "rw = \"read\"\nengine = \"mmc_test\"\nmmc_test = \"seq-read\"\nsize = \"64k\"",
                "`size` does not apply",
            ),
            (
                "rw = \"randread\"\nengine = \"mmc_test\"\nmmc_test = \"rand-read\"\nnumjobs = 2",
                "`numjobs` does not apply",
            ),
        ] {
            let err = format!("{:#}", job(text).unwrap_err());
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}

//! Workload and job descriptions as written in plan files (`[[workload]]`, `[[workload.job]]`).
//!
//! The keys are fio's words for the same things (rw, bs, size, offset, iodepth, numjobs,
//! direct, fsync, end_fsync, ramp_time, runtime, time_based, randseed, ...), so a kernel
//! developer can translate a fio job file line by line. Unknown keys are errors that name
//! the key; impossible values are reported by [`WorkloadSpec::validate`] with the
//! workload, the job and the key.

use super::mmc_test::MmcTestCase;
use super::packed::Packed;
use crate::units::{serde_duration, serde_size};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::time::Duration;

mod checks;
mod mmc_test_checks;

/// A set of jobs that run at the same time; one entry of the plan's `[[workload]]` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Every job keeps going (wrapping around its region) until the job with the most
    /// to do has done its amount, so all are measured over the same window; see
    /// the workload engine's `window`. Default: each job stops at its own amount (fio's
    /// default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_window: bool,
    /// Before each measured run, every job that writes writes its region once,
    /// sequentially and untimed ([`WorkloadSpec::precondition_pass`]), so the run finds
    /// the card in the state it leaves (docs/plans.md, "Run length").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub precondition: bool,
    pub job: Vec<JobSpec>,
}

/// I/O pattern of a job (fio's `rw`), plus iozone's random read/write test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rw {
    #[serde(rename = "read")]
    Read,
    #[serde(rename = "write")]
    Write,
    #[serde(rename = "randread")]
    RandRead,
    #[serde(rename = "randwrite")]
    RandWrite,
    /// Random mix of reads and writes, `rwmixread` percent reads (default 50).
    #[serde(rename = "randrw")]
    RandRw,
    /// iozone `-i 2` alone: a file of `size` bytes, records of `bs` bytes, every record
    /// exactly once in a fixed pseudo-random permutation, a read pass then a write pass.
    /// Reported as ops/s and KB/s per pass.
    #[serde(rename = "iozone-random")]
    IozoneRandom,
    /// iozone `-i 0 -i 2`: the write and rewrite passes of `-i 0` (sequential, every
    /// record, each its own clock, reported as the jobs `<job>:write` and
    /// `<job>:rewrite`), then the random read and random write passes of `-i 2` (the
    /// job's own read and write rows, and the group's). Files start empty, so the write
    /// pass allocates them; on a block device it writes over the blocks already there.
    #[serde(rename = "iozone")]
    Iozone,
}

impl Rw {
    pub fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::RandWrite)
    }
    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }
    pub fn is_random(self) -> bool {
        !matches!(self, Rw::Read | Rw::Write)
    }
    /// iozone's passes (`iozone-random` or `iozone`) instead of fio's one stream.
    pub fn is_iozone(self) -> bool {
        matches!(self, Rw::IozoneRandom | Rw::Iozone)
    }
    /// The plan word, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::RandRw => "randrw",
            Rw::IozoneRandom => "iozone-random",
            Rw::Iozone => "iozone",
        }
    }
}

/// How the I/O is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Engine {
    /// One pread/pwrite at a time per job thread (fio's `psync`).
    #[default]
    #[serde(rename = "sync", alias = "psync")]
    Sync,
    /// io_uring with `iodepth` I/Os in flight per job thread.
    #[serde(rename = "io_uring")]
    IoUring,
    /// Raw CMD23 + CMD18/CMD25 through the MMC ioctl, bypassing the block layer
    /// (eMMC only; see the workload engine's `ioctl`).
    #[serde(rename = "ioctl")]
    Ioctl,
    /// The kernel's mmc_test performance tests, run through its debugfs `test` file with
    /// the card unbound from mmc_block (the job's `mmc_test` key names the test; see the
    /// workload engine's `mmc_test`).
    #[serde(rename = "mmc_test")]
    MmcTest,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sync => "sync",
            Engine::IoUring => "io_uring",
            Engine::Ioctl => "ioctl",
            Engine::MmcTest => "mmc_test",
        }
    }
}

/// Data written by write jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Incompressible pseudo-random bytes (fio's default buffer contents).
    #[default]
    Random,
    /// All zero bytes, like `dd if=/dev/zero` (compressible; some controllers notice).
    Zeros,
}

fn default_bs() -> u64 {
    4096
}
fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}

/// One job of a workload. `numjobs` clones of it run in parallel, named `name.0`, `name.1`...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    pub name: String,
    pub rw: Rw,
    /// Percent of reads for `randrw` (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<u32>,
    /// Block size of each I/O (record size in iozone mode). Default 4KiB.
    #[serde(default = "default_bs", with = "serde_size")]
    pub bs: u64,
    /// Length of the region the job works in, starting at `offset` (default: the rest of
    /// the device or file). Also the amount of I/O unless `io_size` or `runtime` says
    /// otherwise. Required for directory targets and iozone mode (the file size).
    #[serde(
        default,
        with = "serde_size::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub size: Option<u64>,
    /// Amount of I/O to do inside the region (default: `size`).
    #[serde(
        default,
        with = "serde_size::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub io_size: Option<u64>,
    /// Start of the region on the target.
    #[serde(default, with = "serde_size")]
    pub offset: u64,
    /// Clone k of `numjobs` starts at `offset + k * offset_increment` (fio's key).
    #[serde(default, with = "serde_size")]
    pub offset_increment: u64,
    /// Stop after this long (whichever comes first with the amount of I/O).
    #[serde(
        default,
        with = "serde_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub runtime: Option<Duration>,
    /// Keep going until `runtime` even when the amount of I/O is done (wraps around).
    #[serde(default)]
    pub time_based: bool,
    /// Keep going (wrapping around the region, as `time_based` does) until the job has
    /// been measured at least this long, even when its amount of I/O is done sooner:
    /// the amount is then a floor, not the length (docs/plans.md, "Run length"). Default:
    /// the plan's `min_runtime`, for the jobs it applies to.
    #[serde(
        default,
        with = "serde_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_runtime: Option<Duration>,
    /// Write jobs: where the card states a volatile cache (EXT_CSD CACHE_SIZE), the
    /// region (`size`) and the amount of I/O are raised to at least twice it, so that
    /// the run measures the flash behind the cache (docs/plans.md, "Run length").
    /// Default: the plan's `past_cache`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_cache: Option<bool>,
    /// Run this long before measuring; I/O completed during the ramp is not counted.
    #[serde(
        default,
        with = "serde_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub ramp_time: Option<Duration>,
    /// I/Os in flight per clone (io_uring only; the sync engine has exactly one).
    #[serde(default = "one")]
    pub iodepth: u32,
    /// io_uring: wait for at least this many completions per `io_uring_enter` (fio's
    /// `iodepth_batch_complete_min`; 1 when unset). More means fewer wakeups and less
    /// CPU per I/O, and every recorded latency then includes the wait for the rest of
    /// the batch, as fio's clat does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth_batch_complete_min: Option<u32>,
    #[serde(default = "one")]
    pub numjobs: u32,
    #[serde(default)]
    pub engine: Engine,
    /// O_DIRECT (default true): bypass the page cache, as `dd oflag=direct` does.
    #[serde(default = "yes")]
    pub direct: bool,
    /// fsync after every N writes (0 = never), inside the timing.
    #[serde(default)]
    pub fsync: u32,
    /// fsync once when the job's writes are done, inside the timing.
    #[serde(default)]
    pub end_fsync: bool,
    /// Seed of the random offsets (default: derived from the plan seed and the job name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub randseed: Option<u64>,
    #[serde(default)]
    pub pattern: Pattern,
    /// Writes carry a header (offset, run id, sequence) and a CRC32; write jobs read
    /// every written block back afterwards, read jobs check the blocks they read.
    #[serde(default)]
    pub verify: bool,
    /// ioctl write jobs: writes per packed command (see [`Packed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed: Option<Packed>,
    /// `engine = "mmc_test"`: which of the kernel's mmc_test performance tests runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmc_test: Option<MmcTestCase>,
}

/// Job name of the rows that aggregate all jobs of a workload (group reporting in
/// runs.csv): no job of a plan may have it.
pub const GROUP_JOB: &str = "all";

/// The refusal of a job without a name (the caller names the workload).
pub const EMPTY_JOB_NAME: &str =
    "a [[workload.job]] has an empty `name`: add `name = \"...\"`, unique in the workload";

/// Smallest logical block size of any Linux block device; O_DIRECT needs at least this.
pub const MIN_LOGICAL_BLOCK_BYTES: u64 = 512;
/// Bytes of the verify header at the start of every written block.
pub const VERIFY_HEADER_BYTES: u64 = 40;

impl WorkloadSpec {
    /// Check every job; the message names the workload, the job and the key.
    pub fn validate(&self) -> Result<()> {
        if self.name.trim().is_empty() {
            bail!("a [[workload]] has an empty `name`: add `name = \"...\"`, unique in the plan");
        }
        if self.job.is_empty() {
            bail!(
                "workload '{}' has no [[workload.job]]: add at least one job",
                self.name
            );
        }
        if self.precondition && self.precondition_pass().is_none() {
            bail!(
                "workload '{}': `precondition` writes the regions of the jobs that write, \
                 and it has none (iozone's lay out their own files): remove it",
                self.name
            );
        }
        for (i, job) in self.job.iter().enumerate() {
            if job.name.trim().is_empty() {
                bail!("workload '{}': {EMPTY_JOB_NAME}", self.name);
            }
            if job.name == GROUP_JOB {
                bail!(
                    "workload '{}', job '{GROUP_JOB}': the name '{GROUP_JOB}' is reserved for \
                     the rows of all jobs together: rename the job",
                    self.name
                );
            }
            if self.job[..i].iter().any(|other| other.name == job.name) {
                bail!(
                    "workload '{}': two jobs are named '{}': job names must be unique",
                    self.name,
                    job.name
                );
            }
            job.validate().map_err(|e| {
                anyhow::anyhow!("workload '{}', job '{}': {e}", self.name, job.name)
            })?;
            if self.shared_window && (job.rw.is_iozone() || job.verify) {
                bail!(
                    "workload '{}', job '{}': `shared_window` cannot be combined with {} \
                     (jobs in a shared window wrap around their region)",
                    self.name,
                    job.name,
                    if job.verify {
                        "`verify`".to_string()
                    } else {
                        format!("rw = \"{}\"", job.rw.as_str())
                    }
                );
            }
        }
        mmc_test_checks::check_workload(self)
    }

    /// Number of job threads (sum of numjobs).
    pub fn threads(&self) -> u32 {
        self.job.iter().map(|j| j.numjobs).sum()
    }

    /// This workload with `packed` set on every job it applies to (a config's `packed`).
    pub fn with_packed(&self, packed: Packed) -> WorkloadSpec {
        let mut spec = self.clone();
        for job in spec.job.iter_mut().filter(|j| takes_packed(j)) {
            job.packed = Some(packed);
        }
        spec
    }

    /// The untimed pass `precondition` runs before each measured run: every job that
    /// writes (not iozone's), as one sequential write of its region with its own
    /// engine, `bs`, `offset`, `numjobs` and `past_cache`, then an fsync (which also
    /// empties the card's cache); no time keys, no verify. None without such a job.
    pub fn precondition_pass(&self) -> Option<WorkloadSpec> {
        let job: Vec<JobSpec> = self
            .job
            .iter()
            .filter(|j| j.rw.writes() && !j.rw.is_iozone())
            .map(|j| JobSpec {
                rw: Rw::Write,
                rwmixread: None,
                io_size: None,
                runtime: None,
                time_based: false,
                min_runtime: None,
                ramp_time: None,
                fsync: 0,
                end_fsync: true,
                verify: false,
                packed: None,
                mmc_test: None,
                ..j.clone()
            })
            .collect();
        (!job.is_empty()).then(|| WorkloadSpec {
            // The same name: on a directory target, the same files.
            name: self.name.clone(),
            description: None,
            shared_window: false,
            precondition: false,
            job,
        })
    }

    /// The plan's `min_runtime` on every job that takes one and has none of its own
    /// (not iozone's passes, which do every record once, nor `verify`, which would
    /// overwrite what it checks).
    pub fn with_min_runtime(&mut self, min: Duration) {
        for job in self.job.iter_mut().filter(|j| takes_min_runtime(j)) {
            job.min_runtime.get_or_insert(min);
        }
    }

    /// The plan's `past_cache` on every job that takes one and has none of its own.
    pub fn with_past_cache(&mut self, on: bool) {
        for job in self.job.iter_mut().filter(|j| takes_past_cache(j)) {
            job.past_cache.get_or_insert(on);
        }
    }

    /// Whether the workload runs mmc_test (its one job has `engine = "mmc_test"`).
    pub fn uses_mmc_test(&self) -> bool {
        self.job.iter().any(|j| j.engine == Engine::MmcTest)
    }

    /// Whether any job of the workload uses the ioctl engine.
    pub fn uses_ioctl(&self) -> bool {
        self.job.iter().any(|j| j.engine == Engine::Ioctl)
    }
}

/// A job that may wrap around its region to run longer: `min_runtime` applies to it.
pub fn takes_min_runtime(job: &JobSpec) -> bool {
    !job.rw.is_iozone() && !job.verify && job.engine != Engine::MmcTest
}

/// A job whose region and amount `past_cache` may raise: it writes, and is no iozone
/// job (whose `size` is its file's).
pub fn takes_past_cache(job: &JobSpec) -> bool {
    job.rw.writes() && !job.rw.is_iozone() && job.engine != Engine::MmcTest
}

/// A job whose writes `packed` applies to: the ioctl engine, sequential or random writes.
pub fn takes_packed(job: &JobSpec) -> bool {
    job.engine == Engine::Ioctl && matches!(job.rw, Rw::Write | Rw::RandWrite)
}

impl JobSpec {
    /// Percent of I/Os that are reads.
    pub fn read_percent(&self) -> u32 {
        match self.rw {
            Rw::Read | Rw::RandRead => 100,
            Rw::Write | Rw::RandWrite => 0,
            Rw::RandRw => self.rwmixread.unwrap_or(50),
            Rw::IozoneRandom | Rw::Iozone => 50,
        }
    }
}

/// Tests: the job `text` (TOML keys of one `[[job]]` named "j") of a workload named "w",
/// validated.
#[cfg(test)]
pub(crate) fn test_job(text: &str) -> Result<JobSpec> {
    let w: WorkloadSpec =
        toml::from_str(&format!("name = \"w\"\n[[job]]\nname = \"j\"\n{text}\n"))?;
    w.validate()?;
    Ok(w.job[0].clone())
}

#[cfg(test)]
mod tests;

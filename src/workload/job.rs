//! From a workload's jobs to job clones ready to run: the region each clone works in,
//! its phases (iozone: read pass then write pass), its file, and the state shared by
//! both engines while it runs (stop flags, verify, fsync).

use super::buffer::{check_block, fill_pattern, stamp_block, AlignedBuf};
use super::offsets::Order;
use super::result::{Direction, VerifyReport};
use super::spec::{JobSpec, Rw, WorkloadSpec};
use super::target::{Target, TargetKind};
use super::{Cancelled, EngineOptions};
use crate::units::format_size;
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Keep at most this many bad blocks in a verify report.
pub const MAX_BAD_REPORTED: usize = 16;

/// One pass over a clone's region.
#[derive(Debug, Clone)]
pub struct Phase {
    pub order: Order,
    pub read_percent: u32,
    pub ops: u64,
    pub seed: u64,
    /// Start this direction's clock when the phase begins (iozone's separate passes).
    pub clock: Option<Direction>,
}

/// One of `numjobs` copies of a job, with everything resolved against the target.
#[derive(Debug, Clone)]
pub struct ClonePlan {
    pub name: String,
    /// The job with --scale-down applied.
    pub job: JobSpec,
    pub path: PathBuf,
    pub region_start: u64,
    pub region_blocks: u64,
    pub phases: Vec<Phase>,
}

impl ClonePlan {
    pub fn region_end(&self) -> u64 {
        self.region_start + self.region_blocks * self.job.bs
    }
}

/// Scale a job down by `factor` (sizes and offsets; bs and times stay), keeping
/// everything a multiple of bs.
pub fn scaled(job: &JobSpec, factor: u32) -> JobSpec {
    let mut j = job.clone();
    if factor > 1 {
        let f = factor as u64;
        let down = |v: u64| (v / f) / j.bs * j.bs;
        j.size = job.size.map(|s| down(s).max(j.bs));
        j.io_size = job.io_size.map(|s| down(s).max(j.bs));
        j.offset = down(job.offset);
        j.offset_increment = down(job.offset_increment);
    }
    j
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Resolve every job clone of a workload against the target.
pub fn plan_clones(
    spec: &WorkloadSpec,
    target: &Target,
    opts: &EngineOptions,
) -> Result<Vec<ClonePlan>> {
    let mut clones = Vec::new();
    for written in &spec.job {
        let job = scaled(written, opts.scale_down);
        let at = |key: &str| format!("workload '{}', job '{}': `{key}`", spec.name, job.name);
        if job.direct && job.bs % target.logical_block_bytes != 0 {
            bail!(
                "{} = {} is not a multiple of the logical block size of {} ({} bytes), which O_DIRECT needs",
                at("bs"),
                job.bs,
                target.path.display(),
                target.logical_block_bytes
            );
        }
        for k in 0..job.numjobs {
            let start = job.offset + k as u64 * job.offset_increment;
            if job.direct && start % target.logical_block_bytes != 0 {
                bail!(
                    "{} = {start} is not a multiple of the logical block size ({} bytes)",
                    at("offset"),
                    target.logical_block_bytes
                );
            }
            let len = match (job.size, target.kind) {
                (Some(size), _) => size,
                (None, TargetKind::Directory) => {
                    bail!(
                        "{} is needed for a directory target (the size of each job's file)",
                        at("size")
                    )
                }
                (None, _) if target.size_bytes > start => target.size_bytes - start,
                (None, _) => bail!(
                    "{}: the region starts at {start} but {} holds {} bytes: set `size`",
                    at("offset"),
                    target.path.display(),
                    target.size_bytes
                ),
            };
            let blocks = len / job.bs;
            if blocks == 0 {
                bail!(
                    "{} leaves no room for one block of `bs` = {}",
                    at("size"),
                    job.bs
                );
            }
            if blocks > u32::MAX as u64 && (job.verify || job.rw == Rw::IozoneRandom) {
                bail!(
                    "{}: more than 2^32 blocks; use a larger `bs` or a smaller `size`",
                    at("size")
                );
            }
            if target.kind == TargetKind::BlockDevice && start + blocks * job.bs > target.size_bytes
            {
                bail!(
                    "{} + `size`: the region {}..{} ends past the end of {} ({}): lower them or use --scale-down",
                    at("offset"),
                    start,
                    start + blocks * job.bs,
                    target.path.display(),
                    format_size(target.size_bytes)
                );
            }
            let seed = match job.randseed {
                Some(s) => s.wrapping_add(k as u64),
                None => opts.seed ^ fnv1a(&format!("{}/{}/{k}", spec.name, job.name)),
            };
            let ops = if job.time_based {
                u64::MAX
            } else {
                job.io_size.unwrap_or(blocks * job.bs) / job.bs
            };
            let order = if job.rw.is_random() {
                Order::Random
            } else {
                Order::Sequential
            };
            let phases = if job.rw == Rw::IozoneRandom {
                vec![
                    Phase {
                        order: Order::Permutation,
                        read_percent: 100,
                        ops: blocks,
                        seed,
                        clock: Some(Direction::Read),
                    },
                    Phase {
                        order: Order::Permutation,
                        read_percent: 0,
                        ops: blocks,
                        seed,
                        clock: Some(Direction::Write),
                    },
                ]
            } else {
                vec![Phase {
                    order,
                    read_percent: job.read_percent(),
                    ops,
                    seed,
                    clock: None,
                }]
            };
            clones.push(ClonePlan {
                name: if job.numjobs == 1 {
                    job.name.clone()
                } else {
                    format!("{}.{k}", job.name)
                },
                path: target.path_for(&spec.name, &job.name, k),
                region_start: start,
                region_blocks: blocks,
                phases,
                job: job.clone(),
            });
        }
    }
    Ok(clones)
}

/// Stop flags checked between I/Os: the user's (Ctrl-C, SIGTERM) and "another clone failed".
pub struct Stop<'a> {
    pub user: &'a AtomicBool,
    pub sibling_failed: &'a AtomicBool,
}

/// A clone stopped because another one failed; the other one's error is the one reported.
#[derive(Debug)]
pub struct SiblingFailed;
impl std::fmt::Display for SiblingFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped because another job failed")
    }
}
impl std::error::Error for SiblingFailed {}

impl Stop<'_> {
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.user.load(Ordering::Relaxed) {
            return Err(Cancelled.into());
        }
        if self.sibling_failed.load(Ordering::Relaxed) {
            return Err(SiblingFailed.into());
        }
        Ok(())
    }
}

/// Write-side state: verify headers, the blocks written, fsync every N writes.
pub struct Writer {
    pub verify: bool,
    pub run_id: u64,
    pub sequence: u64,
    region_start: u64,
    bs: u64,
    /// One bit per block of the region, set when verify is on and the block was written.
    pub written: Vec<u64>,
    fsync_every: u32,
    since_fsync: u32,
}

impl Writer {
    pub fn new(plan: &ClonePlan, run_id: u64) -> Writer {
        let verify = plan.job.verify && plan.job.rw.writes();
        Writer {
            verify,
            run_id,
            sequence: 0,
            region_start: plan.region_start,
            bs: plan.job.bs,
            written: if verify {
                vec![0; plan.region_blocks.div_ceil(64) as usize]
            } else {
                Vec::new()
            },
            fsync_every: plan.job.fsync,
            since_fsync: 0,
        }
    }

    /// Stamp a block about to be written at `offset` (verify only).
    #[inline]
    pub fn prepare(&mut self, block: &mut [u8], offset: u64) {
        if self.verify {
            self.sequence += 1;
            stamp_block(block, offset, self.run_id, self.sequence);
            let i = (offset - self.region_start) / self.bs;
            self.written[(i / 64) as usize] |= 1 << (i % 64);
        }
    }

    /// Count a completed write; true when it is time to fsync.
    #[inline]
    pub fn written_one(&mut self) -> bool {
        if self.fsync_every == 0 {
            return false;
        }
        self.since_fsync += 1;
        if self.since_fsync >= self.fsync_every {
            self.since_fsync = 0;
            true
        } else {
            false
        }
    }
}

/// Checks blocks as read jobs with `verify = true` read them.
#[derive(Default)]
pub struct ReadChecker {
    pub enabled: bool,
    pub report: VerifyReport,
}

impl ReadChecker {
    #[inline]
    pub fn check(&mut self, block: &[u8], offset: u64, run_id: Option<u64>) {
        if !self.enabled {
            return;
        }
        self.report.blocks_checked += 1;
        if let Some(problem) = check_block(block, offset, run_id) {
            self.report.bad_blocks += 1;
            if self.report.first_bad.len() < MAX_BAD_REPORTED {
                self.report.first_bad.push((offset, problem));
            }
        }
    }
}

/// Everything a clone's engine needs besides its buffers.
pub struct CloneIo<'a> {
    pub name: &'a str,
    pub file: File,
    pub bs: u64,
    pub path: &'a std::path::Path,
    pub writer: Writer,
    pub checker: ReadChecker,
    pub stop: Stop<'a>,
    pub deadline: Option<Instant>,
}

impl CloneIo<'_> {
    pub fn io_error(&self, dir: Direction, offset: u64, e: std::io::Error) -> anyhow::Error {
        anyhow::Error::new(e).context(format!(
            "job '{}': {} of {} bytes at offset {offset} on {} failed",
            self.name,
            dir.as_str(),
            self.bs,
            self.path.display()
        ))
    }

    pub fn short_io(&self, dir: Direction, offset: u64, done: u64) -> anyhow::Error {
        anyhow::anyhow!(
            "job '{}': short {} at offset {offset} on {}: {done} of {} bytes (end of file or device?)",
            self.name,
            dir.as_str(),
            self.path.display(),
            self.bs
        )
    }

    pub fn fsync(&self) -> Result<()> {
        self.file.sync_all().with_context(|| {
            format!(
                "job '{}': fsync of {} failed",
                self.name,
                self.path.display()
            )
        })
    }
}

/// Read back every block a write job wrote (verify = true) and check it.
pub fn verify_written(
    plan: &ClonePlan,
    file: &File,
    writer: &Writer,
    stop: &AtomicBool,
) -> Result<VerifyReport> {
    let bs = plan.job.bs;
    let mut buf = AlignedBuf::new(bs as usize, 4096);
    let mut checker = ReadChecker {
        enabled: true,
        report: VerifyReport::default(),
    };
    for (word_index, &word) in writer.written.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            if stop.load(Ordering::Relaxed) {
                return Err(Cancelled.into());
            }
            let block = word_index as u64 * 64 + bits.trailing_zeros() as u64;
            bits &= bits - 1;
            let offset = plan.region_start + block * bs;
            let n = file.read_at(buf.as_mut_slice(), offset).with_context(|| {
                format!(
                    "job '{}': verify read at offset {offset} of {} failed",
                    plan.name,
                    plan.path.display()
                )
            })?;
            if n as u64 != bs {
                checker.report.blocks_checked += 1;
                checker.report.bad_blocks += 1;
                checker
                    .report
                    .first_bad
                    .push((offset, format!("short read: {n} of {bs} bytes")));
                continue;
            }
            checker.check(buf.as_slice(), offset, Some(writer.run_id));
        }
    }
    Ok(checker.report)
}

/// Make sure every file a clone uses exists and holds data up to the end of its region
/// (fio's layout step; reads of holes would measure nothing). Not timed. Returns the
/// files this created inside a directory target, for removal afterwards.
pub fn lay_out_files(clones: &[ClonePlan], target: &Target) -> Result<Vec<PathBuf>> {
    let mut created = Vec::new();
    if target.kind == TargetKind::BlockDevice {
        return Ok(created);
    }
    let mut needed: Vec<(PathBuf, u64, &JobSpec)> = Vec::new();
    for c in clones {
        match needed.iter_mut().find(|(p, _, _)| *p == c.path) {
            Some(entry) => entry.1 = entry.1.max(c.region_end()),
            None => needed.push((c.path.clone(), c.region_end(), &c.job)),
        }
    }
    for (path, len, job) in needed {
        let existed = path.exists();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        if !existed && target.kind == TargetKind::Directory {
            created.push(path.clone());
        }
        let have = file.metadata()?.len();
        if have >= len {
            continue;
        }
        let chunk = 1 << 20;
        let mut buf = vec![0u8; chunk];
        fill_pattern(&mut buf, job.pattern, 0x1a70_u64);
        let mut at = have;
        while at < len {
            let n = (len - at).min(chunk as u64) as usize;
            file.write_all_at(&buf[..n], at)
                .with_context(|| format!("cannot lay out {} ({} bytes)", path.display(), len))?;
            at += n as u64;
        }
        file.sync_all()
            .with_context(|| format!("fsync of {} failed", path.display()))?;
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spec::WorkloadSpec;

    fn spec(text: &str) -> WorkloadSpec {
        let w: WorkloadSpec = toml::from_str(text).unwrap();
        w.validate().unwrap();
        w
    }

    #[test]
    fn clones_get_regions_names_and_iozone_phases() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let target = Target::open(&dir.path().join("f"), false).unwrap();
        let w = spec(
            "name = \"w\"\n[[job]]\nname = \"a\"\nrw = \"write\"\nsize = \"1M\"\nnumjobs = 2\n\
             offset_increment = \"1M\"\nbs = \"64k\"\n[[job]]\nname = \"z\"\nrw = \"iozone-random\"\n\
             size = \"256k\"\n",
        );
        let clones = plan_clones(&w, &target, &EngineOptions::default()).unwrap();
        let names: Vec<_> = clones.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a.0", "a.1", "z"]);
        assert_eq!(
            (clones[1].region_start, clones[1].region_blocks),
            (1 << 20, 16)
        );
        assert_eq!(clones[0].phases[0].ops, 16);
        assert_eq!(clones[2].phases.len(), 2);
        assert_eq!(clones[2].phases[1].read_percent, 0);
        let halved = plan_clones(
            &w,
            &target,
            &EngineOptions {
                scale_down: 4,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            (halved[1].region_start, halved[1].region_blocks),
            (256 << 10, 4)
        );
    }

    #[test]
    fn directory_targets_need_size() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let target = Target::open(dir.path(), false).unwrap();
        let w = spec("name = \"w\"\n[[job]]\nname = \"a\"\nrw = \"read\"\ndirect = false\n");
        let err = plan_clones(&w, &target, &EngineOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`size`") && err.contains("job 'a'"), "{err}");
    }
}

//! From a workload's jobs to job clones ready to run: the region each clone works in,
//! its phases (iozone: read pass then write pass) and its file. What a clone's engine
//! uses while it runs is in [`super::clone_io`].

use super::buffer::fill_pattern;
use super::offsets::Order;
use crate::plan::length::CACHE_FACTOR;
use crate::plan::workload::{takes_past_cache, JobSpec, Rw, WorkloadSpec};
use crate::units::format_size;
use crate::workload::io_error::{IoFailure, IoOp, WorkloadError};
use crate::workload::options::EngineOptions;
use crate::workload::result::Direction;
use crate::workload::target::{Target, TargetKind};
use anyhow::{bail, Result};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// One pass over a clone's region.
#[derive(Debug, Clone)]
pub struct Phase {
    pub order: Order,
    pub read_percent: u32,
    pub ops: u64,
    pub seed: u64,
    /// Start this direction's clock when the phase begins (iozone's separate passes).
    pub clock: Option<Direction>,
    /// iozone's `-i 0` passes ("write", "rewrite"): measured on their own and reported
    /// as the job `<clone>:<pass>`, outside the group; None: the job's own rows.
    pub pass: Option<&'static str>,
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

/// Scale a job down by `factor` (sizes, offsets and `min_runtime`; bs and the other
/// times stay), keeping everything a multiple of bs.
pub fn scaled(job: &JobSpec, factor: u32) -> JobSpec {
    let mut j = job.clone();
    if factor > 1 {
        let f = factor as u64;
        let down = |v: u64| (v / f) / j.bs * j.bs;
        j.size = job.size.map(|s| down(s).max(j.bs));
        j.io_size = job.io_size.map(|s| down(s).max(j.bs));
        j.offset = down(job.offset);
        j.offset_increment = down(job.offset_increment);
        j.min_runtime = job.min_runtime.map(|d| d / factor);
    }
    j
}

/// `past_cache`: where the card states a cache of `cache_bytes`, a write job's region
/// (when it has a `size`) and its amount of I/O are at least twice it, in whole blocks
/// of `bs` (plan::length::CACHE_FACTOR).
pub fn past_cache(job: JobSpec, cache_bytes: u64) -> JobSpec {
    if job.past_cache != Some(true) || cache_bytes == 0 || !takes_past_cache(&job) {
        return job;
    }
    let want = (CACHE_FACTOR * cache_bytes).div_ceil(job.bs) * job.bs;
    let mut j = job;
    if let Some(size) = j.size {
        j.size = Some(size.max(want));
        j.io_size = Some(j.io_size.unwrap_or(size).max(want));
    } else if let Some(io_size) = j.io_size {
        j.io_size = Some(io_size.max(want));
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
        let job = past_cache(scaled(written, opts.scale_down), opts.cache_bytes);
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
            let (start, blocks) = clone_region(&job, k, target, &at)?;
            let seed = match job.randseed {
                Some(s) => s.wrapping_add(k as u64),
                None => opts.seed ^ fnv1a(&format!("{}/{}/{k}", spec.name, job.name)),
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
                phases: phases(&job, blocks, seed),
                job: job.clone(),
            });
        }
    }
    Ok(clones)
}

/// The byte ranges `[start, end)` of `target` that the workload's writing jobs write,
/// by job clone name (each clone's region; on a block device, what
/// [`Target::check_data`] checks).
pub fn write_regions(
    spec: &WorkloadSpec,
    target: &Target,
    opts: &EngineOptions,
) -> Result<Vec<(String, u64, u64)>> {
    if spec.uses_mmc_test() {
        return crate::workload::mmc_test::writes(spec, target);
    }
    Ok(plan_clones(spec, target, opts)?
        .into_iter()
        .filter(|c| c.job.rw.writes())
        .map(|c| (c.name.clone(), c.region_start, c.region_end()))
        .collect())
}

/// The region of clone `k` of `job`, checked against the target: (first byte, blocks of
/// `bs`). `at(key)` names the job and key for messages.
fn clone_region(
    job: &JobSpec,
    k: u32,
    target: &Target,
    at: &dyn Fn(&str) -> String,
) -> Result<(u64, u64)> {
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
    if blocks > u32::MAX as u64 && (job.verify || job.rw.is_iozone()) {
        bail!(
            "{}: more than 2^32 blocks; use a larger `bs` or a smaller `size`",
            at("size")
        );
    }
    if target.kind == TargetKind::BlockDevice && start + blocks * job.bs > target.size_bytes {
        bail!(
            "{} + `size`: the region {}..{} ends past the end of {} ({}): lower them or use --scale-down",
            at("offset"),
            start,
            start + blocks * job.bs,
            target.path.display(),
            format_size(target.size_bytes)
        );
    }
    Ok((start, blocks))
}

/// The passes of a clone over its `blocks`: one (reads, writes or both, as `rw` says), or
/// iozone's: `-i 0`'s sequential write and rewrite (rw = "iozone" only), then `-i 2`'s
/// random read pass and random write pass, each timed on its own clock.
fn phases(job: &JobSpec, blocks: u64, seed: u64) -> Vec<Phase> {
    if job.rw.is_iozone() {
        let sequential = |pass| Phase {
            order: Order::Sequential,
            read_percent: 0,
            ops: blocks,
            seed,
            clock: Some(Direction::Write),
            pass: Some(pass),
        };
        let mut out = Vec::new();
        if job.rw == Rw::Iozone {
            out.extend([sequential("write"), sequential("rewrite")]);
        }
        out.extend([(100, Direction::Read), (0, Direction::Write)].map(
            |(read_percent, direction)| Phase {
                order: Order::Permutation,
                read_percent,
                ops: blocks,
                seed,
                clock: Some(direction),
                pass: None,
            },
        ));
        return out;
    }
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
    vec![Phase {
        order,
        read_percent: job.read_percent(),
        ops,
        seed,
        clock: None,
        pass: None,
    }]
}

/// One file the clones of a workload use, and what it must hold before they start.
struct Layout<'a> {
    path: PathBuf,
    /// The end of the furthest region in it.
    len: u64,
    job: &'a JobSpec,
    /// Only rw = "iozone" clones use it: iozone creates its file and its `-i 0` write
    /// pass allocates it, so it starts empty.
    iozone_only: bool,
}

/// The files of `clones` on a file or directory target, each once.
fn layouts<'a>(clones: &'a [ClonePlan]) -> Vec<Layout<'a>> {
    let mut out: Vec<Layout> = Vec::new();
    for c in clones {
        let iozone = c.job.rw == Rw::Iozone;
        match out.iter_mut().find(|l| l.path == c.path) {
            Some(l) => {
                l.len = l.len.max(c.region_end());
                l.iozone_only &= iozone;
            }
            None => out.push(Layout {
                path: c.path.clone(),
                len: c.region_end(),
                job: &c.job,
                iozone_only: iozone,
            }),
        }
    }
    out
}

/// A file target that rw = "iozone" shares with other jobs cannot both start empty
/// (iozone's write pass allocates it) and hold the other jobs' data: refused.
pub fn check_layout(workload: &str, clones: &[ClonePlan], target: &Target) -> Result<()> {
    if target.kind != TargetKind::File {
        return Ok(());
    }
    for l in layouts(clones) {
        let iozone = clones
            .iter()
            .find(|c| c.path == l.path && c.job.rw == Rw::Iozone);
        if let (false, Some(c)) = (l.iozone_only, iozone) {
            bail!(
                "workload '{workload}', job '{}': rw = \"iozone\" starts from an empty file \
                 (its write pass allocates it) but other jobs of the workload use {} too: \
                 give the iozone job a workload of its own, or use a directory target",
                c.job.name,
                target.path.display()
            );
        }
    }
    Ok(())
}

/// Make sure every file a clone uses exists and holds data up to the end of its region
/// (fio's layout step; reads of holes would measure nothing), except the files of
/// rw = "iozone" jobs: those are created or truncated to empty, as iozone does, so its
/// `-i 0` write pass allocates the file (and the rewrite pass writes over it). Not
/// timed. Block devices are left as they are (an iozone write pass there writes over
/// existing blocks). Returns the files this created inside a directory target, for
/// removal afterwards.
pub fn lay_out_files(clones: &[ClonePlan], target: &Target) -> Result<Vec<PathBuf>, WorkloadError> {
    let mut created = Vec::new();
    if target.kind == TargetKind::BlockDevice {
        return Ok(created);
    }
    for Layout {
        path,
        len,
        job,
        iozone_only,
    } in layouts(clones)
    {
        let failed = |op, offset, len, e: &std::io::Error| {
            WorkloadError::from(IoFailure::new(op, offset, len, &path, &job.name).errno(e))
        };
        let existed = path.exists();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(iozone_only)
            .open(&path)
            .map_err(|e| failed(IoOp::Open, None, 0, &e))?;
        if !existed && target.kind == TargetKind::Directory {
            created.push(path.clone());
        }
        let have = file
            .metadata()
            .map_err(|e| failed(IoOp::Open, None, 0, &e))?
            .len();
        if iozone_only || have >= len {
            continue;
        }
        let chunk = 1 << 20;
        let mut buf = vec![0u8; chunk];
        fill_pattern(&mut buf, job.pattern, 0x1a70_u64);
        let mut at = have;
        while at < len {
            let n = (len - at).min(chunk as u64) as usize;
            match file.write_at(&buf[..n], at) {
                Ok(0) => {
                    return Err(
                        IoFailure::new(IoOp::LayOut, Some(at), n as u64, &path, &job.name)
                            .short(0)
                            .into(),
                    )
                }
                Ok(done) => at += done as u64,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(failed(IoOp::LayOut, Some(at), n as u64, &e)),
            }
        }
        file.sync_all()
            .map_err(|e| failed(IoOp::Fsync, None, 0, &e))?;
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::WorkloadSpec;

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
        let iozone =
            spec("name = \"w\"\n[[job]]\nname = \"z\"\nrw = \"iozone\"\nsize = \"256k\"\n");
        let z = &plan_clones(&iozone, &target, &EngineOptions::default()).unwrap()[0];
        let passes: Vec<_> = z
            .phases
            .iter()
            .map(|p| (p.pass, p.read_percent, p.order))
            .collect();
        assert_eq!(
            passes,
            [
                (Some("write"), 0, Order::Sequential),
                (Some("rewrite"), 0, Order::Sequential),
                (None, 100, Order::Permutation),
                (None, 0, Order::Permutation)
            ]
        );
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

    /// The target file turned into a directory after the checks: laying it out fails
    /// as an I/O error naming the operation, the file and the errno.
    #[test]
    fn a_file_that_cannot_be_opened_is_an_io_failure() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let path = dir.path().join("f");
        let target = Target::open(&path, false).unwrap();
        let w = spec("name = \"w\"\n[[job]]\nname = \"r\"\nrw = \"read\"\nsize = \"64k\"\n");
        let clones = plan_clones(&w, &target, &EngineOptions::default()).unwrap();
        std::fs::create_dir(&path).unwrap();
        let mut err = lay_out_files(&clones, &target).unwrap_err();
        assert_eq!(err.kind(), Some(crate::exit::Kind::IoFailed));
        let failure = err.io_failure_mut().expect("an IoFailure");
        assert_eq!(
            (failure.op, failure.errno),
            (IoOp::Open, Some(libc::EISDIR))
        );
        assert_eq!(
            err.into_error().to_string(),
            format!(
                "open of {} failed: EISDIR (Is a directory) [job 'r']",
                path.display()
            )
        );
    }

    #[test]
    fn iozone_files_start_empty_and_others_are_laid_out() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, vec![7u8; 64 << 10]).unwrap();
        let iozone =
            spec("name = \"w\"\n[[job]]\nname = \"z\"\nrw = \"iozone\"\nsize = \"256k\"\n");
        let target = Target::open(&file, false).unwrap();
        let clones = plan_clones(&iozone, &target, &EngineOptions::default()).unwrap();
        lay_out_files(&clones, &target).unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().len(),
            0,
            "iozone's write pass allocates its file: truncated"
        );
        let target = Target::open(dir.path(), false).unwrap();
        let both = spec(
            "name = \"w\"\n[[job]]\nname = \"z\"\nrw = \"iozone\"\nsize = \"256k\"\n\
             [[job]]\nname = \"r\"\nrw = \"iozone-random\"\nsize = \"256k\"\n",
        );
        let clones = plan_clones(&both, &target, &EngineOptions::default()).unwrap();
        let created = lay_out_files(&clones, &target).unwrap();
        let lens: Vec<u64> = created
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .collect();
        assert_eq!(
            lens,
            [0, 256 << 10],
            "iozone -i 2 alone reads what is there"
        );
    }

    #[test]
    fn iozone_does_not_share_a_file_target_with_other_jobs() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let target = Target::open(&dir.path().join("f"), false).unwrap();
        let w = spec(
            "name = \"w\"\n[[job]]\nname = \"z\"\nrw = \"iozone\"\nsize = \"256k\"\n\
             [[job]]\nname = \"r\"\nrw = \"read\"\nsize = \"256k\"\noffset = \"1M\"\n",
        );
        let clones = plan_clones(&w, &target, &EngineOptions::default()).unwrap();
        let err = check_layout("w", &clones, &target).unwrap_err().to_string();
        assert!(
            err.contains("job 'z'") && err.contains("workload of its own"),
            "{err}"
        );
        let dir_target = Target::open(dir.path(), false).unwrap();
        let clones = plan_clones(&w, &dir_target, &EngineOptions::default()).unwrap();
        check_layout("w", &clones, &dir_target).unwrap();
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

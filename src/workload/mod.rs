//! The workload engine: runs the jobs of one workload at the same time against a target
//! and measures them (throughput, IOPS, latency percentiles, per-second series, verify).
//!
//! What goes in: the plan's workloads ([`crate::plan::workload`]), [`options`] (how to
//! run besides the plan file: command line, run id) and a [`target`] (block device, file
//! or directory, its write-safety checks, who uses it, the data a write would destroy);
//! [`fio`] says a job in fio's words, for the fio export and the report.
//!
//! What runs: the job clones and the [`engine`]s (sync, io_uring, ioctl) with their
//! common parts; the ioctl engine's card facts ([`CardCache`]) are the caller's, kept per
//! open target.
//!
//! What comes out: the [`result`] of a workload; [`io_error`], a failed I/O as one typed
//! error (operation, offset, device, errno); [`measured_window`], when the measured I/O
//! begins and ends, for the runner's evidence.

pub mod engine;
pub mod fio;
pub mod io_error;
pub mod measured_window;
pub mod mmc_test;
pub mod options;
pub mod result;
pub mod target;

pub use engine::ioctl::CardCache;
pub use io_error::{Cancelled, IoFailure, IoOp, WorkloadError};
pub use measured_window::{MeasuredWindow, Unwatched};
pub use options::{new_run_id, EngineOptions};
pub use result::WorkloadResult;
pub use target::{OpenIoError, Target};

use crate::plan::workload::{Engine, WorkloadSpec};
use anyhow::Result;
use engine::clone_io::{self, CloneIo, ReadChecker, Stop, Writer};
use engine::job::{self, ClonePlan};
use engine::offsets::OffsetGen;
use engine::recorder::{DirStats, Recorder};
use engine::{completion, ioctl, sync, uring, window};
use result::{Direction, JobResult, VerifyReport};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::Instant;

/// What one clone thread hands back.
struct CloneOutcome {
    recorder: Recorder,
    cpu_seconds: f64,
    file: File,
    writer: Writer,
    checker: ReadChecker,
    /// What the clone's engine set up without ([`uring::UringEngine::fallbacks`]).
    fallback: Option<String>,
}

enum EngineImpl {
    Sync(sync::SyncEngine),
    Uring(Box<uring::UringEngine>),
    Ioctl(Box<ioctl::IoctlEngine>),
}

/// Everything that can be checked without doing I/O: the jobs' values, the write
/// permission and the regions against the target. Run it for every workload of a plan
/// before running the first one. `card` is what the ioctl engine found out about the
/// target's card so far (kept by the caller as long as the target stays open).
pub fn check_workload(
    spec: &WorkloadSpec,
    target: &Target,
    card: &CardCache,
    opts: &EngineOptions,
) -> Result<(), WorkloadError> {
    prepare(spec, target, card, opts)?;
    Ok(())
}

/// The checks before any I/O: each failure is a refusal ([`WorkloadError::Other`]) but
/// the ioctl engine's failed open of the card's node ([`WorkloadError::Io`]).
fn prepare(
    spec: &WorkloadSpec,
    target: &Target,
    card: &CardCache,
    opts: &EngineOptions,
) -> Result<Vec<ClonePlan>, WorkloadError> {
    if spec.uses_mmc_test() {
        spec.validate().map_err(WorkloadError::Other)?;
        mmc_test::check(spec, target).map_err(WorkloadError::Other)?;
        return Ok(Vec::new());
    }
    let clones = (|| -> Result<Vec<ClonePlan>> {
        spec.validate()?;
        if spec.job.iter().any(|j| j.rw.writes()) {
            target.check_write(&format!("workload '{}'", spec.name))?;
        }
        let clones = job::plan_clones(spec, target, opts)?;
        job::check_layout(&spec.name, &clones, target)?;
        Ok(clones)
    })()
    .map_err(WorkloadError::Other)?;
    if spec.uses_ioctl() {
        ioctl::setup::check(&spec.name, &clones, target, card, opts)?;
    }
    Ok(clones)
}

/// Run every job of `spec` at the same time against `target`; return what was measured.
/// `window` hears when the measured I/O begins and ends ([`measured_window`]); `card` is
/// as for [`check_workload`].
pub fn run_workload(
    spec: &WorkloadSpec,
    target: &Target,
    card: &CardCache,
    opts: &EngineOptions,
    window: &dyn MeasuredWindow,
) -> Result<WorkloadResult, WorkloadError> {
    if let Some(pass) = spec
        .precondition
        .then(|| spec.precondition_pass())
        .flatten()
    {
        // Untimed, unwatched, its numbers dropped: the state the measured run starts in.
        run_workload(&pass, target, card, opts, &measured_window::Unwatched)?;
    }
    let clones = prepare(spec, target, card, opts)?;
    let created = CreatedFiles(job::lay_out_files(&clones, target)?);
    let files = open_files(&clones, target)?;
    let mmc = match clones.iter().find(|c| c.job.engine == Engine::Ioctl) {
        // Opened by prepare()'s check already: the same answer, kept in `card`.
        Some(c) => Some(
            card.access(target)
                .map_err(|e| e.for_job(&spec.name, &c.job.name))?,
        ),
        None => None,
    };
    let result =
        run(spec, target, &clones, files, mmc, opts, window).map_err(WorkloadError::from_engine);
    drop(created);
    result
}

/// The engines' part: the clone threads, then verify. Their errors are `anyhow` errors
/// that carry their kind as a type ([`IoFailure`], [`Cancelled`]), sorted by
/// [`run_workload`].
fn run(
    spec: &WorkloadSpec,
    target: &Target,
    clones: &[ClonePlan],
    files: Vec<File>,
    mmc: Option<Arc<crate::device::raw_access::RawAccess>>,
    opts: &EngineOptions,
    window: &dyn MeasuredWindow,
) -> Result<WorkloadResult> {
    let shared = Shared {
        mmc,
        force: opts.force,
        align: target.logical_block_bytes as usize,
        run_id: opts.run_id,
        barrier: Barrier::new(clones.len()),
        measuring: Barrier::new(clones.len()),
        measured: measured_window::Measured::new(
            window,
            clones
                .iter()
                .map(|c| c.job.ramp_time.unwrap_or_default())
                .min()
                .unwrap_or_default(),
            clones.len(),
        ),
        origin: OnceLock::new(),
        cancel: &opts.cancel,
        sibling_failed: AtomicBool::new(false),
        window: spec.shared_window.then(|| {
            let flushing = clones
                .iter()
                .filter(|c| c.phases.iter().any(|p| ends_with_fsync(c, p)))
                .count();
            window::Window::counter(clones.len(), flushing)
        }),
    };
    let done = run_clones(clones, files, &shared);
    // Before verify reads the regions back.
    shared.measured.end();
    let done = done?;
    let origin = shared.origin.get().copied().unwrap_or_else(Instant::now);
    let started_unix_s = crate::clock::unix_now() - origin.elapsed().as_secs_f64();
    collect(spec, clones, done, started_unix_s, &opts.cancel)
}

/// Opens every clone's file; buffered jobs start from an empty page cache.
fn open_files(clones: &[ClonePlan], target: &Target) -> Result<Vec<File>, WorkloadError> {
    let mut files = Vec::with_capacity(clones.len());
    for c in clones {
        let file = target
            .open_io(&c.path, c.job.rw.writes(), c.job.direct)
            .map_err(|e| match e {
                // An I/O error on the target (the O_DIRECT refusal stays bad input).
                OpenIoError::Io(io) => IoFailure::new(IoOp::Open, None, 0, &c.path, &c.name)
                    .errno(&io)
                    .into(),
                OpenIoError::NoDirect(refusal) => WorkloadError::Other(refusal),
            })?;
        files.push(file);
    }
    for (c, f) in clones.iter().zip(&files) {
        if !c.job.direct {
            // fio's invalidate=1: buffered jobs start from an empty page cache (clean
            // pages only; dirty ones stay until written back).
            let _ = nix::fcntl::posix_fadvise(
                f,
                0,
                0,
                nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
            );
        }
    }
    Ok(files)
}

/// What the clone threads of one workload share.
struct Shared<'a> {
    /// The card, when a job uses the ioctl engine.
    mmc: Option<Arc<crate::device::raw_access::RawAccess>>,
    /// [`EngineOptions::force`].
    force: bool,
    /// I/O buffer alignment: the target's logical block size.
    align: usize,
    run_id: u64,
    /// Every clone starts measuring when all are set up.
    barrier: Barrier,
    /// ... and, without a ramp, once the measured window has begun.
    measuring: Barrier,
    measured: measured_window::Measured<'a>,
    /// The moment the first clone passed the barrier: time zero of the series.
    origin: OnceLock<Instant>,
    /// The user's cancel flag (SIGINT/SIGTERM).
    cancel: &'a AtomicBool,
    /// Set when a clone fails, so the others stop.
    sibling_failed: AtomicBool,
    /// `shared_window = true`: clones not yet handed their own amount of I/O, and
    /// writers not yet through their end_fsync.
    window: Option<Arc<window::Counts>>,
}

/// Runs one thread per clone; returns their outcomes in clone order, or the first real
/// error (not the "a sibling failed" stops it caused, and before a cancel: an I/O error
/// that came with the signal is still reported).
fn run_clones(
    clones: &[ClonePlan],
    files: Vec<File>,
    shared: &Shared,
) -> Result<Vec<CloneOutcome>> {
    let outcomes: Vec<Result<CloneOutcome>> = std::thread::scope(|scope| {
        if !shared.measured.ramp.is_zero() {
            scope.spawn(|| shared.measured.begin_after_ramp(&shared.origin));
        }
        let handles: Vec<_> = clones
            .iter()
            .zip(files)
            .map(|(plan, file)| {
                scope.spawn(move || {
                    let r = run_clone(plan, file, shared);
                    shared.measured.clone_done();
                    if r.is_err() {
                        shared.sibling_failed.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a job thread panicked")))
            })
            .collect()
    });
    clone_io::first_error(outcomes)
}

/// Per-job results (verify included) and the group totals per direction.
fn collect(
    spec: &WorkloadSpec,
    clones: &[ClonePlan],
    done: Vec<CloneOutcome>,
    started_unix_s: f64,
    cancel: &AtomicBool,
) -> Result<WorkloadResult> {
    let mut jobs = Vec::with_capacity(done.len());
    let mut group_read: Option<DirStats> = None;
    let mut group_write: Option<DirStats> = None;
    let cpu_seconds = done.iter().map(|o| o.cpu_seconds).sum();
    let mut engine_fallbacks: Vec<String> = Vec::new();
    for fallback in done.iter().filter_map(|o| o.fallback.as_ref()) {
        if !engine_fallbacks.contains(fallback) {
            engine_fallbacks.push(fallback.clone());
        }
    }
    for (plan, outcome) in clones.iter().zip(done) {
        let verify = if outcome.writer.verify {
            Some(clone_io::verify_written(
                plan,
                &outcome.file,
                &outcome.writer,
                cancel,
            )?)
        } else if outcome.checker.enabled {
            Some(outcome.checker.report)
        } else {
            None
        };
        let mut directions = Vec::new();
        for (wanted, stats, group) in [
            (plan.job.rw.reads(), &outcome.recorder.read, &mut group_read),
            (
                plan.job.rw.writes(),
                &outcome.recorder.write,
                &mut group_write,
            ),
        ] {
            if !wanted {
                continue;
            }
            directions.push(stats.to_result());
            match group {
                Some(g) => g.merge(stats),
                None => *group = Some(stats.clone()),
            }
        }
        // iozone's -i 0 passes, in the order they ran: their own rows, not in the group.
        for (pass, stats) in &outcome.recorder.passes {
            jobs.push(JobResult {
                job: format!("{}:{pass}", plan.name),
                directions: vec![stats.to_result()],
                verify: None,
                in_group: false,
            });
        }
        jobs.push(JobResult {
            job: plan.name.clone(),
            directions,
            verify,
            in_group: true,
        });
    }
    Ok(WorkloadResult {
        workload: spec.name.clone(),
        started_unix_s,
        jobs,
        group: [group_read, group_write]
            .iter()
            .flatten()
            .map(DirStats::to_result)
            .collect(),
        cpu_seconds,
        engine_fallbacks,
    })
}

/// Files created in a directory target, removed when the workload is done.
struct CreatedFiles(Vec<std::path::PathBuf>);
impl Drop for CreatedFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The clone's engine, set up (rings, buffers) before the clone meets the barrier.
fn new_engine(plan: &ClonePlan, file: &File, shared: &Shared) -> Result<EngineImpl> {
    let (job, align) = (&plan.job, shared.align);
    let seed = plan.phases[0].seed;
    match job.engine {
        Engine::Sync => Ok(EngineImpl::Sync(sync::SyncEngine::new(
            job.bs as usize,
            align,
            job.pattern,
            seed,
        ))),
        Engine::IoUring => {
            uring::UringEngine::new(file, job, align, seed).map(|e| EngineImpl::Uring(Box::new(e)))
        }
        Engine::Ioctl => {
            let access = shared
                .mmc
                .clone()
                .ok_or_else(|| anyhow::anyhow!("the ioctl engine has no card"))?;
            ioctl::IoctlEngine::new(
                access,
                job,
                plan.region_start..plan.region_end(),
                seed,
                shared.force,
            )
            .map(|e| EngineImpl::Ioctl(Box::new(e)))
        }
        Engine::MmcTest => anyhow::bail!(
            "job '{}': engine = \"mmc_test\" runs through the kernel's mmc_test, not a job thread",
            plan.name
        ),
    }
}

fn run_clone(plan: &ClonePlan, file: File, shared: &Shared) -> Result<CloneOutcome> {
    let job = &plan.job;
    // Set up before the barrier, so every clone starts measuring at the same moment;
    // a failed setup still meets the barrier (the others would wait forever).
    let engine = new_engine(plan, &file, shared);
    let mut recorder = Recorder::new(Instant::now());
    if shared.barrier.wait().is_leader() && shared.measured.ramp.is_zero() {
        shared.measured.begin();
    }
    shared.measuring.wait();
    let mut engine = engine.map_err(|e| anyhow::anyhow!("job '{}': {e:#}", plan.name))?;
    let fallback = match &engine {
        EngineImpl::Uring(e) => e.fallbacks(),
        EngineImpl::Sync(_) | EngineImpl::Ioctl(_) => None,
    };
    let cpu_start = thread_cpu_seconds();
    let origin = *shared.origin.get_or_init(Instant::now);
    recorder.measure_start = origin + job.ramp_time.unwrap_or_default();
    let mut io = CloneIo {
        name: &plan.name,
        file,
        bs: job.bs,
        path: &plan.path,
        writer: Writer::new(plan, shared.run_id),
        checker: ReadChecker {
            enabled: job.verify && !job.rw.writes(),
            report: VerifyReport::default(),
        },
        stop: Stop {
            user: shared.cancel,
            sibling_failed: &shared.sibling_failed,
        },
        deadline: job.runtime.map(|r| recorder.measure_start + r),
        buffered: !job.direct,
    };
    for phase in &plan.phases {
        let direction = if phase.read_percent == 100 {
            Direction::Read
        } else {
            Direction::Write
        };
        recorder.begin_pass(phase.pass, direction);
        if let Some(direction) = phase.clock {
            recorder.start_clock(direction, Instant::now());
        }
        // In a shared window the amount only says when this clone may let the window
        // end; it goes on (wrapping) until every clone has had its amount and every
        // writer's end_fsync has returned.
        let fsync_at_end = ends_with_fsync(plan, phase);
        let mut gen = OffsetGen::new(
            phase.order,
            plan.region_start,
            job.bs,
            plan.region_blocks,
            if shared.window.is_some() {
                u64::MAX
            } else {
                phase.ops
            },
            phase.read_percent,
            phase.seed,
        );
        let until = job.min_runtime.map(|m| recorder.measure_start + m);
        if let Some(short) = &shared.window {
            gen = gen.in_window(
                window::Window::new(short.clone(), phase.ops, fsync_at_end).at_least_until(until),
            );
        } else {
            gen = gen.at_least_until(until);
        }
        match &mut engine {
            EngineImpl::Sync(e) => e.run(&mut io, &mut gen, &mut recorder)?,
            EngineImpl::Uring(e) => e.run(&mut io, &mut gen, &mut recorder)?,
            EngineImpl::Ioctl(e) => e.run(&mut io, &mut gen, &mut recorder)?,
        }
        if fsync_at_end {
            completion::fsync(&io, &mut recorder)?;
            gen.window_flushed();
        }
    }
    Ok(CloneOutcome {
        recorder,
        cpu_seconds: thread_cpu_seconds() - cpu_start,
        file: io.file,
        writer: io.writer,
        checker: io.checker,
        fallback,
    })
}

/// The clone fsyncs when `phase` is done (end_fsync, and the phase writes).
fn ends_with_fsync(plan: &ClonePlan, phase: &job::Phase) -> bool {
    plan.job.end_fsync && phase.read_percent < 100
}

/// CPU time of the calling thread (user + system), seconds.
fn thread_cpu_seconds() -> f64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9)
        .unwrap_or(0.0)
}

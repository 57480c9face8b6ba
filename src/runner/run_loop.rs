//! The run loop, the same for both forms of a run. Before the first run: every knob
//! resolved and every value checked, every workload checked against the target, the
//! knobs snapshotted, the results directory opened (recorded runs). For every run: put
//! the config's knobs in place (applying only what differs) and verify them, check the
//! config's expectations, drop the page cache when a job reads through it (recorded
//! runs), run the workload, record it (fsynced). After the last run, a failure or a
//! signal: restore the knobs, on this one path (the guard's drop covers panics and early
//! errors). A failure mid-run (an I/O error, a knob that cannot be applied or restored)
//! keeps every recorded run and says how to finish with `--resume`.

use super::adaptive::Adaptive;
use super::device_state::Observer;
use super::error::RunError;
use super::events::{Event, Events, RunInfo};
use super::knobs::{self, KnobPlan};
use super::reopen::TargetSlot;
use super::results::Recording;
use super::session::Session;
use super::signals::Interrupts;
use super::{Done, Mode, Results, RunOptions};
use crate::evidence::Collector;
use crate::knob::guard::{GuardReport, KnobGuard, KnobsNotRestored};
use crate::knob::{Knob, Settings};
use crate::plan::matrix::Slot;
use crate::plan::workload::WorkloadSpec;
use crate::workload::target::Writes;
use crate::workload::{check_workload, run_workload, EngineOptions, Target, WorkloadError};
use crate::workload::{CardCache, WorkloadResult};
use anyhow::{Context, Result};
use std::sync::Arc;

/// Prepare the session's runs, run them, restore the knobs.
pub(super) fn run(
    mut session: Session,
    opts: &RunOptions,
    interrupts: &Interrupts,
    events: Arc<dyn Events>,
) -> Result<Done, RunError> {
    let Prepared {
        observer,
        knobs,
        wanted,
        target,
        card,
        engine,
    } = prepare(&session, opts, interrupts)?;
    let evidence = super::evidence::collector(opts, &session.target, &observer, &*events);
    let mut guard = KnobGuard::new(knobs, guard_report(&events));
    guard.snapshot_all()?;
    let mut recording = match session.mode {
        Mode::Recorded => Some(Recording::open(
            &mut session,
            opts.out.as_deref(),
            &observer,
            &guard,
            &*events,
        )?),
        Mode::OnePass => None,
    };
    if let Some(recording) = &mut recording {
        recording.note_evidence(evidence.meta())?;
    }
    let adaptive = Adaptive::for_session(&session, recording.as_ref().map(|r| r.dir()))?;
    let mut runs = Loop {
        session: &session,
        observer: &observer,
        target: TargetSlot::new(target, card),
        engine: &engine,
        wanted: &wanted,
        evidence: &evidence,
        recording,
        events: &*events,
        interrupts,
        results: Vec::new(),
        bad_blocks: 0,
        done: session.done_len(),
        warned_caches: false,
        warned_fallbacks: Vec::new(),
        adaptive,
        complete: false,
    };
    let looped = runs.all(&mut guard);
    // Knobs that rebind the block driver delete the disk: no handle of ours stays on it.
    runs.target.close();
    events.event(Event::Finish);
    // The one restore path, whether the loop finished, failed or was stopped.
    let restored = guard.restore_all();
    runs.finish(looped, restored)
}

/// What the runs need, checked before the first knob is touched.
struct Prepared {
    observer: Observer,
    knobs: Vec<Box<dyn Knob>>,
    wanted: Vec<Settings>,
    target: Target,
    /// What the ioctl engine found out about the target's card while checking.
    card: CardCache,
    engine: EngineOptions,
}

/// Find the device behind the target, resolve every knob and check every value the
/// configs want, open the target and check every workload against it.
fn prepare(
    session: &Session,
    opts: &RunOptions,
    interrupts: &Interrupts,
) -> Result<Prepared, RunError> {
    let observer = Observer::open(&session.target, knobs::needs_mmc(session))?;
    if let Some((writer, meta)) = &session.resumed {
        super::identity::check_same_device(meta, &observer, writer.dir(), opts.force)?;
    }
    let KnobPlan { knobs, wanted } = knobs::plan(session, &observer, opts.force)?;
    // A card in use besides (a board booting from it): what cannot run there, said now.
    if let Some(card) = super::shared_card::SharedCard::of(&session.target) {
        let stages: Vec<_> = knobs.iter().map(|k| (k.name(), k.stage())).collect();
        let results = super::shared_card::results_dir(session, opts);
        card.check(&stages, opts.allow_write, opts.force, results.as_deref())?;
    }
    let target = Target::open_with(
        &session.target,
        Writes::from_flags(opts.allow_write, opts.overwrite_data),
    )?;
    let engine = EngineOptions {
        scale_down: session.scale_down.unwrap_or(1),
        seed: session.seed,
        cancel: interrupts.stop.clone(),
        assume_cmd23_passthrough: opts.assume_cmd23_passthrough,
        force: opts.force,
        cache_bytes: observer.stated_cache_bytes(),
        ..EngineOptions::default()
    };
    let card = CardCache::default();
    for &w in &session.workloads {
        // Each config that changes a workload (`packed`) is checked as it will run.
        let mut seen = Vec::new();
        for config in &session.configs {
            if seen.contains(&config.packed) {
                continue;
            }
            seen.push(config.packed);
            let spec = config.workload(&session.plan.workload[w]);
            check_workload(&spec, &target, &card, &engine).map_err(|e| match config.packed {
                Some(packed) => e.context(format!("config {} (packed = {packed})", config.name)),
                None => e,
            })?;
        }
    }
    // Before the first write: nothing the plan writes may destroy data unless the user
    // said it may go.
    let writes: Vec<(u64, u64)> = super::planned_writes::writes_on(session, &target, &engine)?
        .iter()
        .map(|p| (p.start, p.end))
        .collect();
    target.check_data(&writes)?;
    Ok(Prepared {
        observer,
        knobs,
        wanted,
        target,
        card,
        engine,
    })
}

/// The guard's messages, as events.
fn guard_report(events: &Arc<dyn Events>) -> GuardReport {
    let events = Arc::clone(events);
    Box::new(move |event| events.event(Event::Restore(event)))
}

/// Everything a run needs, and what the runs so far gave.
struct Loop<'a> {
    session: &'a Session,
    observer: &'a Observer,
    target: TargetSlot,
    engine: &'a EngineOptions,
    /// Knob values per config.
    wanted: &'a [Settings],
    evidence: &'a Collector,
    recording: Option<Recording>,
    events: &'a dyn Events,
    interrupts: &'a Interrupts,
    /// One pass: the results, in order.
    results: Vec<WorkloadResult>,
    bad_blocks: u64,
    /// Runs finished, by this invocation and the ones it resumes.
    done: u32,
    warned_caches: bool,
    /// The engine fallbacks said on stderr already (each once).
    warned_fallbacks: Vec<String>,
    /// `--until-ci`: which runs are left out.
    adaptive: Option<Adaptive>,
    /// Every run of the matrix is done or left out by `--until-ci`: the loop got to its
    /// end (a signal after the last run stops nothing).
    complete: bool,
}

impl Loop<'_> {
    /// Every pending run in order, until the last or a signal.
    fn all(&mut self, guard: &mut KnobGuard) -> Result<(), RunError> {
        let session = self.session;
        self.events.event(Event::Start {
            mode: session.mode,
            total: session.matrix.len(),
            pending: session.pending_len(),
            dir: self.recording.as_ref().map(|r| r.dir()),
        });
        for slot in session.pending() {
            if self.adaptive.as_ref().is_some_and(|a| a.skips(&slot)) {
                continue;
            }
            if self.interrupts.stopped() || !self.one(guard, slot).map_err(|e| self.explain(e))? {
                return Ok(());
            }
        }
        self.complete = true;
        Ok(())
    }

    /// A run failed: when the target is gone (the card removed, a driver unbound), say
    /// so first, whatever failed (an I/O error carries it in its own line).
    fn explain(&self, err: RunError) -> RunError {
        if err.io_failure().is_some_and(|f| f.note.is_some()) {
            return err;
        }
        match self.target.vanished() {
            Some(note) => err.context(note),
            None => err,
        }
    }

    /// After the loop and the restore: say where a stopped or failed run stands, return
    /// the error (a failed restore was reported with the commands to finish it by hand,
    /// and is named in the error too), or what the runs gave.
    fn finish(
        mut self,
        looped: Result<(), RunError>,
        restored: Result<(), KnobsNotRestored>,
    ) -> Result<Done, RunError> {
        let session = self.session;
        // A loop that ended without error before its end was stopped by a signal (the
        // run in progress discarded): never recorded as finished.
        let stopped = looped.is_ok() && !self.complete;
        if stopped {
            self.events.event(Event::Stopped {
                mode: session.mode,
                done: self.done,
                total: session.matrix.len(),
                dir: self.recording.as_ref().map(|r| r.dir()),
                allow_write: self.target.allow_write(),
            });
        }
        if looped.is_err() || (restored.is_err() && !stopped) {
            return Err(self.failed(looped, restored));
        }
        restored?;
        let adaptive = self.adaptive.as_ref().map(Adaptive::summary);
        if let (Some(recording), Some(summary)) = (self.recording.as_mut(), &adaptive) {
            recording.note_until_ci(summary)?;
        }
        let results = match self.recording {
            None => Results::OnePass(self.results),
            Some(recording) if stopped => Results::Recorded {
                dir: recording.dir().to_path_buf(),
                rows: Vec::new(),
            },
            Some(recording) => {
                let (dir, rows) = recording.finish()?;
                Results::Recorded { dir, rows }
            }
        };
        Ok(Done {
            adaptive,
            results,
            bad_blocks: self.bad_blocks,
            stopped: stopped.then(|| self.interrupts.kind()),
        })
    }

    /// The runs ended with an error (the loop's, the restore's or both): every finished
    /// run is already in runs.csv; mark a complete matrix (`--until-ci`: every workload
    /// stopped or at `--max-repeat`) finished in meta.json, say
    /// where the runs are and how to go on, and return one error naming both failures.
    fn failed(
        self,
        looped: Result<(), RunError>,
        restored: Result<(), KnobsNotRestored>,
    ) -> RunError {
        let total = self.session.matrix.len();
        let mut dir = None;
        let mut finishing = None;
        if let Some(recording) = self.recording {
            dir = Some(recording.dir().to_path_buf());
            if looped.is_ok() && self.complete {
                finishing = recording.finish().err();
            }
        }
        self.events.event(Event::Failed {
            mode: self.session.mode,
            done: self.done,
            total,
            dir: dir.as_deref(),
            allow_write: self.target.allow_write(),
        });
        let err = match (looped, restored) {
            (Err(err), Ok(())) => err,
            (Ok(()), Err(restore)) => restore.into(),
            (Err(err), Err(restore)) => err.not_restored(restore),
            (Ok(()), Ok(())) => unreachable!("failed() is only called after an error"),
        };
        match finishing {
            Some(finishing) => err.context(format!("{finishing:#}")),
            None => err,
        }
    }

    /// One run; false when a signal stopped it (the run is discarded).
    fn one(&mut self, guard: &mut KnobGuard, slot: Slot) -> Result<bool, RunError> {
        let session = self.session;
        let config = &session.configs[slot.config];
        let spec = session.spec_for(&slot);
        let run = RunInfo {
            mode: session.mode,
            slot,
            total: session.matrix.len(),
            config: &config.name,
            workload: &spec.name,
            target: &session.target,
        };
        let what = match session.mode {
            Mode::OnePass => format!("workload '{}'", spec.name),
            Mode::Recorded => format!(
                "run {}/{} ({}, {}, repetition {})",
                slot.run, run.total, config.name, spec.name, slot.repetition
            ),
        };
        let read_ios = self
            .recording
            .as_ref()
            .is_some_and(|r| knobs::expect_reads_ios(config) || !r.has_observed(slot.config));
        let switch = knobs::switch_to(
            guard,
            &self.wanted[slot.config],
            &mut self.target,
            self.observer,
            config,
            self.evidence,
            read_ios,
        )
        .with_context(|| what.clone())?;
        let verified = &switch.verified;
        if let Some(recording) = &mut self.recording {
            recording.observe_config(slot.config, self.observer)?;
            recording.note_switch(slot.config, slot.run, &switch)?;
            self.drop_caches_for(&spec);
        }
        self.events.event(Event::RunStarting { run });
        let window = super::evidence::EvidenceWindow::new(self.evidence);
        let ran = if spec.uses_mmc_test() {
            super::mmc_test::run(&spec, &mut self.target, self.observer, &window)
        } else {
            run_workload(
                &spec,
                self.target.get()?,
                self.target.card(),
                self.engine,
                &window,
            )
        };
        let result = match ran {
            Ok(result) => result,
            // Only the engine's own cancel is one: an I/O error that comes with a signal
            // is still an error, reported as such.
            Err(WorkloadError::Cancelled) => return Ok(false),
            Err(mut err) => {
                // The errno of I/O on a vanished disk misleads (ENOSPC): say it is gone;
                // an EIO from a card that stopped answering: say that.
                if let Some(failure) = err.io_failure_mut() {
                    failure.note = self
                        .target
                        .vanished()
                        .or_else(|| self.observer.card_silent());
                }
                return Err(err.context(what).into());
            }
        };
        // A run that completed as the signal came is whole: it is kept.
        let evidence = window.take();
        self.note_fallbacks(&result)?;
        if let Some(recording) = &self.recording {
            recording.append(&run, &result, evidence.as_ref())?;
        }
        self.bad_blocks += bad_blocks(&result);
        self.done += 1;
        self.events.event(Event::RunDone {
            run,
            verified,
            result: &result,
            evidence: evidence.as_ref(),
        });
        if let Some(stop) = self
            .adaptive
            .as_mut()
            .and_then(|a| a.record(&slot, &result))
        {
            self.events.event(Event::Converged { stop: &stop });
        }
        if session.mode == Mode::OnePass {
            self.results.push(result);
        }
        Ok(true)
    }

    /// An engine set up without something (an io_uring ring with plain opcodes): say it
    /// once on stderr and record it in meta.json.
    fn note_fallbacks(&mut self, result: &WorkloadResult) -> Result<()> {
        let recorded = match self.recording {
            Some(_) => " (recorded in meta.json)",
            None => "",
        };
        for fallback in &result.engine_fallbacks {
            if !self.warned_fallbacks.contains(fallback) {
                self.events.event(Event::Warning(format!(
                    "workload '{}': {fallback}: this kernel refused it; the numbers are not \
                     those of the engine as it is meant to run{recorded}",
                    result.workload
                )));
                self.warned_fallbacks.push(fallback.clone());
            }
        }
        if let Some(recording) = &mut self.recording {
            recording.note_engine_fallbacks(&result.engine_fallbacks)?;
        }
        Ok(())
    }

    /// Buffered reads should start cold: drop the page cache before a workload with a
    /// `direct = false` job (warns once when that is not allowed).
    fn drop_caches_for(&mut self, spec: &WorkloadSpec) {
        if spec.job.iter().all(|j| j.direct) {
            return;
        }
        if let Err(err) = drop_caches() {
            if !self.warned_caches {
                self.events.event(Event::Warning(format!("{err:#}")));
                self.warned_caches = true;
            }
        }
    }
}

fn bad_blocks(result: &WorkloadResult) -> u64 {
    result
        .jobs
        .iter()
        .filter_map(|j| j.verify.as_ref())
        .map(|v| v.bad_blocks)
        .sum()
}

/// `sync; echo 3 > /proc/sys/vm/drop_caches`, so buffered reads start cold.
fn drop_caches() -> Result<()> {
    nix::unistd::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").context(
        "cannot drop the page cache (/proc/sys/vm/drop_caches): buffered reads may come from \
         memory; run as root",
    )
}

//! The results directory of a recorded run, as the runner fills it: meta.json (device,
//! per-config observations, start and end), restore.sh before the first knob change,
//! and every finished run appended (see [`crate::record`] for the files).

use super::device_state::Observer;
use super::events::{Event, Events, RunInfo};
use super::knobs::Switch;
use super::session::{hex, Session};
use crate::clock::{unix_now, utc_stamp};
use crate::device::sysfs::read_trimmed;
use crate::evidence::RunEvidence;
use crate::knob::guard::KnobGuard;
use crate::plan::matrix::Slot;
use crate::record::run_key::RunKey;
use crate::record::until_ci::UntilCi;
use crate::record::writer::{read_rows, ResultsWriter};
use crate::record::{ConfigMeta, EvidenceMeta, Meta, RunRow, SwitchMeta, RESTORE_SH, RUNS_CSV};
use crate::workload::WorkloadResult;
use anyhow::Result;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// An open results directory and its meta.json.
pub struct Recording {
    writer: ResultsWriter,
    meta: Meta,
    label: String,
}

impl Recording {
    /// The resumed directory, or a new one (`out`, or `results/<plan>[-<label>]-<UTC
    /// time>`) with the device and the knobs' snapshots in meta.json; then `restore.sh`,
    /// before any knob is changed. A resumed run keeps the `restore.sh` of its first
    /// start (the knobs were adopted from meta.json, [`super::knobs::plan`]).
    pub fn open(
        session: &mut Session,
        out: Option<&Path>,
        observer: &Observer,
        guard: &KnobGuard,
        events: &dyn Events,
    ) -> Result<Recording> {
        let (writer, meta) = match session.resumed.take() {
            Some((writer, meta)) => {
                let missing: Vec<String> = guard
                    .names()
                    .into_iter()
                    .filter(|n| {
                        !meta
                            .knob_originals
                            .as_ref()
                            .is_some_and(|m| m.contains_key(n.as_str()))
                    })
                    .collect();
                if !missing.is_empty() {
                    events.event(Event::Warning(format!(
                        "{}/meta.json does not record the value of {} from before the first \
                         start (written by an older mmcab): restoring to the values now; \
                         restore.sh has the ones from the first start",
                        writer.dir().display(),
                        missing.join(", ")
                    )));
                }
                if writer.dir().join(RESTORE_SH).exists() {
                    return Ok(Recording {
                        writer,
                        meta,
                        label: session.label.clone(),
                    });
                }
                (writer, meta)
            }
            None => {
                let dir = out
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| default_out_dir(session));
                let mut meta = new_meta(session);
                meta.knob_originals = Some(guard.saved());
                if let Err(err) = observer.describe(&mut meta) {
                    events.event(Event::Warning(format!(
                        "device identity for meta.json: {err:#}"
                    )));
                }
                (ResultsWriter::create(&dir, &meta)?, meta)
            }
        };
        let script = super::mmc_test::restore_script(guard.restore_script(), session, observer);
        writer.write_file_atomic(RESTORE_SH, script.as_bytes())?;
        Ok(Recording {
            writer,
            meta,
            label: session.label.clone(),
        })
    }

    pub fn dir(&self) -> &Path {
        self.writer.dir()
    }

    /// What the device looks like under a config, the first time the config is in place.
    pub fn observe_config(&mut self, config: usize, observer: &Observer) -> Result<()> {
        if observer.observe_config_once(&mut self.meta.configs[config]) {
            self.writer.write_meta(&self.meta)?;
        }
        Ok(())
    }

    /// Whether the config's bus settings are in meta.json already.
    pub fn has_observed(&self, config: usize) -> bool {
        self.meta.configs[config].ios.is_some()
    }

    /// A switch to a config into meta.json (`switches`): when a knob was applied, or
    /// when `ios` read before the run differs from what the config ran at before.
    pub fn note_switch(&mut self, config: usize, run: u32, switch: &Switch) -> Result<()> {
        let name = &self.meta.configs[config].name;
        let last_ios = self
            .meta
            .switches
            .iter()
            .rev()
            .find(|s| &s.config == name && s.ios.is_some())
            .and_then(|s| s.ios.as_ref())
            .or(self.meta.configs[config].ios.as_ref());
        let ios_changed = switch.ios.is_some() && switch.ios.as_ref() != last_ios;
        if switch.applied.is_empty() && !ios_changed {
            return Ok(());
        }
        let (trace, trace_unavailable) = match &switch.trace {
            Some(Ok(t)) => (Some(t.clone()), String::new()),
            Some(Err(why)) => (None, why.clone()),
            None => (None, String::new()),
        };
        let entry = SwitchMeta {
            config: name.clone(),
            run,
            knobs: switch.applied.clone(),
            ios: switch.ios.clone(),
            trace,
            trace_unavailable,
            err_stats: match &switch.err_stats {
                Some(Ok(delta)) => crate::evidence::err_stats::delta_text(delta),
                _ => String::new(),
            },
        };
        self.meta.switches.push(entry);
        self.writer.write_meta(&self.meta)
    }

    /// Where this session's evidence comes from, into meta.json (a resumed run says
    /// what the resuming session collects).
    pub fn note_evidence(&mut self, evidence: &EvidenceMeta) -> Result<()> {
        if self.meta.evidence.as_ref() != Some(evidence) {
            self.meta.evidence = Some(evidence.clone());
            self.writer.write_meta(&self.meta)?;
        }
        Ok(())
    }

    /// What `--until-ci` did, into meta.json.
    pub fn note_until_ci(&mut self, summary: &UntilCi) -> Result<()> {
        self.meta.until_ci = Some(summary.clone());
        self.writer.write_meta(&self.meta)
    }

    /// What the engines set up without (a run's [`WorkloadResult::engine_fallbacks`]),
    /// into meta.json when new.
    pub fn note_engine_fallbacks(&mut self, fallbacks: &[String]) -> Result<()> {
        let mut changed = false;
        for fallback in fallbacks {
            if !self.meta.engine_fallbacks.contains(fallback) {
                self.meta.engine_fallbacks.push(fallback.clone());
                changed = true;
            }
        }
        if changed {
            self.writer.write_meta(&self.meta)?;
        }
        Ok(())
    }

    /// Record a finished run and its evidence (runs.csv last).
    pub fn append(
        &self,
        run: &RunInfo,
        result: &WorkloadResult,
        evidence: Option<&RunEvidence>,
    ) -> Result<()> {
        let Slot {
            run: number,
            repetition,
            warmup,
            ..
        } = run.slot;
        let key = RunKey {
            run: number,
            label: self.label.clone(),
            config: run.config.to_string(),
            workload: run.workload.to_string(),
            repetition,
            warmup,
        };
        self.writer.append_run(&key, result, evidence)
    }

    /// Every run of the matrix is recorded: stamp meta.json and read runs.csv back.
    pub fn finish(mut self) -> Result<(PathBuf, Vec<RunRow>)> {
        self.meta.finished_unix_s = Some(unix_now());
        self.writer.write_meta(&self.meta)?;
        let rows = read_rows(&self.writer.dir().join(RUNS_CSV))?;
        Ok((self.writer.dir().to_path_buf(), rows))
    }
}

/// meta.json of a new run (the device is described by the caller).
pub fn new_meta(session: &Session) -> Meta {
    Meta {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        format_version: Some(crate::record::RESULTS_FORMAT.to_string()),
        sweeps: crate::record::SweepMeta::of_plan(&session.plan),
        label: session.label.clone(),
        kernel_release: crate::device::capabilities::kernel_release(),
        kernel_cmdline: read_trimmed("/proc/cmdline").unwrap_or_default(),
        hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_default(),
        target: session.target.to_string_lossy().into_owned(),
        device: Default::default(),
        block_device: None,
        device_summary: String::new(),
        plan_name: session.plan.name.clone(),
        plan_sha256: hex(&Sha256::digest(session.plan_text.as_bytes())),
        plan_text: session.plan_text.clone(),
        configs: session
            .configs
            .iter()
            .map(|c| ConfigMeta {
                name: c.name.clone(),
                knobs: c
                    .knob_values()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(name, value)| (name.into(), value))
                    .collect(),
                ..Default::default()
            })
            .collect(),
        workloads: session
            .workloads
            .iter()
            .map(|&w| session.plan.workload[w].name.clone())
            .collect(),
        repetitions: session.matrix.repetitions(),
        warmup: session.matrix.warmup(),
        order: session.matrix.order(),
        seed: session.seed,
        scale_down: session.scale_down,
        clock_resolution_ns: crate::clock::monotonic_resolution_ns(),
        until_ci_pct: session.until_ci,
        until_ci: None,
        knob_originals: None,
        started_unix_s: unix_now(),
        finished_unix_s: None,
        evidence: None,
        engine_fallbacks: Vec::new(),
        command_line: (!session.command_line.is_empty()).then(|| session.command_line.clone()),
        switches: Vec::new(),
    }
}

/// `results/<plan>[-<label>]-<UTC time>`.
fn default_out_dir(session: &Session) -> PathBuf {
    let mut name = sanitize(&session.plan.name);
    if !session.label.is_empty() {
        name.push('-');
        name.push_str(&sanitize(&session.label));
    }
    name.push('-');
    name.push_str(&utc_stamp(unix_now() as i64));
    PathBuf::from("results").join(name)
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names() {
        assert_eq!(sanitize("bus width/8"), "bus_width_8");
    }

    fn ios(timing: &str, clock_hz: u64) -> crate::device::Ios {
        crate::device::Ios {
            actual_clock_hz: None,
            bus_mode: "push-pull".into(),
            bus_width_bits: 8,
            clock_hz,
            driver_type: None,
            power_mode: "on".into(),
            signal_voltage: "1.80 V".into(),
            timing: timing.into(),
            vdd: "3.3 ~ 3.4 V".into(),
        }
    }

    /// A switch that applied a knob is recorded with its trace; one that applied none only
    /// when `ios`, read again before the run, differs from what the config ran at.
    #[test]
    fn switches_are_recorded_when_a_knob_was_applied_or_the_bus_changed() {
        let dir = tempfile::tempdir().unwrap();
        let hs200 = ios("mmc HS200", 200_000_000);
        let meta = Meta {
            configs: vec![ConfigMeta {
                name: "hs200".into(),
                ios: Some(hs200.clone()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut recording = Recording {
            writer: ResultsWriter::create(&dir.path().join("res"), &meta).unwrap(),
            meta,
            label: String::new(),
        };
        let tuned = crate::evidence::tuning::SwitchTrace {
            requests: 56,
            cmd21: 40,
            ..Default::default()
        };
        let switch = |applied: &[&str], ios: Option<crate::device::Ios>| Switch {
            applied: applied
                .iter()
                .map(|k| crate::knob::KnobName::new(*k))
                .collect(),
            ios,
            trace: Some(Ok(tuned.clone())),
            err_stats: Some(Ok(Vec::new())),
            ..Switch::default()
        };
        recording
            .note_switch(0, 3, &switch(&["speed-mode"], Some(hs200.clone())))
            .unwrap();
        // Nothing applied, the same bus: nothing to record.
        recording
            .note_switch(0, 5, &switch(&[], Some(hs200)))
            .unwrap();
        recording.note_switch(0, 6, &switch(&[], None)).unwrap();
        // Nothing applied, but the bus is another: recorded, without knobs.
        let fell_back = ios("mmc high-speed", 52_000_000);
        recording
            .note_switch(0, 7, &switch(&[], Some(fell_back.clone())))
            .unwrap();
        recording
            .note_switch(0, 9, &switch(&[], Some(fell_back)))
            .unwrap();
        let text = std::fs::read_to_string(dir.path().join("res/meta.json")).unwrap();
        let written: Meta = serde_json::from_str(&text).unwrap();
        let got: Vec<(u32, usize, &str, u64, &str)> = written
            .switches
            .iter()
            .map(|s| {
                (
                    s.run,
                    s.knobs.len(),
                    s.ios.as_ref().unwrap().timing.as_str(),
                    s.trace.as_ref().unwrap().cmd21,
                    s.err_stats.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (3, 1, "mmc HS200", 40, "none"),
                (7, 0, "mmc high-speed", 40, "none")
            ]
        );
    }
}

//! Kernel evidence per run: what the block layer and the mmc driver did while a workload
//! ran, recorded beside its throughput so a reviewer can see *why* a number moved.
//!
//! - [`block_stat`]: deltas of the target's `/sys/block/<dev>/stat` (every block target,
//!   also loop devices; a file's filesystem device);
//! - [`trace`] and [`requests`]: the `mmc_request_start`/`mmc_request_done` trace events
//!   of the card's host, added up per run (request count, sizes, CMD23 and its argument
//!   bits, open-ended transfers, CQE tasks, errors, opcode mix, device latency);
//! - [`tracefs`]: the private tracing instance they are read from;
//! - [`pack_stats`]: `wr_pack_stats` deltas on vendor kernels with packed commands;
//! - [`err_stats`]: deltas of the host's error counters (debugfs `err_stats`, Linux >=
//!   6.0), with whether its driver counts any;
//! - [`tuning`]: the tuning commands traced while a config's knobs were switched;
//! - [`traced_read`]: one read through the trace, for knobs verified by what the driver does;
//! - [`sbc`]: whether the kernel passes a user CMD23 on as the transfer's `mrq.sbc`
//!   (seen in the trace, or decided by the kernel version), for the ioctl engine.
//!
//! A [`Collector`] is opened once per session and never fails: what it cannot collect
//! (no tracefs, not permitted, not an MMC card) is said in [`EvidenceMeta`] (meta.json)
//! and in every run's evidence, and the run goes on.

pub mod block_stat;
pub mod err_stats;
pub mod pack_stats;
pub mod requests;
pub mod sbc;
pub mod trace;
pub mod traced_read;
pub mod tracefs;
pub mod tuning;

use crate::device::MmcPaths;
use anyhow::Result;
use block_stat::BlockStat;
use requests::{Kind, RequestStats};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// meta.json `evidence`: each source, or why it is not there (`off (--no-evidence)`,
/// `unavailable: ...`, `none: ...`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvidenceMeta {
    /// The `stat` file read around every run.
    pub block_stat: String,
    /// The tracing instance and events.
    pub trace: String,
    /// The card's `wr_pack_stats`.
    pub wr_pack_stats: String,
    /// The host's debugfs `err_stats` read around every run, or why not (absent in
    /// results of older mmcab versions).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub err_stats: String,
    /// Whether the host's driver counts errors there ([`err_stats::Counting::text`]:
    /// `counts: ...`, `not known to count: ...`, `unknown: ...`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub err_stats_counting: String,
}

/// What one session collects around each run.
pub struct Collector {
    target: PathBuf,
    enabled: bool,
    trace: std::result::Result<tracefs::Instance, String>,
    pack_stats: std::result::Result<PathBuf, String>,
    err_stats: std::result::Result<PathBuf, String>,
    meta: EvidenceMeta,
}

/// Evidence being collected for a run that is under way.
pub struct Started {
    stat: std::result::Result<(PathBuf, BlockStat), String>,
    capture: Option<std::result::Result<tracefs::Capture, String>>,
    pack: Option<std::result::Result<String, String>>,
    errors: Option<std::result::Result<err_stats::ErrStats, String>>,
}

/// What one run left as evidence.
#[derive(Debug, Clone)]
pub struct RunEvidence {
    /// Block statistics over the run, or why there are none.
    pub block_stat: std::result::Result<BlockStat, String>,
    /// The trace of the run, or why there is none.
    pub trace: std::result::Result<RequestStats, String>,
    /// `wr_pack_stats` over the run: (packed commands, requests in them); None where the
    /// kernel has no such file.
    pub packed: Option<std::result::Result<(u64, u64), String>>,
    /// `err_stats` over the run: the counters that counted up, in the kernel's order
    /// (empty: none did); None where the kernel has no such file.
    pub err_stats: Option<std::result::Result<Vec<(String, u64)>, String>>,
}

impl Collector {
    /// `--no-evidence`: nothing is collected and meta.json says so.
    pub fn off() -> Collector {
        let off = "off (--no-evidence)".to_string();
        Collector {
            target: PathBuf::new(),
            enabled: false,
            trace: Err(off.clone()),
            pack_stats: Err(off.clone()),
            err_stats: Err(off.clone()),
            meta: EvidenceMeta {
                block_stat: off.clone(),
                trace: off.clone(),
                wr_pack_stats: off.clone(),
                err_stats: off,
                err_stats_counting: String::new(),
            },
        }
    }

    /// Evidence for `target`, with the trace and `wr_pack_stats` of the card when it is
    /// one (`mmc`).
    pub fn open(target: &Path, mmc: Option<&MmcPaths>) -> Collector {
        Self::open_with(target, mmc, tracefs::find_root)
    }

    /// [`Collector::open`] with tracefs found by `tracefs_root`.
    pub fn open_with(
        target: &Path,
        mmc: Option<&MmcPaths>,
        tracefs_root: impl FnOnce() -> Result<PathBuf>,
    ) -> Collector {
        let not_mmc = || {
            format!(
                "none: {} is not an MMC/SD card (block statistics only)",
                target.display()
            )
        };
        let trace = match mmc {
            None => Err(not_mmc()),
            Some(paths) => tracefs_root()
                .and_then(|root| tracefs::Instance::create(&root, &paths.host))
                .map_err(|e| format!("unavailable: {e:#}")),
        };
        let pack_stats = match mmc {
            None => Err(not_mmc()),
            Some(paths) => {
                let path = paths.card_debugfs.join("wr_pack_stats");
                if path.exists() {
                    Ok(path)
                } else {
                    Err(format!(
                        "none: this kernel has no {} (mainline removed packed commands in v4.10)",
                        path.display()
                    ))
                }
            }
        };
        let err_stats = match mmc {
            None => Err(not_mmc()),
            Some(paths) => {
                let path = paths.host_debugfs.join("err_stats");
                match err_stats::ErrStats::read(&path) {
                    Ok(_) => Ok(path),
                    Err(_) if !path.exists() => Err(format!(
                        "none: this kernel has no {} (Linux >= 6.0 has it, with debugfs)",
                        path.display()
                    )),
                    Err(e) => Err(format!("unavailable: {e:#}")),
                }
            }
        };
        let err_stats_counting = match (mmc, &err_stats) {
            (Some(paths), Ok(_)) => paths
                .card_sysfs
                .parent()
                .map(|host| err_stats::counting(host).text())
                .unwrap_or_default(),
            _ => String::new(),
        };
        let meta = EvidenceMeta {
            block_stat: match block_stat::stat_path(target) {
                Ok(path) => path.display().to_string(),
                Err(e) => format!("unavailable: {e:#}"),
            },
            trace: match (&trace, mmc) {
                (Ok(instance), Some(paths)) => {
                    let mut text = format!(
                        "{}: mmc_request_start and mmc_request_done of host {}",
                        instance.dir().display(),
                        paths.host
                    );
                    for note in &instance.notes {
                        text.push_str("; ");
                        text.push_str(note);
                    }
                    text
                }
                (Err(why), _) => why.clone(),
                (Ok(_), None) => unreachable!("a trace needs a card"),
            },
            wr_pack_stats: match &pack_stats {
                Ok(path) => path.display().to_string(),
                Err(why) => why.clone(),
            },
            err_stats: match &err_stats {
                Ok(path) => path.display().to_string(),
                Err(why) => why.clone(),
            },
            err_stats_counting,
        };
        Collector {
            target: target.to_path_buf(),
            enabled: true,
            trace,
            pack_stats,
            err_stats,
            meta,
        }
    }

    /// What this session collects, for meta.json.
    pub fn meta(&self) -> &EvidenceMeta {
        &self.meta
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Read the counters and start tracing, right before a run's first I/O.
    pub fn start(&self) -> Started {
        if !self.enabled {
            return Started {
                stat: Err(String::new()),
                capture: None,
                pack: None,
                errors: None,
            };
        }
        let stat = block_stat::stat_path(&self.target)
            .and_then(|path| BlockStat::read_from(&path).map(|s| (path, s)))
            .map_err(|e| format!("{e:#}"));
        let pack = self.pack_stats.as_ref().ok().map(read_pack_stats);
        let errors = self.read_err_stats();
        let capture = self
            .trace
            .as_ref()
            .ok()
            .map(|instance| instance.capture().map_err(|e| format!("{e:#}")));
        Started {
            stat,
            capture,
            pack,
            errors,
        }
    }

    /// The host's `err_stats` now (None where the kernel has none).
    fn read_err_stats(&self) -> Option<std::result::Result<err_stats::ErrStats, String>> {
        if !self.enabled {
            return None;
        }
        let path = self.err_stats.as_ref().ok()?;
        Some(err_stats::ErrStats::read(path).map_err(|e| format!("{e:#}")))
    }

    /// The host's `err_stats` before something whose errors are wanted
    /// ([`Collector::err_stats_since`]); None where there are none to read.
    pub fn err_stats_now(&self) -> Option<std::result::Result<err_stats::ErrStats, String>> {
        self.read_err_stats()
    }

    /// What counted up since `before` ([`Collector::err_stats_now`]).
    pub fn err_stats_since(
        &self,
        before: std::result::Result<err_stats::ErrStats, String>,
    ) -> std::result::Result<Vec<(String, u64)>, String> {
        let before = before?;
        match self.read_err_stats() {
            Some(after) => after.map(|a| a.delta(&before)),
            None => Err("err_stats: not read".into()),
        }
    }

    /// Trace the host's requests while `f` switches a config's knobs: what the kernel
    /// did, its tuning above all ([`tuning::SwitchTrace`]), or why there is no trace.
    pub fn trace_switch<T>(
        &self,
        f: impl FnOnce() -> T,
    ) -> (T, std::result::Result<tuning::SwitchTrace, String>) {
        let instance = match &self.trace {
            Ok(instance) if self.enabled => instance,
            Ok(_) | Err(_) => return (f(), Err(self.meta.trace.clone())),
        };
        let mut f = Some(f);
        let mut ran = None;
        let traced = instance.trace_of(|| ran = f.take().map(|f| f()));
        // Tracing could not start: the switch is done all the same, untraced.
        let result = match (ran, f) {
            (Some(result), _) => result,
            (None, Some(f)) => f(),
            (None, None) => unreachable!("the switch ran or is still to run"),
        };
        let traced = match traced {
            Ok(((), text)) => Ok(tuning::SwitchTrace::from_trace(&text, instance.host())),
            Err(e) => Err(format!("failed: {e:#}")),
        };
        (result, traced)
    }

    /// Stop tracing and read the counters again, right after the run's last I/O; None
    /// when evidence is off.
    pub fn finish(&self, started: Started) -> Option<RunEvidence> {
        if !self.enabled {
            return None;
        }
        let trace = match started.capture {
            Some(Ok(capture)) => capture.finish().map_err(|e| format!("{e:#}")),
            Some(Err(e)) => Err(e),
            None => Err(self.meta.trace.clone()),
        };
        let block_stat = started.stat.and_then(|(path, before)| {
            BlockStat::read_from(&path)
                .map(|after| after.delta(&before))
                .map_err(|e| format!("{e:#}"))
        });
        let packed = match (&self.pack_stats, started.pack) {
            (Ok(path), Some(Ok(before))) => Some(read_pack_stats(path).and_then(|after| {
                if before.trim().is_empty() && after.trim().is_empty() {
                    Err(format!(
                        "{} is disabled (empty): echo 1 > it, or use the packing knob, which does",
                        path.display()
                    ))
                } else {
                    Ok(pack_stats::delta(&before, &after))
                }
            })),
            (_, Some(Err(e))) => Some(Err(e)),
            _ => None,
        };
        let err_stats = match started.errors {
            Some(Ok(before)) => self
                .read_err_stats()
                .map(|after| after.map(|a| a.delta(&before))),
            Some(Err(e)) => Some(Err(e)),
            None => None,
        };
        Some(RunEvidence {
            block_stat,
            trace,
            packed,
            err_stats,
        })
    }
}

fn read_pack_stats(path: &PathBuf) -> std::result::Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

impl RunEvidence {
    /// The trace of this run in a word or two: `ok`, `lost N events`, `none` (not an MMC
    /// card), `unavailable` (meta.json says why), or `failed: <why>` (this run only).
    pub fn trace_status(&self) -> String {
        match &self.trace {
            Ok(stats) if stats.lost_events > 0 => format!("lost {} events", stats.lost_events),
            Ok(_) => "ok".to_string(),
            Err(why) => match why.split_once(':') {
                Some((word @ ("none" | "unavailable"), _)) => word.to_string(),
                _ if why.starts_with("off") => "off".to_string(),
                _ => format!("failed: {why}"),
            },
        }
    }

    /// The block layer's I/Os of `kind` when the driver split its requests into
    /// one-block ones in this run ([`requests::split_into_one_block`]).
    fn split_over(&self, kind: Kind, r: &requests::Requests) -> Option<u64> {
        let stat = self.block_stat.as_ref().ok()?;
        let ios = match kind {
            Kind::Write => stat.write.ios,
            Kind::Read => stat.read.ios,
            Kind::None => return None,
        };
        let lost = self.trace.as_ref().map_or(0, |t| t.lost_events);
        requests::split_into_one_block(r.one_block(), ios, r.errors, lost).then_some(ios)
    }

    /// One line for the progress output: what the driver did in this run.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match &self.trace {
            Ok(stats) => {
                for kind in [Kind::Write, Kind::Read] {
                    let r = stats.kind(kind);
                    if r.requests == 0 {
                        continue;
                    }
                    let mut text = format!(
                        "{} {} req of {} mean",
                        kind.as_str(),
                        r.requests,
                        crate::units::format_size(r.mean_size().unwrap_or(0.0) as u64)
                    );
                    if r.multi_block > 0 {
                        text.push_str(&format!(
                            ", CMD23 on {}/{} multi-block",
                            r.sbc, r.multi_block
                        ));
                    }
                    if r.sbc_packed > 0 {
                        text.push_str(&format!(", {} packed", r.sbc_packed));
                    }
                    if let Some(us) = r.mean_latency_us() {
                        text.push_str(&format!(", {:.3} ms/req", us / 1000.0));
                    }
                    if r.errors > 0 {
                        text.push_str(&format!(", {} errors", r.errors));
                    }
                    if let Some(ios) = self.split_over(kind, r) {
                        text.push_str(&format!(
                            ", {} one-block for {ios} block I/Os (split)",
                            r.one_block()
                        ));
                    }
                    parts.push(text);
                }
                if stats.lost_events > 0 {
                    parts.push(format!(
                        "LOST {} trace events (counts are too low)",
                        stats.lost_events
                    ));
                }
            }
            Err(_) => {
                let trace = self.trace_status();
                match &self.block_stat {
                    Ok(s) => parts.push(format!(
                        "block stat: {} writes ({} sectors), {} reads ({} sectors); trace {trace}",
                        s.write.ios, s.write.sectors, s.read.ios, s.read.sectors
                    )),
                    Err(e) => parts.push(format!("no block stat ({e}); trace {trace}")),
                }
            }
        }
        if let Some(Ok((commands, requests))) = &self.packed {
            parts.push(format!(
                "wr_pack_stats: +{commands} packed writes of {requests} requests"
            ));
        }
        if parts.is_empty() {
            "no mmc requests".to_string()
        } else {
            parts.join("; ")
        }
    }
}

#[cfg(test)]
#[path = "collector_tests.rs"]
mod tests;

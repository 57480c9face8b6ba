//! The probes against a device: open it, describe it, raise the thread to SCHED_FIFO,
//! time, and return the record.

use super::align::{self, AlignOptions, AlignRow};
use super::device::{ProbeDevice, Realtime};
use super::flashbench::Published;
use super::geometry::Geometry;
use super::open_au::{self, OpenAuOptions, OpenAuPoint, OpenAuRun, Units};
use super::record::{ProbeKind, ProbeRecord, PROBE_SCHEMA};
use anyhow::{bail, Result};
use std::path::Path;

/// Largest erase size `probe open-au` writes in one I/O (its buffer).
pub const MAX_ERASE_SIZE: u64 = 64 << 20;

/// The device's one-line description and what it says about its geometry.
fn describe(path: &Path) -> (String, Geometry) {
    let Ok(paths) = crate::device::discover(&path.to_string_lossy()) else {
        return (
            format!("{} (not an MMC card)", path.display()),
            Geometry::none("not an MMC card: no EXT_CSD, no erase sizes"),
        );
    };
    let _ = crate::device::ensure_debugfs();
    match crate::device::DeviceInfo::read(&paths) {
        Ok(info) => (info.summary.clone(), Geometry::from_info(&info)),
        Err(e) => (
            path.display().to_string(),
            Geometry::none(&format!("card not read: {e:#}")),
        ),
    }
}

fn record(kind: ProbeKind, path: &Path, scheduling: String) -> ProbeRecord {
    let (device, geometry) = describe(path);
    ProbeRecord {
        schema: PROBE_SCHEMA,
        kind,
        source: format!("mmcab {}", env!("CARGO_PKG_VERSION")),
        target: path.display().to_string(),
        device,
        kernel_release: crate::device::capabilities::kernel_release(),
        started_unix_s: crate::clock::unix_now(),
        scheduling,
        align_options: None,
        open_au_options: None,
        align: Vec::new(),
        open_au: Vec::new(),
        geometry,
    }
}

/// `mmcab probe align`: read-only. `row` sees each line as it is measured.
pub fn run_align(
    path: &Path,
    opts: &AlignOptions,
    row: &mut dyn FnMut(&AlignRow),
) -> Result<ProbeRecord> {
    let mut dev = ProbeDevice::open_read(path, opts.blocksize)?;
    if opts.blocksize < 2 * dev.logical_block {
        bail!(
            "--blocksize {}: at least twice the logical block of {} ({} bytes), since the \
             read across the boundary starts half a block before it",
            opts.blocksize,
            path.display(),
            dev.logical_block
        );
    }
    let rt = Realtime::enter();
    let mut rec = record(ProbeKind::Align, path, rt.note.clone());
    let size = dev.size_bytes;
    rec.align = align::measure(&mut dev, size, opts, row)?;
    rec.align_options = Some(*opts);
    Ok(rec)
}

/// What `mmcab probe open-au` reports while it runs.
pub enum OpenAuEvent<'a> {
    /// A run with this many units begins.
    Start {
        nr: u32,
    },
    Point(&'a OpenAuPoint),
    /// The run stopped early: throughput collapsed at this size.
    Collapsed {
        nr: u32,
        size: u64,
    },
}

/// `mmcab probe open-au` (writes; the caller checked `--allow-write`): one run with
/// `--nr`, or runs with 1, 2, 3 ... units until the throughput collapses (`--find`).
pub fn run_open_au(
    path: &Path,
    opts: &OpenAuOptions,
    event: &mut dyn FnMut(OpenAuEvent),
) -> Result<ProbeRecord> {
    if opts.erase_size > MAX_ERASE_SIZE {
        bail!(
            "--erase-size {}: at most {} MiB",
            opts.erase_size,
            MAX_ERASE_SIZE >> 20
        );
    }
    let mut dev = ProbeDevice::open_write(path, opts.erase_size)?;
    let fit = opts.check(dev.size_bytes, dev.logical_block)?;
    let rt = Realtime::enter();
    let mut rec = record(ProbeKind::OpenAu, path, rt.note.clone());
    let counts: Vec<u32> = match opts.units {
        Units::Nr(n) => vec![n],
        Units::Find { max } => (1..=max.min(fit)).collect(),
    };
    let mut runs: Vec<OpenAuRun> = Vec::new();
    for nr in counts {
        event(OpenAuEvent::Start { nr });
        let reference = runs.iter().find(|r| r.nr == 1).cloned();
        let run = open_au::run(&mut dev, opts, nr, reference.as_ref(), &mut |p| {
            event(OpenAuEvent::Point(p))
        })?;
        let collapsed = open_au::collapse(&run, reference.as_ref());
        if let (Some(c), true) = (collapsed, run.interrupted) {
            event(OpenAuEvent::Collapsed { nr, size: c.size });
        }
        runs.push(run);
        if collapsed.is_some() && matches!(opts.units, Units::Find { .. }) {
            break;
        }
    }
    rec.open_au = runs;
    rec.open_au_options = Some(*opts);
    Ok(rec)
}

/// The runs of a published flashbench output as records (one per kind present), with
/// the sysfs sizes its metadata quotes (`# erase_size:`, `# preferred_erase_size:`).
pub fn published_records(p: &Published) -> Vec<ProbeRecord> {
    let number = |k: &str| p.meta(k).and_then(|v| v.trim().parse::<u64>().ok());
    let base = |kind| ProbeRecord {
        schema: PROBE_SCHEMA,
        kind,
        source: p
            .meta("source")
            .unwrap_or("published flashbench output")
            .to_string(),
        target: String::new(),
        device: p.meta("device").unwrap_or("(device not named)").to_string(),
        kernel_release: p.meta("kernel").unwrap_or("").to_string(),
        started_unix_s: 0.0,
        scheduling: "flashbench: SCHED_FIFO 10 where allowed, CLOCK_REALTIME".into(),
        align_options: None,
        open_au_options: None,
        align: Vec::new(),
        open_au: Vec::new(),
        geometry: Geometry::from_sysfs(number("erase_size"), number("preferred_erase_size")),
    };
    let mut out = Vec::new();
    if let Some(a) = p.align.first() {
        let mut r = base(ProbeKind::Align);
        r.target = a.command.clone();
        r.align = a.rows.clone();
        r.align_options = Some(a.options);
        out.push(r);
    }
    if !p.open_au.is_empty() {
        let mut r = base(ProbeKind::OpenAu);
        r.target = "flashbench --open-au".into();
        r.open_au = p.open_au.clone();
        out.push(r);
    }
    out
}

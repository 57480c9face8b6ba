//! The probes against a device: open it, describe it, raise the thread to SCHED_FIFO,
//! time, and return the record.

use super::align::{self, AlignEvent, AlignOptions};
use super::device::{ProbeDevice, Realtime};
use super::flashbench::Published;
use super::geometry::Geometry;
pub use super::open_au::OpenAuEvent;
use super::open_au::{self, OpenAuOptions, Units};
use super::record::{ProbeKind, ProbeRecord, PROBE_SCHEMA};
use crate::units::format_size;
use crate::workload::target::Writes;
use anyhow::{bail, Result};
use std::path::Path;

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
        units_fit: None,
        geometry,
    }
}

/// `mmcab probe align`: read-only. `event` sees each line as it is measured.
pub fn run_align(
    path: &Path,
    opts: &AlignOptions,
    event: &mut dyn FnMut(AlignEvent),
) -> Result<ProbeRecord> {
    opts.validate()?;
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
    rec.align = align::measure(&mut dev, size, opts, event)?;
    rec.align_options = Some(*opts);
    Ok(rec)
}

/// `mmcab probe open-au` (writes: refused without `opts.allow_write`, and on a device
/// in use): one run with `--nr`, or runs with 1, 2, 3 ... units until the throughput
/// collapses (`--find`, as many units as fit on the device at most).
pub fn run_open_au(
    path: &Path,
    opts: &OpenAuOptions,
    event: &mut dyn FnMut(OpenAuEvent),
) -> Result<ProbeRecord> {
    opts.validate()?;
    if !opts.allow_write {
        bail!(
            "probe open-au writes to {} (units of {} from offset {}), destroying the data \
             there: pass --allow-write if that is what you want",
            path.display(),
            format_size(opts.erase_size),
            format_size(opts.offset())
        );
    }
    let mut dev = ProbeDevice::open_write(
        path,
        opts.erase_size,
        Writes::from_flags(opts.allow_write, opts.overwrite_data),
    )?;
    let fit = opts.check(dev.size_bytes, dev.logical_block)?;
    dev.check_data(&[(opts.offset(), opts.offset() + opts.span(fit))])?;
    let rt = Realtime::enter();
    let mut rec = record(ProbeKind::OpenAu, path, rt.note.clone());
    rec.open_au = open_au::runs(&mut dev, opts, fit, event)?;
    rec.open_au_options = Some(*opts);
    if matches!(opts.units, Units::Find { max } if max > fit) {
        rec.units_fit = Some(fit);
    }
    Ok(rec)
}

/// The sysfs sizes a published output quotes (`# erase_size: 524288`). A size of 0 (the
/// kernel's "not known") or one that is not a number of bytes is not used, and the
/// geometry's note says so.
fn published_geometry(p: &Published) -> Geometry {
    let mut notes = vec!["EXT_CSD not published".to_string()];
    let mut number = |k: &str| {
        let v = p.meta(k)?.trim();
        match v.parse::<u64>() {
            Ok(0) => {
                notes.push(format!("sysfs {k} 0 (the kernel did not know it)"));
                None
            }
            Ok(n) => Some(n),
            Err(_) => {
                notes.push(format!("# {k}: '{v}' is not a number of bytes, not used"));
                None
            }
        }
    };
    let mut g = Geometry::from_sysfs(number("erase_size"), number("preferred_erase_size"));
    g.note = Some(notes.join("; "));
    g
}

/// The runs of a published flashbench output as records (one per kind present), with
/// the sysfs sizes its metadata quotes (`# erase_size:`, `# preferred_erase_size:`).
pub fn published_records(p: &Published) -> Vec<ProbeRecord> {
    let geometry = published_geometry(p);
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
        units_fit: None,
        geometry: geometry.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::align::AlignOptions;

    const NO_DEVICE: &str = "/nonexistent/mmcblk9";

    #[test]
    fn open_au_refuses_without_allow_write_before_opening() {
        let opts = OpenAuOptions {
            erase_size: 2 << 20,
            blocksize: 8 << 10,
            offset: None,
            random: false,
            units: Units::Nr(5),
            allow_write: false,
            overwrite_data: false,
        };
        let err = run_open_au(Path::new(NO_DEVICE), &opts, &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(NO_DEVICE) && err.contains("pass --allow-write"),
            "{err}"
        );
    }

    /// A quoted sysfs size of 0 (the kernel's "not known") or not a number is not
    /// compared with the timing, and the geometry says why.
    #[test]
    fn published_zero_or_unreadable_sysfs_sizes_are_noted_not_used() {
        let text = "# erase_size: 0\n# preferred_erase_size: 4 MiB\n\
            $ ./flashbench -a /dev/sda align 8192 pre 1ms on 1ms post 1ms diff 0ns\n";
        let p = crate::probe::flashbench::parse(text).unwrap();
        let g = &published_records(&p)[0].geometry;
        assert_eq!((g.erase_size, g.preferred_erase_size), (None, None));
        let note = g.note.as_deref().unwrap();
        assert!(
            note.contains("sysfs erase_size 0 (the kernel did not know it)"),
            "{note}"
        );
        assert!(
            note.contains("# preferred_erase_size: '4 MiB' is not a number"),
            "{note}"
        );
    }

    #[test]
    fn align_refuses_a_bad_blocksize_before_opening() {
        let opts = AlignOptions {
            blocksize: 1 << 40,
            tries: 8,
        };
        let err = run_align(Path::new(NO_DEVICE), &opts, &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--blocksize"), "{err}");
    }
}

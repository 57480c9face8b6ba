//! `mmcab probe align DEVICE` and `mmcab probe open-au DEVICE --erase-size S ...`: the
//! flash geometry probes (flashbench's methods). Each line is shown on stderr as it is measured (as flashbench
//! prints it), the report (mail text) on stdout; everything goes to a probe directory
//! that `mmcab report DIR` renders again.

use super::output::Output;
use crate::exit::Kind;
use crate::probe::align::{self, AlignEvent, AlignOptions};
use crate::probe::flashbench;
use crate::probe::measure::{self, OpenAuEvent};
use crate::probe::open_au::{self, OpenAuOptions, Units, DEFAULT_MAX_NR};
use crate::probe::record::{self, ProbeKind, ProbeRecord, PUBLISHED_TXT};
use crate::report::render::probe_text::time;
use crate::units::{format_size, parse_size};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

/// Options both probes share.
#[derive(Debug, Args)]
pub struct Common {
    /// Probe directory (default: a new one under results/)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Published flashbench output to report and chart next to this run (e.g.
    /// results/reference/beaglebone-2013-flashbench.txt)
    #[arg(long)]
    pub published: Option<PathBuf>,
    /// Do not show each line as it is measured
    #[arg(long)]
    pub quiet: bool,
    /// Print the record and the estimate as JSON instead of the mail text (which is
    /// still written to report.txt)
    #[arg(long)]
    pub json: bool,
}

/// Version of `mmcab probe align|open-au --json`: `{"schema", "dir", "record" (as
/// probe.json), "estimate"}`.
pub const PROBE_JSON_SCHEMA: u32 = 1;

#[derive(Debug, Args)]
pub struct AlignArgs {
    /// Block device, e.g. /dev/mmcblk0 (read only)
    pub device: PathBuf,
    /// Bytes per read (flashbench --blocksize; the BeagleBone post used 1k)
    #[arg(long, default_value = "16k", value_parser = size)]
    pub blocksize: u64,
    /// Tries per position, the fastest kept (flashbench --count)
    #[arg(long, default_value_t = 8)]
    pub count: u32,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct OpenAuArgs {
    /// Block device, e.g. /dev/mmcblk0 (its data there is overwritten)
    pub device: PathBuf,
    /// Erase block (allocation unit) size, e.g. 2M, as `probe align` estimated
    #[arg(long, value_parser = size)]
    pub erase_size: u64,
    /// Units written round-robin (flashbench --open-au-nr; default 2)
    #[arg(long, conflicts_with = "find")]
    pub nr: Option<u32>,
    /// Raise the number of units from 1 until throughput collapses; report the count
    #[arg(long)]
    pub find: bool,
    /// Most units --find tries
    #[arg(long, requires = "find")]
    pub max_nr: Option<u32>,
    /// Write the chunks of each unit in a fixed pseudo-random order (flashbench --random)
    #[arg(long)]
    pub random: bool,
    /// Smallest write (flashbench --blocksize; the BeagleBone post used 8k)
    #[arg(long, default_value = "16k", value_parser = size)]
    pub blocksize: u64,
    /// First unit's offset (default: 16 MiB rounded up to the erase size)
    #[arg(long, value_parser = size)]
    pub offset: Option<u64>,
    /// Allow the writes (mounted or held devices are refused regardless)
    #[arg(long)]
    pub allow_write: bool,
    /// With --allow-write: write even to a device that holds data (partitions, a partition
    /// table or a filesystem), which is refused otherwise
    #[arg(long, requires = "allow_write")]
    pub overwrite_data: bool,
    #[command(flatten)]
    pub common: Common,
}

fn size(text: &str) -> Result<u64, String> {
    parse_size(text).map_err(|e| e.to_string())
}

/// `results/probe-<kind>-<disk>-<UTC>` unless `--out`; refuses a directory that holds
/// anything already.
fn out_dir(common: &Common, kind: ProbeKind, device: &Path) -> Result<PathBuf> {
    let dir = match &common.out {
        Some(d) => d.clone(),
        None => {
            let now = crate::clock::unix_now() as i64;
            let disk = device
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "device".into());
            PathBuf::from("results").join(format!(
                "probe-{}-{disk}-{}",
                kind.as_str(),
                crate::clock::utc_stamp(now)
            ))
        }
    };
    if std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "{} already exists and is not empty: pick another --out",
            dir.display()
        );
    }
    Ok(dir)
}

/// The published text, checked before anything is measured.
fn published_text(common: &Common) -> Result<Option<String>> {
    let Some(path) = &common.published else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--published {}: cannot read it", path.display()))?;
    flashbench::parse(&text).with_context(|| format!("--published {}", path.display()))?;
    Ok(Some(text))
}

/// Record, published copy, report; the mail text on stdout.
fn finish(out: &Output, dir: &Path, rec: &ProbeRecord, published: Option<String>) -> Result<Kind> {
    record::write(dir, rec)?;
    if let Some(text) = published {
        let path = dir.join(PUBLISHED_TXT);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let mail = crate::report::probe_report::write(dir, rec)?;
    if out.json_mode() {
        let estimate = match rec.kind {
            ProbeKind::Align => serde_json::to_value(align::estimate(&rec.align))?,
            ProbeKind::OpenAu => serde_json::to_value(
                [false, true]
                    .iter()
                    .filter_map(|&random| open_au::estimate(&rec.open_au, random))
                    .collect::<Vec<_>>(),
            )?,
        };
        out.json(&serde_json::json!({
            "schema": PROBE_JSON_SCHEMA,
            "dir": dir,
            "record": rec,
            "estimate": estimate,
        }))?;
    } else {
        out.print(&mail)?;
    }
    out.line(&format!(
        "mmcab: probe written to {}/ ({}, {}, {})",
        dir.display(),
        record::PROBE_JSON,
        match rec.kind {
            ProbeKind::Align => record::ALIGN_CSV,
            ProbeKind::OpenAu => record::OPEN_AU_CSV,
        },
        crate::report::files::PROBE_FILES
    ));
    Ok(Kind::Success)
}

pub fn align(args: &AlignArgs, out: &Output) -> Result<Kind> {
    let published = published_text(&args.common)?;
    let dir = out_dir(&args.common, ProbeKind::Align, &args.device)?;
    let opts = AlignOptions {
        blocksize: args.blocksize,
        tries: args.count,
    };
    out.note(&format!(
        "probe align on {}: reads of {} around every power-of-two alignment, {} tries each",
        args.device.display(),
        format_size(opts.blocksize),
        opts.tries
    ));
    let quiet = args.common.quiet;
    let rec = measure::run_align(&args.device, &opts, &mut |e: AlignEvent| {
        if quiet {
            return;
        }
        let (r, again) = match e {
            AlignEvent::Row(r) => (r, String::new()),
            AlignEvent::Again(r) => (
                r,
                format!(
                    "\t(measured again, {}x: its reads were over {}x the others')",
                    r.remeasured,
                    align::DISTURBED
                ),
            ),
        };
        out.line(&format!(
            "align {}\tpre {}\ton {}\tpost {}\tdiff {}{again}",
            r.align,
            time(r.pre_ns),
            time(r.on_ns),
            time(r.post_ns),
            time(r.diff_ns)
        ));
    })?;
    out.note(&format!("scheduling: {}", rec.scheduling));
    finish(out, &dir, &rec, published)
}

pub fn open_au(args: &OpenAuArgs, out: &Output) -> Result<Kind> {
    let units = if args.find {
        Units::Find {
            max: args.max_nr.unwrap_or(DEFAULT_MAX_NR),
        }
    } else {
        Units::Nr(args.nr.unwrap_or(2))
    };
    let opts = OpenAuOptions {
        erase_size: args.erase_size,
        blocksize: args.blocksize,
        offset: args.offset,
        random: args.random,
        units,
        allow_write: args.allow_write,
        overwrite_data: args.overwrite_data,
    };
    let published = published_text(&args.common)?;
    let dir = out_dir(&args.common, ProbeKind::OpenAu, &args.device)?;
    let quiet = args.common.quiet;
    let rec = measure::run_open_au(&args.device, &opts, &mut |e| {
        if quiet {
            return;
        }
        match e {
            OpenAuEvent::Start { nr } => out.line(&format!(
                "open-au: {nr} unit{} of {}",
                if nr == 1 { "" } else { "s" },
                format_size(opts.erase_size)
            )),
            OpenAuEvent::Point(p) => out.line(&format!(
                "{:>8} {:>9}",
                format_size(p.size),
                format!("{:.3}M/s", p.mb_per_s)
            )),
            OpenAuEvent::Collapsed { nr, size } => out.line(&format!(
                "open-au: {nr} units collapsed at {}: smaller writes skipped",
                format_size(size)
            )),
        }
    })?;
    out.note(&format!("scheduling: {}", rec.scheduling));
    finish(out, &dir, &rec, published)
}

//! `mmcab calibrate DIR...`: a board's boot-to-boot spread from A/A boots, stored where
//! `mmcab compare` finds it ([`store_dir`]), and shown as a table.

use super::output::Output;
use crate::exit::Kind;
use crate::report::across::calibration::{Calibration, Entry};
use crate::report::render::numbers::format_percent;
use crate::stats::boots::boots_needed;
use anyhow::Result;
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Environment variable naming the calibration store.
pub const STORE_ENV: &str = "MMCAB_CALIBRATION_DIR";
/// Changes the table says how many boots per side would resolve.
const CHANGES: [f64; 3] = [0.02, 0.05, 0.10];

#[derive(Debug, Args)]
#[command(
    after_help = "Boot the same kernel with the same settings several times (at \
    least 3, better 5 or more), run the same plan in each boot with `mmcab run --label`, \
    then calibrate with the results directories. Later `mmcab compare A B` of single \
    boots on this board (same device identity, same plan) uses the stored spread for an \
    interval and a verdict, and says so."
)]
pub struct CalibrateArgs {
    /// Results directories of A/A boots of one board (one directory per boot)
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Write the calibration here instead of the store ($MMCAB_CALIBRATION_DIR, else
    /// $XDG_DATA_HOME/mmcab/calibration, else ~/.local/share/mmcab/calibration)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the calibration as JSON (`{"schema", "written_to", "calibration"}`)
    #[arg(long)]
    pub json: bool,
}

/// Version of `mmcab calibrate --json`.
pub const CALIBRATE_JSON_SCHEMA: u32 = 1;

/// Where calibrations are stored and looked up: `$MMCAB_CALIBRATION_DIR`, else
/// `$XDG_DATA_HOME/mmcab/calibration`, else `$HOME/.local/share/mmcab/calibration`.
pub fn store_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var(STORE_ENV) {
        return Some(dir.into());
    }
    let data = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("mmcab/calibration"))
}

pub fn execute(args: &CalibrateArgs, out: &Output) -> Result<Kind> {
    let (path, cal) =
        crate::report::calibrate(&args.dirs, args.out.as_deref(), store_dir().as_deref())?;
    if args.json {
        out.json(&serde_json::json!({
            "schema": CALIBRATE_JSON_SCHEMA,
            "written_to": path,
            "calibration": cal,
        }))?;
    } else {
        out.print(&table(&cal))?;
    }
    out.line(&format!(
        "mmcab: calibration written to {}; mmcab compare uses it for single-boot \
         comparisons of this device and plan",
        path.display()
    ));
    Ok(Kind::Success)
}

/// Boots per side for each of [`CHANGES`].
fn needed(e: &Entry) -> String {
    let v = e.spread.boot_mean_rel_var(e.spread.runs_per_boot);
    CHANGES
        .iter()
        .map(|&c| boots_needed(v, c).map_or(">100".into(), |m| m.to_string()))
        .collect::<Vec<_>>()
        .join("/")
}

/// The headline metrics: spread and boots needed.
fn table(cal: &Calibration) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "calibration of {} for plan {}: {} A/A boots, Linux {}",
        cal.device_summary,
        cal.plan_name,
        cal.boots.len(),
        cal.kernels.join(", ")
    );
    let rows: Vec<(String, &Entry)> = cal
        .entries
        .iter()
        .filter(|e| e.headline)
        .map(|e| {
            (
                format!("{}/{} {}, {}", e.config, e.workload, e.direction, e.unit),
                e,
            )
        })
        .collect();
    let w = rows
        .iter()
        .map(|(name, _)| name.len())
        .chain(["config/workload, metric".len()])
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        s,
        "{:<w$} {:>6} {:>9} {:>9} {:>8} {:>14}",
        "config/workload, metric", "runs", "boot cv%", "run cv%", "between", "boots 2/5/10%"
    );
    for (name, e) in &rows {
        let _ = writeln!(
            s,
            "{:<w$} {:>6.1} {:>9} {:>9} {:>8} {:>14}",
            name,
            e.spread.runs_per_boot,
            format_percent(e.spread.boot_cv),
            format_percent(e.spread.run_cv),
            format_percent(e.spread.between_rel_var().sqrt()),
            needed(e)
        );
    }
    let _ = writeln!(
        s,
        "boot cv%: sd of the boot means / mean; run cv%: sd of the runs within a boot; \
         between: the boots' own part of boot cv%; boots 2/5/10%: boots per side that \
         resolve a change of 2%, 5%, 10% (95% CI clear of 0, 80% power)"
    );
    s
}

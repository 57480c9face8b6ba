//! `mmcab probe packed DEVICE --allow-write [--offset N] [--entries N] [--json]`.

use super::output::{Output, Versioned};
use crate::exit::{Failure, Kind};
use crate::probe::packed::{probe_packed, PackedProbeOptions, PackedProbeReport, ProbeNotRestored};
use crate::runner::events::{Event, Events};
use crate::runner::signals::{signal_name, Interrupts};
use crate::units::parse_size;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

/// Version of `mmcab probe packed --json` (the report's keys beside `schema`).
pub const PACKED_JSON_SCHEMA: u32 = 1;

#[derive(Debug, Args)]
pub struct PackedArgs {
    /// The whole eMMC device, /dev/mmcblkN (or a boot/GP hardware partition's node)
    pub device: PathBuf,
    /// Allow the probe's write (the scratch region's contents are put back afterwards)
    #[arg(long)]
    pub allow_write: bool,
    /// Start of the scratch region on DEVICE (4 KiB multiple; sizes like 1G): required,
    /// since its data is lost if putting it back fails
    #[arg(long, required = true, value_parser = parse_offset)]
    pub offset: u64,
    /// Entries of the packed command (default: as many as the card allows)
    #[arg(long)]
    pub entries: Option<usize>,
    /// Send the command even when EXT_CSD says the card has no packed commands (to see
    /// what such a card does with one)
    #[arg(long)]
    pub force: bool,
    /// Take it that this kernel sends a user CMD23 as the write's SET_BLOCK_COUNT
    /// (commit 4d0c8d0aef63) when mmcab cannot check it
    #[arg(long)]
    pub assume_cmd23_passthrough: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

/// What `probe packed` says when a signal arrives: the probe's commands run to their end
/// and its region is put back; nothing is discarded (the run's words do not fit).
struct ProbeSignals(Arc<Output>);

impl Events for ProbeSignals {
    fn event(&self, event: Event<'_>) {
        if let Event::Signal { signal, again } = event {
            self.0.line(&probe_signal_line(signal, again));
        }
    }
}

fn probe_signal_line(signal: i32, again: bool) -> String {
    let name = signal_name(signal);
    if again {
        format!("\nmmcab: got {name} again: still stopping; the probe's region is put back first")
    } else {
        format!(
            "\nmmcab: got {name}: stopping once the probe's commands are done and its region \
             and EXP_EVENTS_CTRL are put back"
        )
    }
}

fn parse_offset(text: &str) -> Result<u64, String> {
    parse_size(text).map_err(|e| e.to_string())
}

pub fn execute(args: &PackedArgs, out: &Arc<Output>) -> Result<Kind, Failure> {
    // A signal waits until the region and EXT_CSD are put back (the probe takes a second).
    let interrupts = Interrupts::install(Arc::new(ProbeSignals(out.clone())))?;
    let report = probe_packed(
        &PackedProbeOptions {
            device: args.device.clone(),
            allow_write: args.allow_write,
            offset: args.offset,
            entries: args.entries,
            force: args.force,
            assume_cmd23_passthrough: args.assume_cmd23_passthrough,
        },
        &|failed| out.warn(failed),
    )?;
    if args.json {
        out.json(&Versioned {
            schema: PACKED_JSON_SCHEMA,
            body: &report,
        })?;
    } else {
        out.print(&render(&report))?;
    }
    if !report.not_restored.is_empty() {
        // After the report: the probe's result is not lost. Exit status 5.
        return Err(ProbeNotRestored {
            failed: report.not_restored.clone(),
        }
        .into());
    }
    Ok(if interrupts.stopped() {
        interrupts.kind()
    } else if report.outcome.passed {
        Kind::Success
    } else {
        Kind::ProbeMismatch
    })
}

/// The report as text: facts, the commands sent, every block read back, the verdict.
pub fn render(r: &PackedProbeReport) -> String {
    let mut s = format!(
        "{}: packed write probe, kernel {}\n",
        r.device.display(),
        r.kernel_release
    );
    let card = format!(
        "EXT_CSD_REV {}, MAX_PACKED_WRITES {}",
        r.ext_csd_rev, r.max_packed_writes
    );
    s += &match &r.card_refusal {
        Some(why) => format!("  card        {card} (--force: {why})\n"),
        None => format!("  card        {card}\n"),
    };
    s += &format!("  addressing  {}\n", r.addressing);
    s += &format!(
        "  CMD23 sbc   {:?}: {}\n",
        r.sbc.passthrough, r.sbc.evidence
    );
    s += &format!(
        "  region      {} bytes at offset {} ({}-byte header; canary, entry, canary, ...)\n",
        r.outcome.region_bytes, r.region_offset, r.outcome.header_bytes
    );
    s += &format!(
        "  events      EXP_EVENTS_CTRL {:#04x}{}\n",
        r.outcome.exp_events_ctrl,
        if r.outcome.packed_event_enabled_by_mmcab {
            ", PACKED_EVENT_EN set for the probe"
        } else {
            ""
        }
    );
    s += "sent\n";
    for c in &r.outcome.commands {
        s += &format!("  {c}\n");
    }
    s += &format!(
        "  -> {}\n  card: {}\nread back (block layer, O_DIRECT)\n",
        r.outcome.write_error.as_deref().unwrap_or("accepted"),
        r.outcome.card_status_text
    );
    for b in &r.outcome.blocks {
        s += &format!(
            "  {:<9} {:>12}  {}\n",
            b.what,
            b.offset,
            b.problem.as_deref().unwrap_or("ok")
        );
    }
    s += &format!("restored: {}\n", r.restored.join(", "));
    for failed in &r.not_restored {
        s += &format!("NOT restored: {failed}\n");
    }
    s += &format!(
        "{}: {}\n",
        if r.outcome.passed { "PASS" } else { "FAIL" },
        r.outcome.verdict
    );
    s
}

#[cfg(test)]
mod tests {
    use super::probe_signal_line;
    use crate::cli::Cli;
    use clap::Parser;

    #[test]
    fn the_region_must_be_named() {
        let err =
            Cli::try_parse_from(["mmcab", "probe", "packed", "/dev/mmcblk0", "--allow-write"])
                .unwrap_err()
                .to_string();
        assert!(err.contains("--offset"), "{err}");
        assert!(Cli::try_parse_from([
            "mmcab",
            "probe",
            "packed",
            "/dev/mmcblk0",
            "--allow-write",
            "--offset",
            "1G"
        ])
        .is_ok());
    }

    #[test]
    fn a_signal_says_what_the_probe_puts_back_not_what_a_run_discards() {
        let first = probe_signal_line(libc::SIGTERM, false);
        assert!(first.starts_with("\nmmcab: got SIGTERM: "), "{first}");
        assert!(
            first.contains("region") && !first.contains("discarded"),
            "{first}"
        );
        let again = probe_signal_line(libc::SIGINT, true);
        assert!(
            again.contains("again") && again.contains("region"),
            "{again}"
        );
    }
}

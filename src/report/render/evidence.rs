//! The kernel evidence in the mail text (a few columns per headline block) and in
//! report.md (a table per workload x direction with every column).

use super::columns::{ascii, wrap, MAX_COLUMNS, NAME_COLUMNS};
use super::numbers::{format_value, runs_text};
use crate::report::model::evidence::{EvidenceSource, OneBlockSplit};
use crate::report::model::Report;
use crate::workload::result::Direction;

/// `trace` or `block stat`.
fn source_text(s: EvidenceSource) -> &'static str {
    match s {
        EvidenceSource::Trace => "trace",
        EvidenceSource::BlockStat => "block stat",
    }
}

/// Three significant digits, no trailing zeros (`512`, `95.1`, `0.21`), `-` for none.
fn short(v: Option<f64>) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return "-".into();
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

/// The mail lines of one headline block: a header and one line per config, at most 72
/// columns: requests per MiB, request size mean/p99 (KiB), device latency mean/p99 (ms),
/// CMD23 and packed shares.
pub fn mail_lines(out: &mut String, report: &Report, workload: &str, direction: Option<Direction>) {
    let Some(block) = report
        .evidence
        .iter()
        .find(|b| b.workload == workload && Some(b.direction) == direction)
    else {
        return;
    };
    let traced = block.rows.iter().all(|r| r.source == EvidenceSource::Trace);
    let what = if traced {
        "kernel (trace)"
    } else {
        "kernel (block stat)"
    };
    out.push_str(&format!(
        "  {what:<NAME_COLUMNS$} {:>7} {:>11} {:>11} {:>5} {:>6}\n",
        "req/MiB", "KiB avg/p99", "ms avg/p99", "CMD23", "packed"
    ));
    for r in &block.rows {
        let mut name = ascii(&r.config);
        if report.is_baseline(&r.config) {
            name.push_str(" (A)");
        }
        if name.len() > NAME_COLUMNS {
            name = format!("{}~", &name[..NAME_COLUMNS - 1]);
        }
        let kib = |b: Option<f64>| b.map(|b| b / 1024.0);
        let ms = |us: Option<f64>| us.map(|us| us / 1000.0);
        let line = format!(
            "  {name:<NAME_COLUMNS$} {:>7} {:>11} {:>11} {:>5} {:>6}",
            short(r.requests_per_mib),
            format!(
                "{}/{}",
                short(kib(r.size_mean_bytes)),
                short(kib(r.size_p99_bytes.map(|b| b as f64)))
            ),
            format!("{}/{}", short(ms(r.lat_mean_us)), short(ms(r.lat_p99_us))),
            pct(r.cmd23_share),
            pct(r.packed_share),
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for r in block
        .rows
        .iter()
        .filter(|r| r.lost_events > 0 || r.errors > 0)
    {
        let mut what = Vec::new();
        if r.lost_events > 0 {
            what.push(format!(
                "trace lost {} events (counts too low)",
                r.lost_events
            ));
        }
        if r.errors > 0 {
            what.push(format!("{} requests failed", r.errors));
        }
        let line = format!("  ! {}: {}", ascii(&r.config), what.join(", "));
        out.push_str(&line[..line.len().min(MAX_COLUMNS)]);
        out.push('\n');
    }
    for r in &block.rows {
        if let Some(s) = &r.one_block_split {
            wrap(
                out,
                2,
                4,
                &format!("! {}: {}", ascii(&r.config), one_block_text(s)),
            );
        }
    }
    if block.rows.iter().any(|r| r.one_block_split.is_some()) {
        wrap(out, 2, 4, &format!("! {ONE_BLOCK_WHY}"));
    }
}

/// Why a driver splits requests with nothing failed, and what to do.
const ONE_BLOCK_WHY: &str = "after a failed request Linux (6.1 to 7.2) keeps its tag in \
     one-block retry mode: rebind mmcblk (or reboot) before measuring";

/// A [`OneBlockSplit`] in a few words.
fn one_block_text(s: &OneBlockSplit) -> String {
    format!(
        "{} split requests into {} one-block ones for {} block-layer I/Os, none failed",
        runs_text(&s.runs),
        s.requests,
        s.block_ios
    )
}

/// The markdown section: one table per workload x direction with every column.
pub fn markdown(report: &Report) -> String {
    if report.evidence.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Kernel evidence\n\nPer config over its measured runs: requests the mmc host \
         driver got (trace) or the block layer completed (block stat), per MiB the \
         workload moved; request size; device latency (start to done event; p99: mean \
         of the runs' p99); CMD23 and open-ended (CMD12): share of multi-block requests; \
         packed and CQE: share of all requests.\n",
    );
    for b in &report.evidence {
        out.push_str(&format!(
            "\n### {}, {}\n\n",
            b.workload,
            b.direction.as_str()
        ));
        out.push_str(
            "| config | runs | source | requests | req/MiB | size mean | size p99 | \
             latency mean | latency p99 | CMD23 | open-ended | packed | CQE | errors | \
             lost events | block ios/MiB | merges | wr_pack_stats |\n",
        );
        out.push_str("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for r in &b.rows {
            let size = |v: Option<f64>| {
                v.map_or("-".into(), |v| crate::units::format_size(v.round() as u64))
            };
            let us = |v: Option<f64>| v.map_or("-".into(), |v| format!("{} us", format_value(v)));
            let pack = match (r.pack_cmds, r.pack_reqs) {
                (Some(c), Some(q)) => format!("{c} packed writes of {q} requests"),
                _ => "-".into(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {pack} |\n",
                r.config,
                r.runs,
                source_text(r.source),
                r.requests,
                short(r.requests_per_mib),
                size(r.size_mean_bytes),
                size(r.size_p99_bytes.map(|b| b as f64)),
                us(r.lat_mean_us),
                us(r.lat_p99_us),
                pct(r.cmd23_share),
                pct(r.open_ended_share),
                pct(r.packed_share),
                pct(r.cqe_share),
                r.errors,
                r.lost_events,
                short(r.stat_ios_per_mib),
                r.stat_merges.map_or("-".into(), |m| m.to_string()),
            ));
        }
        let split: Vec<String> = b
            .rows
            .iter()
            .filter_map(|r| {
                Some(format!(
                    "{}: {}",
                    r.config,
                    one_block_text(r.one_block_split.as_ref()?)
                ))
            })
            .collect();
        if !split.is_empty() {
            out.push_str(&format!("\n{}; {ONE_BLOCK_WHY}.\n", split.join("; ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(short(Some(512.0)), "512");
        assert_eq!(short(Some(95.14)), "95.1");
        assert_eq!(short(Some(4.0)), "4");
        assert_eq!(short(Some(0.2149)), "0.21");
        assert_eq!(short(None), "-");
    }
}

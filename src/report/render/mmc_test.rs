//! mmc_test beside the block layer in the mail text and report.md: per config,
//! direction and transfer size, mmc_test's time per transfer, the block-layer engine's
//! time per I/O, the traced request time and the difference (the block layer's share),
//! and which commands each path sends. mmc_test's commands are the driver's
//! (drivers/mmc/core/mmc_test.c, Linux 6.12 and 7.x: `mmc_test_prepare_mrq` sends
//! CMD18/CMD25 with a CMD12 stop and no CMD23, `mmc_test_wait_busy` a CMD13 after each
//! transfer, and the card's command queue is off while mmc_test holds it); the block
//! path's are from the trace (CMD23 and CQE shares).

use super::columns::{ascii, cut, wrap};
use super::numbers::format_value;
use crate::report::model::mmc_test::BesideRow;
use crate::report::model::Report;
use crate::units::format_size;

/// One row of report.json's `mmc_test`: the row's fields and the block layer's share.
#[derive(Debug, serde::Serialize)]
pub struct JsonRow<'a> {
    #[serde(flatten)]
    row: &'a BesideRow,
    /// The I/O's latency less its traced request time, us (null without a trace).
    block_us: Option<f64>,
}

/// report.json's `mmc_test` rows (empty without mmc_test: the key is left out).
pub fn json_rows(report: &Report) -> Vec<JsonRow<'_>> {
    report
        .mmc_test
        .iter()
        .map(|row| JsonRow {
            row,
            block_us: row.block_share_us(),
        })
        .collect()
}

/// What mmc_test sends, in the report's words.
pub const MMC_TEST_COMMANDS: &str = "CMD18/CMD25 ended by CMD12 (no CMD23), a CMD13 \
     after each transfer, no command queue, no block layer";

fn us(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".into(), |v| format!("{v:.0}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

/// What the block path sent, from the trace.
fn block_commands(r: &BesideRow) -> String {
    match (r.cmd23_share, r.cqe_share) {
        (None, _) => "not traced".into(),
        (Some(sbc), cqe) => format!(
            "CMD23 on {} of multi-block requests, command queue on {}",
            pct(Some(sbc)),
            pct(cqe)
        ),
    }
}

/// The mail lines: a heading, a table (times in us) and the commands of each path.
pub fn mail(out: &mut String, report: &Report) {
    if report.mmc_test.is_empty() {
        return;
    }
    out.push('\n');
    wrap(
        out,
        0,
        2,
        "mmc_test beside the block layer (mean time per transfer, us; block = the \
         I/O's latency less its traced request time):",
    );
    out.push_str(&format!(
        "  {:<12} {:<5} {:>6} {:>8} {:>8} {:>8} {:>8}\n",
        "config", "dir", "size", "mmc_test", "I/O", "request", "block"
    ));
    for r in &report.mmc_test {
        out.push_str(&format!(
            "  {:<12} {:<5} {:>6} {:>8} {:>8} {:>8} {:>8}\n",
            cut(&ascii(&r.config), 12),
            r.direction.as_str(),
            format_size(r.bytes),
            us(Some(r.mmc_test_us)),
            us(Some(r.io_us)),
            us(r.request_us),
            us(r.block_share_us()),
        ));
    }
    wrap(out, 2, 4, &format!("mmc_test: {MMC_TEST_COMMANDS}."));
    let mut said: Vec<String> = Vec::new();
    for r in &report.mmc_test {
        let line = format!(
            "{} ({}, {}): {}.",
            r.workload,
            r.engine,
            r.config,
            block_commands(r)
        );
        if !said.contains(&line) {
            wrap(out, 2, 4, &ascii(&line));
            said.push(line);
        }
    }
}

/// The report.md section.
pub fn markdown(report: &Report) -> String {
    if report.mmc_test.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n## mmc_test beside the block layer\n\nPer config, direction and transfer size: \
         mmc_test's mean time per transfer (the kernel's test, without the block layer; \
         {MMC_TEST_COMMANDS}), the block-layer workload's mean I/O latency, its requests' \
         mean time in the mmc trace (issue to done) and the difference, the block layer's \
         own share of an I/O.\n\n"
    );
    out.push_str(
        "| config | direction | size | mmc_test | runs | mmc_test per transfer | workload \
         | engine | runs | I/O latency | traced request | block layer | commands (trace) |\n",
    );
    out.push_str("|---|---|---:|---|---:|---:|---|---|---:|---:|---:|---:|---|\n");
    for r in &report.mmc_test {
        let t = |v: Option<f64>| {
            v.filter(|v| v.is_finite())
                .map_or("-".into(), |v| format!("{} us", format_value(v)))
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.config,
            r.direction.as_str(),
            format_size(r.bytes),
            r.mmc_test,
            r.mmc_test_runs,
            t(Some(r.mmc_test_us)),
            r.workload,
            r.engine,
            r.runs,
            t(Some(r.io_us)),
            t(r.request_us),
            t(r.block_share_us()),
            block_commands(r),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::result::Direction;

    fn report() -> Report {
        Report {
            mmc_test: vec![BesideRow {
                config: "hs200".into(),
                direction: Direction::Read,
                bytes: 4096,
                mmc_test: "seq-read".into(),
                mmc_test_runs: 3,
                mmc_test_us: 110.4,
                workload: "sync-read-4k".into(),
                engine: "sync".into(),
                runs: 3,
                io_us: 190.0,
                request_us: Some(155.0),
                cmd23_share: Some(1.0),
                cqe_share: Some(0.0),
            }],
            ..Report::default()
        }
    }

    #[test]
    fn the_mail_lines_set_the_paths_side_by_side_in_72_columns() {
        let mut out = String::new();
        mail(&mut out, &report());
        assert!(out.lines().all(|l| l.len() <= 72), "{out}");
        let row = out.lines().find(|l| l.contains("hs200")).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols, ["hs200", "read", "4KiB", "110", "190", "155", "35"]);
        assert!(out.contains("CMD13 after each"), "{out}");
        assert!(out.contains("CMD23 on 100% of multi-block"), "{out}");
    }

    #[test]
    fn report_json_carries_the_rows_with_the_block_share_and_leaves_the_key_out_without() {
        let r = report();
        let json: serde_json::Value =
            serde_json::from_str(&crate::report::render::json::render(&r).unwrap()).unwrap();
        let row = &json["mmc_test"][0];
        assert_eq!(row["config"], "hs200");
        assert_eq!(row["direction"], "read");
        assert_eq!(row["bytes"], 4096);
        assert_eq!(row["mmc_test"], "seq-read");
        assert_eq!(row["workload"], "sync-read-4k");
        assert_eq!(row["mmc_test_us"], 110.4);
        assert_eq!(row["io_us"], 190.0);
        assert_eq!(row["request_us"], 155.0);
        assert_eq!(row["block_us"], 35.0);
        let none: serde_json::Value =
            serde_json::from_str(&crate::report::render::json::render(&Report::default()).unwrap())
                .unwrap();
        assert!(none.get("mmc_test").is_none(), "{none}");
        let untraced = Report {
            mmc_test: vec![BesideRow {
                request_us: None,
                ..r.mmc_test[0].clone()
            }],
            ..Report::default()
        };
        let json: serde_json::Value =
            serde_json::from_str(&crate::report::render::json::render(&untraced).unwrap()).unwrap();
        assert!(json["mmc_test"][0]["block_us"].is_null(), "{json}");
    }

    #[test]
    fn nothing_without_mmc_test() {
        let mut out = String::new();
        mail(&mut out, &Report::default());
        assert!(out.is_empty());
        assert!(markdown(&Report::default()).is_empty());
        let md = markdown(&report());
        assert!(md.contains("| 35") && md.contains("| sync |"), "{md}");
    }
}

//! The mail text of a probe (`mmcab probe align` / `open-au`, and of published
//! flashbench output): a flashbench-like table with the estimates, their confidence and
//! the cross-check against EXT_CSD and sysfs, 72-column ASCII, with times and rates
//! as flashbench prints them, from the report model ([`crate::report::model::probe`]).
//! Written by [`crate::report::probe_report`].

use super::columns::{ascii, wrap, MAX_COLUMNS};
use super::header;
use crate::probe::align::{self, Boundary, Estimate};
use crate::probe::open_au::{self, OpenAuEstimate, OpenAuRun};
use crate::probe::record::{ProbeKind, ProbeRecord};
use crate::report::model::probe::{Probe, ProbeEstimate, ProbeRun};
use crate::report::model::Report;
use crate::units::format_size;

/// Three significant digits, as flashbench's `%.3g` (no exponent below 10^6).
fn g3(v: f64) -> String {
    let a = v.abs();
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let t = format!("{v:.decimals$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// A time as flashbench prints it (`982ns`, `57.4us`, `1.44ms`), in ASCII.
pub fn time(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0}ns")
    } else if a < 1e6 {
        format!("{}us", g3(ns / 1e3))
    } else if a < 1e9 {
        format!("{}ms", g3(ns / 1e6))
    } else {
        format!("{}s", g3(ns / 1e9))
    }
}

fn boundary_text(what: &str, b: &Boundary, read_ns: f64) -> String {
    match b.bytes {
        Some(bytes) => format!(
            "{what}: {} ({} confidence): diff {} at {} and above ({} alignments), {} below \
             ({}): a step of {}, {:.0}% of a read of {}, {:.1}x the spread of the diffs.",
            format_size(bytes),
            b.confidence.as_str(),
            time(b.high_ns),
            format_size(bytes),
            b.n_high,
            time(b.low_ns),
            b.n_low,
            time(b.high_ns - b.low_ns),
            b.relative * 100.0,
            time(read_ns),
            b.score
        ),
        None => format!(
            "{what}: none: no step in the diff column stands out of its spread, so no \
             boundary is claimed (a device without flash timing, such as an emulated card \
             or a loop device, looks like this)."
        ),
    }
}

fn estimate_lines(out: &mut String, e: &Estimate) {
    wrap(
        out,
        0,
        4,
        &boundary_text("Erase block", &e.erase_block, e.read_ns),
    );
    if e.erase_block.bytes.is_some() {
        let page = if e.page.bytes.is_some() {
            boundary_text("Page-like boundary", &e.page, e.read_ns)
        } else {
            "Page-like boundary: none below the erase block.".to_string()
        };
        wrap(out, 0, 4, &page);
    }
}

/// The table of `r` with its flags; `slow` says which rows were disturbed.
fn align_table(out: &mut String, r: &ProbeRecord, slow: &[bool]) {
    let untimed =
        |row: &&align::AlignRow| row.pre_ns <= 0.0 || row.on_ns <= 0.0 || row.post_ns <= 0.0;
    out.push_str(&format!(
        "  {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "align", "pre", "on", "post", "diff"
    ));
    for (row, slow) in r.align.iter().zip(slow) {
        let flag = if !row.reliable && untimed(&row) {
            " (no time)"
        } else if !row.reliable {
            " (cut off)"
        } else if *slow {
            " (slow)"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {:>10} {:>10} {:>10} {:>10} {:>10}{flag}\n",
            row.align,
            time(row.pre_ns),
            time(row.on_ns),
            time(row.post_ns),
            time(row.diff_ns)
        ));
    }
    let bad: Vec<&align::AlignRow> = r.align.iter().filter(|row| !row.reliable).collect();
    let mut legend = Vec::new();
    if bad.iter().any(|row| !untimed(row)) {
        legend.push("cut off: a negative diff flashbench printed cut to 7 bytes".to_string());
    }
    if bad.iter().any(untimed) {
        legend.push("no time: a time of 0, no measurement".to_string());
    }
    if slow.contains(&true) {
        legend.push(format!(
            "slow: plain reads over {}x the lower quartile of the others', a disturbance \
             rather than the flash",
            align::DISTURBED
        ));
    }
    if !legend.is_empty() {
        wrap(
            out,
            2,
            3,
            &format!(
                "({}; left out of the estimate and the chart)",
                legend.join("; ")
            ),
        );
    }
    let again: Vec<String> = r
        .align
        .iter()
        .filter(|row| row.remeasured > 0)
        .map(|row| format!("{} ({}x)", format_size(row.align), row.remeasured))
        .collect();
    if !again.is_empty() {
        wrap(
            out,
            2,
            3,
            &format!(
                "(measured again, after the first pass, because their plain reads were over \
                 {}x the others', keeping the faster: {})",
                align::DISTURBED,
                again.join(", ")
            ),
        );
    }
}

/// Sizes down, runs across (at most 6 runs per table), MB/s.
fn open_au_table(out: &mut String, runs: &[OpenAuRun]) {
    let mut sizes: Vec<u64> = runs
        .iter()
        .flat_map(|r| r.points.iter().map(|p| p.size))
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    for chunk in runs.chunks(6) {
        let mut head = format!("  {:>8}", "MB/s");
        for r in chunk {
            head.push_str(&format!(
                " {:>9}",
                format!("nr={}{}", r.nr, if r.random { "r" } else { "" })
            ));
        }
        out.push_str(&head);
        out.push('\n');
        for s in &sizes {
            let mut line = format!("  {:>8}", format_size(*s));
            for r in chunk {
                let cell = r
                    .points
                    .iter()
                    .find(|p| p.size == *s)
                    .map_or("-".to_string(), |p| {
                        if p.measured() {
                            g3(p.mb_per_s)
                        } else {
                            format!("{}*", g3(p.mb_per_s))
                        }
                    });
                line.push_str(&format!(" {cell:>9}"));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    let mut legend = Vec::new();
    if runs.iter().any(|r| r.random) {
        legend.push("nr=Nr: N units, random order");
    }
    if runs.iter().any(|r| r.points.len() < sizes.len()) {
        legend.push("-: not written (the run stopped)");
    }
    if runs.iter().flat_map(|r| &r.points).any(|p| !p.measured()) {
        legend.push("*: no rate measured, left out of the estimate and the chart");
    }
    if !legend.is_empty() {
        wrap(out, 2, 3, &format!("({})", legend.join("; ")));
    }
}

/// The open units each order's runs say, as (random, estimate).
fn open_au_lines(out: &mut String, estimates: [(bool, &Option<OpenAuEstimate>); 2]) {
    for (random, e) in estimates {
        let Some(e) = e else {
            continue;
        };
        let order = if random {
            "random order"
        } else {
            "linear order"
        };
        let line = match (e.open, e.at_least, e.collapsed) {
            (Some(n), _, Some((m, c))) => format!(
                "Open units, {order}: {n} ({} confidence): with {m} units MB/s falls \
                 with the write size down to {} at {}{}.",
                e.confidence.as_str(),
                g3(c.mb_per_s),
                format_size(c.size),
                c.reference_mb_per_s
                    .map_or(String::new(), |o| format!(" ({} with one unit)", g3(o)))
            ),
            (None, _, Some((m, c))) => format!(
                "Open units, {order}: fewer than {m} (low confidence): {m} units collapse \
                 at {} and no run with fewer units was measured.",
                format_size(c.size)
            ),
            (_, Some(n), None) => format!(
                "Open units, {order}: no collapse up to {n} units: the device keeps at least \
                 {n} open, or has no such limit (a device without flash, such as a loop \
                 device, never collapses)."
            ),
            _ => continue,
        };
        wrap(out, 0, 4, &line);
    }
}

fn method_text(r: &ProbeRecord) -> String {
    match (r.kind, &r.align_options, &r.open_au_options) {
        (ProbeKind::Align, Some(o), _) => format!(
            "Method: flashbench -a: reads of {} just before, across and after each \
             power-of-two alignment at {} positions, fastest of {} tries each; diff = on - \
             (pre + post) / 2. Scheduling: {}.",
            format_size(o.blocksize),
            align::POSITIONS,
            o.tries,
            r.scheduling
        ),
        (ProbeKind::OpenAu, _, Some(o)) => format!(
            "Method: flashbench --open-au: units of {}, {} erase sizes apart from {}; \
             writes of {} down to {} (halving), each size into every unit in turn, {} \
             order, O_DIRECT|O_SYNC, bytes 0x5a; MB/s = 10^6 B/s.{} Scheduling: {}.",
            format_size(o.erase_size),
            open_au::SPACING,
            format_size(o.offset()),
            format_size(o.erase_size),
            format_size(o.blocksize),
            if o.random { "random" } else { "linear" },
            clipped_text(o, r.units_fit),
            r.scheduling
        ),
        _ => format!("Method: as published ({}).", r.target),
    }
}

/// ` --max-nr 16: only 3 units fit on the device, so --find stopped at 3.` when the
/// device clipped `--find`'s units.
fn clipped_text(o: &open_au::OpenAuOptions, units_fit: Option<u32>) -> String {
    match (o.units, units_fit) {
        (open_au::Units::Find { max }, Some(fit)) if fit < max => format!(
            " --max-nr {max}: only {fit} units fit on the device from {}, so --find \
             stopped at {fit}.",
            format_size(o.offset())
        ),
        _ => String::new(),
    }
}

/// The body of one run: table, estimates, geometry and cross-check.
fn run_text(out: &mut String, run: &ProbeRun) {
    let r = &run.record;
    match &run.read {
        ProbeEstimate::Align { estimate, slow } => {
            align_table(out, r, slow);
            out.push('\n');
            estimate_lines(out, estimate);
            let geometry = r.geometry.lines();
            if !geometry.is_empty() {
                out.push_str("Geometry the device reports:\n");
                for g in geometry {
                    wrap(out, 2, 4, &g);
                }
            }
            for c in r.geometry.cross_check(estimate) {
                wrap(out, 0, 4, &c);
            }
        }
        ProbeEstimate::OpenAu { linear, random } => {
            open_au_table(out, &r.open_au);
            out.push('\n');
            open_au_lines(out, [(false, linear), (true, random)]);
        }
    }
}

/// The mail text of a probe's report: its title and header, the method, the run's
/// body and each published run to compare with.
pub fn render(report: &Report, probe: &Probe) -> String {
    let mut out = String::new();
    wrap(&mut out, 0, 2, &ascii(&header::title(&report.title)));
    for (k, v) in header::lines(&report.header) {
        wrap(&mut out, 0, 8, &ascii(&format!("{k}: {v}")));
    }
    wrap(&mut out, 0, 8, &ascii(&method_text(&probe.run.record)));
    out.push('\n');
    run_text(&mut out, &probe.run);
    for p in &probe.published {
        out.push('\n');
        wrap(
            &mut out,
            0,
            4,
            &ascii(&format!(
                "Published, for comparison: {} ({})",
                p.record.source, p.record.device
            )),
        );
        wrap(&mut out, 2, 4, &ascii(&p.record.target));
        run_text(&mut out, p);
    }
    let mut clean = String::new();
    for line in out.lines() {
        clean.push_str(ascii(line).trim_end());
        clean.push('\n');
    }
    debug_assert!(clean.lines().all(|l| l.len() <= MAX_COLUMNS), "{clean}");
    clean
}

#[cfg(test)]
#[path = "probe_text_tests.rs"]
mod tests;

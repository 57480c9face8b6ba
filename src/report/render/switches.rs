//! The words of the bus settings, of the switches to each config (the tuning traced at
//! them, the bus they landed at) and of the host's error counters
//! ([`crate::report::model::setup`]); [`super::setup`] puts them in its sections.

use crate::device::Ios;
use crate::evidence::tuning::ms;
use crate::report::model::setup::{HostErrors, Switches};

/// A clock in MHz: `52 MHz`, `25.5 MHz`.
pub fn hz(v: u64) -> String {
    let mhz = v as f64 / 1e6;
    let text = format!("{mhz:.3}");
    format!("{} MHz", text.trim_end_matches('0').trim_end_matches('.'))
}

/// `8-bit, mmc high-speed, 52 MHz` (and the actual clock when the host reports another).
pub fn bus_text(ios: &Ios) -> String {
    let mut t = format!(
        "{}-bit, {}, {}",
        ios.bus_width_bits,
        ios.timing,
        hz(ios.clock_hz)
    );
    if let Some(actual) = ios.actual_clock_hz.filter(|a| *a != ios.clock_hz) {
        t.push_str(&format!(" (actual {})", hz(actual)));
    }
    t
}

/// `tuned: 40 x CMD21 in 3.1 ms at the switch`, `no tuning traced at its 3 switches`,
/// `tuning not traced: <why>`; None when nothing is to be said (older results).
pub fn switch_text(switches: &Switches) -> Option<String> {
    let list = match switches {
        Switches::NotRecorded => return None,
        Switches::NoSwitch => return Some("no switch (its knobs were in place already)".into()),
        Switches::Recorded(list) => list,
    };
    let traced: Vec<_> = list.iter().filter_map(|s| s.trace.as_ref()).collect();
    let n = list.len();
    let at = |k: usize| match k {
        1 => "at the switch".to_string(),
        k => format!("at each of {k} switches"),
    };
    if traced.is_empty() {
        let why = list
            .iter()
            .map(|s| s.trace_unavailable.as_str())
            .find(|w| !w.is_empty())
            .unwrap_or("no trace recorded");
        return Some(format!("tuning not traced ({why})"));
    }
    let untraced = n - traced.len();
    let tuned: Vec<_> = traced.iter().filter(|t| t.tuning() > 0).collect();
    let mut text = if tuned.is_empty() {
        format!("no tuning traced {}", at(traced.len()))
    } else if tuned.len() == 1 && traced.len() == 1 {
        format!("tuned: {} {}", tuned[0].text(), at(1))
    } else {
        let counts: Vec<u64> = tuned.iter().map(|t| t.tuning()).collect();
        let (lo, hi) = (counts.iter().min(), counts.iter().max());
        let count = match (lo, hi) {
            (Some(lo), Some(hi)) if lo == hi => format!("{lo}"),
            (Some(lo), Some(hi)) => format!("{lo}-{hi}"),
            _ => String::new(),
        };
        let cmd = match (
            tuned.iter().any(|t| t.cmd21 > 0),
            tuned.iter().any(|t| t.cmd19 > 0),
        ) {
            (true, false) => "CMD21",
            (false, true) => "CMD19",
            _ => "CMD21/CMD19",
        };
        let mut spans: Vec<f64> = tuned.iter().filter_map(|t| t.tuning_span_us).collect();
        spans.sort_by(f64::total_cmp);
        let span = match (spans.first(), spans.last()) {
            (Some(a), Some(b)) if ms(*a) == ms(*b) => format!(" in {}", ms(*a)),
            (Some(a), Some(b)) => format!(" in {} to {}", ms(*a), ms(*b)),
            _ => String::new(),
        };
        let mut t = format!("tuned: {count} x {cmd}{span}");
        if tuned.len() == traced.len() {
            t.push_str(&format!(" {}", at(traced.len())));
        } else {
            t.push_str(&format!(" at {} of {} switches", tuned.len(), traced.len()));
        }
        t
    };
    if untraced > 0 {
        text.push_str(&format!(" ({untraced} more not traced)"));
    }
    Some(text)
}

/// `also 4-bit, mmc high-speed, 52 MHz before runs 5, 9`.
pub fn other_buses_text(other: &[(Ios, Vec<u32>)]) -> Option<String> {
    if other.is_empty() {
        return None;
    }
    let parts: Vec<String> = other
        .iter()
        .map(|(ios, runs)| {
            let runs: Vec<String> = runs.iter().map(u32::to_string).collect();
            let word = if runs.len() == 1 { "run" } else { "runs" };
            format!("{} before {word} {}", bus_text(ios), runs.join(", "))
        })
        .collect();
    Some(format!("also {}", parts.join("; ")))
}

/// `Data CRC Errors Occurred 1, Command Timeout Occurred 2`.
fn counts_text(counts: &[(String, u64)]) -> String {
    let parts: Vec<String> = counts.iter().map(|(n, d)| format!("{n} {d}")).collect();
    parts.join(", ")
}

/// The host's error counters: the runs (and switches) where they counted up, or that none
/// did, then whether the host's driver counts them: known to, not known to (its zeros
/// may mean nothing, and what counted up shows it counts after all), or cannot be told;
/// or why they were not read.
pub fn errors_lines(e: &HostErrors) -> (String, Vec<String>) {
    let mut lines = Vec::new();
    let source = e.source.as_str();
    let not_read = ["none:", "unavailable:", "off"]
        .iter()
        .any(|p| source.starts_with(p));
    // `not known to count: the host driver X uses none of ...` (`does not count: ` in
    // results recorded before the wording changed): X, and what it uses.
    let not_known = ["not known to count: ", "does not count: "]
        .iter()
        .find_map(|p| e.counting.strip_prefix(p))
        .map(|why| {
            let rest = why.strip_prefix("the host driver ").unwrap_or(why);
            rest.split_once(' ').unwrap_or((rest, ""))
        });
    if not_read {
        lines.push(format!("not read: {source}"));
    } else if let Some((driver, uses)) = not_known {
        lines.extend(counted_lines(e));
        if e.runs.is_empty() && e.switches.is_empty() {
            lines.push(format!(
                "none counted in {} runs, but the host driver {driver} is not known to count \
                 errors in err_stats (it {uses}): these zeros may mean nothing",
                e.runs_read
            ));
        } else {
            lines.push(format!(
                "seen counting: the host driver {driver} counted these, though mmcab does not \
                 know it to count (it {uses}): runs without a count may still have had errors"
            ));
        }
    } else {
        lines.extend(counted_lines(e));
        if e.runs.is_empty() && e.switches.is_empty() {
            lines.push(format!("none counted in {} runs", e.runs_read));
        }
        if let Some(why) = e.counting.strip_prefix("unknown: ") {
            lines.push(format!(
                "whether the host driver counts them is not known ({why}): zeros may mean nothing"
            ));
        } else if let Some(how) = e.counting.strip_prefix("counts: ") {
            lines.push(how.to_string());
        }
    }
    (
        "Host errors (debugfs err_stats, what counted up in each run):".into(),
        lines,
    )
}

/// A line per run, then per switch, whose counters counted up.
fn counted_lines(e: &HostErrors) -> Vec<String> {
    let runs = e.runs.iter().map(|c| {
        format!(
            "run {} ({}, {}): {}",
            c.run,
            c.config,
            c.workload,
            counts_text(&c.counts)
        )
    });
    let switches = e.switches.iter().map(|c| {
        format!(
            "the switch to {} before run {}: {}",
            c.config,
            c.run,
            counts_text(&c.counts)
        )
    });
    runs.chain(switches).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::tuning::SwitchTrace;
    use crate::record::SwitchMeta;
    use crate::report::model::setup::Counted;

    fn switch(run: u32, cmd21: u64, span_us: f64) -> SwitchMeta {
        SwitchMeta {
            config: "hs200".into(),
            run,
            knobs: vec!["speed".into()],
            trace: Some(SwitchTrace {
                requests: 20 + cmd21,
                cmd21,
                tuning_span_us: (cmd21 > 0).then_some(span_us),
                tuning_sum_us: (cmd21 > 0).then_some(span_us * 0.9),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_tuning_at_each_switch_in_words() {
        let one = Switches::Recorded(vec![switch(1, 40, 3100.0)]);
        assert_eq!(
            switch_text(&one).unwrap(),
            "tuned: 40 x CMD21 in 3.1 ms (sum 2.8 ms) at the switch"
        );
        let hs = Switches::Recorded(vec![switch(2, 0, 0.0)]);
        assert_eq!(switch_text(&hs).unwrap(), "no tuning traced at the switch");
        let three = Switches::Recorded(vec![
            switch(1, 40, 3100.0),
            switch(4, 40, 3300.0),
            switch(7, 0, 0.0),
        ]);
        assert_eq!(
            switch_text(&three).unwrap(),
            "tuned: 40 x CMD21 in 3.1 ms to 3.3 ms at 2 of 3 switches"
        );
        let mut untraced = switch(1, 0, 0.0);
        untraced.trace = None;
        untraced.trace_unavailable = "unavailable: tracefs is not mounted".into();
        assert_eq!(
            switch_text(&Switches::Recorded(vec![untraced])).unwrap(),
            "tuning not traced (unavailable: tracefs is not mounted)"
        );
        assert_eq!(switch_text(&Switches::NotRecorded), None);
        assert_eq!(
            switch_text(&Switches::NoSwitch).unwrap(),
            "no switch (its knobs were in place already)"
        );
    }

    fn errors(counting: &str, runs: Vec<Counted>) -> HostErrors {
        HostErrors {
            source: "/sys/kernel/debug/mmc0/err_stats".into(),
            counting: counting.into(),
            runs_read: 6,
            runs,
            switches: Vec::new(),
        }
    }

    #[test]
    fn host_errors_in_words() {
        let counts = "counts: the host driver sdhci-aspeed counts them: its module \
                      sdhci_of_aspeed uses sdhci, which calls it (...)";
        let run = Counted {
            run: 3,
            config: "bw4".into(),
            workload: "seq-write".into(),
            counts: vec![
                ("Data CRC Errors Occurred".into(), 1),
                ("Command Timeout Occurred".into(), 2),
            ],
        };
        let (title, lines) = errors_lines(&errors(counts, vec![run.clone()]));
        assert_eq!(
            title,
            "Host errors (debugfs err_stats, what counted up in each run):"
        );
        assert_eq!(
            lines[0],
            "run 3 (bw4, seq-write): Data CRC Errors Occurred 1, Command Timeout Occurred 2"
        );
        assert_eq!(
            lines[1],
            "the host driver sdhci-aspeed counts them: its module sdhci_of_aspeed uses sdhci, \
             which calls it (...)"
        );
        let (_, lines) = errors_lines(&errors(counts, Vec::new()));
        assert_eq!(lines[0], "none counted in 6 runs");
        let no = "not known to count: the host driver dw_mmc uses none of sdhci, cqhci (...)";
        let (_, lines) = errors_lines(&errors(no, Vec::new()));
        assert_eq!(
            lines,
            [
                "none counted in 6 runs, but the host driver dw_mmc is not known to count \
                 errors in err_stats (it uses none of sdhci, cqhci (...)): these zeros may \
                 mean nothing"
            ]
        );
        // A driver not known to count that counted: its counts, and that it was seen.
        let (_, lines) = errors_lines(&errors(no, vec![run]));
        assert_eq!(
            lines,
            [
                "run 3 (bw4, seq-write): Data CRC Errors Occurred 1, Command Timeout \
                 Occurred 2",
                "seen counting: the host driver dw_mmc counted these, though mmcab does not \
                 know it to count (it uses none of sdhci, cqhci (...)): runs without a count \
                 may still have had errors"
            ]
        );
        // Results recorded with the older wording read the same.
        let old_no = no.replace("not known to count: ", "does not count: ");
        let (_, old_lines) = errors_lines(&errors(&old_no, Vec::new()));
        assert!(old_lines[0].starts_with("none counted in 6 runs, but"));
        let mut old = errors("", Vec::new());
        old.source = "none: this kernel has no /sys/kernel/debug/mmc0/err_stats".into();
        let (_, lines) = errors_lines(&old);
        assert_eq!(
            lines,
            ["not read: none: this kernel has no /sys/kernel/debug/mmc0/err_stats"]
        );
    }
}

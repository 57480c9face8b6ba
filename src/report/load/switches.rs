//! The switches between configs and the host's error counters, as meta.json and
//! evidence.csv recorded them ([`crate::record::SwitchMeta`], evidence.csv's
//! `err_stats`), into the report's setup ([`crate::report::model::setup`]).

use crate::device::Ios;
use crate::evidence::err_stats::parse_delta_text;
use crate::record::{ConfigMeta, EvidenceRow, Meta};
use crate::report::model::setup::{Counted, HostErrors, Switches};

/// Results of an mmcab that records switches: it records the command line too (both
/// came in one version), so a directory without one says nothing of switches.
fn records_switches(meta: &Meta) -> bool {
    meta.command_line.is_some()
}

/// The switches to `config`, or why there are none.
pub fn switches(meta: &Meta, config: Option<&ConfigMeta>) -> Switches {
    let Some(config) = config else {
        return Switches::NotRecorded;
    };
    if !records_switches(meta) || config.knobs.is_empty() {
        return Switches::NotRecorded;
    }
    let mine: Vec<_> = meta
        .switches
        .iter()
        .filter(|s| s.config == config.name && !s.knobs.is_empty())
        .cloned()
        .collect();
    if mine.is_empty() {
        Switches::NoSwitch
    } else {
        Switches::Recorded(mine)
    }
}

/// The bus settings `config` was seen at other than `first`, with the runs they came
/// before (from its switches, in order).
pub fn other_buses(meta: &Meta, name: &str, first: Option<&Ios>) -> Vec<(Ios, Vec<u32>)> {
    let mut out: Vec<(Ios, Vec<u32>)> = Vec::new();
    for s in meta.switches.iter().filter(|s| s.config == name) {
        let Some(ios) = &s.ios else { continue };
        if Some(ios) == first {
            continue;
        }
        match out.iter_mut().find(|(i, _)| i == ios) {
            Some((_, runs)) => runs.push(s.run),
            None => out.push((ios.clone(), vec![s.run])),
        }
    }
    out
}

/// The host's error counters of the runs in `configs` (warm-ups included: an error is
/// one whatever the run), None when the results have none recorded.
pub fn host_errors(
    meta: &Meta,
    evidence: &[EvidenceRow],
    configs: &[String],
) -> Option<HostErrors> {
    let recorded = meta.evidence.as_ref()?;
    if recorded.err_stats.is_empty() {
        return None;
    }
    let mut runs_read = 0;
    let mut runs = Vec::new();
    let mut seen: Vec<u32> = Vec::new();
    for row in evidence.iter().filter(|r| configs.contains(&r.config)) {
        if seen.contains(&row.run) {
            continue;
        }
        let Some(delta) = parse_delta_text(&row.err_stats) else {
            continue;
        };
        seen.push(row.run);
        runs_read += 1;
        if !delta.is_empty() {
            runs.push(Counted {
                run: row.run,
                config: row.config.clone(),
                workload: row.workload.clone(),
                counts: delta,
            });
        }
    }
    runs.sort_by_key(|r| r.run);
    let switches = meta
        .switches
        .iter()
        .filter(|s| configs.contains(&s.config))
        .filter_map(|s| {
            let delta = parse_delta_text(&s.err_stats)?;
            (!delta.is_empty()).then(|| Counted {
                run: s.run,
                config: s.config.clone(),
                workload: String::new(),
                counts: delta,
            })
        })
        .collect();
    Some(HostErrors {
        source: recorded.err_stats.clone(),
        counting: recorded.err_stats_counting.clone(),
        runs_read,
        runs,
        switches,
    })
}

//! Published numbers (results/reference/*.csv) reported the mmcab way.
//!
//! Each CSV row is one number as published: `source, post_date, device, conditions,
//! config, workload, direction, block_size_bytes, sweep, metric, unit,
//! higher_is_better, headline, value, notes`. Every value is a single published
//! measurement, so the report shows it as such: n = 1, no spread, no CI, no p-value,
//! no verdict; the change against the baseline config is plain arithmetic.
//!
//! `mmcab report results/reference/X.csv` writes the report into
//! `results/reference/X/`.

use crate::plan::sweep::SweepOver;
use crate::report::model::header::{Caption, Header, Named, Title};
use crate::report::model::{against, rows_for, Block, Metric, Note, Report, Sample, SweepPoint};
use crate::workload::result::Direction;
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub struct ReferenceRow {
    pub source: String,
    pub post_date: String,
    pub device: String,
    pub conditions: String,
    pub config: String,
    pub workload: String,
    /// Empty when the source does not say.
    pub direction: Option<Direction>,
    pub block_size_bytes: Option<u64>,
    pub sweep: Option<String>,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub headline: bool,
    pub value: f64,
    pub notes: String,
}

pub fn read(path: &Path) -> Result<Vec<ReferenceRow>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
    let rows = reader
        .deserialize()
        .enumerate()
        .map(|(i, r)| {
            r.with_context(|| {
                format!(
                    "{} line {}: not a reference CSV (columns: see results/README.md)",
                    path.display(),
                    i + 2
                )
            })
        })
        .collect::<Result<Vec<ReferenceRow>>>()?;
    if rows.is_empty() {
        bail!("{} has no rows", path.display());
    }
    for (i, r) in rows.iter().enumerate() {
        if let Err(e) = Metric::published(&r.metric, &r.unit, r.higher_is_better) {
            bail!("{} line {}: {e}", path.display(), i + 2);
        }
    }
    // A published 0 is a value (kept; a change from it reads "from 0"); NaN or
    // infinity is not a published number.
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| !r.value.is_finite()) {
        bail!(
            "{} line {}: value {} is not a number: write the published value",
            path.display(),
            i + 2,
            r.value
        );
    }
    Ok(rows)
}

fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !i.is_empty() && !out.iter().any(|o| o == i) {
            out.push(i.to_string());
        }
    }
    out
}

/// The report header (source, date, device, conditions, count) and the charts' caption.
fn header_and_caption(rows: &[ReferenceRow]) -> (Header, Caption) {
    let devices = unique(rows.iter().map(|r| r.device.as_str()));
    let dates = unique(rows.iter().map(|r| r.post_date.as_str()));
    let header = Header {
        sources: Some(unique(rows.iter().map(|r| r.source.as_str()))),
        posted: Some(dates.clone()),
        device: Some(Named::One(devices.join("; "))),
        conditions: unique(rows.iter().map(|r| r.conditions.as_str())),
        numbers: Some(rows.len()),
        ..Header::default()
    };
    (header, Caption::Published { devices, dates })
}

/// The report model of a reference CSV.
pub fn build(rows: &[ReferenceRow], baseline: Option<&str>) -> Result<Report> {
    let configs = unique(rows.iter().map(|r| r.config.as_str()));
    let baseline = crate::report::load::results::pick_baseline(&configs, baseline)?;
    let mut keys: Vec<(String, Option<Direction>, String)> = Vec::new();
    for r in rows {
        let k = (r.workload.clone(), r.direction, r.metric.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let blocks = keys
        .into_iter()
        .map(|(workload, direction, metric_key)| {
            // Each number's place in the source stands for its run number.
            let these: Vec<(u32, &ReferenceRow)> = (0u32..)
                .zip(rows)
                .filter(|(_, r)| {
                    r.workload == workload && r.direction == direction && r.metric == metric_key
                })
                .collect();
            let first = these[0].1;
            let metric = Metric::published(&metric_key, &first.unit, first.higher_is_better)
                .map_err(|e| anyhow!("{workload}: {e}"))?;
            let samples: Vec<Sample> = these
                .iter()
                .map(|(i, r)| Sample {
                    config: r.config.clone(),
                    run: *i,
                    value: r.value,
                })
                .collect();
            let sweep = first.sweep.clone().filter(|s| !s.is_empty());
            Ok(Block {
                headline: first.headline,
                block_size_bytes: first.block_size_bytes,
                sweeps: match (&sweep, first.block_size_bytes) {
                    (Some(name), Some(x)) => vec![SweepPoint {
                        sweep: name.clone(),
                        over: SweepOver::Bs,
                        x: x as f64,
                    }],
                    _ => Vec::new(),
                },
                sweep,
                rows: rows_for(&configs, &against(&baseline), &metric, &samples),
                workload,
                direction,
                metric,
            })
        })
        .collect::<Result<Vec<Block>>>()?;
    let (header, caption) = header_and_caption(rows);
    Ok(Report {
        evidence: Vec::new(),
        mmc_test: Vec::new(),
        title: Title::Published,
        header,
        hosts: Vec::new(),
        setup: None,
        caption: Some(caption),
        configs,
        baseline,
        published: true,
        blocks,
        notes: unique(rows.iter().map(|r| r.notes.as_str()))
            .into_iter()
            .map(Note::Published)
            .collect(),
        correction: None,
        tests: 0,
        boots: None,
        probe: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Verdict;

    /// The header line of a reference CSV, as results/README.md gives it.
    const HEAD: &str = "source,post_date,device,conditions,config,workload,direction,\
        block_size_bytes,sweep,metric,unit,higher_is_better,headline,value,notes\n";

    #[test]
    fn published_values_stay_single() {
        let csv = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/reference/packing-2012-linux-mmc.csv");
        let report = build(&read(&csv).expect("csv"), None).expect("build");
        assert!(report.published);
        assert_eq!(report.baseline, "no-packing");
        let long_write = report
            .blocks
            .iter()
            .find(|b| b.workload == "long write")
            .expect("long write");
        let packed = &long_write.rows[1];
        assert_eq!((packed.config.as_str(), packed.summary.n), ("packed", 1));
        assert_eq!(packed.summary.mean, 23.3);
        assert!(packed.summary.sd.is_nan() && packed.summary.ci_low.is_nan());
        let change = packed.change.expect("change");
        assert!((change.rel - (23.3 - 15.8) / 15.8).abs() < 1e-12);
        assert!(change.p.is_nan() && change.ci_low.is_nan());
        assert_eq!(packed.verdict, Some(Verdict::NotTested));
        assert!(
            packed.warnings.is_empty(),
            "no n < 3 nagging for published values"
        );
    }

    /// A published 0 stays a value: shown as 0, and a change from it says so rather
    /// than a percentage of infinity; a value that is no number is refused by line.
    #[test]
    fn a_published_zero_is_kept_and_not_divided_by() {
        let dir = std::env::temp_dir().join(format!("mmcab-ref-zero-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let row = |config: &str, v: &str| {
            format!("src,2012,dev,cond,{config},w,write,,,mb_per_s,MB/s,true,true,{v},\n")
        };
        let csv = dir.join("zero.csv");
        std::fs::write(&csv, format!("{HEAD}{}{}", row("a", "0"), row("b", "5"))).unwrap();
        let report = build(&read(&csv).unwrap(), None).unwrap();
        let mail = crate::report::render::text::render(&report);
        let rows = &report.blocks[0].rows;
        assert_eq!((rows[0].summary.mean, rows[1].summary.mean), (0.0, 5.0));
        assert!(mail.contains("from 0") && !mail.contains("inf"), "{mail}");
        std::fs::write(&csv, format!("{HEAD}{}{}", row("a", "1"), row("b", "NaN"))).unwrap();
        let err = format!("{:#}", read(&csv).unwrap_err());
        assert!(err.contains("line 3: value NaN is not a number"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A metric mmcab knows keeps its unit and direction: a row that gives `mb_per_s`
    /// another unit is refused by line, one with a key of its own is taken as given.
    #[test]
    fn a_known_metric_in_another_unit_is_refused() {
        let dir = std::env::temp_dir().join(format!("mmcab-ref-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let row = |metric: &str, unit: &str| {
            format!("src,2012,dev,cond,a,w,write,,,{metric},{unit},true,true,1,\n")
        };
        let csv = dir.join("unit.csv");
        let text = format!(
            "{HEAD}{}{}",
            row("mb_per_s", "MB/s"),
            row("mb_per_s", "MiB/s")
        );
        std::fs::write(&csv, text).unwrap();
        let err = format!("{:#}", read(&csv).unwrap_err());
        assert!(
            err.contains(
                "line 3: metric mb_per_s is in MB/s, higher is better (the row says MiB/s"
            ),
            "{err}"
        );
        std::fs::write(&csv, format!("{HEAD}{}", row("erase_mb_per_s", "MiB/s"))).unwrap();
        let report = build(&read(&csv).unwrap(), None).unwrap();
        let m = &report.blocks[0].metric;
        assert_eq!((m.key(), m.unit()), ("erase_mb_per_s", "MiB/s"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_results_csv_is_not_a_reference_csv() {
        let csv =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop/runs.csv");
        let err = format!("{:#}", read(&csv).unwrap_err());
        assert!(err.contains("not a reference CSV"), "{err}");
    }
}

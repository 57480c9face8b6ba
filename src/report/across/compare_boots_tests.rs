//! Tests of comparisons across boots: `compare::build` with boots as the unit
//! (across/boots.rs), as every output renders it.

use crate::record::{ConfigMeta, Meta, RunRow};
use crate::report::across::compare::{build, Sides};
use crate::report::ci::lava;
use crate::report::load::dir::ResultsDir;
use crate::report::model::Metric;
use crate::report::render::{csv, json, markdown};
use crate::stats::{mean, summarize};
use crate::workload::result::Direction;

/// One boot: a results directory of one config whose runs wrote `values` MB/s.
fn boot(name: &str, label: &str, values: &[f64]) -> ResultsDir {
    let runs = values
        .iter()
        .enumerate()
        .map(|(i, &v)| RunRow {
            bytes: 1 << 20,
            mb_per_s: v,
            iops: v,
            ..RunRow::for_tests(i as u32 + 1, "as-is", "w", Direction::Write)
        })
        .collect();
    let meta = Meta {
        label: label.into(),
        plan_sha256: "abc".into(),
        device_summary: "dev".into(),
        configs: vec![ConfigMeta {
            name: "as-is".into(),
            ..Default::default()
        }],
        workloads: vec!["w".into()],
        ..Default::default()
    };
    ResultsDir::for_tests(name, meta, runs)
}

/// Sides of two boots with 4 + 2 and 3 + 1 runs: the pooled runs' mean (10.7 for
/// A) is not the mean of the boot means (11.05). Every output gives the side's
/// summary over its boot means, n = boots, and the change is the change of those.
#[test]
fn a_side_of_several_boots_is_summarised_over_its_boot_means() {
    let a = [vec![10.0, 10.2, 9.8, 10.0], vec![12.0, 12.2]];
    let b = [vec![11.0, 11.2, 10.8], vec![11.5]];
    let sides = Sides::two(
        vec![boot("a1", "v1", &a[0]), boot("a2", "v1", &a[1])],
        vec![boot("b1", "v2", &b[0]), boot("b2", "v2", &b[1])],
    );
    let (report, _) = build(&sides, false, None).expect("compare");
    let block = report
        .blocks
        .iter()
        .find(|b| b.metric == Metric::MbPerS)
        .expect("MB/s block");
    let means = |side: &[Vec<f64>; 2]| -> Vec<f64> { side.iter().map(|x| mean(x)).collect() };
    let (ra, rb) = (&block.rows[0], &block.rows[1]);
    assert_eq!((ra.config.as_str(), rb.config.as_str()), ("v1", "v2"));
    for (row, side) in [(ra, &a), (rb, &b)] {
        let want = summarize(&means(side));
        assert_eq!(row.summary, want, "{}", row.config);
        assert_eq!(row.summary.n, 2);
        let spread = row.across.as_ref().expect("across").spread;
        assert_eq!(
            (row.summary.ci_low, row.summary.ci_high),
            (spread.ci_low, spread.ci_high)
        );
    }
    assert!((ra.summary.mean - 11.05).abs() < 1e-12);
    assert_ne!(mean(&ra.values), ra.summary.mean, "runs pooled differ");
    let change = rb.change.expect("change");
    let rel = (rb.summary.mean - ra.summary.mean) / ra.summary.mean;
    assert!((change.rel - rel).abs() < 1e-12, "{change:?} vs {rel}");

    // summary.csv, report.json, report.md and LAVA say the same.
    let text = csv::render(&report).expect("csv");
    let mut reader = ::csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let row = reader
        .records()
        .map(|r| r.expect("record"))
        .find(|r| &r[col("config")] == "v1" && &r[col("metric")] == "mb_per_s")
        .expect("v1 row");
    assert_eq!(&row[col("n")], "2");
    let csv_mean: f64 = row[col("mean")].parse().expect("mean");
    assert!((csv_mean - 11.05).abs() < 1e-12);
    let csv_sd: f64 = row[col("sd")].parse().expect("sd");
    assert!((csv_sd - ra.summary.sd).abs() < 1e-12);

    let value: serde_json::Value =
        serde_json::from_str(&json::render(&report).expect("json")).expect("parses");
    let rows = value["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .find(|b| b["metric"]["key"] == "mb_per_s")
        .expect("block")["rows"]
        .clone();
    assert_eq!(rows[0]["summary"]["n"], 2);
    assert!((rows[0]["summary"]["mean"].as_f64().expect("mean") - 11.05).abs() < 1e-12);

    let md = markdown::render(&report, &[]);
    assert!(md.contains("| v1 | 2 | 11.05 |"), "{md}");
    let signals = lava::signals(&report, None);
    let v1 = signals
        .iter()
        .find(|l| l.contains(".mb_per_s.v1 "))
        .expect("v1 signal");
    assert!(v1.contains("MEASUREMENT=11.05 "), "{v1}");
}

//! Tests of [`super`] (results.rs).

use super::*;
use crate::record::GROUP_JOB;

#[test]
fn a_single_job_without_group_row_stands_for_its_run() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
    let mut d = crate::report::load::dir::load(&dir).expect("fixture");
    let with_group = d.measured().len();
    d.runs.retain(|r| r.job != GROUP_JOB);
    assert_eq!(d.measured().len(), with_group);
    assert!(d.measured().iter().all(|r| r.job != GROUP_JOB));
}

#[test]
fn sweeps_are_named_stem_dash_size() {
    assert_eq!(sweep_point("randread-4k"), Some(("randread".into(), 4096)));
    assert_eq!(
        sweep_point("qd-sweep-64KiB"),
        Some(("qd-sweep".into(), 65536))
    );
    assert_eq!(sweep_point("seq-write"), None);
    assert_eq!(sweep_point("-4k"), None);
    assert_eq!(sweep_point("randread-4x"), None);
}

#[test]
fn headline_is_iops_for_small_io_and_mb_per_s_otherwise() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
    let r = build(
        &crate::report::load::dir::load(&dir).expect("fixture"),
        None,
    )
    .expect("build");
    let headline = |w: &str| -> Vec<String> {
        r.blocks
            .iter()
            .filter(|b| b.workload == w && b.headline)
            .map(|b| b.metric.key().to_string())
            .collect()
    };
    assert_eq!(headline("seq-write"), vec!["mb_per_s"]);
    assert_eq!(headline("randread-64k"), vec!["iops"]);
    let sweep: Vec<_> = r.blocks.iter().filter_map(|b| b.sweep.clone()).collect();
    assert!(sweep.iter().all(|s| s == "randread") && sweep.len() == 12);
    assert_eq!(r.baseline, "max-sectors-512k");
    assert_eq!(r.n_range(), (5, 5), "warm-ups are dropped");
}

/// A plan's [[sweep]] tables decide the sweeps, with x from the plan's jobs; the
/// workload names are not parsed (no `randread` sweep from `randread-4k` then).
#[test]
fn declared_sweeps_replace_the_name_rule() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
    let mut d = crate::report::load::dir::load(&dir).expect("fixture");
    let mut plan = String::from("name = \"p\"\n");
    for (w, bs, qd) in [
        ("seq-write", "1M", 1),
        ("seq-read", "1M", 1),
        ("randread-4k", "4k", 1),
        ("randread-16k", "4k", 4),
        ("randread-64k", "4k", 16),
    ] {
        plan.push_str(&format!(
            "[[workload]]\nname = \"{w}\"\n[[workload.job]]\nname = \"j\"\nrw = \"randread\"\n\
             bs = \"{bs}\"\nengine = \"io_uring\"\niodepth = {qd}\n"
        ));
    }
    plan.push_str(
        "[[sweep]]\nname = \"by-depth\"\nover = \"iodepth\"\n\
         workloads = [\"randread-4k\", \"randread-16k\", \"randread-64k\"]\n",
    );
    d.meta.plan_text = plan;
    let r = build(&d, None).expect("build");
    let points: Vec<(String, f64)> = r
        .blocks
        .iter()
        .filter(|b| b.metric == Metric::Iops)
        .flat_map(|b| b.sweeps.iter().map(|p| (b.workload.clone(), p.x)))
        .collect();
    assert_eq!(
        points,
        [
            ("randread-4k".to_string(), 1.0),
            ("randread-16k".to_string(), 4.0),
            ("randread-64k".to_string(), 16.0)
        ]
    );
    assert!(r
        .blocks
        .iter()
        .flat_map(|b| &b.sweeps)
        .all(|p| p.sweep == "by-depth" && p.over == SweepOver::Iodepth));
}

/// Results format 0.2.0: the sweeps meta.json records are the only ones; names
/// that look like `<stem>-<size>` make no sweep, and neither does the plan text.
#[test]
fn format_0_2_draws_the_recorded_sweeps_only() {
    use crate::record::{SweepMeta, SweepMetaPoint, RESULTS_FORMAT};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
    let mut d = crate::report::load::dir::load(&dir).expect("fixture");
    assert!(
        d.meta.format_version.is_none(),
        "the fixture is of format 0.1"
    );
    d.meta.format_version = Some(RESULTS_FORMAT.into());
    let r = build(&d, None).expect("build");
    assert!(
        r.blocks
            .iter()
            .all(|b| b.sweeps.is_empty() && b.sweep.is_none()),
        "randread-4k/16k/64k are names, not a sweep, in format 0.2.0"
    );
    d.meta.sweeps = vec![SweepMeta {
        name: "by-size".into(),
        over: SweepOver::Bs,
        points: [("randread-4k", 4096), ("randread-64k", 65536)]
            .map(|(w, x)| SweepMetaPoint {
                workload: w.into(),
                x,
            })
            .to_vec(),
    }];
    let r = build(&d, None).expect("build");
    let points: Vec<(&str, &str, f64)> = r
        .blocks
        .iter()
        .filter(|b| b.metric == Metric::Iops)
        .flat_map(|b| {
            b.sweeps
                .iter()
                .map(|p| (b.workload.as_str(), p.sweep.as_str(), p.x))
        })
        .collect();
    assert_eq!(
        points,
        [
            ("randread-4k", "by-size", 4096.0),
            ("randread-64k", "by-size", 65536.0)
        ]
    );
}

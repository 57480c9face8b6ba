use super::*;
use crate::record::Meta;

const PLAN: &str = r#"
name = "t"
[[workload]]
name = "mt-read"
[[workload.job]]
name = "seq-read"
rw = "read"
engine = "mmc_test"
mmc_test = "seq-read"
bs = "4KiB"
[[workload]]
name = "sync-read-4k"
[[workload.job]]
name = "read"
rw = "read"
bs = "4KiB"
size = "4MiB"
[[workload]]
name = "sync-write-4k"
[[workload.job]]
name = "write"
rw = "write"
bs = "4KiB"
size = "4MiB"
"#;

fn row(run: u32, workload: &str, job: &str, dir: Direction, lat: f64) -> RunRow {
    RunRow {
        job: job.into(),
        lat_mean_us: lat,
        ..RunRow::for_tests(run, "as-is", workload, dir)
    }
}

fn traced(run: u32, workload: &str, lat: f64) -> EvidenceRow {
    EvidenceRow {
        run,
        config: "as-is".into(),
        workload: workload.into(),
        direction: "read".into(),
        trace: "ok".into(),
        requests: Some(1024),
        multi_block: Some(1024),
        sbc_multi_block: Some(1024),
        cqe: Some(0),
        lat_mean_us: Some(lat),
        ..Default::default()
    }
}

fn dir() -> ResultsDir {
    let meta = Meta {
        plan_text: PLAN.into(),
        ..Default::default()
    };
    let r = Direction::Read;
    let mut d = ResultsDir::for_tests(
        "x",
        meta,
        vec![
            row(1, "mt-read", "seq-read:512B", r, 600.0),
            row(1, "mt-read", "seq-read:4KiB", r, 100.0),
            row(1, "mt-read", GROUP_JOB, r, 100.0),
            row(2, "sync-read-4k", "read", r, 180.0),
            row(2, "sync-read-4k", GROUP_JOB, r, 180.0),
            row(3, "mt-read", "seq-read:4KiB", r, 120.0),
            row(3, "mt-read", GROUP_JOB, r, 120.0),
            row(4, "sync-read-4k", GROUP_JOB, r, 200.0),
            row(5, "sync-write-4k", GROUP_JOB, Direction::Write, 900.0),
        ],
    );
    d.evidence = vec![
        traced(2, "sync-read-4k", 150.0),
        traced(4, "sync-read-4k", 160.0),
    ];
    d
}

#[test]
fn mmc_test_stands_beside_the_block_layer_workload_of_its_size() {
    let rows = build(&dir(), &["as-is".to_string()]);
    assert_eq!(
        rows.len(),
        1,
        "the write workload has no mmc_test write: {rows:?}"
    );
    let r = &rows[0];
    assert_eq!((r.bytes, r.mmc_test.as_str()), (4096, "seq-read"));
    assert_eq!(
        (r.workload.as_str(), r.engine.as_str()),
        ("sync-read-4k", "sync")
    );
    assert_eq!((r.mmc_test_runs, r.runs), (2, 2));
    assert!((r.mmc_test_us - 110.0).abs() < 1e-9);
    assert!((r.io_us - 190.0).abs() < 1e-9);
    assert!((r.request_us.unwrap() - 155.0).abs() < 1e-9);
    assert!((r.block_share_us().unwrap() - 35.0).abs() < 1e-9);
    assert_eq!((r.cmd23_share, r.cqe_share), (Some(1.0), Some(0.0)));
}

#[test]
fn a_run_without_a_trace_leaves_the_block_layers_share_unknown() {
    let mut d = dir();
    d.evidence.pop();
    let rows = build(&d, &["as-is".to_string()]);
    assert_eq!(rows[0].request_us, None);
    assert_eq!(rows[0].block_share_us(), None);
}

#[test]
fn a_plan_without_mmc_test_has_no_rows() {
    let mut d = dir();
    d.meta.plan_text = PLAN.replace("engine = \"mmc_test\"\nmmc_test = \"seq-read\"\n", "");
    assert!(build(&d, &["as-is".to_string()]).is_empty());
}

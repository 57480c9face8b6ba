//! The kernel evidence of a run covers its measured I/O only: on a real loop device, a
//! write job with `verify = true` shows its writes in the block statistics of
//! evidence.csv, and not the verify read-back that follows them. Needs root (loop
//! devices); ignored in plain `cargo test`.

use crate::common::loop_device;

use loop_device::LoopDevice;
use std::collections::BTreeMap;
use std::process::Command;

const PLAN: &str = r#"
name = "window"
repetitions = 2
[[workload]]
name = "w"
[[workload.job]]
name = "j"
rw = "write"
bs = "64KiB"
size = "1MiB"
verify = true
"#;

#[test]
#[ignore = "needs root: loop devices"]
fn block_stat_counts_the_measured_writes_and_not_the_verify_read_back() {
    let dev = LoopDevice::new(16 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let out = tmp.path().join("res");
    let run = Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(["run", plan.to_str().unwrap(), "--device"])
        .arg(&dev.dev)
        .args(["--allow-write", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(out.join("evidence.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<BTreeMap<String, String>> = reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect();
    let num = |row: &BTreeMap<String, String>, key: &str| -> u64 {
        row[key]
            .parse()
            .unwrap_or_else(|_| panic!("{key} in {row:?}"))
    };
    let mut writes = 0;
    for row in &rows {
        match row["direction"].as_str() {
            // 1 MiB written: 2048 sectors, whatever the requests.
            "write" => {
                assert_eq!(num(row, "stat_sectors"), 2048, "{row:?}");
                writes += 1;
            }
            // The verify read-back (1 MiB) comes after the measured window.
            "read" => assert_eq!(num(row, "stat_ios"), 0, "{row:?}"),
            _ => {}
        }
    }
    assert_eq!(writes, 2, "a write row per run: {text}");
}

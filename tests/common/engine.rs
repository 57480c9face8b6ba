//! Running a plan with `mmcab run --json` and picking its workloads, jobs and directions
//! out of the JSON: the helpers of the engine tests, tests/plain/engine.rs (tier 1) and
//! tests/host/engine.rs (tier 2).

use crate::common::cli::mmcab;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

pub fn write_plan(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("plan.toml");
    fs::write(&p, text).unwrap();
    p
}

/// Run a plan text against a target, expect success, return the JSON.
pub fn run_json(plan: &str, target: &Path, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let p = write_plan(dir.path(), plan);
    let mut args = vec![
        "run",
        p.to_str().unwrap(),
        "--device",
        target.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = mmcab(&args);
    assert!(
        out.status.success(),
        "mmcab failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub fn workload<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workload"] == name)
        .unwrap()
}

pub fn job<'a>(w: &'a Value, name: &str) -> &'a Value {
    w["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {w}"))
}

pub fn dir_of<'a>(j: &'a Value, direction: &str) -> &'a Value {
    j["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == direction)
        .unwrap()
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

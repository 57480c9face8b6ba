//! The A/B plan of the runner tests (two configs switching a sysfs attribute and a
//! command knob), for tests/plain/runner.rs (tier 1) and tests/host/runner.rs (tier 2).

use std::path::{Path, PathBuf};

/// A plan with two configs that set both custom knobs, and one short workload.
pub fn plan(dir: &Path, marker: &Path, repetitions: u32, runtime: &str) -> PathBuf {
    let m = marker.display();
    let text = format!(
        r#"
name = "knob-ab"
repetitions = {repetitions}
seed = 5

[[knob]]
name = "read-ahead"
kind = "attribute"
path = "/sys/block/{{disk}}/queue/read_ahead_kb"

[[knob]]
name = "marker"
kind = "command"
read = "cat {m}"
apply = "echo {{value}} > {m}"

[[config]]
name = "A"
read-ahead = 256
marker = "a"

[[config]]
name = "B"
read-ahead = 512
marker = "b"

[[workload]]
name = "rr"
[[workload.job]]
name = "randread"
rw = "randread"
bs = "4KiB"
size = "16MiB"
runtime = "{runtime}"
time_based = true
"#
    );
    let path = dir.join("plan.toml");
    std::fs::write(&path, text).unwrap();
    path
}

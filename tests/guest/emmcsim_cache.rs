//! The `cache` knob on the simulated card with a 1 MiB volatile cache (`--card
//! sim,cache_kib=1024`; testbed/emmcsim/README.md, "Cache"), one Linux 7.x boot:
//! `mmcab info` shows the cache, a cache on/off A/B of 4 KiB random writes and 512 KiB
//! sequential writes (each with end_fsync, so the cache is drained inside the run) calls
//! cache off significantly slower for both, and the sequential write with the cache on
//! runs at the model's drain rate (program_ns_per_kib), within 5%.

use crate::common::testbed;

use std::time::Duration;

const PLAN: &str = r#"
name = "cache-ab"
repetitions = 5
order = "interleaved"
[[config]]
name = "cache-on"
cache = "on"
expect.ext_csd.CACHE_CTRL = 1
[[config]]
name = "cache-off"
cache = "off"
expect.ext_csd.CACHE_CTRL = 0
[[workload]]
name = "rand-write-4k"
[[workload.job]]
name = "randwrite"
rw = "randwrite"
bs = "4KiB"
size = "8MiB"
io_size = "1MiB"
offset = "64MiB"
end_fsync = true
[[workload]]
name = "seq-write"
[[workload.job]]
name = "write"
rw = "write"
bs = "512KiB"
size = "8MiB"
offset = "64MiB"
end_fsync = true
"#;

/// The module's default program_ns_per_kib: with the cache on, a long write is
/// drained at 1024 B per 42 us.
const PROGRAM_NS_PER_KIB: f64 = 42_000.0;

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn cache_off_is_slower_and_cached_writes_drain_at_the_program_rate() {
    let script = format!(
        "set -e\ncat > /tmp/cache.toml <<'MMCAB_EOF'\n{PLAN}\nMMCAB_EOF\n\
         mmcab info /dev/mmcblk0 > /out/info.txt\n\
         mmcab run /tmp/cache.toml --device /dev/mmcblk0 --allow-write --quiet --out /out/cache\n\
         mmcab report /out/cache > /out/report.txt\n\
         cat /sys/kernel/debug/emmcsim/stats > /out/stats.txt\n"
    );
    let run = testbed::Guest::new("emmcsim_cache")
        .kernel("7")
        .card("sim,cache_kib=1024")
        .icount(1)
        .timeout(Duration::from_secs(1200))
        .run(&script);
    run.assert_success();
    let info = run.out_text("info.txt");
    assert!(info.contains("1MiB cache, CACHE_CTRL on"), "{info}");
    let report = run.out_text("report.txt");
    let json = run.out_json("cache/report/report.json");
    let mut compared = 0;
    for block in json["blocks"].as_array().unwrap() {
        if block["headline"] != true {
            continue;
        }
        let workload = block["workload"].as_str().unwrap();
        for row in block["rows"].as_array().unwrap() {
            if row["config"] == "cache-off" {
                compared += 1;
                assert_eq!(row["verdict"], "slower", "{workload}\n{report}");
            }
            if row["config"] == "cache-on" && workload == "seq-write" {
                let mb_s = row["summary"]["mean"].as_f64().unwrap();
                let model = 1024.0 / PROGRAM_NS_PER_KIB * 1e3; // MB/s (10^6 B/s)
                assert!(
                    (mb_s / model - 1.0).abs() < 0.05,
                    "cached seq-write {mb_s:.2} MB/s, the drain rate {model:.2}\n{report}"
                );
            }
        }
    }
    assert_eq!(compared, 2, "{report}");
    let stats = run.out_text("stats.txt");
    assert!(
        !stats.contains("cached_writes 0\n") && !stats.contains("flushes 0\n"),
        "{stats}"
    );
    eprintln!("{report}");
}

//! Run length on the high-end preset (`sim:emmc51`: HS400, 250 MB/s reads, a 4 MiB
//! cache; Linux 7.x, the preset's own guest CPU), one boot: bus-width-boot.toml as
//! shipped before run length by time (tests/fixtures/plans/bus-width-boot-0.2.toml) gets
//! the report's "too short to trust" for every workload, and the shipped plan none: its
//! runs last at least 1 s, and its write, sized past the card's stated cache
//! (`past_cache`: twice 4 MiB), is not inside it. `--dry-run` shows the write region the
//! card's EXT_CSD sized (docs/plans.md, "Run length").

use crate::common::testbed;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const MMCAB: &str = env!("CARGO_BIN_EXE_mmcab");

fn report(dir: &Path) -> String {
    let out = Command::new(MMCAB).arg("report").arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Wrapped lines joined: one space between words.
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn runs(dir: &Path) -> Vec<mmcab::record::RunRow> {
    csv::Reader::from_path(dir.join("runs.csv"))
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .filter(|r: &mmcab::record::RunRow| r.job == mmcab::record::GROUP_JOB)
        .collect()
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn the_plans_as_shipped_before_are_too_short_on_the_high_end_preset_and_the_shipped_ones_are_not() {
    let old = std::fs::read_to_string(
        testbed::repo_root().join("tests/fixtures/plans/bus-width-boot-0.2.toml"),
    )
    .unwrap();
    let script = format!(
        "set -e\ncat > /tmp/old.toml <<'MMCAB_EOF'\n{old}\nMMCAB_EOF\n\
         mmcab run /workloads/bus-width-boot.toml --device /dev/mmcblk0 --dry-run > /out/dry.txt\n\
         mmcab run /tmp/old.toml --device /dev/mmcblk0 --allow-write --quiet --out /out/old\n\
         mmcab run /workloads/bus-width-boot.toml --device /dev/mmcblk0 --allow-write --quiet \
         --out /out/new\n"
    );
    let run = testbed::Guest::new("run_length_emmc51")
        .kernel("7")
        .card("sim:emmc51")
        .timeout(Duration::from_secs(2400))
        .run(&script);
    run.assert_success();

    let dry = run.out_text("dry.txt");
    assert!(
        dry.contains("seq-write/dd-write: bytes 0-8388607 (8MiB)") && !dry.contains("warning:"),
        "past_cache: twice the card's 4 MiB cache, no warning\n{dry}"
    );

    let old = run.out_dir.join("old");
    let text = report(&old);
    let short = text.matches("too short to trust (").count();
    assert_eq!(short, 3, "every workload of the old plan\n{text}");
    let shortest = runs(&old)
        .iter()
        .map(|r| r.seconds)
        .fold(f64::INFINITY, f64::min);
    println!("old plan on emmc51: shortest run {shortest:.3} s");
    assert!(shortest < 0.1, "4 MiB at 125-250 MB/s: {shortest}");

    let new = run.out_dir.join("new");
    let rows = runs(&new);
    assert_eq!(rows.len(), 9, "3 workloads x 3 repetitions");
    for r in &rows {
        assert!(r.seconds >= 1.0, "{r:?}");
        if r.direction == mmcab::workload::result::Direction::Write {
            assert!(r.bytes >= 8 << 20, "{r:?}");
        }
    }
    let text = report(&new);
    assert!(
        !text.contains("too short") && !text.contains("under twice the card's"),
        "{text}"
    );
    let total: f64 = rows.iter().map(|r| r.seconds).sum();
    println!("shipped plan on emmc51: {total:.1} s measured in 9 runs");
}

//! Run length on a fast target (a file in /dev/shm, faster than any card): the plans
//! as shipped before run length by time get the report's and `--dry-run`'s "too short
//! to trust" warning for every workload, the shipped plans none, and their runs last
//! at least 1 s (docs/plans.md, "Run length"); a write under twice a cache the card
//! states is named (meta.json's recorded EXT_CSD, as a card's would be).

use std::path::Path;
use std::process::Command;

const MMCAB: &str = env!("CARGO_BIN_EXE_mmcab");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn mmcab(args: &[&str]) -> String {
    let out = Command::new(MMCAB).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "mmcab {args:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `plan` run on a file in /dev/shm, 2 repetitions; its results directory.
fn run(plan: &Path, dir: &Path) -> std::path::PathBuf {
    let out = dir.join("out");
    mmcab(&[
        "run",
        plan.to_str().unwrap(),
        "--device",
        dir.join("target").to_str().unwrap(),
        "--allow-write",
        "--repeat",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(needle)).collect()
}

/// The report's text with its wrapped lines joined: one space between words.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_plans_as_shipped_before_are_too_short_on_a_fast_target_and_the_shipped_ones_are_not() {
    let old = root().join("tests/fixtures/plans/bus-width-boot-0.2.toml");
    let new = root().join("workloads/bus-width-boot.toml");
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = dir.path().join("target");
    let device = target.to_str().unwrap();

    let dry = mmcab(&[
        "run",
        old.to_str().unwrap(),
        "--device",
        device,
        "--dry-run",
    ]);
    let warned = lines_with(&dry, "may be too short to trust on a fast card");
    assert_eq!(warned.len(), 3, "one per job:\n{dry}");
    assert!(
        warned[0].starts_with("warning: seq-write/dd-write: its length is set by 4MiB alone")
            && warned[0].ends_with("set min_runtime = \"1s\""),
        "{dry}"
    );
    let dry = mmcab(&[
        "run",
        new.to_str().unwrap(),
        "--device",
        device,
        "--dry-run",
    ]);
    assert!(!dry.contains("warning:"), "{dry}");

    let before = run(&old, dir.path());
    let report = flat(&mmcab(&["report", before.to_str().unwrap()]));
    assert_eq!(
        report
            .matches("too short to trust (")
            .zip(report.matches("set min_runtime = \"1s\" in the plan"))
            .count(),
        3,
        "every workload's headline block, with the fix:\n{report}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&mmcab(&["report", before.to_str().unwrap(), "--json"])).unwrap();
    let kinds: Vec<String> = json["report"]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["rows"][0]["warnings"].as_array().unwrap().clone())
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(kinds.iter().any(|k| k == "too_short"), "{kinds:?}");

    std::fs::remove_dir_all(&before).unwrap();
    let after = run(&new, dir.path());
    let runs = std::fs::read_to_string(after.join("runs.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(runs.as_bytes());
    for row in reader.deserialize::<mmcab::record::RunRow>() {
        let row = row.unwrap();
        assert!(row.seconds >= 1.0, "{row:?}");
    }
    let report = mmcab(&["report", after.to_str().unwrap()]);
    assert!(!report.contains("too short"), "{report}");

    // The same runs on a card that states a 64 MiB cache, on: the 4 MiB writes (the
    // target is faster than any card, so its 1 s wrote far more) are not inside it, but
    // a card with a larger cache than what they wrote is named, with the fix.
    let meta_path = after.join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    let written: u64 = csv::Reader::from_reader(runs.as_bytes())
        .deserialize::<mmcab::record::RunRow>()
        .map(|r| r.unwrap())
        .filter(|r| r.direction == mmcab::workload::result::Direction::Write)
        .map(|r| r.bytes)
        .max()
        .unwrap();
    let cache_kib = written / 1024 + 1;
    let mut ext_csd = vec![0u8; 512];
    ext_csd[192] = 8; // EXT_CSD_REV: eMMC 5.1
    ext_csd[33] = 1; // CACHE_CTRL on
    ext_csd[249..253].copy_from_slice(&(cache_kib as u32).to_le_bytes());
    let hex: String = ext_csd.iter().map(|b| format!("{b:02x}")).collect();
    meta["configs"][0]["ext_csd_hex"] = serde_json::Value::String(hex);
    std::fs::write(&meta_path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
    let report = flat(&mmcab(&["report", after.to_str().unwrap()]));
    let want = format!(
        "! as-is: runs 1, 4 wrote {} at most, under twice the card's",
        mmcab::units::format_size(written)
    );
    assert_eq!(
        report.matches(&want).count(),
        1,
        "the write block only:\n{report}"
    );
    assert!(
        report.contains("(size, io_size or min_runtime), or set cache = \"off\""),
        "{report}"
    );
}

/// Every shipped plan, as `--dry-run` reads it: no job whose length its amount alone sets
/// and no floor under 1 s (seed-003-randread.toml's 5 s runs were capped, not floored:
/// on a small fast device a run ended when it had read the device once).
#[test]
fn no_shipped_plan_has_a_job_without_a_floor() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::File::create(&target)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let mut plans: Vec<_> = std::fs::read_dir(root().join("workloads"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    plans.sort();
    assert!(plans.len() >= 10, "{plans:?}");
    for plan in plans {
        let out = Command::new(MMCAB)
            .args(["run", plan.to_str().unwrap(), "--device"])
            .arg(&target)
            .args(["--allow-write", "--dry-run"])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{}: {text}", plan.display());
        let warned = lines_with(&text, "too short");
        assert!(warned.is_empty(), "{}: {warned:#?}", plan.display());
    }
}

//! The presets of the simulated card (testbed/presets/, read by testbed/presets.bash)
//! without booting: every file is data testbed/run can take (its first line names it,
//! it cites its source (a URL or results/reference/), every key is a module parameter of testbed/emmcsim/params.c or
//! testbed/run's `icount`, every value an integer), `--card sim:help` lists them all,
//! an unknown name is refused with the list, and the calibration docs name each one.
//! How they measure against their sources: tests/guest/presets.rs.

use crate::common::sim_model::SEED_003_PHONE_2;
use crate::common::testbed;

use std::collections::BTreeSet;

/// The shipped presets: the files of testbed/presets/.
fn presets() -> Vec<String> {
    let dir = testbed::repo_root().join("testbed/presets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The module's parameter names: the second argument of each `EMMCSIM_PARAM(` line.
fn module_params() -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(testbed::repo_root().join("testbed/emmcsim/params.c")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("EMMCSIM_PARAM("))
        .filter_map(|l| l.split(',').nth(1))
        .map(|n| n.trim().to_string())
        .collect()
}

/// testbed/run with `args`: (exit status, stdout, stderr).
fn run_script(args: &[&str]) -> (Option<i32>, String, String) {
    let out = testbed::run_script(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_preset_is_data_testbed_run_takes() {
    let params = module_params();
    assert!(params.len() > 30, "params.c: {params:?}");
    let names = presets();
    for want in ["emmc51", "pinephone"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    for name in &names {
        let path = testbed::repo_root().join("testbed/presets").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name}: the name testbed/presets.bash takes"
        );
        let first = text.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!("# {name}: ")),
            "{name}: line 1 is '# {name}: what it is', got {first:?}"
        );
        assert!(
            text.lines().any(|l| l.starts_with("# Source"))
                && text
                    .lines()
                    .any(|l| l.starts_with('#') && (l.contains("http") || l.contains("results/reference/"))),
            "{name}: a '# Source' paragraph with the address of its numbers (a URL, or its transcription in results/reference/)"
        );
        let mut seen = BTreeSet::new();
        for line in text.lines() {
            let line = line.split(" #").next().unwrap().trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("{name}: {line:?} is not PARAM=VALUE"));
            assert!(
                key == "icount" || params.contains(key),
                "{name}: {key} is not a parameter of emmcsim (params.c) nor icount"
            );
            assert!(value.parse::<u64>().is_ok(), "{name}: {key}={value}");
            assert!(seen.insert(key.to_string()), "{name}: {key} twice");
        }
    }
}

#[test]
fn sim_help_lists_the_presets_and_an_unknown_one_or_a_card_icount_is_refused() {
    let (code, out, err) = run_script(&["--card", "sim:help"]);
    assert_eq!(code, Some(0), "{err}");
    for name in presets() {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(&format!("{name} "))),
            "{name} in {out}"
        );
    }
    let (code, _, err) = run_script(&["--card", "sim:no-such-card", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("--card sim:no-such-card: no such preset") && err.contains("pinephone"),
        "{err}"
    );
    // A preset's icount= is the guest CPU; on the command line it is --icount.
    let (code, _, err) = run_script(&["--card", "sim:pinephone,icount=1", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("icount is the guest CPU, not a card parameter: pass --icount 1"),
        "{err}"
    );
}

#[test]
fn the_calibration_docs_name_every_preset() {
    let readme =
        std::fs::read_to_string(testbed::repo_root().join("testbed/emmcsim/README.md")).unwrap();
    let section = readme
        .split_once("\n## Presets")
        .map(|(_, s)| s)
        .expect("testbed/emmcsim/README.md has a Presets section");
    for name in presets() {
        assert!(
            section.contains(&format!("`{name}`")),
            "the Presets section of testbed/emmcsim/README.md names `{name}`"
        );
    }
}

/// The phone the `pinephone` preset is held to is the seed's as transcribed: every row
/// of SEED_003_PHONE_2 (tests/common/sim_model.rs) is phone 2's eMMC IOPS in
/// results/reference/pinephone-2021-randread.csv, at the plan's block size and depth.
#[test]
fn the_pinephone_rows_are_the_seeds() {
    let path = testbed::repo_root().join("results/reference/pinephone-2021-randread.csv");
    let mut rdr = csv::Reader::from_path(&path).unwrap();
    let mut iops = std::collections::BTreeMap::new();
    for row in rdr.deserialize::<std::collections::BTreeMap<String, String>>() {
        let row = row.unwrap();
        if row["config"] == "PP2 eMMC" && row["metric"] == "iops" {
            iops.insert(
                row["workload"].clone(),
                row["value"].parse::<f64>().unwrap(),
            );
        }
    }
    for (workload, bytes, want) in SEED_003_PHONE_2 {
        let kib = bytes as u64 / 1024;
        let size = if kib == 1024 {
            "1M".to_string()
        } else {
            format!("{kib}k")
        };
        let depth = workload.rsplit("-qd").next().unwrap();
        let key = format!("{size} QD{depth}");
        assert_eq!(iops.get(&key), Some(&want), "{workload}: {key} in {iops:?}");
        assert_eq!(
            workload,
            format!("rand-{kib}k-qd{depth}"),
            "the plan's name for {key}"
        );
    }
}

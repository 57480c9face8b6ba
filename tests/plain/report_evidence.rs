//! The report of a results directory with kernel evidence (tests/fixtures/
//! results-emmc-cmd23, recorded in the testbed: see its README): the evidence is next to
//! the numbers in the mail text (pinned), report.md, report.json and the request-size
//! chart; a directory without evidence gets none of it.

use crate::common::cli::mmcab_paths as mmcab;
use crate::common::golden::Goldens;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A writable copy of a results directory fixture.
fn copy(name: &str, tmp: &Path) -> PathBuf {
    let to = tmp.join(name);
    std::fs::create_dir_all(&to).expect("mkdir");
    for entry in std::fs::read_dir(root().join("tests/fixtures").join(name)).expect("fixture") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
    to
}

fn report(dir: &Path) -> String {
    let out = mmcab(&[Path::new("report"), dir]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn evidence_is_next_to_the_numbers_in_every_output() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = copy("results-emmc-cmd23", tmp.path());
    let text = report(&dir);
    for (i, line) in text.lines().enumerate() {
        assert!(
            line.len() <= 72 && line.is_ascii(),
            "line {}: {line:?}",
            i + 1
        );
    }
    let mut goldens = Goldens::new("the mail text with evidence");
    goldens.text(
        &root().join("tests/fixtures/results-emmc-cmd23.expected.txt"),
        &text,
    );
    goldens.finish();
    // Every headline block: its numbers, then one evidence line per config.
    for block in text
        .split("\n\n")
        .filter(|b| b.contains("(higher is better)"))
    {
        let lines: Vec<&str> = block.lines().collect();
        let header = lines
            .iter()
            .position(|l| l.starts_with("  kernel (trace)"))
            .unwrap_or_else(|| panic!("no evidence in:\n{block}"));
        let on = lines[header + 1].split_whitespace().collect::<Vec<_>>();
        let off = lines[header + 2].split_whitespace().collect::<Vec<_>>();
        assert_eq!((on[0], off[0]), ("cmd23-on", "cmd23-off"), "{block}");
        assert_eq!((on[on.len() - 2], off[off.len() - 2]), ("100%", "0%"));
    }
    let out = dir.join("report");
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        md.contains("## Kernel evidence") && md.contains("| cmd23-off | 2 | trace | 16 |"),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("json"))
            .expect("report.json");
    let blocks = json["evidence"].as_array().expect("evidence array");
    assert_eq!(blocks.len(), 3, "seq-write, seq-read, rand-read-4k");
    let rand = &blocks[2]["rows"][0];
    assert_eq!(rand["requests"], 256);
    assert_eq!(rand["sizes"]["4096"], 256);
    assert_eq!(rand["cmd23_share"], 1.0);
    for ext in ["svg", "png"] {
        assert!(out.join(format!("request-sizes.{ext}")).is_file());
    }
}

#[test]
fn a_directory_without_evidence_reports_as_before() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = copy("results-loop", tmp.path());
    let text = report(&dir);
    assert!(!text.contains("kernel ("), "{text}");
    let out = dir.join("report");
    assert!(!out.join("request-sizes.png").exists());
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(!md.contains("Kernel evidence"));
    let json = std::fs::read_to_string(out.join("report.json")).expect("json");
    assert!(!json.contains("\"evidence\""));
}

/// tests/fixtures/results-sim-one-block (see its README): runs with no failed request in
/// which the driver wrote 2-3 of the 32 writes block by block are named, per config,
/// with the reason; the run that had the error, and the runs of results-emmc-cmd23, not.
#[test]
fn requests_split_into_one_block_ones_with_nothing_failed_are_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = copy("results-sim-one-block", tmp.path());
    let text = report(&dir);
    let expected = "  ! bw4: 1 requests failed\n\
        \x20 ! bw4: runs 2, 3 split requests into 512 one-block ones for 64\n\
        \x20     block-layer I/Os, none failed\n\
        \x20 ! bw8: runs 4, 5, 6 split requests into 896 one-block ones for 96\n\
        \x20     block-layer I/Os, none failed\n\
        \x20 ! after a failed request Linux (6.1 to 7.2) keeps its tag in one-block\n\
        \x20     retry mode: rebind mmcblk (or reboot) before measuring\n";
    assert!(text.contains(expected), "{text}");
    let md = std::fs::read_to_string(dir.join("report/report.md")).expect("report.md");
    assert!(
        md.contains("bw8: runs 4, 5, 6 split requests into 896 one-block ones"),
        "{md}"
    );
    let json = std::fs::read_to_string(dir.join("report/report.json")).expect("json");
    assert!(
        json.contains("\"one_block_split\": {\n            \"runs\": [\n              4,"),
        "{json}"
    );
    let clean = report(&copy("results-emmc-cmd23", tmp.path()));
    assert!(!clean.contains("one-block"), "{clean}");
}

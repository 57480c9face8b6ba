//! End-to-end tests of `mmcab report` and `mmcab compare` on a fixed results dir
//! (tests/fixtures/results-loop: real fio measurements on a loop device, see
//! tests/fixtures/make-loop-results.py) and on the published reference numbers.
//!
//! Golden files: `UPDATE_GOLDEN=1 cargo test --test report` rewrites
//! tests/fixtures/results-loop.expected.txt and results/reference/<name>/ (text
//! and charts) from the current code; review the diff before committing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MAX_COLUMNS: usize = 72;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn mmcab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(args)
        // No calibration of the user's own boards takes part.
        .env("MMCAB_CALIBRATION_DIR", "/nonexistent/mmcab-calibration")
        .output()
        .expect("run mmcab")
}

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

/// A writable copy of a results dir fixture.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
}

fn fixture_copy(tmp: &Path, name: &str) -> PathBuf {
    let dir = tmp.join(name);
    copy_dir(&root().join("tests/fixtures/results-loop"), &dir);
    dir
}

fn assert_mail_text(text: &str) {
    for (i, line) in text.lines().enumerate() {
        assert!(
            line.len() <= MAX_COLUMNS,
            "line {} is {} columns (> {MAX_COLUMNS}): {line:?}",
            i + 1,
            line.len()
        );
        assert!(line.is_ascii(), "line {} is not ASCII: {line:?}", i + 1);
        assert_eq!(line, line.trim_end(), "trailing blanks on line {}", i + 1);
    }
}

fn golden(path: &Path, actual: &str) {
    if updating() {
        std::fs::write(path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}; create it with UPDATE_GOLDEN=1", path.display()));
    assert!(
        expected == actual,
        "mail text differs from {} (UPDATE_GOLDEN=1 to accept):\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

#[test]
fn report_mail_text_is_pinned_and_fits_a_mail() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = fixture_copy(tmp.path(), "results-loop");
    let out = mmcab(&["report", dir.to_str().expect("utf-8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_mail_text(&text);
    golden(
        &root().join("tests/fixtures/results-loop.expected.txt"),
        &text,
    );
    // The same text is written to the report dir, next to the other outputs.
    let report = dir.join("report");
    assert_eq!(
        std::fs::read_to_string(report.join("report.txt")).expect("report.txt"),
        text
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(report.to_str().expect("utf-8")), "{stderr}");
    for name in ["report.md", "summary.csv", "report.json"] {
        let len = std::fs::metadata(report.join(name)).expect(name).len();
        assert!(len > 500, "{name} is only {len} bytes");
    }
}

#[test]
fn summary_csv_is_tidy() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = fixture_copy(tmp.path(), "r");
    assert!(mmcab(&["report", dir.to_str().expect("utf-8")])
        .status
        .success());
    let csv = std::fs::read_to_string(dir.join("report/summary.csv")).expect("summary.csv");
    let mut lines = csv.lines();
    let header = lines.next().expect("header");
    assert!(
        header.starts_with("config,workload,direction,metric,unit,"),
        "{header}"
    );
    let rows: Vec<&str> = lines.collect();
    // 2 configs x 5 workloads x 4 metrics (mb_per_s, iops, lat_mean_us, lat_p99_us).
    assert_eq!(rows.len(), 40);
    let column = |name: &str| {
        header
            .split(',')
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}: {header}"))
    };
    let seq_write: Vec<&str> = rows
        .iter()
        .find(|r| r.starts_with("max-sectors-16k,seq-write,write,mb_per_s,"))
        .expect("seq-write row")
        .split(',')
        .collect();
    // p = 0.019 alone: slower; adjusted over the report's 20 tests (q = 0.127): not.
    let number = |name: &str| -> f64 { seq_write[column(name)].parse().expect(name) };
    assert!((number("p") - 0.019).abs() < 0.001, "{seq_write:?}");
    assert!((number("q") - 0.1268).abs() < 0.001, "{seq_write:?}");
    assert_eq!(seq_write[column("verdict")], "no significant change");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("report/report.json")).expect("json"),
    )
    .expect("valid JSON");
    assert_eq!(json["baseline"], "max-sectors-512k");
}

#[test]
fn report_baseline_option_is_checked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = fixture_copy(tmp.path(), "r");
    let d = dir.to_str().expect("utf-8");
    let out = mmcab(&["report", d, "--baseline", "max-sectors-16k"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("A = max-sectors-16k (baseline)"), "{text}");
    let out = mmcab(&["report", d, "--baseline", "nope"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nope") && err.contains("max-sectors-512k"),
        "{err}"
    );
}

#[test]
fn report_of_a_missing_dir_says_what_to_do() {
    let out = mmcab(&["report", "/nonexistent/results"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/results") && err.contains("mmcab run"),
        "{err}"
    );
}

fn set_meta(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("meta")).expect("json");
    edit(&mut meta);
    std::fs::write(&path, serde_json::to_string_pretty(&meta).expect("json")).expect("write");
}

#[test]
fn compare_labels_dirs_and_refuses_unlike_devices_or_plans() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = fixture_copy(tmp.path(), "a");
    let b = fixture_copy(tmp.path(), "b");
    set_meta(&a, |m| m["label"] = "v6.12".into());
    set_meta(&b, |m| {
        m["label"] = "v7.2".into();
        m["kernel_release"] = "7.2.0".into();
    });
    let (sa, sb) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let out = mmcab(&["compare", sa, sb]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_mail_text(&text);
    assert!(text.contains("v6.12/max-sectors-512k (A)"), "{text}");
    // Each config of B is compared with the same config of A.
    assert!(
        text.contains("v7.2/max-sectors-16k vs v6.12/max-sectors-16k: +0.0%"),
        "{text}"
    );
    assert!(text.contains("Kernels: v6.12 = 6.18"), "{text}");
    let out_dir = a.join("report/compare-v6-12-vs-v7-2");
    assert!(out_dir.join("report.txt").is_file());

    // Another plan: refused, then compared loudly with --force.
    set_meta(&b, |m| m["plan_sha256"] = "ffff".into());
    let out = mmcab(&["compare", sa, sb]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plan differs") && err.contains("--force"),
        "{err}"
    );
    let out = mmcab(&["compare", sa, sb, "--force"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("WARNING") && err.contains("plan differs"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("COMPARED WITH --force: plan differs"));

    // Another device: refused.
    set_meta(&b, |m| {
        m["plan_sha256"] = m_plan(&a).into();
        m["device_summary"] = "some other card".into();
    });
    let out = mmcab(&["compare", sa, sb]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("device summary differs"),
        "{err}"
    );
}

fn m_plan(dir: &Path) -> String {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).expect("meta"))
            .expect("json");
    meta["plan_sha256"].as_str().expect("sha").to_string()
}

/// Decode a PNG and check it is a real chart: big enough, mostly white, with ink in
/// several colours (bars/lines) and dark text.
fn check_png(path: &Path) {
    let img = image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8();
    let (w, h) = img.dimensions();
    assert!(w >= 600 && h >= 400, "{}: {w}x{h}", path.display());
    let total = (w * h) as usize;
    let ink = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
    let dark = img.pixels().filter(|p| p.0.iter().all(|c| *c < 80)).count();
    let mut colours: Vec<[u8; 3]> = img
        .pixels()
        .filter(|p| {
            let [r, g, b] = p.0;
            r.max(g).max(b) - r.min(g).min(b) > 60
        })
        .map(|p| p.0)
        .collect();
    colours.sort();
    colours.dedup();
    assert!(
        ink * 100 > total,
        "{}: almost blank ({ink} of {total})",
        path.display()
    );
    assert!(ink * 100 < total * 90, "{}: almost all ink", path.display());
    assert!(
        dark > 500,
        "{}: no text or axes ({dark} dark px)",
        path.display()
    );
    assert!(colours.len() >= 2, "{}: no coloured data", path.display());
}

#[test]
fn every_chart_kind_renders_png_and_svg() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = fixture_copy(tmp.path(), "r");
    assert!(mmcab(&["report", dir.to_str().expect("utf-8")])
        .status
        .success());
    let report = dir.join("report");
    for kind in ["bars-", "throughput-", "latency-cdf-", "sweep-"] {
        let pngs: Vec<PathBuf> = std::fs::read_dir(&report)
            .expect("report dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                let name = p.file_name().expect("name").to_string_lossy().into_owned();
                name.starts_with(kind) && name.ends_with(".png")
            })
            .collect();
        assert!(!pngs.is_empty(), "no {kind}*.png in {}", report.display());
        for png in pngs {
            check_png(&png);
            let svg = std::fs::read_to_string(png.with_extension("svg")).expect("svg");
            assert!(
                svg.contains("<svg") && svg.contains("<text"),
                "{}",
                png.display()
            );
        }
    }
}

/// results/reference/<name>.csv -> results/reference/<name>/ (text + charts).
#[test]
fn reference_reports_reproduce_the_published_tables() {
    let dir = root().join("results/reference");
    let mut csvs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("results/reference")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    csvs.sort();
    assert_eq!(csvs.len(), 3, "one CSV per seed post");
    let tmp = tempfile::tempdir().expect("tempdir");
    for csv in csvs {
        let stem = csv
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let committed = dir.join(&stem);
        // Report a copy in a scratch dir (the committed one is only rewritten when
        // updating), then compare its text with the committed report.txt.
        let source = if updating() {
            csv.clone()
        } else {
            let copy = tmp.path().join(csv.file_name().expect("name"));
            std::fs::copy(&csv, &copy).expect("copy csv");
            copy
        };
        let out = mmcab(&["report", source.to_str().expect("utf-8")]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_mail_text(&text);
        assert!(
            !text.contains("p ="),
            "published values get no p-value:\n{text}"
        );
        golden(&committed.join("report.txt"), &text);
        let out_dir = source.with_extension("");
        assert_eq!(
            std::fs::read_to_string(out_dir.join("report.txt")).expect("report.txt"),
            text
        );
        let pngs = std::fs::read_dir(&out_dir)
            .expect("reference report dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "png"))
            .collect::<Vec<_>>();
        assert!(!pngs.is_empty(), "{stem}: no chart");
        for png in pngs {
            check_png(&png);
        }
    }
}

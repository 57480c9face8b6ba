//! End-to-end tests of `mmcab report` and `mmcab compare` on a fixed results dir
//! (tests/fixtures/results-loop: real fio measurements on a loop device, see
//! tests/fixtures/make-loop-results.py) and on the published reference numbers.
//!
//! Golden files: `UPDATE_GOLDEN=1 cargo test --test plain report::` rewrites
//! tests/fixtures/results-loop.expected.txt and results/reference/<name>/ (text
//! and charts) where the current code writes them otherwise, and fails naming them
//! (tests/common/golden.rs); review the diff before committing, then run again without it.

use crate::common::charts;
use crate::common::cli;
use crate::common::golden::{read_dir, Goldens};

use charts::check_png;
use cli::{assert_mail_text, mmcab, root};
use std::path::{Path, PathBuf};

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
    let mut goldens = Goldens::new("the mail text");
    goldens.text(
        &root().join("tests/fixtures/results-loop.expected.txt"),
        &text,
    );
    goldens.finish();
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
    // p = 0.019 alone: slower; adjusted over the report's 20 tests (q = 0.127): not.
    let number = |name: &str| -> f64 { seq_write_cell(&csv, name).parse().expect(name) };
    assert!((number("p") - 0.019).abs() < 0.001, "{csv}");
    assert!((number("q") - 0.1268).abs() < 0.001, "{csv}");
    assert_eq!(seq_write_cell(&csv, "verdict"), "no significant change");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("report/report.json")).expect("json"),
    )
    .expect("valid JSON");
    assert_eq!(json["baseline"], "max-sectors-512k");
}

/// The `name` column of summary.csv's max-sectors-16k seq-write MB/s row.
fn seq_write_cell(csv: &str, name: &str) -> String {
    let header = csv.lines().next().expect("header");
    let column = header
        .split(',')
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name}: {header}"));
    let row = csv
        .lines()
        .find(|r| r.starts_with("max-sectors-16k,seq-write,write,mb_per_s,"))
        .expect("seq-write row");
    row.split(',').nth(column).expect("cell").to_string()
}

/// `--correction holm` controls the family-wise error rate instead: the report says so,
/// and no q is below Benjamini-Hochberg's for the same test (Holm is the stricter one).
#[test]
fn holm_is_said_and_never_less_strict_than_benjamini_hochberg() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let q_of = |args: &[&str], name: &str| -> (String, f64) {
        let dir = fixture_copy(tmp.path(), name);
        let d = dir.to_str().expect("utf-8");
        let out = mmcab(&[&["report", d][..], args].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let csv = std::fs::read_to_string(dir.join("report/summary.csv")).expect("csv");
        (
            String::from_utf8(out.stdout).expect("utf-8"),
            seq_write_cell(&csv, "q").parse().expect("q"),
        )
    };
    let (bh_text, bh) = q_of(&[], "bh");
    let (holm_text, holm) = q_of(&["--correction", "holm"], "holm");
    assert!(bh_text.contains("Benjamini-Hochberg"), "{bh_text}");
    assert!(
        holm_text.contains("Holm") && holm_text.contains("family-wise error rate 5%"),
        "{holm_text}"
    );
    assert!(holm >= bh && holm > 0.019, "holm q {holm}, BH q {bh}");
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

/// results/reference/<name>.csv -> results/reference/<name>/ (text + charts): every file
/// of the committed directory is what the current code writes.
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
    let mut goldens = Goldens::new("the reference reports");
    for csv in csvs {
        let stem = csv
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let committed = dir.join(&stem);
        // Report a copy in a scratch dir, then compare what it wrote with the committed
        // directory (rewritten, and failing, with UPDATE_GOLDEN).
        let source = tmp.path().join(csv.file_name().expect("name"));
        std::fs::copy(&csv, &source).expect("copy csv");
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
        goldens.dir(&committed, &read_dir(&out_dir));
    }
    goldens.finish();
}

/// The loop fixture with `configs` configs: the first one only, both, or a third one
/// made of the second's runs at 1.3 times its throughput (runs renumbered).
fn with_configs(tmp: &Path, configs: usize) -> PathBuf {
    let dir = fixture_copy(tmp, &format!("configs-{configs}"));
    let (a, b, c) = ("max-sectors-512k", "max-sectors-16k", "max-sectors-64k");
    for file in ["runs.csv", "series.csv", "latency.csv"] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).expect("csv");
        let mut lines = text.lines();
        let header = lines.next().expect("header");
        let cols: Vec<&str> = header.split(',').collect();
        let config = cols
            .iter()
            .position(|c| *c == "config")
            .expect("config column");
        let scaled: Vec<usize> = ["mb_per_s", "iops"]
            .iter()
            .filter_map(|k| cols.iter().position(|c| c == k))
            .collect();
        let mut out = vec![header.to_string()];
        for line in lines {
            let mut cells: Vec<String> = line.split(',').map(String::from).collect();
            if configs == 1 && cells[config] != a {
                continue;
            }
            out.push(cells.join(","));
            if configs == 3 && cells[config] == b {
                cells[config] = c.to_string();
                cells[0] = (cells[0].parse::<u32>().expect("run") + 1000).to_string();
                for &i in &scaled {
                    cells[i] = (cells[i].parse::<f64>().expect("number") * 1.3).to_string();
                }
                out.push(cells.join(","));
            }
        }
        std::fs::write(&path, out.join("\n") + "\n").expect("write");
    }
    set_meta(&dir, |m| {
        let configs_json = m["configs"].as_array_mut().expect("configs");
        if configs == 1 {
            configs_json.truncate(1);
        } else if configs == 3 {
            let mut third = configs_json[1].clone();
            third["name"] = c.into();
            configs_json.push(third);
        }
    });
    dir
}

/// Columns (x) of the first panel of a bar chart where each config's colour is drawn
/// below the legend: the bars' extents.
fn bar_extents(png: &Path, colours: usize) -> Vec<(u32, u32)> {
    const PALETTE: [[u8; 3]; 3] = [[0, 114, 178], [230, 159, 0], [0, 158, 115]];
    let img = image::open(png).expect("png").to_rgb8();
    let (w, h) = img.dimensions();
    let panel = w.min(440);
    PALETTE[..colours]
        .iter()
        .map(|c| {
            let xs: Vec<u32> = (0..panel)
                .filter(|&x| (80..h - 60).any(|y| img.get_pixel(x, y).0 == *c))
                .collect();
            assert!(!xs.is_empty(), "{}: no bar in colour {c:?}", png.display());
            (xs[0], xs[xs.len() - 1])
        })
        .collect()
}

/// Bar charts with one, two and three configs: each bar stands clear of the y axis, is
/// of a normal width, and no two overlap (one config drew its bar against the axis,
/// over the tick labels, before).
#[test]
fn bar_charts_are_legible_for_one_two_and_three_configs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for configs in [1, 2, 3] {
        let dir = with_configs(tmp.path(), configs);
        let out = mmcab(&["report", dir.to_str().expect("utf-8")]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let png = dir.join("report/bars-iops.png");
        check_png(&png);
        let bars = bar_extents(&png, configs);
        // The y axis of the first panel is at about x = 82 (8 px margin, 74 px of labels
        // for 5-digit IOPS); its plot ends at about 432.
        for (lo, hi) in &bars {
            assert!(
                *lo > 95,
                "{configs} configs: a bar starts at x = {lo}, on the y axis"
            );
            assert!(
                (30..=130).contains(&(hi - lo)),
                "{configs} configs: a bar {} px wide",
                hi - lo
            );
        }
        if configs == 1 {
            let centre = (bars[0].0 + bars[0].1) / 2;
            assert!(centre.abs_diff(257) < 40, "one bar off centre: {bars:?}");
        }
        for pair in bars.windows(2) {
            assert!(
                pair[0].1 < pair[1].0,
                "{configs} configs: bars overlap: {bars:?}"
            );
        }
    }
}

/// A writable copy of the emulated eMMC's results dir (tests/fixtures/results-emmc-cmd23)
/// whose meta.json records the host's driver as `mmcab info` reads it now: a module
/// with a version and parameters (made up for the test: the fixture predates the
/// record).
fn emmc_with_host_driver(tmp: &Path, name: &str, cmd_ns: &str) -> PathBuf {
    let dir = tmp.join(name);
    copy_dir(&root().join("tests/fixtures/results-emmc-cmd23"), &dir);
    set_meta(&dir, |m| {
        m["label"] = name.into();
        m["device"]["host_driver"] = serde_json::json!({
            "builtin": false,
            "device": "simhost.0",
            "driver": "simhost",
            "module": "simhost",
            "parameters": {"cmd_ns": cmd_ns, "seed": "1"},
            "srcversion": "0123456789ABCDEF0123456",
            "version": "1.0",
        });
    });
    dir
}

/// The host's driver recorded in meta.json is named in every report's header: one line
/// after the kernel in the mail text, the module's parameters in full in report.md and
/// report.json. (Without the record, the pinned reports of the fixtures show none.)
#[test]
fn report_names_the_host_driver_recorded_in_meta_json() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = emmc_with_host_driver(tmp.path(), "r", "500");
    let text = cli::ok(mmcab(&["report", dir.to_str().expect("utf-8")]));
    assert_mail_text(&text);
    assert!(
        text.contains(
            "\nKernel: 7.2.13+deb14-armmp (label r)\n\
             Host: mmc0, driver simhost (module simhost 1.0)\nPlan: cmd23-ab,"
        ),
        "{text}"
    );
    assert!(
        !text.contains("cmd_ns"),
        "parameters stay out of the mail: {text}"
    );
    let md = std::fs::read_to_string(dir.join("report/report.md")).expect("report.md");
    assert!(
        md.contains(
            "- **Host:** mmc0, driver simhost (module simhost 1.0)\n\
             - **Plan:** cmd23-ab,"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "- **Host driver parameters** (simhost, module simhost 1.0, srcversion \
             0123456789ABCDEF0123456):\n  - `cmd_ns` = 500\n  - `seed` = 1\n"
        ),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("report/report.json")).expect("report.json"),
    )
    .expect("valid JSON");
    assert_eq!(json["hosts"][0]["host"], "mmc0");
    assert_eq!(json["hosts"][0]["driver"]["parameters"]["cmd_ns"], "500");
    assert_eq!(
        json["header"][2],
        serde_json::json!(["Host", "mmc0, driver simhost (module simhost 1.0)"])
    );
}

/// Other module parameters on the two sides are what an A/B of a driver parameter is:
/// compared (no --force), with a warning listing them and a header naming each side's.
#[test]
fn compare_warns_about_other_host_driver_parameters() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = emmc_with_host_driver(tmp.path(), "fast", "500");
    let b = emmc_with_host_driver(tmp.path(), "slow", "900");
    let out = mmcab(&[
        "compare",
        a.to_str().expect("utf-8"),
        b.to_str().expect("utf-8"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = cli::ok(out);
    assert_mail_text(&text);
    assert!(
        err.contains(
            "mmcab: warning: host driver module parameters differ from fast to slow: \
             cmd_ns 500 -> 900 (compared all the same)"
        ),
        "{err}"
    );
    assert!(!err.contains("WARNING"), "not a --force difference: {err}");
    assert!(
        text.contains(
            "Hosts: fast = mmc0, driver simhost (module simhost 1.0); slow = the same\n        but cmd_ns=900\n"
        ),
        "{text}"
    );
}

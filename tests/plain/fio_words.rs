//! One fio vocabulary. For every shipped plan (workloads/*.toml,
//! tests/fixtures/plans/*.toml) and every plan recorded in a results directory under
//! tests/fixtures (its meta.json `plan_text`, at its `--scale-down`), and for every job:
//! the parameters the report shows (`report::load::what_ran`, the setup section of the mail text,
//! report.md and report.json) are the `key=value` lines `mmcab export fio` writes for it
//! (the report writes sizes and times short, `4k` and `10s`, the job file in bytes and
//! milliseconds: the same values as fio reads them, `kb_base=1024`), and the job file's
//! comments on what fio cannot do are in the report's note naming the job's workload. fio accepts each exported job file
//! and a job file of the report's words (`fio --parse-only`, with `TARGET` set for the
//! export's `filename=${TARGET}`); without fio installed that part is skipped, saying
//! SKIPPED (in CI a missing fio fails: tests/common/tool.rs).
//!
//! iozone jobs (`rw = "iozone"`) are shown as iozone's command line and exported as
//! one fio job per pass: they are only checked to be there.

use crate::common::tool;
use mmcab::export::fio::{job_file, FioOptions};
use mmcab::plan::spec::Plan;
use mmcab::report::load::what_ran::{job_params, workloads};
use mmcab::report::render::setup::{job_words, workload_lines};
use mmcab::workload::engine::job::scaled;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every plan to check: (where from, plan text, --scale-down).
fn plans() -> Vec<(String, String, u32)> {
    let mut plans = Vec::new();
    for dir in ["workloads", "tests/fixtures/plans"] {
        for path in files(&root().join(dir)) {
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).expect("plan");
                // mmc_test's workloads have no fio form: the export refuses them
                // (src/export/fio.rs's tests).
                let plan: Plan = text.parse().expect("plan");
                if plan.workload.iter().any(|w| w.uses_mmc_test()) {
                    continue;
                }
                plans.push((path.display().to_string(), text, 1));
            }
        }
    }
    let fixtures = root().join("tests/fixtures");
    let boots = files(&fixtures.join("boots"));
    for dir in files(&fixtures).into_iter().chain(boots) {
        let meta = dir.join("meta.json");
        if !meta.is_file() {
            continue;
        }
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&meta).expect("meta")).expect("json");
        let text = meta["plan_text"].as_str().unwrap_or_default();
        // results-loop's meta.json (fio's runs, not mmcab's) records no plan.
        if text.parse::<Plan>().is_ok() {
            let scale = meta["scale_down"].as_u64().unwrap_or(1) as u32;
            plans.push((dir.display().to_string(), text.to_string(), scale));
        }
    }
    assert!(plans.len() >= 8 + 5, "{} plans", plans.len());
    plans
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    paths
}

/// A job section of a job file: its `key=value` lines (not `stonewall`) and comments.
#[derive(Default, Debug)]
struct Section {
    options: Vec<String>,
    comments: Vec<String>,
}

fn sections(job_file: &str) -> BTreeMap<String, Section> {
    let mut out: BTreeMap<String, Section> = BTreeMap::new();
    let mut current = None;
    for line in job_file.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            continue;
        }
        if line.starts_with("; --- workload ") {
            // The workload's own comments follow, up to its first job.
            current = None;
        }
        let Some(section) = current.as_ref().and_then(|c| out.get_mut(c)) else {
            continue;
        };
        if let Some(comment) = line.strip_prefix("; ") {
            section.comments.push(comment.to_string());
        } else if !line.is_empty() && line != "stonewall" {
            section.options.push(line.to_string());
        }
    }
    out
}

/// A `key=value` of the report in the job file's form: `4k` as 4096, `10s` as 10000ms.
fn exact(pair: &str) -> String {
    let (key, value) = pair.split_once('=').unwrap_or_else(|| panic!("{pair}"));
    let size = regex::Regex::new(r"^(\d+)([kMG])$").unwrap();
    let seconds = regex::Regex::new(r"^(\d+)s$").unwrap();
    let value = if let Some(c) = size.captures(value) {
        let shift = match &c[2] {
            "k" => 10,
            "M" => 20,
            _ => 30,
        };
        (c[1].parse::<u64>().unwrap() << shift).to_string()
    } else if let Some(c) = seconds.captures(value) {
        format!("{}ms", c[1].parse::<u64>().unwrap() * 1000)
    } else {
        value.to_string()
    };
    format!("{key}={value}")
}

/// Checks one plan; returns its exported job file and a job file of the report's words.
fn check_plan(from: &str, text: &str, scale: u32) -> (String, String) {
    let plan: Plan = text.parse().unwrap_or_else(|e| panic!("{from}: {e}"));
    let opts = FioOptions {
        scale_down: scale,
        ..Default::default()
    };
    let exported = job_file(&plan, from, &opts).expect("export");
    let exported_sections = sections(&exported);
    let names: Vec<String> = plan.workload.iter().map(|w| w.name.clone()).collect();
    let lines = workload_lines(&workloads(&plan, &names, scale));
    let mut words_file = String::from("[global]\nfilename=${TARGET}\n");
    for (workload, line) in plan.workload.iter().zip(&lines) {
        for job in workload.job.iter().map(|j| scaled(j, scale)) {
            let words = job_words(&job_params(&job));
            let at = format!("{from}: {}.{}", workload.name, job.name);
            assert!(
                line.contains(&format!("{}: {words}", job.name)),
                "{at}: {line}"
            );
            if job.rw.is_iozone() {
                assert!(words.starts_with("iozone "), "{at}: {words}");
                let pass = format!("{}.{}.read", workload.name, job.name);
                assert!(exported_sections.contains_key(&pass), "{at}: {exported}");
                continue;
            }
            let section = exported_sections
                .get(&format!("{}.{}", workload.name, job.name))
                .unwrap_or_else(|| panic!("{at}: no section in\n{exported}"));
            let shown: Vec<String> = words.split(' ').map(exact).collect();
            assert_eq!(shown, section.options, "{at}: the report shows {words}");
            for comment in &section.comments {
                let said = lines[names.len()..].iter().any(|note| {
                    let (about, text) = note.split_once(": ").expect("names: note");
                    about.split(", ").any(|n| n == workload.name) && text.contains(comment)
                });
                assert!(said, "{at}: '{comment}' not said for it in {lines:#?}");
            }
            words_file.push_str(&format!("[{}.{}]\n", workload.name, job.name));
            for pair in words.split(' ') {
                words_file.push_str(&format!("{pair}\n"));
            }
        }
    }
    (exported, words_file)
}

/// `fio --parse-only FILE` with TARGET set.
fn fio_parses(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write job file");
    let out = Command::new("fio")
        .arg("--parse-only")
        .arg(&path)
        .env("TARGET", dir.join("target"))
        .output()
        .unwrap_or_else(|e| panic!("fio: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() && stderr.trim().is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {stderr}\n{text}", out.status))
    }
}

#[test]
fn the_report_shows_the_options_the_fio_export_writes_and_fio_reads_both() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let fio = tool::need("fio", "apt-get install fio");
    for (i, (from, text, scale)) in plans().into_iter().enumerate() {
        let (exported, words) = check_plan(&from, &text, scale);
        if !fio {
            continue;
        }
        for (kind, file) in [("export", &exported), ("report-words", &words)] {
            fio_parses(tmp.path(), &format!("{i}-{kind}.fio"), file)
                .unwrap_or_else(|e| panic!("{from}: fio refuses the {kind}: {e}"));
        }
    }
}

//! The fidelity tests' helpers: a job's direction in `mmcab run --json` and the mixed
//! plan with and without a shared window (tests/plain/fidelity.rs, tier 1, and
//! tests/host/fidelity.rs, tier 2), and the check that a throughput chart's bins
//! integrate to runs.csv (tests/plain/fidelity.rs and tests/guest/fidelity.rs, tier 3).

use std::path::Path;

/// (ops, seconds) of `job`'s `direction` in the first workload of `mmcab run --json`.
pub fn job_dir(v: &serde_json::Value, job: &str, direction: &str) -> (u64, f64) {
    let jobs = v["workloads"][0]["jobs"].as_array().unwrap();
    let j = jobs
        .iter()
        .find(|j| j["job"] == job)
        .unwrap_or_else(|| panic!("no job {job}: {v}"));
    let d = j["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == direction)
        .unwrap();
    (d["ops"].as_u64().unwrap(), d["seconds"].as_f64().unwrap())
}

pub const MIXED: &str = r#"
name = "mixed"
[[workload]]
name = "short-read-long-write"
WINDOW
[[workload.job]]
name = "read"
rw = "randread"
size = "1MiB"
io_size = "64KiB"
direct = false
[[workload.job]]
name = "write"
rw = "write"
bs = "64KiB"
offset = "1MiB"
size = "64MiB"
direct = false
end_fsync = true
"#;

/// The throughput bins of each measured write run (group rows, or the only job's)
/// integrate to the run's MB/s in runs.csv: the chart reflects the data. Each run has
/// `min_bins` bins or more (0.1 s each at the finest), so the check is not trivial.
pub fn bins_match_runs(dir: &Path, workload: &str, min_bins: usize) -> usize {
    let runs: Vec<mmcab::record::RunRow> =
        mmcab::record::writer::read_csv(&dir.join("runs.csv")).unwrap();
    let series: Vec<mmcab::record::SeriesRow> =
        mmcab::record::writer::read_rows(&dir.join("series.csv")).unwrap();
    let mut checked = 0;
    for r in runs.iter().filter(|r| {
        r.workload == workload
            && r.job == mmcab::record::GROUP_JOB
            && r.direction.as_str() == "write"
    }) {
        let bins: Vec<&mmcab::record::SeriesRow> = series
            .iter()
            .filter(|s| s.run == r.run && s.job == r.job && s.direction == r.direction)
            .collect();
        let (bytes, seconds) = bins.iter().fold((0.0, 0.0), |(b, t), s| {
            let (_, w) = s.bin();
            (b + s.mb_per_s * w, t + w)
        });
        assert!(
            (bytes / seconds - r.mb_per_s).abs() <= 0.01 * r.mb_per_s,
            "run {}: bins say {} MB/s over {seconds} s, runs.csv {} MB/s over {} s",
            r.run,
            bytes / seconds,
            r.mb_per_s,
            r.seconds
        );
        assert!(bins.len() >= min_bins, "run {}: {} bins", r.run, bins.len());
        checked += 1;
    }
    checked
}

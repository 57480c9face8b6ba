//! Where a report goes and what its files are called.

use std::path::{Path, PathBuf};

/// Name of the report directory inside a results dir.
pub const REPORT_DIR: &str = "report";
pub const TEXT_FILE: &str = "report.txt";
pub const MARKDOWN_FILE: &str = "report.md";
pub const SUMMARY_CSV: &str = "summary.csv";
pub const JSON_FILE: &str = "report.json";

/// The files of a report of results (`Written::files`).
pub const RESULTS_FILES: &str =
    "report.txt, report.md, summary.csv, report.json, charts *.svg/*.png";
/// The files of a probe's report.
pub const PROBE_FILES: &str = "report.txt, charts *.svg/*.png";

/// Output directory for a report of `dir`.
pub fn report_dir(dir: &Path) -> PathBuf {
    dir.join(REPORT_DIR)
}

/// `results/reference/X.csv` -> `results/reference/X/`.
pub fn default_out_dir(csv: &Path) -> PathBuf {
    let stem = csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "reference".into());
    csv.with_file_name(stem)
}

/// File-name-safe form of a name.
pub fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').to_string()
}

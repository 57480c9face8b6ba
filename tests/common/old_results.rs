//! The results directories mmcab 0.1.0 recorded (tests/fixtures/results-v0.1-emmc-*):
//! writable copies of them and reading their files, for tests/plain/old_results.rs
//! (tier 1) and tests/guest/old_results.rs (tier 3).

use std::path::{Path, PathBuf};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A writable copy of `results-v0.1-emmc-<boot>` under `tmp` (the report is written
/// into the results directory).
pub fn copy_fixture(tmp: &Path, boot: &str) -> PathBuf {
    let from = fixtures().join(format!("results-v0.1-emmc-{boot}"));
    let to = tmp.join(format!("results-v0.1-emmc-{boot}"));
    assert_eq!(
        copy_files(&from, &to),
        5,
        "{}: runs, series, latency, meta, restore.sh",
        from.display()
    );
    to
}

/// Copies the files of a results directory (not the report subdirectory); how many.
pub fn copy_files(from: &Path, to: &Path) -> usize {
    std::fs::create_dir_all(to).expect("mkdir");
    let mut copied = 0;
    for entry in std::fs::read_dir(from).expect("read results dir") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
            copied += 1;
        }
    }
    copied
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

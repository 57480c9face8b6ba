//! End-to-end tests of `mmcab run` (the workload engine) on real loop devices over
//! files in /dev/shm, and on regular files. The loop-device tests need root and are
//! ignored in plain `cargo test` (`scripts/test-all` runs them). Every loop device and
//! mount is undone in Drop, also when a test fails. Nothing here touches the machine's
//! disks.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/host/engine.rs.

use crate::common::engine::{dir_of, job, run_json, u, workload, write_plan};
use std::fs;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// A regular file needs no root: this one runs in plain `cargo test`.
#[test]
fn a_new_file_is_created_sized_and_written_by_both_engines() {
    // A new file in /dev/shm (tmpfs has no O_DIRECT: buffered).
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = dir.path().join("target.img");
    let plan = r#"
name = "files"
[[workload]]
name = "w"
[[workload.job]]
name = "w"
rw = "randwrite"
size = "2M"
offset = "1M"
direct = false
fsync = 8
end_fsync = true
[[workload]]
name = "u"
[[workload.job]]
name = "u"
rw = "randwrite"
size = "2M"
direct = false
engine = "io_uring"
iodepth = 8
fsync = 5
end_fsync = true
"#;
    let v = run_json(plan, &file, &[]);
    assert_eq!(
        u(&dir_of(job(workload(&v, "w"), "w"), "write")["bytes"]),
        2 * MIB
    );
    assert_eq!(u(&dir_of(job(workload(&v, "u"), "u"), "write")["ops"]), 512);
    assert_eq!(
        fs::metadata(&file).unwrap().len(),
        3 * MIB,
        "file created and sized by mmcab"
    );
}

/// Laying out a new file target fails part way (the file size limit: EFBIG): one line
/// naming the operation, the offset, the file and the errno, exit status 4, as for an
/// I/O of the run itself.
#[test]
fn a_layout_write_that_fails_is_an_io_error_with_its_offset() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = dir.path().join("target.img");
    let plan = write_plan(
        dir.path(),
        "name = \"layout\"\n[[workload]]\nname = \"r\"\n[[workload.job]]\nname = \"r\"\n\
         rw = \"read\"\nsize = \"4M\"\ndirect = false\n",
    );
    // At most 1024 blocks per file (512 KiB in dash, 1 MiB in bash); SIGXFSZ ignored,
    // so the write past the limit fails with EFBIG instead of killing the process.
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 1024; trap '' XFSZ; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_mmcab"))
        .arg("run")
        .arg(&plan)
        .arg("--device")
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let line = stderr.lines().last().unwrap_or_default();
    let at = fs::metadata(&file).unwrap().len();
    assert!(at > 0 && at < 4 * MIB, "{at}");
    assert!(
        line.starts_with("mmcab: error: workload 'r': layout write of ")
            && line.ends_with(&format!(
                " bytes at offset {at} (sector {}) on {} failed: EFBIG (File too large) [job 'r']",
                at / 512,
                file.display()
            )),
        "{stderr}"
    );
}

//! End-to-end tests of `mmcab run` (the A/B runner) on real loop devices over files in
//! /dev/shm, with custom knobs whose restore is observable: a real sysfs attribute of the
//! loop device (`queue/read_ahead_kb`) and a command knob that keeps its state in a file.
//! The loop-device tests need root (losetup) and are ignored in plain `cargo test`; the
//! loop devices are detached by a Drop guard.
//!
//! This file holds the tests that need root or testbed/setup's tools on the host, no
//! guest (tier 2); the others are in tests/plain/runner.rs.

use crate::common::loop_device;
use crate::common::runner::plan;
use crate::common::watch::{Gate, Watched};
use loop_device::LoopDevice;
use mmcab::record::{Meta, RunRow, GROUP_JOB};
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MMCAB: &str = env!("CARGO_BIN_EXE_mmcab");

/// `queue/read_ahead_kb` of the loop device: a real sysfs attribute the tests switch.
fn read_ahead_path(dev: &LoopDevice) -> PathBuf {
    PathBuf::from(format!("/sys/block/{}/queue/read_ahead_kb", dev.name()))
}

fn read_ahead(dev: &LoopDevice) -> String {
    std::fs::read_to_string(read_ahead_path(dev))
        .unwrap()
        .trim()
        .to_string()
}

fn runs(dir: &Path) -> Vec<RunRow> {
    let mut reader = csv::Reader::from_path(dir.join("runs.csv")).unwrap();
    reader.deserialize().map(|r| r.unwrap()).collect()
}

fn group_runs(dir: &Path) -> BTreeMap<u32, RunRow> {
    let mut out = BTreeMap::new();
    for row in runs(dir).into_iter().filter(|r| r.job == GROUP_JOB) {
        assert!(out.insert(row.run, row).is_none(), "a run recorded twice");
    }
    out
}

#[test]
#[ignore = "needs root: loop devices"]
fn a_full_run_records_every_run_and_restores_knobs() {
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "orig\n").unwrap();
    let before = read_ahead(&dev);
    let plan = plan(dir.path(), &marker, 2, "100ms");
    let out_dir = dir.path().join("res");
    let out = Command::new(MMCAB)
        .arg("run")
        .arg(&plan)
        .arg("--device")
        .arg(&dev.dev)
        .arg("--out")
        .arg(&out_dir)
        .arg("--label")
        .arg("loop-test")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let groups = group_runs(&out_dir);
    assert_eq!(groups.keys().copied().collect::<Vec<_>>(), [1, 2, 3, 4]);
    let configs: Vec<&str> = groups.values().map(|r| r.config.as_str()).collect();
    assert_eq!(configs, ["A", "B", "A", "B"], "interleaved");
    assert!(groups
        .values()
        .all(|r| r.label == "loop-test" && r.iops > 0.0 && r.bytes > 0));
    assert_eq!(read_ahead(&dev), before, "read_ahead_kb restored");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
    let meta: Meta =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("meta.json")).unwrap()).unwrap();
    assert!(meta.finished_unix_s.is_some());
    assert_eq!(meta.configs[1].knobs["read-ahead"], "512");
    assert_eq!(meta.label, "loop-test");
    assert_eq!(meta.plan_sha256.len(), 64);
    let restore = std::fs::read_to_string(out_dir.join("restore.sh")).unwrap();
    assert!(
        restore.contains(&format!(
            "echo {before} > {}",
            read_ahead_path(&dev).display()
        )),
        "{restore}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("mean_mb_per_s"));
}

/// Start a run, wait until `finished` runs are in runs.csv, send SIGTERM, wait for exit.
fn interrupt(plan: &Path, dev: &LoopDevice, out_dir: &Path, finished: usize) -> i32 {
    let child = start_and_wait(plan, dev, out_dir, finished);
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let (status, stderr) = child.finish();
    assert!(stderr.contains("--resume"), "{stderr}");
    status.code().expect("mmcab handled the signal and exited")
}

/// Start a run and return once `finished` runs are in runs.csv: mmcab says `run N/...`
/// once run N is recorded there.
fn start_and_wait(plan: &Path, dev: &LoopDevice, out_dir: &Path, finished: usize) -> Watched {
    let mut child = Watched::spawn(
        Command::new(MMCAB)
            .arg("run")
            .arg(plan)
            .arg("--device")
            .arg(&dev.dev)
            .arg("--out")
            .arg(out_dir)
            .args(["--scale-down", "2"])
            .stdout(Stdio::null()),
    );
    let done = format!("run {finished}/");
    child.wait_for(&format!("run {finished} done"), |l| l.starts_with(&done));
    child
}

/// [`plan`] with the marker knob's `apply` (and a `restore`) as given: `{value}` is the
/// value, `{m}` the marker file.
fn plan_with(dir: &Path, marker: &Path, repetitions: u32, apply: &str, restore: &str) -> PathBuf {
    let path = plan(dir, marker, repetitions, "300ms");
    let text = std::fs::read_to_string(&path).unwrap();
    let m = marker.display().to_string();
    let was = format!("apply = \"echo {{value}} > {m}\"\n");
    assert!(text.contains(&was), "{text}");
    let now = format!(
        "apply = \"{}\"\nrestore = \"{}\"\n",
        apply.replace("{m}", &m),
        restore.replace("{m}", &m)
    );
    std::fs::write(&path, text.replace(&was, &now)).unwrap();
    path
}

/// A run killed while it applies config B's knobs (SIGKILL, from the marker knob's apply
/// command: no restore) and then resumed: the resume restores the values from before the
/// first start, which meta.json recorded, not the ones the killed run left, and keeps the
/// first start's restore.sh.
#[test]
#[ignore = "needs root: loop devices"]
fn resume_after_sigkill_restores_the_knobs_as_they_were_before_the_first_start() {
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "orig\n").unwrap();
    let before = read_ahead(&dev);
    // Run 2 is config B's (interleaved): the marker knob's apply of b kills mmcab once,
    // with b written (`armed` is gone after that, so the resume runs on).
    let armed = dir.path().join("armed");
    std::fs::write(&armed, "").unwrap();
    let apply = format!(
        "echo {{value}} > {{m}}; if [ {{value}} = b ] && rm {} 2>/dev/null; then kill -KILL $PPID; fi",
        armed.display()
    );
    let plan = plan_with(dir.path(), &marker, 4, &apply, "echo {value} > {m}");
    let out_dir = dir.path().join("res");
    let killed = Watched::spawn(
        Command::new(MMCAB)
            .arg("run")
            .arg(&plan)
            .arg("--device")
            .arg(&dev.dev)
            .arg("--out")
            .arg(&out_dir)
            .args(["--scale-down", "2"])
            .stdout(Stdio::null()),
    );
    let (status, stderr) = killed.finish();
    assert_eq!(status.signal(), Some(9), "killed by its knob: {stderr}");
    assert!(!armed.exists());
    assert_eq!(group_runs(&out_dir).len(), 1, "killed in run 2's knobs");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "b");
    // read-ahead is A's (run 1) or already B's, as the knobs' order has it: not as before.
    let left = read_ahead(&dev);
    assert!(left == "256" || left == "512", "{left}");
    assert_ne!(left, before, "the killed run left read-ahead changed");
    let restore_sh = std::fs::read_to_string(out_dir.join("restore.sh")).unwrap();
    let meta: Meta =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("meta.json")).unwrap()).unwrap();
    let originals = meta.knob_originals.expect("knob originals recorded");
    assert_eq!(originals["read-ahead"], before);
    assert_eq!(originals["marker"], "orig");

    let out = Command::new(MMCAB)
        .arg("run")
        .arg("--resume")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(group_runs(&out_dir).len(), 8);
    assert_eq!(
        read_ahead(&dev),
        before,
        "restored to before the first start"
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
    assert_eq!(
        std::fs::read_to_string(out_dir.join("restore.sh")).unwrap(),
        restore_sh,
        "restore.sh of the first start kept"
    );
    assert!(restore_sh.contains(&format!(
        "echo {before} > {}",
        read_ahead_path(&dev).display()
    )));
}

#[test]
#[ignore = "needs root: loop devices"]
fn sigterm_mid_run_restores_knobs_and_resume_completes_the_matrix() {
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "orig\n").unwrap();
    let before = read_ahead(&dev);
    let plan = plan(dir.path(), &marker, 4, "300ms");
    let out_dir = dir.path().join("res");
    let code = interrupt(&plan, &dev, &out_dir, 2);
    assert_eq!(code, 128 + 15);
    assert_eq!(
        read_ahead(&dev),
        before,
        "read_ahead_kb restored after SIGTERM"
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
    let first = group_runs(&out_dir);
    assert!(first.len() >= 2 && first.len() < 8, "{} runs", first.len());
    assert_eq!(
        first.keys().copied().collect::<Vec<_>>(),
        (1..=first.len() as u32).collect::<Vec<_>>()
    );

    let refused = Command::new(MMCAB)
        .args(["run", "--scale-down", "4", "--resume"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--scale-down 4 differs"));
    let out = Command::new(MMCAB)
        .arg("run")
        .arg("--resume")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{} of 8 runs done", first.len())),
        "{stderr}"
    );
    let all = group_runs(&out_dir);
    assert_eq!(
        all.keys().copied().collect::<Vec<_>>(),
        (1..=8).collect::<Vec<_>>()
    );
    for (run, row) in &first {
        assert_eq!(
            all[run].started_unix_s, row.started_unix_s,
            "run {run} was repeated"
        );
    }
    assert_eq!(read_ahead(&dev), before);
    let meta: Meta =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("meta.json")).unwrap()).unwrap();
    assert!(meta.finished_unix_s.is_some());
    assert_eq!(meta.scale_down, Some(2), "kept across --resume");
}

/// `--resume` refuses another device or kernel than the run started on (here: what
/// meta.json recorded of them changed), in one line naming the difference and the fix,
/// before any knob is touched; the same device and kernel resume.
#[test]
#[ignore = "needs root: loop devices"]
fn resume_refuses_another_device_or_kernel() {
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "orig\n").unwrap();
    let plan = plan(dir.path(), &marker, 2, "300ms");
    let out_dir = dir.path().join("res");
    let code = interrupt(&plan, &dev, &out_dir, 1);
    assert_eq!(code, 128 + 15);
    let meta_path = out_dir.join("meta.json");
    let recorded = std::fs::read_to_string(&meta_path).unwrap();
    let meta: Meta = serde_json::from_str(&recorded).unwrap();
    let id = meta.block_device.clone().expect("block device recorded");
    assert_eq!(id.size_bytes, 64 << 20);
    assert!(
        id.backing_file
            .as_deref()
            .is_some_and(|f| f.contains("mmcab-test-loop.")),
        "{id:?}"
    );
    let resume = || {
        Command::new(MMCAB)
            .arg("run")
            .arg("--resume")
            .arg(&out_dir)
            .output()
            .unwrap()
    };
    type Change<'a> = (fn(&mut Meta), &'a str);
    let changes: [Change; 2] = [
        (
            |m| m.kernel_release = "0.1.0-other".into(),
            "kernel release: 0.1.0-other recorded, ",
        ),
        (
            |m| m.block_device.as_mut().unwrap().size_bytes = 1 << 30,
            &format!(
                "device size: {} bytes recorded, {} bytes now",
                1u64 << 30,
                64u64 << 20
            ),
        ),
    ];
    for (change, want) in changes {
        let mut other = meta.clone();
        change(&mut other);
        std::fs::write(&meta_path, serde_json::to_string(&other).unwrap()).unwrap();
        let out = resume();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.contains(want) && last.contains("--force"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
    }
    std::fs::write(&meta_path, &recorded).unwrap();
    let out = resume();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(group_runs(&out_dir).len(), 4);
}

/// `--resume --dry-run` shows what is done and changes nothing in the results
/// directory (a torn last line stays until a real resume cuts it).
#[test]
#[ignore = "needs root: loop devices"]
fn resume_dry_run_leaves_the_results_directory_as_it_is() {
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "orig\n").unwrap();
    let plan = plan(dir.path(), &marker, 2, "300ms");
    let out_dir = dir.path().join("res");
    let code = interrupt(&plan, &dev, &out_dir, 1);
    assert_eq!(code, 128 + 15);
    let done = group_runs(&out_dir).len();
    let mut runs_csv = std::fs::OpenOptions::new()
        .append(true)
        .open(out_dir.join("runs.csv"))
        .unwrap();
    std::io::Write::write_all(&mut runs_csv, b"9,,B,rr,2,fal").unwrap();
    let files = || {
        let mut files: Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
                (path.clone(), std::fs::read(&path).unwrap(), modified)
            })
            .collect();
        files.sort();
        files
    };
    let before = files();
    let out = Command::new(MMCAB)
        .arg("run")
        .arg("--resume")
        .arg(&out_dir)
        .arg("--dry-run")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches("  done").count(), done, "{stdout}");
    assert!(files() == before, "--dry-run changed the results directory");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
}

/// Ctrl-C pressed three times: the second and third are reported and the restore still
/// runs whole. The marker knob's restore waits on a FIFO the test opens only once mmcab
/// has reported all three, so they all arrive before the restore is done.
#[test]
#[ignore = "needs root: loop devices"]
fn a_second_ctrl_c_does_not_skip_restore() {
    use nix::sys::signal::Signal::SIGINT;
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "orig\n").unwrap();
    let before = read_ahead(&dev);
    let mut gate = Gate::new(dir.path());
    let restore = format!("read go < {}; echo {{value}} > {{m}}", gate.path.display());
    let plan = plan_with(dir.path(), &marker, 4, "echo {value} > {m}", &restore);
    let mut child = start_and_wait(&plan, &dev, &dir.path().join("res"), 1);
    child.signal(SIGINT);
    child.wait_for("the first SIGINT", |l| {
        l.starts_with("mmcab: got SIGINT (Ctrl-C): ")
    });
    for _ in 0..2 {
        child.signal(SIGINT);
        child.wait_for("another SIGINT", |l| {
            l.starts_with("mmcab: got SIGINT (Ctrl-C) again: ")
        });
    }
    // The restore goes on (had it been skipped, mmcab would exit without it: the marker
    // shows that).
    gate.open();
    let (status, stderr) = child.finish();
    assert_eq!(status.code(), Some(128 + 2), "{stderr}");
    assert_eq!(
        stderr.matches("got SIGINT (Ctrl-C) again").count(),
        2,
        "{stderr}"
    );
    assert_eq!(read_ahead(&dev), before);
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
}

#[test]
#[ignore = "needs root: loop devices"]
fn a_knob_that_does_not_take_stops_before_any_io() {
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::write(&state, "orig\n").unwrap();
    let s = state.display();
    // apply writes something else than asked: verification must catch it.
    let text = format!(
        r#"
name = "liar"
[[knob]]
name = "liar"
kind = "command"
read = "cat {s}"
apply = "echo wrong > {s}"
restore = "echo {{value}} > {s}"
[[config]]
name = "A"
liar = "right"
[[workload]]
name = "r"
[[workload.job]]
name = "r"
rw = "read"
size = "1MiB"
"#
    );
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, text).unwrap();
    let out_dir = dir.path().join("res");
    let out = Command::new(MMCAB)
        .arg("run")
        .arg(&plan)
        .arg("--device")
        .arg(&dev.dev)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("mislabelled") && stderr.contains("wrong"),
        "{stderr}"
    );
    assert!(!out_dir.join("runs.csv").exists(), "a run happened");
    assert_eq!(
        std::fs::read_to_string(&state).unwrap().trim(),
        "orig",
        "restored"
    );
}

/// `mmcab run` with its stderr or stdout a pipe whose reader is gone (`2>&1 | head`, a
/// closed terminal): every write fails with EPIPE, and the run still finishes and puts
/// the knobs back (no panic, no abort).
fn run_with_a_closed_pipe(stderr_closed: bool) {
    let dev = LoopDevice::new(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::write(&marker, "orig\n").unwrap();
    let before = read_ahead(&dev);
    let plan = plan(dir.path(), &marker, 2, "100ms");
    let out_dir = dir.path().join("res");
    let mut cmd = Command::new(MMCAB);
    cmd.arg("run")
        .arg(&plan)
        .arg("--device")
        .arg(&dev.dev)
        .arg("--out")
        .arg(&out_dir);
    let errors = dir.path().join("stderr");
    if stderr_closed {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    } else {
        cmd.stdout(Stdio::piped())
            .stderr(std::fs::File::create(&errors).unwrap());
    }
    let mut child = cmd.spawn().unwrap();
    // The reader goes away before mmcab writes anything.
    drop(child.stderr.take());
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(&errors).unwrap_or_default();
    assert_eq!(read_ahead(&dev), before, "read_ahead_kb restored: {said}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
    assert_eq!(status.code(), Some(0), "{status:?}: {said}");
    assert!(
        !said.contains("panicked") && !said.contains("error"),
        "{said}"
    );
    assert_eq!(group_runs(&out_dir).len(), 4);
}

#[test]
#[ignore = "needs root: loop devices"]
fn a_closed_stderr_does_not_stop_the_restore() {
    run_with_a_closed_pipe(true);
}

#[test]
#[ignore = "needs root: loop devices"]
fn a_closed_stdout_does_not_stop_the_restore() {
    run_with_a_closed_pipe(false);
}

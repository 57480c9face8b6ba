//! Every exit status of docs/safety.md's table (`mmcab::exit::TABLE`, which the docs are
//! held to in `src/cli/docs_tests.rs`) produced by the way of ending that should produce
//! it: here when a regular file and a command knob can bring it about (tier 1), else by
//! the named test of the tier that has what it needs (a card for `probe packed`, a loop
//! device for the engine's verify, the results fixtures of the gates), which must exist.
//! The match on the kind is exhaustive: a new row of the table needs its test.

use mmcab::exit::{Kind, TABLE};
use std::path::Path;
use std::process::Command;

const MMCAB: &str = env!("CARGO_BIN_EXE_mmcab");

/// Where a kind's status is produced.
enum Produced {
    /// Here: the scenario returns the kind it should end with (a signal's with its
    /// number), the exit status and stderr.
    Here(fn(&Path) -> (Kind, Option<i32>, String)),
    /// By a test elsewhere, whose body holds the check of the status it witnesses.
    Test(Witness),
}

/// A test of another file (from the repository's root) that checks a status: `witness`
/// (the assertion of the status or the kind, whitespace as one space) is in the body of
/// the test, or of the last helper of `via`, each a function of the given file whose
/// name the body before it calls.
struct Witness {
    file: &'static str,
    test: &'static str,
    via: &'static [(&'static str, &'static str)],
    witness: &'static str,
}

const fn test(file: &'static str, test: &'static str, witness: &'static str) -> Produced {
    Produced::Test(Witness {
        file,
        test,
        via: &[],
        witness,
    })
}

const fn test_via(
    file: &'static str,
    test: &'static str,
    via: &'static [(&'static str, &'static str)],
    witness: &'static str,
) -> Produced {
    Produced::Test(Witness {
        file,
        test,
        via,
        witness,
    })
}

/// The ioctl engine's guest test checks its statuses in `check`, through `boot_and_check`.
const IOCTL_CHECK: &[(&str, &str)] = &[
    ("tests/guest/ioctl_engine.rs", "boot_and_check"),
    ("tests/guest/ioctl_engine.rs", "check"),
];

fn produced(kind: Kind) -> Vec<Produced> {
    use Produced::Here;
    match kind {
        Kind::Success => vec![Here(success)],
        Kind::Error => vec![Here(error)],
        Kind::Usage => vec![Here(usage)],
        Kind::VerifyFailed => vec![
            Here(verify_failed),
            test(
                "tests/host/engine.rs",
                "verify_reports_a_block_corrupted_behind_our_back",
                "assert_eq!(out.status.code(), Some(3)",
            ),
            test(
                "tests/guest/faults.rs",
                "corrupted_reads_are_each_reported_by_verify_with_offset_and_byte",
                "assert_eq!(s.status(\"run.status\"), 3",
            ),
        ],
        Kind::ProbeMismatch => vec![test_via(
            "tests/guest/ioctl_engine.rs",
            "linux_7_ioctl_engine_and_packed_refusals",
            IOCTL_CHECK,
            "run.out_text(\"force.status\").trim(), \"3\"",
        )],
        Kind::IoFailed => vec![
            Here(io_failed),
            test(
                "tests/plain/engine.rs",
                "a_layout_write_that_fails_is_an_io_error_with_its_offset",
                "assert_eq!(out.status.code(), Some(4)",
            ),
            test(
                "tests/plain/runner.rs",
                "an_io_error_that_coincides_with_a_signal_is_not_swallowed",
                "assert_eq!(status.code(), Some(4)",
            ),
            // The ioctl engine's open of the card's node.
            test_via(
                "tests/guest/ioctl_engine.rs",
                "linux_7_ioctl_engine_and_packed_refusals",
                IOCTL_CHECK,
                "run.out_text(\"nodev.status\").trim(), \"4\"",
            ),
            test(
                "tests/guest/faults.rs",
                "writes_failing_with_eio_stop_with_one_line_and_resume_finishes_once_healed",
                "assert_eq!(s.status(\"run.status\"), 4",
            ),
        ],
        Kind::KnobsNotRestored => vec![
            Here(knobs_not_restored),
            test(
                "tests/plain/until_ci.rs",
                "a_run_until_ci_ended_is_finished_even_when_the_restore_fails",
                "assert_eq!(out.status.code(), Some(5)",
            ),
            test_via(
                "tests/guest/faults.rs",
                "a_knob_file_that_disappears_gets_the_manual_restore_message_and_nothing_else_is_lost",
                &[("tests/common/scenario.rs", "restore_failed")],
                "assert_eq!(self.status(\"run.status\"), 5",
            ),
        ],
        Kind::ProbeNotRestored => vec![
            test(
                "tests/guest/emmcsim_faults.rs",
                "probe_packed_on_a_card_that_stops_answering_cannot_put_back_and_exits_5",
                "assert_eq!(s.status(\"probe.status\"), 5",
            ),
            test(
                "src/probe/packed.rs",
                "a_probe_that_could_not_put_everything_back_ends_with_its_kind",
                "assert_eq!(failure.kind, Kind::ProbeNotRestored)",
            ),
        ],
        Kind::GateFailed => vec![test(
            "tests/plain/gates.rs",
            "compare_exit_codes_for_slower_faster_and_no_change",
            "(&slower, \"slower\", 6)",
        )],
        Kind::Inconclusive => vec![test(
            "tests/plain/gates.rs",
            "one_boot_per_side_is_inconclusive_unless_allowed",
            "assert_eq!(code(&out), 7",
        )],
        Kind::Signal(_) => vec![
            Here(signal),
            test(
                "tests/host/runner.rs",
                "sigterm_mid_run_restores_knobs_and_resume_completes_the_matrix",
                "assert_eq!(code, 128 + 15)",
            ),
            test(
                "tests/host/runner.rs",
                "a_second_ctrl_c_does_not_skip_restore",
                "assert_eq!(status.code(), Some(128 + 2)",
            ),
            test(
                "tests/guest/emmcsim_faults.rs",
                "probe_packed_stopped_by_sigterm_half_way_finishes_and_exits_128_plus_15",
                "assert_eq!(s.status(\"probe.status\"), 128 + 15",
            ),
        ],
    }
}

/// The body of `fn name(` in `text` (up to its closing brace at the indentation of the
/// `fn`, as rustfmt puts it), its whitespace runs as one space; None without one.
fn body(text: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| {
        let l = l.trim_start();
        l.starts_with(&format!("fn {name}(")) || l.starts_with(&format!("pub fn {name}("))
    })?;
    let indent = &lines[start][..lines[start].len() - lines[start].trim_start().len()];
    let end = lines[start..]
        .iter()
        .position(|l| *l == format!("{indent}}}"))?;
    Some(
        lines[start..=start + end]
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

impl Witness {
    /// Why the witness does not hold, if it does not.
    fn check(&self, root: &Path) -> Result<(), String> {
        let read = |file: &str| std::fs::read_to_string(root.join(file)).unwrap();
        let mut at = body(&read(self.file), self.test)
            .filter(|_| read(self.file).contains(&format!("fn {}()", self.test)))
            .ok_or_else(|| format!("{} has no test {}", self.file, self.test))?;
        let mut name = self.test;
        for (file, helper) in self.via {
            if !at.contains(&format!("{helper}(")) {
                return Err(format!("{name} does not call {helper}"));
            }
            at = body(&read(file), helper)
                .ok_or_else(|| format!("{file} has no function {helper}"))?;
            name = helper;
        }
        match at.contains(self.witness) {
            true => Ok(()),
            false => Err(format!(
                "{name} ({}) does not check {:?}",
                self.file, self.witness
            )),
        }
    }
}

#[test]
fn every_exit_status_is_produced_by_its_kind() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for row in TABLE.iter() {
        for way in produced(row.kind) {
            match way {
                Produced::Here(scenario) => {
                    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
                    let (kind, status, stderr) = scenario(dir.path());
                    assert_eq!(kind.row().kind, row.kind, "a scenario of another row");
                    assert_eq!(
                        status,
                        Some(i32::from(kind.status())),
                        "{kind:?} (status {} for {}): {stderr}",
                        row.status_text(),
                        row.commands
                    );
                }
                Produced::Test(witness) => {
                    if let Err(why) = witness.check(root) {
                        panic!("{kind:?}: {why}", kind = row.kind);
                    }
                }
            }
        }
    }
}

/// A witness must name a test that checks the status: one that does not is caught.
#[test]
fn a_witness_that_does_not_check_its_status_is_caught() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wrong = Witness {
        file: "tests/plain/gates.rs",
        test: "one_boot_per_side_is_inconclusive_unless_allowed",
        via: &[],
        witness: "assert_eq!(code(&out), 6",
    };
    let why = wrong.check(root).unwrap_err();
    assert!(why.contains("does not check"), "{why}");
    let missing = Witness {
        test: "no_such_test",
        ..wrong
    };
    assert!(missing.check(root).unwrap_err().contains("has no test"));
}

/// `mmcab run PLAN --device TARGET ARGS...` in `dir`: the status and stderr.
fn run(dir: &Path, plan: &str, args: &[&str]) -> (Option<i32>, String) {
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let out = Command::new(MMCAB)
        .arg("run")
        .arg(&path)
        .arg("--device")
        .arg(dir.join("target"))
        .arg("--no-evidence")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A job's keys: a read of 256 KiB.
const READ: &str = "rw = \"read\"\nsize = \"256KiB\"";

/// A plan of one workload of one buffered job: `job` are its other keys.
fn plan(job: &str) -> String {
    format!(
        "name = \"p\"\n[[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\n\
         direct = false\n{job}\n"
    )
}

/// A plan whose one config sets a command knob, kept in `dir`/state ("orig" at first),
/// with these commands besides its apply's write; `job` are more keys of its read job.
fn knob_plan(dir: &Path, apply: &str, restore: &str, job: &str) -> String {
    let state = dir.join("state");
    std::fs::write(&state, "orig\n").unwrap();
    let s = state.display();
    format!(
        "name = \"p\"\n[[knob]]\nname = \"k\"\nkind = \"command\"\nread = \"cat {s}\"\n\
         apply = \"echo {{value}} > {s}; {apply}\"\nrestore = \"{restore}\"\n\
         [[config]]\nname = \"A\"\nk = \"a\"\n[[workload]]\nname = \"w\"\n\
         [[workload.job]]\nname = \"j\"\nrw = \"read\"\nsize = \"256KiB\"\ndirect = false\n{job}\n"
    )
}

fn success(dir: &Path) -> (Kind, Option<i32>, String) {
    let (status, err) = run(dir, &plan(READ), &[]);
    (Kind::Success, status, err)
}

fn error(dir: &Path) -> (Kind, Option<i32>, String) {
    let (status, err) = run(dir, &plan(READ), &["--workload", "nope"]);
    assert!(err.contains("has no workload 'nope'"), "{err}");
    (Kind::Error, status, err)
}

fn usage(_: &Path) -> (Kind, Option<i32>, String) {
    let out = Command::new(MMCAB)
        .args(["run", "--no-such-flag"])
        .output()
        .unwrap();
    let help = Command::new(MMCAB).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0), "--help is no usage error");
    (
        Kind::Usage,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A read job that verifies blocks no verifying write wrote (the file as mmcab laid it
/// out): every block is bad.
fn verify_failed(dir: &Path) -> (Kind, Option<i32>, String) {
    let (status, err) = run(dir, &plan(&format!("{READ}\nverify = true")), &[]);
    assert!(err.contains("verify found 64 bad block(s)"), "{err}");
    (Kind::VerifyFailed, status, err)
}

/// A write past RLIMIT_FSIZE (SIGXFSZ ignored): EFBIG, one line naming the write.
fn io_failed(dir: &Path) -> (Kind, Option<i32>, String) {
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan("rw = \"write\"\nsize = \"4MiB\"")).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 1024; trap '' XFSZ; exec \"$0\" \"$@\"")
        .arg(MMCAB)
        .arg("run")
        .arg(&path)
        .arg("--device")
        .arg(dir.join("target"))
        .arg("--no-evidence")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.trim_end()
            .ends_with("failed: EFBIG (File too large) [job 'j']"),
        "{err}"
    );
    (Kind::IoFailed, out.status.code(), err)
}

/// Every run finishes; the knob's restore fails: the commands to finish by hand.
fn knobs_not_restored(dir: &Path) -> (Kind, Option<i32>, String) {
    let (status, err) = run(
        dir,
        &knob_plan(dir, "true", "exit 1", ""),
        &["--out", &dir.join("res").display().to_string()],
    );
    assert!(
        err.trim_end()
            .ends_with("could not restore knob(s) k: run the commands printed above"),
        "{err}"
    );
    (Kind::KnobsNotRestored, status, err)
}

/// The knob's apply sends SIGHUP to mmcab before a run that would read for a minute:
/// the run is stopped and discarded, the knob restored, and the status is 128 + 1.
fn signal(dir: &Path) -> (Kind, Option<i32>, String) {
    let restore = format!("echo {{value}} > {}", dir.join("state").display());
    let (status, err) = run(
        dir,
        &knob_plan(
            dir,
            "kill -HUP $PPID",
            &restore,
            "runtime = \"60s\"\ntime_based = true",
        ),
        &["--out", &dir.join("res").display().to_string()],
    );
    assert!(err.contains("got SIGHUP"), "{err}");
    let state = std::fs::read_to_string(dir.join("state")).unwrap();
    assert_eq!(state.trim(), "orig", "restored: {err}");
    (Kind::Signal(libc::SIGHUP), status, err)
}

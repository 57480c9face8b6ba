//! Faults on the real block stack, in the emulated-eMMC guest (testbed/run, Linux 7.x):
//! what `mmcab run` does when things break part way through a plan. Each scenario is a
//! plan of several runs with knobs, and the fault is injected after a given number of
//! runs (once mmcab says that run is done, read from its stderr as it comes:
//! tests/fixtures/faults/lib.sh):
//!
//! - eio: writes start failing with EIO (dm-flakey `error_writes`, loaded by a table
//!   reload): one error line naming device, offset, operation and errno, exit status 4,
//!   every finished run in runs.csv, knobs restored, `--resume` finishes once healed;
//! - corrupt: reads of chosen blocks come back with one byte replaced (dm-flakey
//!   `corrupt_bio_byte`): verify reports every one, offset and byte;
//! - card-unbind / host-unbind: the card vanishes mid-run (mmcblk or sdhci-aspeed
//!   unbound): mmcab says the device is gone, the bus-width restore fails and prints the
//!   commands, which finish it once the card is back; `--resume` completes the plan;
//! - vanishing-knob / rejected-restore: a knob's sysfs file disappears (its dm device
//!   is removed), or the kernel rejects the value to restore (kyber-iosched unloaded):
//!   the manual-restore message, exit status 5, nothing else lost.
//!
//! Two boots (device-mapper scenarios; vanishing card, booted 8-bit), each shared by the
//! tests of its scenarios. Every test prints one `faults:` line with its counts
//! (injected, reported correctly, results lost, knobs left changed).

use crate::common::scenario;
use crate::common::testbed;

use mmcab::record::verify::VerifyErrorRow;
use mmcab::record::RunRow;
use scenario::{counts, Scenario};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use testbed::GuestRun;

/// One QEMU at a time: the injections are timed against the runs.
static GUEST: Mutex<()> = Mutex::new(());

fn script(name: &str) -> String {
    let dir = testbed::repo_root().join("tests/fixtures/faults");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    format!("{}\n{}", read("lib.sh"), read(name))
}

fn boot(label: &str, bus_width: u8, modules: &[&str], script_name: &str) -> GuestRun {
    let _one = GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let run = testbed::Guest::new(label)
        .kernel("7")
        .bus_width(bus_width)
        .modules(modules)
        .timeout(Duration::from_secs(600))
        .run(&script(script_name));
    run.assert_success();
    run
}

/// The device-mapper scenarios: eio, corrupt, vanishing-knob, rejected-restore.
fn dm_boot() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| boot("faults_dm", 4, &["dm-flakey", "kyber-iosched"], "dm.sh"))
}

/// The vanishing-card scenarios: card-unbind, host-unbind.
fn vanish_boot() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| boot("faults_vanish", 8, &[], "vanish.sh"))
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn writes_failing_with_eio_stop_with_one_line_and_resume_finishes_once_healed() {
    let s = Scenario {
        run: dm_boot(),
        name: "eio",
    };
    let err = s.err();
    assert!(
        s.text("table-at-fault").contains("flakey")
            && s.text("table-at-fault").contains("1 error_writes")
    );
    s.injected();
    assert_eq!(s.status("run.status"), 4, "{err}");
    let line = s.error_line();
    // "run 3/6 (ra64, seq-write, repetition 2): write of 65536 bytes at offset 131072
    // (sector 256) on /dev/mapper/flaky failed: EIO (I/O error) [job 'w']"
    assert!(
        line.contains("write of 65536 bytes at offset ")
            && line.contains(" on /dev/mapper/flaky failed: EIO (I/O error) [job 'w']"),
        "{line}"
    );
    let offset: u64 = line
        .split("at offset ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(offset % 65536 == 0 && offset < 4 << 20, "{line}");

    let recorded = s.recorded_runs();
    let done = recorded.len();
    assert!((2..6).contains(&done), "{recorded:?}\n{err}");
    assert_eq!(recorded, (1..=done as u32).collect(), "{err}");
    assert_eq!(s.lost(), 0, "{err}");
    assert!(
        err.contains(&format!(
            "mmcab: stopped after {done} of 6 runs; the finished runs are in \
             /out/eio/res/runs.csv. Once the device is healthy again, finish with: mmcab run \
             --resume /out/eio/res --allow-write"
        )),
        "{err}"
    );
    let before = s.text("knobs-before");
    assert_eq!(s.text("knobs-after"), before, "knobs not restored:\n{err}");

    // Healed (linear table again): --resume runs the rest, the knobs end as they began.
    assert_eq!(s.status("resume.status"), 0, "{}", s.text("resume.err"));
    assert_eq!(s.resumed_runs(), (1..=6).collect());
    assert!(s.meta_finished());
    assert_eq!(s.text("knobs-end"), before);
    counts(
        "eio",
        s.injections(),
        s.reports("mmcab: error:", "failed: EIO (I/O error)"),
        s.lost(),
        s.left_changed("knobs-before", "knobs-after", 2),
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn corrupted_reads_are_each_reported_by_verify_with_offset_and_byte() {
    let s = Scenario {
        run: dm_boot(),
        name: "corrupt",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 3, "verify failures exit 3:\n{err}");
    let blocks = [3u64, 10, 11, 40, 63];
    // 2 configs x 2 workloads x 2 repetitions; every run reads each bad block once.
    assert_eq!(s.recorded_runs(), (1..=8).collect());
    assert!(s.meta_finished());
    let text = s.text("res/verify_errors.csv");
    let rows: Vec<VerifyErrorRow> = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut reported = 0;
    for run in 1..=8u32 {
        let of_run: Vec<&VerifyErrorRow> = rows.iter().filter(|r| r.run == run).collect();
        let offsets: Vec<u64> = of_run.iter().map(|r| r.offset).collect();
        assert_eq!(
            offsets,
            blocks.map(|b| b * 4096),
            "run {run}: bad blocks reported:\n{text}"
        );
        for row in of_run {
            let want = match row.workload.as_str() {
                // The writer knows what it wrote: the byte and both values.
                "write-verify" => format!(
                    "checksum mismatch (data changed after it was written); 1 byte differs \
                     from what was written, the first is byte 1000 of the block (offset {} \
                     on the target): reads 0xff, 0x00 was written",
                    row.offset + 1000
                ),
                _ => "checksum mismatch (data changed after it was written)".to_string(),
            };
            assert_eq!(row.problem, want, "{row:?}");
            assert!(
                err.contains(&format!("    offset {}: {want}", row.offset)),
                "not on stderr: {row:?}\n{err}"
            );
            reported += 1;
        }
    }
    let text = s.text("res/runs.csv");
    for row in csv::Reader::from_reader(text.as_bytes()).deserialize::<RunRow>() {
        assert_eq!(row.unwrap().verify_errors, 5);
    }
    assert_eq!(s.text("knobs-after"), s.text("knobs-before"));
    counts(
        "corrupt",
        blocks.len() * s.recorded_runs().len(),
        reported,
        s.lost(),
        s.left_changed("knobs-before", "knobs-after", 1),
    );
    assert_eq!(reported, 40);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_knob_file_that_disappears_gets_the_manual_restore_message_and_nothing_else_is_lost() {
    let s = Scenario {
        run: dm_boot(),
        name: "vanishing-knob",
    };
    let err = s.err();
    let holder = s.text("holder").trim().to_string();
    s.injected();
    s.restore_failed(
        "holder-read-ahead",
        "No such file or directory",
        &[format!(
            "echo 128 > /sys/block/{holder}/queue/read_ahead_kb"
        )],
    );
    let line = s.error_line();
    let done = s.recorded_runs().len();
    assert!(
        done < 12,
        "the fault landed after the last run (too late to test a mid-run switch):\n{err}"
    );
    assert!(
        line.starts_with(
            "mmcab: error: could not restore knob(s) holder-read-ahead: run the commands \
             printed above: "
        ) && line.contains(&format!("/sys/block/{holder}/queue/read_ahead_kb")),
        "{line}"
    );
    // The target's own knob is back, every finished run is recorded and resumable.
    let before = s.text("knobs-before");
    assert_eq!(
        s.text("knobs-after"),
        before.lines().next().unwrap().to_string() + "\n"
    );
    assert!(done >= 2, "{err}");
    assert_eq!(s.lost(), 0, "{err}");
    assert!(
        err.contains(&format!("mmcab: stopped after {done} of 12 runs")),
        "{err}"
    );
    // The file is gone with its device: nothing to put back there, but mmcab said so.
    counts(
        "vanishing-knob",
        s.injections(),
        s.reports(
            "mmcab: restoring knob holder-read-ahead failed: ",
            "No such file",
        ),
        s.lost(),
        s.left_changed("knobs-before", "knobs-after", 1),
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_restore_value_the_kernel_rejects_gets_the_manual_restore_message_and_keeps_the_results() {
    let s = Scenario {
        run: dm_boot(),
        name: "rejected-restore",
    };
    let err = s.err();
    s.injected();
    s.restore_failed(
        "card-scheduler",
        "writing 'kyber' to /sys/block/mmcblk0/queue/scheduler: Invalid argument",
        &["echo kyber > /sys/block/mmcblk0/queue/scheduler".to_string()],
    );
    // Every run finished and is recorded; the results directory is complete.
    assert_eq!(s.recorded_runs(), (1..=4).collect());
    assert!(s.meta_finished());
    assert!(
        err.contains("mmcab: all 4 runs finished and are recorded in /out/rejected-restore/res"),
        "{err}"
    );
    let (before, after) = (s.text("knobs-before"), s.text("knobs-after"));
    assert_eq!(
        before.lines().next(),
        after.lines().next(),
        "read-ahead restored"
    );
    assert!(
        before.contains("[kyber]") && !after.contains("[kyber]"),
        "{after}"
    );
    // With kyber-iosched loaded again, the printed command finishes the restore.
    assert_eq!(s.status("byhand.status"), 0, "{}", s.text("byhand.log"));
    assert!(s.text("knobs-byhand").contains("[kyber]"));
    counts(
        "rejected-restore",
        s.injections(),
        s.reports(
            "mmcab: restoring knob card-scheduler failed: ",
            "Invalid argument",
        ),
        s.lost(),
        // The scheduler is the knob mmcab could not put back: the by-hand commands did.
        s.left_changed("knobs-before", "knobs-after", 1)
            + usize::from(before.lines().nth(1) != s.text("knobs-byhand").lines().next()),
    );
}

fn vanishing_card(name: &'static str) {
    let s = Scenario {
        run: vanish_boot(),
        name,
    };
    let err = s.err();
    s.injected();
    assert_eq!(s.status("run.status"), 5, "{err}");
    let line = s.error_line();
    let gone = "/dev/mmcblk0 is gone (no /sys/dev/block/179:0): the card was removed or its \
                driver unbound";
    assert!(
        line.contains("could not restore knob(s) ") && line.contains(gone),
        "{line}"
    );
    // The fault lands in run 3's I/O (0.4 s into it), or, when the kernel finishes that
    // run's I/O first (seen with the host unbind), in the next run's bus-width switch.
    let done = s.recorded_runs().len() as u32;
    assert!((2..=3).contains(&done), "{err}");
    assert!(line.contains(&format!("run {}/6 (", done + 1)), "{line}");
    if line.contains("seq-write, repetition 3): write of 65536 bytes at offset ") {
        // One line with the write, the errno the kernel gave and what happened. The
        // errno depends on where the unbind catches the request: ENOSPC when the dying
        // disk's capacity is already zero, EIO when the request itself is failed.
        let errno_seen = ["ENOSPC (No space left on device)", "EIO (I/O error)"]
            .iter()
            .any(|errno| {
                line.contains(&format!(
                    " on /dev/mmcblk0 failed: {errno} [job 'w']; {gone}"
                ))
            });
        assert!(errno_seen, "{line}");
    } else {
        assert!(
            line.contains(&format!("{gone}: run {}/6 (", done + 1)),
            "{line}"
        );
    }
    assert!(s.text("dev-after").contains("No such file"));
    assert_eq!(s.recorded_runs(), (1..=done).collect(), "{err}");
    assert_eq!(s.lost(), 0);
    assert!(
        err.contains(&format!(
            "mmcab: stopped after {done} of 6 runs; the finished runs are in \
             /out/{name}/res/runs.csv"
        )),
        "{err}"
    );
    // The printed commands: unbind the card's driver if its runtime PM is in the error
    // state, bind it if needed, then the caps sequence.
    let byhand = s.byhand();
    assert!(
        byhand[0].starts_with("test \"$(cat ") && byhand[0].ends_with("/mmcblk/unbind"),
        "{byhand:?}"
    );
    assert_eq!(
        byhand[1],
        "test -e /sys/devices/platform/ahb/ahb:apb/1e750000.sdc/1e750100.sdhci/mmc_host/mmc0/\
         mmc0:0001/driver || echo mmc0:0001 > /sys/bus/mmc/drivers/mmcblk/bind",
        "{byhand:?}"
    );
    assert!(
        byhand.contains(&"echo 0x4000014f > /sys/kernel/debug/mmc0/caps".to_string()),
        "{byhand:?}"
    );
    assert_eq!(s.status("byhand.status"), 0, "{}", s.text("byhand.log"));
    let before = s.text("before");
    assert!(
        before.contains("0x4000014f") && before.contains("8 bits"),
        "{before}"
    );
    assert_eq!(s.text("after"), before, "after the printed commands");
    assert_eq!(s.status("resume.status"), 0, "{}", s.text("resume.err"));
    assert_eq!(s.resumed_runs(), (1..=6).collect());
    assert!(s.meta_finished());
    assert_eq!(s.text("end"), before);
    counts(
        name,
        s.injections(),
        s.reports("mmcab: error:", gone),
        s.lost(),
        s.left_changed("before", "after", 4),
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_card_whose_driver_is_unbound_mid_run_stops_cleanly_and_the_printed_commands_restore_it() {
    vanishing_card("card-unbind");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_host_unbound_mid_run_stops_cleanly_and_the_printed_commands_restore_it() {
    vanishing_card("host-unbind");
}

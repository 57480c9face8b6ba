//! Faults of the simulated card (testbed/emmcsim/, "Faults"), injected through the
//! module's parameters after the second run of a plan with knobs (bus width, read-ahead;
//! tests/fixtures/faults/sim.sh), one boot of Linux 7.x with `--card sim`:
//!
//! - a bad spot for each fault kind (response CRC error, data CRC error, response
//!   timeout, data timeout): the kernel retries, then fails the write; mmcab stops with
//!   one error line naming the offset and EIO, exit 4, every finished run in runs.csv,
//!   the knobs restored; `--resume` finishes the plan once the spot is good again;
//! - one data CRC error that the kernel's retry recovers from: every run finishes (exit
//!   0) and the report names the failed request (the kernel evidence). mmcblk is
//!   rebound first: the failed requests before leave their tags in the driver's
//!   one-block retry mode (docs/kernel-facts.md), which made the count that places the
//!   error fall in the data check's reads instead, now and then;
//! - a card that stops answering: the error line says the card does not answer (CMD13
//!   through debugfs fails), the bus-width restore cannot be done (exit 5) and mmcab
//!   prints the commands; once the card answers again they restore everything and
//!   `--resume` finishes the plan;
//! - `probe packed` on a card that stops answering half-way through the probe: the
//!   region and EXP_EVENTS_CTRL cannot be put back, the error line says so and how,
//!   exit 5;
//! - `probe packed` stopped by SIGTERM half-way (a second boot,
//!   tests/fixtures/faults/sim_signal.sh, so that it cannot disturb the request count
//!   the "stops answering" probe is timed by): it finishes, puts its region back and
//!   ends with 128 + 15.
//!
//! Each test prints one `faults:` line with its counts (injected, reported correctly,
//! results lost, knobs left changed), as tests/guest/faults.rs does.

use crate::common::scenario;
use crate::common::testbed;

use scenario::{counts, Scenario};
use std::sync::OnceLock;
use std::time::Duration;
use testbed::GuestRun;

fn sim_boot() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| boot("faults_sim", "sim.sh"))
}

/// The boot of tests/fixtures/faults/sim_signal.sh (`probe packed` stopped by SIGTERM).
fn signal_boot() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| boot("faults_sim_signal", "sim_signal.sh"))
}

/// One boot of Linux 7.x with the simulated card running lib.sh and then `script`.
fn boot(name: &str, script: &str) -> GuestRun {
    let dir = testbed::repo_root().join("tests/fixtures/faults");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let run = testbed::Guest::new(name)
        .kernel("7")
        .card("sim")
        .icount(1)
        .timeout(Duration::from_secs(1500))
        .run(&format!("{}\n{}", read("lib.sh"), read(script)));
    run.assert_success();
    run
}

/// The knobs (caps, ios bus width, power/control, read-ahead) as the snapshot `name`.
fn knob_lines(s: &Scenario, name: &str) -> Vec<String> {
    s.text(name).lines().map(str::to_string).collect()
}

/// Stopped by an I/O error at run 3 with one line, exit `status`; runs 1-2 recorded and
/// nothing lost; `--resume` finished runs 3-6 and put every knob back.
fn stopped_at_run_3_and_resumed(s: &Scenario, status: i32, cause: &str) -> (usize, usize) {
    let err = s.err();
    assert_eq!(s.status("run.status"), status, "{err}");
    let line = s.error_line();
    assert!(
        line.contains("run 3/6 (bw4, seq-write, repetition 3): write of 65536 bytes at offset")
            && line.contains("on /dev/mmcblk0 failed: EIO (I/O error)")
            && line.contains(cause),
        "{line}"
    );
    assert!(
        err.contains(&format!(
            "mmcab: stopped after 2 of 6 runs; the finished runs are in /out/{}/res/runs.csv. \
             Once the device is healthy again, finish with: mmcab run --resume /out/{}/res \
             --allow-write",
            s.name, s.name
        )),
        "{err}"
    );
    assert_eq!(s.recorded_runs(), (1..=2).collect(), "{err}");
    let resume_err = s.text("resume.err");
    assert_eq!(s.status("resume.status"), 0, "{resume_err}");
    assert_eq!(s.resumed_runs(), (1..=6).collect(), "{resume_err}");
    let reported = usize::from(line.contains(cause));
    (reported, s.left_changed("before", "end", 4))
}

/// One bad-spot scenario: the fault counter moved, the error and the resume as above,
/// the knobs back right after the failed run.
fn bad_spot(kind: u32, what: &'static str) {
    let name: &'static str = Box::leak(format!("bad-spot-{kind}").into_boxed_str());
    let s = Scenario {
        run: sim_boot(),
        name,
    };
    s.injected();
    let stats = s.text("stats");
    assert!(!stats.contains("faults 0\n"), "no fault counted:\n{stats}");
    let (reported, _) = stopped_at_run_3_and_resumed(&s, 4, "(sector 2048)");
    assert_eq!(knob_lines(&s, "after"), knob_lines(&s, "before"));
    let left = s.left_changed("before", "after", 4) + s.left_changed("before", "end", 4);
    counts(what, 1, reported, s.lost(), left);
    assert_eq!((reported, s.lost(), left), (1, 0, 0));
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_bad_spot_with_response_crc_errors_stops_with_one_line_and_resumes() {
    bad_spot(1, "sim response CRC errors");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_bad_spot_with_data_crc_errors_stops_with_one_line_and_resumes() {
    bad_spot(2, "sim data CRC errors");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_bad_spot_with_response_timeouts_stops_with_one_line_and_resumes() {
    bad_spot(3, "sim response timeouts");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_bad_spot_with_data_timeouts_stops_with_one_line_and_resumes() {
    bad_spot(4, "sim data timeouts");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_crc_error_the_kernel_retries_is_shown_in_the_report() {
    let s = Scenario {
        run: sim_boot(),
        name: "transient",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 0, "{err}");
    assert!(s.meta_finished());
    assert_eq!(s.recorded_runs(), (1..=6).collect(), "{err}");
    let report = s.text("report.txt");
    // The 7th data command after the fault is armed: the 5th of the first run (bw4),
    // after the two reads of the data check before the first write.
    let reported = usize::from(report.contains("! bw4: 1 requests failed"));
    let left = s.left_changed("before", "after", 4);
    counts("sim transient data CRC error", 1, reported, s.lost(), left);
    assert_eq!((reported, s.lost(), left), (1, 0, 0), "{report}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_card_that_stops_answering_is_named_and_the_printed_commands_restore() {
    let s = Scenario {
        run: sim_boot(),
        name: "stops-answering",
    };
    s.injected();
    let err = s.err();
    assert!(
        !s.text("stats").contains("unanswered 0\n"),
        "{}",
        s.text("stats")
    );
    // The restore of the bus width needs the card: it fails, and says how to finish.
    assert!(
        err.contains("mmcab: restoring knob bus-width failed: ")
            && err.contains("mmcab: restore the device by hand with these commands (as root):"),
        "{err}"
    );
    let (reported, _) = stopped_at_run_3_and_resumed(
        &s,
        5,
        "the card does not answer: reading /sys/kernel/debug/mmc0/mmc0:0001/status \
         (CMD13 SEND_STATUS) failed",
    );
    let byhand = s.byhand();
    assert!(
        byhand[0].ends_with("!= error || echo mmc0:0001 > /sys/bus/mmc/drivers/mmcblk/unbind"),
        "{byhand:?}"
    );
    assert_eq!(s.status("byhand.status"), 0, "{}", s.text("byhand.log"));
    let left = s.left_changed("before", "after", 4) + s.left_changed("before", "end", 4);
    counts("sim card stops answering", 1, reported, s.lost(), left);
    assert_eq!((reported, s.lost(), left), (1, 0, 0));
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn probe_packed_on_a_card_that_stops_answering_cannot_put_back_and_exits_5() {
    let s = Scenario {
        run: sim_boot(),
        name: "probe-stops-answering",
    };
    let requests = s.text("requests");
    assert_eq!(
        s.status("whole.status"),
        0,
        "the probe that counts the requests ({requests}): {}",
        s.text("whole.err")
    );
    let stats = s.text("stats");
    assert!(!stats.contains("unanswered 0\n"), "{requests}\n{stats}");
    let err = s.text("probe.err");
    assert_eq!(s.status("probe.status"), 5, "{requests}: {err}");
    let line = err.trim().lines().last().unwrap_or_default().to_string();
    assert!(
        line.starts_with("mmcab: error: mmcab probe packed could not put everything back: ")
            && line.contains("were NOT written back"),
        "{err}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn probe_packed_stopped_by_sigterm_half_way_finishes_and_exits_128_plus_15() {
    let s = Scenario {
        run: signal_boot(),
        name: "probe-signal",
    };
    let err = s.text("probe.err");
    assert_eq!(s.status("probe.status"), 128 + 15, "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("mmcab: got SIGTERM: ")),
        "the signal reached mmcab's handler: {err}"
    );
    let report = s.text("probe.out");
    assert!(
        report.contains("packed write probe") && !err.contains("mmcab: error:"),
        "the probe finished: {report}\n{err}"
    );
}

//! Tests of the collector: what it says when a source is missing or off.

use super::*;

/// No tracefs: meta.json and every run say why, and the run goes on with what there is.
#[test]
fn without_tracefs_the_run_goes_on_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, b"x").unwrap();
    let paths = MmcPaths::under(dir.path());
    let collector = Collector::open_with(&target, Some(&paths), || {
        anyhow::bail!("tracefs is not mounted (looked in /nonexistent)")
    });
    assert_eq!(
        collector.meta().trace,
        "unavailable: tracefs is not mounted (looked in /nonexistent)"
    );
    assert!(collector
        .meta()
        .wr_pack_stats
        .contains("removed packed commands"));
    let evidence = collector.finish(collector.start()).expect("evidence is on");
    assert_eq!(
        evidence.trace.as_ref().unwrap_err(),
        &collector.meta().trace
    );
    assert!(evidence.packed.is_none());
    assert_eq!(evidence.trace_status(), "unavailable");
    assert!(
        evidence.summary().contains("trace unavailable"),
        "{}",
        evidence.summary()
    );
}

#[test]
fn not_permitted_is_said_with_what_to_do() {
    // A tracefs root whose instances directory cannot be written (a read-only
    // directory for a normal user; root gets a file in its way instead).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tracing");
    std::fs::create_dir_all(root.join("events/mmc/mmc_request_start")).unwrap();
    std::fs::write(root.join("instances"), b"").unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, b"x").unwrap();
    let collector = Collector::open_with(&target, Some(&MmcPaths::under(dir.path())), || Ok(root));
    let why = &collector.meta().trace;
    assert!(
        why.starts_with("unavailable: ") && why.contains("instances"),
        "{why}"
    );
}

#[test]
fn off_collects_nothing() {
    let collector = Collector::off();
    assert!(collector.finish(collector.start()).is_none());
    assert!(collector.meta().trace.contains("--no-evidence"));
}

#[test]
fn packing_statistics_found_disabled_are_reported_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let paths = MmcPaths::under(dir.path());
    std::fs::create_dir_all(&paths.card_debugfs).unwrap();
    let stats = paths.card_debugfs.join("wr_pack_stats");
    std::fs::write(&stats, "").unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, b"x").unwrap();
    let collector =
        Collector::open_with(&target, Some(&paths), || anyhow::bail!("no tracefs here"));
    assert_eq!(collector.meta().wr_pack_stats, stats.display().to_string());
    let evidence = collector.finish(collector.start()).unwrap();
    let err = evidence.packed.unwrap().unwrap_err();
    assert!(err.contains("disabled"), "{err}");
    // Enabled and counting: the delta of the run.
    std::fs::write(&stats, "mmc0: Packed 2 reqs - 1 times\n").unwrap();
    let started = collector.start();
    std::fs::write(&stats, "mmc0: Packed 2 reqs - 4 times\n").unwrap();
    let evidence = collector.finish(started).unwrap();
    assert_eq!(evidence.packed, Some(Ok((3, 6))));
}

/// The host's err_stats around a run and around a switch: the counters that counted up,
/// `none: ...` on a kernel without the file, and whether the driver counts cannot be told
/// without a host device in sysfs. Without tracefs the switch says why it has no trace.
#[test]
fn err_stats_deltas_of_a_run_and_of_a_switch() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, b"x").unwrap();
    let paths = MmcPaths::under(dir.path());
    let no_tracefs = || anyhow::bail!("tracefs is not mounted");
    let collector = Collector::open_with(&target, Some(&paths), no_tracefs);
    assert!(
        collector
            .meta()
            .err_stats
            .starts_with("none: this kernel has no "),
        "{}",
        collector.meta().err_stats
    );
    assert_eq!(collector.finish(collector.start()).unwrap().err_stats, None);

    std::fs::create_dir_all(&paths.host_debugfs).unwrap();
    let file = paths.host_debugfs.join("err_stats");
    let write = |crc: u32, timeouts: u32| {
        let text = format!(
            "# Command Timeout Occurred:\t {timeouts}\n# Data CRC Errors Occurred:\t {crc}\n"
        );
        std::fs::write(&file, text).unwrap();
    };
    write(0, 0);
    let collector = Collector::open_with(&target, Some(&paths), no_tracefs);
    assert_eq!(collector.meta().err_stats, file.display().to_string());
    assert!(
        collector
            .meta()
            .err_stats_counting
            .starts_with("unknown: no driver bound"),
        "{}",
        collector.meta().err_stats_counting
    );
    let started = collector.start();
    write(2, 1);
    let evidence = collector.finish(started).unwrap();
    assert_eq!(
        evidence.err_stats,
        Some(Ok(vec![
            ("Command Timeout Occurred".to_string(), 1),
            ("Data CRC Errors Occurred".to_string(), 2)
        ]))
    );
    let before = collector.err_stats_now().unwrap();
    let ((), trace) = collector.trace_switch(|| write(3, 1));
    assert_eq!(
        collector.err_stats_since(before),
        Ok(vec![("Data CRC Errors Occurred".to_string(), 1)])
    );
    assert_eq!(
        trace,
        Err("unavailable: tracefs is not mounted".to_string())
    );
    // --no-evidence: nothing is read, and the switch says evidence is off.
    let off = Collector::off();
    assert!(off.err_stats_now().is_none());
    let ((), trace) = off.trace_switch(|| ());
    assert_eq!(trace, Err("off (--no-evidence)".to_string()));
}

/// A run's progress line names a split into one-block requests with nothing failed (the
/// counts of tests/fixtures/results-sim-one-block's run 2: 30 writes of 64 KiB and 2 of
/// them as 128 CMD24 each), and not once a request failed or events were lost.
#[test]
fn the_progress_line_names_a_split_into_one_block_requests() {
    let mut trace = requests::RequestStats::default();
    trace.write.requests = 286;
    trace.write.sizes = [(512, 256), (65536, 30)].into();
    let mut block_stat = BlockStat::default();
    block_stat.write.ios = 32;
    let evidence = RunEvidence {
        block_stat: Ok(block_stat),
        trace: Ok(trace.clone()),
        packed: None,
        err_stats: None,
    };
    let line = evidence.summary();
    assert!(
        line.contains(", 256 one-block for 32 block I/Os (split)"),
        "{line}"
    );
    let mut failed = trace.clone();
    failed.write.errors = 1;
    let mut lost = trace;
    lost.lost_events = 3;
    for trace in [failed, lost] {
        let evidence = RunEvidence {
            trace: Ok(trace),
            ..evidence.clone()
        };
        assert!(
            !evidence.summary().contains("one-block"),
            "{}",
            evidence.summary()
        );
    }
}

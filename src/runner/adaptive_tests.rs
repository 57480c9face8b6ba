//! The --until-ci stopping rule on made-up runs: when a workload stops, what it
//! skips, the t interval it uses, and the replay of runs.csv on resume.

use super::*;

fn rule(configs: usize, workloads: usize, pct: f64, max: u32) -> Adaptive {
    Adaptive {
        target: pct / 100.0,
        max_repeat: max,
        configs,
        names: (0..workloads).map(|w| format!("w{w}")).collect(),
        cells: BTreeMap::new(),
        done: vec![false; workloads],
    }
}

fn one(a: &mut Adaptive, config: usize, workload: usize, mb: f64) -> Option<WorkloadStop> {
    a.add(
        config,
        workload,
        [(Direction::Write, 0.5, mb, mb * 8.0)].into_iter(),
    )
}

fn slot(config: usize, workload: usize) -> Slot {
    Slot {
        run: 1,
        config,
        workload,
        repetition: 1,
        warmup: false,
    }
}

#[test]
fn a_quiet_workload_stops_after_three_rounds_a_noisy_one_runs_on() {
    let mut a = rule(2, 2, 1.0, 10);
    let quiet = [100.0, 100.2, 99.9, 100.1];
    let noisy = [100.0, 120.0, 85.0, 110.0];
    for round in 0..3 {
        for (w, values) in [(0, quiet), (1, noisy)] {
            let first = one(&mut a, 0, w, values[round]);
            assert!(first.is_none(), "not before B has run its round");
            let second = one(&mut a, 1, w, values[round] * 1.01);
            if round == 2 && w == 0 {
                let stop = second.expect("quiet stops at the end of round 3");
                assert_eq!((stop.repetitions, stop.converged), (3, true));
                assert!(stop.half_width_pct <= 1.0, "{stop:?}");
            } else {
                assert!(second.is_none(), "round {round} workload {w}");
            }
        }
    }
    assert!(a.skips(&slot(0, 0)) && a.skips(&slot(1, 0)));
    assert!(!a.skips(&slot(0, 1)));
    let s = a.summary();
    assert_eq!((s.runs, s.fixed_runs), (12, 40));
    assert_eq!(s.seconds, 6.0);
    assert_eq!(s.fixed_seconds_estimate, 20.0);
    assert!(s.workloads[0].converged && !s.workloads[1].converged);
}

#[test]
fn the_target_uses_student_t() {
    // Three values with sd 1 around 100: half-width t(2) * 1 / sqrt(3) = 2.48%.
    let mut r = Running::default();
    for x in [99.0, 100.0, 101.0] {
        r.push(x);
    }
    let want = 4.302_652_729_911_275 / 3f64.sqrt() / 100.0;
    assert!((r.rel_half_width() - want).abs() < 1e-12);
    let mut a = rule(1, 1, 2.5, 10);
    let stops: Vec<_> = [99.0, 100.0, 101.0]
        .iter()
        .filter_map(|&x| one(&mut a, 0, 0, x))
        .collect();
    assert_eq!(stops.len(), 1);
    let mut strict = rule(1, 1, 2.4, 10);
    assert!([99.0, 100.0, 101.0]
        .iter()
        .all(|&x| one(&mut strict, 0, 0, x).is_none()));
}

fn row(run: u32, config: &str, workload: &str, job: &str, mb: f64, warmup: bool) -> RunRow {
    RunRow {
        repetition: 1,
        warmup,
        job: job.into(),
        seconds: 0.5,
        mb_per_s: mb,
        iops: mb * 8.0,
        ..RunRow::for_tests(run, config, workload, Direction::Write)
    }
}

/// A resumed run replays runs.csv (group rows, or a run's only job row; warm-ups
/// left out) to the state the interrupted run had.
#[test]
fn replaying_runs_csv_gives_the_same_state() {
    let values = [
        (0, 50.0),
        (1, 50.4),
        (0, 50.1),
        (1, 50.2),
        (0, 49.9),
        (1, 50.3),
    ];
    let mut live = rule(2, 1, 1.0, 10);
    let mut stops = 0;
    for (config, mb) in values {
        stops += usize::from(one(&mut live, config, 0, mb).is_some());
    }
    assert_eq!(stops, 1);
    let mut rows = vec![
        row(1, "A", "w0", "j", 10.0, true),
        row(2, "B", "w0", "j", 90.0, true),
    ];
    for (i, (config, mb)) in values.iter().enumerate() {
        let name = ["A", "B"][*config];
        let run = i as u32 + 3;
        rows.push(row(run, name, "w0", "j.0", mb / 2.0, false));
        rows.push(row(run, name, "w0", "j.1", mb / 2.0, false));
        rows.push(row(run, name, "w0", GROUP_JOB, *mb, false));
    }
    rows.push(row(9, "C", "w0", "j", 1.0, false));
    let mut replayed = rule(2, 1, 1.0, 10);
    replayed.replay(
        &rows,
        |c| ["A", "B"].iter().position(|x| *x == c),
        |w| (w == "w0").then_some(0),
    );
    assert!(replayed.skips(&slot(0, 0)));
    assert_eq!(replayed.summary(), live.summary());
}

#[test]
fn warmups_and_the_last_repetition_do_not_stop_anything() {
    let mut a = rule(1, 1, 50.0, 3);
    let warm = Slot {
        warmup: true,
        ..slot(0, 0)
    };
    let result = WorkloadResult {
        workload: "w0".into(),
        started_unix_s: 0.0,
        jobs: Vec::new(),
        group: Vec::new(),
        cpu_seconds: 0.0,
    };
    assert!(a.record(&warm, &result).is_none());
    assert!(a.cells.is_empty(), "warm-ups are not counted");
    // At --max-repeat the workload is simply finished: nothing left to skip.
    for x in [10.0, 10.0, 10.0] {
        assert!(one(&mut a, 0, 0, x).is_none());
    }
    assert!(a.summary().workloads[0].converged);
}

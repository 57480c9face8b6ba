//! What a fault scenario of tests/fixtures/faults/ left in the guest's /out/<name>/
//! (lib.sh's helpers write it), read by tests/guest/faults.rs and tests/guest/emmcsim_faults.rs.

use super::testbed::GuestRun;
use mmcab::record::{RunRow, GROUP_JOB};
use std::collections::BTreeSet;

/// What one scenario left in /out/<name>/.
pub struct Scenario<'a> {
    pub run: &'a GuestRun,
    pub name: &'static str,
}

impl Scenario<'_> {
    pub fn text(&self, file: &str) -> String {
        self.run.out_text(&format!("{}/{file}", self.name))
    }
    pub fn status(&self, file: &str) -> i32 {
        self.text(file).trim().parse().unwrap()
    }
    pub fn err(&self) -> String {
        self.text("run.err")
    }
    /// Run numbers in runs.csv as the failed run left it (each once: its group row),
    /// after parsing every row.
    pub fn recorded_runs(&self) -> BTreeSet<u32> {
        let copy = self.run.out_dir.join(self.name).join("runs-at-fault.csv");
        self.runs_in(if copy.exists() {
            "runs-at-fault.csv"
        } else {
            "res/runs.csv"
        })
    }
    /// Run numbers in runs.csv after --resume.
    pub fn resumed_runs(&self) -> BTreeSet<u32> {
        self.runs_in("res/runs.csv")
    }
    pub fn runs_in(&self, file: &str) -> BTreeSet<u32> {
        let text = self.text(file);
        let mut runs = BTreeSet::new();
        for row in csv::Reader::from_reader(text.as_bytes()).deserialize::<RunRow>() {
            let row = row.unwrap_or_else(|e| panic!("runs.csv does not parse: {e}\n{text}"));
            if row.job == GROUP_JOB {
                assert!(runs.insert(row.run), "run {} twice in runs.csv", row.run);
            }
        }
        runs
    }
    /// Runs mmcab said were done ("run 3/6 ..." progress lines).
    pub fn reported_runs(&self) -> BTreeSet<u32> {
        self.err()
            .lines()
            .filter_map(|l| l.strip_prefix("run "))
            .filter_map(|l| l.split('/').next()?.parse().ok())
            .collect()
    }
    /// Finished runs that are missing from runs.csv (goal: none).
    pub fn lost(&self) -> usize {
        self.reported_runs()
            .difference(&self.recorded_runs())
            .count()
    }
    /// The one `mmcab: error:` line, which must be the last line.
    pub fn error_line(&self) -> String {
        let err = self.err();
        let errors: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("mmcab: error:"))
            .collect();
        assert_eq!(errors.len(), 1, "one error line expected:\n{err}");
        assert_eq!(
            err.lines().last(),
            Some(errors[0]),
            "error not last:\n{err}"
        );
        errors[0].to_string()
    }
    pub fn meta_finished(&self) -> bool {
        let meta: serde_json::Value = self.run.out_json(&format!("{}/res/meta.json", self.name));
        !meta["finished_unix_s"].is_null()
    }
    /// The by-hand commands mmcab printed (extracted in the guest by lib.sh's byhand).
    pub fn byhand(&self) -> Vec<String> {
        self.text("byhand.sh").lines().map(str::to_string).collect()
    }
    /// Faults injected: the watcher's log lines of a command that succeeded.
    pub fn injections(&self) -> usize {
        self.text("res.log").matches("injected: status 0").count()
    }
    /// Lines of `err` that start with `prefix` and contain `cause`: the fault reported.
    pub fn reports(&self, prefix: &str, cause: &str) -> usize {
        self.err()
            .lines()
            .filter(|l| l.starts_with(prefix) && l.contains(cause))
            .count()
    }
    /// Knob values (one a line) that differ between two snapshots, over the lines of
    /// the first `n` knobs.
    pub fn left_changed(&self, before: &str, after: &str, n: usize) -> usize {
        let (before, after) = (self.text(before), self.text(after));
        let (b, a): (Vec<&str>, Vec<&str>) = (
            before.lines().take(n).collect(),
            after.lines().take(n).collect(),
        );
        (0..n).filter(|&i| b.get(i) != a.get(i)).count()
    }
    /// The fault was injected (the watcher's log says its command succeeded).
    pub fn injected(&self) {
        let log = self.text("res.log");
        assert!(log.contains("injected: status 0"), "{log}");
    }
    /// Exit status 5 with the manual-restore message for `knob`, whose text has `cause`,
    /// and exactly these by-hand commands.
    pub fn restore_failed(&self, knob: &str, cause: &str, commands: &[String]) {
        let err = self.err();
        assert_eq!(self.status("run.status"), 5, "{err}");
        let failed = format!("mmcab: restoring knob {knob} failed: ");
        assert!(
            err.lines()
                .any(|l| l.starts_with(&failed) && l.contains(cause))
                && err.contains("mmcab: restore the device by hand with these commands (as root):"),
            "{err}"
        );
        assert_eq!(self.byhand(), commands, "{err}");
    }
}

pub fn counts(name: &str, injected: usize, reported: usize, lost: usize, left_changed: usize) {
    eprintln!(
        "faults: {name}: injected {injected}, reported correctly {reported}, results lost \
         {lost}, knobs left changed {left_changed}"
    );
}

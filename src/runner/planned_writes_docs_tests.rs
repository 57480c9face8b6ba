//! docs/plans.md's table of the shipped plans against what each plan writes: the
//! "writes" column is what the safety pages link to, so a plan that moves its writes
//! (or a page that says "from offset 0" of a plan that does not) fails here.

use super::planned_writes;
use crate::runner::session::Session;
use crate::runner::RunOptions;
use std::path::Path;

const MIB: u64 = 1 << 20;

/// (plan file, "writes" column) of each row of "## The shipped plans".
fn documented() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/plans.md")).unwrap();
    let (_, rest) = text
        .split_once("\n## The shipped plans\n")
        .expect("docs/plans.md: no ## The shipped plans");
    let section = rest.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| [") && l.contains("../workloads/"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
            let file = cells[0]
                .split_once("](../workloads/")
                .and_then(|(_, r)| r.split_once(')'))
                .map(|(f, _)| f.to_string())
                .unwrap_or_else(|| panic!("docs/plans.md: no plan link in {l}"));
            (file, cells.last().unwrap().trim().to_string())
        })
        .collect()
}

/// "0 .. 4 MiB" -> Some((0, 4 MiB)); "nothing ..." -> None.
fn region(column: &str) -> Option<(u64, u64)> {
    if column.starts_with("nothing") {
        return None;
    }
    let (range, unit) = column
        .rsplit_once(' ')
        .unwrap_or_else(|| panic!("writes column {column:?}"));
    assert_eq!(unit, "MiB", "writes column {column:?}: give it in MiB");
    let (a, b) = range
        .split_once(" .. ")
        .unwrap_or_else(|| panic!("writes column {column:?}: want \"A .. B MiB\""));
    Some((
        a.parse::<u64>().unwrap() * MIB,
        b.parse::<u64>().unwrap() * MIB,
    ))
}

#[test]
fn every_shipped_plan_writes_where_plans_md_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows = documented();
    let mut shipped: Vec<String> = std::fs::read_dir(root.join("workloads"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    shipped.sort();
    let mut listed: Vec<String> = rows.iter().map(|(f, _)| f.clone()).collect();
    listed.sort();
    assert_eq!(
        listed, shipped,
        "docs/plans.md lists every shipped plan once"
    );

    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.img");
    std::fs::File::create(&target)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    for (file, column) in rows {
        let opts = RunOptions {
            plan: Some(root.join("workloads").join(&file)),
            device: Some(target.clone()),
            dry_run: true,
            ..RunOptions::default()
        };
        let session = Session::fresh(&opts, true).unwrap();
        let writes =
            planned_writes(&session).unwrap_or_else(|e| panic!("{file}: planned writes: {e:#}"));
        // mmc_test's area is where the card's capacity puts it: said after the plan's own.
        let (column, mmc_test) = match column.split_once("; mmc_test: ") {
            Some((own, area)) => (own.to_string(), Some(area.to_string())),
            None => (column, None),
        };
        let is_mmc_test = |w: &&super::PlannedWrite| {
            session
                .plan
                .workload
                .iter()
                .any(|s| s.name == w.workload && s.uses_mmc_test())
        };
        if let Some(area) = mmc_test {
            assert!(
                area.starts_with("4 MiB at half the capacity"),
                "{file}: mmc_test's area {area:?}"
            );
            let half = (1u64 << 30) / 2;
            assert!(
                writes
                    .iter()
                    .filter(is_mmc_test)
                    .all(|w| (w.start, w.end) == (half, half + 4 * MIB)),
                "{file}: mmc_test writes {writes:?}"
            );
        }
        let actual = writes
            .iter()
            .filter(|w| !is_mmc_test(w))
            .map(|w| (w.start, w.end))
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
        assert_eq!(
            actual,
            region(&column),
            "{file}: docs/plans.md says it writes {column:?}"
        );
    }
}

//! The open-AU estimate on the BeagleBone post's published runs (answer: 5 units kept
//! open, linear and random, as the post concludes), and the method against a model.

use super::*;
use crate::probe::align::Confidence;
use crate::probe::flashbench;

fn seed_runs() -> Vec<OpenAuRun> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/reference/beaglebone-2013-flashbench.txt");
    let p = flashbench::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    p.open_au
}

#[test]
fn the_published_beaglebone_runs_keep_5_units_open_as_the_post_concludes() {
    let runs = seed_runs();
    let summary: Vec<(u32, bool, usize, bool)> = runs
        .iter()
        .map(|r| (r.nr, r.random, r.points.len(), r.interrupted))
        .collect();
    assert_eq!(
        summary,
        [
            (1, false, 9, false),
            (5, false, 9, false),
            (6, false, 4, true),
            (5, true, 9, false),
            (6, true, 5, true)
        ]
    );
    for random in [false, true] {
        let e = estimate(&runs, random).unwrap();
        assert_eq!(e.open, Some(5), "random {random}: {e:?}");
        assert_eq!(e.confidence, Confidence::High);
        let (nr, c) = e.collapsed.unwrap();
        assert_eq!((nr, c.size), (6, 256 << 10), "random {random}: {c:?}");
    }
    // Five units alone (linear), judged against one: no collapse (its drop at 16 KiB
    // is one halving, not a fall with every halving).
    assert_eq!(collapse(&runs[1], Some(&runs[0])), None);
}

/// A controller that keeps `open` units open: a write into a unit that is not open
/// closes one, costing a fixed copy time; otherwise writes cost per byte.
struct Controller {
    open: usize,
    eb: u64,
    lru: Vec<u64>,
}

impl WriteTimer for Controller {
    fn time_write(&mut self, pos: u64, len: u64) -> anyhow::Result<u64> {
        let unit = pos / self.eb;
        let mut ns = 50_000 + len * 200; // 5 MB/s and 50 us per command
        if let Some(i) = self.lru.iter().position(|u| *u == unit) {
            self.lru.remove(i);
        } else if self.lru.len() >= self.open {
            self.lru.remove(0);
            ns += 400_000_000; // copying a unit: 0.4 s
        }
        self.lru.push(unit);
        Ok(ns)
    }
}

#[test]
fn find_on_a_model_controller_counts_its_open_units() {
    let eb = 1 << 20;
    let opts = OpenAuOptions {
        erase_size: eb,
        blocksize: 16 << 10,
        offset: None,
        random: false,
        units: Units::Find { max: 8 },
    };
    let mut c = Controller {
        open: 3,
        eb,
        lru: Vec::new(),
    };
    let mut runs: Vec<OpenAuRun> = Vec::new();
    for nr in 1..=8 {
        let reference = runs.first().cloned();
        let run = run(&mut c, &opts, nr, reference.as_ref(), &mut |_| {}).unwrap();
        let stop = collapse(&run, reference.as_ref()).is_some();
        runs.push(run);
        if stop {
            break;
        }
    }
    assert_eq!(runs.len(), 4, "stops at the first collapse (4 units)");
    assert!(runs[3].interrupted, "the collapsed run stops early");
    let e = estimate(&runs, false).unwrap();
    assert_eq!((e.open, e.confidence), (Some(3), Confidence::High), "{e:?}");
}

#[test]
fn units_must_fit_on_the_device() {
    let opts = OpenAuOptions {
        erase_size: 4 << 20,
        blocksize: 16 << 10,
        offset: None,
        random: false,
        units: Units::Nr(6),
    };
    assert_eq!(opts.offset(), 16 << 20);
    // 16 MiB + 5 x 48 MiB + 4 MiB = 260 MiB: not on 256 MiB, at most 5 units.
    let err = opts.check(256 << 20, 512).unwrap_err().to_string();
    assert!(err.contains("at most 5 fit"), "{err}");
    assert_eq!(opts.check(1 << 30, 512).unwrap(), 21);
    assert_eq!(fixed_order(5).len(), 5);
    let mut o = fixed_order(256);
    o.sort();
    assert_eq!(o, (0..256).collect::<Vec<_>>());
}

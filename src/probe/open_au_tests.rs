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
/// closes one, costing `copy_ns`; every write costs `command_ns` per command and
/// 200 ns per byte (5 MB/s).
struct Controller {
    open: usize,
    eb: u64,
    lru: Vec<u64>,
    command_ns: u64,
    copy_ns: u64,
}

impl WriteTimer for Controller {
    fn time_write(&mut self, pos: u64, len: u64) -> anyhow::Result<u64> {
        let unit = pos / self.eb;
        let mut ns = self.command_ns + len * 200;
        if let Some(i) = self.lru.iter().position(|u| *u == unit) {
            self.lru.remove(i);
        } else if self.lru.len() >= self.open {
            self.lru.remove(0);
            ns += self.copy_ns;
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
        allow_write: true,
        overwrite_data: false,
    };
    let mut c = Controller {
        open: 3,
        eb,
        lru: Vec::new(),
        command_ns: 50_000,
        copy_ns: 400_000_000,
    };
    let runs = runs(&mut c, &opts, 8, &mut |_| {}).unwrap();
    assert_eq!(runs.len(), 4, "stops at the first collapse (4 units)");
    assert!(runs[3].interrupted, "the collapsed run stops early");
    let e = estimate(&runs, false).unwrap();
    assert_eq!((e.open, e.confidence), (Some(3), Confidence::High), "{e:?}");
}

/// A card whose writes are bound by a fixed cost per command (1 s, against 200 ns a
/// byte: 0.2 s for the largest write): MB/s nearly halves with every halving of the
/// write size already with one unit. The one-unit run is the reference, not a
/// collapse: --find goes on to the real limit.
#[test]
fn find_on_a_latency_bound_controller_does_not_stop_at_one_unit() {
    let eb = 1 << 20;
    let opts = OpenAuOptions {
        erase_size: eb,
        blocksize: 16 << 10,
        offset: None,
        random: false,
        units: Units::Find { max: 8 },
        allow_write: true,
        overwrite_data: false,
    };
    let mut c = Controller {
        open: 4,
        eb,
        lru: Vec::new(),
        command_ns: 1_000_000_000,
        copy_ns: 4_000_000_000,
    };
    let runs = runs(&mut c, &opts, 8, &mut |_| {}).unwrap();
    let one = &runs[0];
    assert!(
        one.points
            .windows(2)
            .skip(2)
            .all(|w| w[1].mb_per_s < 0.6 * w[0].mb_per_s),
        "latency bound: MB/s halves with the size: {one:?}"
    );
    assert_eq!(collapse(one, None), None, "the reference never collapses");
    assert_eq!(runs.len(), 5, "stops at 5 units, the first over the limit");
    let e = estimate(&runs, false).unwrap();
    assert_eq!((e.open, e.confidence), (Some(4), Confidence::High), "{e:?}");
}

#[test]
fn options_are_checked_before_the_device_is_opened() {
    let ok = OpenAuOptions {
        erase_size: 2 << 20,
        blocksize: 8 << 10,
        offset: None,
        random: false,
        units: Units::Nr(5),
        allow_write: false,
        overwrite_data: false,
    };
    ok.validate().unwrap();
    for (bad, word) in [
        (
            OpenAuOptions {
                erase_size: 0,
                ..ok
            },
            "--erase-size 0",
        ),
        (
            OpenAuOptions {
                erase_size: 3 << 20,
                ..ok
            },
            "powers of two",
        ),
        (
            OpenAuOptions {
                erase_size: 128 << 20,
                ..ok
            },
            "at most 64MiB",
        ),
        (
            OpenAuOptions {
                blocksize: 4 << 20,
                ..ok
            },
            "blocksize at most",
        ),
        (
            OpenAuOptions {
                units: Units::Nr(0),
                ..ok
            },
            "--nr 0",
        ),
        (
            OpenAuOptions {
                units: Units::Find { max: 1 },
                ..ok
            },
            "--max-nr 1",
        ),
    ] {
        let err = bad.validate().unwrap_err().to_string();
        assert!(err.contains(word), "{word}: {err}");
    }
}

#[test]
fn units_must_fit_on_the_device() {
    let opts = OpenAuOptions {
        erase_size: 4 << 20,
        blocksize: 16 << 10,
        offset: None,
        random: false,
        units: Units::Nr(6),
        allow_write: true,
        overwrite_data: false,
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

//! `probe align` and `probe open-au` scored against the simulated card's flash geometry
//! (testbed/emmcsim/flash.c): one Linux 7.x boot with `--icount 1`, the geometry set
//! through the module's run-time parameters between probes. mmcab learns it only from
//! the timing, as on a real card: the card's EXT_CSD erase group stays 512 KiB whatever
//! the model's erase block is, and nothing here tells mmcab the truth (`open-au` is given
//! the erase size, as flashbench is, because finding it is `align`'s job).
//!
//! - align: erase blocks of 512 KiB, 2 MiB (with a 64 KiB page step) and 4 MiB are
//!   found with high confidence; with no boundary cost the answer is "none".
//! - open-au --find: 3, 5 and 7 open units, with erase blocks of 512 KiB, 1 MiB and
//!   2 MiB, are found with high confidence (the run with one unit more collapses).

use crate::common::testbed;

use mmcab::probe::align::{self, Confidence};
use mmcab::probe::open_au;
use mmcab::probe::record::ProbeRecord;

const PARAMS: &str = "/sys/module/emmcsim/parameters";

struct AlignSet {
    name: &'static str,
    erase_block_kib: u64,
    page_kib: u64,
    boundary_ns: u64,
    page_boundary_ns: u64,
    /// What `probe align` must say: erase block and page-like boundary, bytes.
    want_erase_block: Option<u64>,
    want_page: Option<u64>,
}

const ALIGN_SETS: &[AlignSet] = &[
    AlignSet {
        name: "eb512k",
        erase_block_kib: 512,
        page_kib: 16,
        boundary_ns: 150_000,
        page_boundary_ns: 0,
        want_erase_block: Some(512 << 10),
        want_page: None,
    },
    AlignSet {
        name: "eb2m-page64k",
        erase_block_kib: 2048,
        page_kib: 64,
        boundary_ns: 200_000,
        page_boundary_ns: 50_000,
        want_erase_block: Some(2 << 20),
        want_page: Some(64 << 10),
    },
    AlignSet {
        name: "eb4m",
        erase_block_kib: 4096,
        page_kib: 16,
        boundary_ns: 80_000,
        page_boundary_ns: 0,
        want_erase_block: Some(4 << 20),
        want_page: None,
    },
    AlignSet {
        name: "no-cost",
        erase_block_kib: 4096,
        page_kib: 16,
        boundary_ns: 0,
        page_boundary_ns: 0,
        want_erase_block: None,
        want_page: None,
    },
];

struct OpenAuSet {
    name: &'static str,
    erase_block_kib: u64,
    open_aus: u32,
}

const OPEN_AU_SETS: &[OpenAuSet] = &[
    OpenAuSet {
        name: "eb512k-open3",
        erase_block_kib: 512,
        open_aus: 3,
    },
    OpenAuSet {
        name: "eb1m-open5",
        erase_block_kib: 1024,
        open_aus: 5,
    },
    OpenAuSet {
        name: "eb2m-open7",
        erase_block_kib: 2048,
        open_aus: 7,
    },
];

/// Writes cheaper than the default calibration so that --find's many writes fit in a
/// test; a unit's garbage collection (10 ms) costs many small writes, as on real cards.
/// (With 3 ms, under 4x a 64 KiB write here, MB/s fell to 62% from 64 to 32 KiB: short
/// of the two halvings in a row at <= 60% that `probe open-au` calls a collapse.)
const OPEN_AU_TIMING: &[(&str, u64)] = &[
    ("write_access_ns", 200_000),
    ("program_ns_per_kib", 10_000),
    ("gc_ns", 10_000_000),
    ("boundary_ns", 0),
    ("page_boundary_ns", 0),
];

fn set(name: &str, value: u64) -> String {
    format!("echo {value} > {PARAMS}/{name}\n")
}

fn script() -> String {
    let mut s = String::from("set -e\n");
    for a in ALIGN_SETS {
        s += &set("erase_block_kib", a.erase_block_kib);
        s += &set("page_kib", a.page_kib);
        s += &set("boundary_ns", a.boundary_ns);
        s += &set("page_boundary_ns", a.page_boundary_ns);
        s += &format!(
            "mmcab probe align /dev/mmcblk0 --quiet --out /out/align-{} >/dev/null\n",
            a.name
        );
    }
    for (name, value) in OPEN_AU_TIMING {
        s += &set(name, *value);
    }
    for o in OPEN_AU_SETS {
        s += &set("erase_block_kib", o.erase_block_kib);
        s += &set("open_aus", u64::from(o.open_aus));
        s += &format!(
            "mmcab probe open-au /dev/mmcblk0 --erase-size {}K --find --max-nr {} \
             --allow-write --quiet --out /out/open-au-{} >/dev/null\n",
            o.erase_block_kib,
            o.open_aus + 2,
            o.name
        );
    }
    s += "cat /sys/kernel/debug/emmcsim/stats > /out/stats.txt\n";
    s
}

fn record(run: &testbed::GuestRun, dir: &str) -> ProbeRecord {
    serde_json::from_value(run.out_json(&format!("{dir}/probe.json"))).unwrap()
}

fn check_align(run: &testbed::GuestRun, a: &AlignSet) -> Result<String, String> {
    let rec = record(run, &format!("align-{}", a.name));
    let e = align::estimate(&rec.align);
    let line = format!(
        "{}: erase block {:?} ({:?}, score {:.1}), page {:?} ({:?})",
        a.name,
        e.erase_block.bytes,
        e.erase_block.confidence,
        e.erase_block.score,
        e.page.bytes,
        e.page.confidence
    );
    let eb_ok = match a.want_erase_block {
        Some(_) => {
            e.erase_block.bytes == a.want_erase_block
                && e.erase_block.confidence == Confidence::High
        }
        None => e.erase_block.bytes.is_none() && e.erase_block.confidence == Confidence::None,
    };
    let page_ok = e.page.bytes == a.want_page;
    let report = run.out_text(&format!("align-{}/report.txt", a.name));
    let said = match a.want_erase_block {
        Some(b) => format!(
            "Erase block: {} (high confidence)",
            mmcab::units::format_size(b)
        ),
        None => "Erase block: none".to_string(),
    };
    if eb_ok && page_ok && report.contains(&said) {
        Ok(line)
    } else {
        Err(format!(
            "{line}; want erase block {:?} (high), page {:?}, report saying {said:?}:\n{report}",
            a.want_erase_block, a.want_page
        ))
    }
}

fn check_open_au(run: &testbed::GuestRun, o: &OpenAuSet) -> Result<String, String> {
    let rec = record(run, &format!("open-au-{}", o.name));
    let e = open_au::estimate(&rec.open_au, false).ok_or("no linear-order runs")?;
    let line = format!(
        "{}: open {:?} ({:?}), collapsed at {:?}",
        o.name,
        e.open,
        e.confidence,
        e.collapsed.as_ref().map(|(n, c)| (n, c.size))
    );
    if e.open == Some(o.open_aus) && e.confidence == Confidence::High {
        Ok(line)
    } else {
        let report = run.out_text(&format!("open-au-{}/report.txt", o.name));
        Err(format!(
            "{line}; want {} open (high):\n{report}",
            o.open_aus
        ))
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn align_and_open_au_find_the_simulated_geometry() {
    let run = testbed::Guest::new("emmcsim_geometry")
        .kernel("7")
        .card("sim")
        .icount(1)
        .timeout(std::time::Duration::from_secs(1500))
        .run(&script());
    run.assert_success();
    let mut lines = Vec::new();
    let mut failed = Vec::new();
    for a in ALIGN_SETS {
        match check_align(&run, a) {
            Ok(l) => lines.push(l),
            Err(e) => failed.push(e),
        }
    }
    for o in OPEN_AU_SETS {
        match check_open_au(&run, o) {
            Ok(l) => lines.push(l),
            Err(e) => failed.push(e),
        }
    }
    let stats = run.out_text("stats.txt");
    eprintln!(
        "{}\nguest {:.1} s wall\n{stats}",
        lines.join("\n"),
        run.wall.as_secs_f64()
    );
    assert!(
        stats.contains("erase_block_crossings ") && !stats.contains("au_gcs 0\n"),
        "the card counted no boundary crossings or no garbage collections:\n{stats}"
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

//! Tests of [`super`] (probe_text.rs).

use super::*;
use crate::probe::align::Confidence;
use crate::probe::flashbench;
use crate::probe::measure::published_records;
use crate::report::load;
use crate::report::render::text;

/// The mail text of `r`'s report, alone.
fn mail(r: &ProbeRecord) -> String {
    text::render(&load::probe::build(r, &[]))
}

#[test]
fn times_print_as_flashbench_does() {
    assert_eq!(time(982.0), "982ns");
    assert_eq!(time(57_400.0), "57.4us");
    assert_eq!(time(1_030_000.0), "1.03ms");
    assert_eq!(time(1_000_000.0), "1ms");
    assert_eq!(time(448_000.0), "448us");
    assert_eq!(g3(0.927), "0.927");
    assert_eq!(g3(2.5), "2.5");
}

/// Published zeros are flagged in the mail text (which still fits 72 columns) and
/// make no estimate: a run of zeros is no collapse.
#[test]
fn published_zeros_are_flagged_and_not_estimated() {
    let text = "$ ./flashbench -a /dev/sda align 8192 pre 0ns on 0ns post 0ns diff 0ns \
        align 4096 pre 1ms on 1ms post 1ms diff 0ns\n\
        $ ./flashbench /dev/sda --open-au --open-au-nr=1 2MiB 2M/s 1MiB 2M/s 512KiB 2M/s\n\
        $ ./flashbench /dev/sda --open-au --open-au-nr=5 2MiB 4M/s 1MiB 0B/s 512KiB 0B/s \
        256KiB 0B/s\n";
    let records = published_records(&flashbench::parse(text).unwrap());
    let align = mail(&records[0]);
    assert!(
        align.contains("0ns (no time)") && align.contains("(no time: a time of 0"),
        "{align}"
    );
    let au = mail(&records[1]);
    assert!(
        au.contains("0*") && au.contains("*: no rate measured"),
        "{au}"
    );
    assert!(au.contains("no collapse up to 5 units"), "{au}");
    assert!(au.lines().all(|l| l.len() <= MAX_COLUMNS), "{au}");
}

#[test]
fn confidence_words_are_said() {
    let b = Boundary {
        bytes: Some(2 << 20),
        confidence: Confidence::High,
        high_ns: 442_000.0,
        low_ns: 57_000.0,
        score: 14.8,
        relative: 0.39,
        n_high: 9,
        n_low: 10,
    };
    let t = boundary_text("Erase block", &b, 985_000.0);
    assert!(t.starts_with("Erase block: 2MiB (high confidence)"), "{t}");
}

/// Disturbed rows are flagged "(slow)" and left out; rows measured again are listed.
#[test]
fn slow_and_remeasured_rows_are_said() {
    let text = "$ ./flashbench -a /dev/sda align 131072 pre 40us on 45us post 40us diff 5us \
        align 65536 pre 10us on 10us post 10us diff 0ns \
        align 32768 pre 10us on 10us post 10us diff 0ns \
        align 16384 pre 10us on 10us post 10us diff 0ns \
        align 8192 pre 10us on 10us post 10us diff 0ns\n";
    let mut records = published_records(&flashbench::parse(text).unwrap());
    records[0].align[0].remeasured = 3;
    records[0].align[1].remeasured = 1;
    let t = mail(&records[0]);
    assert!(t.contains("5us (slow)"), "{t}");
    assert!(t.contains("slow: plain reads over 2x"), "{t}");
    assert!(
        t.contains("keeping the faster: 128KiB (3x), 64KiB (1x))"),
        "{t}"
    );
    assert!(t.contains("Erase block: none"), "{t}");
    assert!(t.lines().all(|l| l.len() <= MAX_COLUMNS), "{t}");
}

//! Tests of [`super`] (lines.rs).

use super::*;

/// No two tick labels of a log axis overlap, for ranges from a third of a decade to
/// six decades and plot widths from 200 to 1400 px (9000 and 10000 collided before).
#[test]
fn log_tick_labels_never_collide() {
    let mut ranges = vec![(700.0, 3500.0), (3000.0, 15000.0), (8000.0, 11000.0)];
    for lo in [1.0, 3.0, 7.0, 45.0, 900.0, 8500.0] {
        for decades in [0.15, 0.3, 0.7, 1.0, 1.7, 2.5, 4.0, 6.0] {
            ranges.push((lo, lo * 10f64.powf(decades)));
        }
    }
    for (lo, hi) in ranges {
        for width in [200.0, 300.0, 420.0, 670.0, 1400.0] {
            let ticks = log_ticks(lo, hi, width);
            assert!(ticks.len() >= 2, "{lo}..{hi} at {width}px: {ticks:?}");
            let span = (hi / lo).ln();
            let edges: Vec<(f64, f64)> = ticks
                .iter()
                .map(|v| {
                    let x = (v / lo).ln() / span * width;
                    let half = axis_value(*v).len() as f64 * TICK_CHAR_PX / 2.0;
                    (x - half, x + half)
                })
                .collect();
            for w in edges.windows(2) {
                assert!(
                    w[0].1 + TICK_GAP_PX <= w[1].0,
                    "{lo}..{hi} at {width}px: labels of {ticks:?} overlap"
                );
            }
        }
    }
}

#[test]
fn nice_ticks_step_by_1_2_5() {
    assert_eq!(
        nice_ticks(0.0, 35000.0, 6),
        vec![0.0, 10000.0, 20000.0, 30000.0]
    );
    assert_eq!(nice_ticks(0.0, 4.3, 6), vec![0.0, 1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn log_ticks_label_narrow_and_wide_ranges() {
    assert_eq!(
        log_ticks(3.0, 600.0, 670.0),
        vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
    );
    assert_eq!(
        log_ticks(700.0, 3500.0, 670.0),
        vec![700.0, 800.0, 900.0, 1000.0, 2000.0, 3000.0]
    );
    let narrow = log_ticks(1100.0, 1900.0, 670.0);
    assert_eq!(narrow.len(), 4);
    assert!(
        narrow.iter().all(|v| (1100.0..=1900.0).contains(v)),
        "{narrow:?}"
    );
    assert!(narrow.windows(2).all(|w| w[0] < w[1]), "{narrow:?}");
}

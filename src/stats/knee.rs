//! A knee in a write run's rate: the rate falls part-way to a lower level and stays
//! there, as it does when a write buffer (a pSLC area, a volatile cache) fills and the
//! writes go at the flash's own rate from then on. Found in the run's series.csv bins.
//!
//! The split is the one change point that leaves the least squared error (the bins
//! before at one level, the bins after at another); it is a knee when the level after
//! is at most [`KNEE_RATIO`] of the level before (medians) and the two do not overlap
//! (the after part's 90th percentile under the before part's 10th), each side at least
//! [`MIN_BINS`] bins. A rate that only wanders, or falls in one bin and comes back, is
//! no knee.

use super::median;

/// Bins each side of a knee needs.
pub const MIN_BINS: usize = 3;
/// The level after a knee is at most this share of the level before.
pub const KNEE_RATIO: f64 = 0.7;

/// Where a series of rates falls for good.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knee {
    /// The first bin after the fall.
    pub at: usize,
    /// Median rate before and after.
    pub before: f64,
    pub after: f64,
}

/// The knee of `rates` (one per bin, in time order), if it has one.
pub fn knee(rates: &[f64]) -> Option<Knee> {
    let n = rates.len();
    if n < 2 * MIN_BINS || rates.iter().any(|r| !r.is_finite()) {
        return None;
    }
    let (mut sum, mut sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, r) in rates.iter().enumerate() {
        sum[i + 1] = sum[i] + r;
        sq[i + 1] = sq[i] + r * r;
    }
    let sse = |a: usize, b: usize| {
        let (s, m) = (sum[b] - sum[a], (b - a) as f64);
        sq[b] - sq[a] - s * s / m
    };
    let at = (MIN_BINS..=n - MIN_BINS)
        .min_by(|&a, &b| (sse(0, a) + sse(a, n)).total_cmp(&(sse(0, b) + sse(b, n))))?;
    let (head, tail) = rates.split_at(at);
    let (before, after) = (median(head), median(tail));
    let separated = quantile(tail, 0.9) < quantile(head, 0.1);
    (after <= KNEE_RATIO * before && separated).then_some(Knee { at, before, after })
}

/// The `q` quantile of `xs` (linear between order statistics).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let x = q * (v.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic wobble of +-`amp` around 1 (no random source in the tests).
    fn wobble(i: usize, amp: f64) -> f64 {
        1.0 + amp * ((i * 7919 % 13) as f64 / 6.0 - 1.0)
    }

    #[test]
    fn a_buffer_that_fills_is_a_knee_where_it_fills() {
        let rates: Vec<f64> = (0..40)
            .map(|i| if i < 12 { 250.0 } else { 60.0 } * wobble(i, 0.08))
            .collect();
        let k = knee(&rates).unwrap();
        assert_eq!(k.at, 12);
        assert!((k.before / 250.0 - 1.0).abs() < 0.08, "{k:?}");
        assert!((k.after / 60.0 - 1.0).abs() < 0.08, "{k:?}");
    }

    #[test]
    fn noise_a_dip_a_slow_start_and_a_short_series_are_no_knee() {
        let flat: Vec<f64> = (0..40).map(|i| 100.0 * wobble(i, 0.2)).collect();
        assert_eq!(knee(&flat), None);
        let mut dip = flat.clone();
        dip[20] = 10.0;
        assert_eq!(knee(&dip), None, "one slow bin");
        let rising: Vec<f64> = (0..40).map(|i| if i < 10 { 50.0 } else { 100.0 }).collect();
        assert_eq!(knee(&rising), None, "a rate that rises");
        let small: Vec<f64> = (0..40).map(|i| if i < 20 { 100.0 } else { 85.0 }).collect();
        assert_eq!(knee(&small), None, "a fall of 15% is not a buffer");
        assert_eq!(
            knee(&[100.0, 100.0, 100.0, 10.0, 10.0]),
            None,
            "too few bins"
        );
        // Overlapping levels: falls by half on average, but the bins overlap.
        let overlap: Vec<f64> = (0..40)
            .map(|i| if i < 20 { 100.0 } else { 50.0 } * if i % 2 == 0 { 1.6 } else { 0.4 })
            .collect();
        assert_eq!(knee(&overlap), None);
    }
}

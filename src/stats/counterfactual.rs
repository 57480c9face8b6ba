//! The data without the cause of a warning: what a config's values would have been
//! without their drift or without the one run their noise comes from. `report::model::warnings` retests a change
//! with them and warns only when the verdict moves (docs/statistics.md, "Warnings").
//!
//! Values come with their group (the boot a run belongs to; one group within a
//! results directory), so that what is taken out of a boot's runs stays in that boot.

use super::{mean, median};

/// Values with a linear drift taken out: each value moved along `slope` (per step of
/// `order`) from its own place in the order to `to`, the place where the other side
/// of the comparison was measured on average. Its mean moves by slope x (to - mean
/// order): the bias the drift put on a comparison with that side.
pub fn detrend(values: &[f64], order: &[f64], slope: f64, to: f64) -> Vec<f64> {
    values
        .iter()
        .zip(order)
        .map(|(v, x)| v - slope * (x - to))
        .collect()
}

/// The values of group `g`, in order.
fn of_group(values: &[f64], group: &[usize], g: usize) -> Vec<f64> {
    values
        .iter()
        .zip(group)
        .filter(|(_, k)| **k == g)
        .map(|(v, _)| *v)
        .collect()
}

/// Mean of each group, indexed by group number (NaN for a group with no value).
fn group_means(values: &[f64], group: &[usize]) -> Vec<f64> {
    let groups = group.iter().max().map_or(0, |g| g + 1);
    (0..groups)
        .map(|g| mean(&of_group(values, group, g)))
        .collect()
}

/// The value farthest from its group's median (relative to that median), among groups
/// that keep at least two values without it; None when no group has three.
pub fn outlier(values: &[f64], group: &[usize]) -> Option<usize> {
    let groups = group.iter().max().map_or(0, |g| g + 1);
    let mut medians = vec![f64::NAN; groups];
    let mut sizes = vec![0usize; groups];
    for (g, (m, size)) in medians.iter_mut().zip(sizes.iter_mut()).enumerate() {
        let of = of_group(values, group, g);
        *m = median(&of);
        *size = of.len();
    }
    let far = |i: usize| ((values[i] - medians[group[i]]) / medians[group[i]]).abs();
    (0..values.len())
        .filter(|&i| sizes[group[i]] >= 3 && far(i).is_finite())
        .max_by(|&i, &j| far(i).total_cmp(&far(j)).then(j.cmp(&i)))
}

/// The pooled CV of runs within their groups: sqrt(pooled within-group variance) / the
/// mean of the group means; the sample's own CV for one group. NaN without spread.
pub fn within_cv(values: &[f64], group: &[usize]) -> f64 {
    let means = group_means(values, group);
    let ss: f64 = values
        .iter()
        .zip(group)
        .map(|(v, g)| (v - means[*g]).powi(2))
        .sum();
    let used = means.iter().filter(|m| !m.is_nan()).count();
    let df = values.len() as f64 - used as f64;
    if df <= 0.0 {
        return f64::NAN;
    }
    let grand = mean(
        &means
            .iter()
            .copied()
            .filter(|m| !m.is_nan())
            .collect::<Vec<_>>(),
    );
    (ss / df).sqrt() / grand.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detrending_moves_the_mean_by_the_bias() {
        // Runs 1, 3, 5 falling 1 per run; the other side's mean run order is 4.
        let v = [10.0, 8.0, 6.0];
        let d = detrend(&v, &[1.0, 3.0, 5.0], -1.0, 4.0);
        assert_eq!(d, vec![7.0, 7.0, 7.0]);
        // The bias: slope x (mean order - to) = -1 x (3 - 4) = +1 on the mean.
        assert_eq!(mean(&v) - mean(&d), 1.0);
    }

    #[test]
    fn the_within_cv_pools_the_groups() {
        let v = [9.0, 11.0, 19.0, 21.0];
        // Within-group sd sqrt((1 + 1 + 1 + 1) / 2), over the mean of the means 15.
        assert!((within_cv(&v, &[0, 0, 1, 1]) - 2f64.sqrt() / 15.0).abs() < 1e-12);
        // One group: the sample's CV.
        let one = [9.0, 10.0, 11.0];
        assert!((within_cv(&one, &[0, 0, 0]) - super::super::cv(&one)).abs() < 1e-12);
    }

    #[test]
    fn the_outlier_is_the_farthest_from_its_median_in_a_group_of_three() {
        assert_eq!(outlier(&[10.0, 10.5, 14.0, 9.9], &[0; 4]), Some(2));
        // A group of two would keep one value: never dropped from.
        assert_eq!(
            outlier(&[10.0, 30.0, 5.0, 5.1, 5.3], &[0, 0, 1, 1, 1]),
            Some(4)
        );
        // Ties: the earlier run.
        assert_eq!(outlier(&[4.0, 5.0, 6.0], &[0; 3]), Some(0));
        assert_eq!(outlier(&[10.0, 30.0], &[0, 0]), None);
    }
}

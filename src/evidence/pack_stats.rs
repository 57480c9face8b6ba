//! `wr_pack_stats`, the packed-write statistics in the card's debugfs directory of
//! vendor kernels that kept packed commands (e.g. the msm trees; mainline removed packing
//! in v4.10). Their `mmc_wr_pack_stats_read()` prints `<host>: Packed N reqs - M times`
//! per pack size N, and nothing while the statistics are disabled (`echo 1 >` the file
//! enables them; the `packing` knob does).

use std::collections::BTreeMap;

/// `Packed N reqs - M times` lines: N -> M.
pub fn parse(text: &str) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(at) = line.find("Packed ") else {
            continue;
        };
        let words: Vec<&str> = line[at..].split_whitespace().collect();
        // ["Packed", N, "reqs", "-", M, "times"]
        if words.len() >= 6 && words[2] == "reqs" && words[3] == "-" {
            if let (Ok(n), Ok(m)) = (words[1].parse::<u64>(), words[4].parse::<u64>()) {
                out.insert(n, m);
            }
        }
    }
    out
}

/// Packed writes between two readings: (packed commands, requests inside them). Packs
/// of one request are plain writes and do not count.
pub fn delta(before: &str, after: &str) -> (u64, u64) {
    let before = parse(before);
    let mut commands = 0;
    let mut requests = 0;
    for (n, m) in parse(after) {
        let d = m.saturating_sub(*before.get(&n).unwrap_or(&0));
        if n >= 2 {
            commands += d;
            requests += n * d;
        }
    }
    (commands, requests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendor_kernel_fixture_parses_and_deltas() {
        let path = format!(
            "{}/tests/fixtures/vendor-packing/sys/kernel/debug/mmc0/mmc0:0001/wr_pack_stats",
            env!("CARGO_MANIFEST_DIR")
        );
        let before = std::fs::read_to_string(&path).unwrap();
        let stats = parse(&before);
        assert_eq!(stats[&2], 14);
        assert_eq!(stats[&17], 2);
        // A run that packed 5 more pairs and 1 more group of 17.
        let after = before
            .replace("Packed 2 reqs - 14 times", "Packed 2 reqs - 19 times")
            .replace("Packed 17 reqs - 2 times", "Packed 17 reqs - 3 times");
        assert_eq!(delta(&before, &after), (6, 5 * 2 + 17));
        assert_eq!(delta(&after, &after), (0, 0));
        assert_eq!(delta("", ""), (0, 0));
    }
}

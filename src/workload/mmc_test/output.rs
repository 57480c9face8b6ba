//! What the card's debugfs `test` file says after a test ran (drivers/mmc/core/mmc_test.c,
//! `mtf_test_show`, Linux 6.12 and 7.x): a line `Test N: R` (R: 0 OK, 1 failed, 2 not
//! supported by the host, 3 not supported by the card, else a negative errno), then one
//! line per timed transfer size, `count sectors seconds rate iops`, from
//! `mmc_test_print_avg_rate`: `count` transfers of `sectors` x 512 bytes took `seconds`
//! (`sec.nsec`) in all, `rate` bytes/s and `iops` with two decimals. The results are
//! freed by the next write to `test` and by unbinding mmc_test.

use anyhow::{bail, Context, Result};

/// One line of a transfer size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transfer {
    /// Transfers of this size the test timed.
    pub count: u64,
    /// Bytes per transfer.
    pub bytes: u64,
    /// Time of all `count` transfers together, seconds (ktime, nanoseconds).
    pub seconds: f64,
}

impl Transfer {
    /// Mean time per transfer, microseconds.
    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.seconds / self.count as f64 * 1e6
        }
    }
}

/// The whole of the `test` file after one test.
#[derive(Debug, Clone, PartialEq)]
pub struct TestOutput {
    pub number: u32,
    /// The test's result code.
    pub result: i32,
    pub transfers: Vec<Transfer>,
}

impl TestOutput {
    /// The result code in words.
    pub fn result_words(&self) -> String {
        match self.result {
            0 => "OK".into(),
            1 => "FAILED".into(),
            2 => "UNSUPPORTED (by host)".into(),
            3 => "UNSUPPORTED (by card)".into(),
            e => format!("ERROR ({e}: {})", nix::errno::Errno::from_raw(-e).desc()),
        }
    }
}

/// Parse the `test` file's text.
pub fn parse(text: &str) -> Result<TestOutput> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(head) = lines.next() else {
        bail!("mmc_test's `test` file is empty: the test did not run (see dmesg)");
    };
    let (number, result) = head
        .strip_prefix("Test ")
        .and_then(|rest| rest.split_once(':'))
        .with_context(|| format!("mmc_test's `test` file starts with {head:?}, not `Test N: R`"))?;
    let number: u32 = number
        .trim()
        .parse()
        .with_context(|| format!("test number in {head:?}"))?;
    let result: i32 = result
        .trim()
        .parse()
        .with_context(|| format!("result in {head:?}"))?;
    let mut transfers = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 5 || fields[0].starts_with("Test") {
            bail!(
                "mmc_test's `test` file has {line:?} where a line `count sectors seconds rate \
                 iops` was expected (one test at a time)"
            );
        }
        let count: u64 = fields[0]
            .parse()
            .with_context(|| format!("count in {line:?}"))?;
        let sectors: u64 = fields[1]
            .parse()
            .with_context(|| format!("sectors in {line:?}"))?;
        let seconds = parse_seconds(fields[2]).with_context(|| format!("seconds in {line:?}"))?;
        transfers.push(Transfer {
            count,
            bytes: sectors * 512,
            seconds,
        });
    }
    Ok(TestOutput {
        number,
        result,
        transfers,
    })
}

/// `sec.nnnnnnnnn` (the kernel prints nine digits of nanoseconds).
fn parse_seconds(text: &str) -> Result<f64> {
    let (s, ns) = text.split_once('.').unwrap_or((text, "0"));
    let s: u64 = s.parse()?;
    let ns: u64 = ns.parse()?;
    if ns >= 1_000_000_000 {
        bail!("{text}: more than 9 digits of nanoseconds");
    }
    Ok(s as f64 + ns as f64 / 1e9)
}

/// The test number of `name` in the card's debugfs `testlist` (`mtf_testlist_show`: one
/// `N:\tname` line per test).
pub fn number_in_testlist(testlist: &str, name: &str) -> Option<u32> {
    testlist.lines().find_map(|l| {
        let (n, rest) = l.split_once(':')?;
        (rest.trim() == name)
            .then(|| n.trim().parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `mtf_test_show` prints for a consecutive read test (number 30).
    const SEQ_READ: &str = "Test 30: 0\n\
        8192 1 0.512000000 8192000 16000.00\n\
        1024 8 0.080000000 52428800 12800.00\n\
        8 1024 0.040000000 104857600 200.00\n";

    #[test]
    fn one_line_per_transfer_size() {
        let out = parse(SEQ_READ).unwrap();
        assert_eq!(out.number, 30);
        assert_eq!(out.result, 0);
        assert_eq!(out.transfers.len(), 3);
        assert_eq!(out.transfers[1].bytes, 4096);
        assert_eq!(out.transfers[1].count, 1024);
        assert!((out.transfers[1].mean_us() - 78.125).abs() < 1e-9);
        assert!((out.transfers[2].seconds - 0.04).abs() < 1e-12);
        assert_eq!(out.result_words(), "OK");
    }

    #[test]
    fn failures_and_garbage_are_named() {
        let out = parse("Test 31: -110\n").unwrap();
        assert!(out.transfers.is_empty());
        assert!(
            out.result_words().starts_with("ERROR (-110"),
            "{}",
            out.result_words()
        );
        assert!(format!("{:#}", parse("").unwrap_err()).contains("empty"));
        assert!(format!("{:#}", parse("Test 1: 0\nTest 2: 0\n").unwrap_err()).contains("one test"));
        assert!(parse("Test 30: 0\n1 1 0.1234567890 1 1.00\n").is_err());
    }

    #[test]
    fn numbers_are_found_by_name() {
        let list = "29:\tSingle trim performance by transfer size\n\
                    30:\tConsecutive read performance by transfer size\n";
        assert_eq!(
            number_in_testlist(list, "Consecutive read performance by transfer size"),
            Some(30)
        );
        assert_eq!(number_in_testlist(list, "Reset test"), None);
    }
}

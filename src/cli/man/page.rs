//! The shape of a man page's added sections ([`Page`]) and the entries several pages
//! share (exit statuses 0, 1, 2; debugfs and sysfs files). The pages themselves are in
//! `sections*.rs`.

/// The sections mmcab adds to one command's man page.
#[derive(Debug)]
pub struct Page {
    /// The command as typed: `mmcab`, `mmcab probe packed`.
    pub command: &'static str,
    /// Paragraphs after clap's about text, in DESCRIPTION.
    pub description: &'static [&'static str],
    /// JSON OUTPUT: the `--json` document, key -> meaning (empty: no section).
    pub json: &'static [(&'static str, &'static str)],
    /// EXIT STATUS: status -> meaning.
    pub exit_status: &'static [(&'static str, &'static str)],
    /// ENVIRONMENT: variable -> meaning (empty: no section).
    pub environment: &'static [(&'static str, &'static str)],
    /// FILES: path -> what the command does with it.
    pub files: &'static [(&'static str, &'static str)],
    /// EXAMPLES: what it does -> the command line.
    pub examples: &'static [(&'static str, &'static str)],
    /// SEE ALSO: pages, e.g. `mmcab-report(1)`.
    pub see_also: &'static [&'static str],
}

pub const OK: (&str, &str) = ("0", "Success.");
pub const ERROR: (&str, &str) = (
    "1",
    "An error: one `mmcab: error:` line on stderr says what went wrong and what to do.",
);
pub const USAGE: (&str, &str) = (
    "2",
    "The command line is wrong (an unknown option, a missing or invalid argument): \
     clap's usage message on stderr. `--help` and `--version` exit 0.",
);

/// debugfs as `info` and the ioctl engine use it (mounted when it is not).
pub const DEBUGFS_HOST: (&str, &str) = (
    "/sys/kernel/debug/mmcN/",
    "The host's debugfs: `ios` (bus width, clock, timing), `caps`, `caps2`, and the card's \
     `mmcN:RCA/ext_csd` and `state`. debugfs is mounted read-write (nosuid, nodev, noexec) \
     at /sys/kernel/debug when it is not mounted.",
);
pub const SYSFS_CARD: (&str, &str) = (
    "/sys/block/mmcblkN/, /sys/bus/mmc/devices/mmcN:RCA/",
    "The disk (size, queue, partitions) and the card's attributes (cid, csd, name, date, \
     type, ...).",
);

//! The pages of `mmcab probe` and its probes (see sections.rs).

use super::page::{Page, DEBUGFS_HOST, ERROR, OK, SYSFS_CARD, USAGE};

/// The flash probes' exit statuses (probe_flash.rs: errors only).
const FLASH_EXIT: &[(&str, &str)] = &[
    OK,
    (
        "1",
        "An error: the device cannot be opened or measured, the probe directory is not \
         empty, `--published` cannot be read or parsed, a refused write (open-au).",
    ),
    USAGE,
];

/// The probe directory of align and open-au (probe/record.rs, report/files.rs).
const PROBE_DIR_FILES: &[(&str, &str)] = &[
    (
        "results/probe-<align|open-au>-<disk>-<UTC time>/",
        "The probe directory (`--out DIR` to choose it; refused when it is not empty); \
         `mmcab report DIR` renders it again.",
    ),
    (
        "DIR/probe.json",
        "The record: device, options, every measurement, scheduling.",
    ),
    (
        "DIR/align.csv, DIR/open_au.csv",
        "The table of the probe, one row per measurement.",
    ),
    (
        "DIR/report.txt, DIR/align-diff.svg/.png, DIR/open-au.svg/.png",
        "The report (72-column text, also on stdout) and its chart.",
    ),
    ("DIR/published.txt", "A copy of `--published FILE`."),
];

pub const PROBE: Page = Page {
    command: "mmcab probe",
    description: &[
        "Experiments that tell what a card does. `packed` sends one packed write to a \
         scratch region and reads it back: does the card execute packed commands? `align` \
         (read-only) and `open-au` (writes) measure the flash geometry with flashbench's \
         methods: the erase block size to align partitions and filesystems to, and how \
         many allocation units the controller keeps open.",
    ],
    json: &[],
    exit_status: &[
        OK,
        ERROR,
        USAGE,
        (
            "3",
            "`probe packed`: the card did not execute the packed write as sent.",
        ),
        (
            "5",
            "`probe packed`: the region or EXP_EVENTS_CTRL could not be put back.",
        ),
        (
            "128 + N",
            "`probe packed`: stopped by signal N, after putting both back.",
        ),
    ],
    environment: &[],
    files: PROBE_DIR_FILES,
    examples: &[
        (
            "Packed commands, before any packed A/B:",
            "mmcab probe packed /dev/mmcblk0 --allow-write --offset 1G",
        ),
        ("The erase block size:", "mmcab probe align /dev/mmcblk0"),
    ],
    see_also: &[
        "mmcab-probe-packed(1)",
        "mmcab-probe-align(1)",
        "mmcab-probe-open-au(1)",
    ],
};

pub const PROBE_PACKED: Page = Page {
    command: "mmcab probe packed",
    description: &[
        "A self-test before anyone trusts packed numbers: one packed write (eMMC 4.5, built \
         as Linux 4.9 did) through MMC_IOC_MULTI_CMD, read back through the block layer \
         with O_DIRECT. Its 4 KiB entries each carry a stamp (offset, probe id, entry \
         number, CRC32) and alternate with canary blocks in a scratch region of (2 x \
         entries + 1) x 4 KiB at `--offset`, which has no default: pick a place whose data \
         you could lose (not the partition table at 0, not a filesystem). Each entry must \
         read back with its own stamp and each canary untouched; EXT_CSD \
         PACKED_COMMAND_STATUS and PACKED_FAILURE_INDEX say which entry the card failed, if \
         it says. `--entries` defaults to the most the card allows.",
        "The region's old contents are read first and written back afterwards, and \
         PACKED_EVENT_EN (EXT_CSD EXP_EVENTS_CTRL) is set only when the card has it clear, \
         and put back, on every exit path; a signal waits for both. Whether the kernel \
         passes a user CMD23 to the card (commit 4d0c8d0aef63, v6.8 and stable backports) \
         is looked at in a private tracefs instance; without tracefs, \
         `--assume-cmd23-passthrough` says so. `--force` sends the command to a card whose \
         EXT_CSD says it has no packed commands, to see what it does.",
        "Refused, in one line before any write: not an eMMC whole-device node (a \
         partition, an SD card, a loop device), no `--allow-write`, a device in use, a \
         read-only node (`force_ro`), no CAP_SYS_RAWIO. A device that holds data elsewhere \
         is not refused: the region is put back.",
    ],
    json: &[
        ("schema", "1."),
        (
            "device, kernel_release, ext_csd_rev, max_packed_writes, card_refusal",
            "The card and why `--force` was needed, if it was.",
        ),
        ("addressing, sbc", "Sector or byte addressing; whether the CMD23 reaches the card, and the evidence."),
        ("region_offset, header_bytes, region_bytes, commands", "The region and the commands sent."),
        (
            "exp_events_ctrl, packed_event_enabled_by_mmcab, write_error, card_status, card_status_text",
            "What the card answered.",
        ),
        ("blocks, passed, verdict", "Every block read back; the outcome."),
        ("restored, not_restored", "What was put back, and what could not be."),
    ],
    exit_status: &[
        ("0", "PASS: the card did what was sent."),
        ("1", "Refused or an error (see DESCRIPTION); one `mmcab: error:` line."),
        USAGE,
        ("3", "FAIL: the card did not execute the packed write as sent (the report says how)."),
        (
            "5",
            "The region or EXP_EVENTS_CTRL could not be put back: the report, if there is \
             one, is printed first; the error line says what is left changed and how to put \
             it back, and names the probe's own error when it failed too.",
        ),
        ("128 + N", "Stopped by signal N (130 Ctrl-C), after the region and EXT_CSD were put back."),
    ],
    environment: &[],
    files: &[
        (
            "/dev/mmcblkN, /dev/mmcblkNbootM",
            "The packed write and CMD23 + CMD18 reads through the mmc ioctl; the read-back \
             with O_DIRECT; EXT_CSD (CMD8) and its EXP_EVENTS_CTRL (CMD6).",
        ),
        DEBUGFS_HOST,
        SYSFS_CARD,
        ("/sys/block/<disk>/force_ro", "A node the kernel keeps read-only is refused."),
        (
            "/sys/kernel/tracing/instances/mmcab-<pid>-<n>/",
            "The private tracefs instance that checks the CMD23 pass-through, removed \
             afterwards.",
        ),
        ("/proc/self/mountinfo, /proc/swaps", "A mounted or held device is refused."),
    ],
    examples: &[
        ("The probe, 1 GiB into the card:", "mmcab probe packed /dev/mmcblk0 --allow-write --offset 1G"),
        (
            "What a card without packed commands does with one:",
            "mmcab probe packed /dev/mmcblk0 --allow-write --force --offset 32M",
        ),
        (
            "A kernel mmcab cannot check (no tracefs), 8 entries, as JSON:",
            "mmcab probe packed /dev/mmcblk0 --allow-write --offset 1G --entries 8 --assume-cmd23-passthrough --json",
        ),
    ],
    see_also: &["mmcab-info(1)", "mmcab-run(1)", "mmcab-probe(1)"],
};

pub const PROBE_ALIGN: Page = Page {
    command: "mmcab probe align",
    description: &[
        "Read-only. For every power-of-two alignment from `maxalign` (the smallest 2 x \
         blocksize x 2^k of at least a seventh of the device) down to 2 x blocksize, at 7 \
         positions, reads of `--blocksize` bytes just before (pre), across (on) and after \
         (post) the boundary, the fastest of `--count` tries per position, averaged; diff \
         = on - (pre + post) / 2. A read across a boundary the flash treats specially takes \
         longer, so the diff steps down below the erase block (flashbench -a).",
        "The estimate is the smallest alignment of the high side of the clearest step, \
         with a confidence (high, medium, low, or none: nothing claimed), and a page-like \
         boundary as a second, smaller step. Disturbed alignments are measured again, up \
         to 3 times. The report sets the estimate against EXT_CSD (HC_ERASE_GRP_SIZE, \
         ACC_SIZE) and sysfs `erase_size` and `preferred_erase_size`. Each line is shown \
         on stderr as it is measured, the report on stdout. Timing uses the monotonic \
         clock at SCHED_FIFO priority 10; without root or CAP_SYS_NICE the report says it \
         ran at the normal policy.",
    ],
    json: &[
        ("schema", "1."),
        ("dir, record", "The probe directory and its probe.json."),
        (
            "estimate",
            "{erase_block, page, read_ns}, each boundary {bytes, confidence, high_ns, low_ns, \
             score, relative, n_high, n_low}.",
        ),
    ],
    exit_status: FLASH_EXIT,
    environment: &[],
    files: PROBE_DIR_FILES,
    examples: &[
        ("The erase block size:", "mmcab probe align /dev/mmcblk0"),
        (
            "As the BeagleBone post measured, next to its published run:",
            "mmcab probe align /dev/mmcblk0 --blocksize 1k --published results/reference/beaglebone-2013-flashbench.txt",
        ),
        ("The estimate as JSON, quietly:", "mmcab probe align /dev/mmcblk0 --quiet --json"),
    ],
    see_also: &["mmcab-probe-open-au(1)", "mmcab-report(1)", "mmcab-info(1)"],
};

pub const PROBE_OPEN_AU: Page = Page {
    command: "mmcab probe open-au",
    description: &[
        "WRITES to the device (its data there is lost): needs `--allow-write`; a mounted or \
         held device is refused, and units over data (a partition, a partition table, a \
         filesystem) unless `--overwrite-data`. N units of \
         `--erase-size`, 12 erase sizes apart from `--offset` (default 16 MiB rounded up to \
         the erase size); for each write size from the erase size down to `--blocksize`, \
         halving, every chunk of an erase block is written into each unit in turn (in \
         order, or in a fixed pseudo-random order with `--random`), O_DIRECT|O_SYNC; MB/s \
         per size (flashbench --open-au).",
        "With more units than the controller keeps open, each write forces a unit to be \
         closed and copied, and MB/s falls with every halving. `--nr N` runs N units \
         (default 2); `--find` runs 1, 2, 3, ... (at most `--max-nr`) until a run \
         collapses, and answers the largest N before it. The report, the probe directory \
         and `--published` are as for `mmcab-probe-align`(1).",
    ],
    json: &[
        ("schema", "1."),
        ("dir, record", "The probe directory and its probe.json."),
        ("estimate", "One per order: {random, open, at_least, collapsed, confidence}."),
    ],
    exit_status: FLASH_EXIT,
    environment: &[],
    files: PROBE_DIR_FILES,
    examples: &[
        (
            "Find the open units of a card with 2 MiB erase blocks:",
            "mmcab probe open-au /dev/mmcblk0 --erase-size 2M --find --allow-write",
        ),
        (
            "Five units in random order, 8 KiB smallest write:",
            "mmcab probe open-au /dev/mmcblk0 --erase-size 2M --nr 5 --random --blocksize 8k --allow-write --overwrite-data",
        ),
    ],
    see_also: &["mmcab-probe-align(1)", "mmcab-report(1)"],
};

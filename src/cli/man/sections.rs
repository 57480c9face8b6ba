//! What each man page says beyond clap's definitions, as data: one [`Page`] per command
//! path, in [`PAGES`]. The long pages are in `sections_run.rs`, `sections_report.rs` and
//! `sections_probe.rs`; this file has the table and the short pages ([`Page`] and the
//! shared entries are in `page.rs`).
//!
//! Text between backquotes is set in bold (commands, options, file and key names).
//! Exit statuses follow the code: the table of `crate::exit`, which also picks them
//! (`man/tests.rs` holds the pages of run, probe packed, report and compare to it).

use super::page::{Page, DEBUGFS_HOST, ERROR, OK, SYSFS_CARD, USAGE};
use super::sections_probe::{PROBE, PROBE_ALIGN, PROBE_OPEN_AU, PROBE_PACKED};
use super::sections_report::{COMPARE, REPORT};
use super::sections_run::{CALIBRATE, RUN};

/// Every page, keyed by [`Page::command`]; the tests hold it to the clap tree.
pub const PAGES: &[&Page] = &[
    &ROOT,
    &INFO,
    &KNOBS,
    &RUN,
    &REPORT,
    &COMPARE,
    &CALIBRATE,
    &EXPORT,
    &EXPORT_FIO,
    &COMPLETIONS,
    &MAN,
    &PROBE,
    &PROBE_PACKED,
    &PROBE_ALIGN,
    &PROBE_OPEN_AU,
];

/// The page of `command` (`mmcab run`), if the table has one.
pub fn page(command: &str) -> Option<&'static Page> {
    PAGES.iter().copied().find(|p| p.command == command)
}

pub const ROOT: Page = Page {
    command: "mmcab",
    description: &[
        "It runs workloads against a device while it switches packing, bus width, CMD23, \
         the command queue and the cache through the mmc ioctl, sysfs and debugfs, records \
         every run together with what the kernel did (requests and their sizes, CMD23 use, \
         device latency, from the block statistics and the mmc trace events), and reports \
         the A/B as CSV, JSON, a plain-text table ready for a linux-mmc mail, charts, LAVA \
         test cases, or a pass/fail regression gate for CI.",
        "A typical A/B: `mmcab info` says what the card is and how the host drives it, \
         `mmcab knobs` what can be switched, `mmcab run` runs a plan file (configs x \
         workloads x repetitions, interleaved) into a results directory, and `mmcab report` \
         compares its configs. Changes that need a reboot (a kernel, a driver patch, a \
         device tree) are run once per boot with `--label` and compared with `mmcab \
         compare`. `mmcab probe` tells what a card does (packed writes, erase block size, \
         open allocation units).",
        "Most commands need root: CAP_SYS_RAWIO for the mmc ioctl, write access to debugfs \
         for the knobs, tracefs for the kernel evidence. Writes to a block device need \
         `--allow-write`; a mounted or held device is always refused, and writes that \
         overlap data (a partition, a partition table, a filesystem, RAID or LVM \
         signature) unless `--overwrite-data`. \
         Every knob changed is put back on exit, error, panic and SIGINT, SIGTERM, SIGHUP.",
        "Each command has its page: `man mmcab-run`, `man mmcab-probe-packed`, ... \
         (`mmcab man --dir DIR` writes them).",
    ],
    json: &[],
    exit_status: &[
        OK,
        ERROR,
        USAGE,
        (
            "3",
            "`mmcab run`: verify found bad blocks. `mmcab probe packed`: the card did not \
             execute the packed write as sent.",
        ),
        (
            "4",
            "`mmcab run`: an I/O on the target failed mid-run (the finished runs are \
             recorded, the knobs restored; `mmcab run --resume` finishes).",
        ),
        (
            "5",
            "`mmcab run`, `mmcab probe packed`: something could not be put back (a knob, the \
             probe's region or EXT_CSD); the commands to finish by hand were printed.",
        ),
        (
            "6",
            "`mmcab report`, `mmcab compare` with `--fail-if`: the regression gate failed.",
        ),
        (
            "7",
            "`mmcab report`, `mmcab compare` with `--fail-if`: the gate was inconclusive \
             (0 with `--allow-inconclusive`).",
        ),
        (
            "128 + N",
            "`mmcab run`, `mmcab probe packed`: stopped by signal N (130 Ctrl-C, 143 \
             SIGTERM, 129 SIGHUP) after putting everything back.",
        ),
    ],
    environment: &[(
        "MMCAB_CALIBRATION_DIR",
        "The calibration store of `mmcab calibrate` and `mmcab compare` (default \
         $XDG_DATA_HOME/mmcab/calibration, else ~/.local/share/mmcab/calibration).",
    )],
    files: &[
        (
            "results/<plan>[-<label>]-<UTC time>/",
            "A results directory of `mmcab run` (default location, relative to the current \
             directory): runs.csv, series.csv, latency.csv, evidence.csv, \
             request_sizes.csv, verify_errors.csv, meta.json, restore.sh; `mmcab report` \
             adds report/.",
        ),
        (
            "results/probe-<align|open-au>-<disk>-<UTC time>/",
            "A probe directory of `mmcab probe align` and `mmcab probe open-au`.",
        ),
        (
            "~/.local/share/mmcab/calibration/",
            "The calibration store (see ENVIRONMENT).",
        ),
        DEBUGFS_HOST,
        SYSFS_CARD,
        (
            "/sys/kernel/tracing/instances/mmcab-<pid>-<n>/",
            "mmcab's private tracefs instance for the kernel evidence, removed afterwards.",
        ),
    ],
    examples: &[
        ("What the card is and what can be switched:", "mmcab info /dev/mmcblk0\nmmcab knobs /dev/mmcblk0"),
        (
            "A/B of bus width 8 vs 4 within one boot, then the report:",
            "mmcab run workloads/bus-width-ab.toml --device /dev/mmcblk0 --allow-write --out results/ab\nmmcab report results/ab",
        ),
        (
            "Two kernels, three boots each (one `mmcab run --label` per boot), gated:",
            "mmcab compare base-1 base-2 base-3 --vs new-1 new-2 new-3 --fail-if slower --threshold 3%",
        ),
        (
            "Install the man pages:",
            "mmcab man --dir /usr/local/share/man/man1 && mandb -q",
        ),
    ],
    see_also: &[
        "mmcab-info(1)",
        "mmcab-knobs(1)",
        "mmcab-run(1)",
        "mmcab-report(1)",
        "mmcab-compare(1)",
        "mmcab-calibrate(1)",
        "mmcab-export(1)",
        "mmcab-probe(1)",
        "fio(1)",
    ],
};

pub const INFO: Page = Page {
    command: "mmcab info",
    description: &[
        "Identifies an eMMC or SD card and how the host drives it: CID, CSD, the bus \
         settings from debugfs `ios`, the host driver and its module, EXT_CSD decoded field \
         by field, and the capabilities (packed commands, command queue, cache, bus width, \
         switching the bus width at run time), each decided from registers and kernel files \
         only, with the reason.",
        "DEVICE is /dev/mmcblkN, a partition node /dev/mmcblkNpM (resolved to its disk) or \
         mmcblkN. EXT_CSD is read with CMD8 through the mmc ioctl (root or CAP_SYS_RAWIO); \
         when that fails mmcab reads the kernel's debugfs `ext_csd` instead and says so. SD \
         cards have no EXT_CSD: CID, CSD, ios and sysfs are shown. `--raw` prints EXT_CSD as \
         hex, 16 bytes per line after the byte offset. `mmcab run` stores the `--json` \
         object in each results directory's meta.json (`device`).",
        "Without DEVICE, lists the MMC/SD block devices of this machine from sysfs: each \
         disk on the mmc bus (the main area, and an eMMC's boot partitions `mmcblkNbootM`) \
         with its card's type (MMC, SD, SDIO) and name, size, card and host, read-only \
         when the kernel keeps it so, its partitions (start, size) and what uses each (a \
         mount, swap, a holder): which `mmcblkN` is the eMMC, and whether the board runs \
         from it. With `--json`: `{schema, devices: [{node, disk, area, type, name, card, \
         host, size_bytes, read_only, partitions: [{node, start_bytes, size_bytes, \
         in_use}], in_use}]}` (`area`: main, boot or rpmb; `in_use` null when nothing \
         uses it).",
        "Speed modes (eMMC): what the card offers (EXT_CSD CARD_TYPE: HS_26, HS_52, \
         DDR_52_1.8V_3V, DDR_52_1.2V, HS200_1.8V, HS200_1.2V, HS400_1.8V, HS400_1.2V), the \
         driver strengths it supports (DRIVER_STRENGTH, types 0-4), enhanced strobe \
         (STROBE_SUPPORT), what it is set to (HS_TIMING: the timing and the selected driver \
         strength), the host's speed bits in debugfs `caps` (MMC_CAP_MMC_HIGHSPEED, \
         MMC_CAP_3_3V_DDR, MMC_CAP_1_8V_DDR, MMC_CAP_1_2V_DDR) and `caps2` \
         (MMC_CAP2_HS200_1_8V_SDR, MMC_CAP2_HS200_1_2V_SDR, MMC_CAP2_HS400_1_8V, \
         MMC_CAP2_HS400_1_2V, MMC_CAP2_HS400_ES), and the timing, clock and width the bus \
         runs at now (`ios`). Which modes can be switched here: `mmcab-knobs`(1).",
        "Kernel features, last: where the kernel's config was read (/proc/config.gz, else \
         /boot/config-RELEASE, or that neither is there), the lockdown level, then one line \
         per thing the running kernel lacks (a CONFIG_ option not set, debugfs=off, lockdown, \
         kernel.io_uring_disabled, module.sig_enforce, debugfs or tracefs not there), each \
         naming the feature it costs and the fix; `all there` when nothing is missing. The \
         table of features, options and gates: docs/kernel-config.md. Its last line says \
         whether the kernel's mmc_test driver is there (built in, module loaded, installed \
         but not loaded with the modprobe line, or absent with the fix: docs/mmc-test.md).",
    ],
    json: &[
        ("schema", "1 (a key that changes meaning bumps it; new keys may appear)."),
        ("device, disk, host, card, type", "/dev/mmcblk0, mmcblk0, mmc0, mmc0:0001; sysfs `type` (MMC, SD, SDIO)."),
        ("kernel_release, capacity_bytes, summary", "uname -r; sysfs size x 512; the first line `info` prints."),
        ("paths", "`block_sysfs`, `card_sysfs`, `host_debugfs`, `card_debugfs`: where the facts came from."),
        ("identity", "CID decoded (`manfid`, `oemid`, `serial`, `prv`, `hwrev`, `fwrev` as integers; `name`, `date`, `year`, `month`, `manufacturer`, `device_type`, `cid`, `csd`, `type`)."),
        ("csd", "`structure`, `spec_vers`, `tran_speed_hz`, `read_block_bytes`, `legacy_capacity_bytes`."),
        ("ios", "`bus_width` (1, 4, 8), `clock_hz`, `actual_clock_hz`, `timing`, `signal_voltage`, `vdd`, `power_mode`, `bus_mode`, `driver_type`."),
        ("ext_csd", "`source` (ioctl or debugfs, `source_note`), `rev`, `raw` (1024 hex digits), `fields` (JEDEC name -> decoded value, null where the revision does not define it), `fields_raw`, `field_layout`."),
        ("host_caps, host_driver", "debugfs `caps`/`caps2`; the host's `driver`, `device`, `module`, `builtin`, `parameters`, `version`, `srcversion` (absent without a bound driver)."),
        ("capabilities.NAME", "`supported` and `reason` for packed, cmdq, cache, bus_width, bus_width_runtime_switch, with their numbers."),
        ("speed_modes", "eMMC only: `card` (null without EXT_CSD: `card_type`, `driver_strength`, `strobe_support` decoded as in `ext_csd.fields`, each with its `*_raw`; `hs_timing` {`timing`, `driver_strength`, `raw`}) and `host` {`caps`, `caps2`: the names of the speed bits set, null when unreadable}."),
        ("sysfs", "Every readable attribute of the card's sysfs directory."),
        ("PART_error", "A part that could not be read is null and `<part>_error` says why."),
        ("kernel_features", "`{config, config_error, lockdown, lockdown_note, features: [{feature, needed_by, options, available, missing: [{what, fix}]}], mmc_test: {available, fix, state, what}}`: what the running kernel lacks (not in meta.json); `mmc_test.state` is `built-in`, `loaded`, `installed` or `absent`."),
    ],
    exit_status: &[
        OK,
        (
            "1",
            "An error, one line naming the device and what to do: not an MMC/SD block \
             device, no such device, no permission, or `--raw` without an EXT_CSD.",
        ),
        USAGE,
    ],
    environment: &[],
    files: &[
        ("/dev/mmcblkN", "EXT_CSD read with CMD8 through MMC_IOC_CMD."),
        SYSFS_CARD,
        (
            "/sys/class/mmc_host/mmcN/device/driver, /sys/module/<module>/",
            "The host driver, its module, `version`, `srcversion` and `parameters/*`.",
        ),
        DEBUGFS_HOST,
        ("/proc/self/mounts", "Where debugfs is mounted."),
        (
            "/proc/config.gz, /boot/config-RELEASE, /proc/cmdline, /proc/filesystems, \
             /sys/kernel/security/lockdown, /proc/sys/kernel/io_uring_disabled, \
             /sys/module/module/parameters/sig_enforce",
            "The kernel's config and the run-time gates of its features.",
        ),
    ],
    examples: &[
        ("Which mmcblk is the eMMC, and what is mounted from it:", "mmcab info"),
        ("The card and its host:", "mmcab info /dev/mmcblk0"),
        ("Everything as JSON, for a lab's records:", "mmcab info /dev/mmcblk0 --json > card.json"),
        ("EXT_CSD as hex:", "mmcab info mmcblk0 --raw"),
    ],
    see_also: &["mmcab(1)", "mmcab-knobs(1)", "mmcab-probe-packed(1)"],
};

pub const KNOBS: Page = Page {
    command: "mmcab knobs",
    description: &[
        "Lists the built-in knobs (bus-width, packing, cmd23, cqe, cache, speed-mode, clock) \
         with their current \
         value, the values they take, whether mmcab can switch them on this kernel and card, \
         and why not when it cannot. Nothing is changed.",
        "bus-width is switched through debugfs `caps` and a runtime-PM re-init of the card \
         (Linux 6.19 or later); packing through /sys/block/mmcblkN/num_wr_reqs_to_start_packing \
         (vendor kernels only: mainline never sent packed commands; A/B them with the ioctl \
         engine instead); cmd23 and cqe through debugfs `caps`/`caps2` and a rebind of the \
         mmcblk driver; cache by a CMD6 SWITCH of EXT_CSD CACHE_CTRL; speed-mode through the \
         speed bits of debugfs `caps`/`caps2` and the same re-init (Linux 6.7 or later); \
         clock through debugfs `clock`. Plans name the knobs \
         in their `[[config]]` tables (`mmcab-run`(1)).",
        "Then, for an eMMC, the speed modes (legacy, hs, ddr52, hs200, hs400), one line each \
         under a header with the kernel, what `ios` says the bus runs at, the host's `caps` \
         and `caps2` and the card's CARD_TYPE: `offered` (the card's CARD_TYPE has the mode, \
         the host's caps have its bits as they are now, and the host's bus is wide enough: \
         the core can run it) and `switch` (`now`: the bus runs it; `yes`: the speed-mode \
         knob switches to it at run time; `--force`: only with --force, the host came up \
         without its bits; `no`: not at run time here), and why not: the card's CARD_TYPE \
         lacks it, the host came up without its bits, this kernel (before 6.7) does not let \
         debugfs write the speed bits, HS400 needs an 8-bit bus, the card has no runtime PM \
         or debugfs `caps` is not writable. A note says when HS400 is \
         HS400 with enhanced strobe, or cannot be: MMC_CAP2_HS400_ES is never writable \
         through debugfs.",
        "Last, the kernel features the running kernel lacks, as `mmcab-info`(1) prints them.",
    ],
    json: &[
        ("schema", "1."),
        ("device", "DEVICE as given."),
        ("knobs", "`[{name, available, value, values, reason}]`, in the order of the table."),
        ("speed_modes", "eMMC: `{kernel, inputs: {caps, caps2, card_type, strobe_support, host_bus_width}, now: {timing, mode, clock_hz, bus_width}, modes: [{mode, offered, switch, reason}], notes}`; `switch` is `now`, `yes`, `force` or `no`. Null when the modes cannot be told, and `speed_modes_error` says why (a card that is not an eMMC, an unreadable EXT_CSD, caps or ios)."),
        ("kernel_features", "As in `mmcab info --json`."),
    ],
    exit_status: &[OK, ERROR, USAGE],
    environment: &[],
    files: &[
        DEBUGFS_HOST,
        SYSFS_CARD,
        (
            "/sys/block/mmcblkN/num_wr_reqs_to_start_packing, /sys/bus/mmc/devices/mmcN:RCA/cmdq_en",
            "The packing trigger of vendor kernels; the command queue switch where a vendor \
             kernel makes it writable.",
        ),
        ("/dev/mmcblkN", "EXT_CSD (CACHE_SIZE, CACHE_CTRL, CMDQ_SUPPORT, ...) through the mmc ioctl, else debugfs."),
    ],
    examples: &[
        ("The table:", "mmcab knobs /dev/mmcblk0"),
        ("As JSON:", "mmcab knobs mmcblk0 --json"),
    ],
    see_also: &["mmcab-info(1)", "mmcab-run(1)"],
};

pub const EXPORT: Page = Page {
    command: "mmcab export",
    description: &[
        "Writes a plan in another tool's format, so that a reviewer can re-run a workload \
         with the tool they trust. `fio` is the one format (`mmcab-export-fio`(1)).",
    ],
    json: &[],
    exit_status: &[OK, ERROR, USAGE],
    environment: &[],
    files: &[("PLAN", "The plan file (TOML) read.")],
    examples: &[
        (
            "A fio job file of a plan:",
            "mmcab export fio workloads/bus-width-ab.toml -o bus-width.fio",
        ),
        (
            "One workload, for a given target, on stdout:",
            "mmcab export fio workloads/qd-sweep.toml --workload rand-4k-qd8 --device /dev/mmcblk0",
        ),
    ],
    see_also: &["mmcab-export-fio(1)", "fio(1)"],
};

pub const EXPORT_FIO: Page = Page {
    command: "mmcab export fio",
    description: &[
        "Writes the plan's workloads as a fio job file. Each workload is one fio reporting \
         group: its first job carries `stonewall`, and `group_reporting` sums its jobs like \
         mmcab's `all` row. Random jobs get `norandommap`, `engine = \"sync\"` becomes \
         `ioengine=psync` (the ioctl engine too, with a comment that fio has none; a \
         workload with `engine = \"mmc_test\"` is refused: leave it out with `--workload`), \
         `pattern = \"zeros\"` becomes `zero_buffers`, writing jobs with verify get \
         `verify=crc32`; what fio cannot be told is said in comments.",
        "Sizes are bytes after `--scale-down`, times milliseconds. Without `--device` the \
         file says `filename=${TARGET}`, which fio takes from the environment. `mmcab report` \
         shows the same options in its setup lines.",
    ],
    json: &[],
    exit_status: &[
        OK,
        (
            "1",
            "An error: the plan cannot be read or is invalid, an unknown `--workload`, or \
             FILE cannot be written.",
        ),
        USAGE,
    ],
    environment: &[],
    files: &[
        ("PLAN", "The plan file (TOML) read."),
        ("FILE", "With `-o FILE`: the job file written (else stdout)."),
    ],
    examples: &[
        (
            "Export, then run fio on the target named at run time:",
            "mmcab export fio workloads/bus-width-ab.toml -o plan.fio\nTARGET=/dev/mmcblk0 fio --output-format=json plan.fio",
        ),
        (
            "Two workloads, scaled down as for `mmcab run --scale-down 16`:",
            "mmcab export fio workloads/dd-bus-width.toml --scale-down 16 --workload dd-write,dd-read --device /dev/mmcblk0",
        ),
    ],
    see_also: &["mmcab-run(1)", "fio(1)"],
};

pub const COMPLETIONS: Page = Page {
    command: "mmcab completions",
    description: &[
        "Prints a completion script for the shell on stdout, generated from the binary's \
         own command-line definitions, so it always matches it.",
    ],
    json: &[],
    exit_status: &[
        OK,
        (
            "1",
            "stdout could not be written (a reader that goes away is not an error).",
        ),
        USAGE,
    ],
    environment: &[],
    files: &[(
        "/etc/bash_completion.d/, /usr/local/share/zsh/site-functions/, /etc/fish/completions/",
        "Where the scripts are usually installed (mmcab writes only to stdout).",
    )],
    examples: &[
        (
            "bash:",
            "mmcab completions bash > /etc/bash_completion.d/mmcab",
        ),
        (
            "zsh:",
            "mmcab completions zsh > /usr/local/share/zsh/site-functions/_mmcab",
        ),
        (
            "fish:",
            "mmcab completions fish > /etc/fish/completions/mmcab.fish",
        ),
    ],
    see_also: &["mmcab(1)", "mmcab-man(1)"],
};

pub const MAN: Page = Page {
    command: "mmcab man",
    description: &[
        "Prints the man page mmcab(1) as roff on stdout, or with `--dir DIR` writes it and \
         one page per command (mmcab-run.1, mmcab-probe-packed.1, ...) into DIR. The pages \
         are generated from the binary's command-line definitions plus its own description, \
         exit statuses, files and examples of each command, so they always match it.",
    ],
    json: &[],
    exit_status: &[
        OK,
        ("1", "DIR cannot be created or a page cannot be written."),
        USAGE,
    ],
    environment: &[],
    files: &[(
        "DIR/mmcab.1, DIR/mmcab-COMMAND.1",
        "The pages written with `--dir DIR` (existing ones are replaced).",
    )],
    examples: &[
        (
            "Install the pages and read one:",
            "mmcab man --dir /usr/local/share/man/man1 && mandb -q\nman mmcab-compare",
        ),
        (
            "Read a page without installing it:",
            "mmcab man > mmcab.1 && man -l mmcab.1",
        ),
    ],
    see_also: &["mmcab(1)", "mmcab-completions(1)", "man(1)"],
};

//! The pages of `mmcab run` and `mmcab calibrate` (see sections.rs).

use super::page::{Page, OK, USAGE};

pub const RUN: Page = Page {
    command: "mmcab run",
    description: &[
        "Runs the workloads of a plan file (TOML) against TARGET: a block device, a regular \
         file (created and sized when missing, extended but never truncated) or a directory \
         on a mounted filesystem (each job clone gets a file `mmcab.WORKLOAD.JOB.N` there, \
         removed afterwards). Every workload of the selection is checked (keys, values, \
         regions against the device, write permission) before the first one starts, and \
         the byte ranges the plan writes against the data on the device: writes over a \
         partition, a partition table or a filesystem, RAID or LVM signature are refused, \
         naming it and its bytes, unless `--overwrite-data`. `--dry-run` shows those \
         ranges, and a warning line for each job whose runs may be too short to trust \
         (no `min_runtime`, or one under 1 s) or whose writes stay inside the cache the \
         card states (docs/plans.md, \"Run length\").",
        "A plan without `[[config]]` tables, run without any of `--out`, `--label`, \
         `--resume`, `--repeat`, `--until-ci`, `--max-repeat`, `--warmup`, `--order`, \
         `--config` or `--dry-run`, is one pass: each workload once, the device as it is, \
         one line per workload, job and direction (MB/s = 10^6 B/s, KiB/s, IOPS, latency \
         percentiles in microseconds), and nothing is recorded.",
        "Otherwise the run is recorded: configs x workloads x repetitions in a fair order \
         (`--order interleaved`, the default: A B A B ...; `random`; `blocked`), warm-up \
         rounds left out of the statistics, each run appended to the results directory as \
         soon as it ends. Before every run each knob is brought to what the config wants, \
         read back and checked against the config's `expect.*` values in `ios` and EXT_CSD; \
         a mismatch stops before any I/O. `--until-ci PCT` chooses the repetitions per \
         workload by Stein's two-stage rule (a first stage of 4) so that each mean's 95% \
         interval is PCT% of it, at most `--max-repeat`. Around every run the kernel's own \
         account is recorded (block statistics, the mmc trace events of the card's host, \
         `wr_pack_stats`; `--no-evidence` turns it off).",
        "Knobs are put back (last changed first) on exit, error, panic and SIGINT, SIGTERM, \
         SIGHUP; a signal stops between I/Os and discards the run in progress. \
         `--resume DIR` finishes an interrupted run with the plan, matrix and order of \
         meta.json, refuses another device or kernel (unless `--force`), and restores to \
         the knobs' values before the first start. `--label NAME` tags the rows and the \
         directory of one boot's run, for `mmcab compare` across boots.",
    ],
    json: &[
        ("schema", "1."),
        (
            "workloads",
            "One pass: per workload its `jobs` (each with `directions`: bytes, ops, seconds, \
             mb_per_s, kib_per_s, iops, latency, bytes_per_second, latency_cdf; and \
             `verify`), `group`, `cpu_seconds`, and `engine_fallbacks` when there is one.",
        ),
        ("results_dir, runs", "Recorded: the results directory and the rows of runs.csv."),
        (
            "dry_run",
            "`--dry-run`: `{schema, dry_run: true, plan, config_count, configs: [{name, \
             knobs, packed}], workloads, repetitions, warmup, order, seed, writes: \
             [{workload, job, configs, start, end}], runs: [{run, config, workload, \
             repetition, warmup, done}], warnings: [{workload, job, kind, ...}]}` (`kind`: \
             `size_only`, `short_floor` or `inside_cache`).",
        ),
    ],
    exit_status: &[
        (
            "0",
            "Every run finished (verify, if any, found nothing); or `--dry-run` printed the \
             matrix.",
        ),
        (
            "1",
            "An error: bad input, a refused device, a knob that could not be applied or \
             verified, a results directory another mmcab is writing, ... One `mmcab: error:` \
             line says what and what to do.",
        ),
        USAGE,
        (
            "3",
            "Verify found bad blocks (everything was recorded and printed; the blocks are in \
             verify_errors.csv).",
        ),
        (
            "4",
            "An I/O on the target failed mid-run (a read, write, fsync or verify read; \
             opening the target, a file of it or the card's node for the ioctl engine; laying \
             out a file target; io_uring_enter), named in one line with the operation, the \
             offset when there is one, the device or file and errno. The finished runs are \
             recorded and the knobs restored; `--resume` finishes once the device is healthy.",
        ),
        (
            "5",
            "A knob could not be put back: the commands to finish by hand were printed (they \
             are also in restore.sh). Wins over 1, 3 and 4, since the device was left \
             changed.",
        ),
        (
            "128 + N",
            "Stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), knobs restored; the \
             `--resume` command is printed. An I/O error at the same moment is still \
             reported, with its status.",
        ),
    ],
    environment: &[],
    files: &[
        ("PLAN", "The plan file (TOML); with `--resume`, the copy in meta.json is used."),
        (
            "results/<plan>[-<label>]-<UTC time>/",
            "The results directory (`--out DIR` to choose it), locked with flock(2) while a \
             run or resume writes it.",
        ),
        (
            "DIR/runs.csv",
            "One row per run x job x direction (throughput, IOPS, latency percentiles; \
             the config by name, its knob values are in meta.json), appended and fsynced after \
             every run.",
        ),
        (
            "DIR/series.csv, DIR/latency.csv",
            "Throughput over time (bins of 0.1 s, at most 200 per run: start_s, width_s, \
             mb_per_s) and the latency CDF of each run.",
        ),
        (
            "DIR/evidence.csv, DIR/request_sizes.csv",
            "What the kernel did in each run x direction: block statistics deltas, requests \
             and bytes, CMD23 use, open-ended requests, queue tasks, errors, opcodes, device \
             latency, wr_pack_stats, lost trace events, the host's err_stats counters that \
             counted up; and the request-size histogram.",
        ),
        (
            "DIR/verify_errors.csv",
            "Every bad block verify found: run, config, workload, job, offset, problem.",
        ),
        (
            "DIR/meta.json",
            "Tool version, results `format_version`, kernel and cmdline, the device (as \
             `mmcab info --json`), ios and EXT_CSD per config, the plan and its SHA-256, \
             sweeps, `knob_originals`, `engine_fallbacks`, `until_ci`, `command_line`, \
             `switches` (each switch to a config: knobs applied, ios, the tuning traced).",
        ),
        (
            "DIR/restore.sh",
            "The commands that put the knobs back by hand (after SIGKILL or a power cut), \
             written before the first change.",
        ),
        (
            "/sys/kernel/debug/mmcN/caps, caps2",
            "The bus-width, speed-mode, cmd23 and cqe knobs (with the card's power/control \
             and a rebind through /sys/bus/mmc/drivers/mmcblk/unbind, bind).",
        ),
        (
            "/sys/kernel/debug/mmcN/clock, ios",
            "The clock knob; ios verifies the bus width, speed mode and clock before every \
             run, and the config's expect.bus_width, expect.timing and expect.clock_hz.",
        ),
        (
            "/sys/block/<disk>/stat, /sys/kernel/tracing/instances/mmcab-<pid>-<n>/",
            "The kernel evidence: block statistics, and a private tracefs instance with \
             mmc_request_start and mmc_request_done of the card's host (removed afterwards; \
             one left by a killed mmcab is removed by the next). tracefs under debugfs \
             (/sys/kernel/debug/tracing) is used when /sys/kernel/tracing is not mounted.",
        ),
        (
            "/sys/kernel/debug/mmcN/mmcN:RCA/wr_pack_stats",
            "Packed-write counts of vendor kernels, read before and after every run.",
        ),
        (
            "/proc/self/mountinfo, /proc/swaps, /sys/block/<disk>/holders/",
            "Checked before anything runs: a mounted, swap or held device is refused for \
             writes. On a card with a partition in use (a board booting from it), also the \
             knobs that re-initialise the card (bus-width, speed-mode: without --force) or \
             rebind its block driver (cmd23, cqe), and a results directory on that card; \
             --dry-run warns of them, and of a built-in knob this kernel or card cannot switch.",
        ),
        (
            "/proc/sys/vm/drop_caches",
            "Written (after sync) before every job with `direct = false`.",
        ),
    ],
    examples: &[
        (
            "A/B of bus width 8 vs 4 (configs in the plan), recorded:",
            "mmcab run workloads/bus-width-ab.toml --device /dev/mmcblk0 --allow-write",
        ),
        (
            "Print the matrix and touch nothing:",
            "mmcab run workloads/bus-width-ab.toml --device /dev/mmcblk0 --dry-run",
        ),
        (
            "Stop once each mean is known to 1%, at most 10 repetitions:",
            "mmcab run workloads/bus-width-ab.toml --device /dev/mmcblk0 --allow-write --until-ci 1 --max-repeat 10",
        ),
        (
            "One boot of a kernel A/B, labelled:",
            "mmcab run workloads/bus-width-boot.toml --device /dev/mmcblk0 --allow-write --label v6.19-rc1 --out /root/r-1",
        ),
        (
            "Finish an interrupted run:",
            "mmcab run --resume results/bus-width-ab-20261130T111428Z --allow-write",
        ),
    ],
    see_also: &[
        "mmcab-report(1)",
        "mmcab-compare(1)",
        "mmcab-knobs(1)",
        "mmcab-export-fio(1)",
        "mmcab-probe-packed(1)",
    ],
};

pub const CALIBRATE: Page = Page {
    command: "mmcab calibrate",
    description: &[
        "Measures a board's boot-to-boot spread from A/A boots: the same kernel and settings \
         booted several times (at least 3, better 5 or more), the same plan run in each boot \
         with `mmcab run --label`, one results directory per boot. For every config x \
         workload x direction x metric it stores the boots, the runs per boot, the sd of the \
         boot means and the pooled within-boot sd (relative to the mean), keyed by the \
         device identity, the plan's SHA-256 and `--scale-down`.",
        "It prints the spread of the headline metrics and how many boots per side would \
         resolve a change of 2%, 5% and 10%. A later `mmcab compare` of single boots of the \
         same device and plan tests with it (Satterthwaite's degrees of freedom for the \
         composed variance) and names the file in its `Calibration:` line.",
    ],
    json: &[
        ("schema", "1."),
        ("written_to", "The calibration file written."),
        ("calibration", "The file's content (with its own `schema`)."),
    ],
    exit_status: &[
        OK,
        (
            "1",
            "An error: fewer than 3 boots, directories of unlike devices, plans or \
             `--scale-down`, a directory that cannot be read, or the file cannot be written.",
        ),
        USAGE,
    ],
    environment: &[
        ("MMCAB_CALIBRATION_DIR", "The calibration store."),
        (
            "XDG_DATA_HOME, HOME",
            "Without MMCAB_CALIBRATION_DIR the store is $XDG_DATA_HOME/mmcab/calibration, \
             else $HOME/.local/share/mmcab/calibration.",
        ),
    ],
    files: &[
        ("DIR/meta.json, DIR/runs.csv", "The A/A boots' results directories, read."),
        (
            "STORE/<16 hex of the device identity's SHA-256>-<12 hex of the plan's SHA-256>[-sN].json",
            "The calibration written (`-sN` for `--scale-down N`), or `--out FILE`.",
        ),
    ],
    examples: &[
        (
            "Five A/A boots of one board into the store:",
            "mmcab calibrate results/aa-boot1 results/aa-boot2 results/aa-boot3 results/aa-boot4 results/aa-boot5",
        ),
        (
            "Into a file of its own, as JSON:",
            "mmcab calibrate results/aa-boot* --out board7.json --json",
        ),
        (
            "Then one boot per side is tested with it:",
            "mmcab compare results/v6.19-boot1 results/v7.0-boot1",
        ),
    ],
    see_also: &["mmcab-compare(1)", "mmcab-run(1)"],
};

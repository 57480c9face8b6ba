//! The pages of `mmcab report` and `mmcab compare` (see sections.rs).

use super::page::{Page, USAGE};

/// `--json` of report and compare (one document for both).
const REPORT_JSON: &[(&str, &str)] = &[
    ("schema", "1."),
    ("command", "`report` or `compare`."),
    ("report_dir", "Where the report files went."),
    (
        "report",
        "report.json: blocks of workload x direction x metric with a row per config or \
         side: `summary` {n, mean, sd, cv, median, ci_low, ci_high}, `change` {rel, ci_low, \
         ci_high, p, df}, `verdict`, `warnings`; `hosts` (the host drivers meta.json \
         recorded). null for a probe's report.",
    ),
    (
        "gate",
        "null without `--fail-if`, else {rule, description, status, checks: [{workload, \
         direction, metric, unit, config, baseline, change, ci_low, ci_high, verdict, status, \
         reason, open}]}.",
    ),
    (
        "forced, warnings",
        "Differences compared with `--force`; the warnings also shown on stderr.",
    ),
];

/// Exit statuses of report and compare: the gate's (`crate::exit::TABLE`).
const GATE_0: (&str, &str) = (
    "0",
    "The report was written; every gate check passed (or no `--fail-if`; inconclusive \
     checks with `--allow-inconclusive`).",
);
const GATE_6: (&str, &str) = (
    "6",
    "A gate check failed: a significant change of the kind `--fail-if` names (with \
     `--threshold T`, its whole 95% interval beyond T).",
);
const GATE_7: (&str, &str) = (
    "7",
    "Inconclusive: some check had no interval or verdict (one boot per side without a \
     calibration, fewer than 2 runs of a config) or, with `--threshold`, an interval too \
     wide to decide; none failed. 0 with `--allow-inconclusive`. For git bisect run, map 7 \
     to 125.",
);

/// The report directory's files (report/files.rs).
const REPORT_FILES: (&str, &str) = (
    "report.txt, report.md, summary.csv, report.json, *.svg, *.png",
    "The mail text (ASCII, at most 72 columns); the same with every metric and the charts \
     inline; one row per config x workload x direction x metric (n, mean, sd, cv, median, \
     ci_low, ci_high, change_rel, change_ci_low, change_ci_high, p, verdict, warnings); the \
     report model; charts (bars-<metric>, throughput-<workload>, \
     latency-cdf-<workload>-<direction>, sweep-<name>-<direction>, request-sizes). A \
     re-run replaces them.",
);

pub const REPORT: Page = Page {
    command: "mmcab report",
    description: &[
        "Compares the configs inside one results directory written by `mmcab run`. The \
         baseline (A) is `--baseline` or the plan's first config; every other config is \
         compared with it, per workload and direction on the headline metric (IOPS when \
         the mean I/O is 64 KiB or less, else MB/s; latency in the files): mean, 95% CI, \
         cv, the change with its interval, Welch's p and the adjusted q (`--correction`, \
         Benjamini-Hochberg by default), and a verdict, faster or slower only when the \
         interval clears zero and q < 0.05. Warm-up runs are left out. The mail text \
         starts with each config's knob settings and bus and each workload's parameters \
         in fio's words, and ends with the kernel evidence.",
        "DIR may also be a reference CSV of published numbers (reported into a directory \
         named after it), a probe directory of `mmcab probe`, or a text file of flashbench \
         output (both get the probe report).",
        "`--format` chooses stdout: the mail text (default), JSON (`--json`) or LAVA test \
         cases; the files are written either way, and the report directory is named on \
         stderr. `--fail-if slower|faster|changed` makes the report a regression gate: each \
         compared config's headline metrics pass, fail or are inconclusive, printed after \
         the mail text, in the JSON and as LAVA test cases, and in the exit status.",
    ],
    json: REPORT_JSON,
    exit_status: &[
        GATE_0,
        (
            "1",
            "An error, nothing compared: not a results directory, an unknown `--baseline`, \
             `--fail-if` on a report with one config, `--fail-if` or `--format lava` on a \
             probe's report. One line on stderr says why.",
        ),
        USAGE,
        GATE_6,
        GATE_7,
    ],
    environment: &[],
    files: &[
        (
            "DIR/runs.csv, series.csv, latency.csv, evidence.csv, request_sizes.csv, meta.json",
            "The results directory read (every results format from mmcab 0.1.0 on).",
        ),
        ("DIR/report/", "The report written."),
        REPORT_FILES,
        (
            "results/reference/X.csv -> results/reference/X/",
            "A reference CSV and its report directory.",
        ),
        (
            "DIR/probe.json",
            "A probe directory: report.txt and the charts are written into DIR itself.",
        ),
    ],
    examples: &[
        ("The configs of one run:", "mmcab report results/bus-width-ab-20261130T111428Z"),
        (
            "A CI gate within one boot: exit 6 on a slowdown beyond 3% at 95% confidence:",
            "mmcab report results/ab --fail-if slower --threshold 3%",
        ),
        ("LAVA test cases:", "mmcab report results/ab --format lava --fail-if slower"),
        (
            "Published numbers and published flashbench output:",
            "mmcab report results/reference/packing-2012-linux-mmc.csv\nmmcab report results/reference/beaglebone-2013-flashbench.txt",
        ),
    ],
    see_also: &["mmcab-run(1)", "mmcab-compare(1)", "mmcab-probe(1)"],
};

pub const COMPARE: Page = Page {
    command: "mmcab compare",
    description: &[
        "Compares results directories from different boots, kernels or device trees; each \
         directory is one boot (one `mmcab run --label` per boot). With `--vs`, the \
         directories before it are the baseline's boots (A) and those after it the new \
         side's; a side is named after its boots' label. Without `--vs`, each directory is \
         its own side, compared with the first. A directory with several configs \
         contributes side/config for each.",
        "Boots are the unit: each boot's runs give one mean and the change is tested on the \
         boot means (Welch t; Student t for one boot against several). With one boot per \
         side the change is shown but not tested, unless `mmcab calibrate` stored the \
         board's boot-to-boot spread for this device and plan. Directories that measured \
         different devices (CID and capacity), plans (SHA-256) or `--scale-down` are \
         refused, naming the field, unless `--force` (then every difference is a warning \
         and listed in the report). Other host drivers or module parameters are warnings \
         only.",
        "`--baseline STORE` compares the given boots with the baseline stored for their \
         device, plan and scale; `--save-baseline` stores them instead (replacing the \
         stored boots, or with `--keep N` adding them and keeping the last N). `--format` \
         and `--fail-if` work as in `mmcab-report`(1).",
    ],
    json: REPORT_JSON,
    exit_status: &[
        GATE_0,
        (
            "1",
            "An error, nothing compared: a bad directory, unlike devices or plans without \
             `--force`, no baseline in the store, fewer than two sides, a calibration that \
             cannot be read. One line on stderr says why.",
        ),
        USAGE,
        GATE_6,
        GATE_7,
    ],
    environment: &[
        (
            "MMCAB_CALIBRATION_DIR",
            "The calibration store looked up for sides of one boot (else \
             $XDG_DATA_HOME/mmcab/calibration, else ~/.local/share/mmcab/calibration); \
             `--no-calibration` ignores it.",
        ),
    ],
    files: &[
        ("DIR/meta.json, DIR/runs.csv, ...", "The boots' results directories, read."),
        (
            "FIRST_DIR/report/compare-<side>-vs-<side>.../",
            "The report written (same files as `mmcab report`).",
        ),
        REPORT_FILES,
        (
            "STORE/<device key>/<plan name>/plan-<12 hex of SHA-256>_scale-down-<N>/<seq>_<label>/",
            "With `--baseline STORE`: the stored boots (copies of results directories \
             without report/); the report goes to NEW_DIR/report/compare-baseline-vs-<name>/.",
        ),
        ("$MMCAB_CALIBRATION_DIR/*.json", "Calibrations of `mmcab calibrate`, or `--calibration FILE`."),
    ],
    examples: &[
        (
            "Three boots per side, gated on a slowdown beyond 3%:",
            "mmcab compare base-1 base-2 base-3 --vs new-1 new-2 new-3 --fail-if slower --threshold 3%",
        ),
        ("Two kernels, one boot each (shown, not tested):", "mmcab compare results/v6.12-boot1 results/v7.2-boot1"),
        (
            "Against the lab's stored baseline for this card and plan:",
            "mmcab compare --baseline /srv/mmcab-baselines new-1 --fail-if slower --threshold 3%",
        ),
        (
            "Add a main-branch job's boot to the baseline, keeping the last 5:",
            "mmcab compare --baseline /srv/mmcab-baselines --save-baseline --keep 5 results/r",
        ),
        (
            "In git bisect run (7, inconclusive, means: cannot test this commit):",
            "mmcab compare a1 a2 a3 --vs b1 b2 b3 --fail-if slower; s=$?; [ $s = 7 ] && exit 125; exit $s",
        ),
    ],
    see_also: &["mmcab-report(1)", "mmcab-calibrate(1)", "mmcab-run(1)"],
};

#!/bin/sh
# The run step of lava/mmcab.yaml (POSIX sh: boards may have only busybox). Puts the
# static mmcab on the board, runs a plan against DEVICE, prints every metric as a LAVA
# test case (mmcab report/compare --format lava) and keeps the results directory:
# uploaded to ARTIFACT_URL when given (and referenced with lava-test-reference),
# otherwise its summary.csv goes into the log. Outside LAVA (no lava-test-case on PATH)
# it prints the same signal lines itself, so it can be tried on any machine.
#
# Environment (the test definition's params): MMCAB_URL, DEVICE, PLAN, RUN_ARGS, GATE,
# BASELINE_DIR, SAVE_BASELINE, BASELINE_KEEP, ARTIFACT_URL, ARTIFACT_TOKEN; OUT (default
# ./mmcab-output).
set -u
DEVICE=${DEVICE:-/dev/mmcblk0}
PLAN=${PLAN:-workloads/dd-bus-width.toml}
RUN_ARGS=${RUN_ARGS:-}
GATE=${GATE:-}
BASELINE_DIR=${BASELINE_DIR:-}
SAVE_BASELINE=${SAVE_BASELINE:-false}
BASELINE_KEEP=${BASELINE_KEEP-5}
ARTIFACT_URL=${ARTIFACT_URL:-}
ARTIFACT_TOKEN=${ARTIFACT_TOKEN:-}
OUT=${OUT:-$PWD/mmcab-output}
RESULTS=$OUT/results

# case ID pass|fail [MEASUREMENT UNITS]: one LAVA test case, through LAVA's helper if any.
case_result() {
    if command -v lava-test-case >/dev/null 2>&1; then
        if [ $# -ge 4 ]; then
            lava-test-case "$1" --result "$2" --measurement "$3" --units "$4"
        else
            lava-test-case "$1" --result "$2"
        fi
    elif [ $# -ge 4 ]; then
        echo "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=$1 RESULT=$2 MEASUREMENT=$3 UNITS=$4>"
    else
        echo "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=$1 RESULT=$2>"
    fi
}
check() { # check ID COMMAND...: a pass/fail test case for COMMAND's exit status
    id=$1
    shift
    if "$@"; then case_result "$id" pass; else case_result "$id" fail; return 1; fi
}

mkdir -p "$OUT" || exit 1

# 1. The binary: downloaded, or the one on PATH.
MMCAB=mmcab
if [ -n "${MMCAB_URL:-}" ]; then
    MMCAB=$OUT/mmcab
    if command -v curl >/dev/null 2>&1; then
        check mmcab-download curl -fsSL -o "$MMCAB" "$MMCAB_URL" || exit 0
    else
        check mmcab-download wget -q -O "$MMCAB" "$MMCAB_URL" || exit 0
    fi
    chmod 755 "$MMCAB"
fi
check mmcab-version "$MMCAB" --version || exit 0

# 2. The card, as the kernel drives it (kept with the results).
info() { "$MMCAB" info --json "$DEVICE" >"$OUT/info.json"; }
check mmcab-info info

# 3. The plan. LAVA writes each parameter into the run script single-quoted
# (RUN_ARGS='--label $(uname -r)'), so nothing in it has been expanded yet: RUN_ARGS is
# evaluated here as shell words, on the board, so that $(uname -r) names the running
# kernel and quotes group words.
eval "set -- $RUN_ARGS" || { case_result mmcab-run-args fail; exit 0; }

# A gate without a baseline compares the plan's configs with each other: a plan with one
# config (dd-bus-width.toml) has nothing to compare, so the gate is refused here, before
# the run, not after it with no test case at all. The count comes from the plan as the
# run will see it (--dry-run touches no device; RUN_ARGS may pick configs).
if [ -n "$GATE" ] && [ -z "$BASELINE_DIR" ]; then
    configs=$("$MMCAB" run "$PLAN" --device "$DEVICE" "$@" --dry-run --json |
        sed -n 's/^  "config_count": \([0-9][0-9]*\),*$/\1/p')
    if [ -z "$configs" ]; then
        case_result mmcab-plan fail
        exit 0
    fi
    if [ "$configs" -lt 2 ]; then
        echo "mmcab-lava: GATE ($GATE) compares the plan's configs, and $PLAN has $configs:" \
            "use a plan with two configs (workloads/bus-width-ab.toml), or set BASELINE_DIR" \
            "to compare with a stored baseline, or leave GATE empty"
        case_result mmcab-gate fail
        exit 0
    fi
fi
check mmcab-run "$MMCAB" run "$PLAN" --device "$DEVICE" --allow-write --out "$RESULTS" "$@" ||
    exit 0

# 4. Every metric as a test case, and the gate (exit 6 = regression, 7 = inconclusive).
# A job measures one boot: SAVE_BASELINE adds it to the stored boots (the last
# BASELINE_KEEP saved), so the baseline spans jobs.
if [ -n "$BASELINE_DIR" ] && [ "$SAVE_BASELINE" = true ]; then
    keep=
    [ -n "$BASELINE_KEEP" ] && keep="--keep $BASELINE_KEEP"
    # shellcheck disable=SC2086
    check mmcab-save-baseline "$MMCAB" compare --baseline "$BASELINE_DIR" --save-baseline $keep "$RESULTS"
    # shellcheck disable=SC2086
    "$MMCAB" report "$RESULTS" --format lava
elif [ -n "$BASELINE_DIR" ]; then
    # shellcheck disable=SC2086
    "$MMCAB" compare --baseline "$BASELINE_DIR" "$RESULTS" --format lava $GATE
else
    # shellcheck disable=SC2086
    "$MMCAB" report "$RESULTS" --format lava $GATE
fi
status=$?
echo "mmcab-lava: report/compare exit status $status"
# 0: done; 6 and 7: the gate's fail/inconclusive, already a test case. Anything else
# (an error, its line above) would leave the job without metrics and without a failure.
case $status in
0 | 6 | 7) ;;
*) case_result mmcab-report fail ;;
esac

# 5. Keep the results directory.
tarball=$OUT/mmcab-results.tar.gz
tar -C "$OUT" -czf "$tarball" results info.json
if [ -n "$ARTIFACT_URL" ]; then
    url=$(curl -fsS -F "path=@$tarball" -F "token=$ARTIFACT_TOKEN" "$ARTIFACT_URL")
    if [ -n "$url" ] && command -v lava-test-reference >/dev/null 2>&1; then
        lava-test-reference mmcab-results --result pass --reference "$url"
    else
        check mmcab-results-upload test -n "$url"
        echo "mmcab-lava: results uploaded to $url"
    fi
else
    echo "mmcab-lava: results kept in $tarball on the board; summary.csv:"
    find "$RESULTS" -name summary.csv -exec cat {} \;
fi
exit 0

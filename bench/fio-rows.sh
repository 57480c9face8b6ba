# Sourced by bench/fio-compare (host loop device) and bench/guest-fio-compare (in the
# emulated guests): the rows both compare, as ROWS=("name|mmcab job keys|fio options"),
# and the helpers that build them, so both benchmarks run the same jobs.
# shellcheck shell=bash
# shellcheck disable=SC2034  # ROWS and PSYNC are used by the scripts that source this

# fio's best io_uring settings for this target (see the header): registered buffers
# and file, and at QD > 1 the batching that measured fastest.
fio_uring() { # QD
    local qd=$1 o="--ioengine=io_uring --iodepth=$1 --fixedbufs=1 --registerfiles=1"
    if [ "$qd" -gt 1 ]; then
        o="$o --iodepth_batch_submit=$qd --iodepth_batch_complete_min=$(( qd / 2 ))"
        o="$o --iodepth_batch_complete_max=$qd"
    fi
    echo "$o"
}
uring() { # QD: mmcab's keys, the same batching as fio_uring's
    printf 'engine = "io_uring"\niodepth = %s' "$1"
    [ "$1" -le 1 ] || printf '\niodepth_batch_complete_min = %s' $(( $1 / 2 ))
}
# Both tools waiting for one completion per wait (mmcab's default, fio's
# --iodepth_batch_complete_min=1): the latency-exact setting.
uring_wait1() { # QD
    printf 'engine = "io_uring"\niodepth = %s' "$1"
}
fio_uring_wait1() { # QD
    echo "--ioengine=io_uring --iodepth=$1 --fixedbufs=1 --registerfiles=1 --iodepth_batch_submit=$1 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=$1"
}
PSYNC="--ioengine=psync --iodepth=1"

# name | mmcab job keys | fio options
ROWS=(
  "4k-randread-qd1-sync|rw = \"randread\"
bs = \"4k\"
engine = \"sync\"|--rw=randread --bs=4k $PSYNC"
  "4k-randread-qd1-io_uring|rw = \"randread\"
bs = \"4k\"
$(uring 1)|--rw=randread --bs=4k $(fio_uring 1)"
  "4k-randread-qd8-io_uring|rw = \"randread\"
bs = \"4k\"
$(uring 8)|--rw=randread --bs=4k $(fio_uring 8)"
  "4k-randread-qd32-io_uring|rw = \"randread\"
bs = \"4k\"
$(uring 32)|--rw=randread --bs=4k $(fio_uring 32)"
  "512k-seqread-sync|rw = \"read\"
bs = \"512k\"
engine = \"sync\"|--rw=read --bs=512k $PSYNC"
  "512k-seqread-qd1-io_uring|rw = \"read\"
bs = \"512k\"
$(uring 1)|--rw=read --bs=512k $(fio_uring 1)"
  "512k-seqwrite-sync|rw = \"write\"
bs = \"512k\"
engine = \"sync\"|--rw=write --bs=512k $PSYNC"
  "512k-seqwrite-qd1-io_uring|rw = \"write\"
bs = \"512k\"
$(uring 1)|--rw=write --bs=512k $(fio_uring 1)"
  "4k-randwrite-qd32-io_uring|rw = \"randwrite\"
bs = \"4k\"
$(uring 32)|--rw=randwrite --bs=4k $(fio_uring 32)"
  "4k-randread-qd32-io_uring-wait1|rw = \"randread\"
bs = \"4k\"
$(uring_wait1 32)|--rw=randread --bs=4k $(fio_uring_wait1 32)"
  "4k-randwrite-qd1-sync|rw = \"randwrite\"
bs = \"4k\"
engine = \"sync\"|--rw=randwrite --bs=4k $PSYNC"
  "4k-randwrite-qd1-io_uring|rw = \"randwrite\"
bs = \"4k\"
$(uring 1)|--rw=randwrite --bs=4k $(fio_uring 1)"
  "4k-randwrite-qd8-io_uring|rw = \"randwrite\"
bs = \"4k\"
$(uring 8)|--rw=randwrite --bs=4k $(fio_uring 8)"
  "4k-randwrite-qd32-io_uring-wait1|rw = \"randwrite\"
bs = \"4k\"
$(uring_wait1 32)|--rw=randwrite --bs=4k $(fio_uring_wait1 32)"
)

# ROWS_MATCH (an extended regex): only the rows whose name matches, e.g. "randwrite".
if [ -n "${ROWS_MATCH:-}" ]; then
    kept=()
    for row in "${ROWS[@]}"; do
        [[ ${row%%|*} =~ $ROWS_MATCH ]] && kept+=("$row")
    done
    [ "${#kept[@]}" -gt 0 ] || { echo "ROWS_MATCH=$ROWS_MATCH matches no row" >&2; exit 1; }
    ROWS=("${kept[@]}")
fi

# guest_plan NAME KEYS MIB RUNTIME: the guest's shell lines that write a row's plan to
# /tmp/NAME.toml (the first MIB MiB of the card, RUNTIME seconds, time-based), for
# bench/guest-fio-compare and bench/guest-fio-trace.
guest_plan() {
    printf "cat > /tmp/%s.toml <<'MMCAB_EOF'\n" "$1"
    printf 'name = "bench"\n[[workload]]\nname = "%s"\n[[workload.job]]\nname = "j"\n%s\n' "$1" "$2"
    printf 'size = "%sMiB"\nruntime = "%ss"\ntime_based = true\nMMCAB_EOF\n' "$3" "$4"
}

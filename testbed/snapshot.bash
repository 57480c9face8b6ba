# shellcheck shell=bash
# testbed/snapshot.bash: sourced by testbed/run. Boots of the simulated card (--card sim,
# guest clock tied to instructions) start from a saved machine instead of a cold boot.
#
# Why: under --icount the boot costs 25-30 s of host CPU, most of it in one place. Linux's
# free_initmem() on Arm (arch/arm/mm/init.c, fix_kernmem_perms()) runs a stop_machine()
# in which one CPU flushes the kernel's TLB entries a page at a time while the other
# spins; each flush ends the round-robin vCPU's turn in QEMU, and the spinning vCPU
# then runs until the next guest timer, so the boot executes ~20 s of guest time
# (10^10 instructions at --icount 1) with no output after the last initcall. A
# snapshot skips all of it: the restore and the run's own start take 2-4 s.
#
# How: the first run with a given machine (kernel, initramfs, DTB, memory, icount, kernel
# command line, QEMU version) boots it with /run/snapshot in the initramfs: guest-init
# stops before loading any module and waits for the run's files on the console. The
# machine is saved there by a live migration into a file (QEMU's monitor `migrate
# "exec:..."`), kept in $CACHE/snapshots/KEY/. Every run restores it (-incoming), and
# the console then carries the run's files (command line, host clock, the module load
# order with the sim card's parameters) as a base64 tar. From there the guest does what
# a cold boot does: set the clock, insmod, wait for the card, run the command.
#
# The module is loaded after the restore, so each run's card (seed, timing, faults) is
# its own; what the runs share is the kernel's state at the end of its boot, identical
# in every cold boot too except for timing (the guest clock reads more seconds since
# boot: the saving boot idles in guest time while it waits). --no-snapshot boots cold.

snap_log() { [ "$verbose" = 1 ] && log "snapshot: $*"; return 0; }

# snapshot_key: a hash of everything that shapes the saved machine.
snapshot_key() {
    {
        echo "snapshot 1"
        $qemu --version | head -1
        echo "$kver $arch $memory icount=$icount cmdline=$kernel_cmdline"
        sha256sum <"$base_initrd"
        sha256sum <"$dtb"
        sha256sum <"$kdir/vmlinuz"
        (cd "$work/snapfs" && find . -type f | LC_ALL=C sort | xargs sha256sum)
        sha256sum <"$HERE/snapshot.bash"
    } | sha256sum | cut -c1-16
}

# snapshot_files: the part of the initramfs the snapshot adds to the cached image: the
# repo's plan files (/workloads) and the marker that makes guest-init wait.
snapshot_files() {
    mkdir -p "$work/snapfs/run"
    : >"$work/snapfs/run/snapshot"
    [ -d "$HERE/../workloads" ] && cp -r "$HERE/../workloads" "$work/snapfs/workloads"
    newc_gz "$work/snapfs" 1 >"$work/snapfs.cpio.gz"
}

# snapshot_save DIR: boot the machine with the marker, wait for guest-init to stop at it,
# and save it to DIR/state.zst. DIR already holds initrd.gz. The DTB is this run's own
# ("${machine[@]}"): the key holds its hash, so every run restoring the snapshot passes
# QEMU the same one.
snapshot_save() {
    local dir=$1 con=$1/console.log mon=$1/monitor pid line status= deadline
    mkfifo "$mon.in" "$mon.out" || return 1
    "${pdeath[@]}" $qemu "${machine[@]}" -m "$memory" "${icount_opts[@]}" \
        -display none -no-reboot -serial "file:$con" -monitor "pipe:$mon" \
        -kernel "$kdir/vmlinuz" -initrd "$dir/initrd.gz" \
        -append "$kernel_cmdline" \
        >"$dir/qemu.out" 2>&1 &
    pid=$!
    local mi mo
    exec {mi}<>"$mon.in" {mo}<>"$mon.out"
    deadline=$(($(date +%s) + 300))
    until grep -q '@@MMCAB:SNAPSHOT@@' "$con" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null || (($(date +%s) > deadline)); then
            log "snapshot: the saving boot did not reach guest-init's wait (console tail below)"
            tail -n 20 "$con" 2>/dev/null | tr -d '\r' >&2
            kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
            exec {mi}>&- {mo}<&-
            return 1
        fi
        sleep 0.2
    done
    # A live migration of the idle guest (it is waiting for console input): the restored
    # machine then starts running by itself. zstd -1: ~75 MB of RAM in use becomes ~27 MB.
    printf 'migrate "exec:zstd -q -1 -o %s.part && mv %s.part %s"\n' \
        "$dir/state.zst" "$dir/state.zst" "$dir/state.zst" >&$mi
    deadline=$(($(date +%s) + 120))
    while [ -z "$status" ] && (($(date +%s) <= deadline)); do
        sleep 0.3
        printf 'info migrate\n' >&$mi
        while IFS= read -r -t 0.5 line <&$mo; do
            case $line in
                *"Migration status: completed"*) status=completed ;;
                *"Migration status: failed"* | *"Migration status: cancelled"*) status=failed ;;
                *"Error"* | *"error"*) log "snapshot: QEMU: ${line//$'\r'/}" ;;
            esac
        done
    done
    # The stream's writer (zstd, then mv) ends a moment after QEMU has sent everything.
    while [ "$status" = completed ] && [ ! -f "$dir/state.zst" ] && (($(date +%s) <= deadline)); do
        sleep 0.1
    done
    printf 'quit\n' >&$mi
    sleep 0.5
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exec {mi}>&- {mo}<&-
    rm -f "$mon.in" "$mon.out"
    [ "$status" = completed ] && [ -f "$dir/state.zst" ] && return 0
    log "snapshot: saving the machine failed (migration ${status:-timed out})"
    return 1
}

# snapshot_prepare: find or make the snapshot of this machine. On success sets snap_dir
# (initrd.gz, state.zst); on failure leaves it empty (the run boots cold).
snapshot_prepare() {
    snap_dir=
    command -v zstd >/dev/null || { log "snapshot: zstd missing, booting cold (run testbed/setup)"; return 0; }
    snapshot_files
    local key root=$CACHE/snapshots lock tmp
    key=$(snapshot_key)
    mkdir -p "$root" || return 0
    exec {lock}>"$root/$key.lock"
    flock "$lock" # one run saves it; concurrent runs of the same machine wait for it
    if [ ! -f "$root/$key/state.zst" ]; then
        local started=$SECONDS
        tmp=$(mktemp -d "$root/$key.tmp.XXXXXX")
        cat "$base_initrd" "$work/snapfs.cpio.gz" >"$tmp/initrd.gz"
        if snapshot_save "$tmp"; then
            rm -rf "${root:?}/$key"
            mv "$tmp" "$root/$key"
            snap_log "saved $root/$key in $((SECONDS - started)) s"
        else
            rm -rf "$tmp"
            flock -u "$lock"; exec {lock}>&-
            log "snapshot: booting cold instead"
            return 0
        fi
    fi
    touch "$root/$key" "$root/$key/state.zst"
    flock -u "$lock"; exec {lock}>&-
    snap_dir=$root/$key
    # Keep the 8 most recently used (each ~27 MB), and any used in the last 10 minutes:
    # the guest tier alone restores at least 4 machines (Linux 7.x at icount 1 and 0,
    # 6.12 and 6.1 at icount 1), and another checkout's binary makes 4 more, so keeping 4
    # could make a run boot and save one again (~40 s) when tests took turns, and could
    # delete a snapshot a concurrent run had chosen but not yet opened (QEMU then fails
    # at once: a testbed failure, status 125).
    ls -1dt "$root"/*/ 2>/dev/null | grep -v '\.tmp\.' | tail -n +9 |
        while IFS= read -r old; do
            [ -n "$(find "$old" -maxdepth 0 -mmin -10)" ] || rm -rf "$old"
        done
    find "$root" -maxdepth 1 -name '*.lock' -mtime +1 -delete 2>/dev/null
    find "$root" -maxdepth 1 -name '*.tmp.*' -mmin +60 -exec rm -rf {} + 2>/dev/null
    return 0
}

# snapshot_input FILE: what the console sends the restored guest: a line it skips (the
# UART may take a character before the saved state is loaded over it), then the run's
# files (run/cmd.sh, run/epoch, lib/modules/load-order) as a base64 tar between markers.
snapshot_input() {
    {
        printf '%64s\n' '' | tr ' ' '.'
        echo '@@MMCAB:RUN:BEGIN@@'
        (cd "$work/runfs" && tar -czf - run lib) | base64 -w 76
        echo '@@MMCAB:RUN:END@@'
    } >"$1"
}

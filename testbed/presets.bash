# shellcheck shell=bash
# testbed/presets.bash: sourced by testbed/run for `--card sim:NAME[,PARAM=VALUE...]`, a
# named preset of the simulated eMMC (testbed/presets/NAME) with the given parameters
# over it. Presets are data: each file is parsed here, never sourced.
#
# A preset file: line 1 "# NAME: what it is" (what `--card sim:help` prints), then "#"
# lines (its source and calibration), then PARAM=VALUE lines, one a line: an emmcsim
# module parameter (checked against the .ko as `--card sim,PARAM=VALUE` is), or
# `icount=SHIFT`, the guest CPU the preset pairs with (testbed/run's --icount). A "#"
# after a blank starts a comment; blank lines are skipped. What overrides a preset's
# value: the same PARAM after the name, --bus-width (bus_width), --image-size
# (capacity_mb) and --icount, each given on the command line.

PRESET_DIR=$HERE/presets

# preset_names: the shipped presets, one a line.
preset_names() {
    local f
    for f in "$PRESET_DIR"/*; do
        [ -f "$f" ] && [[ $(basename "$f") =~ ^[a-z0-9][a-z0-9-]*$ ]] && basename "$f"
    done
    return 0
}

# preset_list: "NAME  description" for each preset (the first line of its file).
preset_list() {
    local n line
    while read -r n; do
        line=$(head -1 "$PRESET_DIR/$n")
        printf '  %-18s %s\n' "$n" "${line#"# $n: "}"
    done < <(preset_names)
}

# preset_expand SPEC: SPEC is "NAME[,PARAM=VALUE...]" (what follows --card sim:). Sets
# preset_name, preset_icount (empty when the file has none) and card="sim,P=V,...": the
# preset's parameters the command line does not override, then the command line's.
preset_expand() {
    local spec=$1 name user=() kv line key val n=0
    name=${spec%%,*}
    if [ "$name" = help ]; then
        echo "testbed/run --card sim:NAME[,PARAM=VALUE...]: presets of the simulated eMMC (testbed/presets/):"
        preset_list
        exit 0
    fi
    [ -n "$name" ] && [ -f "$PRESET_DIR/$name" ] && [[ $name =~ ^[a-z0-9][a-z0-9-]*$ ]] ||
        die "--card sim:$name: no such preset (have: $(preset_names | paste -sd' '); --card sim:help lists them)"
    [[ $spec == *,* ]] && IFS=, read -r -a user <<<"${spec#*,}"
    local -A over=()
    for kv in "${user[@]}"; do over[${kv%%=*}]=1; done
    [[ $given != *" bus-width "* ]] || over[bus_width]=1
    [[ $given != *" image-size "* ]] || over[capacity_mb]=1
    local -A seen=()
    card=sim preset_name=$name preset_icount=
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        line=${line%%[[:space:]]#*}
        [[ $line == \#* ]] && continue
        line=${line//[[:space:]]/}
        [ -n "$line" ] || continue
        [[ $line =~ ^[a-z][a-z0-9_]*=[^=]+$ ]] ||
            die "testbed/presets/$name line $n: '$line' is not PARAM=VALUE"
        key=${line%%=*} val=${line#*=}
        [ -z "${seen[$key]+x}" ] || die "testbed/presets/$name line $n: $key given twice"
        seen[$key]=1
        if [ "$key" = icount ]; then
            preset_icount=$val
        elif [ -z "${over[$key]+x}" ]; then
            card+=",$key=$val"
        fi
    done <"$PRESET_DIR/$name"
    for kv in "${user[@]}"; do card+=",$kv"; done
}

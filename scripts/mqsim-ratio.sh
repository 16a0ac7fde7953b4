#!/usr/bin/env bash
# Simulated requests per CPU-second: MQSim against ullsim on the same workloads (issue 33; README, "Speed").
#
#   scripts/mqsim-ratio.sh MQSIM_CHECKOUT [ULLSIM_BINARY]
#
# Builds MQSim in MQSIM_CHECKOUT with its stock Makefile (`make`), then runs each workload below in both
# simulators twice, for 1 s and for 5 s of simulated time, and reports requests per CPU-second (user + system)
# over the difference of the two runs, so that neither simulator's setup (MQSim's preconditioning, ullsim's)
# counts. MQSim runs its stock ssdconfig.xml (preconditioning off: with it on, MQSim's setup alone takes
# minutes and gigabytes); ullsim runs the matching scenario of scenarios/mqsim/ (the `mqsim-mlc` preset, a
# host that adds no time). ULLSIM_BINARY defaults to target/release/ullsim (built if missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mqsim_dir=${1:?usage: scripts/mqsim-ratio.sh MQSIM_CHECKOUT [ULLSIM_BINARY]}
ullsim=${2:-$root/target/release/ullsim}
[ -x "$ullsim" ] || (cd "$root" && cargo build --release -p ullsim-cli)
make -C "$mqsim_dir" -j"$(nproc)" >/dev/null
mqsim=$mqsim_dir/MQSim
[ -x "$mqsim" ] || { echo "no MQSim binary after make in $mqsim_dir" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$mqsim_dir/ssdconfig.xml" "$work/ssdconfig.xml"

# flow READ_PERCENT ADDRESS SECTORS QUEUE_DEPTH SEED STOP_NS: one MQSim synthetic flow.
flow() {
    sed -e "s/@READ@/$1/" -e "s/@ADDRESS@/$2/" -e "s/@SECTORS@/$3/" -e "s/@QD@/$4/" -e "s/@SEED@/$5/" \
        -e "s/@STOP_NS@/$6/" "$root/scripts/mqsim/flow.xml.in"
}

# workload NAME STOP_NS: MQSim's workload file of one case.
workload() {
    echo '<?xml version="1.0" encoding="us-ascii"?>'
    echo '<MQSim_IO_Scenarios><IO_Scenario>'
    case $1 in
        randread-qd32) flow 100 RANDOM_UNIFORM 8 32 798 "$2" ;;
        randread-qd1) flow 100 RANDOM_UNIFORM 8 1 798 "$2" ;;
        reader-beside-writer) flow 100 RANDOM_UNIFORM 8 1 798 "$2"; flow 0 STREAMING 256 32 6533 "$2" ;;
    esac
    echo '</IO_Scenario></MQSim_IO_Scenarios>'
}

# cpu_seconds COMMAND...: the command's user + system CPU seconds (its output to $work/out).
cpu_seconds() {
    /usr/bin/time -f '%U %S' -o "$work/time" "$@" >"$work/out" 2>&1
    awk '{ print $1 + $2 }' "$work/time"
}

# mqsim_run NAME SECONDS: "requests cpu_seconds".
mqsim_run() {
    workload "$1" "$2"000000000 >"$work/$1-$2.xml"
    local cpu
    cpu=$(cd "$work" && cpu_seconds "$mqsim" -i ssdconfig.xml -w "$1-$2.xml")
    local requests
    requests=$(grep -o '<Request_Count>[0-9]*' "$work/$1-$2_scenario_1.xml" | awk -F'>' '{ n += $2 } END { print n }')
    echo "$requests $cpu"
}

# ullsim_run NAME SECONDS: "requests cpu_seconds".
ullsim_run() {
    local cpu
    cpu=$(cpu_seconds "$ullsim" run "$root/scenarios/mqsim/$1.toml" --set run.duration="$2s" --json "$work/u.json")
    local requests
    requests=$(python3 -c 'import json,sys; print(sum(f["completed"] for f in json.load(open(sys.argv[1]))["flows"]))' "$work/u.json")
    echo "$requests $cpu"
}

printf '| workload | MQSim req/CPU-s | ullsim req/CPU-s | ratio |\n|---|---|---|---|\n'
for case in randread-qd32 randread-qd1 reader-beside-writer; do
    read -r m1 mc1 < <(mqsim_run "$case" 1)
    read -r m3 mc3 < <(mqsim_run "$case" 5)
    read -r u1 uc1 < <(ullsim_run "$case" 1)
    read -r u3 uc3 < <(ullsim_run "$case" 5)
    python3 - "$case" "$m1" "$mc1" "$m3" "$mc3" "$u1" "$uc1" "$u3" "$uc3" <<'PY'
import sys
case, m1, mc1, m3, mc3, u1, uc1, u3, uc3 = sys.argv[1], *map(float, sys.argv[2:])
rate = lambda r1, c1, r3, c3: (r3 - r1) / max(c3 - c1, 0.01)
m, u = rate(m1, mc1, m3, mc3), rate(u1, uc1, u3, uc3)
print(f"| {case} | {m:,.0f} | {u:,.0f} | {u / m:.0f}x |")
PY
done

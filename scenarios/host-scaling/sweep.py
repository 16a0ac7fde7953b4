#!/usr/bin/env python3
"""The host-scaling table of docs/validation.md: IOPS and CPU time per I/O per scheduler as pinned jobs go
1..16 (QD128 in all) on scenarios/host-scaling/randread-qd128.toml.

    python3 scenarios/host-scaling/sweep.py [BINARY] [--fast] [--drives=N]

--fast: the same drive with 4 firmware cores and reads from a 16 MiB region its DRAM cache holds (a what-if
drive bound by its PCIe 4.0 link near 1.6M IOPS instead of its dies near 0.85M, so the host can bind).
--drives=N: N such drives, every job reading from all of them in turn (fio's filename list with
file_service_type=roundrobin: its I/Os go to nvme0, nvme1, ... in turn)."""
import json, subprocess, sys, tempfile, os

args = [a for a in sys.argv[1:] if not a.startswith("--")]
binary = args[0] if args else "target/quick/ullsim"
fast = "--fast" in sys.argv
drives = next((int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--drives=")), 1)
here = os.path.dirname(os.path.abspath(__file__))
scenario = os.path.join(here, "randread-qd128.toml")
jobs = [1, 2, 4, 8, 10, 16]
print("| scheduler | " + " | ".join(f"{n} job{'s' if n > 1 else ''}" for n in jobs) + " |")
print("|---|" + "---|" * len(jobs))
for sched in ["none", "mq-deadline", "kyber", "bfq"]:
    cells = []
    for n in jobs:
        depth = -(-128 // n)
        cmd = [binary, "run", scenario, "--set", f"host.io_scheduler={sched}", "--set", f"flow.fio.numjobs={n}",
               "--set", f"flow.fio.iodepth={depth}"]
        if fast:
            cmd += ["--set", "flow.fio.size=16MiB", "--set", "device.controller.firmware_cores=4"]
        if drives > 1:
            names = ":".join(f"nvme{i}" for i in range(drives))
            cmd += ["--set", f"device.count={drives}", "--set", f'flow.fio.device="{names}"']
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run(cmd + ["--json", out.name], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            d = json.load(open(out.name))
        iops = d["flows"][0]["iops"]
        cpu_us = d["host"]["busy_cores"] / iops * 1e6
        cells.append(f"{iops / 1e3:.0f}K / {cpu_us:.2f}")
    print(f"| {sched} | " + " | ".join(cells) + " |")

#!/usr/bin/env python3
"""Turn `ullsim compare --json` output of a contention sweep into the markdown tables of docs/validation.md.

    python3 scenarios/contention/table.py out.json [out2.json ...]

One table per file: a row per scheduler and n (flow.bulk.numjobs), with the L-app's mean, p99 and p99.9 (µs)
and the throughput processes' MB/s; n = 0 is the L-app's alone run (metrics.fairness).
"""
import json
import sys


def us(ns):
    return f"{ns / 1000:.0f}" if ns >= 10_000 else f"{ns / 1000:.1f}"


def table(path):
    data = json.load(open(path))
    rows = {}
    alone = None
    for variant in data["variants"]:
        over = variant["overrides"]
        results = variant["results"]
        lapp = next(f for f in results["flows"] if f["name"] == "lapp")
        bulk = next(f for f in results["flows"] if f["name"] == "bulk")
        sched = over["host.io_scheduler"]
        n = int(over.get("flow.bulk.numjobs", 0))
        lat = lapp["latency_ns"]
        rows.setdefault(sched, {})[n] = (lat["mean"], lat["p99"], lat["p99_9"], bulk["bandwidth_bytes_per_s"] / 1e6)
        if lapp.get("alone") and alone is None:
            alone = lapp["alone"]["latency_ns"]
    ns = sorted({n for r in rows.values() for n in r})
    print(f"{data['scenario']}: L-app mean / p99 / p99.9 (µs) · processes' MB/s\n")
    head = "| scheduler | " + " | ".join(f"n = {n}" for n in ns) + " |"
    print(head)
    print("|---" * (len(ns) + 1) + "|")
    for sched, by_n in rows.items():
        cells = []
        for n in ns:
            mean, p99, p999, mbs = by_n[n]
            cells.append(f"{us(mean)} / {us(p99)} / {us(p999)} · {mbs:.0f}")
        print(f"| {sched} | " + " | ".join(cells) + " |")
    if alone:
        print(f"\nn = 0 (the L-app alone): {us(alone['mean'])} / {us(alone['p99'])} / {us(alone['p99_9'])} µs.")
    print()


for p in sys.argv[1:]:
    table(p)

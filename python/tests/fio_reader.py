"""A small reader of fio's JSON output (`fio --output-format=json`, fio 3.x), written to fio's documented
layout (fio's HOWTO / man page, "JSON output", and what fio's own tools read), not to ullsim's code: it is the
kind of consumer the fio-json output exists for, and the tests feed ullsim's output to it.

The layout it reads:

    {"fio version": "fio-3.x",
     "jobs": [{"jobname": str, "groupid": int, "job options": {str: str, ...},
               "read" | "write" | "trim": {
                   "io_bytes": bytes, "bw_bytes": bytes/s, "bw": KiB/s, "iops": float, "runtime": ms,
                   "total_ios": int,
                   "lat_ns" | "clat_ns": {"min", "max", "mean", "stddev": ns, "N": samples,
                                          "percentile": {"99.000000": ns, ...}  (absent with no samples)}},
               "usr_cpu": %, "sys_cpu": %, "ctx": int}, ...]}

`read_fio_json` gives a DataFrame with one row per job and direction; times in ns, as fio's `_ns` fields. Without
`group_reporting` fio writes one job per clone of a job section with `numjobs` (same `jobname`): `job_index`,
the job's position in `jobs`, tells them apart.
"""

import json
from pathlib import Path

import pandas as pd

DIRECTIONS = ("read", "write", "trim")
# Percentiles picked out as columns (fio's default list includes them), as fio keys them: "%f".
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99_9": 99.9, "p99_99": 99.99}


def load(source):
    """A fio JSON document from a path or a JSON string."""
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        return json.loads(Path(source).read_text())
    return json.loads(source)


def fio_version(document):
    return document["fio version"]


def percentile(latency, percent):
    """The latency (ns) at `percent` from a fio latency object's "percentile" map, keyed as fio writes it
    with "%f" ("99.000000"), or NaN when fio wrote none (no samples)."""
    table = latency.get("percentile")
    if not table:
        return float("nan")
    key = f"{percent:f}"
    if key not in table:
        raise KeyError(f"no percentile {key!r} among {sorted(table)}")
    return float(table[key])


def latency_columns(prefix, latency):
    columns = {
        f"{prefix}_min_ns": float(latency["min"]),
        f"{prefix}_max_ns": float(latency["max"]),
        f"{prefix}_mean_ns": float(latency["mean"]),
        f"{prefix}_stddev_ns": float(latency["stddev"]),
        f"{prefix}_n": int(latency["N"]),
    }
    for name, percent in PERCENTILES.items():
        columns[f"{prefix}_{name}_ns"] = percentile(latency, percent)
    return columns


def read_fio_json(source):
    """One row per job and direction (read, write, trim): the job's name, group and options of interest,
    the direction's I/O, bandwidth, IOPS, runtime and total latency (`lat_ns`) and completion latency
    (`clat_ns`), and the job's CPU."""
    document = load(source)
    rows = []
    for index, job in enumerate(document["jobs"]):
        options = job.get("job options", {})
        for direction in DIRECTIONS:
            stats = job[direction]
            row = {
                "job_index": index,
                "jobname": job["jobname"],
                "groupid": int(job["groupid"]),
                "rw": options.get("rw"),
                "bs": options.get("bs"),
                "numjobs": int(options.get("numjobs", 1)),
                "direction": direction,
                "io_bytes": int(stats["io_bytes"]),
                "total_ios": int(stats["total_ios"]),
                "bw_bytes": float(stats["bw_bytes"]),
                "bw_kib": float(stats["bw"]),  # fio's "bw" is KiB/s
                "iops": float(stats["iops"]),
                "runtime_ms": int(stats["runtime"]),
                "usr_cpu": float(job["usr_cpu"]),
                "sys_cpu": float(job["sys_cpu"]),
                "ctx": int(job["ctx"]),
            }
            row.update(latency_columns("lat", stats["lat_ns"]))
            row.update(latency_columns("clat", stats["clat_ns"]))
            rows.append(row)
    return pd.DataFrame(rows)

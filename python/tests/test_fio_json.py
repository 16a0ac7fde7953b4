"""`ullsim run --fio-json` read by a fio JSON consumer (fio_reader.py, written to fio's documented layout),
checked against the native `--json` results of the same run: names, counts, units and latency statistics, one
fio job per task of a flow with numjobs (checked against the native `flows[].jobs`), one for the flow with
group_reporting."""

import json
import math

import pandas as pd
import pytest

from command import ullsim_command as ullsim
from fio_reader import read_fio_json, fio_version


# A mixed read/write flow run by two jobs, beside a sequential writer (no reads).
SCENARIO = """
name = "fio-json consumer"
seed = 11
[run]
duration = "20ms"
warmup = "2ms"
[device]
preset = "znand-ull"
[[flow]]
name = "mixed"
rw = "randrw"
rwmixread = 70
bs = "4k"
iodepth = 4
numjobs = 2
[[flow]]
name = "writer"
rw = "write"
bs = "128k"
iodepth = 8
"""
NUMJOBS = {"mixed": 2, "writer": 1}
BS = {"mixed": 4096, "writer": 131072}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(fio JSON path, native results) of one run with both outputs, seed 7."""
    work = tmp_path_factory.mktemp("fio-json")
    scenario = work / "mixed.toml"
    scenario.write_text(SCENARIO)
    fio, native = work / "fio.json", work / "native.json"
    ullsim("run", scenario, "--seed", "7", "--fio-json", fio, "--json", native, "-q")
    return scenario, fio, json.loads(native.read_text())


def native_entries(native):
    """What each fio job stands for in the native results, in order: (flow, its results), or (flow, one of
    its jobs' results, `flows[].jobs`) for a flow recorded per job (fio output turns `metrics.per_job` on)."""
    entries = []
    for flow in native["flows"]:
        entries.extend((flow, job) for job in flow.get("jobs") or [flow])
    return entries


def test_the_fio_json_names_ullsim_and_has_one_job_per_task(run):
    scenario, fio, native = run
    document = json.loads(fio.read_text())
    assert "ullsim" in fio_version(document)
    jobs = read_fio_json(fio)
    names = [f["name"] for f in native["flows"]]
    # One job per task, in order, as fio writes a job section's numjobs clones without group_reporting:
    # the mixed flow's two tasks share its name and options (numjobs = 2), each with read, write and trim.
    entries = native_entries(native)
    assert [len(f.get("jobs") or [f]) for f in native["flows"]] == [NUMJOBS[n] for n in names]
    assert [j["jobname"] for j in document["jobs"]] == ["mixed", "mixed", "writer"]
    assert len(document["jobs"]) == len(entries) == 3
    assert len(jobs) == 3 * len(entries)
    for name, job in jobs.groupby("jobname"):
        assert set(job["numjobs"]) == {NUMJOBS[name]}
        assert job["job_index"].nunique() == NUMJOBS[name]
        assert set(job["direction"]) == {"read", "write", "trim"}
        assert set(job["groupid"]) == {0}
    # The same seed through standard output gives the same document.
    again = ullsim("run", scenario, "--seed", "7", "--output-format", "fio-json")
    assert json.loads(again) == document


def test_each_direction_matches_the_native_results_in_fios_units(run):
    _, fio, native = run
    jobs = read_fio_json(fio).set_index(["job_index", "direction"])
    run_window = native["window"]["end_ns"] - native["window"]["start_ns"]
    checked = 0
    for index, (flow, stats) in enumerate(native_entries(native)):
        name = flow["name"]
        window_ms = (flow["window"]["end_ns"] - flow["window"]["start_ns"]) / 1e6
        for direction in ("read", "write"):
            job = jobs.loc[(index, direction)]
            assert job["jobname"] == name
            op = stats[direction]
            if op is None:
                # An idle direction: zeros and no percentiles, as fio writes it.
                assert job["total_ios"] == 0 and job["iops"] == 0 and job["bw_bytes"] == 0 and job["io_bytes"] == 0
                assert math.isnan(job["lat_p99_ns"])
                continue
            checked += 1
            assert job["total_ios"] == op["completed"] == job["lat_n"] == job["clat_n"]
            assert job["io_bytes"] == op["completed"] * BS[name]
            assert job["iops"] == pytest.approx(op["iops"], rel=1e-9)
            # Bandwidth: bw_bytes in bytes/s, bw in KiB/s (1024, not 1000).
            assert job["bw_bytes"] == pytest.approx(op["bandwidth_bytes_per_s"], abs=1)
            assert job["bw_kib"] == pytest.approx(op["bandwidth_bytes_per_s"] / 1024, abs=1)
            assert job["bw_kib"] * 1024 == pytest.approx(job["iops"] * BS[name], rel=1e-3)
            # Runtime in ms: the rates times the runtime give the I/O count (runtime is whole ms).
            assert abs(job["runtime_ms"] - window_ms) <= 0.5
            assert job["iops"] * (job["runtime_ms"] - 0.5) / 1e3 <= job["total_ios"] <= job["iops"] * (
                job["runtime_ms"] + 0.5
            ) / 1e3
            # Latency in ns: lat_ns is the native latency; clat_ns (submission to completion) is within it.
            latency = op["latency_ns"]
            assert job["lat_mean_ns"] == pytest.approx(latency["mean"], rel=1e-9)
            assert job["lat_min_ns"] == latency["min"] and job["lat_max_ns"] == latency["max"]
            for column, key in [("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99_9"), ("p99_99", "p99_99")]:
                assert job[f"lat_{column}_ns"] == latency[key], f"{name} {direction} {column}"
            assert job["lat_min_ns"] <= job["lat_p50_ns"] <= job["lat_p99_ns"] <= job["lat_max_ns"]
            # A task's latencies lie within its flow's.
            flow_latency = flow[direction]["latency_ns"]
            assert flow_latency["min"] <= job["lat_min_ns"] and job["lat_max_ns"] <= flow_latency["max"]
            assert 0 < job["clat_mean_ns"] <= job["lat_mean_ns"]
            assert 0 < job["lat_stddev_ns"] < job["lat_max_ns"]
        # The job's CPU: percentages of its runtime, user and system adding up to its task's cores.
        job = jobs.loc[(index, "read")]
        cores = stats["cpu_cores"] * run_window / (flow["window"]["end_ns"] - flow["window"]["start_ns"])
        assert cores > 0
        assert job["usr_cpu"] + job["sys_cpu"] == pytest.approx(100 * cores, rel=1e-6)
        assert job["usr_cpu"] == pytest.approx(100 * stats["cpu_user_cores"] * cores / stats["cpu_cores"], rel=1e-6)
        assert job["ctx"] == stats["context_switches"]
        trim = jobs.loc[(index, "trim")]
        assert trim["total_ios"] == 0 and trim["iops"] == 0
    assert checked == 5, "each mixed task's reads and writes and the writer's writes"


def test_the_mixed_flows_tasks_add_up_to_the_flow(run):
    _, fio, native = run
    jobs = read_fio_json(fio)
    mixed = jobs[jobs["jobname"] == "mixed"]
    flow = native["flows"][0]
    by_direction = mixed.groupby("direction")[["total_ios", "io_bytes", "iops", "ctx"]].sum()
    for direction in ("read", "write"):
        assert by_direction.loc[direction, "total_ios"] == flow[direction]["completed"]
        assert by_direction.loc[direction, "io_bytes"] == flow[direction]["completed"] * BS["mixed"]
        assert by_direction.loc[direction, "iops"] == pytest.approx(flow[direction]["iops"], rel=1e-9)
    # Each task's CPU and context switches are its own: they add up to the flow's (each row repeats its job's).
    per_task = mixed[mixed["direction"] == "read"]
    assert per_task["ctx"].sum() == flow["context_switches"]
    run_window = native["window"]["end_ns"] - native["window"]["start_ns"]
    flow_window = flow["window"]["end_ns"] - flow["window"]["start_ns"]
    cpu = (per_task["usr_cpu"] + per_task["sys_cpu"]).sum()
    assert cpu == pytest.approx(100 * flow["cpu_cores"] * run_window / flow_window, rel=1e-6)
    # The split follows rwmixread; the flow's IOPS are its tasks' two directions' (fio reports them apart).
    reads, writes = by_direction.loc["read", "total_ios"], by_direction.loc["write", "total_ios"]
    assert reads + writes == flow["completed"]
    assert reads / (reads + writes) == pytest.approx(0.70, abs=0.05)
    assert mixed["iops"].sum() == pytest.approx(flow["iops"], rel=1e-9)
    assert isinstance(jobs, pd.DataFrame)


def test_group_reporting_writes_one_job_for_the_flow(run, tmp_path):
    scenario, _, native = run
    grouped = tmp_path / "grouped.toml"
    grouped.write_text(SCENARIO.replace("numjobs = 2", "numjobs = 2\ngroup_reporting = true"))
    document = json.loads(ullsim("run", grouped, "--seed", "7", "--output-format", "fio-json"))
    assert [j["jobname"] for j in document["jobs"]] == ["mixed", "writer"]
    mixed = document["jobs"][0]
    assert mixed["job options"]["numjobs"] == "2" and mixed["job options"]["group_reporting"] == "1"
    # The same run as the per-task one, reported as the group.
    assert mixed["read"]["total_ios"] == native["flows"][0]["read"]["completed"]
    assert mixed["ctx"] == native["flows"][0]["context_switches"]

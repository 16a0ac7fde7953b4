"""The Python package against the same runs the command makes: results, errors, determinism."""

import json
import threading
import time

import pytest

import ullsim
from command import ROOT, ullsim_command

EXAMPLE = ROOT / "scenarios" / "examples" / "mixed-znand.toml"
SHORT = {"run.duration": "20ms", "run.warmup": "2ms"}

SMALL = """
name = "small"
seed = 3
[run]
duration = "10ms"
[device]
preset = "optane-ull"
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 4
"""


def test_a_path_runs_and_gives_one_row_per_flow_and_direction():
    r = ullsim.run(EXAMPLE, set=SHORT)
    flows = r.flows
    assert set(flows["flow"]) == {f["name"] for f in r.raw["flows"]}
    total = flows[flows["direction"] == "total"].set_index("flow")
    for f in r.raw["flows"]:
        row = total.loc[f["name"]]
        assert row["completed"] == f["completed"]
        assert row["iops"] == pytest.approx(f["iops"])
        assert row["mean_us"] == pytest.approx(f["latency_ns"]["mean"] / 1e3)
        # The breakdown's nine parts add up to the mean latency (docs/output.md).
        parts = sum(row[f"{layer}_us"] for layer in ullsim.LAYERS)
        assert parts == pytest.approx(row["mean_us"], rel=1e-6)
    assert r.device == r.raw["device"] and r.device["queue_depth"]["max"] >= 1
    assert r.host["model"] in ("full", "device-only")


def test_the_same_run_as_the_command_gives_the_same_numbers(tmp_path):
    out = tmp_path / "r.json"
    ullsim_command("run", EXAMPLE, "--seed", "5", "--set", "run.duration=20ms", "--set", "run.warmup=2ms", "--json", out)
    cli = json.loads(out.read_text())
    py = ullsim.run(EXAMPLE, seed=5, set=SHORT).raw
    assert py == cli


def test_a_toml_string_and_a_dict_run_alike():
    from_text = ullsim.run(SMALL)
    as_dict = {
        "name": "small",
        "seed": 3,
        "run": {"duration": "10ms"},
        "device": {"preset": "optane-ull"},
        "flow": [{"name": "reader", "rw": "randread", "bs": "4k", "iodepth": 4}],
    }
    from_dict = ullsim.run(as_dict)
    assert from_text.flows.equals(from_dict.flows)
    assert from_text.raw["flows"][0]["completed"] > 100


def test_same_seed_same_results_other_seed_other_results():
    a = ullsim.run(SMALL, seed=7).raw
    b = ullsim.run(SMALL, seed=7).raw
    c = ullsim.run(SMALL, seed=8).raw
    assert a == b
    assert a["flows"] != c["flows"]


def test_errors_carry_the_commands_message():
    with pytest.raises(ullsim.UllsimError, match=r"flow\[0\]\.iodepth|iodepth"):
        ullsim.run(SMALL, set={"flow.reader.iodepth": "deep"})
    with pytest.raises(ullsim.UllsimError, match="nope"):
        ullsim.run({"device": {"preset": "optane-ull", "nope": 1}, "flow": [{"name": "r", "rw": "randread"}]})
    with pytest.raises(ullsim.UllsimError, match="missing.toml"):
        ullsim.run("missing.toml")
    with pytest.raises(ullsim.UllsimError, match="line"):
        ullsim.run("name = \n[run")


def test_presets_and_stacks_list_the_commands():
    presets = ullsim.presets()
    assert {"optane-ull", "znand-ull"} <= set(presets["name"])
    stacks = ullsim.stacks()
    assert {"vanilla", "flashshare-xler"} <= set(stacks["name"])
    assert "[[flow]]" in ullsim.default_scenario()


def test_a_run_releases_the_gil():
    # A Python thread keeps counting while a run simulates: with the GIL held it could not.
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    start = time.perf_counter()
    ullsim.run(EXAMPLE, set={"run.duration": "300ms"})
    end = time.perf_counter()
    stop.set()
    t.join()
    during = [x for x in ticks if start < x < end]
    assert end - start > 0.05, "the run is too short to tell"
    assert len(during) > 10, f"{len(during)} ticks in {end - start:.3f} s"


def test_jobs_recorded_apart_have_a_frame_that_adds_up_to_their_flow():
    three = {
        "device": {"preset": "optane-ull"},
        "run": {"duration": "10ms"},
        "metrics": {"per_job": True},
        "flow": [{"name": "r", "rw": "randread", "numjobs": 3, "iodepth": 2}, {"name": "one", "rw": "randwrite"}],
    }
    r = ullsim.run(three, seed=2)
    jobs = r.jobs
    assert sorted(set(zip(jobs["flow"], jobs["job"]))) == [("r", 0), ("r", 1), ("r", 2)]
    total = jobs[jobs["direction"] == "total"]
    flow = r.flows[(r.flows["flow"] == "r") & (r.flows["direction"] == "total")].iloc[0]
    assert total["completed"].sum() == flow["completed"]
    assert total["iops"].sum() == pytest.approx(flow["iops"])
    assert total["cpu_cores"].sum() == pytest.approx(flow["cpu_cores"])
    assert (total["mean_us"] > 0).all() and set(jobs["direction"]) == {"total", "read"}
    assert ullsim.run(dict(three, metrics={"per_job": False})).jobs is None

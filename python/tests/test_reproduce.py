"""ullsim.reproduce and ullsim.report against `ullsim reproduce` and `ullsim report`: the same rows, options,
errors and pages."""

import json
import math

import pytest

import ullsim
from command import ullsim_command

# hotstorage23's subset at 10 ms per figure: ~250 rows in well under a second.
ARGS = {"duration": "10ms", "seed": 4}
SMALL = {"device": {"preset": "optane-ull"}, "run": {"duration": "10ms"}, "flow": [{"name": "r", "rw": "randread"}]}


def command_json(*args):
    return json.loads(ullsim_command(*args, "--json", "-", "--quiet"))


def test_the_rows_are_the_commands_rows():
    frame = ullsim.reproduce("hotstorage23", **ARGS)
    raw = command_json("reproduce", "hotstorage23", "--duration", "10ms", "--seed", "4")
    assert len(frame) == len(raw["rows"]) > 100
    keys = sorted({k for row in raw["rows"] for k in row["setting"]})
    assert list(frame.columns) == [
        "figure", *sorted(keys, key=list(frame.columns).index), "setting", "metric", "role", "verdict", "paper",
        "simulated", "spread_min", "spread_max",
    ]
    for (_, got), want in zip(frame.iterrows(), raw["rows"]):
        assert got["figure"] == want["figure"] and got["metric"] == want["metric"]
        assert got["role"] == want["role"] in ("calibrated", "predicted")
        assert got["verdict"] == (want["verdict"] or "")
        assert got["simulated"] == want["simulated"]
        assert math.isnan(got["spread_min"]) and math.isnan(got["spread_max"]) and want["spread"] is None
        assert (math.isnan(got["paper"]) and want["paper"] is None) or got["paper"] == want["paper"]
        for k in keys:
            assert got[k] == want["setting"].get(k, "")
        assert got["setting"] == ", ".join(f"{k}={v}" for k, v in want["setting"].items())
    assert frame.attrs["paper"] == "hotstorage23"
    assert frame.attrs["options"] == raw["options"] and frame.attrs["title"] == raw["title"]
    assert frame.attrs["headline"] == ["table1"] and frame.attrs["score"] == raw["score"]
    # The score counts the rows' verdicts: Table 1's predicted rows with paper values.
    table1 = frame[(frame["figure"] == "table1") & (frame["role"] == "predicted") & frame["paper"].notna()]
    assert frame.attrs["score"]["headline"]["rows"] == len(table1) > 0
    assert frame.attrs["score"]["headline"]["close"] == (table1["verdict"] == "close").sum()


def test_a_row_over_seeds_gives_its_range():
    from ullsim._reproduce import _reproduction_frame

    row = {"figure": "f", "setting": {}, "metric": "p99_vs_vanilla", "role": "predicted", "verdict": None,
           "paper": None, "simulated": 0.8}
    raw = {"paper": "p", "title": "t", "options": {}, "notes": [],
           "rows": [{**row, "spread": {"min": 0.7, "max": 0.9, "seeds": 3}}, {**row, "spread": None}]}
    frame = _reproduction_frame(raw)
    assert list(frame["spread_min"][:1]) == [0.7] and list(frame["spread_max"][:1]) == [0.9]
    assert math.isnan(frame["spread_min"][1]) and math.isnan(frame["spread_max"][1])


def test_a_reproduction_is_deterministic_and_follows_its_seed_and_set():
    a = ullsim.reproduce("hotstorage23", **ARGS)
    assert a.equals(ullsim.reproduce("hotstorage23", **ARGS))
    other_seed = ullsim.reproduce("hotstorage23", duration="10ms", seed=5)
    assert not a["simulated"].equals(other_seed["simulated"])
    slower = ullsim.reproduce("hotstorage23", **ARGS, set={"device.flash.read_ns": 9000})
    assert slower.attrs["options"]["set"] == ["device.flash.read_ns=9000"]
    median = (a["figure"] == "table1") & (a["metric"] == "median_latency_us") & (a["rw"] == "randread")
    assert median.sum() >= 4
    assert (slower.loc[median, "simulated"] > a.loc[median, "simulated"]).all()


def test_errors_carry_the_commands_messages():
    with pytest.raises(ullsim.UllsimError, match='unknown reproduction "flin19"'):
        ullsim.reproduce("flin19")
    with pytest.raises(ullsim.UllsimError, match="--load: not used by hotstorage23"):
        ullsim.reproduce("hotstorage23", load=2.0)
    with pytest.raises(ullsim.UllsimError, match="--duration: expected a duration > 0"):
        ullsim.reproduce("aios19", duration="0s")
    with pytest.raises(ullsim.UllsimError, match="--duration: expected a duration"):
        ullsim.reproduce("aios19", duration=0.1)
    with pytest.raises(ullsim.UllsimError, match="device.flash.nope"):
        ullsim.reproduce("hotstorage23", **ARGS, set={"device.flash.nope": 1})
    assert ullsim.reproductions() == ["aios19", "fastresponse22", "flashshare18", "flin18", "hotstorage23"]


def test_reports_of_a_run_and_of_a_reproduction_are_the_commands(tmp_path):
    frame = ullsim.reproduce("hotstorage23", **ARGS)
    page = ullsim.report(frame, tmp_path / "r.html").read_text()
    raw = tmp_path / "r.json"
    raw.write_text(json.dumps(frame.attrs["raw"]))
    ullsim_command("report", raw, "-o", tmp_path / "cli.html")
    assert page == (tmp_path / "cli.html").read_text()
    assert page.count("<svg") >= 5 and "table1" in page
    run = ullsim.run(SMALL)
    assert run.report(tmp_path / "run.html").read_text().count("<svg") >= 2
    with pytest.raises(ullsim.UllsimError, match="not one ullsim.reproduce returned"):
        ullsim.report(run.flows, tmp_path / "x.html")
    with pytest.raises(ullsim.UllsimError, match="report: neither kind of ullsim JSON; expected ullsim results"):
        ullsim.report({"rows": 3}, tmp_path / "x.html")


def test_the_report_of_a_comparison_dict_is_the_commands(tmp_path):
    args = ["compare", "--vary", "flow.0.iodepth=1,2", "--set", "run.duration=5ms", "--set", "run.warmup=1ms"]
    comparison = command_json(*args)
    page = ullsim.report(comparison, tmp_path / "c.html").read_text()
    ullsim_command(*args, "--html", tmp_path / "cli.html", "--quiet")
    assert page == (tmp_path / "cli.html").read_text()
    assert "<h2>Latency CDF</h2>" in page and "iodepth=2" in page

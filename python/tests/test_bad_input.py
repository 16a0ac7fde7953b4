"""Every bad argument raises ullsim.UllsimError naming what was wrong (the key, the argument) and what was
expected: never OverflowError, TypeError or a JSON parser's column number."""

import math

import pytest

import ullsim

SMALL = {
    "run": {"duration": "5ms"},
    "device": {"preset": "optane-ull"},
    "flow": [{"name": "reader", "rw": "randread", "bs": "4k", "iodepth": 1}],
}


def with_flow_key(key, value):
    scenario = {**SMALL, "flow": [{**SMALL["flow"][0], key: value}]}
    return scenario


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "7", True, float("nan")])
def test_a_seed_out_of_range_or_of_another_type_names_the_seed(seed):
    with pytest.raises(ullsim.UllsimError, match=r"^seed: expected a whole number from 0 to 18446744073709551615"):
        ullsim.run(SMALL, seed=seed)


def test_the_largest_seed_runs():
    assert ullsim.run(SMALL, seed=2**64 - 1).raw["scenario"]["seed"] == 2**64 - 1


@pytest.mark.parametrize(
    "scenario, message",
    [
        (with_flow_key("rate_iops", float("nan")), r"key `flow\[0\]\.rate_iops`: expected a finite number, found nan"),
        (with_flow_key("rate_iops", math.inf), r"key `flow\[0\]\.rate_iops`: expected a finite number, found inf"),
        ({**SMALL, "run": {"duration": -math.inf}}, r"key `run\.duration`: expected a finite number"),
        ({**SMALL, "seed": 2**63}, r"key `seed`: expected an integer from -9223372036854775808 to 9223372036854775807"),
        ({**SMALL, "device": {"preset": "optane-ull", 3: 1}}, r"key `device`: expected string keys .*found the key 3"),
        ({**SMALL, 1: "x"}, r"<dict>: expected string keys .*found the key 1"),
        (with_flow_key("bs", None), r"key `flow\[0\]\.bs`: found None: TOML has no null"),
        (with_flow_key("bs", {4096}), r"key `flow\[0\]\.bs`: cannot write set \{4096\}"),
        ({**SMALL, "flow": [SMALL["flow"][0], {"name": "w", "rw": "write", "bs": float("nan")}]}, r"flow\[1\]\.bs"),
    ],
)
def test_a_dict_value_toml_cannot_hold_names_its_key(scenario, message):
    for call in (ullsim.run, ullsim.validate):
        with pytest.raises(ullsim.UllsimError, match=message) as e:
            call(scenario)
        assert "line 1 column" not in str(e.value)


def test_a_path_in_a_dict_is_its_text():
    # os.PathLike values (a trace's path) are written as strings; this one does not exist, and the message says so.
    from pathlib import Path

    scenario = {**SMALL, "flow": [{"name": "t", "trace": Path("no-such.trace"), "format": "disksim"}]}
    with pytest.raises(ullsim.UllsimError, match="no-such.trace"):
        ullsim.run(scenario)


@pytest.mark.parametrize("scenario", [5, b"name = 1", ["a"], 2.5])
def test_a_scenario_of_another_type_is_named(scenario):
    with pytest.raises(ullsim.UllsimError, match=r"^scenario: expected a path, a TOML string or a dict"):
        ullsim.run(scenario)


@pytest.mark.parametrize(
    "set, message",
    [
        ("run.duration=1ms", r"^set: expected a dict of key -> value"),
        ({1: "x"}, r"^set: expected keys like \"run\.duration\" \(strings\), found 1"),
        ({"run.duration": None}, r"^--set run\.duration: cannot write None"),
        (["run.duration=1ms", 3], r"^set: expected \"key=value\" strings in the list, found 3"),
        ({"flow.reader.rate_iops": float("nan")}, r"--set flow\.reader\.rate_iops=nan: key `flow\[0\]\.rate_iops`"),
    ],
)
def test_bad_set_arguments_name_the_key(set, message):
    with pytest.raises(ullsim.UllsimError, match=message):
        ullsim.run(SMALL, set=set)


def test_numpy_numbers_are_numbers():
    np = pytest.importorskip("numpy")
    r = ullsim.run(SMALL, set={"flow.reader.iodepth": np.int64(2), "flow.reader.rate_iops": np.float64(1000.0)})
    assert r.raw["flows"][0]["completed"] > 0
    r = ullsim.run(with_flow_key("iodepth", np.int32(2)))
    assert r.raw["flows"][0]["completed"] > 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seed": -1}, r"^--seed: expected a whole number from 0 to 18446744073709551615, found -1"),
        ({"mixes": -1}, r"^--mixes: expected a whole number"),
        ({"mixes": 2.5}, r"^--mixes: expected a whole number"),
        ({"load": "2"}, r"^--load: expected a rate multiplier > 0, found '2'"),
        ({"load": float("nan")}, r"--load: expected a rate multiplier > 0"),
        ({"all": 1}, r"^--all: expected True or False"),
        ({"classes": 3}, r"^--classes: expected a string"),
        ({"duration": 20}, r"^--duration: expected a duration"),
    ],
)
def test_bad_reproduce_arguments_name_the_flag(kwargs, message):
    with pytest.raises(ullsim.UllsimError, match=message):
        ullsim.reproduce("flin18", **kwargs)
    with pytest.raises(ullsim.UllsimError, match=r"^reproduce: expected a reproduction's name"):
        ullsim.reproduce(18)


def test_a_report_of_a_dict_with_nan_names_the_key(tmp_path):
    raw = ullsim.run(SMALL).raw
    raw["flows"][0]["iops"] = float("nan")
    with pytest.raises(ullsim.UllsimError, match=r"report: key `flows\[0\]\.iops`: expected a finite number"):
        ullsim.report(raw, tmp_path / "r.html")

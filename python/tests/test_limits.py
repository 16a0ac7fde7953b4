"""A scenario given as a dict meets the same limits as a file: the most flows (MAX_FLOWS in
crates/ullsim/src/config/scenario.rs) and the most tasks, with the same message naming the key."""

import pytest

import ullsim

MAX_FLOWS = 10_000


def readers(n, **keys):
    return {
        "run": {"duration": "1ms", "warmup": "0ms"},
        "device": {"preset": "optane-ull"},
        "flow": [{"name": f"f{i}", "rw": "randread", "bs": "4k", **keys} for i in range(n)],
    }


def test_more_flows_than_the_maximum_raise_naming_the_key():
    with pytest.raises(ullsim.UllsimError, match=r"key `flow`: 10001 flows is above the most a scenario may have, 10000"):
        ullsim.run(readers(MAX_FLOWS + 1))


def test_more_tasks_than_the_maximum_raise_naming_the_key():
    with pytest.raises(ullsim.UllsimError, match=r"key `flow`: the flows' numjobs add up to 69632 tasks"):
        ullsim.run(readers(17, numjobs=4096))


def test_a_thousand_dict_flows_run():
    r = ullsim.run(readers(1000))
    assert len(r.flows[r.flows.direction == "total"]) == 1000

"""ullsim.sweep: every combination of varied keys x seeds, locally (threads) and on a Dask cluster, the same
frame either way; every variant checked before any runs."""

import itertools
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import ullsim

ROOT = Path(__file__).resolve().parents[2]

# Two flows, so each run gives several rows (total, read, write), and short runs.
SCENARIO = """
name = "sweep-small"
seed = 3
[run]
duration = "15ms"
warmup = "1ms"
[device]
preset = "optane-ull"
[[flow]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 4
[[flow]]
name = "mixer"
rw = "randrw"
rwmixread = 70
bs = "4k"
iodepth = 2
"""
VARY = {"host.stack": ["vanilla", "flashshare-xler"], "flow.reader.iodepth": [1, 8]}
SEEDS = [1, 2]
SET = {"run.duration": "12ms"}
LEADING = ["host.stack", "flow.reader.iodepth", "seed"]


@pytest.fixture(scope="module")
def local():
    return ullsim.sweep(SCENARIO, VARY, seeds=SEEDS, set=SET, max_workers=2, return_results=True)


@pytest.fixture(scope="module")
def dask_client():
    # Not skipped when missing: python/run-tests installs distributed, and this test must run.
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_every_combination_in_order_each_as_its_own_run(local):
    frame, results = local
    combos = list(itertools.product(VARY["host.stack"], VARY["flow.reader.iodepth"], SEEDS))
    assert list(frame.columns[:3]) == LEADING
    assert list(frame.columns[3:6]) == ["flow", "class", "direction"]
    # Variant order: the first key slowest, the values as given, then the seeds.
    order = list(dict.fromkeys(map(tuple, frame[LEADING].itertuples(index=False))))
    assert order == combos
    assert frame["flow.reader.iodepth"].tolist()[0] == 1 and frame["flow.reader.iodepth"].dtype == "int64"
    assert [variant for variant, _ in results] == [
        {"host.stack": s, "flow.reader.iodepth": d, "seed": seed} for s, d, seed in combos
    ]
    start = 0
    for (stack, depth, seed), (_, result) in zip(combos, results):
        single = ullsim.run(SCENARIO, seed=seed, set=dict(SET, **{"host.stack": stack, "flow.reader.iodepth": depth}))
        rows = frame.iloc[start : start + len(single.flows)]
        start += len(single.flows)
        assert (rows["host.stack"] == stack).all() and (rows["flow.reader.iodepth"] == depth).all()
        assert (rows["seed"] == seed).all()
        assert_frame_equal(rows.drop(columns=LEADING).reset_index(drop=True), single.flows)
        assert result.raw == single.raw
    assert start == len(frame)
    # The varied keys matter: the reader's depth shows in its IOPS.
    total = frame[(frame["flow"] == "reader") & (frame["direction"] == "total")]
    by_depth = total.groupby("flow.reader.iodepth")["iops"].mean()
    assert by_depth[8] > 1.5 * by_depth[1]


def test_one_worker_or_two_give_the_same_frame(local):
    one = ullsim.sweep(SCENARIO, VARY, seeds=SEEDS, set=SET, max_workers=1)
    assert_frame_equal(one, local[0])


def test_a_dask_cluster_gives_the_same_frame(local, dask_client):
    from distributed import get_task_stream

    with get_task_stream(dask_client) as stream:
        on_cluster = ullsim.sweep(SCENARIO, VARY, seeds=SEEDS, set=SET, client=dask_client)
    assert_frame_equal(on_cluster, local[0])
    # The runs were the cluster's tasks, one per variant and seed, on its worker processes.
    runs = [t for t in stream.data if t["key"].startswith("_sweep_task")]
    assert len(runs) == 8, [t["key"] for t in stream.data]
    assert {t["worker"] for t in runs} <= set(dask_client.scheduler_info()["workers"])


def test_a_dict_scenario_and_an_executor_as_client():
    as_dict = {
        "run": {"duration": "10ms"},
        "device": {"preset": "optane-ull"},
        "flow": [{"name": "r", "rw": "randread", "bs": "4k", "iodepth": 2}],
    }
    vary = {"flow.r.bs": ["4k", "16k"]}
    local = ullsim.sweep(as_dict, vary, seeds=[5])
    with ThreadPoolExecutor(2) as pool:
        via_executor = ullsim.sweep(as_dict, vary, seeds=[5], client=pool)
    assert_frame_equal(local, via_executor)
    total = local[local["direction"] == "total"]
    assert total["flow.r.bs"].tolist() == ["4k", "16k"] and total["seed"].tolist() == [5, 5]


def test_a_process_pool_as_client_gives_the_same_frame(local):
    # Processes, for those who want each run isolated in its own: 'spawn' children import ullsim afresh
    # (no fork of this process's threads); the task is a module-level function, so it pickles.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        in_processes = ullsim.sweep(SCENARIO, VARY, seeds=SEEDS, set=SET, client=pool)
    assert_frame_equal(in_processes, local[0])


class ElsewhereClient:
    """A stand-in for a cluster whose workers run in another directory: it records what is shipped."""

    def __init__(self, cwd):
        self.cwd = cwd
        self.shipped = []

    def map(self, func, *columns):
        self.shipped.extend(zip(*columns))
        here = os.getcwd()
        os.chdir(self.cwd)
        try:
            return [func(*args) for args in zip(*columns)]
        finally:
            os.chdir(here)

    def gather(self, futures):
        return futures


def test_what_is_shipped_is_self_contained(monkeypatch, tmp_path):
    # A relative scenario path naming a trace by a relative path; the "workers" run in another directory.
    monkeypatch.chdir(ROOT)
    scenario = "scenarios/examples/trace-tpcc.toml"
    client = ElsewhereClient(tmp_path)
    frame = ullsim.sweep(scenario, {"run.duration": ["5ms", "10ms"]}, client=client)
    text, source, base, overrides, seed, is_json = client.shipped[0]
    assert text == (ROOT / scenario).read_text() and source == scenario and not is_json
    assert Path(base).is_absolute() and Path(base) == ROOT / "scenarios" / "examples"
    assert overrides == ['run.duration="5ms"'] and seed == 1
    single = ullsim.run(scenario, seed=1, set={"run.duration": "10ms"})
    rows = frame[frame["run.duration"] == "10ms"].drop(columns=["run.duration", "seed"])
    assert_frame_equal(rows.reset_index(drop=True), single.flows)
    assert single.raw["flows"][0]["completed"] > 0


def no_runs(*args, **kwargs):
    raise AssertionError("a run was dispatched")


def test_a_bad_key_or_value_fails_before_any_run(monkeypatch):
    monkeypatch.setattr(ullsim._sweep, "_dispatch", no_runs)
    with pytest.raises(ullsim.UllsimError, match=r"vary .*flow\.reader\.nope.*nope") as e:
        ullsim.sweep(SCENARIO, {"flow.reader.iodepth": [1, 4], "flow.reader.nope": [1]})
    assert "--set" not in str(e.value)
    # The bad value is the last variant's: all are checked before the first runs.
    with pytest.raises(ullsim.UllsimError, match=r'vary flow\.reader\.iodepth="deep": .*flow\[0\]\.iodepth'):
        ullsim.sweep(SCENARIO, {"flow.reader.iodepth": [1, 4, "deep"]})
    # The first bad variant in order is named.
    with pytest.raises(ullsim.UllsimError, match=r'vary host\.stack="flashshare-xler" flow\.reader\.iodepth="deep": '):
        ullsim.sweep(SCENARIO, {"host.stack": ["flashshare-xler", "vanilla"], "flow.reader.iodepth": [1, "deep"]})
    with pytest.raises(ullsim.UllsimError, match="no-such-stack"):
        ullsim.sweep(SCENARIO, {"host.stack": ["vanilla", "no-such-stack"]})
    # A bad `set` is reported as `run` reports it.
    with pytest.raises(ullsim.UllsimError, match=r"--set run\.duration"):
        ullsim.sweep(SCENARIO, {"flow.reader.iodepth": [1]}, set={"run.duration": "soon"})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vary": {"flow.reader.iodepth": []}}, r"flow\.reader\.iodepth: the list of values is empty"),
        ({"vary": {"flow.reader.iodepth": "1,4"}}, r"flow\.reader\.iodepth: expected a list of values"),
        ({"vary": {"flow.reader.iodepth": 4}}, r"expected a list of values"),
        ({"vary": [("flow.reader.iodepth", [1])]}, r"vary: expected a dict"),
        ({"vary": {"seed": [1, 2]}}, r"seeds=\[\.\.\.\]"),
        ({"vary": {"flow.reader.iodepth": [1, 4]}, "set": {"flow.reader.iodepth": 2}}, r"both varied .* and fixed"),
        ({"vary": {"flow.reader.iodepth": [1, 4]}, "set": ["flow.reader.iodepth=2"]}, r"both varied"),
        # A varied table would replace a key fixed inside it: the same rule as `ullsim compare`.
        (
            {"vary": {"run": [{"warmup": "1ms"}, {"warmup": "2ms"}]}, "set": {"run.duration": "5ms"}},
            r"sweep: run is both varied \(vary\) and fixed \(set run\.duration=\"5ms\", a key inside it\)",
        ),
        ({"vary": {"flow.reader.iodepth": [1]}, "seeds": []}, r"seeds: the list is empty"),
        ({"vary": {"flow.reader.iodepth": [1]}, "seeds": [1, -2]}, r"seeds: expected a whole number from 0 to 18446744073709551615, found"),
        ({"vary": {"flow.reader.iodepth": [1]}, "seeds": [True]}, r"seeds: expected a whole number from 0 to 18446744073709551615, found"),
        ({"vary": {"flow.reader.iodepth": [1]}, "seeds": 3}, r"seeds: expected a list"),
        ({"vary": {"flow.reader.iodepth": [1, None]}}, r"vary flow\.reader\.iodepth: cannot write None"),
        ({"vary": {"flow.reader.iodepth": [1]}, "max_workers": 0}, r"max_workers"),
        ({"vary": {"flow.reader.iodepth": [1]}, "client": object()}, r"client: expected a dask"),
    ],
)
def test_malformed_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ullsim.UllsimError, match=message):
        ullsim.sweep(SCENARIO, **kwargs)


def test_no_varied_key_sweeps_the_seeds():
    frame = ullsim.sweep(SCENARIO, {}, seeds=range(3), set=SET)
    assert list(frame.columns[:2]) == ["seed", "flow"]
    assert list(dict.fromkeys(frame["seed"])) == [0, 1, 2]
    totals = frame[(frame["flow"] == "reader") & (frame["direction"] == "total")]["completed"]
    assert totals.nunique() > 1, "other seeds, other results"
    assert isinstance(frame, pd.DataFrame)

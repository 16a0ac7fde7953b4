"""Sweeps (:func:`sweep`): every combination of some keys' values, times seeds, on this machine's cores or on a
Dask cluster."""

from __future__ import annotations

import itertools
import json
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from . import _ullsim
from ._run import Result, _overrides, _source, _toml_value, _whole_number
from ._ullsim import UllsimError

#: Columns of ``Result.flows`` a varied key may not be named like (they would be ambiguous in the sweep's frame).
_RESERVED_COLUMNS = ("seed", "flow", "class", "direction")


def _sweep_task(text: str, source: str, base: str, overrides: list[str], seed: int, is_json: bool) -> tuple[bool, str]:
    """One variant of a sweep, as a worker runs it: ``(True, results JSON)`` or ``(False, the error's message)``.

    Everything it needs is in its arguments (the scenario's text, not its path), so it runs the same in a thread,
    in another process or on a Dask worker on another machine. An error comes back as a value rather than raised:
    the native exception need not pickle, and the client names the variant in the message it raises.
    """
    try:
        return True, _ullsim.run_json(text, source, base, overrides, seed, is_json)
    except UllsimError as e:
        return False, str(e)


def _check_vary(vary: Mapping[str, Any], fixed: list[str]) -> list[tuple[str, list[Any]]]:
    if not isinstance(vary, Mapping):
        raise UllsimError(f"sweep: vary: expected a dict of key -> list of values, found {type(vary).__name__}")
    checked = []
    for key, values in vary.items():
        if not isinstance(key, str) or not key.strip():
            raise UllsimError(f"sweep: vary: expected keys like \"flow.reader.iodepth\", found {key!r}")
        if key.strip() != key or "=" in key:
            raise UllsimError(f"sweep: vary {key!r}: expected a key path (e.g. \"flow.reader.iodepth\"), no `=`")
        if key in _RESERVED_COLUMNS:
            hint = "; give the seeds with seeds=[...]" if key == "seed" else ""
            raise UllsimError(f"sweep: vary {key}: the results already have a {key!r} column{hint}")
        if not isinstance(values, (list, tuple, range)):
            raise UllsimError(
                f"sweep: vary {key}: expected a list of values (e.g. [1, 4, 16]), "
                f"found {type(values).__name__} {values!r}"
            )
        if len(values) == 0:
            raise UllsimError(f"sweep: vary {key}: the list of values is empty; give at least one")
        for value in values:
            try:
                _toml_value(value)
            except UllsimError:
                raise UllsimError(f"sweep: vary {key}: cannot write {value!r} as a TOML value") from None
        checked.append((key, list(values)))
    # The command's rule (`compare --vary` with `--set`): a fixed value a variant's would replace is an error.
    _ullsim.check_varied_not_fixed([key for key, _ in checked], fixed)
    return checked


def _check_seeds(seeds: Any) -> list[int]:
    if isinstance(seeds, (str, bytes, Mapping)) or not hasattr(seeds, "__iter__"):
        raise UllsimError(f"sweep: seeds: expected a list of non-negative integers, found {seeds!r}")
    seeds = list(seeds)
    if len(seeds) == 0:
        raise UllsimError("sweep: seeds: the list is empty; give at least one seed (e.g. seeds=[1])")
    return [_whole_number(s, "sweep: seeds") for s in seeds]


def sweep(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | None,
    vary: Mapping[str, Sequence[Any]],
    *,
    seeds: Iterable[int] = (1,),
    set: Mapping[str, Any] | list[str] | None = None,
    client: Any = None,
    max_workers: int | None = None,
    return_results: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, list[tuple[dict[str, Any], Result]]]:
    """Run ``scenario`` (as :func:`run` takes it) in every combination of ``vary``'s values, each with every seed
    of ``seeds``, and return one DataFrame: every run's :attr:`Result.flows`, with the varied keys (one column
    each, named by the key, holding the value as given) and ``seed`` as leading columns.

    ``vary`` maps keys (those of ``set``, e.g. ``"flow.reader.iodepth"``) to lists of values. The runs, and the
    rows, come in a fixed order: the first key varies slowest, each key's values in the order given, then the
    seeds. ``seeds`` override the scenario's own seed; ``set`` overrides apply to every run (a key may not be
    both varied and set, nor set inside a varied table, as ``ullsim compare``). Every variant is checked before any runs: a bad key or value raises
    :class:`UllsimError` naming the variant, with the command's message.

    With ``client=None`` the runs go to ``max_workers`` threads (default: ``os.cpu_count()``) of this process.
    ``client`` may be a ``dask.distributed.Client`` (a ``LocalCluster``, or dask-jobqueue's ``SLURMCluster``
    across machines), or anything with ``map``/``submit`` and ``gather`` (or a ``concurrent.futures`` executor).
    Workers receive the scenario's text, not its path; trace files it names must be reachable at the same
    absolute path on every worker (a shared file system), and ``ullsim`` installed in the workers' environment.

    A run's results depend only on the scenario, its overrides and its seed: the frame is the same whatever the
    number of workers, locally or on a cluster. With ``return_results=True`` the return value is
    ``(frame, results)``, ``results`` a list of ``(variant, Result)`` in the frame's order, ``variant`` a dict of
    the varied keys' values and ``seed``.
    """
    if scenario is None:
        text, source, base, is_json = _ullsim.default_scenario(), "built-in default scenario", ".", False
    else:
        text, source, base, is_json = _source(scenario)
    # Workers may run elsewhere (another directory, another machine): relative trace paths resolve from an
    # absolute directory, the same for every worker.
    base = os.path.abspath(base)
    fixed = _overrides(set)
    varied = _check_vary(vary, fixed)
    seed_list = _check_seeds(seeds)
    if max_workers is not None and (
        isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
    ):
        raise UllsimError(f"sweep: max_workers: expected a positive integer, found {max_workers!r}")

    # The base scenario first, so a bad file or `set` is reported once, as `run` would; then every variant.
    _ullsim.validate(text, source, base, fixed, is_json)
    keys = [key for key, _ in varied]
    variants = []
    for values in itertools.product(*(values for _, values in varied)):
        own = [f"{key}={_toml_value(value)}" for key, value in zip(keys, values)]
        label = " ".join(own) if own else "(no varied key)"
        try:
            _ullsim.validate(text, source, base, fixed + own, is_json)
        except UllsimError as e:
            # The library names every override `--set`; these came from `vary`.
            message = str(e)
            for o in own:
                message = message.replace(f"--set {o}:", f"{o}:")
            raise UllsimError(f"sweep: vary {label}: {message}") from None
        variants.append((dict(zip(keys, values)), label, fixed + own))

    runs = [(params, label, overrides, seed) for params, label, overrides in variants for seed in seed_list]
    tasks = [(text, source, base, overrides, seed, is_json) for _, _, overrides, seed in runs]
    outcomes = _dispatch(tasks, client, max_workers)

    frames = []
    results = []
    for (params, label, _, seed), (ok, payload) in zip(runs, outcomes):
        if not ok:
            raise UllsimError(f"sweep: vary {label} seed {seed}: {payload}")
        result = Result(json.loads(payload))
        frame = result.flows.copy()
        for i, (key, value) in enumerate(list(params.items()) + [("seed", seed)]):
            # A list (or table) value fills each cell whole, rather than being spread over the column.
            whole = isinstance(value, (list, tuple, Mapping))
            frame.insert(i, key, pd.Series([value] * len(frame), index=frame.index, dtype=object if whole else None))
        frames.append(frame)
        if return_results:
            results.append((dict(params, seed=seed), result))
    frame = pd.concat(frames, ignore_index=True)
    return (frame, results) if return_results else frame


def _dispatch(tasks: list[tuple], client: Any, max_workers: int | None) -> list[tuple[bool, str]]:
    """Run ``_sweep_task`` on every task; the outcomes in the tasks' order."""
    if client is None:
        # Threads, not processes: the simulation runs in Rust with the GIL released, so threads use every core,
        # and they need no pickling, no `if __name__ == "__main__":` guard in scripts (as 'spawn' does, the
        # default on macOS and Windows) and no fork of a process that may already run threads ('fork' copies
        # locks other threads hold, and the Rust side's rayon pool, used by fairness runs, would have no
        # threads in the child: it could hang). Turning JSON into DataFrames is left to this thread, after.
        workers = max_workers or os.cpu_count() or 1
        pool = ThreadPoolExecutor(max_workers=min(workers, len(tasks)), thread_name_prefix="ullsim-sweep")
        futures = [pool.submit(_sweep_task, *task) for task in tasks]
        outcomes = []
        try:
            for future in futures:
                outcomes.append(future.result())
                if not outcomes[-1][0]:
                    break  # the first failure, in order, is raised: start no more runs.
        finally:
            # After a failure or an interrupt (Ctrl-C) the runs not started are dropped; those running finish.
            pool.shutdown(wait=False, cancel_futures=True)
        return outcomes
    if max_workers is not None:
        raise UllsimError("sweep: max_workers is for local runs; with a client, its cluster sets the workers")
    columns = [list(column) for column in zip(*tasks)]
    if hasattr(client, "map") and hasattr(client, "gather"):
        # dask.distributed.Client: one task per run (keyed by its arguments, which are all it needs);
        # gather gives the results in the tasks' order.
        futures = client.map(_sweep_task, *columns)
        return list(client.gather(futures))
    if hasattr(client, "submit"):
        futures = [client.submit(_sweep_task, *task) for task in tasks]
        if hasattr(client, "gather"):
            return list(client.gather(futures))
        return [future.result() for future in futures]  # a concurrent.futures executor
    raise UllsimError(
        f"sweep: client: expected a dask.distributed.Client (or anything with map/submit and gather), "
        f"found {type(client).__name__}"
    )

"""The papers' evaluations by name (:func:`reproduce`), as DataFrames of their rows."""

from __future__ import annotations

import json
import numbers
from typing import Any, Mapping

import pandas as pd

from . import _ullsim
from ._run import _overrides, _whole_number
from ._ullsim import UllsimError

def reproduce(
    name: str,
    *,
    all: bool = False,
    duration: str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | list[str] | None = None,
    mixes: int | None = None,
    classify_duration: str | None = None,
    load: float | None = None,
    classes: str | None = None,
) -> pd.DataFrame:
    """Run the reproduction ``name`` (see :func:`reproductions`) as ``ullsim reproduce NAME`` does, with the
    same options (``all=True`` is ``--all``; ``mixes``, ``classify_duration``, ``load`` and ``classes`` are
    flin18's), and return its rows: one per figure, setting and metric, with columns ``figure``, each
    setting key (e.g. ``stack``; empty where a figure does not vary it), ``setting`` (all of them, as text),
    ``metric``, ``role`` (``calibrated``: a baseline value the setup is fitted to; ``predicted``), ``verdict``
    (how it compares with the paper: ``close``, ``direction``, ``off``, ``far``, ``fitted``, ``unfitted``;
    empty without a paper value), ``paper`` (NaN where the paper gives no number), ``simulated``, and
    ``spread_min`` and ``spread_max`` (the range over the seeds of a row averaged over two or more, else NaN).
    ``df.attrs`` holds the paper's name, title, the options the runs were made with, the notes, ``headline``
    (the figures of the paper's main claims), ``score`` (the rows with paper values by verdict) and ``raw``,
    the JSON as the command writes it (for :func:`report`). Errors name the command's flags.
    """
    if not isinstance(name, str):
        raise UllsimError(f"reproduce: expected a reproduction's name (a string), found {name!r}")
    if not isinstance(all, bool):
        raise UllsimError(f"--all: expected True or False, found {all!r}")
    if seed is not None:
        seed = _whole_number(seed, "--seed")
    if mixes is not None:
        mixes = _whole_number(mixes, "--mixes")
    if load is not None:
        if isinstance(load, bool) or not isinstance(load, numbers.Real):
            raise UllsimError(f"--load: expected a rate multiplier > 0, found {load!r}")
        load = float(load)
    if classes is not None and not isinstance(classes, str):
        raise UllsimError(f"--classes: expected a string, found {classes!r}")
    if duration is not None and not isinstance(duration, str):
        raise UllsimError(f"--duration: expected a duration such as \"200ms\", got {duration!r}")
    if classify_duration is not None and not isinstance(classify_duration, str):
        raise UllsimError(f"--classify-duration: expected a duration such as \"50ms\", got {classify_duration!r}")
    raw = json.loads(
        _ullsim.reproduce_json(name, all, _overrides(set), duration, seed, mixes, classify_duration, load, classes)
    )
    return _reproduction_frame(raw)


_REPRODUCTION_COLUMNS = (
    "figure", "setting", "metric", "role", "verdict", "paper", "simulated", "spread_min", "spread_max"
)


def _reproduction_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
    keys: list[str] = []
    for row in raw["rows"]:
        keys.extend(k for k in row["setting"] if k not in keys)
    # A setting key never hides a fixed column: one named like them is prefixed.
    column = {k: f"setting.{k}" if k in _REPRODUCTION_COLUMNS else k for k in keys}
    records = []
    for row in raw["rows"]:
        record: dict[str, Any] = {"figure": row["figure"]}
        record.update({column[k]: row["setting"].get(k, "") for k in keys})
        record["setting"] = ", ".join(f"{k}={v}" for k, v in row["setting"].items())
        record["metric"] = row["metric"]
        record["role"] = row.get("role", "")
        record["verdict"] = row.get("verdict") or ""
        record["paper"] = float("nan") if row["paper"] is None else row["paper"]
        record["simulated"] = row["simulated"]
        spread = row.get("spread") or {}
        record["spread_min"] = spread.get("min", float("nan"))
        record["spread_max"] = spread.get("max", float("nan"))
        records.append(record)
    columns = ["figure", *column.values(), "setting", "metric", "role", "verdict", "paper", "simulated"]
    columns += ["spread_min", "spread_max"]
    frame = pd.DataFrame(records, columns=columns)
    frame.attrs.update(
        paper=raw["paper"],
        title=raw["title"],
        options=raw["options"],
        notes=raw["notes"],
        headline=raw.get("headline", []),
        score=raw.get("score", {}),
        raw=raw,
    )
    return frame


def reproductions() -> list[str]:
    """The names :func:`reproduce` takes."""
    return list(_ullsim.reproductions())

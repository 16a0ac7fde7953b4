"""The self-contained HTML report of a run, a comparison or a reproduction (:func:`report`), as ``ullsim report``
writes it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from . import _ullsim
from ._run import Result, _json_value
from ._ullsim import UllsimError

def _raw_json(source: Any, caller: str, maker: str, expected: str) -> Any:
    """The JSON behind ``source``: a DataFrame ``ullsim.<maker>`` returned (its ``attrs["raw"]``) or a dict; else
    :class:`UllsimError` from ``caller`` saying it ``expected`` something else."""
    if isinstance(source, pd.DataFrame):
        if "raw" not in source.attrs:
            raise UllsimError(f"{caller}: this DataFrame is not one ullsim.{maker} returned (no attrs['raw'])")
        return source.attrs["raw"]
    if isinstance(source, Mapping):
        # A dict from elsewhere: a value JSON cannot hold (nan) is an error naming its key.
        return _json_value(source, "", caller, toml=False)
    raise UllsimError(f"{caller}: expected {expected}, got {type(source).__name__}")


def report(source: Result | pd.DataFrame | Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the self-contained HTML report (inline SVG, no JavaScript; as ``ullsim report``) of a run's
    :class:`Result`, a :func:`reproduce` frame, either's JSON as a dict, or the JSON of ``ullsim compare --json``
    as a dict, to ``path``; returns the path."""
    if isinstance(source, Result):
        raw = source.raw
    else:
        raw = _raw_json(source, "report", "reproduce", "a Result, a reproduce() DataFrame or a dict")
    html = _ullsim.report_html(json.dumps(raw, allow_nan=False))
    out = Path(path)
    try:
        out.write_text(html)
    except OSError as e:
        raise UllsimError(f"{out}: cannot write the report: {e.strerror}") from None
    return out

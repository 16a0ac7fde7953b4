"""ullsim.calibrate and ullsim.calibration_report against `ullsim calibrate --json --html`: the same fit, the
preset as a dict, the same report; bad input raises naming the file."""

import json
import math

import pytest

import ullsim
from command import ullsim_command

# A short simulated probe of one drive, calibrated from another's preset with few I/Os per job: seconds.
BASE = "optane-900p"
IOS = 300


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    directory = tmp_path_factory.mktemp("probe")
    ullsim_command("probe", "-o", directory, "--simulate", "optane-ull", "--qd", "1,16", "--numjobs", "1")
    return [directory / "randread-4k-qd.json", directory / "randread-large.json"]


@pytest.fixture(scope="module")
def command(probe, tmp_path_factory):
    """The command's calibration of `probe`: its JSON (the preset named "calibrated", as the package names it)
    and its HTML report."""
    out = tmp_path_factory.mktemp("command")
    ullsim_command(
        "calibrate", *probe, "--base", BASE, "--ios", IOS, "-o", out / "calibrated.toml", "--json", out / "fit.json",
        "--html", out / "fit.html",
    )
    return json.loads((out / "fit.json").read_text()), (out / "fit.html").read_text()


@pytest.fixture(scope="module")
def calibrated(probe):
    return ullsim.calibrate(probe, base=BASE, ios=IOS)


def test_the_fit_rows_are_the_commands_json(calibrated, command):
    _, fit = calibrated
    raw, _ = command
    assert fit.attrs["raw"] == raw
    assert list(fit.columns) == list(ullsim.FIT_COLUMNS)
    assert len(fit) == len(raw["rows"]) >= 4
    for (_, got), want in zip(fit.iterrows(), raw["rows"]):
        assert (got.source, got.rw, got.direction, got.decides) == (
            want["source"], want["rw"], want["direction"], want["decides"]
        )
        assert (got.block_size, got.iodepth, got.numjobs) == tuple(want["shape"][k] for k in ("block_size", "iodepth", "numjobs"))
        for figure in ("iops", "mean_ns", "p99_ns"):
            for side in ("measured", "simulated"):
                value = (want[side] or {}).get(figure)
                column = got[f"{side}_{figure}"]
                assert math.isnan(column) if value is None else column == value, (side, figure)
    assert fit.attrs["parameters"] == raw["outcome"]["parameters"]
    assert fit.attrs["warnings"] == raw["warnings"] and all(isinstance(w, str) for w in fit.attrs["warnings"])


def preset_value(preset, key):
    """The value at `device.flash.read_ns` of a preset dict (its tables are the device's), or None."""
    *tables, name = key.removeprefix("device.").split(".")
    for table in tables:
        preset = preset.get(table, {})
    return preset.get(name)


def test_the_preset_has_its_base_and_every_fitted_value(calibrated):
    preset, fit = calibrated
    assert preset["base"] == BASE
    parameters = fit.attrs["parameters"]
    assert any(p["verdict"] == "fitted" for p in parameters), parameters
    for parameter in parameters:
        value = preset_value(preset, parameter["key"])
        if parameter["verdict"] == "fitted" and isinstance(value, (bool, str)):
            # A choice: the parameter's value is its index, its text the literal the preset writes.
            assert json.dumps(value) == parameter["text"], parameter
        elif parameter["verdict"] == "fitted":
            # The preset file writes four decimals or significant digits.
            assert value == pytest.approx(parameter["value"], rel=1e-3, abs=1e-4), parameter["key"]
        else:
            assert value is None, f"{parameter['key']} was not fitted but is in the preset"


def test_the_report_is_the_commands(calibrated, command, tmp_path):
    raw, html = command
    assert ullsim.calibration_report(calibrated) == html
    (tmp_path / "fit.json").write_text(json.dumps(raw))
    assert ullsim.calibration_report(tmp_path / "fit.json") == html
    assert ullsim.calibration_report(calibrated[1]) == html
    assert ullsim.calibration_report(calibrated[1].attrs["raw"]) == html
    assert html.count("<svg") == html.count("<h3>") >= 2
    assert "<script" not in html


def test_a_missing_or_bad_results_file_raises_naming_it(tmp_path, probe):
    missing = tmp_path / "missing.json"
    with pytest.raises(ullsim.UllsimError, match=r"missing\.json: cannot read it"):
        ullsim.calibrate([probe[0], missing], base=BASE, ios=IOS)
    not_fio = tmp_path / "not-fio.json"
    not_fio.write_text("{\"hello\": 1}")
    with pytest.raises(ullsim.UllsimError, match=r"not-fio\.json"):
        ullsim.calibrate(not_fio, base=BASE, ios=IOS)


def test_bad_arguments_raise_naming_them(probe):
    with pytest.raises(ullsim.UllsimError, match=r"^calibrate: ios: expected a whole number from 100"):
        ullsim.calibrate(probe, ios=10)
    with pytest.raises(ullsim.UllsimError, match=r"no-such-preset"):
        ullsim.calibrate(probe, base="no-such-preset", ios=IOS)
    with pytest.raises(ullsim.UllsimError, match=r"^calibrate: expected fio JSON paths"):
        ullsim.calibrate(42)
    with pytest.raises(ullsim.UllsimError, match=r"^calibration_report: not a calibration"):
        ullsim.calibration_report({"schema_version": 3, "flows": []})

"""`ullsim run --fio-json` read by fio-plot (PyPI `fio-plot`), through the import and parse path its command
takes for a 2D bar chart (getdata.get_json_data: jsonimport.list_json_files, import_json_dataset,
jsonparsing.parse_json_data): what it extracts (iops, bw, lat, iops_stddev, the latency_ns/us/ms
distribution) is checked against the fio JSON and the native results of the same run."""

import json
import math

import pytest
from fio_plot.fiolib import defaultsettings, getdata

from command import ullsim_command as ullsim


# Two jobs of a mixed random flow at QD2 on optane-ull, 1.2 s (a 1.195 s window: two of fio's 500 ms
# IOPS and bandwidth samples per job and direction).
SCENARIO = """
name = "fio-plot consumer"
seed = 3
[run]
duration = "1200ms"
warmup = "5ms"
[device]
preset = "optane-ull"
[[flow]]
name = "mixed"
rw = "randrw"
rwmixread = 70
bs = "4k"
iodepth = 2
numjobs = 2
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(directory holding the fio JSON, the fio JSON, the native results) of one run."""
    work = tmp_path_factory.mktemp("fio-plot")
    scenario = work / "mixed.toml"
    scenario.write_text(SCENARIO)
    out = work / "results"
    out.mkdir()
    fio, native = out / "mixed.json", work / "native.json"
    ullsim("run", scenario, "--fio-json", fio, "--json", native, "-q")
    return out, json.loads(fio.read_text()), json.loads(native.read_text())


def fio_plot_data(directory, direction):
    """What fio-plot's command gathers for `fio-plot -i DIR -r randrw -t bargraph2d_qd -d 2 -n 2 -f DIRECTION`
    (its settings as its argument parser leaves them), through its own functions."""
    settings = defaultsettings.get_default_settings()
    settings.update(
        {
            "input_directory": [str(directory)],
            "rw": "randrw",
            "iodepth": [2],
            "numjobs": [2],
            "filter": [direction],
            "graphtype": "bargraph2d_qd",
        }
    )
    routing = getdata.get_routing_dict()
    settings = getdata.configure_default_settings(settings, routing, "bargraph2d_qd")
    dataset = routing["bargraph2d_qd"]["get_data"](settings)
    assert len(dataset) == 1 and len(dataset[0]["data"]) == 1, "one directory, one file"
    return dataset[0]["data"][0]


@pytest.mark.parametrize("direction", ["read", "write"])
def test_fio_plot_reads_what_we_wrote(run, direction):
    directory, fio, native = run
    jobs = fio["jobs"]
    assert len(jobs) == 2
    data = fio_plot_data(directory, direction)
    assert data["rw"] == "randrw" and int(data["iodepth"]) == 2 and int(data["numjobs"]) == 2
    assert data["type"] == direction
    sections = [job[direction] for job in jobs]
    # fio-plot sums the jobs' iops and bw, averages their mean latencies and iops standard deviations.
    assert data["iops"] == pytest.approx(sum(s["iops"] for s in sections), rel=1e-12)
    assert data["bw"] == sum(s["bw"] for s in sections)
    assert data["lat"] == pytest.approx(sum(s["lat_ns"]["mean"] for s in sections) / 2, rel=1e-12)
    assert data["iops_stddev"] == pytest.approx(sum(s["iops_stddev"] for s in sections) / 2, rel=1e-12)
    # The same numbers as the native results' jobs.
    native_jobs = native["flows"][0]["jobs"]
    assert data["iops"] == pytest.approx(sum(j[direction]["iops"] for j in native_jobs), rel=1e-12)
    assert data["lat"] == pytest.approx(sum(j[direction]["latency_ns"]["mean"] for j in native_jobs) / 2)
    for section, job in zip(sections, jobs):
        # Two 500 ms samples per job, their mean near the job's rate over its window.
        assert section["iops_samples"] == section["bw_samples"] == math.floor(job["job_runtime"] / 500) == 2
        assert section["iops_min"] <= section["iops_mean"] <= section["iops_max"]
        assert section["iops_mean"] == pytest.approx(section["iops"], rel=0.03)
        assert section["bw_mean"] == pytest.approx(section["bw"], rel=0.03)
        assert section["iops_stddev"] == pytest.approx((section["iops_max"] - section["iops_min"]) / math.sqrt(2))
        assert 0 < section["bw_agg"] <= 100
    # Latency distribution: one map per job, each job's three maps sum to 100%.
    for key in ("latency_ns", "latency_us", "latency_ms"):
        assert data[key] == [job[key] for job in jobs]
    for index in range(2):
        total = sum(sum(data[key][index].values()) for key in ("latency_ns", "latency_us", "latency_ms"))
        assert total == pytest.approx(100, abs=0.35)
        # QD2 4 KB I/O on optane-ull completes in tens of microseconds.
        assert sum(data["latency_us"][index].values()) > 99
    # The two jobs' shares of the group's bandwidth in this direction add up to about 100%.
    assert sum(s["bw_agg"] for s in sections) == pytest.approx(100, abs=3)

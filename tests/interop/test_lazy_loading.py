# SPDX-License-Identifier: BSD-3-Clause
"""Opening and reading an NCZarr dataset without filters loads no plugin library; one with a
filter loads them (netcdf-c 4.9.0 loads every plugin on the path for any NCZarr dataset). netCDF's
initialisation asks HDF5 nothing that can load plugins."""
import json
import os
import subprocess
import sys

import numpy as np

import ncapi

HERE = os.path.dirname(os.path.abspath(__file__))
AVAIL_PROBE = os.path.join(HERE, "..", "..", "c_tests", "filter_avail_probe.c")
STARTUP_DONE = "startup done"


def loaded_plugins():
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1].rsplit("/", 1)[-1] for line in maps if "/lib__nc" in line})


def probe_main(store):
    with ncapi.Dataset(ncapi.zarr_url(store)) as ds:
        ds.get("v")
        print(json.dumps(loaded_plugins()))


def child(store):
    run = subprocess.run([sys.executable, __file__, "--probe", store], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=HERE))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def write(store, filters):
    with ncapi.Dataset(ncapi.zarr_url(store), "w") as ds:
        dim = ds.def_dim("x", 64)
        ds.def_var("v", "float32", [dim], chunks=[32], filters=filters)
        ds.enddef()
        ds.put("v", np.linspace(0, 1, 64, dtype="float32"))


def test_no_plugin_is_loaded_for_a_dataset_without_filters(tmp_path):
    plain, zstd = str(tmp_path / "plain.zarr"), str(tmp_path / "zstd.zarr")
    write(plain, [])
    write(zstd, [(32015, [3])])
    assert child(plain) == []
    assert "lib__nch5zstd.so" in child(zstd)


def startup_main(directory, log):
    """Writes and reads an unfiltered netCDF-4 file, marks the log, then one with zstd."""
    plain, zstd = os.path.join(directory, "plain.nc"), os.path.join(directory, "zstd.nc")
    for path, filters in ((plain, []), (zstd, [(32015, [3])])):
        with ncapi.Dataset(path, "w") as ds:
            ds.def_var("v", "float32", [ds.def_dim("x", 64)], chunks=[32], filters=filters)
            ds.enddef()
            ds.put("v", np.linspace(0, 1, 64, dtype="float32"))
        with ncapi.Dataset(path) as ds:
            ds.get("v")
        if path == plain:
            with open(log, "a") as marker:
                marker.write(STARTUP_DONE + "\n")


def test_startup_asks_hdf5_for_no_filter(tmp_path):
    """Registering the built-in stand-ins must not call H5Zfilter_avail: on an HDF5 built without
    szip, H5Zfilter_avail(4) makes HDF5 dlopen every library on its plugin path, in every netCDF
    program. HDF5's registered-filter table (H5Zget_filter_info) is asked instead. The zstd file
    after the mark is the probe's control: netcdf-c asks H5Zfilter_avail(32015) for it."""
    probe, log = tmp_path / "libfilter_avail_probe.so", tmp_path / "avail.log"
    subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Werror", AVAIL_PROBE, "-o", str(probe), "-ldl"], check=True)
    run = subprocess.run([sys.executable, __file__, "--startup", str(tmp_path), str(log)], capture_output=True,
                         text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=HERE, LD_PRELOAD=str(probe), FILTER_AVAIL_LOG=str(log)))
    assert run.returncode == 0, run.stderr
    startup, _, after = log.read_text().partition(STARTUP_DONE + "\n")
    assert startup.split() == [], "H5Zfilter_avail called for an unfiltered file (ids listed)"
    assert "32015" in after.split(), "the probe saw no H5Zfilter_avail call at all"


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    probe_main(sys.argv[2])
elif __name__ == "__main__" and sys.argv[1:2] == ["--startup"]:
    startup_main(sys.argv[2], sys.argv[3])

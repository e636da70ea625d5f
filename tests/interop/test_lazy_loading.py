"""Opening and reading an NCZarr dataset without filters loads no plugin library; one with a
filter loads them (netcdf-c 4.9.0 loads every plugin on the path for any NCZarr dataset)."""
import json
import os
import subprocess
import sys

import numpy as np

import ncapi

HERE = os.path.dirname(os.path.abspath(__file__))


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


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    probe_main(sys.argv[2])

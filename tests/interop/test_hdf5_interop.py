# SPDX-License-Identifier: BSD-3-Clause
"""netCDF-4 (HDF5) files written by netcdf-c built with ncfilters are read by h5py + hdf5plugin, and HDF5
files h5py + hdf5plugin write are read by that netcdf-c (nc_get_var and ncdump), with identical values,
for each standard filter: deflate, shuffle, fletcher32, szip, bzip2, zstd and blosc.

h5py and hdf5plugin are independent implementations (h5py's own HDF5 2.x with libaec for szip,
hdf5plugin's filter libraries); they run in a separate process (h5py_side.py) without HDF5_PLUGIN_PATH,
so they never load netcdf-c's or ncfilters' plugins. The netCDF side loads the plugins of
HDF5_PLUGIN_PATH as the harness sets it. HDF5 files without netCDF metadata are read through the
phony dimensions netcdf-c gives datasets without dimension scales.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import ncapi

HERE = os.path.dirname(os.path.abspath(__file__))
NC_SZIP_NN = 32

# (test id, the netCDF definition calls [(ncapi.Dataset method, args after varid)], the h5py filter keywords,
#  the HDF5 filter ids in netcdf-c's pipeline order, {filter id: {cd_values index: value}} both sides must see)
CASES = [
    ("deflate-1", [("def_var_deflate", 0, 1, 1)], "dict(compression='gzip', compression_opts=1)",
     [1], {1: {0: 1}}),
    ("deflate-6", [("def_var_deflate", 0, 1, 6)], "dict(compression='gzip', compression_opts=6)",
     [1], {1: {0: 6}}),
    ("shuffle+deflate-6", [("def_var_deflate", 1, 1, 6)], "dict(shuffle=True, compression='gzip', compression_opts=6)",
     [2, 1], {1: {0: 6}}),
    ("shuffle", [("def_var_deflate", 1, 0, 0)], "dict(shuffle=True)", [2], {}),
    ("fletcher32", [("def_var_fletcher32", 1)], "dict(fletcher32=True)", [3], {}),
    ("fletcher32+shuffle+deflate-1", [("def_var_fletcher32", 1), ("def_var_deflate", 1, 1, 1)],
     "dict(fletcher32=True, shuffle=True, compression='gzip', compression_opts=1)", [3, 2, 1], {1: {0: 1}}),
    ("szip-nn-32", [("def_var_szip", NC_SZIP_NN, 32)], "dict(compression='szip', compression_opts=('nn', 32))",
     [4], {4: {1: 32}}),
    ("bzip2-9", [("def_var_bzip2", 9)], "hdf5plugin.BZip2(blocksize=9)", [307], {307: {0: 9}}),
    ("bzip2-1", [("def_var_filter", 307, [1])], "hdf5plugin.BZip2(blocksize=1)", [307], {307: {0: 1}}),
    ("zstd-3", [("def_var_zstandard", 3)], "hdf5plugin.Zstd(clevel=3)", [32015], {32015: {0: 3}}),
    ("zstd-negative-3", [("def_var_zstandard", -3)], "hdf5plugin.Zstd(clevel=-3)", [32015], {32015: {0: (-3) & 0xFFFFFFFF}}),
    ("shuffle+zstd-19", [("def_var_deflate", 1, 0, 0), ("def_var_filter", 32015, [19])],
     "dict(shuffle=True, **hdf5plugin.Zstd(clevel=19))", [2, 32015], {32015: {0: 19}}),
    # blosc cd_values: [filter revision, blosc version, type size, chunk bytes, clevel, shuffle, compressor code]
    ("blosc-lz4-shuffle", [("def_var_blosc", 1, 5, 0, 1)],
     "hdf5plugin.Blosc(cname='lz4', clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)", [32001], {32001: {4: 5, 5: 1, 6: 1}}),
    ("blosc-zstd-bitshuffle", [("def_var_blosc", 5, 3, 0, 2)],
     "hdf5plugin.Blosc(cname='zstd', clevel=3, shuffle=hdf5plugin.Blosc.BITSHUFFLE)", [32001],
     {32001: {4: 3, 5: 2, 6: 5}}),
]
IDS = [case[0] for case in CASES]


def fields():
    """Real-looking data, several chunks per variable and partial edge chunks: a smooth float32
    temperature field with measurement noise, an int16 packed anomaly (hundredths of a kelvin) and a
    float64 pressure series."""
    rng = np.random.default_rng(2022)
    lat = np.linspace(-60, 60, 25)[:, None]
    lon = np.linspace(0, 356, 90)[None, :]
    smooth = 288 - 30 * np.sin(np.radians(lat)) ** 2 + 5 * np.cos(np.radians(3 * lon)) * np.cos(np.radians(2 * lat))
    temperature = (smooth + rng.normal(0, 0.3, smooth.shape)).astype("float32")
    anomaly = np.round((temperature - smooth) * 100 + 40 * np.sin(np.radians(lon))).astype("int16")
    time = np.arange(1000)
    pressure = 101325 + 800 * np.sin(2 * np.pi * time / 365) + np.cumsum(rng.normal(0, 15, time.shape))
    return {"temperature": temperature, "anomaly": anomaly, "pressure": pressure.astype("float64")}


DIMS = {"temperature": ("lat", "lon"), "anomaly": ("lat", "lon"), "pressure": ("time",)}
CHUNKS = {"temperature": [10, 40], "anomaly": [10, 40], "pressure": [300]}


def h5py_side(*args):
    """Runs h5py_side.py without netcdf-c's plugin path or libraries (h5py's HDF5 and libnetcdf's
    must not mix); returns its JSON answer. test_damaged_chunks.py uses it too."""
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "LD_LIBRARY_PATH", "LD_PRELOAD")}
    result = subprocess.run([sys.executable, os.path.join(HERE, "h5py_side.py"), *args], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"h5py side failed:\n{result.stderr}"
    return json.loads(result.stdout)


def check_params(seen, expected, where):
    """seen: [(id, params)] of one variable; expected: {id: {index: value}}."""
    for filter_id, wanted in expected.items():
        params = dict(seen)[filter_id]
        for index, value in wanted.items():
            assert index < len(params) and params[index] == value, \
                f"{where}: filter {filter_id} has parameters {params}, expected [{index}] = {value}"


def ncdump():
    """The ncdump of the build NETCDF_LIB belongs to (the harness passes NCDUMP)."""
    path = os.environ.get("NCDUMP") or os.path.join(os.path.dirname(os.environ["NETCDF_LIB"]), "..", "ncdump", "ncdump")
    assert os.access(path, os.X_OK), f"no ncdump at {path}"
    return path


def ncdump_values(path, names):
    """{name: values as float64} from `ncdump -p 9,17 -v names`: 9 significant digits give a float32
    exactly, 17 a float64."""
    result = subprocess.run([ncdump(), "-p", "9,17", "-v", ",".join(names), path], capture_output=True, text=True)
    assert result.returncode == 0, f"ncdump -v failed ({result.returncode}):\n{result.stderr}"
    data = result.stdout.split("\ndata:\n", 1)[1]
    values = {}
    for name, text in re.findall(r"^\s*(\w+) =\s*(.*?)\s*;", data, flags=re.M | re.S):
        values[name] = np.array(text.replace(",", " ").split(), dtype="float64")
    return values


def ncdump_filters(path):
    """{variable: {special attribute: text}} from `ncdump -hs`."""
    result = subprocess.run([ncdump(), "-hs", path], capture_output=True, text=True)
    assert result.returncode == 0, f"ncdump -hs failed ({result.returncode}):\n{result.stderr}"
    specials = {}
    for var, attr, value in re.findall(r"^\s*(\w+):(_\w+) = (.*?) ;$", result.stdout, flags=re.M):
        specials.setdefault(var, {})[attr] = value
    return specials


@pytest.mark.parametrize("name, nc_calls, h5py_filters, ids, params", CASES, ids=IDS)
def test_ncfilters_writes_h5py_reads(tmp_path, name, nc_calls, h5py_filters, ids, params):
    data = fields()
    path = str(tmp_path / f"{name}.nc")
    with ncapi.Dataset(path, "w") as ds:
        dimids = {"lat": ds.def_dim("lat", 25), "lon": ds.def_dim("lon", 90), "time": ds.def_dim("time", 1000)}
        for var, array in data.items():
            varid = ds.def_var(var, array.dtype, [dimids[d] for d in DIMS[var]], chunks=CHUNKS[var])
            for method, *args in nc_calls:
                getattr(ds, method)(varid, *args)
        ds.enddef()
        for var, array in data.items():
            ds.put(var, array)
    pipelines = h5py_side("read", path, str(tmp_path / "read.npz"))
    with np.load(tmp_path / "read.npz") as read:
        for var, array in data.items():
            assert [f[0] for f in pipelines[var]] == ids, f"{var}: HDF5 pipeline {pipelines[var]}"
            check_params(pipelines[var], params, f"h5py, {var}")
            assert read[var].dtype == array.dtype
            np.testing.assert_array_equal(read[var], array, strict=True)


_written = {}


def h5py_written(tmp_path_factory, name, h5py_filters):
    """The HDF5 file h5py writes for a case (once per session) and the pipelines it stored."""
    if name not in _written:
        directory = tmp_path_factory.mktemp("h5py")
        np.savez(directory / "data.npz", **fields())
        path = str(directory / f"{name}.h5")
        pipelines = h5py_side("write", path, str(directory / "data.npz"), json.dumps(CHUNKS), h5py_filters)
        _written[name] = path, pipelines
    return _written[name]


@pytest.mark.parametrize("name, nc_calls, h5py_filters, ids, params", CASES, ids=IDS)
def test_h5py_writes_ncfilters_reads(tmp_path_factory, name, nc_calls, h5py_filters, ids, params):
    path, pipelines = h5py_written(tmp_path_factory, name, h5py_filters)
    with ncapi.Dataset(path) as ds:
        assert sorted(ds.variables()) == sorted(fields())
        for var, array in fields().items():
            assert sorted(f[0] for f in pipelines[var]) == sorted(ids), f"h5py wrote {pipelines[var]}"
            # netcdf-c 4.9.0 lists fletcher32 and shuffle first whatever the file's order (h5py puts
            # fletcher32 last); HDF5 itself applies the file's pipeline.
            seen = ds.filters(var)
            assert [f[0] for f in seen] == ids, f"{var}: netCDF sees {seen}, h5py wrote {pipelines[var]}"
            check_params(seen, params, f"nc_inq_var_filter_info, {var}")
            np.testing.assert_array_equal(ds.get(var), array, strict=True)


@pytest.mark.parametrize("name, nc_calls, h5py_filters, ids, params", CASES, ids=IDS)
def test_h5py_writes_ncdump_reads(tmp_path_factory, name, nc_calls, h5py_filters, ids, params):
    path, pipelines = h5py_written(tmp_path_factory, name, h5py_filters)
    specials = ncdump_filters(path)
    for var in fields():
        shown = specials[var]
        assert shown.get("_Shuffle") == ('"true"' if 2 in ids else None), f"{var}: {shown}"
        assert shown.get("_Fletcher32") == ('"true"' if 3 in ids else None), f"{var}: {shown}"
        if 1 in ids:
            assert shown.get("_DeflateLevel") == str(params[1][0]), f"{var}: {shown}"
        others = [f for f in pipelines[var] if f[0] not in (1, 2, 3)]
        if others:
            listed = [spec.split(",") for spec in shown["_Filter"].strip('"').split("|")]
            assert [int(spec[0]) for spec in listed] == [f[0] for f in others], f"{var}: {shown}"
            check_params([(int(spec[0]), [int(p) for p in spec[1:]]) for spec in listed], params, f"ncdump, {var}")
    values = ncdump_values(path, list(fields()))
    for var, array in fields().items():
        np.testing.assert_array_equal(values[var].astype(array.dtype), array.ravel(), strict=True)

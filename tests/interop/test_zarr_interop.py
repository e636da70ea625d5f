# SPDX-License-Identifier: BSD-3-Clause
"""NCZarr data written by netcdf-c built with ncfilters is read by zarr-python (and numcodecs),
and Zarr arrays written by zarr-python are read by that netcdf-c, with identical values.

Both directions use zarr-python's own codecs and defaults: its expectations are not adapted to
ncfilters. The ncfilters side writes the numeric codec dialect (the build's default).
"""
import os
import subprocess

import numcodecs
import numpy as np
import pytest
import zarr

import ncapi

# (name, netCDF filters [(HDF5 id, visible params)], the numcodecs codecs zarr-python should see)
CODECS = [
    ("zlib", [(1, [5])], [{"id": "zlib", "level": 5}]),
    ("shuffle+zlib", [(2, []), (1, [1])], [{"id": "shuffle", "elementsize": None}, {"id": "zlib", "level": 1}]),
    ("bz2", [(307, [9])], [{"id": "bz2", "level": 9}]),
    ("zstd", [(32015, [3])], [{"id": "zstd", "level": 3}]),
    ("zstd-negative", [(32015, [(-2) & 0xFFFFFFFF])], [{"id": "zstd", "level": -2}]),
    ("blosc", [(32001, [0, 0, 0, 0, 5, 1, 1])], [{"id": "blosc", "clevel": 5, "cname": "lz4", "shuffle": 1}]),
    ("fletcher32", [(3, [])], [{"id": "fletcher32"}]),
]
DTYPES = ["float32", "int16", "float64"]


def sample(dtype, shape=(6, 50)):
    """A smooth random walk, rounded like real gridded data (netcdf-c 4.9.0's blosc plugin fails
    on chunks blosc cannot shrink, netcdf-c #3075)."""
    rng = np.random.default_rng(42)
    smooth = np.round(np.cumsum(rng.normal(size=shape), axis=1) * 10)
    return smooth.astype(dtype)


def codec_configs(array):
    configs = [f.get_config() for f in (array.filters or [])]
    if array.compressor is not None:
        configs.append(array.compressor.get_config())
    return configs


def matches(seen, expected, itemsize):
    for got, want in zip(seen, expected, strict=True):
        for key, value in want.items():
            value = itemsize if value is None else value
            if got.get(key) != value:
                return False
    return True


@pytest.mark.parametrize("mode", ["nczarr", "zarr"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, filters, expected", CODECS, ids=[c[0] for c in CODECS])
def test_ncfilters_writes_zarr_python_reads(tmp_path, mode, dtype, name, filters, expected):
    store = str(tmp_path / f"{name}.zarr")
    data = sample(dtype)
    with ncapi.Dataset(ncapi.zarr_url(store, mode), "w") as ds:
        dims = [ds.def_dim("y", data.shape[0]), ds.def_dim("x", data.shape[1])]
        ds.def_var("v", dtype, dims, chunks=[3, 25], filters=filters)
        ds.enddef()
        ds.put("v", data)
    array = zarr.open_array(os.path.join(store, "v"), mode="r")
    assert matches(codec_configs(array), expected, data.itemsize), codec_configs(array)
    np.testing.assert_array_equal(array[...], data)


ZARR_CODECS = [
    ("zlib", None, numcodecs.Zlib(level=1)),
    ("shuffle+zlib", [numcodecs.Shuffle(elementsize=4)], numcodecs.Zlib(level=5)),
    ("bz2", None, numcodecs.BZ2(level=9)),
    ("zstd", None, numcodecs.Zstd(level=1)),
    ("zstd-negative", None, numcodecs.Zstd(level=-3)),
    ("blosc", None, numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)),
    ("blosc-autoshuffle", None, numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.AUTOSHUFFLE)),
    ("blosc-bitshuffle", None, numcodecs.Blosc(cname="zlib", clevel=4, shuffle=numcodecs.Blosc.BITSHUFFLE)),
    ("fletcher32", None, numcodecs.Fletcher32()),
    ("shuffle+fletcher32", [numcodecs.Shuffle(elementsize=4), numcodecs.Fletcher32()], numcodecs.Zstd(level=2)),
]


@pytest.mark.parametrize("name, filters, compressor", ZARR_CODECS, ids=[c[0] for c in ZARR_CODECS])
def test_zarr_python_writes_ncfilters_reads(tmp_path, name, filters, compressor):
    store = str(tmp_path / f"{name}.zarr")
    data = sample("float32", (8, 40))
    group = zarr.open_group(store, mode="w")
    array = group.create_dataset("v", data=data, chunks=(4, 20), filters=filters, compressor=compressor)
    array.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    with ncapi.Dataset(ncapi.zarr_url(store, "zarr")) as ds:
        np.testing.assert_array_equal(ds.get("v"), data)
    ncdump = os.environ.get("NCDUMP")
    if ncdump:
        text = subprocess.run([ncdump, "-v", "v", ncapi.zarr_url(store, "zarr")], check=True, capture_output=True,
                              text=True).stdout
        values = text.split("v =", 1)[1].replace(";", "").replace("}", "").replace(",", " ").split()
        np.testing.assert_allclose(np.array(values, dtype="float64"), data.ravel().astype("float64"), rtol=1e-6)

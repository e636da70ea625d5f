# SPDX-License-Identifier: BSD-3-Clause
"""Malformed codec metadata in an NCZarr `.zarray` gives a clear netCDF error, never a crash.

Each case edits a copy of a small dataset (variable "v" deflated, variable "good" unfiltered)
and reads it in a child process, so a crash is seen as a signal, not as a dead test run.
"""
import json
import os
import shutil
import subprocess
import sys
import zlib

import numpy as np
import pytest

import ncapi

HERE = os.path.dirname(os.path.abspath(__file__))
VALUES = np.arange(16, dtype="float32") * 1.5


def write_store(path):
    with ncapi.Dataset(ncapi.zarr_url(path), "w") as ds:
        dim = ds.def_dim("x", 16)
        ds.def_var("v", "float32", [dim], chunks=[8], filters=[(1, [5])])
        ds.def_var("good", "float32", [dim], chunks=[8])
        ds.enddef()
        ds.put("v", VALUES)
        ds.put("good", VALUES)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("store") / "pristine.zarr")
    write_store(path)
    return path


def probe(store, env=None, with_plugins=False):
    """Opens the store in a child process: {"open": status, "v": ..., "good": ..., "ids": [...]}, and
    with_plugins, the plugin libraries it loaded ("plugins": [...])."""
    run = subprocess.run([sys.executable, __file__, "--probe", store], capture_output=True, text=True, timeout=120,
                         env=dict(env or os.environ, PYTHONPATH=HERE))
    assert run.returncode == 0, f"the reader died (exit {run.returncode}):\n{run.stderr}"
    result = json.loads(run.stdout.strip().splitlines()[-1])
    if not with_plugins:
        del result["plugins"]
    return result, run.stderr


def read_status(ds, name):
    try:
        values = ds.get(name)
    except ncapi.NcError as e:
        return e.status
    return "same" if np.array_equal(values, VALUES) else "different"


def status_of_inq(ds, name):
    """nc_inq_var's status: the variable's metadata besides its filters."""
    try:
        ds.shape_and_type(ds.varid(name))
    except ncapi.NcError as e:
        return e.status
    return 0


def probe_main(store):
    result = {}
    try:
        ds = ncapi.Dataset(ncapi.zarr_url(store))
    except ncapi.NcError as e:
        result["open"] = e.status
    else:
        result["open"] = 0
        try:
            result["ids"] = ds.filter_ids("v")
        except ncapi.NcError as e:
            result["ids"] = e.status
        result["inq"] = status_of_inq(ds, "v")
        result["v"] = read_status(ds, "v")
        result["good"] = read_status(ds, "good")
        ds.close()
    with open("/proc/self/maps") as maps:
        result["plugins"] = sorted({line.split()[-1].rsplit("/", 1)[-1] for line in maps if "/lib__nc" in line})
    print(json.dumps(result))


def edited(pristine, tmp_path, **changes):
    """A copy of the store with v/.zarray's keys replaced (a value of ... deletes the key)."""
    store = str(tmp_path / "edited.zarr")
    shutil.copytree(pristine, store)
    zarray = os.path.join(store, "v", ".zarray")
    with open(zarray) as f:
        meta = json.load(f)
    for key, value in changes.items():
        if value is ...:
            meta.pop(key, None)
        else:
            meta[key] = value
    with open(zarray, "w") as f:
        json.dump(meta, f)
    return store


def test_pristine_store_reads_back(pristine):
    result, _ = probe(pristine)
    assert result == {"open": 0, "ids": [1], "inq": 0, "v": "same", "good": "same"}


def test_empty_filters_array_is_no_filters(pristine, tmp_path):
    result, _ = probe(edited(pristine, tmp_path, filters=[]))
    assert result == {"open": 0, "ids": [1], "inq": 0, "v": "same", "good": "same"}


def test_compressed_chunks_under_a_null_compressor_fail_the_read(pristine, tmp_path):
    # The stored (deflated) length cannot be the chunk's byte size: an error, not garbage.
    result, stderr = probe(edited(pristine, tmp_path, compressor=None))
    assert result == {"open": 0, "ids": [], "inq": 0, "v": ncapi.NC_EFILTER, "good": "same"}
    assert 'variable "v"' in stderr and "no filter declared" in stderr, stderr


# One variable's malformed codec: the dataset opens, that variable's data and filter inquiries
# give NC_EFILTER naming variable, key and problem, its other metadata and the neighbour read.
BROKEN = {"open": 0, "ids": ncapi.NC_EFILTER, "inq": 0, "v": ncapi.NC_EFILTER, "good": "same"}


@pytest.mark.parametrize("codec, reason", [
    ({"level": 5}, 'has no "id"'),
    ({"id": "zlib"}, 'has no "level"'),
    ({"id": "zlib", "level": "high"}, "must be an integer"),
    ({"id": "zlib", "level": [5]}, "must be an integer"),
    ({"id": "zlib", "level": None}, "must be an integer"),
    ({"id": 5, "level": 5}, "must be a non-empty string"),
    ({"id": "blosc", "shuffle": "yes"}, "must be an integer"),
    ({"id": "blosc", "cname": "nosuchcompressor"}, 'unknown compressor "nosuchcompressor"'),
])
def test_bad_codec_object_breaks_only_its_variable(pristine, tmp_path, codec, reason):
    result, stderr = probe(edited(pristine, tmp_path, compressor=codec))
    assert result == BROKEN
    assert reason in stderr and 'variable "v", key "compressor"' in stderr, stderr


@pytest.mark.parametrize("changes, key, reason", [
    ({"compressor": "zlib"}, '"compressor"', "not a JSON object"),
    ({"compressor": 5}, '"compressor"', "not a JSON object"),
    ({"compressor": [{"id": "zlib", "level": 5}]}, '"compressor"', "not a JSON object"),
    ({"filters": ["zlib"], "compressor": {"id": "zlib", "level": 5}}, '"filters"[0]', "not a JSON object"),
    ({"filters": [{"id": "zlib"}], "compressor": {"id": "zlib", "level": 5}}, '"filters"[0]', 'has no "level"'),
    ({"filters": {"id": "zlib", "level": 5}}, '"filters"', "is not a list of codec objects"),
    ({"filters": 5}, '"filters"', "is not a list of codec objects"),
])
def test_non_object_codec_breaks_only_its_variable(pristine, tmp_path, changes, key, reason):
    result, stderr = probe(edited(pristine, tmp_path, **changes))
    assert result == BROKEN
    assert f'variable "v", key {key}' in stderr and reason in stderr, stderr


def test_unknown_codec_is_a_missing_filter(pristine, tmp_path):
    result, stderr = probe(edited(pristine, tmp_path, compressor={"id": "nosuchcodec", "x": 1}))
    assert result == {"open": 0, "ids": [0], "inq": 0, "v": ncapi.NC_ENOFILTER, "good": "same"}
    assert "has unsupported codec: (nosuchcodec)" in stderr, stderr


def test_out_of_range_level_fails_reads_not_open(pristine, tmp_path):
    result, _ = probe(edited(pristine, tmp_path, compressor={"id": "zlib", "level": 99}))
    assert result == {"open": 0, "ids": [1], "inq": 0, "v": ncapi.NC_EFILTER, "good": "same"}


def test_corrupt_chunk_fails_the_read(pristine, tmp_path):
    store = edited(pristine, tmp_path)
    with open(os.path.join(store, "v", "0"), "r+b") as f:
        f.seek(2)
        f.write(b"\xff" * 8)
    result, _ = probe(store)
    assert result["open"] == 0 and result["v"] == ncapi.NC_EFILTER and result["good"] == "same"


def test_a_decompression_bomb_is_refused_by_built_in_and_plugin_decoders(pristine, tmp_path):
    """A chunk that decodes far beyond the chunk's size (64 MiB of zeros for a 32-byte chunk) is
    refused at the chain's limit, whether ncfilters' built-in deflate decodes it or its
    lib__nch5deflate.so from the plugin path, which gets the limit through
    ncfilters_set_decode_limit."""
    store = edited(pristine, tmp_path)
    with open(os.path.join(store, "v", "0"), "wb") as f:
        f.write(zlib.compress(bytes(64 << 20), 9))
    with_path = dict(os.environ)
    without_path = {key: value for key, value in os.environ.items() if key != "HDF5_PLUGIN_PATH"}
    for env, plugin_decodes in ((with_path, True), (without_path, False)):
        result, stderr = probe(store, env, with_plugins=True)
        assert ("lib__nch5deflate.so" in result["plugins"]) == plugin_decodes, result
        assert result["open"] == 0 and result["v"] == ncapi.NC_EFILTER and result["good"] == "same", result
        assert "exceeds" in stderr, stderr


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    probe_main(sys.argv[2])

# SPDX-License-Identifier: BSD-3-Clause
"""NCZarr chunk I/O with misbehaving codecs, and the `_Codecs` attribute's length.

The plugins are built from c_tests/nczarr_codec.c (one per variant) into a directory put on
HDF5_PLUGIN_PATH after netcdf-c's own. Each check runs in a child process, so a crash shows as a
signal rather than killing the test run.
"""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ncapi

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "c_tests", "nczarr_codec.c")
VALUES = np.arange(100, dtype="int32") * 3


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("nczarr_codecs")
    for variant, name in [(1, "lib__failenc.so"), (2, "lib__reenter.so")]:
        subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Werror", f"-DVARIANT={variant}", "-o", str(out / name),
                        SOURCE, os.environ["NETCDF_LIB"]], check=True)
    return ":".join([os.environ["HDF5_PLUGIN_PATH"], str(out)])


def probe(plugin_path, *args):
    env = dict(os.environ, PYTHONPATH=HERE, HDF5_PLUGIN_PATH=plugin_path)
    run = subprocess.run([sys.executable, __file__, "--probe", *args], capture_output=True, text=True, timeout=120,
                         env=env)
    assert run.returncode == 0, f"the child died (exit {run.returncode}):\n{run.stderr}"
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def status_of(call):
    try:
        value = call()
    except ncapi.NcError as e:
        return e.status
    return value if value is not None else 0


def probe_failed_encode(store, deflate_first):
    """Writes through a codec that replaces the chunk with garbage and fails (after deflate,
    which cannot decode that garbage to restore the chunk), then reads the chunk back."""
    ds = ncapi.Dataset(ncapi.zarr_url(store), "w")
    dim = ds.def_dim("x", 100)
    ds.def_var("v", "int32", [dim], chunks=[100], filters=[(1, [5])] * (deflate_first == "1") + [(41500, [])])
    ds.enddef()
    result = {"put": status_of(lambda: ds.put("v", VALUES))}
    result["sync"] = ncapi.lib.nc_sync(ds.ncid)
    result["read"] = status_of(lambda: "same" if np.array_equal(ds.get("v"), VALUES) else "different")
    result["close"] = ncapi.lib.nc_close(ds.ncid)
    return result


def probe_reentrant(store):
    """A codec whose NCZ_modify_parameters asks nc_inq_var_filter_info about its own variable."""
    with ncapi.Dataset(ncapi.zarr_url(store), "w") as ds:
        dim = ds.def_dim("x", 100)
        ds.def_var("v", "int32", [dim], chunks=[50], filters=[(41501, [7])])
        ds.enddef()
        ds.put("v", VALUES)
        written = ds.filters("v")
    with ncapi.Dataset(ncapi.zarr_url(store)) as ds:
        return {"written": written, "read": ds.filters("v"), "same": bool(np.array_equal(ds.get("v"), VALUES))}


@pytest.mark.parametrize("deflate_first", ["0", "1"])
def test_failed_encode_keeps_the_chunk(plugin_path, tmp_path, deflate_first):
    result, stderr = probe(plugin_path, "failed_encode", str(tmp_path / "failenc.zarr"), deflate_first)
    assert ncapi.NC_EFILTER in (result["put"], result["sync"]), result
    # The cache entry still holds the unwritten data (or the read fails); never garbage or a crash.
    assert result["read"] == "same" or (isinstance(result["read"], int) and result["read"] < 0), result
    assert "41500" in stderr, stderr


def test_modify_parameters_may_ask_about_its_variable(plugin_path, tmp_path):
    result, _ = probe(plugin_path, "reentrant", str(tmp_path / "reenter.zarr"))
    assert result == {"written": [[41501, [7]]], "read": [[41501, [7]]], "same": True}


def codecs_with_guard(ds, varid):
    """_Codecs read into a buffer of exactly att_len bytes followed by a guard byte."""
    length = ctypes.c_size_t()
    ncapi.check(ncapi.lib.nc_inq_attlen(ds.ncid, varid, b"_Codecs", ctypes.byref(length)), "nc_inq_attlen")
    buffer = (ctypes.c_char * (length.value + 1))(*([b"\xaa"] * (length.value + 1)))
    ncapi.check(ncapi.lib.nc_get_att_text(ds.ncid, varid, b"_Codecs", buffer), "nc_get_att_text")
    return buffer.raw[:length.value].decode(), buffer.raw[length.value]


def test_codecs_attribute_fills_exactly_att_len_bytes(tmp_path):
    store = str(tmp_path / "codecs.zarr")
    with ncapi.Dataset(ncapi.zarr_url(store), "w") as ds:
        dim = ds.def_dim("x", 100)
        ds.def_var("v", "int32", [dim], chunks=[50], filters=[(2, []), (1, [5])])
        ds.enddef()
        ds.put("v", VALUES)
    with ncapi.Dataset(ncapi.zarr_url(store)) as ds:
        text, guard = codecs_with_guard(ds, ds.varid("v"))
    assert [c["id"] for c in json.loads(text)] == ["shuffle", "zlib"]
    assert guard == 0xAA, "nc_get_att_text wrote past att_len bytes"
    # ncdump allocates att_len + 1 bytes and prints the text as a C string.
    dump = subprocess.run([os.environ["NCDUMP"], "-hs", ncapi.zarr_url(store)], capture_output=True, text=True,
                          check=True).stdout
    line = next(l for l in dump.splitlines() if "_Codecs" in l)
    assert line.strip() == 'v:_Codecs = "' + text.replace('"', '\\"') + '" ;', line


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    print(json.dumps({"failed_encode": probe_failed_encode, "reentrant": probe_reentrant}[sys.argv[2]](*sys.argv[3:])))

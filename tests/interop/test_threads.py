# SPDX-License-Identifier: BSD-3-Clause
"""Large chunks are compressed on several threads (zstd frames of 1 MiB jobs, pigz-style deflate
blocks, bzip2 blocks joined into one stream, blosc frames joined from pieces of whole blocks), and
the bytes written do not depend on it: a 4.8 MB chunk written with NCFILTERS_THREADS=1 and with
every core, through the filters built into libnetcdf and through ncfilters' plugin libraries, is
the same chunk. Other readers decode it: zarr-python (numcodecs), h5py with hdf5plugin, and the
stock netcdf-c with its C plugins. blosc's chunk is also the one the stock C plugin writes (one
c-blosc call on one thread), byte for byte.

Each write runs in a child process, since a process reads NCFILTERS_THREADS once.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE = (1200, 1000)  # one float32 chunk of 4.8 MB: several zstd jobs and deflate blocks
DEFLATE_BLOCK = 256 << 10

# (name, netCDF filters [(HDF5 id, params)]); NCZarr's zlib is ncfilters' deflate.
NCZARR_CASES = [
    ("zstd-3", [(32015, [3])]),
    ("zstd-1", [(32015, [1])]),
    ("zlib-1", [(1, [1])]),
    ("shuffle+zlib-6", [(2, []), (1, [6])]),
    ("bz2-9", [(307, [9])]),
    ("blosc-lz4", [(32001, [0, 0, 0, 0, 5, 1, 1])]),
]
NETCDF4_CASES = [("zstd-3", [(32015, [3])]), ("zstd-negative-1", [(32015, [(-1) & 0xFFFFFFFF])]),
                 ("bzip2-9", [(307, [9])]), ("blosc-lz4", [(32001, [0, 0, 0, 0, 5, 1, 1])]),
                 ("blosc-zstd-bitshuffle", [(32001, [0, 0, 0, 0, 3, 2, 5])])]


def field():
    """A smooth temperature-like field with measurement noise."""
    rng = np.random.default_rng(15)
    y = np.linspace(-1, 1, SHAPE[0])[:, None]
    x = np.linspace(0, 6, SHAPE[1])[None, :]
    return (280 + 20 * np.cos(3 * y) * np.sin(x) + rng.normal(0, 0.05, SHAPE)).astype("float32")


def child(mode, *args, env):
    """Runs this file's `mode` in a child process with `env` added (None: removed)."""
    environment = dict(os.environ, PYTHONPATH=HERE)
    for key, value in env.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    run = subprocess.run([sys.executable, __file__, mode, *args], capture_output=True, text=True, timeout=300,
                         env=environment)
    assert run.returncode == 0, f"{mode} failed (exit {run.returncode}):\n{run.stdout}{run.stderr}"
    return run.stdout


def write_main(url, filters):
    import ncapi

    data = field()
    with ncapi.Dataset(url, "w") as ds:
        dims = [ds.def_dim("y", SHAPE[0]), ds.def_dim("x", SHAPE[1])]
        ds.def_var("t", "float32", dims, chunks=list(SHAPE), filters=json.loads(filters))
        ds.enddef()
        ds.put("t", data)


def read_main(url):
    """Prints whether the file's values are the field (run against any libnetcdf)."""
    import ncapi

    with ncapi.Dataset(url) as ds:
        print(json.dumps(bool(np.array_equal(ds.get("t"), field()))))


def h5py_main(path):
    """Prints the raw chunk's SHA-256 and whether h5py + hdf5plugin decode it to the field."""
    import hashlib

    import h5py
    import hdf5plugin  # noqa: F401 (registers the filters)

    with h5py.File(path, "r") as f:
        dataset = f["t"]
        _, raw = dataset.id.read_direct_chunk((0, 0))
        print(json.dumps([hashlib.sha256(raw).hexdigest(), bool(np.array_equal(dataset[...], field()))]))


# The two ways ncfilters' filters run: built into libnetcdf, or its plugin libraries on the path.
SOURCES = {"built-in": {"HDF5_PLUGIN_PATH": None}, "plugins": {}}


def stock():
    """The stock netcdf-c with its C plugins."""
    return {"NETCDF_LIB": os.environ["NCFILTERS_STOCK_LIB"], "HDF5_PLUGIN_PATH": os.environ["NCFILTERS_STOCK_PLUGINS"],
            "LD_LIBRARY_PATH": None}


def written(tmp_path, kind, name, filters, threads, source):
    path = tmp_path / f"{name}-{threads}-{source}.{'zarr' if kind == 'nczarr' else 'nc'}"
    url = f"file://{path}#mode=nczarr,file" if kind == "nczarr" else str(path)
    env = stock() if source == "stock" else dict(SOURCES[source], NCFILTERS_THREADS=threads)
    child("write", url, json.dumps(filters), env=env)
    return path, url


def chunk_file(store):
    return (store / "t" / "0.0").read_bytes()


@pytest.mark.parametrize("name, filters", NCZARR_CASES, ids=[c[0] for c in NCZARR_CASES])
def test_nczarr_chunks_do_not_depend_on_threads(tmp_path, name, filters):
    import zarr

    stores = {(threads, source): written(tmp_path, "nczarr", name, filters, threads, source)
              for threads in ("1", "2") for source in SOURCES}
    chunks = {key: chunk_file(path) for key, (path, _) in stores.items()}
    first = chunks[("1", "built-in")]
    for key, chunk in chunks.items():
        assert chunk == first, f"{name}: the chunk written with {key} differs from 1 thread, built-in"
    if "zlib" in name:
        # One sync-flush marker per block boundary: the blocks ran (and were joined).
        blocks = -(-field().nbytes // DEFLATE_BLOCK)
        assert first.count(b"\x00\x00\xff\xff") >= blocks - 1, name
    if "bz2" in name:
        # One stream holds it all: a decoder that stops at the end of the first stream (as
        # netcdf-c's C plugin does) leaves nothing over.
        import bz2

        decoder = bz2.BZ2Decompressor()
        assert decoder.decompress(first) == field().tobytes() and decoder.eof and not decoder.unused_data, name
    if "blosc" in name:
        stock_path, _ = written(tmp_path, "nczarr", name, filters, "1", "stock")
        assert chunk_file(stock_path) == first, f"{name}: not the chunk the stock C plugin writes"
    path, url = stores[("2", "plugins")]
    np.testing.assert_array_equal(zarr.open_array(str(path / "t"), mode="r")[...], field())
    assert json.loads(child("read", url, env=stock())), f"{name}: stock netcdf-c with its C plugins"


@pytest.mark.parametrize("name, filters", NETCDF4_CASES, ids=[c[0] for c in NETCDF4_CASES])
def test_netcdf4_chunks_do_not_depend_on_threads(tmp_path, name, filters):
    files = {(threads, source): written(tmp_path, "netcdf4", name, filters, threads, source)
             for threads in ("1", "2") for source in SOURCES}
    h5py_env = {"HDF5_PLUGIN_PATH": None, "LD_LIBRARY_PATH": None, "LD_PRELOAD": None}
    seen = {key: json.loads(child("h5py", str(path), env=h5py_env)) for key, (path, _) in files.items()}
    first_hash = seen[("1", "built-in")][0]
    for key, (digest, decoded) in seen.items():
        assert digest == first_hash, f"{name}: the chunk written with {key} differs from 1 thread, built-in"
        assert decoded, f"{name}: h5py + hdf5plugin decoded other values from {key}"
    if "blosc" in name:
        stock_path, _ = written(tmp_path, "netcdf4", name, filters, "1", "stock")
        assert json.loads(child("h5py", str(stock_path), env=h5py_env))[0] == first_hash, \
            f"{name}: not the chunk the stock C plugin writes"
    assert json.loads(child("read", files[("2", "plugins")][1], env=stock())), f"{name}: stock netcdf-c, C plugins"


if __name__ == "__main__":
    {"write": write_main, "read": read_main, "h5py": h5py_main}[sys.argv[1]](*sys.argv[2:])

# SPDX-License-Identifier: BSD-3-Clause
"""The h5py side of test_hdf5_interop.py, run in a process of its own.

h5py bundles its own HDF5 (2.x) and hdf5plugin its own filter libraries; libnetcdf, loaded by ctypes in
the test process, uses the system HDF5. In one process the two HDF5 libraries mix (a plugin hdf5plugin
registers calls into the other library's H5P functions and the filter fails), so h5py runs here, without
HDF5_PLUGIN_PATH: every filter it uses is built into its HDF5 (deflate, shuffle, fletcher32, szip with
libaec) or registered by `import hdf5plugin`, never one of netcdf-c's or ncfilters' plugins.

    python h5py_side.py write FILE.h5 DATA.npz CHUNKS.json FILTER-EXPRESSION
    python h5py_side.py read FILE.h5 OUT.npz
    python h5py_side.py chunk-read FILE.nc OUT
    python h5py_side.py chunk-write FILE.nc DATA [FILE.nc DATA ...]

chunk-read and chunk-write read and write the stored bytes of variable v's first chunk as they are
(test_damaged_chunks.py), with no filter run.

FILTER-EXPRESSION is a Python expression giving create_dataset's filter keywords, e.g.
`dict(compression="szip", compression_opts=("nn", 32))` or `hdf5plugin.Zstd(clevel=3)`. Both commands
print, as JSON, each dataset's filter pipeline as HDF5 stores it: {name: [[id, [cd_values...]], ...]}.
"""
import json
import os
import sys

import h5py
import hdf5plugin
import numpy as np


def pipeline(dataset):
    plist = dataset.id.get_create_plist()
    return [[f[0], list(f[2])] for f in (plist.get_filter(i) for i in range(plist.get_nfilters()))]


def check_independent():
    """No netcdf-c/ncfilters filter library in this process, and no plugin path pointing at one."""
    assert "HDF5_PLUGIN_PATH" not in os.environ, "h5py must not see netcdf-c's plugin directory"
    with open("/proc/self/maps") as maps:
        foreign = sorted({line.split()[-1] for line in maps if "lib__nc" in line or "libnetcdf" in line})
    assert not foreign, f"netcdf-c libraries loaded into the h5py process: {foreign}"


def main(argv):
    command, path = argv[1], argv[2]
    if command == "write":
        data, chunks = np.load(argv[3]), json.loads(argv[4])
        kwargs = dict(eval(argv[5], {"hdf5plugin": hdf5plugin}))  # noqa: S307 (the tests' own table)
        with h5py.File(path, "w") as f:
            for name in data.files:
                f.create_dataset(name, data=data[name], chunks=tuple(chunks[name]), **kwargs)
            result = {name: pipeline(f[name]) for name in data.files}
    elif command == "read":
        with h5py.File(path, "r") as f:
            names = [name for name in f if isinstance(f[name], h5py.Dataset) and not f[name].is_scale]
            np.savez(argv[3], **{name: f[name][...] for name in names})
            result = {name: pipeline(f[name]) for name in names}
    elif command == "chunk-read":
        with h5py.File(path, "r") as f, open(argv[3], "wb") as out:
            out.write(f["v"].id.read_direct_chunk((0,))[1])
        result = {}
    elif command == "chunk-write":
        refused = []
        for path, data in zip(argv[2::2], argv[3::2]):
            with h5py.File(path, "r+") as f, open(data, "rb") as chunk:
                try:
                    f["v"].id.write_direct_chunk((0,), chunk.read(), 0)
                except (ValueError, OSError):  # HDF5 refuses some chunks (an empty one)
                    refused.append(path)
        result = {"refused": refused}
    else:
        raise SystemExit(f"unknown command {command}")
    check_independent()
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)

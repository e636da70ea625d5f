# SPDX-License-Identifier: BSD-3-Clause
"""Reads the file c_tests/mpi_filters.c wrote on 4 ranks with h5py (hdf5plugin provides zstd and
bzip2) and checks every filter and value; prints "h5py: all values identical" when they are."""
import sys

import h5py
import hdf5plugin  # noqa: F401  (registers the zstd and bzip2 filters with h5py's HDF5)
import numpy as np

RANKS, OWN_LEN, ROWS_PER_RANK, COLS = 4, 4096, 256, 64


def filter_ids(dataset):
    plist = dataset.id.get_create_plist()
    return [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]


with h5py.File(sys.argv[1], "r") as f:
    i = np.arange(OWN_LEN)
    for v in range(RANKS):
        dataset = f[f"own_{v}"]
        want_ids = [2, 32015] if v % 2 == 0 else [307]
        assert filter_ids(dataset) == want_ids, (v, filter_ids(dataset))
        expected = (np.float32(v) * np.float32(1000) + (i % 97).astype(np.float32) * np.float32(0.5))
        assert np.array_equal(dataset[...], expected.astype(np.float32)), f"own_{v} differs"
    dataset = f["all"]
    assert filter_ids(dataset) == [3, 1], filter_ids(dataset)  # fletcher32 first, as netCDF-4 orders it
    rows, cols = np.meshgrid(np.arange(RANKS * ROWS_PER_RANK), np.arange(COLS), indexing="ij")
    assert np.array_equal(dataset[...], (rows * COLS + cols) * 3 - 7), "all differs"
print("h5py: all values identical")

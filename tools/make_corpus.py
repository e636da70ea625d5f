#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Builds the filter benchmark corpus from real netCDF files (tools/bench-filters).

    NETCDF_LIB=<libnetcdf.so> make_corpus.py OUTDIR FILE.nc...

Every numeric variable of every file is read through libnetcdf (values exactly as stored) and
grouped by type; variables where one value (a fill value) makes up over half are left out. Chunks are whole variables concatenated in a fixed order and cut at 1, 4 and
16 MiB; a chunk is written only if the data suffice without repeating any (a compressor that sees a
repeat inflates both its ratio and its speed). OUTDIR/MANIFEST.txt lists every source variable
and which chunks use it.
"""
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
import ncapi  # noqa: E402

TYPES = {"f32": np.dtype("float32"), "i16": np.dtype("int16"), "f64": np.dtype("float64")}
SIZES = {"1MiB": 1 << 20, "4MiB": 4 << 20, "16MiB": 16 << 20}


def main():
    out, files = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    pieces = {key: [] for key in TYPES}
    for path in files:
        try:
            ds = ncapi.Dataset(path)
        except ncapi.NcError as e:
            print(f"skipped {path}: {e}", file=sys.stderr)
            continue
        with ds:
            for name in ds.variables():
                try:
                    values = ds.get(name)
                except (ncapi.NcError, KeyError):
                    continue
                if values.size == 0:
                    continue
                _, counts = np.unique(values, return_counts=True)
                if counts.max() > values.size // 2:
                    # Mostly one value: a fill-value field (e.g. ncmeta's chlor_a), not real data.
                    continue
                for key, dtype in TYPES.items():
                    if values.dtype == dtype and values.size > 16:
                        pieces[key].append((f"{os.path.basename(path)}:{name}", values.tobytes()))
    manifest = []
    for key, items in pieces.items():
        total = sum(len(b) for _, b in items)
        manifest.append(f"{key}: {len(items)} variables, {total} bytes")
        for label, data in items:
            manifest.append(f"  {label}: {len(data)} bytes")
        for size_name, size in SIZES.items():
            if total < size:
                manifest.append(f"  {key}_{size_name}: not written, only {total} bytes without repeats")
                continue
            chunk = b"".join(b for _, b in items)[:size]
            with open(os.path.join(out, f"{key}_{size_name}.bin"), "wb") as f:
                f.write(chunk)
            manifest.append(f"  {key}_{size_name}.bin: md5 {hashlib.md5(chunk).hexdigest()}")
    with open(os.path.join(out, "MANIFEST.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print("\n".join(line for line in manifest if not line.startswith("    ")))


if __name__ == "__main__":
    main()

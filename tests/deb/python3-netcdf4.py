# SPDX-License-Identifier: BSD-3-Clause
"""The distribution's python3-netcdf4 with no HDF5_PLUGIN_PATH, run inside a clean Debian root by
`cargo xtask deb`:
    python3 python3-netcdf4.py <label> <files dir> <work dir>
Reads each file gdal.sh made (one per standard filter) against the plain one, and writes a
variable with each filter the binding was built for through `createVariable(compression=...)`.
Prints PASS/FAIL per case and `<label>: N of M succeeded`; exits 0 (the harness compares counts)."""

import os
import sys

os.environ.pop("HDF5_PLUGIN_PATH", None)

import netCDF4  # noqa: E402
import numpy  # noqa: E402

label, files, work = sys.argv[1:4]
passed = total = 0


def case(name, check):
    global passed, total
    total += 1
    try:
        problem = check()
    except Exception as error:  # a case's failure, whatever raised it, is reported as such
        problem = f"{type(error).__name__}: {error}"
    if problem:
        print(f"FAIL {name}: {str(problem)[:160]}")
    else:
        print(f"PASS {name}")
        passed += 1


def topo(path):
    with netCDF4.Dataset(path) as dataset:
        return dataset["topo"][:]


want = topo(os.path.join(files, "plain.nc"))
for name in ["deflate", "zstd", "bzip2", "blosc"]:
    path = os.path.join(files, f"{name}.nc")
    case(f"python3-netcdf4 reads {name}", lambda: None if numpy.array_equal(topo(path), want) else "values differ")

# The binding's own flags say which compressions it was built for; the others are not the library's cases.
built_for = {
    "zlib": True,
    "zstd": getattr(netCDF4, "__has_zstandard_support__", False),
    "bzip2": getattr(netCDF4, "__has_bzip2_support__", False),
    "blosc_lz4": getattr(netCDF4, "__has_blosc_support__", False),
}
built = sorted(name for name, has in built_for.items() if has)
print(f"python3-netcdf4 {netCDF4.__version__} on netcdf-c {netCDF4.__netcdf4libversion__}, built for {built}")
data = numpy.linspace(-1000.0, 1000.0, 64 * 128, dtype="f4").reshape(64, 128)
for compression, has in built_for.items():
    if not has:
        continue
    path = os.path.join(work, f"python-{compression}.nc")

    def write_and_read():
        with netCDF4.Dataset(path, "w") as dataset:
            dataset.createDimension("y", 64)
            dataset.createDimension("x", 128)
            variable = dataset.createVariable("v", "f4", ("y", "x"), compression=compression, shuffle=True)
            variable[:] = data
        with netCDF4.Dataset(path) as dataset:
            filters = dataset["v"].filters()
            # filters() names blosc without its compressor.
            if not filters.get(compression.split("_")[0]):
                return f"the variable's filters are {filters}"
            return None if numpy.array_equal(dataset["v"][:], data) else "values differ"

    case(f"python3-netcdf4 writes {compression}", write_and_read)
print(f"{label}: {passed} of {total} succeeded")

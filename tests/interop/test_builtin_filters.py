# SPDX-License-Identifier: BSD-3-Clause
"""The standard filters work with no HDF5_PLUGIN_PATH: libnetcdf built with ncfilters has them
built in, for netCDF-4/HDF5 files and for NCZarr. A plugin on HDF5_PLUGIN_PATH for the same id is
used in preference. Each case runs in a child process, since HDF5 reads its plugin path once."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

NC_SZIP_NN = 32
BLOSC_LZ4, BLOSC_ZSTD, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE = 1, 5, 1, 2

# name -> how the variable's filter is defined (ncapi.Dataset method and arguments after varid)
FILTERS = {
    "deflate": ("def_var_deflate", (0, 1, 5)),
    "shuffle+deflate": ("def_var_deflate", (1, 1, 1)),
    "fletcher32": ("def_var_fletcher32", (1,)),
    "szip": ("def_var_szip", (NC_SZIP_NN, 32)),
    "bzip2": ("def_var_bzip2", (9,)),
    "zstd": ("def_var_zstandard", (3,)),
    "zstd-negative": ("def_var_zstandard", (-5,)),
    "blosc-lz4": ("def_var_blosc", (BLOSC_LZ4, 5, 0, BLOSC_SHUFFLE)),
    "blosc-zstd": ("def_var_blosc", (BLOSC_ZSTD, 3, 0, BLOSC_BITSHUFFLE)),
}
STANDARD_IDS = [1, 2, 3, 4, 307, 32015, 32001]


def data():
    y, x = np.mgrid[0:60, 0:100]
    field = 280 + 20 * np.sin(x / 15.0) * np.cos(y / 11.0)
    noise = np.random.default_rng(7).normal(0, 0.05, field.shape)
    return (field + noise).astype("float32")


def loaded_plugins():
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1].rsplit("/", 1)[-1] for line in maps if "/lib__nc" in line})


def url(path, fmt):
    import ncapi
    return ncapi.zarr_url(path) if fmt == "nczarr" else path


def child_main(fmt, name, path):
    """Writes and reads back one variable with filter `name`; prints what happened as JSON."""
    import ncapi
    values = data()
    method, args = FILTERS[name]
    with ncapi.Dataset(url(path, fmt), "w") as ds:
        avail = {str(i): ncapi.lib.nc_inq_filter_avail(ds.ncid, ctypes_uint(i)) for i in STANDARD_IDS}
        y, x = ds.def_dim("y", values.shape[0]), ds.def_dim("x", values.shape[1])
        varid = ds.def_var("t", "float32", [y, x], chunks=[20, 50])
        getattr(ds, method)(varid, *args)
        ds.enddef()
        ds.put("t", values)
    with ncapi.Dataset(url(path, fmt)) as ds:
        back = ds.get("t")
        filters = ds.filters("t")
    print(json.dumps({"avail": avail, "identical": bool(np.array_equal(back, values)), "filters": filters,
                      "plugins": loaded_plugins()}))


def ctypes_uint(value):
    import ctypes
    return ctypes.c_uint(value)


def run_child(fmt, name, path, plugin_path):
    env = dict(os.environ, PYTHONPATH=HERE)
    env.pop("HDF5_PLUGIN_PATH", None)
    if plugin_path is not None:
        env["HDF5_PLUGIN_PATH"] = plugin_path
    run = subprocess.run([sys.executable, __file__, "--child", fmt, name, path], capture_output=True, text=True,
                         timeout=120, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def build_plugins():
    """The ncfilters build's plugins directory (the harness passes NCFILTERS_BUILD_PLUGINS)."""
    return os.environ["NCFILTERS_BUILD_PLUGINS"]


@pytest.mark.parametrize("fmt", ["netcdf4", "nczarr"])
@pytest.mark.parametrize("name", list(FILTERS))
def test_standard_filter_without_plugin_path(tmp_path, fmt, name):
    result = run_child(fmt, name, str(tmp_path / f"{name}.{fmt}"), None)
    assert result["avail"] == {str(i): 0 for i in STANDARD_IDS}, "nc_inq_filter_avail with no HDF5_PLUGIN_PATH"
    assert result["identical"], "values read back differ"
    assert result["filters"], "no filter recorded on the variable"
    assert result["plugins"] == [], "a plugin library was loaded though none is on the path"


@pytest.mark.parametrize("fmt", ["netcdf4", "nczarr"])
def test_an_empty_plugin_directory_is_like_none(tmp_path, fmt):
    empty = tmp_path / "no-plugins"
    empty.mkdir()
    result = run_child(fmt, "zstd", str(tmp_path / f"zstd.{fmt}"), str(empty))
    assert result["identical"] and result["plugins"] == []


@pytest.mark.parametrize("fmt", ["netcdf4", "nczarr"])
@pytest.mark.parametrize("name,library", [("bzip2", "lib__nch5bzip2.so"), ("blosc-lz4", "lib__nch5blosc.so")])
def test_a_plugin_on_the_path_is_preferred(tmp_path, fmt, name, library):
    result = run_child(fmt, name, str(tmp_path / f"{name}.{fmt}"), build_plugins())
    assert result["identical"]
    assert library in result["plugins"], f"{library} on HDF5_PLUGIN_PATH was not used"


BLOSC_LIBRARIES = ["/usr/lib/x86_64-linux-gnu/libblosc.so.1", "/usr/lib/x86_64-linux-gnu/libblosc.so"]


def hidden_blosc_main(fmt, path):
    """With libblosc unloadable: availability and definition of blosc, and a zstd round trip."""
    import ncapi
    values = data()
    with ncapi.Dataset(url(path, fmt), "w") as ds:
        avail = {str(i): ncapi.lib.nc_inq_filter_avail(ds.ncid, ctypes_uint(i)) for i in (32001, 32015)}
        y, x = ds.def_dim("y", values.shape[0]), ds.def_dim("x", values.shape[1])
        blosc = ds.def_var("b", "float32", [y, x], chunks=[20, 50])
        try:
            ds.def_var_blosc(blosc, BLOSC_LZ4, 5, 0, BLOSC_SHUFFLE)
            defined = 0
        except ncapi.NcError as e:
            defined = e.status
        zstd = ds.def_var("z", "float32", [y, x], chunks=[20, 50])
        ds.def_var_zstandard(zstd, 3)
        ds.enddef()
        ds.put("z", values)
    with ncapi.Dataset(url(path, fmt)) as ds:
        same = bool(np.array_equal(ds.get("z"), values))
    print(json.dumps({"avail": avail, "def_blosc": defined, "zstd_identical": same}))


@pytest.mark.skipif(os.geteuid() != 0, reason="hiding libblosc needs a private mount namespace (root)")
@pytest.mark.parametrize("fmt", ["netcdf4", "nczarr"])
def test_blosc_is_unavailable_when_libblosc_does_not_load(tmp_path, fmt):
    # libblosc hidden in a private mount namespace, as on a machine without it.
    libraries = [lib for lib in BLOSC_LIBRARIES if os.path.exists(lib)]
    assert libraries, "libblosc is not installed where expected"
    hide = " && ".join(f"mount --bind /dev/null {lib}" for lib in libraries)
    env = dict(os.environ, PYTHONPATH=HERE)
    env.pop("HDF5_PLUGIN_PATH", None)
    command = f'{hide} && exec "$0" "$@"'
    run = subprocess.run(["unshare", "--mount", "sh", "-c", command, sys.executable, __file__, "--hidden-blosc", fmt,
                          str(tmp_path / f"hidden.{fmt}")], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    import ncapi
    assert result["avail"] == {"32001": ncapi.NC_ENOFILTER, "32015": 0}, "blosc must not be reported available"
    assert result["def_blosc"] == ncapi.NC_ENOFILTER, "defining blosc must fail before the first chunk"
    assert result["zstd_identical"]
    assert "libblosc" in run.stderr, "the diagnostic names the library that did not load"


def app_class_main(fixture, path):
    """Registers an application's class for 32015, then writes and reads zstd data with netCDF."""
    import ctypes
    import ncapi
    app = ctypes.CDLL(fixture, mode=ctypes.RTLD_GLOBAL)
    assert app.app_register() >= 0
    values = np.arange(1000, dtype="int32")
    with ncapi.Dataset(path, "w") as ds:
        dim = ds.def_dim("x", 1000)
        ds.def_var("v", "int32", [dim], chunks=[500], filters=[(32015, [3])])
        ds.enddef()
        ds.put("v", values)
    with ncapi.Dataset(path) as ds:
        same = bool(np.array_equal(ds.get("v"), values))
    print(json.dumps({"identical": same, "app_calls": app.app_calls(), "plugins": loaded_plugins()}))


def test_a_class_the_application_registered_is_kept(tmp_path):
    source = os.path.join(HERE, "..", "..", "c_tests", "app_filter.c")
    fixture = str(tmp_path / "libapp_filter.so")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hdf5"], capture_output=True, text=True, check=True)
    subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Werror", "-o", fixture, source, *flags.stdout.split()], check=True)
    env = dict(os.environ, PYTHONPATH=HERE)
    env.pop("HDF5_PLUGIN_PATH", None)
    run = subprocess.run([sys.executable, __file__, "--app-class", fixture, str(tmp_path / "app.nc")],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["identical"]
    assert result["app_calls"] >= 4, "netCDF replaced the application's filter class with its own"
    assert result["plugins"] == []


if __name__ == "__main__" and sys.argv[1:2] == ["--app-class"]:
    app_class_main(*sys.argv[2:4])
if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child_main(*sys.argv[2:5])
if __name__ == "__main__" and sys.argv[1:2] == ["--hidden-blosc"]:
    hidden_blosc_main(*sys.argv[2:4])

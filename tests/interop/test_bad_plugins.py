# SPDX-License-Identifier: BSD-3-Clause
"""The NCZarr plugin loader skips bad plugin libraries with a diagnostic and loads the rest.

The bad libraries are built from c_tests/bad_plugin.c (one defect each) into a directory put
after netcdf-c's own plugins on HDF5_PLUGIN_PATH, with a good one sorted after them. Each check runs in a child process, so a
crash shows as a signal rather than killing the test run.
"""
import json
import os
import subprocess
import sys

import pytest

import ncapi

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "c_tests", "bad_plugin.c")

# file name: (VARIANT, filter id, codec id, words the diagnostic must contain)
FIXTURES = {
    "lib__bad01_one_h5pl.so": (1, 41001, "one", "only one of H5PLget_plugin_type"),
    "lib__bad02_wrong_type.so": (2, 41002, "wrongtype", "not H5PL_TYPE_FILTER"),
    "lib__bad03_wrong_version.so": (3, 41003, "wrongversion", "H5Z_class2_t version 2"),
    "lib__bad04_null_info.so": (4, 41004, "nullinfo", "returned NULL"),
    "lib__bad05_bad_sort.so": (5, 41005, "badsort", "sort 2"),
    "lib__bad06_null_codec_id.so": (6, 41006, "nullid", "NULL, empty or non-UTF-8 id"),
    "lib__bad07_duplicate.so": (7, 307, "bz2", "duplicate HDF5 filter 307"),
    "lib__bad08_mismatch.so": (8, 41100, "mismatch", "41100 and codec id 41101 differ"),
    "lib__bad09_hdf5_only.so": (9, 41200, "unused", None),
    "lib__bad10_defaults.so": (10, 41200, "unused", "defaults entry 0: NCZ_codec_t version 9"),
    "lib__bad11_init_crash.so": (11, 41300, "crashy", None),
    "lib__bad12_good.so": (12, 41400, "good", None),
}


@pytest.fixture(scope="module")
def plugin_dirs(tmp_path_factory):
    bad = tmp_path_factory.mktemp("bad_plugins")
    for name, (variant, filter_id, codec_id, _) in FIXTURES.items():
        subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Werror", f"-DVARIANT={variant}", f"-DFILTER_ID={filter_id}",
                        f'-DCODEC_ID="{codec_id}"', "-o", str(bad / name), SOURCE], check=True)
    (bad / "lib__bad_not_elf.so").write_text("this is not a shared library\n")
    os.symlink(str(bad / "missing-target.so"), str(bad / "lib__bad_dangling.so"))
    (bad / "README.txt").write_text("not a plugin name: ignored without a word\n")
    not_a_dir = tmp_path_factory.mktemp("other") / "plugins.so"
    not_a_dir.write_text("a file where a directory should be\n")
    # netcdf-c's plugins first, so the duplicate bzip2 filter is the later one.
    return [os.environ["HDF5_PLUGIN_PATH"], str(bad), str(not_a_dir)]


def probe(dirs, tmp_path):
    env = dict(os.environ, PYTHONPATH=HERE, HDF5_PLUGIN_PATH=":".join(dirs), NCFILTERS_DEBUG="1")
    run = subprocess.run([sys.executable, __file__, "--probe", str(tmp_path / "probe.zarr")], capture_output=True,
                         text=True, timeout=120, env=env)
    assert run.returncode == 0, f"the reader died (exit {run.returncode}):\n{run.stderr}"
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def probe_main(store):
    """Availability of each fixture id and of netcdf-c's bzip2, and a bzip2 round trip."""
    ids = sorted({f[1] for f in FIXTURES.values()} | {41101})
    avail, same = nczarr_round_trip(store, (307, [9]), ids)
    print(json.dumps({"avail": {str(i): status for i, status in avail.items()}, "bzip2_round_trip": same}))


def nczarr_round_trip(store, nc_filter, ids):
    """nc_inq_filter_avail of each id, and whether 100 ints written with `nc_filter` read back."""
    import numpy as np
    with ncapi.Dataset(ncapi.zarr_url(store), "w") as ds:
        avail = {i: ncapi.lib.nc_inq_filter_avail(ds.ncid, i) for i in ids}
        dim = ds.def_dim("x", 100)
        ds.def_var("v", "int32", [dim], chunks=[50], filters=[nc_filter])
        ds.enddef()
        ds.put("v", np.arange(100, dtype="int32"))
    with ncapi.Dataset(ncapi.zarr_url(store)) as ds:
        same = bool((ds.get("v") == np.arange(100)).all())
    return avail, same


def test_bad_libraries_are_skipped_and_the_rest_load(plugin_dirs, tmp_path):
    result, stderr = probe(plugin_dirs, tmp_path)
    avail = {int(k): v for k, v in result["avail"].items()}
    assert result["bzip2_round_trip"], "netcdf-c's bzip2 plugin after the bad ones still works"
    assert avail[307] == 0, "the duplicate did not displace the first bzip2"
    assert avail[41400] == 0, "a good plugin found after the bad ones is used"
    assert avail[41200] == 0, "one bad defaults entry disables nothing else"
    for bad_id in (41001, 41002, 41003, 41004, 41005, 41006, 41100, 41101):
        assert avail[bad_id] == ncapi.NC_ENOFILTER, (bad_id, avail[bad_id])
    # A plugin library is trusted code, as HDF5 treats it: nothing probes it, and an initialiser
    # runs only when its codec is used, so an unused one that would crash costs nothing.
    assert avail[41300] == 0
    assert not [l for l in stderr.splitlines() if "lib__bad11_init_crash.so" in l and "skipped" in l]
    for name, (_, _, _, words) in FIXTURES.items():
        if words:
            lines = [l for l in stderr.splitlines() if name in l and "skipped" in l]
            assert any(words in l for l in lines), f"{name}: no diagnostic with {words!r} in:\n{stderr}"
    assert "lib__bad_not_elf.so skipped: cannot be loaded" in stderr
    assert "lib__bad_dangling.so skipped: cannot be loaded" in stderr
    assert "plugins.so skipped" in stderr, "a plugin path entry that is not a directory is reported"
    assert "README.txt: not a shared library name" in stderr
    assert "41200  defaulted    complete" in stderr, "the pairing table shows the defaulted codec"


def build_fixture(directory, name, variant, filter_id, codec_id):
    subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Werror", f"-DVARIANT={variant}", f"-DFILTER_ID={filter_id}",
                    f'-DCODEC_ID="{codec_id}"', "-o", str(directory / name), SOURCE], check=True)


def run_main(mode, *args, env=None):
    run = subprocess.run([sys.executable, __file__, mode, *args], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=HERE, **(env or {})))
    assert run.returncode == 0, f"the child died (exit {run.returncode}):\n{run.stdout}{run.stderr}"
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def zstd_round_trip_main(store):
    avail, same = nczarr_round_trip(store, (32015, [3]), [32015])
    print(json.dumps({"avail": avail[32015], "round_trip": same}))


def test_a_bad_library_for_a_built_in_id_leaves_the_built_in(tmp_path):
    bad = tmp_path / "plugins"
    bad.mkdir()
    build_fixture(bad, "lib__bad_zstd_sort.so", 5, 32015, "zstd")
    result, stderr = run_main("--zstd", str(tmp_path / "zstd.zarr"), env={"HDF5_PLUGIN_PATH": str(bad)})
    assert result == {"avail": 0, "round_trip": True}, "the built-in zstd still serves 32015"
    assert "lib__bad_zstd_sort.so skipped: NCZ_codec_t sort 2 (expected NCZ_CODEC_HDF5); " \
           "ncfilters' built-in filter serves id 32015" in stderr, stderr


def hdf5_read_main(path, mode):
    """netCDF-4: writes (mode "write") or reads (mode "read") a variable with filter 32015."""
    import numpy as np
    values = np.arange(1000, dtype="int32")
    if mode == "write":
        with ncapi.Dataset(path, "w") as ds:
            dim = ds.def_dim("x", 1000)
            ds.def_var("v", "int32", [dim], chunks=[500], filters=[(32015, [3])])
            ds.enddef()
            ds.put("v", values)
        print(json.dumps({"written": True}))
        return
    with ncapi.Dataset(path) as ds:
        try:
            status = "same" if np.array_equal(ds.get("v"), values) else "different"
        except ncapi.NcError as e:
            status = e.status
    print(json.dumps({"read": status}))


def test_a_c_plugins_minus_one_is_a_failure_for_hdf5(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    build_fixture(plugins, "lib__bad13_minus_one.so", 13, 32015, "zstd")
    env = {"HDF5_PLUGIN_PATH": str(plugins)}
    path = str(tmp_path / "minus_one.nc")
    assert run_main("--hdf5", path, "write", env=env)[0] == {"written": True}
    assert run_main("--hdf5", path, "read", env=env)[0] == {"read": "same"}
    # The stand-in for 32015 forwards to the path plugin, which now fails with (size_t)-1:
    # HDF5 must see a failure, not SIZE_MAX bytes of data.
    result, _ = run_main("--hdf5", path, "read", env=dict(env, BAD_PLUGIN_FAIL="1"))
    assert result["read"] not in ("same", "different", 0), result
    assert isinstance(result["read"], int) and result["read"] < 0


def lifecycle_main(store, plugin_dir):
    """A codec used, the plugin path set again (a new discovery finds the same library), the codec
    used again, then nc_finalize."""
    nczarr_round_trip(store + "-before", (41500, []), [])
    path = plugin_dir.encode()
    ncapi.check(ncapi.lib.ncaux_plugin_path_stringset(len(path), path), "ncaux_plugin_path_stringset")
    _, same = nczarr_round_trip(store + "-after", (41500, []), [])
    ncapi.check(ncapi.lib.nc_finalize(), "nc_finalize")
    print(json.dumps({"round_trip": same}))


def test_a_codec_is_initialised_and_finalised_once_across_discoveries(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    build_fixture(plugins, "lib__bad14_counting.so", 14, 41500, "counting")
    count = tmp_path / "count.txt"
    env = {"HDF5_PLUGIN_PATH": str(plugins), "BAD_PLUGIN_COUNT": str(count)}
    assert run_main("--lifecycle", str(tmp_path / "s.zarr"), str(plugins), env=env)[0] == {"round_trip": True}
    assert count.read_text().splitlines() == ["initialize", "finalize"], "one library, one codec: once each"


if __name__ == "__main__" and sys.argv[1:2] == ["--lifecycle"]:
    lifecycle_main(*sys.argv[2:4])
if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    probe_main(sys.argv[2])
if __name__ == "__main__" and sys.argv[1:2] == ["--zstd"]:
    zstd_round_trip_main(sys.argv[2])
if __name__ == "__main__" and sys.argv[1:2] == ["--hdf5"]:
    hdf5_read_main(*sys.argv[2:4])

# SPDX-License-Identifier: BSD-3-Clause
"""The installed ncfilters build of one netcdf-c release (`cargo xtask install`): files, truthful
metadata, a program built against the installed headers, the installed plugins, the `ncfilters`
command, and the distribution's programs running on the installed libnetcdf with no
HDF5_PLUGIN_PATH: for 4.9.0 Debian 12's own netcdf-bin (SONAME libnetcdf.so.19); for the releases
Debian 12 cannot install (4.9.2, 4.9.3, 4.10) the stock build's programs, which the build linked
against its stock libnetcdf.

The install tree was configured with libzstd (and c-blosc) hidden from netcdf-c's configure, so
it wrote NC_HAS_ZSTD 0 (and NC_HAS_BLOSC 0): the installed metadata must say 1 all the same.
"""
import filecmp
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

PREFIX = Path(os.environ["NCFILTERS_PREFIX"])
PLUGIN_DIR = Path(os.environ["NCFILTERS_PLUGIN_DIR"])
DESTDIR = Path(os.environ["NCFILTERS_DESTDIR"])
BUILD = Path(os.environ["NCFILTERS_INSTALL_BUILD"])
REPO = Path(os.environ["NCFILTERS_REPO"])
UNPRIVILEGED_USER = os.environ.get("NCFILTERS_UNPRIVILEGED_USER")
VERSION = os.environ["NCFILTERS_NETCDF_VERSION"]
# What differs between releases, from the harness's release table (xtask/src/release.rs).
SONAME = os.environ["NCFILTERS_SONAME"]
FILTER_META_MACROS = os.environ["NCFILTERS_FILTER_META_MACROS"].split()
NC_CONFIG_PLUGINDIR = os.environ["NCFILTERS_NC_CONFIG_PLUGINDIR"] == "1"
# 4.9.3 on have their own plugin-path API and search the build's NETCDF_PLUGIN_SEARCH_PATH.
OWN_PLUGIN_PATH_API = os.environ["NCFILTERS_OWN_PLUGIN_PATH_API"] == "1"
LIB = PREFIX / "lib"
LIBNETCDF = LIB / SONAME
NCFILTERS = PREFIX / "bin" / "ncfilters"
# The programs a distribution ships for this release, and the libnetcdf they were linked against.
DISTRIBUTION_BIN = Path(os.environ["NCFILTERS_DISTRIBUTION_BIN"])
DISTRIBUTION_LIBNETCDF = Path(os.environ["NCFILTERS_DISTRIBUTION_LIBNETCDF"])

RUST_PLUGINS = [
    "lib__nch5deflate.so", "lib__nch5shuffle.so", "lib__nch5fletcher32.so", "lib__nch5szip.so",
    "lib__nch5bzip2.so", "lib__nch5zstd.so", "lib__nch5blosc.so",
    "lib__nczhdf5filters.so", "lib__nczstdfilters.so",
]

# The filters Debian's programs write and read through the drop-in libnetcdf (nccopy -F specs).
DROP_IN_FILTERS = {
    "zstd": "32015,3",
    "bzip2": "307,9",
    "blosc": "32001,0,0,0,0,5,1,1",
    "szip": "4,32,32",
}

CDL = """netcdf source {
dimensions:
    y = 64 ;
    x = 128 ;
variables:
    float v(y, x) ;
    int counts(y, x) ;
data:
 v = %s ;
 counts = %s ;
}
"""


def clean_env(**extra):
    """The environment of a user who set nothing: no plugin path, no library path."""
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "LD_LIBRARY_PATH")}
    env.update(extra)
    return env


def run(args, env=None, check=True, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            env=env if env is not None else clean_env(), timeout=120, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def installed_files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink())


# --- the installed tree -------------------------------------------------------------------------

def test_the_prefix_holds_the_library_headers_programs_and_plugins():
    for relative in [f"lib/{SONAME}", "lib/libnetcdf.so", "include/netcdf.h", "include/netcdf_filter.h",
                     "include/netcdf_filter_build.h", "include/netcdf_meta.h", "include/ncfilters.h",
                     "bin/nc-config", "bin/ncdump", "bin/nccopy", "bin/ncfilters", "lib/pkgconfig/netcdf.pc",
                     "lib/libnetcdf.settings", "share/man/man1/ncfilters.1"]:
        assert (PREFIX / relative).exists(), relative
    for plugin in RUST_PLUGINS:
        assert (PLUGIN_DIR / plugin).is_file(), f"{plugin} not installed in {PLUGIN_DIR}"


def test_the_prefix_belongs_to_the_user_who_installed():
    if UNPRIVILEGED_USER is None:
        pytest.skip("the harness ran as a user who is not root: the install above was already unprivileged")
    import pwd
    uid = pwd.getpwnam(UNPRIVILEGED_USER).pw_uid
    assert all(p.lstat().st_uid == uid for p in PREFIX.rglob("*")), "files installed by someone else"


def test_destdir_stages_the_same_files():
    staged = DESTDIR / PREFIX.relative_to("/")
    assert installed_files(staged) == installed_files(PREFIX)


def test_the_installed_headers_are_ncfilters_generated_ones():
    for header in ["netcdf_filter.h", "netcdf_filter_build.h", "ncfilters.h"]:
        assert filecmp.cmp(PREFIX / "include" / header, REPO / "include" / header, shallow=False), header


def test_the_installed_plugins_are_ncfilters_rust_ones():
    for plugin in RUST_PLUGINS:
        symbols = run(["nm", "-D", "--defined-only", PLUGIN_DIR / plugin]).stdout
        assert "ncfilters_set_decode_limit" in symbols or "NCZ_codec_info_defaults" in symbols, plugin
        assert b"rust_panic" in (PLUGIN_DIR / plugin).read_bytes(), f"{plugin} is not Rust"


def test_the_installed_library_contains_ncfilters():
    symbols = run(["nm", "-D", "--defined-only", LIBNETCDF]).stdout
    for symbol in ["nc_def_var_filter", "NCZ_applyfilterchain", "ncfilters_report"]:
        assert f" {symbol}\n" in symbols, symbol


# --- metadata -----------------------------------------------------------------------------------

def meta_value(text, name):
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "#define" and parts[1] == name:
            return parts[2]
    raise AssertionError(f"{name} not in netcdf_meta.h")


# The filter macros of the release's netcdf_meta.h, and what netcdf-c's configure wrote here.
META_FOUND_HERE = {name: {"NC_HAS_BZ2": "1"}.get(name, "0") for name in FILTER_META_MACROS}


def test_netcdf_c_configure_found_no_zstd_here():
    """The premise: netcdf-c's own configure result says no zstd (nor blosc) in this build."""
    built = (BUILD / "include/netcdf_meta.h").read_text()
    assert {name: meta_value(built, name) for name in META_FOUND_HERE} == META_FOUND_HERE


@pytest.mark.parametrize("name", META_FOUND_HERE)
def test_the_installed_netcdf_meta_h_says_the_filter_is_there(name):
    assert meta_value((PREFIX / "include/netcdf_meta.h").read_text(), name) == "1"


def test_nc_config_says_zstd():
    assert run([PREFIX / "bin/nc-config", "--has-zstd"]).stdout.strip() == "yes"
    everything = run([PREFIX / "bin/nc-config", "--all"]).stdout
    assert [line.split() for line in everything.splitlines() if "--has-zstd" in line] == [["--has-zstd", "->", "yes"]]
    assert run([PREFIX / "bin/nc-config", "--prefix"]).stdout.strip() == str(PREFIX)
    assert run([PREFIX / "bin/nc-config", "--version"]).stdout.strip() == f"netCDF {VERSION}"


def test_nc_config_names_the_installed_plugin_directory():
    plugindir = run([PREFIX / "bin/nc-config", "--plugindir"], check=False)
    if not NC_CONFIG_PLUGINDIR:
        assert plugindir.returncode != 0 or "plugindir" not in plugindir.stdout, "4.9.0's nc-config has no --plugindir"
    else:
        assert plugindir.stdout.strip() == str(PLUGIN_DIR)
        assert (Path(plugindir.stdout.strip()) / "lib__nch5zstd.so").is_file()


def test_libnetcdf_settings_says_zstd():
    settings = (PREFIX / "lib/libnetcdf.settings").read_text()
    assert any(line.split(":")[0] == "ZSTD Support" and line.split()[-1] == "yes" for line in settings.splitlines())


# The standard filters ncfilters builds in whatever configure found, in netcdf-c's words (szip
# too where HDF5 has it).
BUILT_IN_STD_FILTERS = {"deflate", "bz2", "zstd", "blosc"}


def std_filters_listed(settings):
    return [line.split(":", 1)[1].split() for line in settings.splitlines() if line.startswith("Standard Filters:")]


def test_configure_left_zstd_and_blosc_out_of_its_standard_filters_here():
    """The premise: netcdf-c's configure, which found neither, did not list them."""
    [found] = std_filters_listed((BUILD / "libnetcdf.settings").read_text())
    assert "zstd" not in found and "blosc" not in found, found


def test_libnetcdf_settings_lists_every_built_in_standard_filter():
    [listed] = std_filters_listed((PREFIX / "lib/libnetcdf.settings").read_text())
    assert BUILT_IN_STD_FILTERS <= set(listed) and len(listed) == len(set(listed)), listed


def test_nc_config_lists_every_built_in_standard_filter():
    """nc-config --has-stdfilters, where the release's nc-config has it (4.9.0's CMake one does not)."""
    if "--has-stdfilters" not in (BUILD / "nc-config").read_text():
        assert VERSION == "4.9.0"
        assert "--has-stdfilters" not in (PREFIX / "bin/nc-config").read_text()
        return
    listed = run([PREFIX / "bin/nc-config", "--has-stdfilters"]).stdout.split()
    assert BUILT_IN_STD_FILTERS <= set(listed) and len(listed) == len(set(listed)), listed
    everything = run([PREFIX / "bin/nc-config", "--all"]).stdout
    [line] = [line for line in everything.splitlines() if "--has-stdfilters" in line]
    assert line.split("->")[1].split() == listed


def test_the_install_names_the_ncfilters_build_it_contains():
    """libnetcdf.settings, nc-config --all and the library's report name the same ncfilters build."""
    version = re.search(r'^version = "([^"]+)"', (REPO / "Cargo.toml").read_text(), re.M).group(1)
    build = json.loads(run([PREFIX / "bin/ncfilters", "--json", "list"]).stdout)["ncfilters_build"]
    assert re.fullmatch(re.escape(version) + r" \((git [0-9a-f]{12}(, modified)?|release)\)", build), build
    # The same build the clone is, also where the install build was staged in a copy without .git.
    source = run(["cmake", f"-DNCFILTERS_ROOT={REPO}", "-P", REPO / "cmake/ncfilters_provenance.cmake"]).stdout
    assert build == f"{version} ({source.strip()})"
    everything = run([PREFIX / "bin/nc-config", "--all"]).stdout
    assert [line.split("->")[1].strip() for line in everything.splitlines() if "--ncfilters" in line] == [build]
    settings = (PREFIX / "lib/libnetcdf.settings").read_text()
    assert [line.split(":", 1)[1].strip() for line in settings.splitlines() if line.startswith("ncfilters:")] == [build]


def test_pkg_config_and_cmake_find_the_install(tmp_path):
    env = clean_env(PKG_CONFIG_PATH=str(LIB / "pkgconfig"))
    assert run(["pkg-config", "--modversion", "netcdf"], env=env).stdout.strip() == VERSION
    assert f"-L{LIB}" in run(["pkg-config", "--libs", "netcdf"], env=env).stdout
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.12)\nproject(probe C)\nfind_package(netCDF REQUIRED CONFIG)\n"
        "message(STATUS \"found netCDF ${netCDF_VERSION} in ${netCDF_INSTALL_PREFIX}\")\n")
    configured = run(["cmake", "-S", tmp_path, "-B", tmp_path / "build", f"-DCMAKE_PREFIX_PATH={PREFIX}"])
    assert f"found netCDF {VERSION} in {PREFIX}" in configured.stdout


PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netcdf.h>
#include <netcdf_meta.h>
#include <netcdf_filter.h>
#include <ncfilters.h>
#if !NC_HAS_ZSTD
#error "netcdf_meta.h says this libnetcdf has no zstd"
#endif
#define CHECK(e) do { int s_ = (e); if (s_) { printf("%s: %s\n", #e, nc_strerror(s_)); return 1; } } while (0)
int main(int argc, char **argv) {
    int nc, dim, var, level = 0, has = 0;
    float data[1000], back[1000];
    for (int i = 0; i < 1000; i++) data[i] = (float)(i % 17);
    CHECK(nc_create(argv[1], NC_NETCDF4 | NC_CLOBBER, &nc));
    CHECK(nc_def_dim(nc, "x", 1000, &dim));
    CHECK(nc_def_var(nc, "v", NC_FLOAT, 1, &dim, &var));
    CHECK(nc_def_var_zstandard(nc, var, 5));
    CHECK(nc_put_var_float(nc, var, data));
    CHECK(nc_close(nc));
    CHECK(nc_open(argv[1], NC_NOWRITE, &nc));
    CHECK(nc_inq_var_zstandard(nc, 0, &has, &level));
    CHECK(nc_get_var_float(nc, 0, back));
    CHECK(nc_close(nc));
    if (!has || level != 5 || memcmp(data, back, sizeof data)) { printf("zstd round trip differs\n"); return 1; }
    char *report = NULL;
    CHECK(ncfilters_report(&report));
    if (!report || !strstr(report, "\"filters\"")) { printf("no report\n"); return 1; }
    free(report);
    printf("ok\n");
    return 0;
}
"""


def test_a_program_built_with_nc_config_writes_zstd(tmp_path):
    source = tmp_path / "probe.c"
    source.write_text(PROGRAM)
    cflags = run([PREFIX / "bin/nc-config", "--cflags"]).stdout.split()
    libs = run([PREFIX / "bin/nc-config", "--libs"]).stdout.split()
    run(["cc", "-std=c99", *cflags, "-o", tmp_path / "probe", source, *libs, f"-Wl,-rpath,{LIB}"])
    assert run([tmp_path / "probe", tmp_path / "z.nc"]).stdout.strip() == "ok"


# --- the ncfilters command ----------------------------------------------------------------------

def ncfilters(*args, env=None, check=True):
    return run([NCFILTERS, *args], env=env, check=check)


def filter_row(listing, filter_id):
    rows = [row for row in listing["filters"] if row["id"] == filter_id]
    assert len(rows) == 1, f"id {filter_id}: {rows}"
    return rows[0]


def test_the_installed_command_runs_with_no_library_path():
    resolved = [line.split("=>")[1].split()[0] for line in run(["ldd", NCFILTERS]).stdout.splitlines()
                if line.strip().startswith("libnetcdf.so")]
    assert [os.path.realpath(path) for path in resolved] == [os.path.realpath(LIBNETCDF)]
    assert "list" in ncfilters("--help").stdout


def test_the_installed_man_page_is_the_committed_one_of_the_command_s_version():
    page = PREFIX / "share/man/man1/ncfilters.1"
    assert filecmp.cmp(page, REPO / "tools/ncfilters-cli/ncfilters.1", shallow=False)
    version = ncfilters("--version").stdout.split()[1]
    assert f'.TH NCFILTERS 1 "" "ncfilters {version}"\n' in page.read_text()


def test_the_installed_command_as_the_unprivileged_user():
    if UNPRIVILEGED_USER is None:
        pytest.skip("the harness ran as a user who is not root: every command here already is")
    result = run(["setpriv", f"--reuid={UNPRIVILEGED_USER}", "--regid=nogroup", "--clear-groups", "--",
                  NCFILTERS, "list"], env=clean_env(HOME="/nonexistent"))
    assert "32015" in result.stdout


def test_list_shows_the_built_in_filters_with_no_plugin_directory(tmp_path):
    # 4.9.3 on search the installed plugin directory when HDF5_PLUGIN_PATH is unset (below): an empty one instead.
    env = clean_env(HDF5_PLUGIN_PATH=str(tmp_path)) if OWN_PLUGIN_PATH_API else None
    listing = json.loads(ncfilters("--json", "list", env=env).stdout)
    for filter_id in (307, 32015):
        row = filter_row(listing, filter_id)
        assert row["hdf5"]["source"] == "built-in" and row["hdf5"]["usable"], row
        assert row["nczarr"]["usable"], row
    assert filter_row(listing, 1)["hdf5"]["source"] == "hdf5"


def test_the_default_plugin_path_is_the_releases():
    """With HDF5_PLUGIN_PATH unset, 4.9.0 and 4.9.2 search HDF5's default; 4.9.3 on the build's
    NETCDF_PLUGIN_SEARCH_PATH, the installed plugin directory first, whose plugins then provide the filters."""
    report = json.loads(ncfilters("--json", "path").stdout)["plugin_path"]
    assert report["value"] is None and {entry["origin"] for entry in report["entries"]} == {"default"}
    dirs = [entry["dir"] for entry in report["entries"]]
    if not OWN_PLUGIN_PATH_API:
        assert str(PLUGIN_DIR) not in dirs, dirs
    else:
        assert dirs == [str(PLUGIN_DIR), "/usr/local/hdf5/lib/plugin"], dirs
        row = filter_row(json.loads(ncfilters("--json", "list").stdout), 32015)
        assert row["hdf5"]["source"] == "plugin" and row["hdf5"]["path"] == str(PLUGIN_DIR / "lib__nch5zstd.so"), row


def test_list_shows_the_installed_plugins_when_they_are_on_the_path():
    listing = json.loads(ncfilters("--json", "list", env=clean_env(HDF5_PLUGIN_PATH=str(PLUGIN_DIR))).stdout)
    row = filter_row(listing, 32015)
    assert row["hdf5"]["source"] == "plugin" and row["hdf5"]["path"] == str(PLUGIN_DIR / "lib__nch5zstd.so"), row


def test_explain_names_the_searched_directories_and_what_to_set():
    text = ncfilters("explain", "32004", env=clean_env(HDF5_PLUGIN_PATH=str(PLUGIN_DIR)), check=False)
    assert text.returncode != 0
    assert str(PLUGIN_DIR) in text.stdout and "HDF5_PLUGIN_PATH" in text.stdout, text.stdout


def test_a_broken_library_on_the_path_is_named_with_its_reason(tmp_path):
    """A directory with a truncated blosc plugin and a good bzip2 one: the good one is used, the broken
    one skipped and named (with why) by `explain`, and blosc falls back to the filter built in."""
    (tmp_path / "lib__nch5bzip2.so").write_bytes((PLUGIN_DIR / "lib__nch5bzip2.so").read_bytes())
    (tmp_path / "lib__nch5blosc.so").write_bytes((PLUGIN_DIR / "lib__nch5blosc.so").read_bytes()[:100])
    env = clean_env(HDF5_PLUGIN_PATH=str(tmp_path))
    listing = json.loads(ncfilters("--json", "list", env=env).stdout)
    assert filter_row(listing, 32001)["hdf5"]["source"] == "built-in"
    assert filter_row(listing, 307)["hdf5"]["path"] == str(tmp_path / "lib__nch5bzip2.so")
    explained = ncfilters("explain", "32001", env=env)
    assert "  wins: built into libnetcdf" in explained.stdout, explained.stdout
    assert "Skipped libraries whose filters could not be read" in explained.stdout, explained.stdout
    assert f"  {tmp_path / 'lib__nch5blosc.so'}: skipped: cannot be loaded" in explained.stdout, explained.stdout


def test_spec_and_codec_convert_both_ways():
    spec = json.loads(ncfilters("--json", "spec", "zstd,3|307,9").stdout)
    assert [(f["id"], f["params"]) for f in spec["filters"]] == [(32015, [3]), (307, [9])]
    codec = json.loads(ncfilters("--json", "codec", '{"id": "zstd", "level": 3}').stdout)
    assert (codec["id"], codec["params"]) == (32015, [3])
    bad = ncfilters("spec", "zstd,notanumber", check=False)
    assert bad.returncode not in (0, 2) and "notanumber" in bad.stderr, bad


# --- golden outputs of the command ------------------------------------------------------------
# What `ncfilters list/path/explain/spec/codec` print, text and JSON, in the three set-ups above,
# compared with tests/install/golden/<release>/<set-up>.txt: any change of what users read shows
# up as a diff. NCFILTERS_UPDATE_GOLDEN=1 rewrites the files instead (then review the diff).

GOLDEN_DIR = REPO / "tests" / "install" / "golden" / VERSION
GOLDEN_COMMANDS = [
    ["list"], ["--json", "list"], ["path"], ["--json", "path"],
    ["explain", "32015"], ["explain", "32001"], ["explain", "32004"], ["--json", "explain", "307"],
    ["spec", "zstd,3|307,9"], ["--json", "spec", "zstd,3|307,9"], ["spec", "zstd,notanumber"],
    ["codec", '{"id": "zstd", "level": 3}'], ["--json", "codec", '{"id": "bz2", "level": 9}'],
    ["codec", '{"id": "nosuchcodec"}'],
]


def golden_setup(name, tmp_path):
    """The environment of set-up `name` and the paths its output names, with their placeholders."""
    if name == "default":
        return clean_env(), {}
    if name == "installed-plugins":
        return clean_env(HDF5_PLUGIN_PATH=str(PLUGIN_DIR)), {}
    broken = tmp_path / "plugins"
    broken.mkdir()
    (broken / "lib__nch5bzip2.so").write_bytes((PLUGIN_DIR / "lib__nch5bzip2.so").read_bytes())
    (broken / "lib__nch5blosc.so").write_bytes((PLUGIN_DIR / "lib__nch5blosc.so").read_bytes()[:100])
    return clean_env(HDF5_PLUGIN_PATH=str(broken)), {str(broken): "<broken-plugin-dir>"}


def golden_text(env, placeholders):
    parts = []
    for args in GOLDEN_COMMANDS:
        result = ncfilters(*args, env=env, check=False)
        parts.append(f"$ ncfilters {' '.join(args)}\nexit status {result.returncode}\n"
                     f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
    text = "\n".join(parts)
    # Longest first: the plugin directory lies inside the prefix.
    for path, placeholder in sorted({**placeholders, str(PLUGIN_DIR): "<plugin-dir>", str(PREFIX): "<prefix>"}.items(),
                                    key=lambda item: -len(item[0])):
        text = text.replace(path, placeholder)
    # The build's version and source ("0.2.0 (git <commit>)") change with every commit.
    text = re.sub(r'"(ncfilters_version|ncfilters_build)": "[^"]*"', r'"\1": "<\1>"', text)
    # Text tables pad their columns to the longest path, whose length depends on where the clone and
    # pytest's temporary directory are: runs of spaces after a line's indentation compare as two.
    return "".join(re.sub(r"(?<=\S) {2,}", "  ", line) for line in text.splitlines(True))


@pytest.mark.parametrize("setup", ["default", "installed-plugins", "broken-library"])
def test_the_command_prints_what_it_printed_before(setup, tmp_path):
    env, placeholders = golden_setup(setup, tmp_path)
    text = golden_text(env, placeholders)
    golden = GOLDEN_DIR / f"{setup}.txt"
    if os.environ.get("NCFILTERS_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"{golden} missing: run the install test with NCFILTERS_UPDATE_GOLDEN=1"
    expected = golden.read_text()
    if text != expected:
        import difflib
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            str(golden), "now"))
        pytest.fail(f"ncfilters' output changed in set-up {setup}:\n{diff}")


# --- the distribution's netcdf-bin on the installed libnetcdf ------------------------------------

def drop_in_env():
    return clean_env(LD_LIBRARY_PATH=str(LIB))


def debian_tool(tool, *args, env=None, check=True):
    return run([DISTRIBUTION_BIN / tool, *args], env=env or drop_in_env(), check=check)


def loaded_libnetcdf(tool, *args):
    """The libnetcdf the dynamic loader initialised for the distribution's `tool`."""
    traced = run([DISTRIBUTION_BIN / tool, *args], env=dict(drop_in_env(), LD_DEBUG="libs"), check=False)
    return [line.split("calling init:")[1].strip() for line in traced.stderr.splitlines()
            if "calling init:" in line and "libnetcdf.so" in line]


@pytest.fixture(scope="module")
def source_file(tmp_path_factory):
    directory = tmp_path_factory.mktemp("drop-in")
    values = ", ".join(str((i * 7919 % 1000) / 8.0) for i in range(64 * 128))
    counts = ", ".join(str(i % 251) for i in range(64 * 128))
    cdl = directory / "source.cdl"
    cdl.write_text(CDL % (values, counts))
    source = directory / "source.nc"
    debian_tool("ncgen", "-4", "-o", source, cdl)
    return source


def data_of(path):
    dump = debian_tool("ncdump", path).stdout
    return dump[dump.index("data:"):]


def test_debian_programs_load_the_installed_libnetcdf(source_file):
    assert loaded_libnetcdf("ncdump", "-h", source_file) == [str(LIBNETCDF)]
    assert loaded_libnetcdf("nccopy", source_file, source_file.with_name("copy.nc")) == [str(LIBNETCDF)]
    assert loaded_libnetcdf("ncgen", "-version") == [str(LIBNETCDF)]


@pytest.mark.parametrize("name", DROP_IN_FILTERS)
def test_debian_nccopy_writes_and_ncdump_reads_with_no_plugin_path(source_file, name):
    out = source_file.with_name(f"{name}.nc")
    debian_tool("nccopy", "-F", f"*,{DROP_IN_FILTERS[name]}", source_file, out)
    header = debian_tool("ncdump", "-hs", out).stdout
    filter_id = DROP_IN_FILTERS[name].split(",")[0]
    assert f'v:_Filter = "{filter_id}' in header, header
    assert data_of(out) == data_of(source_file)


def test_debian_nccopy_writes_nczarr_with_the_built_in_codecs(source_file):
    target = source_file.with_name("zstd.zarr")
    url = f"file://{target}#mode=nczarr,file"
    debian_tool("nccopy", "-F", "*,32015,3", source_file, url)
    assert '"id": "zstd"' in (target / "v" / ".zarray").read_text().replace('"id":"zstd"', '"id": "zstd"')
    assert data_of(url) == data_of(source_file)


def test_debian_libnetcdf_alone_lacks_the_filters(source_file):
    """The control: without the installed libnetcdf first, the distribution's own cannot write zstd here."""
    stock = debian_tool("nccopy", "-F", "*,32015,3", source_file, source_file.with_name("stock.nc"),
                        env=clean_env(), check=False)
    assert stock.returncode != 0, "the distribution's libnetcdf wrote zstd: this machine has an HDF5 zstd plugin installed"
    assert DISTRIBUTION_LIBNETCDF.name == SONAME and DISTRIBUTION_LIBNETCDF.exists()
    traced = run([DISTRIBUTION_BIN / "ncgen", "-version"], env=dict(clean_env(), LD_DEBUG="libs"), check=False)
    loaded = [line.split("calling init:")[1].strip() for line in traced.stderr.splitlines()
              if "calling init:" in line and "libnetcdf.so" in line]
    assert [os.path.realpath(path) for path in loaded] == [os.path.realpath(DISTRIBUTION_LIBNETCDF)]

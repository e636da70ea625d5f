# SPDX-License-Identifier: BSD-3-Clause
"""Damaged chunks: what ncdump and nccopy of each build make of them.

Each build (stock netcdf-c with its C plugins, and ncfilters) writes a float variable with each
standard filter, to netCDF-4 and to NCZarr, with its own nccopy -F. Chunk 0 is then damaged in
each way below (netCDF-4 through h5py's direct chunk write, NCZarr by rewriting the chunk's file)
and the file is read with ncdump and copied with nccopy (the copy then dumped), each under a
timeout and with its peak memory measured. Every read falls in one of: crash, hang, clean error,
right values, wrong values returned as success.

ncfilters must never crash, hang or use more than MEMORY_BOUND. Both builds' tallies go to the
file NCFILTERS_DAMAGE_REPORT names (the harness prints it). Stock's are reported, not judged.

With NCFILTERS_DAMAGE_MEMCHECK set to a directory (the `valgrind` step), only the ncfilters build
runs, and each read of a damaged file (ncdump, nccopy) runs under valgrind's memcheck, one log per
process there, which the harness judges. A log's name says whose filter decoded the chunk:
vg.hdf5.* where HDF5's own filter did (the filters HDF5 builds in, in a netCDF-4 file), vg.ncfilters.*
otherwise. valgrind's own memory would be measured, so the bound is
judged by the plain run only.
"""
import concurrent.futures
import os
import random
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import ncapi
from test_hdf5_interop import h5py_side

# name: nccopy -F parameters after the variable's name
FILTERS = {
    "deflate": "1,5",
    "shuffle+deflate": "2|1,5",
    "fletcher32": "3",
    "szip": "4,32,32",
    "bzip2": "307,9",
    "zstd": "32015,3",
    "blosc": "32001,0,0,0,0,5,1,1",
}
FORMATS = ("netcdf4", "nczarr")
# In netCDF-4 files these are HDF5's own filters, not ncfilters'.
HDF5_OWN = ("deflate", "shuffle+deflate", "fletcher32", "szip")
OUTCOMES = ("crash", "hang", "clean error", "right values", "wrong values")
MEMCHECK_LOGS = os.environ.get("NCFILTERS_DAMAGE_MEMCHECK")
# memcheck runs a read some 20 to 50 times slower.
TIMEOUT = 120 if MEMCHECK_LOGS else 5
MEMORY_BOUND = None if MEMCHECK_LOGS else 256 << 20
CHUNK = 1000
VALUES = (np.sin(np.arange(4 * CHUNK) / 50.0) * 100).astype("float32")


def forged_size(chunk, name):
    """The chunk with the uncompressed size its format declares made huge, or None without one."""
    data = bytearray(chunk)
    if name == "zstd" and len(data) > 5 and data[:4] == b"\x28\xb5\x2f\xfd":
        descriptor = data[4]
        single_segment = descriptor >> 5 & 1
        field = {0: single_segment, 1: 2, 2: 4, 3: 8}[descriptor >> 6]
        start = 5 + (0 if single_segment else 1) + {0: 0, 1: 1, 2: 2, 3: 4}[descriptor & 3]
        if field == 0 or start + field > len(data):
            return None
        data[start:start + field] = b"\xff" * field
    elif name == "blosc" and len(data) >= 16:
        data[4:8] = (0xFFFFFFF0).to_bytes(4, "little")
    elif name == "szip" and len(data) >= 4:  # H5Zszip's 4-byte size before the stream
        data[0:4] = (0xFFFFFFF0).to_bytes(4, "little")
    else:
        return None
    return bytes(data)


def damages(chunk, name):
    """Each way chunk 0 is damaged: {kind: bytes}."""
    noise = random.Random(len(chunk)).randbytes
    middle = len(chunk) // 2
    flipped = bytearray(chunk)
    for i in range(middle, min(middle + 8, len(chunk))):
        flipped[i] ^= 0xFF
    kinds = {
        "bytes flipped": bytes(flipped),
        "header zeroed": bytes(min(16, len(chunk))) + chunk[16:],
        "truncated to half": chunk[:middle],
        "truncated to 4 bytes": chunk[:4],
        "empty": b"",
        "garbage": noise(len(chunk)),
        "extended": chunk + noise(100),
    }
    forged = forged_size(chunk, name)
    if forged is not None:
        kinds["forged size"] = forged
    return kinds


class Build:
    def __init__(self, name, ncdump, lib_dir, plugins):
        self.name = name
        self.ncdump = ncdump
        self.nccopy = os.path.join(os.path.dirname(ncdump), "nccopy")
        self.env = dict(os.environ, LD_LIBRARY_PATH=lib_dir, HDF5_PLUGIN_PATH=plugins)

    def run(self, args, memcheck_log=None):
        """(outcome so far, stdout, peak RSS in bytes): the process under TIMEOUT, in its own
        process group (killed whole on a hang), reaped here for its resource usage; under
        memcheck, logging to MEMCHECK_LOGS/vg.<memcheck_log>.<pid>.log, when both are set."""
        if memcheck_log and MEMCHECK_LOGS:
            args = ["valgrind", "--leak-check=full", "--num-callers=30",
                    f"--log-file={os.path.join(MEMCHECK_LOGS, f'vg.{memcheck_log}.%p.log')}"] + args
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env,
                                   start_new_session=True)
        hung = threading.Event()

        def kill():
            hung.set()
            os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(TIMEOUT, kill)
        timer.start()
        out = process.stdout.read()
        process.stdout.close()
        _, status, usage = os.wait4(process.pid, 0)
        timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        peak = usage.ru_maxrss * 1024
        if hung.is_set():
            return "hang", b"", peak
        if process.returncode < 0:
            return "crash", out, peak
        return ("ok" if process.returncode == 0 else "clean error"), out, peak


def builds():
    ncfilters = Build("ncfilters", os.environ["NCDUMP"], os.path.dirname(os.environ["NETCDF_LIB"]),
                      os.environ["HDF5_PLUGIN_PATH"])
    if MEMCHECK_LOGS:
        return [ncfilters]
    stock_lib = os.environ["NCFILTERS_STOCK_LIB"]
    return [
        Build("stock", os.path.join(os.environ["NCFILTERS_STOCK_BUILD"], "ncdump", "ncdump"), os.path.dirname(stock_lib),
              os.environ["NCFILTERS_STOCK_PLUGINS"]),
        ncfilters,
    ]


def url(path, fmt):
    return ncapi.zarr_url(path) if fmt == "nczarr" else path


def data_section(dump):
    return dump.split(b"data:", 1)[-1]


def judged(outcome, dump, expected):
    """A run's outcome, an "ok" one judged by the values its ncdump output holds."""
    if outcome != "ok":
        return outcome
    return "right values" if data_section(dump) == expected else "wrong values"


def chunk_zero(path, fmt):
    if fmt == "nczarr":
        with open(os.path.join(path, "v", "0"), "rb") as f:
            return f.read()
    h5py_side("chunk-read", path, path + ".chunk0")
    with open(path + ".chunk0", "rb") as f:
        return f.read()


def replace_chunks_zero(replacements, fmt):
    """{damaged copy: bytes}: each copy's chunk 0 replaced; the copies whose chunk HDF5 refused."""
    if fmt == "nczarr":
        for path, data in replacements.items():
            with open(os.path.join(path, "v", "0"), "wb") as f:
                f.write(data)
        return []
    args = []
    for path, data in replacements.items():
        with open(path + ".chunk0", "wb") as f:
            f.write(data)
        args += [path, path + ".chunk0"]
    return h5py_side("chunk-write", *args)["refused"]


def copy_tree(source, destination):
    subprocess.run(["cp", "-a", source, destination], check=True)


def read_all_ways(build, path, name, fmt, expected, work):
    """The outcomes of ncdump and of nccopy (its copy dumped) on one damaged file, with the peak."""
    results = {}
    decoder = "hdf5" if fmt == "netcdf4" and name in HDF5_OWN else "ncfilters"
    outcome, out, peak = build.run([build.ncdump, url(path, fmt)], memcheck_log=decoder)
    results["ncdump"] = (judged(outcome, out, expected), peak)
    copy = os.path.join(work, "copy.nc")
    outcome, _, peak = build.run([build.nccopy, "-k", "nc4", url(path, fmt), copy], memcheck_log=decoder)
    if outcome == "ok":
        outcome, out, more = build.run([build.ncdump, copy])
        outcome, peak = judged(outcome, out, expected), max(peak, more)
    results["nccopy"] = (outcome, peak)
    return results


def trial(build, name, fmt, base):
    """Every damage of one filter and format on one build: [(kind, tool, outcome, peak)], or None
    when the build cannot write the filter."""
    work = os.path.join(base, build.name, name.replace("+", "-"), fmt)
    os.makedirs(work)
    pristine = os.path.join(work, "pristine" + (".zarr" if fmt == "nczarr" else ".nc"))
    written, _, _ = build.run([build.nccopy, "-F", f"v,{FILTERS[name]}", os.path.join(base, "source.nc"), url(pristine, fmt)])
    if written != "ok":
        return None
    outcome, dump, _ = build.run([build.ncdump, url(pristine, fmt)])
    if outcome != "ok":
        return None
    expected = data_section(dump)
    copies = {}
    for kind, data in damages(chunk_zero(pristine, fmt), name).items():
        damaged = os.path.join(work, kind.replace(" ", "-") + os.path.splitext(pristine)[1])
        copy_tree(pristine, damaged)
        copies[damaged] = (kind, data)
    refused = replace_chunks_zero({path: data for path, (_, data) in copies.items()}, fmt)
    rows = []
    for damaged, (kind, _) in copies.items():
        if damaged in refused:  # nothing to read
            continue
        kind_work = damaged + "-work"
        os.makedirs(kind_work)
        for tool, (outcome, peak) in read_all_ways(build, damaged, name, fmt, expected, kind_work).items():
            rows.append((kind, tool, outcome, peak))
    return rows


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("damaged"))
    with ncapi.Dataset(os.path.join(base, "source.nc"), "w") as ds:
        dim = ds.def_dim("x", len(VALUES))
        ds.def_var("v", "float32", [dim], chunks=[CHUNK])
        ds.enddef()
        ds.put("v", VALUES)
    started = time.monotonic()
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for build in builds():
            for name in FILTERS:
                for fmt in FORMATS:
                    jobs[(build.name, name, fmt)] = pool.submit(trial, build, name, fmt, base)
    results = {key: job.result() for key, job in jobs.items()}
    report(results, time.monotonic() - started)
    return results


def wrong_values_by_filter(results, build):
    """Which damage each filter and format let through as wrong values, as one line."""
    kinds = {}
    for (name, filter_name, fmt), rows in sorted(results.items()):
        for kind, _, outcome, _ in rows or []:
            if name == build and outcome == "wrong values":
                kinds.setdefault(f"{filter_name} {fmt}", set()).add(kind)
    return "; ".join(f"{case} ({', '.join(sorted(found))})" for case, found in kinds.items())


def report(results, seconds):
    lines = [f"damaged chunks: {len(FILTERS)} filters x {len(FORMATS)} formats, read by ncdump and nccopy"
             f"{' under memcheck' if MEMCHECK_LOGS else ''} ({seconds:.0f} s)"]
    for build in sorted({build for build, _, _ in results}, reverse=True):  # stock first
        tally = dict.fromkeys(OUTCOMES, 0)
        unwritable = []
        peak = 0
        for (name, key_name, fmt), rows in results.items():
            if name != build:
                continue
            if rows is None:
                unwritable.append(f"{key_name} {fmt}")
                continue
            for _, _, outcome, used in rows:
                tally[outcome] += 1
                peak = max(peak, used)
        counts = ", ".join(f"{outcome} {count}" for outcome, count in tally.items())
        missing = f"; cannot write {', '.join(unwritable)}" if unwritable else ""
        lines.append(f"  {build}: {counts}; peak {peak >> 20} MiB{missing}")
        lines.append(f"    wrong values from: {wrong_values_by_filter(results, build) or 'none'}")
    # Where the builds differ, case by case.
    for (build, name, fmt), rows in sorted(results.items()):
        other = results.get(("stock", name, fmt))
        if build != "ncfilters" or rows is None or other is None:
            continue
        theirs = {(kind, tool): outcome for kind, tool, outcome, _ in other}
        for kind, tool, outcome, _ in rows:
            if theirs.get((kind, tool), outcome) != outcome:
                lines.append(f"  {name} {fmt}, {kind}, {tool}: stock {theirs[(kind, tool)]}, ncfilters {outcome}")
    text = "\n".join(lines) + "\n"
    destination = os.environ.get("NCFILTERS_DAMAGE_REPORT")
    if destination:
        with open(destination, "w") as f:
            f.write(text)
    print(text)


def test_ncfilters_writes_every_standard_filter_in_both_formats(outcomes):
    unwritable = [key for key, rows in outcomes.items() if key[0] == "ncfilters" and rows is None]
    assert not unwritable, unwritable


def test_ncfilters_never_crashes_hangs_or_grows_on_a_damaged_chunk(outcomes):
    bad = [(name, fmt, kind, tool, outcome, peak >> 20)
           for (build, name, fmt), rows in outcomes.items() if build == "ncfilters"
           for kind, tool, outcome, peak in rows or []
           if outcome in ("crash", "hang") or (MEMORY_BOUND is not None and peak > MEMORY_BOUND)]
    assert not bad, bad


def test_a_checksum_or_a_header_catches_what_it_covers(outcomes):
    """fletcher32 fails every damaged chunk; no filter returns an empty or truncated chunk as data."""
    for (build, name, fmt), rows in outcomes.items():
        if build != "ncfilters":
            continue
        for kind, tool, outcome, _ in rows:
            if name == "fletcher32" or kind in ("empty", "truncated to 4 bytes"):
                assert outcome == "clean error", (name, fmt, kind, tool, outcome)

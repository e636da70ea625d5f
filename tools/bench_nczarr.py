#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""NCZarr filter-engine timings, stock netcdf-c 4.9.0 against netcdf-c built with ncfilters,
measured side by side in one run (runs alternate between the two builds).

    bench_nczarr.py STOCK_BUILD NCFILTERS_BUILD INPUT.nc WORKDIR [--runs N]

Each build uses its own netcdf-c C plugins (HDF5_PLUGIN_PATH=<build>/plugins: netcdf-c's 14
test plugins). Cases:
  * startup: `ncdump -h` of an NCZarr dataset without filters and of one with zstd;
  * copy: `nccopy` of INPUT to NCZarr with zstd level 3 and with deflate level 1 + shuffle;
  * read back: `nccopy -k classic` of those NCZarr copies (every chunk decoded).
Prints a Markdown table: median wall time and peak RSS per build, and the ratios.
Standard library only.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import time


def url(path):
    return f"file://{path}#mode=nczarr,file"


PLUGINS = object()  # run()'s default: the build's own plugin directory


def run(build, args, quiet=True, plugin_path=PLUGINS, check=True, wrapper=()):
    """Runs one netcdf-c program of `build`: (wall seconds, peak RSS KiB). `plugin_path`:
    HDF5_PLUGIN_PATH (None: unset). `wrapper`: a command the program runs under (perf record).
    A failure ends the benchmark, or with check=False returns None."""
    libdir = os.path.join(build, "liblib") if os.path.isdir(os.path.join(build, "liblib")) else build
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    env["HDF5_PLUGIN_PATH"] = os.path.join(build, "plugins") if plugin_path is PLUGINS else plugin_path
    if env["HDF5_PLUGIN_PATH"] is None:
        del env["HDF5_PLUGIN_PATH"]
    env.pop("NCFILTERS_CODEC_DIALECT", None)
    program = os.path.join(build, "ncdump", args[0])
    start = time.perf_counter()
    proc = subprocess.Popen([*wrapper, program, *args[1:]], env=env, stdout=subprocess.DEVNULL if quiet else None,
                            stderr=None if check else subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 and not check:
        return None
    if proc.returncode != 0:
        raise SystemExit(f"{program} {' '.join(args[1:])} failed with {proc.returncode}")
    return wall, usage.ru_maxrss


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path):
        os.remove(path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stock")
    parser.add_argument("ncfilters")
    parser.add_argument("input")
    parser.add_argument("workdir")
    parser.add_argument("--runs", type=int, default=20)
    opts = parser.parse_args()
    builds = {"stock": os.path.abspath(opts.stock), "ncfilters": os.path.abspath(opts.ncfilters)}
    work = os.path.abspath(opts.workdir)
    os.makedirs(work, exist_ok=True)

    copies = {"zstd 3": ["-F", "*,32015,3"], "deflate 1 + shuffle": ["-d", "1", "-s"]}
    # Datasets each build reads in the startup cases, written by that build.
    for name, build in builds.items():
        run(build, ["nccopy", "-k", "nc4", opts.input, url(fresh(f"{work}/{name}-plain.zarr"))])
        run(build, ["nccopy", *copies["zstd 3"], opts.input, url(fresh(f"{work}/{name}-zstd.zarr"))])

    cases = {
        "ncdump -h, no filters": lambda n: ["ncdump", "-h", url(f"{work}/{n}-plain.zarr")],
        "ncdump -h, zstd": lambda n: ["ncdump", "-h", url(f"{work}/{n}-zstd.zarr")],
    }
    for label, flags in copies.items():
        slug = label.split()[0]
        cases[f"nccopy to NCZarr, {label}"] = (
            lambda n, flags=flags, slug=slug: ["nccopy", *flags, opts.input, url(fresh(f"{work}/{n}-{slug}-copy.zarr"))])
        cases[f"read back ({label})"] = (
            lambda n, slug=slug: ["nccopy", "-k", "classic", url(f"{work}/{n}-{slug}-copy.zarr"), fresh(f"{work}/{n}-{slug}.nc")])

    print(f"input: {opts.input} ({os.path.getsize(opts.input)} bytes); {opts.runs} runs per case and build, alternating\n")
    print("| case | stock wall (ms) | ncfilters wall (ms) | stock ÷ ncfilters time | stock peak RSS (KiB) | ncfilters peak RSS (KiB) | ncfilters ÷ stock RSS |")
    print("|---|---|---|---|---|---|---|")
    for label, command in cases.items():
        samples = {name: [] for name in builds}
        for _ in range(opts.runs):
            for name, build in builds.items():
                samples[name].append(run(build, command(name)))
        wall = {n: statistics.median(s[0] for s in samples[n]) * 1000 for n in builds}
        rss = {n: statistics.median(s[1] for s in samples[n]) for n in builds}
        print(f"| {label} | {wall['stock']:.2f} | {wall['ncfilters']:.2f} | {wall['stock'] / wall['ncfilters']:.2f} "
              f"| {rss['stock']:.0f} | {rss['ncfilters']:.0f} | {rss['ncfilters'] / rss['stock']:.2f} |")


if __name__ == "__main__":
    main()

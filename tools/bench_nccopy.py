#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""End to end: `nccopy` of real float32 files into compressed netCDF-4 and NCZarr and back,
stock netcdf-c with its C plugins (as shipped, HDF5_PLUGIN_PATH=<stock build>/plugins) against
netcdf-c built with ncfilters and no plugin path (its built-in filters), side by side in one run.

    bench_nccopy.py STOCK_BUILD NCFILTERS_BUILD WORKDIR FILE.nc... [--runs N] [--also LABEL=BUILD]...

For every case (zstd 1 and 3, fletcher32 + zstd 3, bzip2 9, blosc lz4, shuffle + deflate 1) and target format:
  * encode: `nccopy -u -F` (or -d/-s) of every FILE into the target, nccopy's default chunking
    (`-u`: unlimited dimensions become fixed, which NCZarr in 4.9.0 requires);
  * decode: `nccopy -k nc6` of those copies back to plain netCDF (every chunk decoded).
Each run times both builds, alternating which goes first. `--codec-share` copies once more under
`perf record` and gives the share of each build's CPU samples spent in the case's codecs (CODECS). A file that either build cannot encode
in a case (stock 4.9.0's blosc plugin fails on chunks blosc cannot shrink, netcdf-c #3075) is left
out of that case for both, and the table says so. `--also` times one more ncfilters build in the
same runs (e.g. one built with -DNCFILTERS_SYSTEM_ZSTD=ON), with its own wall time and ratio columns. Prints a Markdown table: median wall
time (the sum over the files) and the largest peak RSS of any file, per build, and their ratios.
Standard library only.
"""
import argparse
import os
import shutil
import statistics
import subprocess

from bench_nczarr import fresh, run, url

CASES = {
    "zstd 1": ["-F", "*,32015,1"],
    "zstd 3": ["-F", "*,32015,3"],
    # What a checksum that catches damaged chunks costs on top (docs/filters.md).
    "fletcher32 + zstd 3": ["-F", "*,3|32015,3"],
    "bzip2 9": ["-F", "*,307,9"],
    "blosc lz4": ["-F", "*,32001,0,0,0,0,5,1,1"],
    "shuffle + deflate 1": ["-s", "-d", "1"],
}
TARGETS = {"netCDF-4": (".nc", lambda path: path, ["-k", "nc4"]), "NCZarr": (".zarr", url, [])}
# Where each codec's time goes in a perf profile, on either build: (symbol prefixes or parts,
# libraries). A case's codecs are those its label names.
CODECS = {
    "zstd": (("ZSTD_", "HUF_", "FSE_", "HIST_", "ncfilters_filters::zstd"), ("libzstd.",)),
    "fletcher32": (("fletcher32",), ()),
    "bzip2": (("libbz2_rs_sys::", "BZ2_"), ("libbz2.",)),
    "blosc": (("blosc",), ("libblosc.", "liblz4.", "libsnappy.")),
    "shuffle": (("shuffle",), ()),
    "deflate": (("zlib_rs::", "ncfilters_filters::deflate", "adler32"), ("libz.",)),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stock")
    parser.add_argument("ncfilters")
    parser.add_argument("workdir")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", help="comma-separated: only the cases whose label contains one of them")
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=BUILD",
                        help="one more ncfilters build (no plugin path), timed in the same runs")
    parser.add_argument("--codec-share", action="store_true",
                        help="add the share of CPU samples in the case's codecs (perf record)")
    opts = parser.parse_args()
    if opts.codec_share and not shutil.which("perf"):
        parser.error("--codec-share needs perf (Debian: linux-perf)")
    cases = {label: flags for label, flags in CASES.items()
             if not opts.only or any(part in label for part in opts.only.split(","))}
    builds = {"stock": os.path.abspath(opts.stock), "ncfilters": os.path.abspath(opts.ncfilters)}
    plugins = {"stock": os.path.join(builds["stock"], "plugins"), "ncfilters": None}
    extras = []
    for also in opts.also:
        label, _, build = also.partition("=")
        if not label or not build or label in builds:
            parser.error(f"--also {also}: want a new LABEL=BUILD")
        builds[label], plugins[label] = os.path.abspath(build), None
        extras.append(label)
    work = os.path.abspath(opts.workdir)
    os.makedirs(work, exist_ok=True)
    total = sum(os.path.getsize(f) for f in opts.files)
    print(f"{len(opts.files)} files, {total / 1e6:.1f} MB; {opts.runs} runs per case and build, alternating; "
          f"ncfilters threads: {os.environ.get('NCFILTERS_THREADS', 'all cores')}\n")
    print("| case | target | direction | stock wall (s) | ncfilters wall (s) | stock ÷ ncfilters time "
          "| stock peak RSS (MiB) | ncfilters peak RSS (MiB) | ncfilters ÷ stock RSS | stock ÷ ncfilters size |"
          + "".join(f" {e} wall (s) | stock ÷ {e} time |" for e in extras)
          + (" codec share of the copy, stock / ncfilters |" if opts.codec_share else ""))
    print("|---|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(extras) + "---|" * opts.codec_share)
    for label, flags in cases.items():
        for target, (suffix, name_of, kind) in TARGETS.items():
            def encode_args(build, source):
                packed = os.path.join(work, f"{build}-{os.path.basename(source)}") + suffix
                return ["nccopy", "-u", *kind, *flags, source, name_of(fresh(packed))]

            usable = [source for source in opts.files
                      if all(run(builds[b], encode_args(b, source), plugin_path=plugins[b], check=False)
                             for b in builds)]
            left_out = [os.path.basename(f) for f in opts.files if f not in usable]

            def copy(build, direction, number, profile=None):
                """Copies every file one way; (wall seconds summed, largest peak RSS KiB, bytes written).
                With `profile` (a perf.data path), each copy runs under perf record, and the result
                is (CPU samples in the case's codecs, all CPU samples) summed."""
                wall, rss, size, codec, samples = 0.0, 0, 0, 0, 0
                for source in usable:
                    stem = os.path.join(work, f"{build}-{os.path.basename(source)}")
                    packed = stem + suffix
                    if direction == "encode":
                        args = encode_args(build, source)
                    else:
                        args = ["nccopy", "-k", "nc6", name_of(packed), fresh(stem + ".plain.nc")]
                    wrapper = ("perf", "record", "-q", "-F", "4000", "-o", profile, "--") if profile else ()
                    seconds, peak = run(builds[build], args, plugin_path=plugins[build], wrapper=wrapper)
                    wall, rss = wall + seconds, max(rss, peak)
                    size += du(packed)
                    if profile:
                        in_codec, total = codec_samples(profile, [CODECS[c] for c in CODECS if c in label])
                        codec, samples = codec + in_codec, samples + total
                return (codec, samples) if profile else (wall, rss, size)
            for direction in ("encode", "decode"):
                samples = {name: [] for name in builds}
                for number in range(opts.runs):
                    order = list(builds) if number % 2 == 0 else list(reversed(builds))
                    for name in order:
                        samples[name].append(copy(name, direction, number))
                wall = {n: statistics.median(s[0] for s in samples[n]) for n in builds}
                rss = {n: max(s[1] for s in samples[n]) / 1024 for n in builds}
                size = {n: samples[n][-1][2] for n in builds}
                note = f" (without {', '.join(left_out)})" if left_out else ""
                share = ""
                if opts.codec_share:
                    profile = os.path.join(work, "perf.data")
                    shares = [copy(b, direction, 0, profile) for b in ("stock", "ncfilters")]
                    share = " {} |".format(" / ".join(f"{100 * c / max(t, 1):.0f} %" for c, t in shares))
                print(f"| {label} | {target}{note} | {direction} | {wall['stock']:.2f} | {wall['ncfilters']:.2f} "
                      f"| **{wall['stock'] / wall['ncfilters']:.2f}** | {rss['stock']:.0f} | {rss['ncfilters']:.0f} "
                      f"| {rss['ncfilters'] / rss['stock']:.2f} | {size['stock'] / size['ncfilters']:.3f} |"
                      + "".join(f" {wall[e]:.2f} | **{wall['stock'] / wall[e]:.2f}** |" for e in extras)
                      + share, flush=True)


def codec_samples(profile, codecs):
    """(CPU samples in `codecs`' symbols or libraries, all CPU samples) of a perf.data file."""
    report = subprocess.run(["perf", "report", "-i", profile, "--stdio", "-n", "--sort", "dso,sym"],
                            capture_output=True, text=True, check=True).stdout
    in_codec = total = 0
    for line in report.splitlines():
        fields = line.split(None, 4)
        if len(fields) < 5 or line.startswith("#") or not fields[1].isdigit():
            continue
        samples, library, symbol = int(fields[1]), fields[2], fields[4]
        total += samples
        if any(any(part in symbol for part in symbols) or any(library.startswith(lib) for lib in libraries)
               for symbols, libraries in codecs):
            in_codec += samples
    return in_codec, total


def du(path):
    """Bytes in a file or a directory tree."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


if __name__ == "__main__":
    main()

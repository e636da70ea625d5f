// SPDX-License-Identifier: BSD-3-Clause
//! `bench-nczarr`, `bench-filters` and `bench-nccopy` (BENCHMARKS.md); not part of `test`.

use std::path::PathBuf;

use crate::harness::{env_or, log, remove_dir_all_if_exists, Harness, Result};
use crate::process::{cmd, run};
use crate::setup::{cached_deb, stars_input, unpack_deb};
use crate::text::files_with_suffix;

/// NCZarr engine timings against stock, side by side.
pub fn bench_nczarr(h: &Harness) -> Result {
    crate::netcdf::build(h)?;
    let input = stars_input(h)?;
    log("NCZarr startup and copy timings, stock vs ncfilters (tools/bench_nczarr.py)");
    let mut bench = cmd("python3", [h.repo.join("tools/bench_nczarr.py")]);
    bench
        .arg(h.build_dir("stock"))
        .arg(h.ncfilters_build())
        .arg(&input)
        .arg(h.work.join("bench-nczarr"))
        .arg("--runs")
        .arg(env_or("NCFILTERS_BENCH_RUNS", "20"));
    run(&mut bench)
}

/// The standard filters against netcdf-c's C plugins (as built, and rebuilt at -O2), side by
/// side, on chunks of real data: Debian's r-cran-stars and r-cran-ncmeta, then ferret-datasets'
/// monthly Navy winds (real, no fill values) so that 4 MiB chunks need no repeats.
pub fn bench_filters(h: &Harness) -> Result {
    crate::netcdf::build(h)?;
    stars_input(h)?;
    crate::interop::python_env(h)?;
    let data = h.work.join("bench-data");
    for deb in ["r-cran-ncmeta", "ferret-datasets"] {
        unpack_deb(&cached_deb(h, deb)?, &data)?;
    }
    let mut files: Vec<PathBuf> = files_with_suffix(&h.work.join("r-cran-stars"), ".nc");
    files.extend(files_with_suffix(&data.join("usr/lib/R"), ".nc"));
    files.sort();
    // Navy winds, then ETOPO5's 37 MB of real heights so that 16 MiB chunks need no repeats (the
    // 1 and 4 MiB chunks end before ETOPO5, as before it was added).
    for file in ["monthly_navy_winds.cdf", "etopo5.cdf"] {
        files.push(data.join("usr/share/ferret-vis/data").join(file));
    }
    log(format!("benchmark corpus from {} files", files.len()));
    let corpus = h.work.join("bench-corpus");
    remove_dir_all_if_exists(&corpus)?;
    let mut make_corpus = cmd(h.venv().join("bin/python"), [h.repo.join("tools/make_corpus.py")]);
    make_corpus.arg(&corpus).args(&files).env("NETCDF_LIB", h.stock_lib());
    run(&mut make_corpus)?;

    log("netcdf-c's real-filter plugins rebuilt at -O2");
    let plugins_o2 = h.work.join("plugins-O2");
    let mut rebuild = cmd("bash", [h.repo.join("tools/build_c_plugins_O2.sh")]);
    rebuild.arg(h.build_dir("stock")).arg(h.work.join("src-stock")).arg(&plugins_o2);
    run(&mut rebuild)?;

    log("Rust filters vs C plugins (tools/bench-filters)");
    run(cmd("cargo", ["build", "-q", "--release", "--locked", "-p", "bench-filters"]).current_dir(&h.repo))?;
    let mut builds = vec![(h.repo.join("target/release/bench-filters"), "")];
    // NCFILTERS_BENCH_SYSTEM_LIBS=1: the distribution build's filters too (the system's zlib, libbz2
    // and libzstd), in the same run, against the same C plugins.
    if std::env::var_os("NCFILTERS_BENCH_SYSTEM_LIBS").is_some() {
        let target = h.repo.join("target/system-libs");
        let mut build = cmd("cargo", ["build", "-q", "--release", "--locked", "-p", "bench-filters"]);
        build
            .arg("--features=ncfilters-core/system-libs")
            .env("CARGO_TARGET_DIR", &target)
            .env("ZSTD_SYS_USE_PKG_CONFIG", "1")
            .current_dir(&h.repo);
        run(&mut build)?;
        builds.push((target.join("release/bench-filters"), " (the distribution build: the system's libraries)"));
    }
    // One table per build: ncfilters on 1 thread pinned to one core, then on every core (a process
    // reads NCFILTERS_THREADS once).
    for ((program, which), (threads, header)) in
        builds.iter().flat_map(|build| [(build, (Some("1"), true)), (build, (None, false))])
    {
        if header && !which.is_empty() {
            println!("\nbench-filters{which}");
        }
        let mut bench = cmd(program, ["--corpus"]);
        bench
            .arg(&corpus)
            .arg("--c-plugins")
            .arg(&plugins_o2)
            .arg("--c-plugins-as-built")
            .arg(h.build_dir("stock").join("plugins"))
            .arg("--reps")
            .arg(env_or("NCFILTERS_BENCH_REPS", "9"))
            .arg("--seconds")
            .arg(env_or("NCFILTERS_BENCH_SECONDS", "0.5"));
        // NCFILTERS_BENCH_ONLY=zstd,fletcher32: only the cases whose label contains one of them.
        if let Ok(only) = std::env::var("NCFILTERS_BENCH_ONLY") {
            bench.arg("--only").arg(only);
        }
        // NCFILTERS_BENCH_CHUNKS=f32_4MiB: only the chunks whose name contains one of them.
        if let Ok(chunks) = std::env::var("NCFILTERS_BENCH_CHUNKS") {
            bench.arg("--chunks").arg(chunks);
        }
        if !header {
            bench.arg("--no-header");
        }
        // One thread on one core: libzstd's one worker must not get a second core.
        if threads.is_some() {
            bench.arg("--one-core");
        }
        match threads {
            Some(count) => bench.env("NCFILTERS_THREADS", count),
            None => bench.env_remove("NCFILTERS_THREADS"),
        };
        run(&mut bench)?;
    }
    Ok(())
}

/// End to end: `nccopy` of Debian's ferret-datasets (about 80 MB of real float32 fields) into
/// compressed netCDF-4 and NCZarr and back, stock with its C plugins against ncfilters with no
/// plugin path, side by side.
pub fn bench_nccopy(h: &Harness) -> Result {
    crate::netcdf::build(h)?;
    let data = h.work.join("bench-data");
    unpack_deb(&cached_deb(h, "ferret-datasets")?, &data)?;
    let mut files = files_with_suffix(&data.join("usr/share/ferret-vis/data"), ".cdf");
    files.extend(files_with_suffix(&data.join("usr/share/ferret-vis/data"), ".nc"));
    files.sort();
    log(format!("nccopy, stock vs ncfilters, {} ferret-datasets files (tools/bench_nccopy.py)", files.len()));
    let mut bench = cmd("python3", [h.repo.join("tools/bench_nccopy.py")]);
    bench
        .arg(h.build_dir("stock"))
        .arg(h.ncfilters_build())
        .arg(h.work.join("bench-nccopy"))
        .args(&files)
        .arg("--runs")
        .arg(env_or("NCFILTERS_BENCH_RUNS", "5"));
    // NCFILTERS_BENCH_ONLY=blosc: only the cases whose label contains one of them.
    if let Ok(only) = std::env::var("NCFILTERS_BENCH_ONLY") {
        bench.arg("--only").arg(only);
    }
    // NCFILTERS_BENCH_CODEC_SHARE=1: the share of each copy's CPU time in its codecs (perf).
    if std::env::var_os("NCFILTERS_BENCH_CODEC_SHARE").is_some() {
        crate::setup::install_apt_packages(&["linux-perf"])?;
        bench.arg("--codec-share");
    }
    // NCFILTERS_BENCH_SYSTEM_LIBS=1: a third build, the distribution build, in the same runs.
    if std::env::var_os("NCFILTERS_BENCH_SYSTEM_LIBS").is_some() {
        let flavour = crate::netcdf::SYSTEM_LIBS_BENCH_FLAVOUR;
        crate::netcdf::build_netcdf(h, flavour)?;
        crate::netcdf::check_system_libs(h, flavour)?;
        bench.arg("--also").arg(format!("ncfilters on the system's libraries={}", h.build_dir(flavour).display()));
    }
    run(&mut bench)
}

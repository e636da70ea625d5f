// SPDX-License-Identifier: BSD-3-Clause
//! bench-filters: ncfilters' standard filters against netcdf-c 4.9.0's C plugins, through the same
//! `H5Z_func_t` entry point, in one process, runs alternating round-robin between implementations.
//!
//! ```text
//! bench-filters --corpus DIR --c-plugins DIR [--c-plugins-as-built DIR] [--reps 9] [--seconds 0.3] [--only TEXT[,TEXT…]] [--chunks TEXT[,TEXT…]] [--one-core] [--no-header]
//! ```
//! (`bench-filters --help` says what each option does.)
//!
//! ncfilters uses as many threads as `NCFILTERS_THREADS` allows (read once per process), so the
//! `threads` column says which run a row is from; `cargo xtask bench-filters` runs it on one core
//! and with all cores. The C plugins always use one thread.
//!
//! `--one-core` pins the process to the first core of its affinity before anything runs: with
//! `NCFILTERS_THREADS=1` libzstd still hands a large chunk's jobs to its one worker thread, which
//! on a second core would overlap the caller's copying and page faults. Pinned, the column is what
//! an MPI rank bound to one core gets.
//!
//! DIR holds the chunks (`*.bin`, e.g. `f32_1MiB.bin`, made by `tools/make_corpus.py`). For every
//! chunk and filter case: encode and decode MB/s (10^6 uncompressed bytes per second; the
//! malloc+memcpy that gives each call a fresh buffer is outside the timed region), compressed size,
//! and the median ratio C time ÷ Rust time. A round trip is checked byte-exact before timing.
//! Each chunk's last row, `control`, times the C zstd plugin against itself: how far its ratios
//! land from 1.00 is the run's timing noise.
//! (Written by hand rather than with criterion: criterion runs one benchmark after another, and
//! the comparison needs the implementations interleaved so a noisy host hits both alike.)

use clap::Parser;
use libloading::Library;
use ncfilters_core::c_types::{H5Z_class2_t, H5Z_func_t, H5Z_FLAG_REVERSE};
use ncfilters_plugin::h5z;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A filter chain: (filter name, its parameters) in encode order.
type Chain<'a> = Vec<(&'a str, Vec<u32>)>;

/// One stage of a pipeline: a filter and its `cd_values`.
#[derive(Clone)]
struct Stage {
    function: H5Z_func_t,
    params: Vec<u32>,
}

/// A benchmark case: a name and the pipeline per implementation.
struct Case {
    label: String,
    pipelines: Vec<Vec<Stage>>,
}

fn c_plugin(dir: &Path, name: &str) -> H5Z_func_t {
    let path = dir.join(format!("lib__nch5{name}.so"));
    // SAFETY: netcdf-c's plugin, loaded as HDF5 would; kept loaded for the process.
    unsafe {
        let library = Library::new(&path).unwrap_or_else(|e| die(e));
        let info = library
            .get::<unsafe extern "C" fn() -> *const H5Z_class2_t>(b"H5PLget_plugin_info\0")
            .unwrap_or_else(|e| die(format!("{}: {e}", path.display())));
        let filter = (*info()).filter;
        if filter.is_none() {
            die(format!("{}: H5Z_class2_t.filter is NULL", path.display()));
        }
        std::mem::forget(library);
        filter
    }
}

/// Ends the run with `message` on stderr (exit status 2): for what the command line points at.
fn die(message: impl std::fmt::Display) -> ! {
    eprintln!("bench-filters: {message}");
    std::process::exit(2);
}

fn rust_filter(name: &str) -> H5Z_func_t {
    match name {
        "shuffle" => Some(h5z::h5z_shuffle),
        "fletcher32" => Some(h5z::h5z_fletcher32),
        "deflate" => Some(h5z::h5z_deflate),
        "bzip2" => Some(h5z::h5z_bzip2),
        "zstd" => Some(h5z::h5z_zstd),
        "blosc" => Some(h5z::h5z_blosc),
        "szip" => Some(h5z::h5z_szip),
        other => panic!("no Rust filter {other}"),
    }
}

/// Runs a pipeline over a fresh malloc'd copy of `input`; returns the output and the time spent
/// inside the filter calls.
fn run(pipeline: &[Stage], input: &[u8], decode: bool) -> (Vec<u8>, Duration) {
    // SAFETY: each call gets a malloc'd block holding the current bytes, as HDF5 does.
    unsafe {
        let mut buf = libc::malloc(input.len().max(1));
        std::ptr::copy_nonoverlapping(input.as_ptr(), buf.cast::<u8>(), input.len());
        let mut nbytes = input.len();
        let mut elapsed = Duration::ZERO;
        let order: Vec<&Stage> = if decode { pipeline.iter().rev().collect() } else { pipeline.iter().collect() };
        for stage in order {
            let function = stage.function.expect("a filter function");
            let mut buf_size = nbytes;
            let start = Instant::now();
            let produced = function(
                if decode { H5Z_FLAG_REVERSE } else { 0 },
                stage.params.len(),
                stage.params.as_ptr(),
                nbytes,
                &mut buf_size,
                &mut buf,
            );
            elapsed += start.elapsed();
            assert!(produced != 0 && produced != usize::MAX, "filter failed");
            nbytes = produced;
        }
        let out = std::slice::from_raw_parts(buf.cast::<u8>(), nbytes).to_vec();
        libc::free(buf);
        (out, elapsed)
    }
}

/// MB/s of one repetition: calls repeated until `seconds` of filter time.
fn throughput(pipeline: &[Stage], input: &[u8], uncompressed: usize, decode: bool, seconds: f64) -> f64 {
    let (mut total, mut calls) = (Duration::ZERO, 0u32);
    while total.as_secs_f64() < seconds || calls < 2 {
        total += run(pipeline, input, decode).1;
        calls += 1;
    }
    uncompressed as f64 * f64::from(calls) / total.as_secs_f64() / 1e6
}

/// Binds the process to the first core of its CPU affinity.
fn pin_to_one_core() {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; both calls get its size and address.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0, "sched_getaffinity");
        let first = (0..libc::CPU_SETSIZE as usize).find(|&cpu| libc::CPU_ISSET(cpu, &set)).expect("a core");
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(first, &mut set);
        assert_eq!(libc::sched_setaffinity(0, size, &set), 0, "sched_setaffinity");
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn memcpy_bandwidth(data: &[u8]) -> f64 {
    let mut target = vec![0u8; data.len()];
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed().as_secs_f64() < 0.2 {
        target.copy_from_slice(std::hint::black_box(data));
        n += 1;
    }
    std::hint::black_box(&target);
    data.len() as f64 * f64::from(n) / start.elapsed().as_secs_f64() / 1e6
}

/// ncfilters' standard filters against netcdf-c's C plugins, side by side in one process.
#[derive(Parser)]
#[command(version)]
struct Options {
    /// The directory of chunks (`*.bin`, made by tools/make_corpus.py).
    #[arg(long, value_name = "DIR")]
    corpus: PathBuf,
    /// netcdf-c's C plugins built at -O2 (tools/build_c_plugins_O2.sh).
    #[arg(long, value_name = "DIR")]
    c_plugins: PathBuf,
    /// netcdf-c's C plugins as its build made them: the last column.
    #[arg(long, value_name = "DIR")]
    c_plugins_as_built: Option<PathBuf>,
    /// Repetitions per case; the tables give medians.
    #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Seconds of calls per measurement.
    #[arg(long, default_value_t = 0.3)]
    seconds: f64,
    /// Only the cases whose label contains one of these (comma-separated).
    #[arg(long, value_name = "TEXT[,TEXT…]")]
    only: Option<String>,
    /// Only the chunks whose name contains one of these (comma-separated).
    #[arg(long, value_name = "TEXT[,TEXT…]")]
    chunks: Option<String>,
    /// Pin the process to the first core of its affinity before anything runs.
    #[arg(long)]
    one_core: bool,
    /// Print the rows without the table's header.
    #[arg(long)]
    no_header: bool,
}

/// Whether `name` contains one of the comma-separated parts of `filter` (no filter: yes).
fn picked(filter: &Option<String>, name: &str) -> bool {
    filter.as_deref().is_none_or(|f| f.split(',').any(|part| name.contains(part)))
}

fn main() {
    let options = Options::parse();
    if !(options.seconds.is_finite() && options.seconds > 0.0) {
        die("--seconds must be a positive number of seconds");
    }
    let Options { corpus, c_plugins: c_dir, c_plugins_as_built: as_built, .. } = &options;
    let (reps, seconds) = (options.reps, options.seconds);
    if options.one_core {
        pin_to_one_core();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match std::env::var("NCFILTERS_THREADS").ok().and_then(|t| t.trim().parse::<usize>().ok()) {
        _ if cores == 1 => "1 (one core)".to_string(),
        Some(cap) if cap >= 1 && cap < cores => cap.to_string(),
        _ => format!("{cores} (all)"),
    };

    let mut chunks: Vec<PathBuf> = std::fs::read_dir(corpus)
        .unwrap_or_else(|e| die(format!("{}: {e}", corpus.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .filter(|p| picked(&options.chunks, &p.file_stem().unwrap_or_default().to_string_lossy()))
        .collect();
    chunks.sort();
    if chunks.is_empty() {
        die(format!("no chunks (*.bin) in {} match", corpus.display()));
    }
    let implementations = ["Rust", "C -O2", "C as built"];
    if !options.no_header {
        println!("| chunk | threads | filter (cd_values) | ratio C | size Rust ÷ C | enc MB/s Rust | enc MB/s C -O2 | enc C time ÷ Rust time | dec MB/s Rust | dec MB/s C -O2 | dec C time ÷ Rust time | enc / dec MB/s C as built |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    }
    for chunk in &chunks {
        let data = std::fs::read(chunk).unwrap_or_else(|e| die(format!("{}: {e}", chunk.display())));
        let name = chunk.file_stem().unwrap().to_string_lossy().to_string();
        let element = if name.starts_with("i16") {
            2
        } else if name.starts_with("f64") {
            8
        } else {
            4
        };
        let bpp = element as u32 * 8;
        let specs: Vec<(&str, Chain)> = vec![
            ("shuffle", vec![("shuffle", vec![element as u32])]),
            ("fletcher32", vec![("fletcher32", vec![])]),
            ("deflate 1", vec![("deflate", vec![1])]),
            ("deflate 6", vec![("deflate", vec![6])]),
            ("zstd 1", vec![("zstd", vec![1])]),
            ("zstd 3", vec![("zstd", vec![3])]),
            ("bzip2 9", vec![("bzip2", vec![9])]),
            ("blosc lz4 5 shuffle", vec![("blosc", vec![2, 2, element as u32, data.len() as u32, 5, 1, 1])]),
            ("szip NN 32", vec![("szip", vec![169, 32, bpp, 4096])]),
            ("shuffle + deflate 1", vec![("shuffle", vec![element as u32]), ("deflate", vec![1])]),
            ("shuffle + zstd 1", vec![("shuffle", vec![element as u32]), ("zstd", vec![1])]),
        ];
        let mut cases: Vec<Case> = specs
            .iter()
            .map(|(label, stages)| {
                let build = |pick: &dyn Fn(&str) -> H5Z_func_t| -> Vec<Stage> {
                    stages.iter().map(|(f, p)| Stage { function: pick(f), params: p.clone() }).collect()
                };
                let mut pipelines = vec![build(&rust_filter), build(&|f| c_plugin(c_dir, f))];
                if let Some(dir) = &as_built {
                    pipelines.push(build(&|f| c_plugin(dir, f)));
                }
                let params: Vec<String> = stages.iter().map(|(f, p)| format!("{f}{p:?}")).collect();
                Case { label: format!("{label} ({})", params.join(" + ")), pipelines }
            })
            .collect();
        // The timing noise: the C plugin against itself, in the Rust column. Its ratios show how
        // far from 1.00 two identical calls land in this run.
        let control = || vec![Stage { function: c_plugin(c_dir, "zstd"), params: vec![1] }];
        cases.push(Case {
            label: "control: C zstd 1 against itself (zstd[1])".into(),
            pipelines: vec![control(), control()],
        });
        println!("| {name} | {threads} | memcpy | 1 | – | {:.0} (memcpy) | | | | | | |", memcpy_bandwidth(&data));
        for case in cases.iter().filter(|c| picked(&options.only, &c.label)) {
            // Round trips first, and the encoded forms each implementation decodes.
            let encoded: Vec<Vec<u8>> = case.pipelines.iter().map(|p| run(p, &data, false).0).collect();
            for (i, (pipeline, packed)) in case.pipelines.iter().zip(&encoded).enumerate() {
                assert_eq!(run(pipeline, packed, true).0, data, "{}: {} round trip", case.label, implementations[i]);
            }
            let mut enc: Vec<Vec<f64>> = vec![Vec::new(); case.pipelines.len()];
            let mut dec: Vec<Vec<f64>> = vec![Vec::new(); case.pipelines.len()];
            let mut time_ratio_enc = Vec::new();
            let mut time_ratio_dec = Vec::new();
            for _ in 0..reps {
                let mut this_enc = Vec::new();
                let mut this_dec = Vec::new();
                for (i, pipeline) in case.pipelines.iter().enumerate() {
                    this_enc.push(throughput(pipeline, &data, data.len(), false, seconds));
                    this_dec.push(throughput(pipeline, &encoded[i], data.len(), true, seconds));
                }
                time_ratio_enc.push(this_enc[0] / this_enc[1]);
                time_ratio_dec.push(this_dec[0] / this_dec[1]);
                for i in 0..case.pipelines.len() {
                    enc[i].push(this_enc[i]);
                    dec[i].push(this_dec[i]);
                }
            }
            let as_built_cell = if case.pipelines.len() > 2 {
                format!("{:.0} / {:.0}", median(enc[2].clone()), median(dec[2].clone()))
            } else {
                "–".into()
            };
            println!(
                "| {name} | {threads} | {} | {:.3} | {:.3} | {:.0} | {:.0} | **{:.2}** | {:.0} | {:.0} | **{:.2}** | {as_built_cell} |",
                case.label,
                data.len() as f64 / encoded[1].len() as f64,
                encoded[0].len() as f64 / encoded[1].len() as f64,
                median(enc[0].clone()),
                median(enc[1].clone()),
                median(time_ratio_enc),
                median(dec[0].clone()),
                median(dec[1].clone()),
                median(time_ratio_dec),
            );
        }
    }
}

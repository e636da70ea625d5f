// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters-core: netcdf-c's filter logic without C exports, for the netcdf-c release chosen by
//! `build.rs` ([`NETCDF_RELEASE`]). The `ncfilters` crate exports it with netcdf-c's C ABI, the
//! plugin libraries build on it, and the fuzz targets, benchmarks and `ncfilters` command use it
//! directly.
//!
//! The modules form layers, lowest first: a module uses only modules below it, so the module
//! graph has no cycle (`tests/layers.rs` checks the order):
//! 1. [`error`]: status codes and diagnostics; [`c_types`]: the `repr(C)` types of netcdf-c's
//!    public filter headers;
//! 2. [`c_heap`]: C-heap memory; [`ffi_boundary`]: the panic boundary and pointer helpers;
//!    [`c_args`]: the exports' pointer arguments as typed handles;
//!    [`worker_pool`]: how many cores filters may use, and the threads that run a large
//!    chunk's pieces; [`zstd_context`]: a zstd context with libzstd's block pre-splitter off and
//!    its multithreaded frames;
//! 3. [`platform_names`]: the names and path rules netcdf-c picks per platform;
//!    [`filterspec`]: the filter-spec parser; [`plugin_path`]: the plugin path's directories and
//!    rules; [`filter_rules`]: ordering and conflict rules of a variable's filter list;
//!    [`standard_filter_table`]: the table of standard filters (ids, names, codecs, libraries);
//!    [`standard_filters`]: parameters of the bzip2/zstd/blosc helpers; [`codec_json`]: NCZarr
//!    codec JSON, its numeric and legacy dialects; then [`codecs`]: the standard filters' Zarr
//!    codecs; [`filters`]: the standard filters themselves;
//! 4. [`plugin_loader`]: plugin libraries' FFI, and ncfilters' own codecs as native parts; then
//!    [`plugin_registry`]: NCZarr plugin discovery and pairing (the built-in parts are handed in
//!    by its caller); then [`filter_chain`]: an NCZarr variable's filters and the chunk filter
//!    chain; then [`filter_report`]: the typed report behind `ncfilters_report` and the
//!    `ncfilters` command; then [`filter_explain`]: why a filter is usable or not, and what to
//!    change, read from that report.
//!
//! Unsafe code is denied here. The modules that must hold it say so where they are declared:
//! C-heap ownership, the panic boundary, the worker threads, libzstd's context, loading plugin
//! libraries, and (in [`filters`]) the C codecs and SIMD kernels.
#![deny(unsafe_code)]
// Public items' docs name the private helpers they rest on.
#![allow(rustdoc::private_intra_doc_links)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

/// The netcdf-c release whose ABI and behaviour this build has (`NCFILTERS_NETCDF_VERSION`).
pub const NETCDF_RELEASE: &str = env!("NCFILTERS_NETCDF_VERSION");

/// What this build of ncfilters is: its version and its source, e.g. `0.3.0 (git 1a2b3c4d5e6f)` or
/// `0.3.0 (release)`, as libnetcdf.settings and `nc-config --all` of the same build say.
pub const NCFILTERS_BUILD: &str = env!("NCFILTERS_BUILD");

/// Whether the standard filters run on the system's zlib, libbz2 and libzstd (the distribution
/// build, feature `system-libs`) rather than zlib-rs, libbz2-rs and the bundled libzstd.
pub const SYSTEM_LIBS: bool = cfg!(feature = "system-libs");

/// Whether that release has its own plugin-path code (dplugins.c and the rest, 4.9.3 on), whose
/// internal functions ncfilters then exports too.
pub const PLUGIN_PATH_RELEASE: bool = cfg!(ncf_plugin_path_release);

// The layers, lowest first: `tests/layers.rs` reads this order (rustfmt keeps it:
// `reorder_modules = false`). The modules that hold unsafe code say why where they are declared.
pub mod error;
pub mod c_types;
#[expect(unsafe_code, reason = "malloc'd buffers and strings that C frees")]
pub mod c_heap;
#[expect(unsafe_code, reason = "catch_unwind around every export, and pointer reads and writes for the exports")]
pub mod ffi_boundary;
#[expect(unsafe_code, reason = "the one conversion of each kind of pointer argument into its typed handle")]
pub mod c_args;
#[expect(unsafe_code, reason = "pthreads, getrlimit, dlopen and the unload hook, per platform")]
pub mod platform;
#[expect(unsafe_code, reason = "the library's destructor, and a borrowed batch of chunk pieces for the workers")]
pub mod worker_pool;
#[expect(unsafe_code, reason = "libzstd's thread pool and a context parameter the zstd crate does not wrap")]
pub mod zstd_context;
#[cfg_attr(feature = "system-libs", expect(unsafe_code, reason = "the system zlib's adler32 and adler32_combine"))]
pub mod adler32;
pub mod platform_names;
pub mod filterspec;
pub mod plugin_path;
pub mod filter_rules;
pub mod standard_filter_table;
pub mod standard_filters;
pub mod codec_json;
pub mod codecs;
pub mod filters;
#[expect(unsafe_code, reason = "dlopen of plugin libraries and calls through their C function pointers")]
pub mod plugin_loader;
pub mod plugin_registry;
pub mod filter_chain;
pub mod filter_report;
pub mod filter_explain;

// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters-core: netcdf-c's filter code without C exports, for the netcdf-c release chosen by
//! ncfilters-logic's `build.rs` ([`NETCDF_RELEASE`]): the C runtime and what rests on it. The
//! `ncfilters` crate exports it with netcdf-c's C ABI, the plugin libraries build on it, and the
//! fuzz targets, benchmarks and `ncfilters` command use it directly.
//!
//! Below it is ncfilters-logic, the pure logic, which forbids unsafe code; its modules are
//! re-exported here under their own names ([`error`], [`c_types`], [`platform_names`],
//! [`filterspec`], [`plugin_path`], [`discovery_log`], [`filter_rules`], [`standard_filter_table`],
//! [`standard_filters`], [`codec_json`], [`codecs`], [`chunk_bounds`], [`filter_report`], [`filter_explain`]).
//!
//! This crate's modules form layers above those, lowest first: a module uses only modules below
//! it, so the module graph has no cycle (`tests/layers.rs` checks the order):
//! 1. [`c_heap`]: C-heap memory; [`ffi_boundary`]: the panic boundary and pointer helpers;
//!    [`c_args`]: the exports' pointer arguments as typed handles; [`platform`]: what differs
//!    between ELF, PE and Mach-O; [`worker_pool`]: how many cores filters may use, and the
//!    threads that run a large chunk's pieces; [`zstd_context`]: a zstd context with libzstd's
//!    block pre-splitter off and its multithreaded frames;
//! 2. [`filters`]: the standard filters themselves;
//! 3. [`plugin_loader`]: plugin libraries' FFI, and ncfilters' own codecs as native parts; then
//!    [`plugin_registry`]: NCZarr plugin discovery and pairing (the built-in parts are handed in
//!    by its caller); then [`filter_chain`]: an NCZarr variable's filters and the chunk filter
//!    chain; then [`registry_report`]: the filter report and the spec and codec descriptions,
//!    made from the registry.
//!
//! Unsafe code is denied here. The modules that must hold it say so where they are declared:
//! C-heap ownership, the panic boundary, the worker threads, libzstd's context, loading plugin
//! libraries, and (in [`filters`]) the C codecs and SIMD kernels.
#![deny(unsafe_code)]
// Public items' docs name the private helpers they rest on.
#![allow(rustdoc::private_intra_doc_links)]
#![deny(unsafe_op_in_unsafe_fn)]
// The plugin path trusts the environment (core's `plugin_path`): no allow may change it.
#![forbid(clippy::disallowed_methods)]
#![warn(clippy::undocumented_unsafe_blocks)]

/// Whether the standard filters run on the system's zlib, libbz2 and libzstd (the distribution
/// build, feature `system-libs`) rather than zlib-rs, libbz2-rs and the bundled libzstd.
pub const SYSTEM_LIBS: bool = cfg!(feature = "system-libs");

// The pure logic's modules and constants, under their names of before the split.
pub use ncfilters_logic::{
    c_types, chunk_bounds, codec_json, codecs, discovery_log, error, filter_explain, filter_report, filter_rules,
    filterspec, platform_names, standard_filter_table, standard_filters, NCFILTERS_BUILD, NETCDF_RELEASE,
    PLUGIN_PATH_RELEASE,
};

// The layers, lowest first: `tests/layers.rs` reads this order (rustfmt keeps it:
// `reorder_modules = false`). The modules that hold unsafe code say why where they are declared.
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
pub mod filters;
#[expect(unsafe_code, reason = "its setter's caller vouches for the libraries the loader may load")]
pub mod plugin_path;
#[expect(unsafe_code, reason = "dlopen of plugin libraries and calls through their C function pointers")]
pub mod plugin_loader;
pub mod plugin_registry;
pub mod filter_chain;
pub mod registry_report;

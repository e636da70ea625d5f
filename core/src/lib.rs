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
//! Below it are ncfilters-runtime, the C runtime ([`c_heap`], [`ffi_boundary`], [`c_args`],
//! [`platform`], [`worker_pool`], [`zstd_context`], [`adler32`]), and ncfilters-filters, the
//! standard filters written in Rust, which forbids unsafe code; both are re-exported here under
//! their names of before the split.
//!
//! This crate's modules form layers above those, lowest first: a module uses only modules below
//! it, so the module graph has no cycle (`tests/layers.rs` checks the order):
//! 1. [`filters`]: the standard filters, those of ncfilters-filters and the ones on C libraries
//!    loaded at run time (blosc, szip); [`plugin_path`]: the plugin path in force;
//! 2. [`plugin_loader`]: plugin libraries' FFI, and ncfilters' own codecs as native parts; then
//!    [`plugin_registry`]: NCZarr plugin discovery and pairing (the built-in parts are handed in
//!    by its caller); then [`filter_chain`]: an NCZarr variable's filters and the chunk filter
//!    chain; then [`registry_report`]: the filter report and the spec and codec descriptions,
//!    made from the registry.
//!
//! Unsafe code is denied here. The modules that must hold it say so where they are declared:
//! the plugin path's setter, loading plugin libraries, and (in [`filters`]) the C codecs.
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

// The C runtime, under its names of before the split.
pub use ncfilters_runtime::{
    adler32, c_args, c_heap, ffi_boundary, ffi_export, filter_call, function_name, large_blocks, platform, reject_null,
    worker_pool, zstd_context,
};

// The layers, lowest first: `tests/layers.rs` reads this order (rustfmt keeps it:
// `reorder_modules = false`). The modules that hold unsafe code say why where they are declared.
pub mod filters;
#[expect(unsafe_code, reason = "its setter's caller vouches for the libraries the loader may load")]
pub mod plugin_path;
#[expect(unsafe_code, reason = "dlopen of plugin libraries and calls through their C function pointers")]
pub mod plugin_loader;
pub mod plugin_registry;
pub mod filter_chain;
pub mod registry_report;

/// A unit test's thread, standing for C's: these tests call netcdf-c and HDF5 from no other.
#[cfg(test)]
#[expect(unsafe_code, reason = "a unit test's thread stands for the one that uses netcdf-c")]
pub(crate) fn test_thread() -> ffi_boundary::CallersThread {
    // SAFETY: a unit test's thread is the only one that calls netcdf-c or HDF5 in its test.
    unsafe { ffi_boundary::CallersThread::promise() }
}

/// `body` within a unit test's call ([`test_thread`]).
#[cfg(test)]
pub(crate) fn in_test_call<R>(body: impl for<'call> FnOnce(&ffi_boundary::Call<'call>) -> R) -> R {
    ffi_boundary::with_call(test_thread(), body)
}

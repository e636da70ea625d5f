// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters-plugin: what the plugin libraries in `plugins/` share with libnetcdf, on top of
//! ncfilters-core and without netcdf-c's exports. Its modules, lowest first (`tests/layers.rs`
//! checks the order):
//! 1. [`hdf5_sys`]: the HDF5 functions the filters call back; [`netcdf_api`]: the netcdf-c
//!    public functions the codecs call back (both through `shim.c`);
//! 2. [`h5z`]: the standard filters behind HDF5's `H5Z_func_t`, with their `can_apply` and
//!    `set_local`;
//! 3. [`plugin`]: their `H5Z_class2_t` and `NCZ_codec_t` statics, one module per row of the table
//!    of standard filters, and the macros that export a plugin library's entry points.
//!
//! The core's modules are re-exported under their own names, so `crate::filters` here is
//! `ncfilters_core::filters`, and the export macros' `$crate::` paths resolve.
#![deny(unsafe_op_in_unsafe_fn)]
// The plugin path trusts the environment (core's `plugin_path`): no allow may change it.
#![forbid(clippy::disallowed_methods)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub use ncfilters_core::{
    c_heap, c_types, codecs, error, ffi_boundary, ffi_export, filters, large_blocks, reject_null,
    standard_filter_table, standard_filters,
};

/// Rust's allocations in every library and program built on this crate (the plugin libraries,
/// libnetcdf's Rust part): large blocks mapped on their own under glibc, so that freed compressor
/// states leave the process (ncfilters-runtime's `large_blocks`).
#[global_allocator]
static ALLOCATOR: large_blocks::LargeBlocksMapped = large_blocks::LargeBlocksMapped;

// The layers, lowest first (`tests/layers.rs` reads this order).
pub mod hdf5_sys;
pub mod netcdf_api;
pub mod h5z;
pub mod plugin;

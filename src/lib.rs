//! ncfilters: netcdf-c's filter internals in Rust, exported with the exact C ABI of the netcdf-c
//! release it is built for ([`NETCDF_RELEASE`]: 4.9.0, 4.9.3 or 4.10.1, chosen by `build.rs`).
//!
//! The modules form layers, lowest first: a module uses only modules below it, so the module
//! graph has no cycle and nothing outside [`abi`] uses [`abi`] (`tests/layers.rs` checks the order):
//! 1. [`error`]: status codes and diagnostics; [`c_types`]: the `repr(C)` types of netcdf-c's
//!    public filter headers;
//! 2. [`c_heap`]: C-heap memory; [`ffi_boundary`]: the panic boundary and pointer helpers;
//!    [`worker_pool`]: how many cores filters may use, and the threads that run a large
//!    chunk's pieces; [`zstd_context`]: a zstd context with libzstd's block pre-splitter off and
//!    its multithreaded frames;
//! 3. [`filterspec`]: the filter-spec parser; [`plugin_path`]: the plugin path's directories and
//!    rules; [`hdf5_filter_rules`]: ordering and conflict rules
//!    of a variable's filter list; [`standard_filter_table`]: the table of standard filters (ids,
//!    names, codecs, libraries); [`standard_filters`]: parameters of the bzip2/zstd/blosc
//!    helpers; [`codec_json`]: NCZarr codec JSON, its numeric and legacy dialects; then
//!    [`codecs`]: the standard filters' Zarr codecs; [`filters`]: the standard filters
//!    themselves; [`hdf5_sys`]: bindings to HDF5;
//! 4. [`plugin_loader`]: plugin libraries' FFI, and ncfilters' own codecs as native parts; then
//!    [`plugin_registry`]: NCZarr plugin discovery and pairing (the built-in parts are handed in
//!    by its caller); then [`filter_chain`]: an NCZarr variable's filters and the chunk filter
//!    chain; then [`filter_report`]: the JSON of `ncfilters_report` and `ncfilters_describe_*`;
//! 5. [`netcdf_sys`]: bindings to netcdf-c internals (the NCZarr filter lists hold
//!    [`filter_chain`] filters); then [`abi_layout`]: the layout table the ABI check compares
//!    with netcdf-c's headers;
//! 6. [`abi`]: every exported C function, one file per replaced netcdf-c source file, and the
//!    standard filters' `H5Z_func_t` entry points, plugin statics and built-ins.
//!
//! Public to Rust are only what the plugin crates, fuzz targets and tools use: [`abi`],
//! [`abi_layout`], [`c_types`], [`codec_json`], [`error`], [`ffi_boundary`], [`filters`],
//! [`filterspec`] and [`standard_filter_table`] (and `test_support` for `tests/`); the other
//! modules are crate-private, so the dead-code lint sees what nothing uses.
#![deny(unsafe_op_in_unsafe_fn)]
// The layer list above names the crate-private modules too.
#![allow(rustdoc::private_intra_doc_links)]
// The plugin libraries build without `netcdf-abi`: only the filters and their entry points, so
// what only libnetcdf uses (the NCZarr chain, the registry) is dead there. The default build,
// which CI lints, keeps the lint.
#![cfg_attr(not(feature = "netcdf-abi"), allow(dead_code))]
#![warn(clippy::undocumented_unsafe_blocks)]

/// The netcdf-c release whose ABI and behaviour this build has (`NCFILTERS_NETCDF_VERSION`).
pub const NETCDF_RELEASE: &str = env!("NCFILTERS_NETCDF_VERSION");

pub mod abi;
pub mod abi_layout;
pub(crate) mod c_heap;
pub mod c_types;
pub mod codec_json;
pub(crate) mod codecs;
pub mod error;
pub mod ffi_boundary;
pub(crate) mod filter_chain;
pub(crate) mod filter_report;
pub mod filters;
pub mod filterspec;
pub(crate) mod hdf5_filter_rules;
pub(crate) mod hdf5_sys;
pub(crate) mod netcdf_sys;
pub(crate) mod plugin_loader;
pub(crate) mod plugin_path;
pub(crate) mod plugin_registry;
pub mod standard_filter_table;
pub(crate) mod standard_filters;
pub(crate) mod worker_pool;
pub(crate) mod zstd_context;

/// What the integration tests in `tests/` reach beyond the C ABI; not part of any interface.
#[doc(hidden)]
pub mod test_support {
    pub use crate::netcdf_sys::netcdf_linked;
    pub use crate::plugin_registry::finalize as forget_plugins;

    /// Whether the NCZarr registry (discovered now if need be) has a complete filter `id`.
    #[cfg(feature = "netcdf-abi")]
    pub fn registry_has(id: u32) -> bool {
        crate::abi::builtin::registry().get(id).is_some()
    }
}

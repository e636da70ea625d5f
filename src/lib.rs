//! ncfilters: netcdf-c's filter code exported with the exact C ABI of the netcdf-c release it is
//! built for ([`NETCDF_RELEASE`]: 4.9.0, 4.9.3 or 4.10.1, chosen by ncfilters-core's `build.rs`).
//!
//! The filter logic is the `ncfilters-core` crate; this crate is what C sees of it. Its modules,
//! lowest first (`tests/layers.rs` checks the order, and that nothing in ncfilters-core uses them):
//! 1. [`hdf5_sys`]: bindings to HDF5;
//! 2. [`netcdf_sys`]: bindings to netcdf-c internals (the NCZarr filter lists hold
//!    ncfilters-core's `filter_chain` filters); then [`abi_layout`]: the layout table the ABI
//!    check compares with netcdf-c's headers;
//! 3. [`abi`]: every exported C function, one file per replaced netcdf-c source file, and the
//!    standard filters' `H5Z_func_t` entry points, plugin statics and built-ins.
//!
//! The core's modules are re-exported under their own names, so `crate::filters` here is
//! `ncfilters_core::filters`. Public to Rust are only what the plugin crates and `tests/` use.
#![deny(unsafe_op_in_unsafe_fn)]
// The layer list above names the crate-private modules too.
#![allow(rustdoc::private_intra_doc_links)]
// The plugin libraries build without `netcdf-abi`: only the filters and their entry points, so
// what only libnetcdf uses (the NCZarr chain, the registry, their re-exports) is dead there. The
// default build, which CI lints, keeps the lints.
#![cfg_attr(not(feature = "netcdf-abi"), allow(dead_code, unused_imports))]
#![warn(clippy::undocumented_unsafe_blocks)]

pub(crate) use ncfilters_core::{
    c_heap, codecs, filter_chain, filter_report, hdf5_filter_rules, plugin_loader, plugin_path, plugin_registry,
    standard_filters,
};
pub use ncfilters_core::{
    c_types, codec_json, error, ffi_boundary, ffi_export, filters, filterspec, function_name, reject_null,
    standard_filter_table, NETCDF_RELEASE,
};

pub mod abi;
pub mod abi_layout;
pub(crate) mod hdf5_sys;
pub(crate) mod netcdf_sys;

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

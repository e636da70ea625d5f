//! ncfilters: netcdf-c 4.9.0's filter internals in Rust, exported with netcdf-c's exact C ABI.
//!
//! The modules form layers, lowest first: a module uses only modules below it, so the module
//! graph has no cycle and nothing outside [`abi`] uses [`abi`] (`tests/layers.rs` checks the order):
//! 1. [`error`]: status codes and diagnostics; [`c_types`]: the `repr(C)` types of netcdf-c's
//!    public filter headers;
//! 2. [`c_heap`]: C-heap memory; [`ffi_boundary`]: the panic boundary and pointer helpers;
//! 3. [`filterspec`]: the filter-spec parser; [`hdf5_filter_rules`]: ordering and conflict rules
//!    of a variable's filter list; [`standard_filter_table`]: the table of standard filters (ids,
//!    names, codecs, libraries); [`standard_filters`]: parameters of the bzip2/zstd/blosc
//!    helpers; [`codec_json`]: NCZarr codec JSON, its numeric and legacy dialects; then
//!    [`codecs`]: the standard filters' Zarr codecs; [`filters`]: the standard filters
//!    themselves; [`hdf5_sys`]: bindings to HDF5;
//! 4. [`plugin_loader`]: plugin libraries' FFI, and ncfilters' own codecs as native parts; then
//!    [`plugin_registry`]: NCZarr plugin discovery and pairing (the built-in parts are handed in
//!    by its caller); then [`filter_chain`]: an NCZarr variable's filters and the chunk filter
//!    chain;
//! 5. [`netcdf_sys`]: bindings to netcdf-c internals (the NCZarr filter lists hold
//!    [`filter_chain`] filters); then [`abi_layout`]: the layout table the ABI check compares
//!    with netcdf-c's headers;
//! 6. [`abi`]: every exported C function, one file per replaced netcdf-c source file, and the
//!    standard filters' `H5Z_func_t` entry points, plugin statics and built-ins.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod abi;
pub mod abi_layout;
pub mod c_heap;
pub mod c_types;
pub mod codec_json;
pub mod codecs;
pub mod error;
pub mod ffi_boundary;
pub mod filter_chain;
pub mod filters;
pub mod filterspec;
pub mod hdf5_filter_rules;
pub mod hdf5_sys;
pub mod netcdf_sys;
pub mod plugin_loader;
pub mod plugin_registry;
pub mod standard_filter_table;
pub mod standard_filters;

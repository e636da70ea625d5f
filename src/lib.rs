//! ncfilters: netcdf-c 4.9.0's filter internals in Rust, exported with netcdf-c's exact C ABI.
//!
//! Where things are:
//! - [`abi`]: every exported C function, one file per replaced netcdf-c source file;
//! - [`filterspec`]: the filter-spec parser (safe code);
//! - [`standard_filters`]: parameters of the bzip2/zstd/blosc helpers (safe code);
//! - [`hdf5_filter_rules`]: ordering and conflict rules of a variable's filter list (safe code);
//! - [`codec_json`]: NCZarr codec JSON, its numeric and legacy dialects (safe code);
//! - [`codecs`]: the standard filters' Zarr codecs (safe code);
//! - [`plugin_registry`]: NCZarr plugin discovery and pairing (safe code); [`plugin_loader`]: its FFI;
//! - [`filter_chain`]: an NCZarr variable's filters and the chunk filter chain (safe code);
//! - [`filters`]: the standard filters themselves (safe code, but for the calls into libblosc and
//!   libsz and the SIMD shuffle kernels);
//! - [`c_types`]: the `repr(C)` types of netcdf-c's public filter headers;
//! - [`netcdf_sys`]: bindings to netcdf-c internals (dispatch layer); [`hdf5_sys`]: to HDF5;
//! - [`abi_layout`]: the layout table the ABI check compares with netcdf-c's headers;
//! - [`c_heap`], [`ffi_boundary`], [`error`]: C heap, panic boundary, status codes.
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
pub mod standard_filters;

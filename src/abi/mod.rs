// SPDX-License-Identifier: BSD-3-Clause
//! Every symbol ncfilters exports to C, grouped by the netcdf-c file it replaces.
//!
//! Each export only converts arguments and calls safe Rust, its body inside
//! [`ffi_export!`](crate::ffi_export) (the panic boundary: a panic becomes the return type's
//! failure value) with its pointer arguments checked by [`reject_null!`](crate::reject_null)
//! and each converted once into a typed handle by its `FromRawArgument::from_raw`, in an `unsafe` block
//! with its `SAFETY:` comment (`crate::c_args`);
//! `null_arguments` holds every export to the first two. NCZarr's policy is
//! `crate::nczarr_filters`'.
//!
//! Every export's `# Safety` includes one condition it does not repeat: like netcdf-c's own
//! functions, it is called on the thread that uses netcdf-c and HDF5, and not from two threads at
//! once (HDF5 built without thread safety, netcdf-c's lists): each body's
//! `CallersThread::promise` relies on it.
//!
//! `ncfilters_api` is ncfilters' own API (`include/ncfilters.h`), not netcdf-c's; `plugin_path_api` is
//! netcdf-c 4.9.3's plugin-path API, added to 4.9.0 builds.
//!
//! The standard filters' `H5Z_func_t` entry points and plugin statics are the ncfilters-plugin
//! crate's, which the plugin libraries (`plugins/`) build on without these exports; they are
//! re-exported here as `h5z` and `plugin`.

pub use ncfilters_plugin::{h5z, plugin};

pub mod builtin;
pub mod filter_api;
pub mod hdf5filter;
pub mod ncaux_filterspec;
pub mod ncfilters_api;
#[cfg(test)]
mod null_arguments;
pub mod plugin_path_api;
pub mod zfilter;

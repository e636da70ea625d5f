//! Every symbol ncfilters exports to C, grouped by the netcdf-c file it replaces.
//!
//! Each export only converts arguments and calls safe Rust, its body inside
//! [`ffi_export!`](crate::ffi_export) (the panic boundary: a panic becomes the return type's
//! failure value) with its pointer arguments checked by [`reject_null!`](crate::reject_null);
//! `null_arguments` holds every export to that.
//!
//! `filter_report` is ncfilters' own API (`include/ncfilters.h`), not netcdf-c's; `plugin_path` is
//! netcdf-c 4.9.3's plugin-path API, added to 4.9.0 builds.
//!
//! The netcdf-c replacements are behind the default feature `netcdf-abi`; the plugin libraries
//! (`plugins/`) build without it, so they export only their plugin entry points.

#[cfg(feature = "netcdf-abi")]
pub mod builtin;
#[cfg(feature = "netcdf-abi")]
pub mod filter_api;
#[cfg(feature = "netcdf-abi")]
pub mod filter_report;
#[cfg(feature = "netcdf-abi")]
pub mod filterspec;
pub mod h5z;
#[cfg(feature = "netcdf-abi")]
pub mod hdf5filter;
#[cfg(all(test, feature = "netcdf-abi"))]
mod null_arguments;
pub mod plugin;
#[cfg(feature = "netcdf-abi")]
pub mod plugin_path;
#[cfg(feature = "netcdf-abi")]
pub mod zfilter;

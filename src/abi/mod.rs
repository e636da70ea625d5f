//! Every symbol ncfilters exports to C, grouped by the netcdf-c file it replaces.
//!
//! Each export only converts arguments, runs inside [`crate::ffi_boundary::status_of`]
//! (so panics become `NC_EINTERNAL`) and calls safe Rust.

//!
//! The netcdf-c replacements are behind the default feature `netcdf-abi`; the plugin libraries
//! (`plugins/`) build without it, so they export only their plugin entry points.

#[cfg(feature = "netcdf-abi")]
pub mod builtin;
#[cfg(feature = "netcdf-abi")]
pub mod filter_api;
#[cfg(feature = "netcdf-abi")]
pub mod filterspec;
pub mod h5z;
#[cfg(feature = "netcdf-abi")]
pub mod hdf5filter;
pub mod plugin;
#[cfg(feature = "netcdf-abi")]
pub mod zfilter;

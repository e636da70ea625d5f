//! Every symbol ncfilters exports to C, grouped by the netcdf-c file it replaces.
//!
//! Each export only converts arguments, runs inside [`crate::ffi_boundary::status_of`]
//! (so panics become `NC_EINTERNAL`) and calls safe Rust.

pub mod filter_api;
pub mod filterspec;
pub mod h5z;
pub mod hdf5filter;
pub mod zfilter;

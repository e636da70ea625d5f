// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters: netcdf-c's filter code exported with the exact C ABI of the netcdf-c release it is
//! built for ([`NETCDF_RELEASE`]: 4.9.0, 4.9.2, 4.9.3, 4.10.0 or 4.10.1, chosen by ncfilters-logic's `build.rs`).
//!
//! The filter logic is the `ncfilters-core` crate, and the standard filters' HDF5 entry points the
//! `ncfilters-plugin` crate (which the plugin libraries share); this crate is what netcdf-c links.
//! Its modules, lowest first (`tests/layers.rs` checks the order, and that neither crate below
//! uses them):
//! 1. [`netcdf_internals`]: netcdf-c's internals, mirrored, and safe handles to its variables
//!    and files, through the shim's functions (the NCZarr filter lists hold
//!    ncfilters-core's `filter_chain` filters); then [`abi_layout`]: the layout table the ABI
//!    check compares with netcdf-c's headers;
//! 2. [`nczarr_filters`]: NCZarr's filter policy (the registry with the built-in filters, defining
//!    a filter, `.zarray`'s codecs, a chain's stages); then [`hdf5_filters`]: netCDF-4/HDF5's
//!    (defining a filter, whether one will run, which classes are ncfilters' stand-ins); safe
//!    code the exports call;
//! 3. [`abi`]: every exported C function, one file per replaced netcdf-c source file, and the
//!    built-in standard filters.
//!
//! The modules of the crates below are re-exported under their own names, so `crate::filters`
//! here is `ncfilters_core::filters` and `crate::hdf5_sys` is `ncfilters_plugin::hdf5_sys`.
//! Public to Rust are only what `tests/`, fuzz and the tools use.
#![deny(unsafe_op_in_unsafe_fn)]
// The plugin path trusts the environment (core's `plugin_path`): no allow may change it.
#![forbid(clippy::disallowed_methods)]
// The layer list above names the crate-private modules too.
#![allow(rustdoc::private_intra_doc_links)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub use ncfilters_core::{
    c_args, c_types, codec_json, error, ffi_boundary, ffi_export, filters, filterspec, function_name, reject_null,
    standard_filter_table, NETCDF_RELEASE, PLUGIN_PATH_RELEASE,
};
pub(crate) use ncfilters_core::{
    c_heap, filter_chain, filter_report, filter_rules, plugin_loader, plugin_path, plugin_registry, registry_report,
    standard_filters,
};

pub(crate) use ncfilters_plugin::hdf5_sys;

// The layers, lowest first (`tests/layers.rs` reads this order).
pub(crate) mod netcdf_internals;
pub mod abi_layout;
pub(crate) mod nczarr_filters;
pub(crate) mod hdf5_filters;
pub mod abi;

/// What the integration tests in `tests/` reach beyond the C ABI; not part of any interface.
///
/// A variable's handle lives only for the call that found it: it cannot be kept past the export's
/// body, neither for HDF5 nor for NCZarr.
///
/// ```compile_fail,E0521
/// use ncfilters::c_args::with_call;
/// use ncfilters::ffi_boundary::CallersThread;
/// use ncfilters::test_support::find_hdf5_var;
/// let mut kept = None;
/// with_call(unsafe { CallersThread::promise() }, |call| {
///     // SAFETY: the only handle to the variable.
///     kept = unsafe { find_hdf5_var(call, 65536, 0) }.ok();
/// });
/// drop(kept);
/// ```
///
/// ```compile_fail,E0521
/// use ncfilters::c_args::with_call;
/// use ncfilters::ffi_boundary::CallersThread;
/// use ncfilters::test_support::ZarrLocation;
/// let mut kept = None;
/// with_call(unsafe { CallersThread::promise() }, |call| {
///     // SAFETY: the only handle to the variable.
///     kept = unsafe { ZarrLocation::find(call, 65536, 0) }.ok();
/// });
/// drop(kept);
/// ```
///
/// A location's file is private: the safe `in_define_mode` and `is_parallel` (HDF5's) or
/// `parallel` (NCZarr's) read through it.
///
/// ```compile_fail,E0616
/// use ncfilters::c_args::with_call;
/// use ncfilters::ffi_boundary::CallersThread;
/// with_call(unsafe { CallersThread::promise() }, |call| {
///     // SAFETY: the only handle to the variable.
///     let mut hdf5 = unsafe { ncfilters::test_support::find_hdf5_var(call, 65536, 0) }.unwrap();
///     hdf5.file = std::ptr::NonNull::dangling();
/// });
/// ```
///
/// ```compile_fail,E0616
/// use ncfilters::c_args::with_call;
/// use ncfilters::ffi_boundary::CallersThread;
/// with_call(unsafe { CallersThread::promise() }, |call| {
///     // SAFETY: the only handle to the variable.
///     let mut zarr = unsafe { ncfilters::test_support::ZarrLocation::find(call, 65536, 0) }.unwrap();
///     zarr.file = std::ptr::NonNull::dangling();
/// });
/// ```
///
/// Freeing a variable's incomplete filters trusts its `incompletefilters`, which safe code may
/// rewrite through the variable's handle:
///
/// ```compile_fail,E0133
/// let _free = |info| ncfilters::test_support::free_incomplete_filters(info);
/// ```
///
/// Asking netcdf-c about a variable's filters writes as many as that variable has, so the
/// caller vouches for the room:
///
/// ```compile_fail,E0133
/// use ncfilters::{c_args::CountedOut, test_support::FormatFilters};
/// fn ask(filters: &FormatFilters<'_>, ids: &mut CountedOut<'_, u32>) {
///     let _ = filters.inquire_ids(1, ids);
/// }
/// ```
///
/// ```compile_fail,E0133
/// use ncfilters::{c_args::CountedOut, test_support::FormatFilters};
/// fn ask(filters: &FormatFilters<'_>, params: &mut CountedOut<'_, u32>) {
///     let _ = filters.inquire_info(1, 2, params);
/// }
/// ```
#[doc(hidden)]
pub mod test_support {
    pub use crate::netcdf_internals::hdf5_var::find_hdf5_var;
    pub use crate::netcdf_internals::nczarr::{free_incomplete_filters, CJson, FilterList, ZarrLocation};
    pub use crate::netcdf_internals::{netcdf_linked, FormatFilters};
    pub use crate::plugin_registry::finalize as forget_plugins;

    /// Whether the NCZarr registry (discovered now if need be) has a complete filter `id`.
    pub fn registry_has(call: &crate::ffi_boundary::Call<'_>, id: u32) -> bool {
        crate::nczarr_filters::registry(call).get(id).is_some()
    }
}

/// `body` within a unit test's call: the test's thread stands for the one that uses netcdf-c.
#[cfg(test)]
pub(crate) fn in_test_call<R>(body: impl for<'call> FnOnce(&ffi_boundary::Call<'call>) -> R) -> R {
    // SAFETY: a unit test's thread is the only one that calls netcdf-c or HDF5 in its test.
    let thread = unsafe { ffi_boundary::CallersThread::promise() };
    ffi_boundary::with_call(thread, body)
}

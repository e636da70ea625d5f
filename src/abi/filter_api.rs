// SPDX-License-Identifier: BSD-3-Clause
//! `netcdf_filter.h`: the public filter API (replacing `libdispatch/dfilter.c`).
//!
//! Same signatures, check order and return codes as netcdf-c 4.9.0; the intended
//! differences are listed in docs/compatibility.md.

use crate::c_args::{Call, CountedOut, FromRawArgument, Out, Params};
use crate::c_types::ids::{H5Z_FILTER_BLOSC, H5Z_FILTER_BZIP2, H5Z_FILTER_ZSTD};
use crate::error::{NcResult, NC_EFILTER};
use crate::netcdf_internals::{type_is_fixed_size, var_type, FormatFilters};
use crate::standard_filters::{self, BloscSettings};
use std::os::raw::{c_int, c_uint};

/// Defines a filter on a variable (in netcdf-c 4.9.0 not on variable-length types: `NC_EFILTER`).
///
/// From 4.9.3 on the format decides: HDF5 makes the filter optional, NCZarr keeps it unapplied.
///
/// # Safety
/// `params` is NULL or readable for `nparams` words.
#[no_mangle]
pub unsafe extern "C" fn nc_def_var_filter(
    ncid: c_int,
    varid: c_int,
    id: c_uint,
    nparams: usize,
    parms: *const c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    // SAFETY: `(parms, nparams)` is NULL (only with no parameters) or readable for as many words (the export's
    // `# Safety`).
    crate::ffi_export!(thread, |call| define_filter(call, ncid, varid, id, unsafe {
        Params::from_raw(call, (parms, nparams))
    }))
}

/// `nc_def_var_filter`'s checks, in its order (the parameters' after the variable's type), then
/// the format's own entry.
fn define_filter(call: &Call<'_>, ncid: c_int, varid: c_int, id: u32, params: NcResult<&[u32]>) -> NcResult<()> {
    let filters = FormatFilters::of(call, ncid)?;
    if !cfg!(ncf_vlen_filters) && !type_is_fixed_size(call, ncid, var_type(call, ncid, varid)?)? {
        return Err(NC_EFILTER);
    }
    filters.define(varid, id, params?)
}

/// The ids of a variable's filters, in application order; `ids` NULL asks for the count.
///
/// # Safety
/// `nfiltersp` is NULL or writable; `ids` is NULL or has room for every filter id.
#[no_mangle]
pub unsafe extern "C" fn nc_inq_var_filter_ids(
    ncid: c_int,
    varid: c_int,
    nfilters: *mut usize,
    filterids: *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        let filters = FormatFilters::of(call, ncid)?;
        // SAFETY: `(nfilters, filterids)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // ids of this `(ncid, varid)`, the one asked (the export's `# Safety`).
        unsafe { filters.inquire_ids(varid, &mut CountedOut::<c_uint>::from_raw(call, (nfilters, filterids))) }
    })
}

/// The parameters of filter `id` on a variable; `NC_ENOFILTER` if it has none such.
///
/// # Safety
/// `nparamsp` is NULL or writable; `params` is NULL or has room for every parameter.
#[no_mangle]
pub unsafe extern "C" fn nc_inq_var_filter_info(
    ncid: c_int,
    varid: c_int,
    id: c_uint,
    nparams: *mut usize,
    params: *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        let filters = FormatFilters::of(call, ncid)?;
        // SAFETY: `(nparams, params)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // parameters of this `(ncid, varid, id)`, the one asked (the export's `# Safety`).
        unsafe { filters.inquire_info(varid, id, &mut CountedOut::<c_uint>::from_raw(call, (nparams, params))) }
    })
}

/// The first filter of a variable; `*idp = 0` (and nothing else written) when it has none.
///
/// # Safety
/// Each out-pointer is NULL or writable; `params` has room for the first filter's parameters.
#[no_mangle]
pub unsafe extern "C" fn nc_inq_var_filter(
    ncid: c_int,
    varid: c_int,
    idp: *mut c_uint,
    nparams: *mut usize,
    params: *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        let filters = FormatFilters::of(call, ncid)?;
        // SAFETY: `idp` is NULL or valid for a write (the export's `# Safety`).
        let mut idp = unsafe { Out::<c_uint>::from_raw(call, idp) };
        let Some(&first) = filters.ids(varid)?.first() else {
            idp.write(0);
            return Ok(());
        };
        // SAFETY: `(nparams, params)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // first filter's parameters, the one asked (the export's `# Safety`).
        unsafe { filters.inquire_info(varid, first, &mut CountedOut::<c_uint>::from_raw(call, (nparams, params))) }?;
        idp.write(first);
        Ok(())
    })
}

/// `NC_NOERR` if filter `id` can be used with this file, else `NC_ENOFILTER`.
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn nc_inq_filter_avail(ncid: c_int, id: c_uint) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| FormatFilters::of(call, ncid)?.available(id))
}

/// Defines one standard filter after checking it is available, as dfilter.c does.
fn define_standard<const N: usize>(
    call: &Call<'_>,
    ncid: c_int,
    varid: c_int,
    id: u32,
    params: NcResult<[u32; N]>,
) -> NcResult<()> {
    FormatFilters::of(call, ncid)?.available(id)?;
    let params = params?;
    define_filter(call, ncid, varid, id, Ok(&params))
}

/// The parameters of filter `id` on a variable, or `None` if it is not defined there.
fn defined_params(call: &Call<'_>, ncid: c_int, varid: c_int, id: u32) -> NcResult<Option<Vec<u32>>> {
    let filters = FormatFilters::of(call, ncid)?;
    filters.available(id)?;
    filters.params(varid, id)
}

/// Shared body of the `nc_inq_var_{bzip2,zstandard}` helpers: 1 level parameter.
fn inquire_level(
    call: &Call<'_>,
    ncid: c_int,
    varid: c_int,
    id: u32,
    mut hasfilterp: Out<c_int>,
    mut levelp: Out<c_int>,
) -> NcResult<()> {
    let mut found = (0, 0);
    let mut inquire = || {
        if let Some(params) = defined_params(call, ncid, varid, id)? {
            found.0 = 1;
            found.1 = standard_filters::single_level(&params)?;
        }
        Ok(())
    };
    let result = inquire();
    // Written on every exit, as in 4.9.0.
    levelp.write(found.1);
    hasfilterp.write(found.0);
    result
}

/// bzip2 (id 307) with block size `level` 1..=9.
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn nc_def_var_bzip2(ncid: c_int, varid: c_int, level: c_int) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        define_standard(call, ncid, varid, H5Z_FILTER_BZIP2, standard_filters::bzip2_params(level))
    })
}

/// Whether bzip2 is on for a variable, and its level.
///
/// # Safety
/// `hasfilterp` and `levelp` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nc_inq_var_bzip2(
    ncid: c_int,
    varid: c_int,
    hasfilterp: *mut c_int,
    levelp: *mut c_int,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        // SAFETY: `hasfilterp` is NULL or valid for a write; `levelp` is NULL or valid for a write (the export's
        // `# Safety`).
        inquire_level(
            call,
            ncid,
            varid,
            H5Z_FILTER_BZIP2,
            unsafe { Out::<c_int>::from_raw(call, hasfilterp) },
            unsafe { Out::<c_int>::from_raw(call, levelp) },
        )
    })
}

/// Zstandard (id 32015) at `level` -131072..=22. `NC_ENOFILTER` when no zstd filter is available
/// (4.9.0 built without zstd returned `NC_NOERR` and did nothing).
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn nc_def_var_zstandard(ncid: c_int, varid: c_int, level: c_int) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        define_standard(call, ncid, varid, H5Z_FILTER_ZSTD, standard_filters::zstd_params(level))
    })
}

/// Whether Zstandard is on for a variable, and its level.
///
/// # Safety
/// `hasfilterp` and `levelp` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nc_inq_var_zstandard(
    ncid: c_int,
    varid: c_int,
    hasfilterp: *mut c_int,
    levelp: *mut c_int,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        // SAFETY: `hasfilterp` is NULL or valid for a write; `levelp` is NULL or valid for a write (the export's
        // `# Safety`).
        inquire_level(call, ncid, varid, H5Z_FILTER_ZSTD, unsafe { Out::<c_int>::from_raw(call, hasfilterp) }, unsafe {
            Out::<c_int>::from_raw(call, levelp)
        })
    })
}

/// Blosc (id 32001). `NC_ENOFILTER` when no blosc filter is available (4.9.0 built without
/// blosc returned `NC_NOERR` and did nothing).
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn nc_def_var_blosc(
    ncid: c_int,
    varid: c_int,
    subcompressor: c_uint,
    level: c_uint,
    blocksize: c_uint,
    addshuffle: c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        let params = standard_filters::blosc_params(BloscSettings { subcompressor, level, blocksize, addshuffle });
        define_standard(call, ncid, varid, H5Z_FILTER_BLOSC, params)
    })
}

/// Whether Blosc is on for a variable, and its settings.
///
/// # Safety
/// Each out-pointer is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nc_inq_var_blosc(
    ncid: c_int,
    varid: c_int,
    hasfilterp: *mut c_int,
    subcompressorp: *mut c_uint,
    levelp: *mut c_uint,
    blocksizep: *mut c_uint,
    addshufflep: *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        let mut hasfilter = 0;
        let mut inquire = || {
            let Some(params) = defined_params(call, ncid, varid, H5Z_FILTER_BLOSC)? else {
                return Ok(());
            };
            hasfilter = 1;
            let settings = standard_filters::blosc_settings(&params)?;
            // SAFETY: `blocksizep` is NULL or valid for a write (the export's `# Safety`).
            unsafe { Out::<c_uint>::from_raw(call, blocksizep) }.write(settings.blocksize);
            // SAFETY: `levelp` is NULL or valid for a write (the export's `# Safety`).
            unsafe { Out::<c_uint>::from_raw(call, levelp) }.write(settings.level);
            // SAFETY: `addshufflep` is NULL or valid for a write (the export's `# Safety`).
            unsafe { Out::<c_uint>::from_raw(call, addshufflep) }.write(settings.addshuffle);
            // SAFETY: `subcompressorp` is NULL or valid for a write (the export's `# Safety`).
            unsafe { Out::<c_uint>::from_raw(call, subcompressorp) }.write(settings.subcompressor);
            Ok(())
        };
        let result = inquire();
        // Written on every exit, as in 4.9.0.
        // SAFETY: `hasfilterp` is NULL or valid for a write (the export's `# Safety`).
        unsafe { Out::<c_int>::from_raw(call, hasfilterp) }.write(hasfilter);
        result
    })
}

// SPDX-License-Identifier: BSD-3-Clause
//! `netcdf_filter.h`: the public filter API (replacing `libdispatch/dfilter.c`).
//!
//! Same signatures, check order and return codes as netcdf-c 4.9.0; the intended
//! differences are listed in docs/compatibility.md.

use crate::c_types::ids::{H5Z_FILTER_BLOSC, H5Z_FILTER_BZIP2, H5Z_FILTER_ZSTD};
use crate::error::{check, report, NcError, NcResult, NC_EFILTER, NC_EINTERNAL, NC_EINVAL, NC_ENOFILTER};
use crate::ffi_boundary::write_opt;
use crate::netcdf_sys::{dispatch_table, type_is_fixed_size, var_type};
use crate::standard_filters::{self, BloscSettings};
use std::os::raw::{c_int, c_uint};
use std::ptr;

fn missing_entry(ncid: c_int, entry: &str) -> NcError {
    report(format_args!("ncid {ncid}: the format's dispatch table has no {entry} entry"));
    NC_EINTERNAL
}

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
    crate::ffi_export!(|| {
        let table = dispatch_table(ncid)?;
        if !cfg!(ncf_vlen_filters) && !type_is_fixed_size(ncid, var_type(ncid, varid)?)? {
            return Err(NC_EFILTER);
        }
        if nparams > 0 && parms.is_null() {
            return Err(NC_EINVAL);
        }
        let define = table.def_var_filter.ok_or_else(|| missing_entry(ncid, "def_var_filter"))?;
        // SAFETY: the caller's arguments are forwarded unchanged to the format's own entry.
        check(unsafe { define(ncid, varid, id, nparams, parms) })
    })
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
    crate::ffi_export!(|| {
        let table = dispatch_table(ncid)?;
        let inquire = table.inq_var_filter_ids.ok_or_else(|| missing_entry(ncid, "inq_var_filter_ids"))?;
        // SAFETY: the caller's arguments are forwarded unchanged to the format's own entry.
        check(unsafe { inquire(ncid, varid, nfilters, filterids) })
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
    crate::ffi_export!(|| {
        let table = dispatch_table(ncid)?;
        let inquire = table.inq_var_filter_info.ok_or_else(|| missing_entry(ncid, "inq_var_filter_info"))?;
        // SAFETY: the caller's arguments are forwarded unchanged to the format's own entry.
        check(unsafe { inquire(ncid, varid, id, nparams, params) })
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
    crate::ffi_export!(|| {
        dispatch_table(ncid)?;
        let mut count = 0usize;
        // SAFETY: count is a valid out-pointer; a NULL ids vector asks for the count only.
        check(unsafe { nc_inq_var_filter_ids(ncid, varid, &mut count, ptr::null_mut()) })?;
        if count == 0 {
            // SAFETY: idp is NULL or writable per the contract.
            unsafe { write_opt(idp, 0) };
            return Ok(());
        }
        let mut ids = vec![0 as c_uint; count];
        // SAFETY: ids has room for `count` ids, the number just reported.
        check(unsafe { nc_inq_var_filter_ids(ncid, varid, &mut count, ids.as_mut_ptr()) })?;
        // SAFETY: the caller's out-pointers are forwarded unchanged.
        check(unsafe { nc_inq_var_filter_info(ncid, varid, ids[0], nparams, params) })?;
        // SAFETY: idp is NULL or writable per the contract.
        unsafe { write_opt(idp, ids[0]) };
        Ok(())
    })
}

/// `NC_NOERR` if filter `id` can be used with this file, else `NC_ENOFILTER`.
#[no_mangle]
pub extern "C" fn nc_inq_filter_avail(ncid: c_int, id: c_uint) -> c_int {
    crate::ffi_export!(|| {
        let table = dispatch_table(ncid)?;
        let inquire = table.inq_filter_avail.ok_or_else(|| missing_entry(ncid, "inq_filter_avail"))?;
        // SAFETY: plain integer arguments forwarded to the format's own entry.
        check(unsafe { inquire(ncid, id) })
    })
}

/// Defines one standard filter after checking it is available, as dfilter.c does.
fn define_standard<const N: usize>(ncid: c_int, varid: c_int, id: u32, params: NcResult<[u32; N]>) -> NcResult<()> {
    check(nc_inq_filter_avail(ncid, id))?;
    let params = params?;
    // SAFETY: params is a live slice of params.len() words.
    check(unsafe { nc_def_var_filter(ncid, varid, id, params.len(), params.as_ptr()) })
}

/// The parameters of filter `id` on a variable, or `None` if it is not defined there.
fn defined_params(ncid: c_int, varid: c_int, id: u32) -> NcResult<Option<Vec<u32>>> {
    check(nc_inq_filter_avail(ncid, id))?;
    let mut count = 0usize;
    // SAFETY: count is a valid out-pointer; NULL params asks for the count only.
    match check(unsafe { nc_inq_var_filter_info(ncid, varid, id, &mut count, ptr::null_mut()) }) {
        Err(NC_ENOFILTER) => return Ok(None),
        result => result?,
    }
    let mut params = vec![0 as c_uint; count];
    // SAFETY: params has room for the `count` words just reported.
    check(unsafe { nc_inq_var_filter_info(ncid, varid, id, &mut count, params.as_mut_ptr()) })?;
    params.truncate(count);
    Ok(Some(params))
}

/// Shared body of the `nc_inq_var_{bzip2,zstandard}` helpers: 1 level parameter.
///
/// # Safety
/// `hasfilterp` and `levelp` are NULL or writable.
unsafe fn inquire_level(
    ncid: c_int,
    varid: c_int,
    id: u32,
    hasfilterp: *mut c_int,
    levelp: *mut c_int,
) -> NcResult<()> {
    let mut found = (0, 0);
    let mut inquire = || {
        if let Some(params) = defined_params(ncid, varid, id)? {
            found.0 = 1;
            found.1 = standard_filters::single_level(&params)?;
        }
        Ok(())
    };
    let result = inquire();
    // SAFETY: out-pointers are NULL or writable per the contract; written on every exit as in 4.9.0.
    unsafe {
        write_opt(levelp, found.1);
        write_opt(hasfilterp, found.0);
    }
    result
}

/// bzip2 (id 307) with block size `level` 1..=9.
#[no_mangle]
pub extern "C" fn nc_def_var_bzip2(ncid: c_int, varid: c_int, level: c_int) -> c_int {
    crate::ffi_export!(|| { define_standard(ncid, varid, H5Z_FILTER_BZIP2, standard_filters::bzip2_params(level)) })
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
    // SAFETY: forwarded contract.
    crate::ffi_export!(|| unsafe { inquire_level(ncid, varid, H5Z_FILTER_BZIP2, hasfilterp, levelp) })
}

/// Zstandard (id 32015) at `level` -131072..=22. `NC_ENOFILTER` when no zstd filter is available
/// (4.9.0 built without zstd returned `NC_NOERR` and did nothing).
#[no_mangle]
pub extern "C" fn nc_def_var_zstandard(ncid: c_int, varid: c_int, level: c_int) -> c_int {
    crate::ffi_export!(|| { define_standard(ncid, varid, H5Z_FILTER_ZSTD, standard_filters::zstd_params(level)) })
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
    // SAFETY: forwarded contract.
    crate::ffi_export!(|| unsafe { inquire_level(ncid, varid, H5Z_FILTER_ZSTD, hasfilterp, levelp) })
}

/// Blosc (id 32001). `NC_ENOFILTER` when no blosc filter is available (4.9.0 built without
/// blosc returned `NC_NOERR` and did nothing).
#[no_mangle]
pub extern "C" fn nc_def_var_blosc(
    ncid: c_int,
    varid: c_int,
    subcompressor: c_uint,
    level: c_uint,
    blocksize: c_uint,
    addshuffle: c_uint,
) -> c_int {
    crate::ffi_export!(|| {
        let params = standard_filters::blosc_params(BloscSettings { subcompressor, level, blocksize, addshuffle });
        define_standard(ncid, varid, H5Z_FILTER_BLOSC, params)
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
    crate::ffi_export!(|| {
        let mut hasfilter = 0;
        let mut inquire = || {
            let Some(params) = defined_params(ncid, varid, H5Z_FILTER_BLOSC)? else {
                return Ok(());
            };
            hasfilter = 1;
            let settings = standard_filters::blosc_settings(&params)?;
            // SAFETY: out-pointers are NULL or writable per the contract.
            unsafe {
                write_opt(blocksizep, settings.blocksize);
                write_opt(levelp, settings.level);
                write_opt(addshufflep, settings.addshuffle);
                write_opt(subcompressorp, settings.subcompressor);
            }
            Ok(())
        };
        let result = inquire();
        // SAFETY: hasfilterp is NULL or writable; written on every exit as in 4.9.0.
        unsafe { write_opt(hasfilterp, hasfilter) };
        result
    })
}

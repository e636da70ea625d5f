// SPDX-License-Identifier: BSD-3-Clause
//! The netCDF-4/HDF5 filter backend (replacing `libhdf5/hdf5filter.c`): the HDF5 dispatch
//! table's filter entries and the list functions the rest of libhdf5 calls.

use crate::c_args::{CountedOut, FromRawArgument, Out, Params};
use crate::error::NC_ENOFILTER;
use crate::filter_rules as rules;
use crate::hdf5_filters::{add_filter, filter_will_run};
use crate::netcdf_internals::check_ncid;
use crate::netcdf_internals::hdf5_var::{find_hdf5_var, Hdf5Var};
use crate::netcdf_internals::nc4::{NC_HDF5_Filter, NC_HDF5_FILTER_MISSING, NC_VAR_INFO};
use std::os::raw::{c_int, c_uint};

/// # Safety
/// `var` is NULL or a live HDF5 variable; `params` is NULL or readable for `nparams` words.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_addfilter(
    var: *mut NC_VAR_INFO,
    id: c_uint,
    nparams: usize,
    params: *const c_uint,
    flags: c_int,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live variable of an HDF5 file not accessed elsewhere during the call; `(params, nparams)`
        // is NULL (only with no parameters) or readable for as many words (the export's `# Safety`).
        let (mut var, params) =
            (unsafe { Hdf5Var::from_raw(call, var) }?, unsafe { Params::from_raw(call, (params, nparams)) }?);
        add_filter(&mut var, id, params, flags)
    })
}

/// Defines (or re-defines) a filter on a variable of a netCDF-4/HDF5 file in define mode.
///
/// # Safety
/// `params` is NULL or readable for `nparams` words.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_def_var_filter(
    ncid: c_int,
    varid: c_int,
    id: c_uint,
    nparams: usize,
    params: *const c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        check_ncid(call, ncid)?;
        // SAFETY: the only handle to the variable this call makes, dropped when it returns.
        let mut found = unsafe { find_hdf5_var(call, ncid, varid) }?;
        rules::check_definable(found.in_define_mode(), found.var.ndims(), found.var.created())?;
        let access = rules::parallel_access_for_filter(found.is_parallel())?;
        filter_will_run(call, id)?;
        found.var.ensure_list()?;
        // SAFETY: `(params, nparams)` is NULL (only with no parameters) or readable for as many words (the export's
        // `# Safety`).
        let params = unsafe { Params::from_raw(call, (params, nparams)) }?;
        rules::define_filter(&mut found, id, params)?;
        if access == rules::ParallelAccess::Collective {
            found.set_collective();
        }
        Ok(())
    })
}

/// The ids of a variable's filters in application order; `ids` NULL asks for the count.
///
/// # Safety
/// `nfiltersp` is NULL or writable; `ids` is NULL or has room for every id.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_inq_var_filter_ids(
    ncid: c_int,
    varid: c_int,
    nfiltersp: *mut usize,
    ids: *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        check_ncid(call, ncid)?;
        // SAFETY: the only handle to the variable this call makes, dropped when it returns.
        let found = unsafe { find_hdf5_var(call, ncid, varid) }?;
        // SAFETY: `(nfiltersp, ids)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // answer; the answer is the one the caller made room for (netcdf-c's count-first contract) (the export's
        // `# Safety`).
        unsafe { CountedOut::<_>::from_raw(call, (nfiltersp, ids)).write(&found.var.ids()) };
        Ok(())
    })
}

/// The parameters of filter `id` on a variable; `NC_ENOFILTER` if it is not there.
///
/// # Safety
/// `nparamsp` is NULL or writable; `params` is NULL or has room for every parameter.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_inq_var_filter_info(
    ncid: c_int,
    varid: c_int,
    id: c_uint,
    nparamsp: *mut usize,
    params: *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        check_ncid(call, ncid)?;
        // SAFETY: the only handle to the variable this call makes, dropped when it returns.
        let mut found = unsafe { find_hdf5_var(call, ncid, varid) }?;
        found.var.ensure_list()?;
        let index = found.var.position(id).ok_or(NC_ENOFILTER)?;
        // SAFETY: `(nparamsp, params)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // answer; the answer is the one the caller made room for (netcdf-c's count-first contract) (the export's
        // `# Safety`).
        unsafe { CountedOut::<_>::from_raw(call, (nparamsp, params)).write(&found.var.params(index)) };
        Ok(())
    })
}

/// `NC_NOERR` if HDF5 can apply filter `id` (built in, registered, or found on `HDF5_PLUGIN_PATH`).
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_inq_filter_avail(_ncid: c_int, id: c_uint) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| filter_will_run(call, id))
}

/// Finds filter `id` on the variable (creating its empty list if it has none).
///
/// # Safety
/// `var` is NULL or a live HDF5 variable; `specp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_filter_lookup(
    var: *mut NC_VAR_INFO,
    id: c_uint,
    specp: *mut *mut NC_HDF5_Filter,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live variable of an HDF5 file not accessed elsewhere during the call (the export's
        // `# Safety`).
        let mut var = unsafe { Hdf5Var::from_raw(call, var) }?;
        var.ensure_list()?;
        let index = var.position(id).ok_or(NC_ENOFILTER)?;
        // SAFETY: `specp` is NULL or valid for a write (the export's `# Safety`).
        var.give_filter_address(index, &mut unsafe { Out::<_>::from_raw(call, specp) });
        Ok(())
    })
}

/// Removes filter `id` from the variable (the last occurrence, as 4.9.0 walks backwards).
///
/// # Safety
/// `var` is NULL or a live HDF5 variable.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_filter_remove(var: *mut NC_VAR_INFO, id: c_uint) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live variable of an HDF5 file not accessed elsewhere during the call (the export's
        // `# Safety`).
        let mut var = unsafe { Hdf5Var::from_raw(call, var) }?;
        let index = var.ids().iter().rposition(|&f| f == id).ok_or(NC_ENOFILTER)?;
        var.remove(index);
        Ok(())
    })
}

/// Frees the variable's filters and list (`var->filters` becomes NULL).
///
/// # Safety
/// `var` is NULL or a live HDF5 variable.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_filter_freelist(var: *mut NC_VAR_INFO) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live variable of an HDF5 file not accessed elsewhere during the call (the export's
        // `# Safety`).
        unsafe { Hdf5Var::from_raw(call, var) }?.free_list();
        Ok(())
    })
}

/// The id of the first filter HDF5 could not find when the file was opened, or 0.
///
/// # Safety
/// `var` is NULL or a live HDF5 variable; `idp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_find_missing_filter(var: *mut NC_VAR_INFO, idp: *mut c_uint) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live variable of an HDF5 file not accessed elsewhere during the call (the export's
        // `# Safety`).
        let var = unsafe { Hdf5Var::from_raw(call, var) }?;
        let missing = (0..var.count())
            .map(|i| var.filter(i))
            .find(|f| f.flags & NC_HDF5_FILTER_MISSING != 0)
            .map_or(0, |f| f.filterid);
        // SAFETY: `idp` is NULL or valid for a write (the export's `# Safety`).
        unsafe { Out::<_>::from_raw(call, idp) }.write(missing);
        Ok(())
    })
}

/// Registers the built-in standard filters HDF5 lacks ([`super::builtin`]).
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_filter_initialize() -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        super::builtin::register_standard_filters(call);
        Ok(())
    })
}

/// Nothing to tear down.
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn NC4_hdf5_filter_finalize() -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |_| Ok(()))
}

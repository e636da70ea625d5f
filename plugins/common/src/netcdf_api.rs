// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c's public API as the filters call it back: a variable's type, dimensions, chunks and
//! byte order for the codecs' `NCZ_modify_parameters`, and `nc_initialize`.
//!
//! Reached through `shim.c`: inside libnetcdf the weak references bind to netcdf-c itself; in a
//! plugin library loaded beside a libnetcdf that is not in the global scope the function is
//! looked up in the loaded objects; without netcdf-c each returns `NC_ENOTBUILT`.

use crate::error::{check, NcResult};
use std::os::raw::{c_char, c_int};

extern "C" {
    fn ncfilters_nc_initialize() -> c_int;
    fn ncfilters_nc_inq_vartype(ncid: c_int, varid: c_int, xtypep: *mut c_int) -> c_int;
    fn ncfilters_nc_inq_type(ncid: c_int, xtype: c_int, name: *mut c_char, sizep: *mut usize) -> c_int;
    fn ncfilters_nc_inq_varndims(ncid: c_int, varid: c_int, ndimsp: *mut c_int) -> c_int;
    fn ncfilters_nc_inq_vardimid(ncid: c_int, varid: c_int, dimidsp: *mut c_int) -> c_int;
    fn ncfilters_nc_inq_dimlen(ncid: c_int, dimid: c_int, lenp: *mut usize) -> c_int;
    fn ncfilters_nc_inq_var_chunking(ncid: c_int, varid: c_int, storagep: *mut c_int, chunksizesp: *mut usize)
        -> c_int;
    fn ncfilters_nc_inq_var_endian(ncid: c_int, varid: c_int, endianp: *mut c_int) -> c_int;
}

/// `NC_MAX_VAR_DIMS`.
const NC_MAX_VAR_DIMS: usize = 1024;
/// `NC_CHUNKED`, `NC_ENDIAN_LITTLE`, `NC_ENDIAN_BIG`.
const NC_CHUNKED: c_int = 0;
const NC_ENDIAN_LITTLE: c_int = 1;
const NC_ENDIAN_BIG: c_int = 2;

/// `nc_inq_varndims` and `nc_inq_vardimid`: the variable's dimension ids.
pub fn var_dim_ids(ncid: c_int, varid: c_int) -> NcResult<Vec<c_int>> {
    let mut ndims = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { ncfilters_nc_inq_varndims(ncid, varid, &mut ndims) })?;
    let ndims = usize::try_from(ndims).ok().filter(|&n| n <= NC_MAX_VAR_DIMS).ok_or(crate::error::NC_EINTERNAL)?;
    let mut ids = vec![0; ndims.max(1)];
    // SAFETY: room for ndims ids.
    check(unsafe { ncfilters_nc_inq_vardimid(ncid, varid, ids.as_mut_ptr()) })?;
    ids.truncate(ndims);
    Ok(ids)
}

/// `nc_inq_dimlen`.
pub fn dim_len(ncid: c_int, dimid: c_int) -> NcResult<usize> {
    let mut len = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { ncfilters_nc_inq_dimlen(ncid, dimid, &mut len) })?;
    Ok(len)
}

/// `nc_inq_var_chunking` of a variable of `ndims` dimensions: its chunk lengths, or `None`
/// when it is not chunked.
pub fn var_chunks(ncid: c_int, varid: c_int, ndims: usize) -> NcResult<Option<Vec<usize>>> {
    let (mut storage, mut lens) = (0, vec![0usize; ndims.max(1)]);
    // SAFETY: room for ndims lengths.
    check(unsafe { ncfilters_nc_inq_var_chunking(ncid, varid, &mut storage, lens.as_mut_ptr()) })?;
    lens.truncate(ndims);
    Ok((storage == NC_CHUNKED && ndims > 0).then_some(lens))
}

/// `nc_inq_var_endian`: `Some(true)` little-endian, `Some(false)` big-endian, `None` native.
pub fn var_little_endian(ncid: c_int, varid: c_int) -> NcResult<Option<bool>> {
    let mut endian = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { ncfilters_nc_inq_var_endian(ncid, varid, &mut endian) })?;
    Ok(match endian {
        NC_ENDIAN_LITTLE => Some(true),
        NC_ENDIAN_BIG => Some(false),
        _ => None,
    })
}

/// `nc_initialize` (idempotent): registers the built-in filters with HDF5 and silences HDF5's
/// automatic error printing, as any netCDF call would. `NC_ENOTBUILT` without netcdf-c.
pub fn initialize() -> NcResult<()> {
    // SAFETY: shim.c function with no arguments and no preconditions.
    check(unsafe { ncfilters_nc_initialize() })
}

/// `nc_inq_vartype`.
pub fn var_type(ncid: c_int, varid: c_int) -> NcResult<c_int> {
    let mut xtype = 0;
    // SAFETY: xtype is a valid out-pointer.
    check(unsafe { ncfilters_nc_inq_vartype(ncid, varid, &mut xtype) })?;
    Ok(xtype)
}

/// `nc_inq_type`: the size in bytes of type `xtype`.
pub fn type_size(ncid: c_int, xtype: c_int) -> NcResult<usize> {
    let mut size = 0usize;
    // SAFETY: size is a valid out-pointer; the name is not asked for.
    check(unsafe { ncfilters_nc_inq_type(ncid, xtype, std::ptr::null_mut(), &mut size) })?;
    Ok(size)
}

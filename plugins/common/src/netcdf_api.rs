// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c's public API as the filters call it back: a variable's type, dimensions, chunks and
//! byte order for the codecs' `NCZ_modify_parameters`, and `nc_initialize`.
//!
//! Each function takes the [`Call`] it is asked within: netcdf-c is called on its own thread only.
//!
//! Reached through `shim.c`: inside libnetcdf the weak references bind to netcdf-c itself; in a
//! plugin library loaded beside a libnetcdf that is not in the global scope the function is
//! looked up in the loaded objects; without netcdf-c each returns `NC_ENOTBUILT`.

use crate::error::{check, NcResult};
use ncfilters_core::ffi_boundary::Call;
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

/// `nc_inq_varndims`: the variable's rank, which sizes every vector netcdf-c writes for it.
fn var_ndims(ncid: c_int, varid: c_int) -> NcResult<usize> {
    let mut ndims = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { ncfilters_nc_inq_varndims(ncid, varid, &mut ndims) })?;
    usize::try_from(ndims).ok().filter(|&n| n <= NC_MAX_VAR_DIMS).ok_or(crate::error::NC_EINTERNAL)
}

/// `nc_inq_varndims` and `nc_inq_vardimid`: the variable's dimension ids.
pub fn var_dim_ids(_call: &Call<'_>, ncid: c_int, varid: c_int) -> NcResult<Vec<c_int>> {
    let ndims = var_ndims(ncid, varid)?;
    let mut ids = vec![0; ndims.max(1)];
    // SAFETY: room for ndims ids.
    check(unsafe { ncfilters_nc_inq_vardimid(ncid, varid, ids.as_mut_ptr()) })?;
    ids.truncate(ndims);
    Ok(ids)
}

/// `nc_inq_dimlen`.
pub fn dim_len(_call: &Call<'_>, ncid: c_int, dimid: c_int) -> NcResult<usize> {
    let mut len = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { ncfilters_nc_inq_dimlen(ncid, dimid, &mut len) })?;
    Ok(len)
}

/// `nc_inq_var_chunking`: the variable's chunk lengths, or `None` when it is not chunked (or a
/// scalar). netcdf-c writes one length per dimension of the variable, so its rank is asked here,
/// never taken from the caller.
pub fn var_chunks(_call: &Call<'_>, ncid: c_int, varid: c_int) -> NcResult<Option<Vec<usize>>> {
    let ndims = var_ndims(ncid, varid)?;
    let (mut storage, mut lens) = (0, vec![0usize; ndims.max(1)]);
    // SAFETY: room for the variable's ndims lengths.
    check(unsafe { ncfilters_nc_inq_var_chunking(ncid, varid, &mut storage, lens.as_mut_ptr()) })?;
    lens.truncate(ndims);
    Ok((storage == NC_CHUNKED && ndims > 0).then_some(lens))
}

/// `nc_inq_var_endian`: `Some(true)` little-endian, `Some(false)` big-endian, `None` native.
pub fn var_little_endian(_call: &Call<'_>, ncid: c_int, varid: c_int) -> NcResult<Option<bool>> {
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
pub fn initialize(_call: &Call<'_>) -> NcResult<()> {
    // SAFETY: shim.c function with no arguments and no preconditions.
    check(unsafe { ncfilters_nc_initialize() })
}

/// `nc_inq_vartype`.
pub fn var_type(_call: &Call<'_>, ncid: c_int, varid: c_int) -> NcResult<c_int> {
    let mut xtype = 0;
    // SAFETY: xtype is a valid out-pointer.
    check(unsafe { ncfilters_nc_inq_vartype(ncid, varid, &mut xtype) })?;
    Ok(xtype)
}

/// `nc_inq_type`: the size in bytes of type `xtype`.
pub fn type_size(_call: &Call<'_>, ncid: c_int, xtype: c_int) -> NcResult<usize> {
    let mut size = 0usize;
    // SAFETY: size is a valid out-pointer; the name is not asked for.
    check(unsafe { ncfilters_nc_inq_type(ncid, xtype, std::ptr::null_mut(), &mut size) })?;
    Ok(size)
}

// Not on Windows: there shim.c finds netcdf-c's functions among the loaded modules' exports, and a
// test executable exports none of its own.
#[cfg(test)]
#[cfg(not(windows))]
mod tests {
    //! A stand-in netcdf-c: shim.c's weak references bind to these definitions in the test binary.
    use super::*;

    /// The one variable the stand-in knows: `(ncid, varid)`, rank 3, chunked 2 x 3 x 4.
    const NCID: c_int = 0x5eed;
    const VARID: c_int = 7;
    const CHUNKS: [usize; 3] = [2, 3, 4];

    #[no_mangle]
    extern "C" fn nc_inq_varndims(ncid: c_int, varid: c_int, ndimsp: *mut c_int) -> c_int {
        if (ncid, varid) != (NCID, VARID) {
            return crate::error::NC_EBADID.code();
        }
        // SAFETY: netcdf_api passes a valid out-pointer.
        unsafe { ndimsp.write(CHUNKS.len() as c_int) };
        0
    }

    /// Writes a length per dimension of the variable, as netcdf-c does, whatever room it has.
    #[no_mangle]
    extern "C" fn nc_inq_var_chunking(ncid: c_int, varid: c_int, storagep: *mut c_int, lensp: *mut usize) -> c_int {
        if (ncid, varid) != (NCID, VARID) {
            return crate::error::NC_EBADID.code();
        }
        // SAFETY: the caller's contract with netcdf-c: storagep is valid, lensp has room for
        // the variable's rank.
        unsafe {
            storagep.write(NC_CHUNKED);
            std::ptr::copy_nonoverlapping(CHUNKS.as_ptr(), lensp, CHUNKS.len());
        }
        0
    }

    /// The hole `var_chunks(ncid, varid, ndims)` had: a buffer of the caller's `ndims`, which
    /// netcdf-c overran with the variable's real rank.
    #[test]
    fn var_chunks_sizes_its_buffer_from_the_variable_s_rank() {
        // SAFETY: the test's thread is the only one calling the stand-in netcdf-c.
        let thread = unsafe { ncfilters_core::ffi_boundary::CallersThread::promise() };
        ncfilters_core::ffi_boundary::with_call(thread, |call| {
            assert_eq!(var_chunks(call, NCID, VARID), Ok(Some(CHUNKS.to_vec())));
            assert_eq!(var_chunks(call, NCID, VARID + 1), Err(crate::error::NC_EBADID));
        });
    }
}

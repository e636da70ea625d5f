// SPDX-License-Identifier: BSD-3-Clause
//! Bindings to netcdf-c internals that the public filter API goes through:
//! `NC_check_id`, the `NC` and `NC_Dispatch` structs (dispatch version 5),
//! and `NC4_inq_type_fixed_size`; `var_type` and `initialize` are ncfilters-plugin's `netcdf_api`.
//!
//! The functions are reached through `shim.c`, whose weak references keep a standalone
//! `libncfilters.so` linkable; see [`netcdf_linked`].
#![allow(non_camel_case_types)]

use crate::error::{check, NcResult};
pub use ncfilters_plugin::netcdf_api::{initialize, var_type};
use std::os::raw::{c_char, c_int, c_uint, c_void};

pub mod hdf5_var;
pub mod nc4;
pub mod nczarr;

/// netcdf-c's `NC_DISPATCH_VERSION`, 5 in every supported release; the mirror below is only valid for it.
pub const NC_DISPATCH_VERSION: c_int = 5;

/// `include/nc.h`: the common header of every open file.
#[repr(C)]
#[derive(Debug)]
pub struct NC {
    pub ext_ncid: c_int,
    pub int_ncid: c_int,
    pub dispatch: *const NC_Dispatch,
    pub dispatchdata: *mut c_void,
    pub path: *mut c_char,
    pub mode: c_int,
}

pub type DefVarFilterFn = Option<unsafe extern "C" fn(c_int, c_int, c_uint, usize, *const c_uint) -> c_int>;
pub type InqVarFilterIdsFn = Option<unsafe extern "C" fn(c_int, c_int, *mut usize, *mut c_uint) -> c_int>;
pub type InqVarFilterInfoFn = Option<unsafe extern "C" fn(c_int, c_int, c_uint, *mut usize, *mut c_uint) -> c_int>;
pub type InqFilterAvailFn = Option<unsafe extern "C" fn(c_int, c_uint) -> c_int>;
/// A dispatch entry ncfilters never calls: only its size and position matter.
pub type UnusedFn = Option<unsafe extern "C" fn()>;

/// `include/netcdf_dispatch.h`: one format's table of entry points (version 5, 79 fields).
#[repr(C)]
#[derive(Debug)]
pub struct NC_Dispatch {
    pub model: c_int,
    pub dispatch_version: c_int,
    pub create: UnusedFn,
    pub open: UnusedFn,
    pub redef: UnusedFn,
    pub _enddef: UnusedFn,
    pub sync: UnusedFn,
    pub abort: UnusedFn,
    pub close: UnusedFn,
    pub set_fill: UnusedFn,
    pub inq_format: UnusedFn,
    pub inq_format_extended: UnusedFn,
    pub inq: UnusedFn,
    pub inq_type: UnusedFn,
    pub def_dim: UnusedFn,
    pub inq_dimid: UnusedFn,
    pub inq_dim: UnusedFn,
    pub inq_unlimdim: UnusedFn,
    pub rename_dim: UnusedFn,
    pub inq_att: UnusedFn,
    pub inq_attid: UnusedFn,
    pub inq_attname: UnusedFn,
    pub rename_att: UnusedFn,
    pub del_att: UnusedFn,
    pub get_att: UnusedFn,
    pub put_att: UnusedFn,
    pub def_var: UnusedFn,
    pub inq_varid: UnusedFn,
    pub rename_var: UnusedFn,
    pub get_vara: UnusedFn,
    pub put_vara: UnusedFn,
    pub get_vars: UnusedFn,
    pub put_vars: UnusedFn,
    pub get_varm: UnusedFn,
    pub put_varm: UnusedFn,
    pub inq_var_all: UnusedFn,
    pub var_par_access: UnusedFn,
    pub def_var_fill: UnusedFn,
    pub show_metadata: UnusedFn,
    pub inq_unlimdims: UnusedFn,
    pub inq_ncid: UnusedFn,
    pub inq_grps: UnusedFn,
    pub inq_grpname: UnusedFn,
    pub inq_grpname_full: UnusedFn,
    pub inq_grp_parent: UnusedFn,
    pub inq_grp_full_ncid: UnusedFn,
    pub inq_varids: UnusedFn,
    pub inq_dimids: UnusedFn,
    pub inq_typeids: UnusedFn,
    pub inq_type_equal: UnusedFn,
    pub def_grp: UnusedFn,
    pub rename_grp: UnusedFn,
    pub inq_user_type: UnusedFn,
    pub inq_typeid: UnusedFn,
    pub def_compound: UnusedFn,
    pub insert_compound: UnusedFn,
    pub insert_array_compound: UnusedFn,
    pub inq_compound_field: UnusedFn,
    pub inq_compound_fieldindex: UnusedFn,
    pub def_vlen: UnusedFn,
    pub put_vlen_element: UnusedFn,
    pub get_vlen_element: UnusedFn,
    pub def_enum: UnusedFn,
    pub insert_enum: UnusedFn,
    pub inq_enum_member: UnusedFn,
    pub inq_enum_ident: UnusedFn,
    pub def_opaque: UnusedFn,
    pub def_var_deflate: UnusedFn,
    pub def_var_fletcher32: UnusedFn,
    pub def_var_chunking: UnusedFn,
    pub def_var_endian: UnusedFn,
    pub def_var_filter: DefVarFilterFn,
    pub set_var_chunk_cache: UnusedFn,
    pub get_var_chunk_cache: UnusedFn,
    pub inq_var_filter_ids: InqVarFilterIdsFn,
    pub inq_var_filter_info: InqVarFilterInfoFn,
    pub def_var_quantize: UnusedFn,
    pub inq_var_quantize: UnusedFn,
    pub inq_filter_avail: InqFilterAvailFn,
}

extern "C" {
    fn ncfilters_netcdf_linked() -> c_int;
    fn ncfilters_NC_check_id(ncid: c_int, ncpp: *mut *mut NC) -> c_int;
    fn ncfilters_NC4_inq_type_fixed_size(ncid: c_int, xtype: c_int, fixedsizep: *mut c_int) -> c_int;
}

/// Whether netcdf-c's dispatch layer is linked into this process image (false for a
/// standalone `libncfilters.so`, where the filter API returns `NC_ENOTBUILT`).
pub fn netcdf_linked() -> bool {
    // SAFETY: shim.c function with no arguments and no preconditions.
    unsafe { ncfilters_netcdf_linked() != 0 }
}

/// `NC_check_id`: the file's dispatch table for `ncid`.
pub fn dispatch_table(ncid: c_int) -> NcResult<&'static NC_Dispatch> {
    let mut ncp: *mut NC = std::ptr::null_mut();
    // SAFETY: ncp is a valid out-pointer; the shim returns NC_ENOTBUILT when unlinked.
    check(unsafe { ncfilters_NC_check_id(ncid, &mut ncp) })?;
    // SAFETY: on success NC_check_id stores a live NC* owned by netcdf-c's file list;
    // its dispatch table is static const data of libnetcdf.
    let table = unsafe { ncp.as_ref().and_then(|nc| nc.dispatch.as_ref()) };
    match table {
        Some(table) if table.dispatch_version == NC_DISPATCH_VERSION => Ok(table),
        _ => {
            crate::error::report(format_args!(
                "ncid {ncid}: missing or non-version-{NC_DISPATCH_VERSION} dispatch table"
            ));
            Err(crate::error::NC_EINTERNAL)
        }
    }
}

/// `NC4_inq_type_fixed_size`: false for strings, vlens and compounds containing them.
pub fn type_is_fixed_size(ncid: c_int, xtype: c_int) -> NcResult<bool> {
    let mut fixed = 0;
    // SAFETY: fixed is a valid out-pointer.
    check(unsafe { ncfilters_NC4_inq_type_fixed_size(ncid, xtype, &mut fixed) })?;
    Ok(fixed != 0)
}

// SPDX-License-Identifier: BSD-3-Clause
//! netcdf-c's internals: its structs mirrored (`nc4`), safe handles to a variable's filter lists
//! (`hdf5_var`, `nczarr`), and what the public filter API goes through:
//! `NC_check_id`, the `NC` and `NC_Dispatch` structs (dispatch version 5),
//! and `NC4_inq_type_fixed_size`; `var_type` and `initialize` are ncfilters-plugin's `netcdf_api`.
//!
//! The functions are reached through `shim.c`, whose weak references keep a standalone
//! `libncfilters.so` linkable; see [`netcdf_linked`].
#![allow(non_camel_case_types)]

use crate::c_args::{Call, CountedOut, FromRawArgument};
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

/// The filter entries of a file's dispatch table, copied out of it: nothing keeps a reference
/// to a table, which a user-defined format (`nc_def_user_format`) owns.
#[derive(Clone, Copy)]
struct FilterEntries {
    def_var_filter: DefVarFilterFn,
    inq_var_filter_ids: InqVarFilterIdsFn,
    inq_var_filter_info: InqVarFilterInfoFn,
    inq_filter_avail: InqFilterAvailFn,
}

/// `NC_check_id`: `NC_EBADID` (or `NC_ENOTBUILT` unlinked) unless `ncid` is an open file with a
/// version-5 dispatch table. Asked within a `call` from C, on netcdf-c's thread.
pub fn check_ncid(_call: &Call<'_>, ncid: c_int) -> NcResult<()> {
    filter_entries(ncid).map(|_| ())
}

/// `NC_check_id`, then the filter entries of the file's dispatch table.
fn filter_entries(ncid: c_int) -> NcResult<FilterEntries> {
    let mut ncp: *mut NC = std::ptr::null_mut();
    // SAFETY: ncp is a valid out-pointer; the shim returns NC_ENOTBUILT when unlinked.
    check(unsafe { ncfilters_NC_check_id(ncid, &mut ncp) })?;
    // SAFETY: on success NC_check_id stores a live NC* owned by netcdf-c's file list, whose
    // dispatch table (libnetcdf's static data, or a user format's) outlives the open file; the
    // entries are copied before this returns.
    let entries = unsafe { ncp.as_ref().and_then(|nc| nc.dispatch.as_ref()) }
        .filter(|table| table.dispatch_version == NC_DISPATCH_VERSION)
        .map(|table| FilterEntries {
            def_var_filter: table.def_var_filter,
            inq_var_filter_ids: table.inq_var_filter_ids,
            inq_var_filter_info: table.inq_var_filter_info,
            inq_filter_avail: table.inq_filter_avail,
        });
    entries.ok_or_else(|| {
        crate::error::report(format_args!("ncid {ncid}: missing or non-version-{NC_DISPATCH_VERSION} dispatch table"));
        crate::error::NC_EINTERNAL
    })
}

/// The filter entries of the dispatch table of the file `ncid`, called with typed arguments,
/// for the length of one call from C: borrowing the call, it stays on netcdf-c's thread.
/// Each call looks the file up again: a file closed in between is `NC_EBADID`.
///
/// ```compile_fail,E0277
/// # use ncfilters::test_support::FormatFilters;
/// # use ncfilters_core::ffi_boundary::{with_call, CallersThread};
/// with_call(unsafe { CallersThread::promise() }, |call| {
///     let filters = FormatFilters::of(call, 65536).unwrap();
///     std::thread::scope(|s| {
///         s.spawn(|| filters.available(1));
///     });
/// });
/// ```
#[derive(Clone, Copy)]
pub struct FormatFilters<'call> {
    ncid: c_int,
    call: &'call Call<'call>,
}

impl<'call> FormatFilters<'call> {
    /// The entries of `ncid`'s format ([`check_ncid`]), for the length of `call`.
    pub fn of(call: &'call Call<'call>, ncid: c_int) -> NcResult<Self> {
        check_ncid(call, ncid)?;
        Ok(FormatFilters { ncid, call })
    }

    /// An entry of the file's table now, or `NC_EINTERNAL` (reported) when the format has none.
    fn entry<F>(&self, pick: impl FnOnce(FilterEntries) -> Option<F>, name: &str) -> NcResult<F> {
        pick(filter_entries(self.ncid)?).ok_or_else(|| {
            crate::error::report(format_args!("ncid {}: the format's dispatch table has no {name} entry", self.ncid));
            crate::error::NC_EINTERNAL
        })
    }

    /// `def_var_filter`.
    pub fn define(&self, varid: c_int, id: u32, params: &[u32]) -> NcResult<()> {
        let define = self.entry(|table| table.def_var_filter, "def_var_filter")?;
        // SAFETY: params is a live slice of params.len() words.
        check(unsafe { define(self.ncid, varid, id, params.len(), params.as_ptr()) })
    }

    /// `inq_var_filter_ids` into the caller's `(count, vector)`.
    ///
    /// # Safety
    /// `out`'s vector is NULL or has room for the ids of this file's variable `varid`: a handle
    /// is sized for one answer, and another variable's may be longer.
    pub unsafe fn inquire_ids(&self, varid: c_int, out: &mut CountedOut<c_uint>) -> NcResult<()> {
        let inquire = self.entry(|table| table.inq_var_filter_ids, "inq_var_filter_ids")?;
        let (count, ids) = out.as_raw_parts();
        // SAFETY: the count is NULL or writable (CountedOut's contract), ids NULL or with room for
        // this variable's ids (ours).
        check(unsafe { inquire(self.ncid, varid, count, ids) })
    }

    /// `inq_var_filter_info` of filter `id` into the caller's `(count, vector)`.
    ///
    /// # Safety
    /// `out`'s vector is NULL or has room for the parameters of filter `id` of this file's
    /// variable `varid`: a handle is sized for one answer, and another's may be longer.
    pub unsafe fn inquire_info(&self, varid: c_int, id: u32, out: &mut CountedOut<c_uint>) -> NcResult<()> {
        let inquire = self.entry(|table| table.inq_var_filter_info, "inq_var_filter_info")?;
        let (count, params) = out.as_raw_parts();
        // SAFETY: the count is NULL or writable (CountedOut's contract), params NULL or with room
        // for this filter's parameters (ours).
        check(unsafe { inquire(self.ncid, varid, id, count, params) })
    }

    /// The ids of a variable's filters, in application order.
    pub fn ids(&self, varid: c_int) -> NcResult<Vec<u32>> {
        // SAFETY: count_of's vector is NULL.
        let count = count_of(self.call, |out| unsafe { self.inquire_ids(varid, out) })?;
        // SAFETY: filled's vector has room for the count the same variable just reported.
        filled(self.call, count, |out| unsafe { self.inquire_ids(varid, out) })
    }

    /// The parameters of filter `id` on a variable, or `None` if it is not defined there.
    pub fn params(&self, varid: c_int, id: u32) -> NcResult<Option<Vec<u32>>> {
        // SAFETY: count_of's vector is NULL.
        let count = match count_of(self.call, |out| unsafe { self.inquire_info(varid, id, out) }) {
            Err(crate::error::NC_ENOFILTER) => return Ok(None),
            result => result?,
        };
        // SAFETY: filled's vector has room for the count the same (varid, id) just reported.
        filled(self.call, count, |out| unsafe { self.inquire_info(varid, id, out) }).map(Some)
    }

    /// `inq_filter_avail`: `NC_NOERR` if filter `id` can be used with this file.
    pub fn available(&self, id: u32) -> NcResult<()> {
        let inquire = self.entry(|table| table.inq_filter_avail, "inq_filter_avail")?;
        // SAFETY: plain integer arguments.
        check(unsafe { inquire(self.ncid, id) })
    }
}

/// The first call of netcdf-c's count-then-fill inquiry: the count, asked with a NULL vector.
fn count_of(call: &Call<'_>, inquire: impl FnOnce(&mut CountedOut<c_uint>) -> NcResult<()>) -> NcResult<usize> {
    let mut count = 0usize;
    // SAFETY: count is a valid out-pointer; a NULL vector asks for the count only.
    inquire(&mut unsafe { CountedOut::from_raw(call, (&mut count as *mut usize, std::ptr::null_mut())) })?;
    Ok(count)
}

/// The second call: the values, into a vector with room for the `count` just reported.
fn filled(
    call: &Call<'_>,
    count: usize,
    inquire: impl FnOnce(&mut CountedOut<c_uint>) -> NcResult<()>,
) -> NcResult<Vec<u32>> {
    let mut count = count;
    let mut values = vec![0 as c_uint; count];
    // SAFETY: values has room for `count` words; count is a valid out-pointer.
    inquire(&mut unsafe { CountedOut::from_raw(call, (&mut count as *mut usize, values.as_mut_ptr())) })?;
    values.truncate(count);
    Ok(values)
}

/// `NC4_inq_type_fixed_size`: false for strings, vlens and compounds containing them.
pub fn type_is_fixed_size(_call: &Call<'_>, ncid: c_int, xtype: c_int) -> NcResult<bool> {
    let mut fixed = 0;
    // SAFETY: fixed is a valid out-pointer.
    check(unsafe { ncfilters_NC4_inq_type_fixed_size(ncid, xtype, &mut fixed) })?;
    Ok(fixed != 0)
}

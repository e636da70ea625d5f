// SPDX-License-Identifier: BSD-3-Clause
//! The NCZarr filter engine (replacing `libnczarr/zfilter.c`): the NCZarr dispatch table's
//! filter entries and the functions `zsync.c`, `zxcache.c`, `zattr.c`, `zvar.c` and
//! `zclose.c` call.

use crate::c_args::{CallerChunk, CountedOut, FromRawArgument, Live, Params, Text, VectorOut};
use crate::codec_json::Dialect;
use crate::error::{status_code, NcResult, NC_EFILTER, NC_EINVAL, NC_ENOFILTER, NC_ENOTATT};
use crate::filter_chain::{apply_chain, codecs_attribute, encode_codec, Direction, ZarrFilter};
use crate::filter_rules as rules;
use crate::nczarr_filters::{
    add_filter, build_codec, chain_position, chain_stages, check_not_broken, first_stage_on_borrowed, registry,
};
use crate::netcdf_internals::check_ncid;
use crate::netcdf_internals::nc4::{NClist, NC_FILE_INFO, NC_VAR_INFO};
use crate::netcdf_internals::nczarr::{
    free_incomplete_filters, ncjson_parse, FilterHandle, FilterList, JsonOut, NCZ_Filter, NCjson, ZarrLocation,
    ZarrVar, ZarrVarToRead, NCZ_VAR_INFO,
};
use crate::plugin_registry::{self, MAX_FILTER_ID};
use std::os::raw::{c_char, c_int, c_uint, c_ulonglong, c_void};

/// # Safety
/// `var` is NULL or a live NCZarr variable; `params` is NULL or readable for `nparams` words.
#[no_mangle]
pub unsafe extern "C" fn NCZ_addfilter(
    _file: *mut NC_FILE_INFO,
    var: *mut NC_VAR_INFO,
    id: c_uint,
    nparams: usize,
    params: *const c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call; `(params, nparams)` is NULL
        // (only with no parameters) or readable for as many words (the export's `# Safety`).
        let (mut var, params) =
            (unsafe { ZarrVar::from_raw(call, var) }?, unsafe { Params::from_raw(call, (params, nparams)) }?);
        add_filter(call, &mut var, id, params)
    })
}

/// Defines (or re-defines) a filter on a variable of an NCZarr dataset in define mode.
///
/// # Safety
/// `params` is NULL or readable for `nparams` words.
#[no_mangle]
pub unsafe extern "C" fn NCZ_def_var_filter(
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
        let mut found = unsafe { ZarrLocation::find(call, ncid, varid) }?;
        rules::check_definable(found.in_define_mode(), found.var.ndims(), found.var.created())?;
        // SAFETY: `(params, nparams)` is NULL (only with no parameters) or readable for as many words (the export's
        // `# Safety`).
        let params = unsafe { Params::from_raw(call, (params, nparams)) }?;
        rules::define_filter(&mut found, id, params)?;
        if found.parallel() {
            return Err(NC_EINVAL);
        }
        Ok(())
    })
}

/// # Safety
/// `nfiltersp` is NULL or writable; `ids` is NULL or has room for every filter id.
#[no_mangle]
pub unsafe extern "C" fn NCZ_inq_var_filter_ids(
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
        let found = unsafe { ZarrLocation::find(call, ncid, varid) }?;
        check_not_broken(&found.var)?;
        let filter_ids = found.var.chain_ids();
        // SAFETY: `(nfiltersp, ids)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // answer; the answer is the one the caller made room for (netcdf-c's count-first contract) (the export's
        // `# Safety`).
        unsafe { CountedOut::<_>::from_raw(call, (nfiltersp, ids)).write(&filter_ids) };
        Ok(())
    })
}

/// # Safety
/// `nparamsp` is NULL or writable; `params` is NULL or has room for the filter's parameters.
#[no_mangle]
pub unsafe extern "C" fn NCZ_inq_var_filter_info(
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
        let found = unsafe { ZarrLocation::find(call, ncid, varid) }?;
        check_not_broken(&found.var)?;
        let index = chain_position(&found.var, id).ok_or(NC_ENOFILTER)?;
        let visible = found.var.visible_params(index).ok_or(NC_ENOFILTER)?;
        // SAFETY: `(nparamsp, params)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // answer; the answer is the one the caller made room for (netcdf-c's count-first contract) (the export's
        // `# Safety`).
        unsafe { CountedOut::<_>::from_raw(call, (nparamsp, params)).write(&visible) };
        Ok(())
    })
}

/// Whether a complete NCZarr plugin (HDF5 filter and codec) exists for `id`.
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn NCZ_inq_filter_avail(_ncid: c_int, id: c_uint) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        if !(1..=MAX_FILTER_ID).contains(&id) {
            return Err(NC_EINVAL);
        }
        match registry(call).get(id) {
            Some(plugin) if plugin.is_complete() => match plugin.unavailable_reason() {
                None => Ok(()),
                Some(why) => {
                    crate::error::report(format_args!("filter {id} is not available: {why}"));
                    Err(NC_ENOFILTER)
                }
            },
            _ => Err(NC_ENOFILTER),
        }
    })
}

/// Plugins are discovered lazily, on the first variable that has or gets a filter, so
/// opening a dataset without filters loads none. Kept for netcdf-c's callers.
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn NCZ_filter_initialize() -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |_| Ok(()))
}

/// Finalises and releases the plugins (netcdf-c calls it from `nc_finalize`).
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn NCZ_filter_finalize() -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        plugin_registry::finalize(call);
        // nc_finalize forgets the plugin path too (4.9.3 on: also nc_plugin_path_finalize).
        crate::plugin_path::finalize();
        Ok(())
    })
}

/// Computes every complete filter's working parameters (before metadata is written, and at
/// the end of reading a variable).
///
/// # Safety
/// `var` is NULL or a live NCZarr variable.
#[no_mangle]
pub unsafe extern "C" fn NCZ_filter_setup(var: *mut NC_VAR_INFO) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
        let mut var = unsafe { ZarrVar::from_raw(call, var) }?;
        let (ncid, varid) = (var.ncid()?, var.varid());
        for ptr in var.filter_handles(FilterList::Chain) {
            if var.is_complete(ptr)? {
                var.ensure_working(call, ptr, ncid, varid)?;
            }
        }
        Ok(())
    })
}

/// Frees both filter lists of a variable.
///
/// # Safety
/// `var` is NULL or a live NCZarr variable.
#[no_mangle]
pub unsafe extern "C" fn NCZ_filter_freelists(var: *mut NC_VAR_INFO) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
        let mut var = unsafe { ZarrVar::from_raw(call, var) }?;
        var.free_list(FilterList::Chain)?;
        var.free_list(FilterList::Incomplete)
    })
}

/// `zplugins.c`'s plugin table (4.9.3 on), exported as stock exports it (`zplugins.h` is not
/// installed, and of netcdf-c only the replaced `zfilter.c` called them). ncfilters keeps its own
/// registry and no `NCZ_Plugin` records, so a lookup finds none.
#[cfg(ncf_plugin_path_release)]
pub(crate) mod plugin_table {
    use super::*;
    use crate::netcdf_internals::nczarr::NCZ_Plugin;

    /// Loads the plugins on the plugin path into ncfilters' registry, if not yet done.
    ///
    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_load_all_plugins() -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            registry(call);
            Ok(())
        })
    }

    /// `*pp` becomes NULL; `NC_EINVAL` for an id outside 1..=65534, as `zplugins.c`.
    ///
    /// # Safety
    /// `pp` is NULL or writable.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_loaded(filterid: usize, pp: *mut *mut NCZ_Plugin) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            if !(1..=MAX_FILTER_ID as usize).contains(&filterid) {
                return Err(NC_EINVAL);
            }
            // SAFETY: `pp` is NULL or valid for a write (the export's `# Safety`).
            unsafe { crate::c_args::Out::<_>::from_raw(call, pp) }.write_null();
            Ok(())
        })
    }

    /// `*pp` becomes NULL; `NC_EINVAL` for a NULL name, as `zplugins.c`.
    ///
    /// # Safety
    /// `name` is NULL or a C string; `pp` is NULL or writable.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_loaded_byname(name: *const c_char, pp: *mut *mut NCZ_Plugin) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            crate::reject_null!(name);
            // SAFETY: `pp` is NULL or valid for a write (the export's `# Safety`).
            unsafe { crate::c_args::Out::<_>::from_raw(call, pp) }.write_null();
            Ok(())
        })
    }
}

/// Declared by 4.9.0's `zfilter.h` but never defined there: frees the list of filters
/// defined with incomplete plugins.
///
/// # Safety
/// `zvar` is NULL or a live `NCZ_VAR_INFO_T`.
#[no_mangle]
pub unsafe extern "C" fn NCZ_codec_freelist(zvar: *mut NCZ_VAR_INFO) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(zvar);
        // SAFETY: `zvar` is a live `NCZ_VAR_INFO_T`, not touched elsewhere during the call (the
        // export's `# Safety`); its `incompletefilters` is NULL or the list ncfilters made there.
        unsafe { free_incomplete_filters(Live::<NCZ_VAR_INFO>::from_raw(call, zvar)) };
        Ok(())
    })
}

/// Removes filter `id` (the last one with that id) from a variable.
///
/// # Safety
/// `var` is NULL or a live NCZarr variable.
#[no_mangle]
pub unsafe extern "C" fn NCZ_filter_remove(var: *mut NC_VAR_INFO, id: c_uint) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
        let mut var = unsafe { ZarrVar::from_raw(call, var) }?;
        let index = var.chain_ids().iter().rposition(|&filter_id| filter_id == id).ok_or(NC_ENOFILTER)?;
        var.remove(FilterList::Chain, index);
        Ok(())
    })
}

/// Applies the filter chain to a chunk: encode in definition order, decode in reverse.
/// On decode the chain takes the chunk (`indata`, C heap; netcdf-c has dropped its pointer) and
/// frees it on failure. On encode it never takes it: a built-in first stage reads it in place,
/// any other chain starts from a copy; `indata` is freed only on success, and on any failure left
/// untouched (also handed back through `*outdatap`), so
/// `zxcache.c`'s cache entry keeps the unwritten data. On success `*outdatap`/`*outlenp` are
/// the result.
///
/// # Safety
/// `var` is the live variable `chain` (its `filters` list) belongs to; `indata` is NULL or a
/// `malloc`'d block of `inlen` bytes; the out-pointers are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NCZ_applyfilterchain(
    _file: *const NC_FILE_INFO,
    var: *mut NC_VAR_INFO,
    chain: *mut NClist,
    inlen: usize,
    indata: *mut c_void,
    outlenp: *mut usize,
    outdatap: *mut *mut c_void,
    encode: c_int,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    // The whole body inside the boundary: the inner one catches a panic in the chain, so that the
    // caller's block is still handed back below; this one, a panic anywhere else.
    crate::ffi_export!(caught crate::function_name!(), thread, |call| {
        let encoding = encode != 0;
        // SAFETY: `indata` is NULL (a chunk of no bytes, whatever `inlen` says; rejected below) or a
        // malloc'd block of `inlen` bytes (the export's `# Safety`).
        let chunk = unsafe { CallerChunk::from_raw(call, (indata, inlen)) };
        // On decode the caller hands the block over; on encode it stays the caller's until success.
        let (mut taken, kept) = if encoding {
            (None, Some(chunk))
        } else {
            // SAFETY: on decode netcdf-c gives the block up whatever the status (zxcache.c).
            (Some(unsafe { chunk.take() }), None)
        };
        let mut result = None;
        let mut chain_status = || -> NcResult<()> {
            crate::reject_null!(var, chain, outlenp, outdatap);
            if indata.is_null() && inlen > 0 {
                return Err(NC_EINVAL);
            }
            // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
            let mut var = unsafe { ZarrVar::from_raw(call, var) }?;
            if chain != var.filter_list_address().cast() {
                return Err(NC_EINVAL);
            }
            let (ncid, varid, name) = (var.ncid()?, var.varid(), var.name());
            let stages = chain_stages(call, &mut var, ncid, varid, &name)?;
            let direction = if encoding {
                Direction::Encode
            } else {
                let chunk_bytes = var.chunk_bytes().map_err(|why| {
                    crate::error::report(format_args!("variable \"{name}\": {why}; its chunks are not decoded"));
                    NC_EFILTER
                })?;
                Direction::Decode { chunk_bytes }
            };
            let (input, stages) = match taken.take() {
                Some(chunk) => (chunk, &stages[..]),
                None => {
                    let kept = kept.as_ref().ok_or(NC_EINVAL)?;
                    let borrowed = (!kept.is_null()).then(|| kept.bytes());
                    match first_stage_on_borrowed(&stages, borrowed) {
                        Some(first) => (first, &stages[1..]),
                        // The copy is ours; the caller's block stays the caller's.
                        None => (kept.copy()?, &stages[..]),
                    }
                }
            };
            result = Some(apply_chain(call, stages, &name, input, direction)?);
            Ok(())
        };
        let status = crate::ffi_boundary::contained(crate::function_name!(), || status_code(chain_status()));
        // SAFETY: `outlenp` and `outdatap` are each NULL or valid for a write (the export's `# Safety`).
        let out = unsafe { VectorOut::from_raw(call, (outlenp, outdatap)) };
        match (result, kept) {
            (Some(filtered), kept) => {
                // Encoded from a copy: the caller's block is ours to free now.
                if let Some(kept) = kept {
                    // SAFETY: a result means the chain succeeded, and `status` is success: on
                    // success netcdf-c gives the block up.
                    unsafe { kept.free() };
                }
                // C owns the block from here.
                out.give(filtered);
            }
            (None, Some(kept)) => kept.hand_back(out),
            (None, None) => out.give_none(),
        }
        status
    })
}

/// The codec JSON of one filter, for `.zarray` (`"compressor"` or an element of `"filters"`),
/// as netcdf-c JSON that the caller owns. Written in the dialect of [`Dialect::current`].
///
/// # Safety
/// `var` is the live variable `filter` belongs to; `jfilterp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn NCZ_filter_jsonize(
    _file: *const NC_FILE_INFO,
    var: *const NC_VAR_INFO,
    filter: *mut NCZ_Filter,
    jfilterp: *mut *mut NCjson,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var, filter);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
        // netcdf-c declares it `const` but owns it mutable, and its own NCZ_filter_jsonize changes the variable's
        // filter here (the codec it writes), as this does.
        let mut var = unsafe { ZarrVar::from_raw(call, var.cast_mut()) }?;
        let filter = FilterHandle::from_ptr(filter.cast::<ZarrFilter>());
        let (ncid, varid) = (var.ncid()?, var.varid());
        var.ensure_working(call, filter, ncid, varid)?;
        // The plugin's NCZ_hdf5_to_codec runs on a copy, the filter updated afterwards.
        let (plugin, visible) = var.codec_job(filter)?;
        let (codec_id, text) = encode_codec(call, &plugin, &visible, Dialect::current(), var.type_size())?;
        var.set_codec(filter, codec_id, text.clone())?;
        // SAFETY: `jfilterp` is NULL or writable (the export's `# Safety`).
        unsafe { JsonOut::from_raw(call, jfilterp) }.give(ncjson_parse(call, &text)?);
        Ok(())
    })
}

/// Adds the filter described by one codec object of `.zarray` to the variable's chain (a
/// malformed one as a broken filter of that variable; see [`ncfilters_zarr_codec`]).
///
/// # Safety
/// `var` is NULL or a live NCZarr variable; `jfilter` is NULL or a live `NCjson` tree.
#[no_mangle]
pub unsafe extern "C" fn NCZ_filter_build(
    _file: *const NC_FILE_INFO,
    var: *mut NC_VAR_INFO,
    jfilter: *const NCjson,
    chainindex: c_int,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
        let var = unsafe { ZarrVar::from_raw(call, var) }?;
        // SAFETY: `jfilter` is NULL or a live NCjson tree (the export's `# Safety`).
        build_codec(call, var, "codec", unsafe { NCjson::from_raw(call, jfilter) }?, chainindex)
    })
}

/// One codec value of a variable's `.zarray` (ncfilters.cmake's zsync.c calls it for
/// `"compressor"`, for `"filters"` when it is not a list and for each `"filters[]"` entry, in
/// place of 4.9.0's `NC_EFILTER` for the whole open): whatever is wrong with it, the variable
/// gets a broken filter (data access and filter inquiries fail, naming variable, key and problem)
/// and the dataset opens.
///
/// # Safety
/// `var` is NULL or a live NCZarr variable; `key` is NULL or NUL-terminated; `jcodec` is NULL or a
/// live `NCjson` tree.
#[no_mangle]
pub unsafe extern "C" fn ncfilters_zarr_codec(
    _file: *const NC_FILE_INFO,
    var: *mut NC_VAR_INFO,
    key: *const c_char,
    jcodec: *const NCjson,
    chainindex: c_int,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `key` is NULL or NUL-terminated, alive for the call (the export's `# Safety`).
        let key = unsafe { Text::from_raw(call, key) }.0.map_or_else(|| "codec".into(), String::from_utf8_lossy);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
        let var = unsafe { ZarrVar::from_raw(call, var) }?;
        // SAFETY: `jcodec` is NULL or a live NCjson tree (the export's `# Safety`).
        build_codec(call, var, &key, unsafe { NCjson::from_raw(call, jcodec) }?, chainindex)
    })
}

/// Checks a chunk read with no filter declared (ncfilters.cmake's zxcache.c calls it): its
/// stored length must be the chunk's byte size, else (e.g. a compressed chunk under
/// `"compressor": null`) it would be read as garbage or past its end. `NC_EFILTER` then.
///
/// # Safety
/// `var` is NULL or a live NCZarr variable.
#[no_mangle]
pub unsafe extern "C" fn ncfilters_zarr_raw_chunk(var: *mut NC_VAR_INFO, size: c_ulonglong) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live NCZarr variable not accessed elsewhere during the call (the export's `# Safety`).
        let var = unsafe { ZarrVar::from_raw(call, var) }?;
        match var.chunk_bytes() {
            Ok(expected) if expected as u64 == size => Ok(()),
            Ok(expected) => {
                crate::error::report(format_args!(
                    "variable \"{}\": a chunk stored with {size} bytes cannot be its {expected} bytes with no filter declared in .zarray (compressed data under \"compressor\": null?)",
                    var.name()
                ));
                Err(NC_EFILTER)
            }
            Err(why) => {
                crate::error::report(format_args!("variable \"{}\": {why}; its chunks are not read", var.name()));
                Err(NC_EFILTER)
            }
        }
    })
}

/// The `_Codecs` attribute: `*lenp` is its length; `data`, if non-NULL, receives exactly that
/// many bytes, no NUL (4.9.0 wrote one more, overrunning a buffer of `nc_inq_att`'s length;
/// ncfilters.cmake makes ncdump, which relied on it, allocate its buffer zeroed).
///
/// # Safety
/// `var` is NULL or a live NCZarr variable; `lenp` is NULL or writable; `data` is NULL or
/// has room for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn NCZ_codec_attr(var: *const NC_VAR_INFO, lenp: *mut usize, data: *mut c_void) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(var);
        // SAFETY: `var` is a live NCZarr variable, which the handle only reads (the export's `# Safety`).
        let var = unsafe { ZarrVarToRead::from_raw(call, var) }?;
        // SAFETY: codecs_attribute only reads the filters' chain positions and codec texts.
        let text = unsafe {
            let mut all = var.filters(FilterList::Chain);
            all.extend(var.filters(FilterList::Incomplete));
            codecs_attribute(&all)
        }
        .ok_or(NC_ENOTATT)?;
        // The caller sized data, if any, for len bytes (nc_inq_att's length).
        // SAFETY: `(lenp, data.cast::<u8>())` is a count pointer NULL or writable, and a vector NULL or with room for
        // the answer; the answer is the one the caller made room for (netcdf-c's count-first contract) (the export's
        // `# Safety`).
        unsafe { CountedOut::<u8>::from_raw(call, (lenp, data.cast::<u8>())).write(text.as_bytes()) };
        Ok(())
    })
}

#[cfg(all(test, ncf_plugin_path_release))]
mod tests {
    use super::*;
    use crate::error::NC_NOERR;

    #[test]
    fn the_plugin_table_lookups_check_their_arguments_as_zplugins_c_and_find_no_record() {
        use super::plugin_table::{NCZ_plugin_loaded, NCZ_plugin_loaded_byname};
        let mut found = std::ptr::NonNull::dangling().as_ptr();
        for id in [0, 65535, usize::MAX] {
            // SAFETY: `found` is writable.
            assert_eq!(unsafe { NCZ_plugin_loaded(id, &mut found) }, NC_EINVAL.code());
        }
        // SAFETY: as above; a NULL out-pointer is allowed.
        assert_eq!(unsafe { NCZ_plugin_loaded(32015, &mut found) }, NC_NOERR);
        assert!(found.is_null());
        // SAFETY: as above.
        assert_eq!(unsafe { NCZ_plugin_loaded(1, std::ptr::null_mut()) }, NC_NOERR);
        // SAFETY: as above; the name is a C string or NULL.
        assert_eq!(unsafe { NCZ_plugin_loaded_byname(std::ptr::null(), &mut found) }, NC_EINVAL.code());
        found = std::ptr::NonNull::dangling().as_ptr();
        // SAFETY: as above.
        assert_eq!(unsafe { NCZ_plugin_loaded_byname(c"zstd".as_ptr(), &mut found) }, NC_NOERR);
        assert!(found.is_null());
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//! The few HDF5 functions the filters call back: the property and type queries of blosc's and
//! szip's `can_apply`/`set_local`, and `H5Zfilter_avail`/`H5Zregister` for the built-in filters.
//!
//! Each takes the [`Call`] it is asked within: HDF5 is called on netcdf-c's thread only.
//!
//! They are reached through `shim.c`: a weak reference where HDF5 is linked (libnetcdf), else the
//! function of the HDF5 already loaded in the process (a plugin is always loaded by HDF5), so
//! neither a plugin nor a test binary links libhdf5. A missing HDF5 reads as a failed call.

use ncfilters_core::ffi_boundary::Call;
use std::os::raw::{c_int, c_uint, c_void};

/// `hid_t` (HDF5 1.10+).
pub type Hid = crate::c_types::hid_t;
/// `H5T_ARRAY` of `H5T_class_t`.
const H5T_ARRAY: c_int = 10;
/// `H5T_ORDER_LE`, `H5T_ORDER_BE` of `H5T_order_t`.
const H5T_ORDER_LE: c_int = 0;
const H5T_ORDER_BE: c_int = 1;
/// What the shim's forwarders return when HDF5 is not in the process.
const HDF5_NOT_LOADED: c_int = -2;
/// `H5S_MAX_RANK`.
const MAX_RANK: usize = 32;

extern "C" {
    fn ncfilters_H5Zfilter_avail(id: c_int) -> c_int;
    fn ncfilters_H5Zregister(class: *const c_void) -> c_int;
    fn ncfilters_H5Zget_filter_info(id: c_int, flags: *mut c_uint) -> c_int;
    fn ncfilters_H5Pget_filter_by_id2(
        plist: Hid,
        id: c_int,
        flags: *mut c_uint,
        nelmts: *mut usize,
        values: *mut c_uint,
        namelen: usize,
        name: *mut std::os::raw::c_char,
        config: *mut c_uint,
    ) -> c_int;
    fn ncfilters_H5Pmodify_filter(plist: Hid, id: c_int, flags: c_uint, nelmts: usize, values: *const c_uint) -> c_int;
    fn ncfilters_H5Pget_chunk(plist: Hid, max_ndims: c_int, dims: *mut u64) -> c_int;
    fn ncfilters_H5Tget_size(type_id: Hid) -> usize;
    fn ncfilters_H5Tget_precision(type_id: Hid) -> usize;
    fn ncfilters_H5Tget_offset(type_id: Hid) -> c_int;
    fn ncfilters_H5Tget_order(type_id: Hid) -> c_int;
    fn ncfilters_H5Tget_class(type_id: Hid) -> c_int;
    fn ncfilters_H5Tget_super(type_id: Hid) -> Hid;
    fn ncfilters_H5Tclose(type_id: Hid) -> c_int;
    fn ncfilters_H5Sget_simple_extent_dims(space: Hid, dims: *mut u64, maxdims: *mut u64) -> c_int;
    fn ncfilters_H5Sget_simple_extent_npoints(space: Hid) -> i64;
    fn ncfilters_H5PLsize(count: *mut c_uint) -> c_int;
    fn ncfilters_H5PLget(index: c_uint, path: *mut std::os::raw::c_char, size: usize) -> isize;
    fn ncfilters_H5PLremove(index: c_uint) -> c_int;
    fn ncfilters_H5PLappend(path: *const std::os::raw::c_char) -> c_int;
}

/// HDF5's plugin search table (`H5PLsize`, `H5PLget`), first entry first (netcdf-c 4.9.3's
/// `NC4_hdf5_plugin_path_get`).
pub fn plugin_search_table(_call: &Call<'_>) -> Hdf5Result<Vec<Vec<u8>>> {
    let mut count: c_uint = 0;
    // SAFETY: count is a valid out-pointer.
    checked(unsafe { ncfilters_H5PLsize(&mut count) }, "H5PLsize")?;
    (0..count)
        .map(|index| {
            // SAFETY: a NULL buffer asks for the length only.
            let len = unsafe { ncfilters_H5PLget(index, std::ptr::null_mut(), 0) };
            let len = usize::try_from(len).map_err(|_| Hdf5Error("H5PLget"))?;
            let mut buffer = vec![0u8; len + 1];
            // SAFETY: the buffer has room for len bytes and the NUL HDF5 writes.
            let got = unsafe { ncfilters_H5PLget(index, buffer.as_mut_ptr().cast(), buffer.len()) };
            if got < 0 {
                return Err(Hdf5Error("H5PLget"));
            }
            buffer.truncate(len.min(usize::try_from(got).unwrap_or(len)));
            Ok(buffer)
        })
        .collect()
}

/// Replaces HDF5's plugin search table with `dirs` (`H5PLremove` of every entry, then
/// `H5PLappend`). HDF5 refuses an empty directory name, so empty entries are left out.
///
/// # Safety
/// HDF5 may load and run every library in `dirs` (`H5Zfilter_avail`, a read): the caller vouches
/// for them, as C's caller of `nc_plugin_path_set` does.
///
/// ```compile_fail,E0133
/// fn any(call: &ncfilters_core::ffi_boundary::Call<'_>) {
///     let _ = ncfilters_plugin::hdf5_sys::set_plugin_search_table(call, &[c"/tmp/anything".into()]);
/// }
/// ```
pub unsafe fn set_plugin_search_table(_call: &Call<'_>, dirs: &[std::ffi::CString]) -> Hdf5Result<()> {
    let mut count: c_uint = 0;
    // SAFETY: count is a valid out-pointer.
    match unsafe { ncfilters_H5PLsize(&mut count) } {
        HDF5_NOT_LOADED => return Ok(()),
        status => checked(status, "H5PLsize")?,
    };
    for _ in 0..count {
        // SAFETY: no pointer arguments; entry 0 exists while count entries remain.
        checked(unsafe { ncfilters_H5PLremove(0) }, "H5PLremove")?;
    }
    for dir in dirs.iter().filter(|dir| !dir.as_bytes().is_empty()) {
        // SAFETY: dir is NUL-terminated and outlives the call (HDF5 copies it).
        checked(unsafe { ncfilters_H5PLappend(dir.as_ptr()) }, "H5PLappend")?;
    }
    Ok(())
}

/// An HDF5 call failed (or HDF5 is not in the process).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hdf5Error(pub &'static str);

pub type Hdf5Result<T> = Result<T, Hdf5Error>;

fn checked(status: c_int, what: &'static str) -> Hdf5Result<c_int> {
    if status < 0 {
        Err(Hdf5Error(what))
    } else {
        Ok(status)
    }
}

/// `H5Zfilter_avail`: whether HDF5 has filter `id` (built in, registered, or a plugin it finds
/// on its plugin path, which it loads then): `NC_ENOTBUILT` when HDF5 is not in the process.
pub fn filter_avail(_call: &Call<'_>, id: u32) -> crate::error::NcResult<bool> {
    // SAFETY: no pointer arguments.
    match unsafe { ncfilters_H5Zfilter_avail(id as c_int) } {
        -2 => Err(crate::error::NC_ENOTBUILT),
        status if status < 0 => Err(crate::error::NC_EHDFERR),
        status => Ok(status > 0),
    }
}

/// Whether a class for filter `id` is registered with HDF5 (its predefined filters, or one an
/// application or netCDF registered). Unlike `H5Zfilter_avail`, `H5Zget_filter_info` looks only
/// at the registered table: it never searches and loads the plugin path.
pub fn filter_registered(_call: &Call<'_>, id: u32) -> crate::error::NcResult<bool> {
    let mut flags: c_uint = 0;
    // SAFETY: flags is a valid out-pointer.
    match unsafe { ncfilters_H5Zget_filter_info(id as c_int, &mut flags) } {
        -2 => Err(crate::error::NC_ENOTBUILT),
        status => Ok(status >= 0),
    }
}

/// `H5Zregister` of a filter class that lives for the whole process. Unsafe: a `'static` class
/// may still point to a freed name, and HDF5 would read it.
///
/// ```compile_fail,E0133
/// use ncfilters_plugin::{c_types::H5Z_class2_t, hdf5_sys};
/// let name = std::ffi::CString::new("gone").unwrap();
/// let class = H5Z_class2_t {
///     version: 1, id: 256, encoder_present: 1, decoder_present: 1, name: name.as_ptr(),
///     can_apply: None, set_local: None, filter: None,
/// };
/// drop(name);
/// let _ = hdf5_sys::register(Box::leak(Box::new(class)));
/// ```
///
/// # Safety
/// HDF5 copies the struct but keeps its pointers and calls its functions for the rest of the
/// process: `name` is a NUL-terminated string that lives as long, and each function is NULL or
/// follows its `H5Z_*_func_t` contract (any thread, any time).
pub unsafe fn register(class: &'static crate::c_types::H5Z_class2_t) -> Hdf5Result<()> {
    // SAFETY: a valid, 'static H5Z_class2_t whose pointers stay valid (the caller's contract).
    checked(unsafe { ncfilters_H5Zregister((class as *const crate::c_types::H5Z_class2_t).cast()) }, "H5Zregister")?;
    Ok(())
}

/// `H5Pget_filter_by_id2`: the flags and parameters of filter `id` in a creation property list.
pub fn filter_params(_call: &Call<'_>, dcpl: Hid, id: u32) -> Hdf5Result<(c_uint, Vec<u32>)> {
    let mut values = [0 as c_uint; 32];
    let (mut flags, mut nelmts) = (0, values.len());
    // SAFETY: room for nelmts values; no name or config asked for.
    let status = unsafe {
        ncfilters_H5Pget_filter_by_id2(
            dcpl,
            id as c_int,
            &mut flags,
            &mut nelmts,
            values.as_mut_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    checked(status, "H5Pget_filter_by_id2")?;
    Ok((flags, values[..nelmts.min(values.len())].to_vec()))
}

/// `H5Pmodify_filter`.
pub fn modify_filter(_call: &Call<'_>, dcpl: Hid, id: u32, flags: c_uint, params: &[u32]) -> Hdf5Result<()> {
    // SAFETY: params holds params.len() values.
    let status = unsafe { ncfilters_H5Pmodify_filter(dcpl, id as c_int, flags, params.len(), params.as_ptr()) };
    checked(status, "H5Pmodify_filter")?;
    Ok(())
}

/// `H5Pget_chunk`: the chunk's lengths.
pub fn chunk_dims(_call: &Call<'_>, dcpl: Hid) -> Hdf5Result<Vec<u64>> {
    let mut dims = [0u64; MAX_RANK];
    // SAFETY: room for MAX_RANK lengths.
    let ndims = checked(unsafe { ncfilters_H5Pget_chunk(dcpl, MAX_RANK as c_int, dims.as_mut_ptr()) }, "H5Pget_chunk")?;
    Ok(dims[..(ndims as usize).min(MAX_RANK)].to_vec())
}

/// `H5Tget_size`.
pub fn type_size(_call: &Call<'_>, type_id: Hid) -> Hdf5Result<usize> {
    // SAFETY: no pointer arguments.
    match unsafe { ncfilters_H5Tget_size(type_id) } {
        0 => Err(Hdf5Error("H5Tget_size")),
        size => Ok(size),
    }
}

/// The size of an array type's element, else of the type (blosc's "base type size").
pub fn base_type_size(call: &Call<'_>, type_id: Hid) -> Hdf5Result<usize> {
    // SAFETY: no pointer arguments.
    if unsafe { ncfilters_H5Tget_class(type_id) } != H5T_ARRAY {
        return type_size(call, type_id);
    }
    // SAFETY: no pointer arguments; the super type is closed below.
    let element = unsafe { ncfilters_H5Tget_super(type_id) };
    if element < 0 {
        return Err(Hdf5Error("H5Tget_super"));
    }
    let size = type_size(call, element);
    // SAFETY: element is a type id this function opened.
    unsafe { ncfilters_H5Tclose(element) };
    size
}

/// The significant bits of a type, as szip's set_local counts them: its precision, or its full
/// size when the significant bits do not start at bit 0.
pub fn type_bits(call: &Call<'_>, type_id: Hid) -> Hdf5Result<u64> {
    let size_bits = 8 * type_size(call, type_id)? as u64;
    // SAFETY: no pointer arguments.
    let precision = unsafe { ncfilters_H5Tget_precision(type_id) } as u64;
    if precision == 0 {
        return Err(Hdf5Error("H5Tget_precision"));
    }
    // SAFETY: no pointer arguments.
    if precision < size_bits && unsafe { ncfilters_H5Tget_offset(type_id) } != 0 {
        return Ok(size_bits);
    }
    Ok(precision)
}

/// `H5Tget_order`: `Some(true)` little-endian, `Some(false)` big-endian, `None` for any other.
pub fn type_little_endian(_call: &Call<'_>, type_id: Hid) -> Hdf5Result<Option<bool>> {
    // SAFETY: no pointer arguments.
    match checked(unsafe { ncfilters_H5Tget_order(type_id) }, "H5Tget_order")? {
        H5T_ORDER_LE => Ok(Some(true)),
        H5T_ORDER_BE => Ok(Some(false)),
        _ => Ok(None),
    }
}

/// `H5Sget_simple_extent_dims`.
pub fn space_dims(_call: &Call<'_>, space: Hid) -> Hdf5Result<Vec<u64>> {
    let mut dims = [0u64; MAX_RANK];
    // SAFETY: room for MAX_RANK lengths; max dims not asked for.
    let ndims = checked(
        unsafe { ncfilters_H5Sget_simple_extent_dims(space, dims.as_mut_ptr(), std::ptr::null_mut()) },
        "H5Sget_simple_extent_dims",
    )?;
    Ok(dims[..(ndims as usize).min(MAX_RANK)].to_vec())
}

/// `H5Sget_simple_extent_npoints`.
pub fn space_points(_call: &Call<'_>, space: Hid) -> Hdf5Result<u64> {
    // SAFETY: no pointer arguments.
    u64::try_from(unsafe { ncfilters_H5Sget_simple_extent_npoints(space) })
        .map_err(|_| Hdf5Error("H5Sget_simple_extent_npoints"))
}

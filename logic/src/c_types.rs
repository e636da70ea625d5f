// SPDX-License-Identifier: BSD-3-Clause
//! `repr(C)` types of netcdf-c 4.9.0's public filter headers, as cbindgen renders them into
//! `include/`. Layouts are verified against netcdf-c's own headers by `tools/gen-headers abi-check`.
#![forbid(unsafe_code)]
#![allow(non_camel_case_types, non_snake_case)]

use std::os::raw::{c_char, c_int, c_longlong, c_uint, c_void};

/// `netcdf_aux.h`: the id and parameters of one parsed filter spec.
#[cfg(not(feature = "abi-broken-mirror"))]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NC_H5_Filterspec {
    /// ID for arbitrary filter.
    pub filterid: c_uint,
    /// nparams for arbitrary filter.
    pub nparams: usize,
    /// Params for arbitrary filter.
    pub params: *mut c_uint,
}

/// Deliberately wrong mirror (`nparams` narrowed), only to prove the ABI check fails.
#[cfg(feature = "abi-broken-mirror")]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NC_H5_Filterspec {
    pub filterid: c_uint,
    pub nparams: c_uint,
    pub params: *mut c_uint,
}

/// `netcdf_filter.h` (netcdf-c 4.9.3 on; ncfilters adds it to 4.9.0): a counted vector of plugin
/// directories. The vector and its strings are `malloc`'d: whoever receives them frees them
/// (`ncaux_plugin_path_clear`).
#[repr(C)]
#[derive(Debug)]
pub struct NCPluginList {
    /// The number of directories.
    pub ndirs: usize,
    /// The directories, `ndirs` NUL-terminated strings.
    pub dirs: *mut *mut c_char,
}

// HDF5 replica types of `netcdf_filter_hdf5_build.h`; `ncfilters_use_hdf5` is never set for
// Rust builds, it tells cbindgen to guard them with `#if !defined(USE_HDF5)`.
#[cfg(not(ncfilters_use_hdf5))]
pub type htri_t = c_int;
#[cfg(not(ncfilters_use_hdf5))]
pub type herr_t = c_int;
#[cfg(not(ncfilters_use_hdf5))]
pub type hbool_t = c_int;
#[cfg(not(ncfilters_use_hdf5))]
pub type hsize_t = usize;
#[cfg(not(ncfilters_use_hdf5))]
pub type hid_t = c_longlong;
#[cfg(not(ncfilters_use_hdf5))]
pub type H5Z_filter_t = c_int;

#[cfg(not(ncfilters_use_hdf5))]
/// Whether the filter applies to a dataset: positive yes, 0 no, negative error; NULL: always.
/// HDF5 calls it with the dataset's `dcpl`, type and space (through ncfilters' built-in
/// stand-ins too); the NCZarr engine never calls it.
pub type H5Z_can_apply_func_t = Option<unsafe extern "C" fn(c_longlong, c_longlong, c_longlong) -> htri_t>;
#[cfg(not(ncfilters_use_hdf5))]
/// Sets the filter's parameters for a dataset: negative on error; NULL sets nothing.
/// Called, or not, as `H5Z_can_apply_func_t` is.
pub type H5Z_set_local_func_t = Option<unsafe extern "C" fn(c_longlong, c_longlong, c_longlong) -> herr_t>;
#[cfg(not(ncfilters_use_hdf5))]
/// The filter function: returns the number of valid bytes in `*buf`, or 0 on failure.
pub type H5Z_func_t = Option<
    unsafe extern "C" fn(
        flags: c_uint,
        cd_nelmts: usize,
        cd_values: *const c_uint,
        nbytes: usize,
        buf_size: *mut usize,
        buf: *mut *mut c_void,
    ) -> usize,
>;

/// `H5Z_FLAG_REVERSE`: the filter function is asked to decode.
pub const H5Z_FLAG_REVERSE: c_uint = 0x0100;
/// `H5Z_FLAG_SKIP_EDC`: skip error detection (fletcher32's check) when decoding.
pub const H5Z_FLAG_SKIP_EDC: c_uint = 0x0200;
/// `H5Z_CLASS_T_VERS`: the `H5Z_class2_t` version a plugin's class must carry.
pub const H5Z_CLASS_T_VERS: c_int = 1;
/// `H5PL_TYPE_FILTER`: what a filter plugin's `H5PLget_plugin_type` returns.
pub const H5PL_TYPE_FILTER: c_int = 0;

#[cfg(not(ncfilters_use_hdf5))]
/// An HDF5 filter class (`H5Zpublic.h` layout).
#[repr(C)]
#[derive(Debug)]
pub struct H5Z_class2_t {
    /// Version number of the struct; should be H5Z_CLASS_T_VERS.
    pub version: c_int,
    /// Filter ID number.
    pub id: H5Z_filter_t,
    /// Does this filter have an encoder?
    pub encoder_present: c_uint,
    /// Does this filter have a decoder?
    pub decoder_present: c_uint,
    /// Comment for debugging.
    pub name: *const c_char,
    /// The "can apply" callback for a filter.
    pub can_apply: H5Z_can_apply_func_t,
    /// The "set local" callback for a filter.
    pub set_local: H5Z_set_local_func_t,
    /// The actual filter function.
    pub filter: H5Z_func_t,
}

#[cfg(not(ncfilters_use_hdf5))]
/// Plugin type used by the plugin library.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H5PL_type_t {
    /// Error.
    H5PL_TYPE_ERROR = -1,
    /// Filter.
    H5PL_TYPE_FILTER = 0,
    /// This must be last!
    H5PL_TYPE_NONE = 1,
}

/// Returns the specific constant H5PL_TYPE_FILTER.
pub type H5PL_get_plugin_type_proto = Option<unsafe extern "C" fn() -> H5PL_type_t>;
/// Returns a pointer to an instance of H5Z_class2_t.
pub type H5PL_get_plugin_info_proto = Option<unsafe extern "C" fn() -> *const c_void>;

/// Returns a pointer to one `NCZ_codec_t`.
pub type NCZ_get_codec_info_proto = Option<unsafe extern "C" fn() -> *const c_void>;
/// Returns a pointer to a NULL-terminated vector of `NCZ_codec_t*`.
pub type NCZ_codec_info_defaults_proto = Option<unsafe extern "C" fn() -> *const c_void>;

/// The NumCodecs-style codec description a plugin provides (`netcdf_filter_build.h`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NCZ_codec_t {
    /// Version number of the struct.
    pub version: c_int,
    /// Format of remainder of the struct; currently always NCZ_CODEC_HDF5.
    pub sort: c_int,
    /// The name/id of the codec.
    pub codecid: *const c_char,
    /// Corresponding hdf5 id.
    pub hdf5id: c_uint,
    pub NCZ_codec_initialize: Option<unsafe extern "C" fn()>,
    pub NCZ_codec_finalize: Option<unsafe extern "C" fn()>,
    pub NCZ_codec_to_hdf5:
        Option<unsafe extern "C" fn(codec: *const c_char, nparamsp: *mut usize, paramsp: *mut *mut c_uint) -> c_int>,
    pub NCZ_hdf5_to_codec:
        Option<unsafe extern "C" fn(nparams: usize, params: *const c_uint, codecp: *mut *mut c_char) -> c_int>,
    pub NCZ_modify_parameters: Option<
        unsafe extern "C" fn(
            ncid: c_int,
            varid: c_int,
            vnparamsp: *mut usize,
            vparamsp: *mut *mut c_uint,
            wnparamsp: *mut usize,
            wparamsp: *mut *mut c_uint,
        ) -> c_int,
    >,
}

/// Standard filter ids and blosc enumerators of `netcdf_filter.h` that the Rust side uses.
pub mod ids {
    pub const H5Z_FILTER_DEFLATE: u32 = 1;
    pub const H5Z_FILTER_SHUFFLE: u32 = 2;
    pub const H5Z_FILTER_FLETCHER32: u32 = 3;
    pub const H5Z_FILTER_SZIP: u32 = 4;
    pub const H5Z_FILTER_NBIT: u32 = 5;
    pub const H5Z_FILTER_SCALEOFFSET: u32 = 6;
    pub const H5Z_FILTER_BZIP2: u32 = 307;
    pub const H5Z_FILTER_BLOSC: u32 = 32001;
    pub const H5Z_FILTER_ZSTD: u32 = 32015;
    pub const BLOSC_BITSHUFFLE: u32 = 2;
    pub const BLOSC_ZSTD: u32 = 5;
}

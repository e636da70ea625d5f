// SPDX-License-Identifier: BSD-3-Clause
//! What a plugin library exports: HDF5's plugin entry points (`H5PLget_plugin_type`,
//! `H5PLget_plugin_info` returning an `H5Z_class2_t`), netcdf-c's codec entry points
//! (`NCZ_get_codec_info`, `NCZ_codec_info_defaults` returning `NCZ_codec_t`s), and the codec
//! functions those structs point to, one module per row of the table of standard filters. The
//! libraries in `plugins/` are one macro call each, naming their row or codec-defaults library:
//! [`export_standard_plugin!`](crate::export_standard_plugin) and
//! [`export_codec_defaults!`](crate::export_codec_defaults).

use crate::c_heap::{CArray, CParams};
use crate::c_types::{H5Z_can_apply_func_t, H5Z_class2_t, H5Z_func_t, H5Z_set_local_func_t, NCZ_codec_t};
use crate::codecs::{Codec, VarFacts};
use crate::error::NcResult;
use crate::h5z;
use crate::netcdf_api;
use crate::standard_filter_table::{standard_filter_rows, CodecDefaults, STANDARD_FILTERS};
use ncfilters_core::c_args::{Call, FromRawArgument, HeapParams, Out, Params, Text, VectorOut};
use ncfilters_core::ffi_boundary::Returned;
use ncfilters_core::plugin_loader::FilterPart;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint, c_void};

/// An `H5Z_class2_t` in a static (its raw pointers are to static data), which HDF5 gets from
/// `H5PLget_plugin_info` or `H5Zregister` and calls through. Its field is private: the class's
/// pointers are trusted by HDF5, so a class is made by [`StandardFilter::class`] or promised by
/// [`StaticClass::new`].
///
/// ```compile_fail,E0423
/// use ncfilters_plugin::c_types::H5Z_class2_t;
/// use ncfilters_plugin::plugin::StaticClass;
/// let dangling = std::ptr::NonNull::<std::os::raw::c_char>::dangling().as_ptr();
/// let class = H5Z_class2_t {
///     version: 1, id: 300, encoder_present: 1, decoder_present: 1,
///     name: dangling, can_apply: None, set_local: None, filter: None,
/// };
/// let _ = StaticClass(class);
/// ```
///
/// ```compile_fail,E0133
/// use ncfilters_plugin::c_types::H5Z_class2_t;
/// use ncfilters_plugin::plugin::StaticClass;
/// let dangling = std::ptr::NonNull::<std::os::raw::c_char>::dangling().as_ptr();
/// let class = H5Z_class2_t {
///     version: 1, id: 300, encoder_present: 1, decoder_present: 1,
///     name: dangling, can_apply: None, set_local: None, filter: None,
/// };
/// let _ = StaticClass::new(class);
/// ```
#[repr(transparent)]
pub struct StaticClass(H5Z_class2_t);
// SAFETY: immutable, and every pointer in it points to 'static data (`new`'s contract).
unsafe impl Sync for StaticClass {}

impl StaticClass {
    /// # Safety
    /// `class.name` is NULL or a `'static` NUL-terminated string, and its functions follow
    /// HDF5's `H5Z_class2_t` contracts for as long as the process runs.
    pub const unsafe fn new(class: H5Z_class2_t) -> Self {
        StaticClass(class)
    }

    /// The class, as HDF5 reads it.
    pub const fn get(&self) -> &H5Z_class2_t {
        &self.0
    }

    /// The class as `H5PLget_plugin_info` returns it.
    pub const fn plugin_info(&'static self) -> Returned<c_void> {
        // SAFETY: a 'static `H5Z_class2_t` (`repr(transparent)`), which is what HDF5 reads there.
        unsafe { Returned::from_raw((self as *const Self).cast()) }
    }
}

/// An `NCZ_codec_t` in a static, which netcdf-c gets from `NCZ_get_codec_info` and calls
/// through. Its field is private, as [`StaticClass`]'s is.
///
/// ```compile_fail,E0423
/// use ncfilters_plugin::plugin::{zstd, StaticCodec};
/// let _ = StaticCodec(*zstd::CODEC.get());
/// ```
#[repr(transparent)]
pub struct StaticCodec(NCZ_codec_t);
// SAFETY: immutable, and every pointer in it points to 'static data (`new`'s contract).
unsafe impl Sync for StaticCodec {}

impl StaticCodec {
    /// # Safety
    /// `codec.codecid` is a `'static` NUL-terminated string, and its functions follow
    /// netcdf-c's `NCZ_codec_t` contracts for as long as the process runs.
    pub const unsafe fn new(codec: NCZ_codec_t) -> Self {
        StaticCodec(codec)
    }

    /// The codec, as netcdf-c reads it.
    pub const fn get(&self) -> &NCZ_codec_t {
        &self.0
    }

    /// The codec as `NCZ_get_codec_info` returns it.
    pub const fn codec_info(&'static self) -> Returned<c_void> {
        // SAFETY: a 'static `NCZ_codec_t` (`repr(transparent)`), which is what netcdf-c reads there.
        unsafe { Returned::from_raw((self as *const Self).cast()) }
    }
}

/// A NULL-terminated list of codecs for `NCZ_codec_info_defaults`, made by [`codec_defaults`].
#[repr(transparent)]
pub struct StaticCodecList<const N: usize>([*const NCZ_codec_t; N]);
// SAFETY: immutable pointers to 'static codecs.
unsafe impl<const N: usize> Sync for StaticCodecList<N> {}

impl<const N: usize> StaticCodecList<N> {
    /// The list, as netcdf-c reads it.
    pub const fn as_ptr(&self) -> *const *const NCZ_codec_t {
        self.0.as_ptr()
    }

    /// The list as `NCZ_codec_info_defaults` returns it.
    pub const fn codec_info_defaults(&'static self) -> Returned<c_void> {
        // SAFETY: a 'static NULL-terminated array of codec pointers (`codec_defaults`), which is
        // what netcdf-c reads there.
        unsafe { Returned::from_raw(self.0.as_ptr().cast()) }
    }
}

/// One of ncfilters' standard filters: the source of its plugin library's `H5Z_class2_t`
/// ([`StaticClass`]) and of the parts libnetcdf has built in (the ncfilters crate's `abi::builtin`).
/// Its functions are private: [`StandardFilter::class`] hands them to HDF5, so they are only
/// ever this crate's own (`h5z::hdf5_functions`).
pub struct StandardFilter {
    pub id: u32,
    /// The class's name, also the filter's name in the chain's diagnostics.
    pub name: &'static CStr,
    function: H5Z_func_t,
    /// HDF5 callbacks run when a dataset is created.
    can_apply: H5Z_can_apply_func_t,
    set_local: H5Z_set_local_func_t,
    pub codec: Codec,
}

impl StandardFilter {
    /// The filter of `codec`'s row, named `class_name` (netcdf-c's C plugin's name: `"zstd"`, …;
    /// HDF5 stores it in the file and programs compare it).
    const fn new(codec: Codec, class_name: &'static str) -> Self {
        let Ok(name) = CStr::from_bytes_with_nul(class_name.as_bytes()) else { panic!("a class name without its NUL") };
        let functions = h5z::hdf5_functions(codec);
        StandardFilter {
            id: codec.hdf5_id(),
            name,
            function: functions.filter,
            can_apply: functions.can_apply,
            set_local: functions.set_local,
            codec,
        }
    }

    /// The filter's HDF5 class, as its plugin library exports it.
    pub const fn class(&self) -> StaticClass {
        // The name is a 'static C string and the functions are h5z's, which follow HDF5's
        // contracts; StaticClass is built here directly, as its own module may.
        StaticClass(H5Z_class2_t {
            version: 1,
            id: self.id as c_int,
            encoder_present: 1,
            decoder_present: 1,
            name: self.name.as_ptr(),
            can_apply: self.can_apply,
            set_local: self.set_local,
            filter: self.function,
        })
    }
}

/// One module per standard filter: its [`StandardFilter`] (`FILTER`), its plugin library's class
/// (`CLASS`) and codec (`CODEC`) with the codec functions as C function pointers.
macro_rules! standard_filter_module {
    ($filter:ident, $codec:expr, $id:literal) => {
        pub mod $filter {
            use super::*;

            pub const FILTER: StandardFilter = StandardFilter::new($codec, concat!(stringify!($filter), "\0"));
            pub static CLASS: StaticClass = FILTER.class();

            unsafe extern "C" fn to_hdf5(
                codec: *const c_char,
                nparamsp: *mut usize,
                paramsp: *mut *mut c_uint,
            ) -> c_int {
                // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
                let thread = unsafe { $crate::ffi_boundary::CallersThread::promise() };
                $crate::ffi_export!(named concat!($id, " NCZ_codec_to_hdf5"), thread, |call| {
                    // SAFETY: netcdf-c passes the codec's NUL-terminated JSON text and valid out-pointers.
                    unsafe { codec_to_hdf5(call, $codec, codec, nparamsp, paramsp) }
                })
            }

            unsafe extern "C" fn to_codec(nparams: usize, params: *const c_uint, codecp: *mut *mut c_char) -> c_int {
                // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
                let thread = unsafe { $crate::ffi_boundary::CallersThread::promise() };
                $crate::ffi_export!(named concat!($id, " NCZ_hdf5_to_codec"), thread, |call| {
                    // SAFETY: netcdf-c passes nparams readable words (or NULL) and a valid out-pointer.
                    unsafe { hdf5_to_codec(call, $codec, nparams, params, codecp) }
                })
            }

            unsafe extern "C" fn modify(
                ncid: c_int,
                varid: c_int,
                vnparamsp: *mut usize,
                vparamsp: *mut *mut c_uint,
                wnparamsp: *mut usize,
                wparamsp: *mut *mut c_uint,
            ) -> c_int {
                // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
                let thread = unsafe { $crate::ffi_boundary::CallersThread::promise() };
                $crate::ffi_export!(named concat!($id, " NCZ_modify_parameters"), thread, |call| {
                    // SAFETY: netcdf-c passes the filter's C-heap visible and working vectors.
                    unsafe { modify_parameters(call, $codec, ncid, varid, vnparamsp, vparamsp, wnparamsp, wparamsp) }
                })
            }

            // Built here, where the field is visible: its id is a literal, its functions this module's.
            pub static CODEC: StaticCodec = StaticCodec(NCZ_codec_t {
                version: 1,
                sort: 1,
                codecid: concat!($id, "\0").as_ptr() as *const c_char,
                hdf5id: $codec.hdf5_id(),
                NCZ_codec_initialize: None,
                NCZ_codec_finalize: None,
                NCZ_codec_to_hdf5: Some(to_hdf5),
                NCZ_hdf5_to_codec: Some(to_codec),
                NCZ_modify_parameters: if $codec.modifies_parameters() { Some(modify) } else { None },
            });
        }
    };
}

macro_rules! standard_filter_modules {
    ($($filter:ident: $codec:ident = $id:literal, $codec_id:literal, $defaults:ident, $in_hdf5:ident, $native:expr, $netcdf_plugin:ident;)*) => {
        $(standard_filter_module!($filter, Codec::$codec, $codec_id);)*

        /// The standard filters, each with its codec, in table order: what libnetcdf has built in.
        pub static STANDARD: [&StandardFilter; STANDARD_FILTERS.len()] = [$(&$filter::FILTER),*];

        /// Their codecs, in table order.
        static CODECS: [&StaticCodec; STANDARD_FILTERS.len()] = [$(&$filter::CODEC),*];
    };
}
standard_filter_rows!(standard_filter_modules);

/// The list `library`'s `NCZ_codec_info_defaults` returns: its codecs in table order, then NULL
/// (`N` is [`CodecDefaults::codec_count`] + 1).
/// The previous limit `ncfilters_set_decode_limit` returns: a plain size, 0 after a panic. Not an
/// H5Z byte count, which only the runtime's `Committed` carries to C.
#[doc(hidden)]
pub struct DecodeLimit(pub usize);

impl ncfilters_core::ffi_boundary::OnPanic for DecodeLimit {
    fn on_panic() -> Self {
        DecodeLimit(0)
    }
    const MEANING: &'static str = "returning 0";
}

pub const fn codec_defaults<const N: usize>(library: CodecDefaults) -> StaticCodecList<N> {
    let mut list = [std::ptr::null(); N];
    let mut listed = 0;
    let mut row = 0;
    while row < STANDARD_FILTERS.len() {
        if STANDARD_FILTERS[row].codec_defaults as u8 == library as u8 {
            list[listed] = &CODECS[row].0 as *const NCZ_codec_t;
            listed += 1;
        }
        row += 1;
    }
    assert!(listed + 1 == N, "N is not the library's codec count + 1");
    StaticCodecList(list)
}

/// `NCZ_codec_to_hdf5`'s pointers, each made a handle once.
///
/// # Safety
/// `text` is NULL or NUL-terminated; the out-pointers are NULL or writable.
unsafe fn codec_to_hdf5(
    call: &Call<'_>,
    codec: Codec,
    text: *const c_char,
    nparamsp: *mut usize,
    paramsp: *mut *mut c_uint,
) -> NcResult<()> {
    crate::reject_null!(text, nparamsp, paramsp);
    // SAFETY: per this function's contract, for the call.
    let (text, params) = unsafe { (Text::from_raw(call, text), VectorOut::from_raw(call, (nparamsp, paramsp))) };
    params_of_codec(codec, text, params)
}

/// The codec's JSON `text` as HDF5 parameters, into a vector the caller frees with free().
fn params_of_codec(codec: Codec, text: Text<'_>, out: VectorOut<'_, c_uint>) -> NcResult<()> {
    let text = text.0.ok_or(crate::error::NC_EFILTER)?;
    let params = codec.from_json(std::str::from_utf8(text).map_err(|_| crate::error::NC_EFILTER)?)?;
    let words = CArray::from_slice(&params)?;
    out.give(words);
    Ok(())
}

/// `NCZ_hdf5_to_codec`'s pointers, each made a handle once.
///
/// # Safety
/// `params` is NULL or readable for `nparams` words; `codecp` is NULL or writable.
unsafe fn hdf5_to_codec(
    call: &Call<'_>,
    codec: Codec,
    nparams: usize,
    params: *const c_uint,
    codecp: *mut *mut c_char,
) -> NcResult<()> {
    // SAFETY: per this function's contract, for the call.
    let (params, text) = unsafe { (Params::from_raw(call, (params, nparams)), Out::from_raw(call, codecp)) };
    codec_of_params(codec, params?, text)
}

/// HDF5 parameters as the codec's JSON, into a string the caller frees with free() (none for a
/// NULL out-pointer).
fn codec_of_params(codec: Codec, params: &[u32], mut text: Out<'_, *mut c_char>) -> NcResult<()> {
    let json = codec.to_json(params)?;
    if !text.is_null() {
        text.give_text(crate::c_heap::c_string(json.as_bytes())?);
    }
    Ok(())
}

/// `NCZ_modify_parameters`' pointers, each made a handle once.
///
/// # Safety
/// The pointers are netcdf-c's: the filter's C-heap visible and working vectors, two blocks
/// (each becomes a `&mut`).
#[allow(clippy::too_many_arguments)] // the entry point's six, plus the call and the codec
unsafe fn modify_parameters(
    call: &Call<'_>,
    codec: Codec,
    ncid: c_int,
    varid: c_int,
    vnparamsp: *mut usize,
    vparamsp: *mut *mut c_uint,
    wnparamsp: *mut usize,
    wparamsp: *mut *mut c_uint,
) -> NcResult<()> {
    crate::reject_null!(vnparamsp, vparamsp, wnparamsp, wparamsp);
    // SAFETY: per this function's contract, for the call.
    let (visible, mut working) = unsafe {
        (HeapParams::from_raw(call, (vnparamsp, vparamsp)), HeapParams::from_raw(call, (wnparamsp, wparamsp)))
    };
    working.replace(CParams::from_slice(&working_parameters(call, codec, ncid, varid, visible.words()?)?)?);
    Ok(())
}

/// [`STANDARD`]'s filters, each with its registry part.
pub fn standard_filter_parts() -> impl Iterator<Item = (&'static StandardFilter, FilterPart)> {
    STANDARD.iter().map(|&standard| {
        let name = standard.name.to_string_lossy().into_owned();
        // SAFETY: STANDARD's functions are this crate's own for their ids, static in the image.
        let part =
            unsafe { FilterPart::new(standard.id, name, standard.function, standard.can_apply, standard.set_local) };
        (standard, part)
    })
}

/// A standard codec's working parameters for variable `(ncid, varid)`, asked of netcdf-c within
/// `call`.
pub fn working_parameters(
    call: &Call<'_>,
    codec: Codec,
    ncid: c_int,
    varid: c_int,
    visible: &[u32],
) -> NcResult<Vec<u32>> {
    codec.working(visible, &NetcdfVar { call, ncid, varid })
}

/// A variable of an open dataset, as codecs see it through netcdf-c's public API, within a call.
struct NetcdfVar<'a> {
    call: &'a Call<'a>,
    ncid: c_int,
    varid: c_int,
}

impl VarFacts for NetcdfVar<'_> {
    fn type_size(&self) -> NcResult<usize> {
        let xtype = netcdf_api::var_type(self.call, self.ncid, self.varid)?;
        netcdf_api::type_size(self.call, self.ncid, xtype)
    }

    fn chunk_lens(&self) -> NcResult<Option<Vec<u64>>> {
        Ok(netcdf_api::var_chunks(self.call, self.ncid, self.varid)?
            .map(|lens| lens.into_iter().map(|l| l as u64).collect()))
    }

    fn last_dim_len(&self) -> NcResult<Option<u64>> {
        match netcdf_api::var_dim_ids(self.call, self.ncid, self.varid)?.last() {
            Some(&dimid) => Ok(Some(netcdf_api::dim_len(self.call, self.ncid, dimid)? as u64)),
            None => Ok(None),
        }
    }

    fn little_endian(&self) -> NcResult<bool> {
        // Native order when none is set (4.9.0's codec fails there, though the data are native).
        Ok(netcdf_api::var_little_endian(self.call, self.ncid, self.varid)?.unwrap_or(cfg!(target_endian = "little")))
    }
}

/// Exports a plugin library's entry points: `H5PLget_plugin_type`, `H5PLget_plugin_info` (the
/// given [`StaticClass`]) and, with a codec, `NCZ_get_codec_info`.
///
/// Only a [`StaticClass`] goes to HDF5 as a class, and only a [`StaticCodec`] to netcdf-c as a
/// codec: anything else would be read as one.
///
/// ```compile_fail,E0308
/// ncfilters_plugin::export_plugin!(ncfilters_plugin::plugin::zstd::CODEC);
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($class:expr $(, $codec:expr)?) => {
        /// HDF5's plugin type query: a filter.
        #[no_mangle]
        pub extern "C" fn H5PLget_plugin_type() -> ::std::os::raw::c_int {
            0 // H5PL_TYPE_FILTER
        }

        /// HDF5's plugin info: the filter's `H5Z_class2_t`.
        ///
        /// # Safety
        /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
        #[no_mangle]
        pub unsafe extern "C" fn H5PLget_plugin_info() -> *const ::std::os::raw::c_void {
            // Typed: only a StaticClass may be handed to HDF5 as one.
            let class: &'static $crate::plugin::StaticClass = &$class;
            // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
            let thread = unsafe { $crate::ffi_boundary::CallersThread::promise() };
            $crate::ffi_export!(thread, |call| class.plugin_info())
        }

        /// ncfilters' NCZarr chain sets the calling thread's decode limit (the chunk's known
        /// size) around a decode by this library's filter; returns the previous limit.
        ///
        /// # Safety
        /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
        #[no_mangle]
        pub unsafe extern "C" fn ncfilters_set_decode_limit(limit: usize) -> usize {
            // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
            let thread = unsafe { $crate::ffi_boundary::CallersThread::promise() };
            $crate::ffi_export!(caught "ncfilters_set_decode_limit", thread, |_call| {
                $crate::plugin::DecodeLimit($crate::filters::replace_decode_limit(limit))
            })
            .0
        }

        $(
            /// netcdf-c's codec info: the filter's `NCZ_codec_t`.
            ///
            /// # Safety
            /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
            #[no_mangle]
            pub unsafe extern "C" fn NCZ_get_codec_info() -> *const ::std::os::raw::c_void {
                let codec: &'static $crate::plugin::StaticCodec = &$codec;
                // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
                let thread = unsafe { $crate::ffi_boundary::CallersThread::promise() };
                $crate::ffi_export!(thread, |call| codec.codec_info())
            }
        )?
    };
}

/// Exports a standard filter's plugin library: its class and codec (its module here, named as
/// its row of the table of standard filters).
#[macro_export]
macro_rules! export_standard_plugin {
    ($filter:ident) => {
        $crate::export_plugin!($crate::plugin::$filter::CLASS, $crate::plugin::$filter::CODEC);
    };
}

/// Exports `NCZ_codec_info_defaults` of a codec-defaults library (a
/// [`CodecDefaults`](crate::standard_filter_table::CodecDefaults) variant): a NULL-terminated list
/// of the codecs the table of standard filters assigns to it.
#[macro_export]
macro_rules! export_codec_defaults {
    ($library:ident) => {
        const LIBRARY: $crate::standard_filter_table::CodecDefaults =
            $crate::standard_filter_table::CodecDefaults::$library;
        static DEFAULTS: $crate::plugin::StaticCodecList<{ LIBRARY.codec_count() + 1 }> =
            $crate::plugin::codec_defaults(LIBRARY);

        /// netcdf-c's codec defaults: codecs for HDF5 filters whose libraries have none.
        ///
        /// # Safety
        /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
        #[no_mangle]
        pub unsafe extern "C" fn NCZ_codec_info_defaults() -> *const ::std::os::raw::c_void {
            // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
            let thread = unsafe { $crate::ffi_boundary::CallersThread::promise() };
            $crate::ffi_export!(thread, |call| DEFAULTS.codec_info_defaults())
        }
    };
}

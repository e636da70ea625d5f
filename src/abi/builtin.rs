// SPDX-License-Identifier: BSD-3-Clause
//! The standard filters built into libnetcdf for netCDF-4/HDF5 files, so that files with them
//! are written and read with no `HDF5_PLUGIN_PATH`.
//!
//! At netCDF initialisation each standard id HDF5 does not already have is registered
//! (`H5Zregister`) with a *stand-in* class. Registering must not search the plugin path (that
//! would load every plugin library into every netCDF program), so the stand-in decides only when
//! HDF5 first uses the filter: a plugin on `HDF5_PLUGIN_PATH` with the id, if there is one,
//! else ncfilters' own filter (both found through `crate::plugin_registry`). The order is:
//! 1. a class already registered with HDF5 for the id: HDF5's own predefined filters (deflate,
//!    shuffle, fletcher32 and, where HDF5 has it, szip) or one the application registered
//!    (hdf5plugin, h5py): it is never replaced;
//! 2. a plugin library on `HDF5_PLUGIN_PATH`;
//! 3. ncfilters' built-in filter.
//!
//! The same filters, with their codecs, are what NCZarr has built in
//! (`crate::nczarr_filters::registry`).

use super::plugin::{StaticClass, STANDARD};
use crate::c_args::Committed;
use crate::c_types::{hid_t, H5Z_class2_t};
use crate::error::report;
use crate::ffi_boundary::Call;
use crate::nczarr_filters::registry;
use crate::plugin_loader::FilterPart;
use crate::standard_filter_table::standard_filter_rows;
use std::os::raw::{c_int, c_uint, c_void};

/// Runs `use_part` on the filter HDF5 should run for `id` (the path's plugin or ncfilters' own),
/// holding its plugin, and so the library it lives in, for the call; `None` when there is none.
/// This runs per chunk: it takes an `Arc`, it copies nothing.
fn with_preferred<R>(call: &Call<'_>, id: u32, use_part: impl FnOnce(&FilterPart) -> R) -> Option<R> {
    let plugin = registry(call).get(id).cloned()?;
    plugin.filter.as_ref().map(use_part)
}

/// `can_apply` or `set_local` (both `int (hid_t, hid_t, hid_t)`).
type Callback = unsafe extern "C" fn(hid_t, hid_t, hid_t) -> c_int;

/// Runs the chosen implementation's `callback`, or returns `absent` when it has none (HDF5's
/// "applies" / "nothing to set"); -1, HDF5's failure, when there is no implementation at all.
fn delegate(
    call: &Call<'_>,
    id: u32,
    callback: fn(&FilterPart) -> Option<Callback>,
    absent: c_int,
    args: (hid_t, hid_t, hid_t),
) -> c_int {
    with_preferred(call, id, |part| match callback(part) {
        // SAFETY: HDF5's arguments, passed on to the chosen class's callback, whose library is
        // held loaded for the call.
        Some(function) => unsafe { function(args.0, args.1, args.2) },
        None => absent,
    })
    .unwrap_or(-1)
}

/// HDF5 reads only 0 as a filter's failure; netcdf-c's C plugins return `(size_t)-1` from their
/// error paths (szip's "overflow" on incompressible data, say), which HDF5 would take as
/// success with `SIZE_MAX` bytes.
fn failure_as_zero(used: usize) -> usize {
    if used == usize::MAX {
        0
    } else {
        used
    }
}

macro_rules! stand_in {
    ($module:ident, $id:literal) => {
        mod $module {
            use super::*;

            unsafe extern "C" fn filter(
                flags: c_uint,
                cd_nelmts: usize,
                cd_values: *const c_uint,
                nbytes: usize,
                buf_size: *mut usize,
                buf: *mut *mut c_void,
            ) -> usize {
                // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
                let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
                // A panic anywhere in the lookup or the call is HDF5's failure, 0.
                crate::ffi_export!(named concat!("filter ", $id, "'s H5Z_func_t"), thread, |call| {
                    let used = with_preferred(call, $id, |part| {
                        let function = part.function()?;
                        // SAFETY: the H5Z_func_t contract, passed on unchanged; the library the
                        // function lives in is held loaded for the call.
                        Some(unsafe { function(flags, cd_nelmts, cd_values, nbytes, buf_size, buf) })
                    })
                    .flatten()
                    .unwrap_or_else(|| {
                        report(format_args!("filter {}: no implementation found", $id));
                        0
                    });
                    // SAFETY: the count the chosen filter returned for this call's own `*buf`
                    // (its H5Z_func_t contract, a failure leaving the block as it came), or 0
                    // when no filter ran, the block as HDF5 gave it.
                    unsafe { Committed::from_raw(failure_as_zero(used)) }
                })
            }

            unsafe extern "C" fn can_apply(dcpl: hid_t, type_id: hid_t, space: hid_t) -> c_int {
                // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
                let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
                crate::ffi_export!(caught concat!("filter ", $id, "'s can_apply"), thread, |call| {
                    delegate(call, $id, |part| part.can_apply(), 1, (dcpl, type_id, space))
                })
            }

            unsafe extern "C" fn set_local(dcpl: hid_t, type_id: hid_t, space: hid_t) -> c_int {
                // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
                let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
                crate::ffi_export!(caught concat!("filter ", $id, "'s set_local"), thread, |call| {
                    delegate(call, $id, |part| part.set_local(), 0, (dcpl, type_id, space))
                })
            }

            // SAFETY: the name is a static NUL-terminated literal and the functions are this
            // module's H5Z callbacks, which catch panics and follow HDF5's contracts.
            pub static CLASS: StaticClass = unsafe { StaticClass::new(H5Z_class2_t {
                version: 1,
                id: $id as c_int,
                encoder_present: 1,
                decoder_present: 1,
                name: concat!(stringify!($module), " (ncfilters built-in, or the plugin on HDF5_PLUGIN_PATH)\0")
                    .as_ptr()
                    .cast(),
                can_apply: Some(can_apply),
                set_local: Some(set_local),
                filter: Some(filter),
            }) };
        }
    };
}

macro_rules! stand_ins {
    ($($filter:ident: $codec:ident = $id:literal, $codec_id:literal, $defaults:ident, $in_hdf5:ident, $native:expr, $netcdf_plugin:ident;)*) => {
        $(stand_in!($filter, $id);)*

        /// A stand-in per standard filter, in table order.
        static STAND_INS: [&StaticClass; [$($id),*].len()] = [$(&$filter::CLASS),*];
    };
}
standard_filter_rows!(stand_ins);

/// The ids below this are HDF5's predefined filters': `H5Zregister` refuses them ("unable to
/// modify predefined filters").
const H5Z_FILTER_RESERVED: u32 = 256;

/// Whether HDF5 takes a stand-in for `id`. An HDF5 built without szip (id 4) has no filter for
/// it and takes none: szip is then missing, as it is from stock netcdf-c on that HDF5.
fn hdf5_takes_a_class_for(id: u32) -> bool {
    id >= H5Z_FILTER_RESERVED
}

/// Registers a stand-in for each standard filter that has no class registered with HDF5 yet
/// (see the module documentation). Asks HDF5's registered table only, so HDF5 never searches
/// its plugin path here, and a class registered before (HDF5's own, an application's, or ours
/// from an earlier `nc_initialize`) is kept.
pub fn register_standard_filters(call: &Call<'_>) {
    for class in STAND_INS {
        let id = class.get().id as u32;
        debug_assert!(STANDARD.iter().any(|standard| standard.id == id));
        if !hdf5_takes_a_class_for(id) {
            continue;
        }
        match crate::hdf5_sys::filter_registered(call, id) {
            Ok(false) => {}
            Ok(true) => continue,
            Err(_) => return, // HDF5 is not in the process
        }
        // SAFETY: a StaticClass's pointers are 'static and its functions follow HDF5's
        // contracts (StaticClass::new).
        match unsafe { crate::hdf5_sys::register(class.get()) } {
            Ok(()) => crate::hdf5_filters::record_stand_in(id),
            Err(e) => report(format_args!("built-in filter {id}: {} failed", e.0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plugin as p;
    use super::*;
    use crate::c_heap::CParams;
    use crate::plugin_loader::test_parts::library_codec;
    use crate::plugin_loader::CodecPart;
    use std::ffi::CStr;

    /// HDF5's own four get no stand-in (an HDF5 without szip would refuse one for id 4, and
    /// every netCDF program would report it); bzip2, zstd and blosc do.
    #[test]
    fn stand_ins_are_offered_only_for_ids_hdf5_lets_be_registered() {
        let offered: Vec<u32> =
            STAND_INS.iter().map(|class| class.get().id as u32).filter(|&id| hdf5_takes_a_class_for(id)).collect();
        assert_eq!(offered, [307, 32015, 32001]);
    }

    /// NCZarr's built-ins are the plugin libraries' classes and codecs, run as Rust.
    #[test]
    fn the_builtin_parts_are_the_plugin_libraries_parts() {
        let libraries = [
            (&p::deflate::CLASS, &p::deflate::CODEC, &[5][..]),
            (&p::shuffle::CLASS, &p::shuffle::CODEC, &[4]),
            (&p::fletcher32::CLASS, &p::fletcher32::CODEC, &[]),
            (&p::szip::CLASS, &p::szip::CODEC, &[32, 16]),
            (&p::bzip2::CLASS, &p::bzip2::CODEC, &[9]),
            (&p::zstd::CLASS, &p::zstd::CODEC, &[3]),
            (&p::blosc::CLASS, &p::blosc::CODEC, &[0, 0, 0, 1, 5, 1, 4]),
        ];
        let builtins = crate::nczarr_filters::builtin_parts();
        assert_eq!(builtins.len(), libraries.len());
        for ((filter, native), (class, codec, params)) in builtins.iter().zip(libraries) {
            let class = class.get();
            assert_eq!(filter.id() as c_int, class.id);
            // SAFETY: the class's name is a static C string.
            assert_eq!(Some(filter.name()), unsafe { CStr::from_ptr(class.name) }.to_str().ok());
            assert_eq!(filter.function().map(|f| f as usize), class.filter.map(|f| f as usize));
            assert_eq!(filter.can_apply().map(|f| f as usize), class.can_apply.map(|f| f as usize));
            assert_eq!(filter.set_local().map(|f| f as usize), class.set_local.map(|f| f as usize));
            // SAFETY: a plugin library's static codec.
            let library = unsafe { library_codec(codec.get()) }.unwrap();
            assert_eq!((&native.codec_id, native.hdf5_id), (&library.codec_id, library.hdf5_id));
            assert_eq!(native.modifies_parameters(), library.modifies_parameters());
            let visible = CParams::from_slice(params).unwrap();
            crate::in_test_call(|call| {
                let text = native.to_codec(call, &visible);
                assert_eq!(text, library.to_codec(call, &visible), "{}", native.codec_id);
                let id = &native.codec_id;
                for json in [text.unwrap(), format!("{{\"id\": \"{id}\", \"level\": -1}}"), "[]".into()] {
                    let read = |part: &CodecPart| part.to_hdf5(call, &json).map(|params| params.as_slice().to_vec());
                    assert_eq!(read(native), read(&library), "{json}");
                }
            });
        }
    }
}

//! The standard filters built into libnetcdf for netCDF-4/HDF5 files, so that files with them
//! are written and read with no `HDF5_PLUGIN_PATH`.
//!
//! At netCDF initialisation each standard id HDF5 does not already have is registered
//! (`H5Zregister`) with a *stand-in* class. Registering must not search the plugin path (that
//! would load every plugin library into every netCDF program), so the stand-in decides only when
//! HDF5 first uses the filter: a plugin on `HDF5_PLUGIN_PATH` with the id, if there is one,
//! else ncfilters' own filter (both found through [`plugin_registry`]). The order is:
//! 1. a class already registered with HDF5 for the id: HDF5's own predefined filters (deflate,
//!    shuffle, fletcher32 and, where HDF5 has it, szip) or one the application registered
//!    (hdf5plugin, h5py): it is never replaced;
//! 2. a plugin library on `HDF5_PLUGIN_PATH`;
//! 3. ncfilters' built-in filter.

use crate::abi::plugin::STANDARD;
use crate::c_types::{hid_t, H5Z_class2_t};
use crate::error::report;
use crate::plugin_loader::FilterPart;
use crate::plugin_registry;
use std::os::raw::{c_int, c_uint, c_void};

/// Runs `use_part` on the filter HDF5 should run for `id` (the path's plugin or ncfilters' own),
/// holding its plugin, and so the library it lives in, for the call; `None` when there is none.
/// This runs per chunk: it takes an `Arc`, it copies nothing.
fn with_preferred<R>(id: u32, use_part: impl FnOnce(&FilterPart) -> R) -> Option<R> {
    let plugin = std::panic::catch_unwind(|| plugin_registry::registry().get(id).cloned()).ok()??;
    plugin.filter.as_ref().map(use_part)
}

/// `can_apply` or `set_local` (both `int (hid_t, hid_t, hid_t)`).
type Callback = unsafe extern "C" fn(hid_t, hid_t, hid_t) -> c_int;

/// Runs the chosen implementation's `callback`, or returns `absent` when it has none (HDF5's
/// "applies" / "nothing to set"); -1, HDF5's failure, when there is no implementation at all.
fn delegate(
    id: u32,
    callback: fn(&FilterPart) -> Option<Callback>,
    absent: c_int,
    args: (hid_t, hid_t, hid_t),
) -> c_int {
    with_preferred(id, |part| match callback(part) {
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
    ($module:ident, $id:expr, $name:literal) => {
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
                // SAFETY: the H5Z_func_t contract, passed on unchanged; the library the function
                // lives in is held loaded for the call.
                let used = with_preferred($id, |part| unsafe {
                    (part.function)(flags, cd_nelmts, cd_values, nbytes, buf_size, buf)
                })
                .unwrap_or_else(|| {
                    report(format_args!("filter {}: no implementation found", $id));
                    0
                });
                failure_as_zero(used)
            }

            unsafe extern "C" fn can_apply(dcpl: hid_t, type_id: hid_t, space: hid_t) -> c_int {
                delegate($id, |part| part.can_apply, 1, (dcpl, type_id, space))
            }

            unsafe extern "C" fn set_local(dcpl: hid_t, type_id: hid_t, space: hid_t) -> c_int {
                delegate($id, |part| part.set_local, 0, (dcpl, type_id, space))
            }

            pub static CLASS: crate::abi::plugin::StaticClass = crate::abi::plugin::StaticClass(H5Z_class2_t {
                version: 1,
                id: $id as c_int,
                encoder_present: 1,
                decoder_present: 1,
                name: concat!($name, " (ncfilters built-in, or the plugin on HDF5_PLUGIN_PATH)\0").as_ptr().cast(),
                can_apply: Some(can_apply),
                set_local: Some(set_local),
                filter: Some(filter),
            });
        }
    };
}

stand_in!(deflate, 1u32, "deflate");
stand_in!(shuffle, 2u32, "shuffle");
stand_in!(fletcher32, 3u32, "fletcher32");
stand_in!(szip, 4u32, "szip");
stand_in!(bzip2, 307u32, "bzip2");
stand_in!(zstd, 32015u32, "zstd");
stand_in!(blosc, 32001u32, "blosc");

static STAND_INS: [&crate::abi::plugin::StaticClass; 7] =
    [&deflate::CLASS, &shuffle::CLASS, &fletcher32::CLASS, &szip::CLASS, &bzip2::CLASS, &zstd::CLASS, &blosc::CLASS];

/// The ids whose stand-in this process registered.
static REGISTERED: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

fn registered_ids() -> std::sync::MutexGuard<'static, Vec<u32>> {
    REGISTERED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers a stand-in for each standard filter that has no class registered with HDF5 yet
/// (see the module documentation). Asks HDF5's registered table only, so HDF5 never searches
/// its plugin path here, and a class registered before (HDF5's own, an application's, or ours
/// from an earlier `nc_initialize`) is kept.
pub fn register_standard_filters() {
    for class in STAND_INS {
        let id = class.0.id as u32;
        debug_assert!(STANDARD.iter().any(|(standard, _)| standard.0.id == class.0.id));
        match crate::hdf5_sys::filter_registered(id) {
            Ok(false) => {}
            Ok(true) => continue,
            Err(_) => return, // HDF5 is not in the process
        }
        match crate::hdf5_sys::register(&class.0) {
            Ok(()) => {
                let mut ids = registered_ids();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            Err(e) => report(format_args!("built-in filter {id}: {} failed", e.0)),
        }
    }
}

/// Why HDF5's filter `id`, found available, cannot actually run: when HDF5's class for it is our
/// stand-in and the implementation it would pick is ncfilters' own blosc or szip, whose C library
/// does not load. `None` when it will run (or the class is not ours to judge).
pub fn unavailable_reason(id: u32) -> Option<String> {
    if !registered_ids().contains(&id) {
        return None;
    }
    match std::panic::catch_unwind(|| plugin_registry::registry().get(id).cloned()) {
        Ok(Some(plugin)) => plugin.unavailable_reason(),
        Ok(None) => Some(format!("no implementation of filter {id} was found")),
        Err(_) => Some(format!("the lookup of filter {id} failed")),
    }
}

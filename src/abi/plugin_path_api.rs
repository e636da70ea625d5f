// SPDX-License-Identifier: BSD-3-Clause
//! The plugin-path API (replacing netcdf-c 4.9.3's `libdispatch/dplugins.c`, `libhdf5/hdf5plugins.c`,
//! the path half of `libnczarr/zplugins.c` and the `ncaux_plugin_path_*` helpers of `daux.c`;
//! added to 4.9.0 builds): read and replace the one plugin path ([`crate::plugin_path`]) that the
//! NCZarr registry searches and HDF5's search table follows. Like netcdf-c's, they change HDF5's
//! search table, so they are called on the thread that uses netcdf-c and HDF5 (the `# Safety` of
//! every export: [`crate::abi`]); the path itself is behind a lock all the same.
//!
//! Every vector and string handed to the caller is `malloc`'d; the caller frees them
//! (`ncaux_plugin_path_clear`). Where netcdf-c writes into a caller's non-NULL `dirs` vector,
//! so does this: the caller gives it room for every directory (`nc_plugin_path_ndirs`).

use crate::c_args::{
    Bytes, FromRawArgument, GrowablePluginList, MallocdPluginList, Out, OutBytes, OwnedPluginList, PluginList,
    PluginListOut, Text,
};
use crate::c_types::NCPluginList;
use crate::error::{report, NcResult, NC_EHDFERR, NC_EINVAL};
use crate::ffi_boundary::Call;
use crate::plugin_path;
use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::sync::{Mutex, MutexGuard};

/// Serialises replacing the path with pushing it into HDF5's table, so both end up the same.
static CHANGE: Mutex<()> = Mutex::new(());

fn change_lock() -> MutexGuard<'static, ()> {
    CHANGE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Pushes the plugin path into HDF5's search table (nothing to do where HDF5 is not loaded).
///
/// # Safety
/// The caller vouches for every library in `dirs`, which HDF5 may load and run.
unsafe fn push_to_hdf5(call: &Call<'_>, dirs: &[String]) -> NcResult<()> {
    let dirs: Vec<CString> =
        dirs.iter().map(|dir| CString::new(dir.as_bytes())).collect::<Result<_, _>>().map_err(|_| NC_EINVAL)?;
    // SAFETY: the caller vouches for the directories (this function's contract).
    unsafe { crate::hdf5_sys::set_plugin_search_table(call, &dirs) }.map_err(|e| {
        report(format_args!("HDF5 refused the plugin path: {} failed", e.0));
        NC_EHDFERR
    })
}

/// Replaces the plugin path and HDF5's search table with `dirs`.
///
/// # Safety
/// The caller vouches for every library in `dirs`, which the registry and HDF5 may load and run.
unsafe fn set_everywhere(call: &Call<'_>, dirs: &[String]) -> NcResult<()> {
    let _change = change_lock();
    // SAFETY: the caller vouches for the directories (this function's contract).
    unsafe {
        plugin_path::set(dirs);
        push_to_hdf5(call, dirs)
    }
}

fn current_dirs() -> Vec<String> {
    plugin_path::snapshot().dirs.into_iter().map(|d| d.dir).collect()
}

/// The number of directories of the plugin path.
///
/// # Safety
/// `ndirsp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nc_plugin_path_ndirs(ndirsp: *mut usize) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        // SAFETY: `ndirsp` is NULL or valid for a write (the export's `# Safety`).
        unsafe { Out::<usize>::from_raw(call, ndirsp) }.write(plugin_path::snapshot().dirs.len());
        Ok(())
    })
}

/// Copies the directories of the plugin path into `dirs`.
///
/// A new vector when `dirs->dirs` is NULL, else the caller's, which must have room for them
/// (`nc_plugin_path_ndirs`). A NULL `dirs` is accepted and ignored.
///
/// # Safety
/// `dirs` is NULL or a valid, writable `NCPluginList`.
#[no_mangle]
pub unsafe extern "C" fn nc_plugin_path_get(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        if dirs.is_null() {
            return Ok(());
        }
        // SAFETY: `dirs` is a live NCPluginList with room for what is stored into it; the answer is the one the caller
        // made room for in a non-NULL vector (netcdf-c's count-first contract) (the export's `# Safety`).
        unsafe { PluginListOut::from_raw(call, dirs).store(&current_dirs()) }
    })
}

/// Replaces the plugin path with `dirs`, for HDF5 and NCZarr alike.
///
/// No directories: none is searched. The NCZarr registry searches the new directories the next
/// time it is used.
///
/// # Safety
/// `dirs` is NULL or a valid `NCPluginList`.
/// Every library in the directories may be loaded and run: the caller vouches for them.
#[no_mangle]
pub unsafe extern "C" fn nc_plugin_path_set(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(dirs);
        // SAFETY: `dirs.cast_const()` is a valid NCPluginList whose vector holds `ndirs` strings, each NULL or
        // NUL-terminated (the export's `# Safety`).
        let dirs = unsafe { PluginList::from_raw(call, dirs.cast_const()) }.dirs(crate::function_name!())?;
        // SAFETY: the caller vouches for the directories (the export's `# Safety`).
        unsafe { set_everywhere(call, &dirs) }
    })
}

/// The separator a `char` argument names: `'\0'` is the platform's (`:`, on Windows `;`).
fn separator(sep: c_char) -> u8 {
    if sep != 0 {
        sep as u8
    } else {
        plugin_path::PATH_SEPARATOR as u8
    }
}

/// Splits the first `pathlen` bytes of `pathlist0` on `sep` into `dirs`.
///
/// The text ends at a NUL; `sep` `'\0'` is the platform's separator; empty pieces are kept.
///
/// # Safety
/// `pathlist0` is NULL or readable for all `pathlen` bytes, a NUL among them included (daux.c
/// copies all of them too); `dirs` is NULL or valid
/// and writable, its non-NULL vector with room for every piece.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_parsen(
    pathlen: usize,
    pathlist0: *const c_char,
    sep: c_char,
    dirs: *mut NCPluginList,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(dirs);
        // SAFETY: `(pathlist0, pathlen)` is NULL or readable for its length; `dirs` is a live NCPluginList whose
        // non-NULL vector has room for every piece (the export's `# Safety`).
        unsafe { split_into(Bytes::from_raw(call, (pathlist0, pathlen)), sep, PluginListOut::from_raw(call, dirs)) }
    })
}

/// Splits `text` on `sep` (`'\0'`: the platform's) into `dirs`, empty pieces kept; no text: no directories.
///
/// # Safety
/// A non-NULL vector of `dirs` has room for every piece.
unsafe fn split_into(text: Bytes, sep: c_char, mut dirs: PluginListOut) -> NcResult<()> {
    if text.0.is_none_or(<[u8]>::is_empty) {
        dirs.set_empty();
        return Ok(());
    }
    let sep = separator(sep);
    let pieces: Vec<&[u8]> = text.text().split(|&b| b == sep).collect();
    // SAFETY: the pieces are the whole answer, which a non-NULL vector has room for (the contract).
    unsafe { dirs.store(&pieces) }
}

/// [`ncaux_plugin_path_parsen`] of a NUL-terminated `pathlist0`.
///
/// # Safety
/// `pathlist0` is NULL or NUL-terminated; `dirs` as for `ncaux_plugin_path_parsen`.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_parse(
    pathlist0: *const c_char,
    sep: c_char,
    dirs: *mut NCPluginList,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(dirs);
        // SAFETY: `pathlist0` is NULL or NUL-terminated, alive for the call; `dirs` is a live NCPluginList whose
        // non-NULL vector has room for every piece (the export's `# Safety`).
        unsafe { split_into(Text::from_raw(call, pathlist0).into(), sep, PluginListOut::from_raw(call, dirs)) }
    })
}

/// Joins the directories of `dirs` with `sep` into a `malloc`'d string in `*catp`.
///
/// `sep` `'\0'` is the platform's separator; NULL directories count as empty.
///
/// # Safety
/// `dirs` is NULL or valid; `catp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_tostring(
    dirs: *const NCPluginList,
    sep: c_char,
    catp: *mut *mut c_char,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(dirs);
        // SAFETY: `dirs` is a valid NCPluginList whose vector holds `ndirs` strings, each NULL or NUL-terminated (the
        // export's `# Safety`).
        let text = unsafe { PluginList::from_raw(call, dirs) }.joined(separator(sep))?;
        // SAFETY: `catp` is NULL or valid for a write (the export's `# Safety`).
        crate::c_args::out_string(&mut unsafe { Out::<*mut c_char>::from_raw(call, catp) }, &text)
    })
}

/// Frees the directories and vector of `dirs` and empties it (NULL: nothing to do).
///
/// # Safety
/// `dirs` is NULL or valid, its vector and strings `malloc`'d and owned by it; `dirs` itself may
/// be anywhere (netcdf-c clears lists on its stack) and is not freed.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_clear(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        // SAFETY: `dirs` is NULL or a valid, writable NCPluginList (on the stack, maybe) whose
        // vector and strings are malloc'd and its own (the export's `# Safety`).
        if let Some(mut list) = unsafe { OwnedPluginList::from_raw(call, dirs) } {
            list.clear();
        }
        Ok(())
    })
}

/// [`ncaux_plugin_path_clear`], then frees `dirs` itself.
///
/// # Safety
/// As for `ncaux_plugin_path_clear`, and `dirs` is NULL or `malloc`'d.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_reclaim(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        // SAFETY: `dirs` is NULL or a malloc'd NCPluginList, its vector and strings malloc'd and
        // its own, which the caller hands back (the export's `# Safety`).
        let mut list = unsafe { MallocdPluginList::from_raw(call, dirs) };
        list.clear();
        list.free();
        Ok(())
    })
}

/// Appends a copy of `dir` to `dirs` (`dirs->dirs` may move).
///
/// # Safety
/// `dirs` is NULL or valid and writable, its vector NULL or `malloc`'d; its strings stay the
/// caller's, however they were made (netcdf-c's append frees none); `dir` is NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_append(dirs: *mut NCPluginList, dir: *const c_char) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(dirs, dir);
        // SAFETY: `dirs` is a valid, writable NCPluginList whose vector is NULL or malloc'd (its
        // strings are the caller's); `dir` is NULL or NUL-terminated, alive for the call (the
        // export's `# Safety`).
        unsafe { GrowablePluginList::from_raw(call, dirs) }
            .insert(unsafe { Text::from_raw(call, dir) }.0.unwrap_or_default(), false)
    })
}

/// Puts a copy of `dir` in front of `dirs` (`dirs->dirs` may move).
///
/// # Safety
/// As for `ncaux_plugin_path_append`.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_prepend(dirs: *mut NCPluginList, dir: *const c_char) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(dirs, dir);
        // SAFETY: `dirs` is a valid, writable NCPluginList whose vector is NULL or malloc'd (its
        // strings are the caller's); `dir` is NULL or NUL-terminated, alive for the call (the
        // export's `# Safety`).
        unsafe { GrowablePluginList::from_raw(call, dirs) }
            .insert(unsafe { Text::from_raw(call, dir) }.0.unwrap_or_default(), true)
    })
}

/// The plugin path joined with `;` (the Fortran helpers' form).
fn fortran_text() -> String {
    plugin_path::join(&current_dirs(), Some(';'))
}

/// The length of the plugin path joined with `;`, or -1 if it does not fit an int.
///
/// # Safety
/// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_stringlen() -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    // A length, not a status: -1 also when the body panics.
    crate::ffi_export!(caught crate::function_name!(), thread, |_| Some(c_int::try_from(fortran_text().len()).unwrap_or(-1)))
        .unwrap_or(-1)
}

/// Copies the plugin path joined with `;` into `path`, as `strncpy` does.
///
/// NUL-padded; no NUL when the text fills all `pathlen` bytes.
///
/// # Safety
/// `path` is NULL or writable for `pathlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_stringget(pathlen: c_int, path: *mut c_char) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        let len = usize::try_from(pathlen).ok().filter(|&len| len > 0).ok_or(NC_EINVAL)?;
        crate::reject_null!(path);
        // SAFETY: `(path, len)` is writable for its length (the export's `# Safety`).
        unsafe { OutBytes::from_raw(call, (path, len)) }.fill_nul_padded(fortran_text().as_bytes());
        Ok(())
    })
}

/// Replaces the plugin path with the first `pathlen` bytes of `path`, split on `;`.
///
/// # Safety
/// `path` is NULL or readable for `pathlen` bytes.
/// Every library in the directories may be loaded and run: the caller vouches for them.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_stringset(pathlen: c_int, path: *const c_char) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        let len = usize::try_from(pathlen).ok().filter(|&len| len > 0).ok_or(NC_EINVAL)?;
        crate::reject_null!(path);
        // SAFETY: `(path, len)` is NULL or readable for its length (the export's `# Safety`).
        let text = std::str::from_utf8(unsafe { Bytes::from_raw(call, (path, len)) }.text()).map_err(|_| NC_EINVAL)?;
        // SAFETY: the caller vouches for the directories (the export's `# Safety`).
        unsafe { set_everywhere(call, &plugin_path::parse(text, Some(';'))) }
    })
}

/// The internal functions netcdf-c 4.9.3 and later call or export (`ncplugins.h`).
#[cfg(ncf_plugin_path_release)]
pub(crate) mod release {
    use super::*;

    /// Run by `NC4_initialize`: makes the plugin path from the environment and HDF5's search
    /// table follow it, as netcdf-c 4.9.3 does.
    ///
    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn nc_plugin_path_initialize() -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            let _change = change_lock();
            // SAFETY: the plugin path in force is vouched for (`crate::plugin_path`).
            unsafe { push_to_hdf5(call, &current_dirs()) }
        })
    }

    /// Run by `NC4_finalize`: forgets the plugin path (the next use reads the environment again).
    ///
    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn nc_plugin_path_finalize() -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |_| {
            plugin_path::finalize();
            Ok(())
        })
    }

    /// The number of entries of HDF5's search table.
    ///
    /// # Safety
    /// `ndirsp` is NULL or writable.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_ndirs(ndirsp: *mut usize) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            let count = crate::hdf5_sys::plugin_search_table(call).map_err(|_| NC_EHDFERR)?.len();
            // SAFETY: `ndirsp` is NULL or valid for a write (the export's `# Safety`).
            unsafe { Out::<usize>::from_raw(call, ndirsp) }.write(count);
            Ok(())
        })
    }

    /// HDF5's search table, as [`nc_plugin_path_get`] returns the plugin path.
    ///
    /// # Safety
    /// `dirs` is NULL or a valid, writable `NCPluginList`.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_get(dirs: *mut NCPluginList) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            crate::reject_null!(dirs);
            let table = crate::hdf5_sys::plugin_search_table(call).map_err(|_| NC_EHDFERR)?;
            // SAFETY: `dirs` is a live NCPluginList with room for what is stored into it; the answer is the one the
            // caller made room for in a non-NULL vector (netcdf-c's count-first contract) (the export's `# Safety`).
            unsafe { PluginListOut::from_raw(call, dirs).store(&table) }
        })
    }

    /// Replaces HDF5's search table (only: the plugin path stays).
    ///
    /// # Safety
    /// `dirs` is NULL or a valid `NCPluginList`.
    /// Every library in the directories may be loaded and run: the caller vouches for them.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_set(dirs: *mut NCPluginList) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            crate::reject_null!(dirs);
            // SAFETY: `dirs.cast_const()` is a valid NCPluginList whose vector holds `ndirs` strings, each NULL or
            // NUL-terminated (the export's `# Safety`).
            let dirs = unsafe { PluginList::from_raw(call, dirs.cast_const()) }.dirs(crate::function_name!())?;
            let _change = change_lock();
            // SAFETY: the caller vouches for the directories (the export's `# Safety`).
            unsafe { push_to_hdf5(call, &dirs) }
        })
    }

    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_initialize() -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |_| Ok(()))
    }

    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_finalize() -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |_| Ok(()))
    }

    thread_local! {
        static HDF5_PATH_TEXT: std::cell::RefCell<CString> = std::cell::RefCell::new(CString::default());
    }

    /// HDF5's search table joined with `;`, for debugging: valid until this thread's next call.
    ///
    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_tostring() -> *const c_char {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            let table = crate::hdf5_sys::plugin_search_table(call).unwrap_or_default();
            let joined = table.join(&b';');
            let text = CString::new(joined).unwrap_or_default();
            HDF5_PATH_TEXT.with(|slot| {
                *slot.borrow_mut() = text;
                // SAFETY: a NUL-terminated string that stays until this thread's next call, as
                // the export's documentation says (netcdf-c's is a static buffer).
                unsafe { crate::ffi_boundary::Returned::from_raw(slot.borrow().as_ptr()) }
            })
        })
    }

    /// NCZarr's side of the plugin path: the same list (ncfilters keeps one).
    ///
    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_initialize() -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |_| Ok(()))
    }

    /// # Safety
    /// Called on the thread that uses netcdf-c (and HDF5), as netcdf-c's own functions are.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_finalize() -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |_| Ok(()))
    }

    /// # Safety
    /// `ndirsp` is NULL or writable.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_ndirs(ndirsp: *mut usize) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            // SAFETY: `ndirsp` is NULL or valid for a write (the export's `# Safety`).
            unsafe { Out::<usize>::from_raw(call, ndirsp) }.write(plugin_path::snapshot().dirs.len());
            Ok(())
        })
    }

    /// # Safety
    /// `dirs` is NULL or a valid, writable `NCPluginList`.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_get(dirs: *mut NCPluginList) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            // Unlike nc_plugin_path_get, as zplugins.c.
            crate::reject_null!(dirs);
            // SAFETY: `dirs` is a live NCPluginList with room for what is stored into it; the answer is the one the
            // caller made room for in a non-NULL vector (netcdf-c's count-first contract) (the export's `# Safety`).
            unsafe { PluginListOut::from_raw(call, dirs).store(&current_dirs()) }
        })
    }

    /// Replaces the plugin path NCZarr searches (not HDF5's table).
    ///
    /// # Safety
    /// `dirs` is NULL or a valid `NCPluginList`.
    /// Every library in the directories may be loaded and run: the caller vouches for them.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_set(dirs: *mut NCPluginList) -> c_int {
        // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
        let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
        crate::ffi_export!(thread, |call| {
            crate::reject_null!(dirs);
            // SAFETY: `dirs.cast_const()` is a valid NCPluginList whose vector holds `ndirs` strings, each NULL or
            // NUL-terminated (the export's `# Safety`).
            let dirs = unsafe { PluginList::from_raw(call, dirs.cast_const()) }.dirs(crate::function_name!())?;
            let _change = change_lock();
            // SAFETY: the caller vouches for the directories (the export's `# Safety`).
            unsafe { plugin_path::set(&dirs) };
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{capture_reports, NC_EINVAL};
    use crate::ffi_boundary::c_str_bytes;

    /// The messages name the exported function, never the closure it runs in (they read
    /// "{{closure}}: directory 1 is NULL" when the name was taken inside the boundary's closure).
    #[test]
    fn a_null_directory_is_refused_naming_the_function() {
        let dir = c"/nowhere";
        let mut vector = [dir.as_ptr().cast_mut(), std::ptr::null_mut()];
        let mut list = NCPluginList { ndirs: 2, dirs: vector.as_mut_ptr() };
        // SAFETY: the list's vector holds its two pointers, one a live string, one NULL.
        let (status, messages) = capture_reports(|| unsafe { nc_plugin_path_set(&mut list) });
        assert_eq!(status, NC_EINVAL.code());
        assert_eq!(messages, ["nc_plugin_path_set: directory 1 is NULL"]);
    }

    /// As netcdf-c's: append and prepend free only the old vector, never a string, which may be
    /// the caller's own (literals here); clear leaves a list on the stack where it is. Under
    /// Miri a `free` of a literal or of the list would fail this test.
    #[test]
    fn append_and_prepend_free_no_string_and_clear_frees_no_list() {
        // SAFETY: a block for one pointer, written before it is read.
        let vector = unsafe { libc::malloc(std::mem::size_of::<*mut c_char>()) }.cast::<*mut c_char>();
        assert!(!vector.is_null());
        // SAFETY: room for one pointer, just allocated.
        unsafe { vector.write(c"/lit".as_ptr().cast_mut()) };
        let mut list = NCPluginList { ndirs: 1, dirs: vector };
        // SAFETY: a valid list, its vector malloc'd, its string a literal; NUL-terminated dirs.
        unsafe {
            assert_eq!(ncaux_plugin_path_append(&mut list, c"/c".as_ptr()), 0);
            assert_eq!(ncaux_plugin_path_prepend(&mut list, c"/z".as_ptr()), 0);
        }
        assert_eq!(list.ndirs, 3);
        // SAFETY: the vector holds three pointers: two malloc'd copies and the literal.
        let dirs = unsafe { std::slice::from_raw_parts(list.dirs, 3) }.to_vec();
        assert_eq!(dirs[1].cast_const(), c"/lit".as_ptr(), "the caller's string, moved as it is");
        // SAFETY: the copies and the vector were malloc'd by the exports; the literal stays.
        unsafe {
            libc::free(dirs[0].cast());
            libc::free(dirs[2].cast());
            *list.dirs.add(0) = std::ptr::null_mut();
            *list.dirs.add(1) = std::ptr::null_mut();
            *list.dirs.add(2) = std::ptr::null_mut();
        }
        // SAFETY: a list on the stack owning its malloc'd vector of NULLs.
        assert_eq!(unsafe { ncaux_plugin_path_clear(&mut list) }, 0);
        assert_eq!((list.ndirs, list.dirs), (0, std::ptr::null_mut()), "emptied, and still here");
    }

    /// The pure-pointer helpers, with no netcdf-c call: parse into an empty list (a NULL
    /// vector gets a new one), append and prepend (the vector moves), join, then free it all.
    /// Under Miri this checks every pointer they touch.
    #[test]
    fn a_list_parsed_grown_joined_and_cleared_owns_exactly_its_blocks() {
        let mut list = NCPluginList { ndirs: 0, dirs: std::ptr::null_mut() };
        // SAFETY: a NUL-terminated text and a valid list with a NULL vector.
        assert_eq!(unsafe { ncaux_plugin_path_parse(c"/a;;/b".as_ptr(), b';' as c_char, &mut list) }, 0);
        assert_eq!(list.ndirs, 3, "empty pieces are kept");
        // SAFETY: the list owns a malloc'd vector; the directories are NUL-terminated.
        unsafe {
            assert_eq!(ncaux_plugin_path_append(&mut list, c"/c".as_ptr()), 0);
            assert_eq!(ncaux_plugin_path_prepend(&mut list, c"/z".as_ptr()), 0);
        }
        let mut joined: *mut c_char = std::ptr::null_mut();
        // SAFETY: a valid list and a writable pointer.
        assert_eq!(unsafe { ncaux_plugin_path_tostring(&list, 0, &mut joined) }, 0);
        let expected = ["/z", "/a", "", "/b", "/c"].join(&ncfilters_core::plugin_path::PATH_SEPARATOR.to_string());
        // SAFETY: tostring wrote a malloc'd NUL-terminated string.
        assert_eq!(unsafe { c_str_bytes(joined) }, Some(expected.as_bytes()), "'\\0': the platform's separator");
        // SAFETY: malloc'd by tostring and not used after.
        unsafe { libc::free(joined.cast()) };
        // SAFETY: the list owns its vector and strings.
        assert_eq!(unsafe { ncaux_plugin_path_clear(&mut list) }, 0);
        assert_eq!((list.ndirs, list.dirs), (0, std::ptr::null_mut()));
        // SAFETY: NULL arguments are refused, not read.
        unsafe {
            assert_eq!(ncaux_plugin_path_parse(c"/a".as_ptr(), 0, std::ptr::null_mut()), NC_EINVAL.code());
            assert_eq!(ncaux_plugin_path_tostring(std::ptr::null(), 0, &mut joined), NC_EINVAL.code());
            assert_eq!(ncaux_plugin_path_clear(std::ptr::null_mut()), 0, "as netcdf-c: nothing to free");
        }
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//! The plugin-path API (replacing netcdf-c 4.9.3's `libdispatch/dplugins.c`, `libhdf5/hdf5plugins.c`,
//! the path half of `libnczarr/zplugins.c` and the `ncaux_plugin_path_*` helpers of `daux.c`;
//! added to 4.9.0 builds): read and replace the one plugin path ([`crate::plugin_path`]) that the
//! NCZarr registry searches and HDF5's search table follows. Unlike netcdf-c's, these functions
//! may be called from several threads at once.
//!
//! Every vector and string handed to the caller is `malloc`'d; the caller frees them
//! (`ncaux_plugin_path_clear`). Where netcdf-c writes into a caller's non-NULL `dirs` vector,
//! so does this: the caller gives it room for every directory (`nc_plugin_path_ndirs`).

use crate::c_heap::{c_string, CArray, CStrings};
use crate::c_types::NCPluginList;
use crate::error::{check, report, NcResult, NC_EHDFERR, NC_EINVAL};
use crate::ffi_boundary::{c_str_bytes, write_opt};
use crate::plugin_path;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::sync::{Mutex, MutexGuard};

/// Serialises replacing the path with pushing it into HDF5's table, so both end up the same.
static CHANGE: Mutex<()> = Mutex::new(());

fn change_lock() -> MutexGuard<'static, ()> {
    CHANGE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The directories of a caller's list (`NC_EINVAL` for a NULL list, a NULL vector with
/// directories, a NULL directory or one that is not UTF-8).
///
/// # Safety
/// `dirs` is NULL or a valid `NCPluginList` whose vector holds `ndirs` pointers.
unsafe fn read_list(function: &str, dirs: *const NCPluginList) -> NcResult<Vec<String>> {
    // SAFETY: NULL or valid per the contract.
    let list = unsafe { dirs.as_ref() }.ok_or(NC_EINVAL)?;
    if list.ndirs == 0 {
        return Ok(Vec::new());
    }
    if list.dirs.is_null() {
        report(format_args!("{function}: {} directories but a NULL vector", list.ndirs));
        return Err(NC_EINVAL);
    }
    (0..list.ndirs)
        .map(|i| {
            // SAFETY: the vector holds ndirs pointers, each NULL or NUL-terminated.
            let bytes = unsafe { c_str_bytes(*list.dirs.add(i)) }.ok_or_else(|| {
                report(format_args!("{function}: directory {i} is NULL"));
                NC_EINVAL
            })?;
            String::from_utf8(bytes.to_vec()).map_err(|_| {
                report(format_args!("{function}: directory {i} ({:?}) is not UTF-8", String::from_utf8_lossy(bytes)));
                NC_EINVAL
            })
        })
        .collect()
}

/// Stores `dirs` in the caller's list: a new vector when its vector is NULL, else its own.
///
/// # Safety
/// `out` is a valid, writable `NCPluginList`; a non-NULL vector has room for `dirs.len()`.
unsafe fn write_list<S: AsRef<[u8]>>(out: *mut NCPluginList, dirs: &[S]) -> NcResult<()> {
    let strings = CStrings::copy_of(dirs)?;
    // SAFETY: valid and writable per the contract.
    let list = unsafe { &mut *out };
    if list.dirs.is_null() && !strings.is_empty() {
        list.dirs = CArray::<*mut c_char>::zeroed(strings.len())?.into_raw();
    }
    for (i, string) in strings.into_raw().into_iter().enumerate() {
        // SAFETY: the vector has room for every directory per the contract.
        unsafe { list.dirs.add(i).write(string) };
    }
    list.ndirs = dirs.len();
    Ok(())
}

/// Pushes the plugin path into HDF5's search table (nothing to do where HDF5 is not loaded).
fn push_to_hdf5(dirs: &[String]) -> NcResult<()> {
    let dirs: Vec<CString> =
        dirs.iter().map(|dir| CString::new(dir.as_bytes())).collect::<Result<_, _>>().map_err(|_| NC_EINVAL)?;
    crate::hdf5_sys::set_plugin_search_table(&dirs).map_err(|e| {
        report(format_args!("HDF5 refused the plugin path: {} failed", e.0));
        NC_EHDFERR
    })
}

/// Replaces the plugin path and HDF5's search table with `dirs`.
fn set_everywhere(dirs: &[String]) -> NcResult<()> {
    let _change = change_lock();
    plugin_path::set(dirs);
    push_to_hdf5(dirs)
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
    crate::ffi_export!(|| {
        let ndirs = plugin_path::snapshot().dirs.len();
        // SAFETY: NULL or writable per the contract.
        unsafe { write_opt(ndirsp, ndirs) };
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
    crate::ffi_export!(|| {
        if dirs.is_null() {
            return Ok(());
        }
        // SAFETY: valid and writable per the contract.
        unsafe { write_list(dirs, &current_dirs()) }
    })
}

/// Replaces the plugin path with `dirs`, for HDF5 and NCZarr alike.
///
/// No directories: none is searched. The NCZarr registry searches the new directories the next
/// time it is used.
///
/// # Safety
/// `dirs` is NULL or a valid `NCPluginList`.
#[no_mangle]
pub unsafe extern "C" fn nc_plugin_path_set(dirs: *mut NCPluginList) -> c_int {
    crate::ffi_export!(|| {
        crate::reject_null!(dirs);
        // SAFETY: forwarded contract.
        let dirs = unsafe { read_list(crate::function_name!(), dirs)? };
        set_everywhere(&dirs)
    })
}

/// The separator a `char` argument names: `'\0'` is the platform's.
fn separator(sep: c_char) -> Option<char> {
    (sep != 0).then_some(sep as u8 as char)
}

/// Splits the first `pathlen` bytes of `pathlist0` on `sep` into `dirs`.
///
/// The text ends at a NUL; `sep` `'\0'` is `:`; empty pieces are kept.
///
/// # Safety
/// `pathlist0` is NULL or readable for `pathlen` bytes (or up to a NUL); `dirs` is NULL or valid
/// and writable, its non-NULL vector with room for every piece.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_parsen(
    pathlen: usize,
    pathlist0: *const c_char,
    sep: c_char,
    dirs: *mut NCPluginList,
) -> c_int {
    crate::ffi_export!(|| {
        crate::reject_null!(dirs);
        if pathlen == 0 || pathlist0.is_null() {
            // SAFETY: valid and writable per the contract.
            unsafe { (*dirs).ndirs = 0 };
            return Ok(());
        }
        // SAFETY: readable for pathlen bytes, stopping at a NUL, per the contract.
        let bytes = unsafe { std::slice::from_raw_parts(pathlist0.cast::<u8>(), pathlen) };
        let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
        let sep = separator(sep).map_or(b':', |c| c as u8);
        let pieces: Vec<&[u8]> = text.split(|&b| b == sep).collect();
        // SAFETY: forwarded contract.
        unsafe { write_list(dirs, &pieces) }
    })
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
    crate::ffi_export!(|| {
        crate::reject_null!(dirs);
        // SAFETY: NULL or NUL-terminated per the contract.
        let len = unsafe { c_str_bytes(pathlist0) }.map_or(0, <[u8]>::len);
        // SAFETY: forwarded contract.
        check(unsafe { ncaux_plugin_path_parsen(len, pathlist0, sep, dirs) })
    })
}

/// Joins the directories of `dirs` with `sep` into a `malloc`'d string in `*catp`.
///
/// `sep` `'\0'` is `:`; NULL directories count as empty.
///
/// # Safety
/// `dirs` is NULL or valid; `catp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_tostring(
    dirs: *const NCPluginList,
    sep: c_char,
    catp: *mut *mut c_char,
) -> c_int {
    crate::ffi_export!(|| {
        crate::reject_null!(dirs);
        // SAFETY: non-NULL, and valid per the contract.
        let list = unsafe { &*dirs };
        if list.ndirs > 0 && list.dirs.is_null() {
            return Err(NC_EINVAL);
        }
        let sep = separator(sep).map_or(b':', |c| c as u8);
        let mut text = Vec::new();
        for i in 0..list.ndirs {
            if i > 0 {
                text.push(sep);
            }
            // SAFETY: the vector holds ndirs pointers, each NULL or NUL-terminated.
            text.extend_from_slice(unsafe { c_str_bytes(*list.dirs.add(i)) }.unwrap_or_default());
        }
        if !catp.is_null() {
            let cat = c_string(&text)?;
            // SAFETY: checked non-NULL; writable per the contract.
            unsafe { catp.write(cat) };
        }
        Ok(())
    })
}

/// Frees the directories and vector of `dirs` and empties it (NULL: nothing to do).
///
/// # Safety
/// `dirs` is NULL or valid, its vector and strings `malloc`'d and owned by it.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_clear(dirs: *mut NCPluginList) -> c_int {
    crate::ffi_export!(|| {
        // SAFETY: NULL or valid per the contract.
        if let Some(list) = unsafe { dirs.as_mut() } {
            // SAFETY: the list owns its vector and strings per the contract.
            drop(unsafe { CStrings::take_list(list) });
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
    crate::ffi_export!(|| {
        // SAFETY: forwarded contract.
        check(unsafe { ncaux_plugin_path_clear(dirs) })?;
        // SAFETY: NULL or malloc'd per the contract (free(NULL) is a no-op).
        unsafe { libc::free(dirs.cast()) };
        Ok(())
    })
}

/// Adds `dir` to `dirs`, at the end or (`front`) at the start, in a new vector.
///
/// # Safety
/// `dirs` is valid and writable, its vector `malloc`'d; `dir` is NUL-terminated.
unsafe fn insert_dir(dirs: *mut NCPluginList, dir: *const c_char, front: bool) -> NcResult<()> {
    // SAFETY: valid per the contract.
    let list = unsafe { &mut *dirs };
    // SAFETY: NUL-terminated per the contract.
    let dir = unsafe { CStr::from_ptr(dir) }.to_bytes();
    if list.ndirs > 0 && list.dirs.is_null() {
        return Err(NC_EINVAL);
    }
    let added = CStrings::copy_of(&[dir])?;
    let mut vector = CArray::<*mut c_char>::zeroed(list.ndirs + 1)?;
    let slots = vector.as_mut_slice();
    let (new_slot, old_slots) = if front { (0, 1..) } else { (list.ndirs, 0..) };
    for (slot, i) in old_slots.zip(0..list.ndirs) {
        // SAFETY: the old vector holds ndirs pointers.
        slots[slot] = unsafe { *list.dirs.add(i) };
    }
    slots[new_slot] = added.into_raw()[0];
    // SAFETY: the old vector is malloc'd; its strings moved to the new one.
    unsafe { libc::free(list.dirs.cast()) };
    list.dirs = vector.into_raw();
    list.ndirs += 1;
    Ok(())
}

/// Appends a copy of `dir` to `dirs` (`dirs->dirs` may move).
///
/// # Safety
/// `dirs` is NULL or valid and writable, its vector `malloc`'d; `dir` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_append(dirs: *mut NCPluginList, dir: *const c_char) -> c_int {
    // SAFETY: forwarded contract.
    crate::ffi_export!(|| {
        crate::reject_null!(dirs, dir);
        // SAFETY: non-NULL, otherwise as the contract says.
        unsafe { insert_dir(dirs, dir, false) }
    })
}

/// Puts a copy of `dir` in front of `dirs` (`dirs->dirs` may move).
///
/// # Safety
/// As for `ncaux_plugin_path_append`.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_prepend(dirs: *mut NCPluginList, dir: *const c_char) -> c_int {
    // SAFETY: forwarded contract.
    crate::ffi_export!(|| {
        crate::reject_null!(dirs, dir);
        // SAFETY: non-NULL, otherwise as the contract says.
        unsafe { insert_dir(dirs, dir, true) }
    })
}

/// The plugin path joined with `;` (the Fortran helpers' form).
fn fortran_text() -> String {
    plugin_path::join(&current_dirs(), Some(';'))
}

/// The length of the plugin path joined with `;`, or -1 if it does not fit an int.
#[no_mangle]
pub extern "C" fn ncaux_plugin_path_stringlen() -> c_int {
    // A length, not a status: -1 also when the body panics.
    crate::ffi_export!(caught crate::function_name!(), || Some(c_int::try_from(fortran_text().len()).unwrap_or(-1)))
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
    crate::ffi_export!(|| {
        let len = usize::try_from(pathlen).ok().filter(|&len| len > 0).ok_or(NC_EINVAL)?;
        crate::reject_null!(path);
        let text = fortran_text();
        let copied = text.len().min(len);
        // SAFETY: path is writable for len bytes; copied <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), path.cast::<u8>(), copied);
            std::ptr::write_bytes(path.cast::<u8>().add(copied), 0, len - copied);
        }
        Ok(())
    })
}

/// Replaces the plugin path with the first `pathlen` bytes of `path`, split on `;`.
///
/// # Safety
/// `path` is NULL or readable for `pathlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn ncaux_plugin_path_stringset(pathlen: c_int, path: *const c_char) -> c_int {
    crate::ffi_export!(|| {
        let len = usize::try_from(pathlen).ok().filter(|&len| len > 0).ok_or(NC_EINVAL)?;
        crate::reject_null!(path);
        // SAFETY: readable for len bytes per the contract.
        let bytes = unsafe { std::slice::from_raw_parts(path.cast::<u8>(), len) };
        let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
        let text = std::str::from_utf8(text).map_err(|_| NC_EINVAL)?;
        set_everywhere(&plugin_path::parse(text, Some(';')))
    })
}

/// The internal functions netcdf-c 4.9.3 and later call or export (`ncplugins.h`).
#[cfg(ncf_plugin_path_release)]
pub(crate) mod release {
    use super::*;

    /// Run by `NC4_initialize`: makes the plugin path from the environment and HDF5's search
    /// table follow it, as netcdf-c 4.9.3 does.
    #[no_mangle]
    pub extern "C" fn nc_plugin_path_initialize() -> c_int {
        crate::ffi_export!(|| {
            let _change = change_lock();
            push_to_hdf5(&current_dirs())
        })
    }

    /// Run by `NC4_finalize`: forgets the plugin path (the next use reads the environment again).
    #[no_mangle]
    pub extern "C" fn nc_plugin_path_finalize() -> c_int {
        crate::ffi_export!(|| {
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
        crate::ffi_export!(|| {
            let count = crate::hdf5_sys::plugin_search_table().map_err(|_| NC_EHDFERR)?.len();
            // SAFETY: NULL or writable per the contract.
            unsafe { write_opt(ndirsp, count) };
            Ok(())
        })
    }

    /// HDF5's search table, as [`nc_plugin_path_get`] returns the plugin path.
    ///
    /// # Safety
    /// `dirs` is NULL or a valid, writable `NCPluginList`.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_get(dirs: *mut NCPluginList) -> c_int {
        crate::ffi_export!(|| {
            crate::reject_null!(dirs);
            let table = crate::hdf5_sys::plugin_search_table().map_err(|_| NC_EHDFERR)?;
            // SAFETY: valid and writable per the contract.
            unsafe { write_list(dirs, &table) }
        })
    }

    /// Replaces HDF5's search table (only: the plugin path stays).
    ///
    /// # Safety
    /// `dirs` is NULL or a valid `NCPluginList`.
    #[no_mangle]
    pub unsafe extern "C" fn NC4_hdf5_plugin_path_set(dirs: *mut NCPluginList) -> c_int {
        crate::ffi_export!(|| {
            crate::reject_null!(dirs);
            // SAFETY: forwarded contract.
            let dirs = unsafe { read_list(crate::function_name!(), dirs)? };
            let _change = change_lock();
            push_to_hdf5(&dirs)
        })
    }

    #[no_mangle]
    pub extern "C" fn NC4_hdf5_plugin_path_initialize() -> c_int {
        crate::ffi_export!(|| Ok(()))
    }

    #[no_mangle]
    pub extern "C" fn NC4_hdf5_plugin_path_finalize() -> c_int {
        crate::ffi_export!(|| Ok(()))
    }

    thread_local! {
        static HDF5_PATH_TEXT: std::cell::RefCell<CString> = std::cell::RefCell::new(CString::default());
    }

    /// HDF5's search table joined with `;`, for debugging: valid until this thread's next call.
    #[no_mangle]
    pub extern "C" fn NC4_hdf5_plugin_path_tostring() -> *const c_char {
        crate::ffi_export!(|| {
            let table = crate::hdf5_sys::plugin_search_table().unwrap_or_default();
            let joined = table.join(&b';');
            let text = CString::new(joined).unwrap_or_default();
            HDF5_PATH_TEXT.with(|slot| {
                *slot.borrow_mut() = text;
                slot.borrow().as_ptr()
            })
        })
    }

    /// NCZarr's side of the plugin path: the same list (ncfilters keeps one).
    #[no_mangle]
    pub extern "C" fn NCZ_plugin_path_initialize() -> c_int {
        crate::ffi_export!(|| Ok(()))
    }

    #[no_mangle]
    pub extern "C" fn NCZ_plugin_path_finalize() -> c_int {
        crate::ffi_export!(|| Ok(()))
    }

    /// # Safety
    /// `ndirsp` is NULL or writable.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_ndirs(ndirsp: *mut usize) -> c_int {
        // SAFETY: forwarded contract.
        crate::ffi_export!(|| check(unsafe { nc_plugin_path_ndirs(ndirsp) }))
    }

    /// # Safety
    /// `dirs` is NULL or a valid, writable `NCPluginList`.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_get(dirs: *mut NCPluginList) -> c_int {
        crate::ffi_export!(|| {
            // Unlike nc_plugin_path_get, as zplugins.c.
            crate::reject_null!(dirs);
            // SAFETY: forwarded contract.
            check(unsafe { nc_plugin_path_get(dirs) })
        })
    }

    /// Replaces the plugin path NCZarr searches (not HDF5's table).
    ///
    /// # Safety
    /// `dirs` is NULL or a valid `NCPluginList`.
    #[no_mangle]
    pub unsafe extern "C" fn NCZ_plugin_path_set(dirs: *mut NCPluginList) -> c_int {
        crate::ffi_export!(|| {
            crate::reject_null!(dirs);
            // SAFETY: forwarded contract.
            let dirs = unsafe { read_list(crate::function_name!(), dirs)? };
            let _change = change_lock();
            plugin_path::set(&dirs);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{capture_reports, NC_EINVAL};

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
        // SAFETY: tostring wrote a malloc'd NUL-terminated string.
        assert_eq!(unsafe { c_str_bytes(joined) }, Some(&b"/z:/a::/b:/c"[..]));
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

// SPDX-License-Identifier: BSD-3-Clause
//! NCZarr internals the filter engine uses: `NCZ_VAR_INFO_T` (`libnczarr/zinternal.h`), the
//! group and type fields behind `ncidfor(var)` and the type size, `ncz_find_grp_file_var`,
//! and netcdf-c's `NCjson` functions (JSON that C later frees must come from them).
//!
//! A variable's `filters` and `incompletefilters` stay netcdf-c `NClist`s; their elements are
//! [`ZarrFilter`]s in C-heap blocks ([`CBox`]), which C code only counts and passes back.
#![allow(non_camel_case_types)]

use super::nc4::{nc_bool_t, NClist, VarPtr, NC_CHUNKED, NC_FILE_INFO, NC_INDEF, NC_OBJ, NC_VAR_INFO};
use crate::c_args::Call;
use crate::c_heap::{CBox, CParams};
use crate::error::{check, NcResult, NC_EFILTER, NC_EINVAL, NC_ENOMEM};
use crate::filter_chain::{chunk_byte_size, Stage, ZarrFilter};
use crate::plugin_registry::Plugin;
use std::ffi::CString;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::ptr::{self, NonNull};
use std::sync::Arc;

/// `struct ZARROBJ` of `NCZ_VAR_INFO_T` from 4.9.3 on (not used by ncfilters).
#[cfg(ncf_zvar_zarr_objects)]
#[repr(C)]
#[derive(Debug)]
pub struct ZarrObj {
    pub prefix: *mut c_char,
    pub obj: *mut NCjson,
    pub atts: *mut NCjson,
    pub nczv1: c_int,
}

/// `NC_STRING`.
const NC_STRING: c_int = 12;

/// `NCZ_VAR_INFO_T` (no configure-time ifdefs); from 4.9.2 on it ends with `maxstrlen`, from
/// 4.9.3 on also with `zarray` and `zattrs`.
#[repr(C)]
#[derive(Debug)]
pub struct NCZ_VAR_INFO {
    /// `NCZcommon { NC_FILE_INFO_T* file; }`
    pub common: *mut NC_FILE_INFO,
    pub chunkproduct: u64,
    pub chunksize: u64,
    pub order: c_int,
    pub scalar: usize,
    pub cache: *mut c_void,
    pub xarray: *mut NClist,
    pub dimension_separator: c_char,
    /// Filters defined through the API whose plugin is incomplete (never applied).
    pub incompletefilters: *mut NClist,
    #[cfg(ncf_zvar_maxstrlen)]
    pub maxstrlen: c_int,
    #[cfg(ncf_zvar_zarr_objects)]
    pub zarray: ZarrObj,
    #[cfg(ncf_zvar_zarr_objects)]
    pub zattrs: ZarrObj,
}

/// The leading fields of `NC_GRP_INFO_T`: what `ncidfor(var)` reads.
#[repr(C)]
#[derive(Debug)]
pub struct NC_GRP_INFO {
    pub hdr: NC_OBJ,
    pub format_grp_info: *mut c_void,
    pub nc4_info: *mut NC_FILE_INFO,
}

/// The leading fields of `NC_TYPE_INFO_T`, up to the type's size (from 4.9.3 on: up to
/// `varsized`, which says whether NCZarr suppresses the variable's filters).
#[repr(C)]
#[derive(Debug)]
pub struct NC_TYPE_INFO {
    pub hdr: NC_OBJ,
    pub container: *mut NC_GRP_INFO,
    pub rc: c_uint,
    pub endianness: c_int,
    pub size: usize,
    pub committed: nc_bool_t,
    #[cfg(ncf_type_varsized)]
    pub nc_type_class: c_int,
    #[cfg(ncf_type_varsized)]
    pub format_type_info: *mut c_void,
    #[cfg(ncf_type_varsized)]
    pub varsized: c_int,
}

/// netcdf-c's `NCjson` (opaque here: built and freed by netcdf-c's `NCJ*` functions).
#[repr(C)]
pub struct NCjson {
    _private: [u8; 0],
}

/// Opaque: netcdf-c's `NCZ_Plugin` (4.9.3 on, `zplugins.h`), a record of its C plugin table,
/// which ncfilters never makes.
#[cfg(ncf_plugin_path_release)]
#[repr(C)]
pub struct NCZ_Plugin {
    _private: [u8; 0],
}

/// Opaque marker for the element type netcdf-c declares as `struct NCZ_Filter`.
#[repr(C)]
pub struct NCZ_Filter {
    _private: [u8; 0],
}

extern "C" {
    fn ncfilters_ncz_find_grp_file_var(
        ncid: c_int,
        varid: c_int,
        file: *mut *mut NC_FILE_INFO,
        grp: *mut *mut NC_GRP_INFO,
        var: *mut *mut NC_VAR_INFO,
    ) -> c_int;
    fn ncfilters_nc4_find_default_chunksizes2(grp: *mut c_void, var: *mut NC_VAR_INFO) -> c_int;
    fn ncfilters_nclistnew() -> *mut NClist;
    fn ncfilters_nclistfree(list: *mut NClist) -> c_int;
    fn ncfilters_nclistpush(list: *mut NClist, elem: *const c_void) -> c_int;
    fn ncfilters_nclistremove(list: *mut NClist, index: usize) -> *mut c_void;
    fn ncfilters_NCJparse(text: *const c_char, flags: c_uint, json: *mut *mut NCjson) -> c_int;
    fn ncfilters_NCZ_get_maxstrlen(obj: *mut NC_OBJ) -> c_int;
    fn ncfilters_NCJunparse(json: *const NCjson, flags: c_uint, text: *mut *mut c_char) -> c_int;
    fn ncfilters_NCJreclaim(json: *mut NCjson);
}

/// `NCJreclaim`.
///
/// # Safety
/// `json` is NULL or a tree netcdf-c built that nothing refers to any more.
pub unsafe fn ncjson_free(json: *mut NCjson) {
    // SAFETY: forwarded contract.
    unsafe { ncfilters_NCJreclaim(json) }
}

/// Frees the list of filters defined with incomplete plugins, leaving none.
///
/// # Safety
/// `info.incompletefilters` is what netcdf-c and ncfilters keep there: NULL or a live `NClist` of
/// [`CBox<ZarrFilter>`] pointers that nothing else refers to: the handle alone does not say what
/// netcdf-c keeps in the field.
pub unsafe fn free_incomplete_filters(mut info: crate::c_args::Live<'_, NCZ_VAR_INFO>) {
    // SAFETY: NULL is what the field holds when there is no list.
    let list = std::mem::replace(unsafe { &mut info.as_mut().incompletefilters }, ptr::null_mut());
    // SAFETY: the caller's contract; the list and its filters are now ours.
    unsafe { free_filter_list(list) };
}

/// Frees a filter list and the ncfilters filters in it.
///
/// # Safety
/// `list` is NULL or a live `NClist` of [`CBox<ZarrFilter>`] pointers that nothing refers to any more.
pub unsafe fn free_filter_list(list: *mut NClist) {
    if list.is_null() {
        return;
    }
    // SAFETY: per the contract, the elements are ours to free, then the list.
    unsafe {
        for element in super::nc4::list_elements(list) {
            drop(CBox::from_raw(element.cast::<ZarrFilter>()));
        }
        ncfilters_nclistfree(list);
    }
}

/// A JSON tree on the C heap that nobody else holds, freed when dropped unless handed to a
/// caller ([`JsonOut::give`]). Only [`ncjson_parse`] makes one, so no other pointer passes for it:
///
/// ```compile_fail,E0423
/// let forged = ncfilters::test_support::CJson(std::ptr::NonNull::dangling());
/// ```
#[derive(Debug)]
pub struct CJson<'call>(NonNull<NCjson>, PhantomData<&'call ()>);

impl Drop for CJson<'_> {
    fn drop(&mut self) {
        // SAFETY: NCJparse's tree, held by nobody else (the type's invariant).
        unsafe { ncjson_free(self.0.as_ptr()) };
    }
}

/// `NCJparse`: C-heap JSON for netcdf-c to own (and `NCJreclaim`), on the thread that uses
/// netcdf-c, within a call: a `CJson` leaves neither (it is not `Send`, and borrows the call).
pub fn ncjson_parse<'call>(_call: &crate::c_args::Call<'call>, text: &str) -> NcResult<CJson<'call>> {
    let text = CString::new(text).map_err(|_| NC_EFILTER)?;
    let mut json = ptr::null_mut();
    // SAFETY: NUL-terminated text, valid out-pointer; NCJparse returns NCJ_ERR (-1) on bad JSON.
    let code = unsafe { ncfilters_NCJparse(text.as_ptr(), 0, &mut json) };
    match NonNull::new(json) {
        Some(json) if code == 0 => Ok(CJson(json, PhantomData)),
        // On failure NCJparse reclaims what it built and leaves `json` as it was.
        _ => Err(NC_EFILTER),
    }
}

/// An export's `NCjson` argument: NULL or a live tree; converts to its text (`NC_EFILTER` for
/// NULL or a tree netcdf-c cannot write).
impl<'call> crate::c_args::FromRawArgument<'call, *const NCjson> for NCjson {
    type Output = NcResult<String>;

    unsafe fn from_raw(_: &crate::c_args::Call<'call>, json: *const NCjson) -> NcResult<String> {
        // SAFETY: the handle's contract is ncjson_text's.
        unsafe { ncjson_text(json) }
    }
}

/// An export's out-pointer for a JSON tree it makes: NULL (the tree is freed) or writable, the
/// caller then owning the tree.
#[derive(Debug)]
pub struct JsonOut<'a>(*mut *mut NCjson, PhantomData<&'a mut *mut NCjson>);

impl<'call> crate::c_args::FromRawArgument<'call, *mut *mut NCjson> for JsonOut<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &crate::c_args::Call<'call>, out: *mut *mut NCjson) -> Self {
        JsonOut(out, PhantomData)
    }
}

impl JsonOut<'_> {
    /// Hands `json` to the caller, or frees it when the pointer is NULL.
    pub fn give(self, json: CJson<'_>) {
        if !self.0.is_null() {
            let json = std::mem::ManuallyDrop::new(json);
            // SAFETY: non-NULL and writable per the contract; the caller owns the tree from here.
            unsafe { self.0.write(json.0.as_ptr()) };
        }
    }
}

/// `NCJunparse`: the text of JSON netcdf-c built.
///
/// # Safety
/// `json` is a live `NCjson` tree.
pub unsafe fn ncjson_text(json: *const NCjson) -> NcResult<String> {
    if json.is_null() {
        return Err(NC_EFILTER);
    }
    let mut text: *mut c_char = ptr::null_mut();
    // SAFETY: live tree per the contract; valid out-pointer.
    let code = unsafe { ncfilters_NCJunparse(json, 0, &mut text) };
    // SAFETY: text is NULL or NCJunparse's malloc'd string.
    let owned = unsafe { crate::ffi_boundary::c_str_bytes(text) }.map(|b| String::from_utf8_lossy(b).into_owned());
    // SAFETY: as above; ours to free.
    unsafe { libc::free(text.cast()) };
    match owned {
        Some(owned) if code == 0 => Ok(owned),
        _ => Err(NC_EFILTER),
    }
}

/// An NCZarr variable found by `ncz_find_grp_file_var`.
pub struct ZarrLocation<'a> {
    // Private: the safe methods read through it, so only `find` may set it.
    file: NonNull<NC_FILE_INFO>,
    // Public, so safe code may swap two locations' variables: nothing here pairs it with `file`
    // (the group a call needs is the variable's own `container`).
    pub var: ZarrVar<'a>,
    call: &'a crate::c_args::Call<'a>,
}

impl<'call> ZarrLocation<'call> {
    /// The variable `varid` of the NCZarr file `ncid`, for the rest of `call` and no longer.
    ///
    /// # Safety
    /// No other handle to the variable is used while this one is alive: two would let safe code
    /// free the filter list one of them reads (`params`, `with_filter`). A call that C re-enters
    /// from a plugin may find the variable again (`NCZ_modify_parameters` asking
    /// `nc_inq_var_filter_info`): the methods that run plugins ([`ZarrVar::ensure_working`]) hold
    /// no reference into the variable meanwhile and read its lists afresh afterwards.
    pub unsafe fn find(call: &'call crate::c_args::Call<'call>, ncid: c_int, varid: c_int) -> NcResult<Self> {
        let (mut file, mut group, mut var) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        // SAFETY: valid out-pointers; the shim returns NC_ENOTBUILT when unlinked.
        check(unsafe { ncfilters_ncz_find_grp_file_var(ncid, varid, &mut file, &mut group, &mut var) })?;
        let file = NonNull::new(file).ok_or(NC_EINVAL)?;
        // SAFETY: netcdf-c returned a live variable of an open NCZarr file.
        let var = unsafe { ZarrVar::new(var) }.ok_or(NC_EINVAL)?;
        Ok(ZarrLocation { file, var, call })
    }

    /// The call the variable was found in.
    pub fn call(&self) -> &'call crate::c_args::Call<'call> {
        self.call
    }

    fn file_info(&self) -> &NC_FILE_INFO {
        // SAFETY: netcdf-c returned a live file for this location.
        unsafe { self.file.as_ref() }
    }

    pub fn in_define_mode(&self) -> bool {
        self.file_info().flags & NC_INDEF != 0
    }

    pub fn parallel(&self) -> bool {
        self.file_info().parallel != 0
    }

    /// Filters force chunking; unset chunk sizes get netcdf-c's defaults (4.9.0 does not
    /// adjust the chunk cache for NCZarr here).
    pub fn make_chunked(&mut self) -> NcResult<()> {
        let var = self.var.as_ptr();
        // SAFETY: var is live, and its container is its own group.
        unsafe {
            (*var).storage = NC_CHUNKED;
            let chunksizes = (*var).chunksizes;
            if !chunksizes.is_null() && *chunksizes == 0 {
                check(ncfilters_nc4_find_default_chunksizes2((*var).container.cast(), var))?;
            }
        }
        Ok(())
    }
}

/// Which of a variable's two filter lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterList {
    /// `var->filters`: the chain (complete filters, and codecs read without a plugin).
    Chain,
    /// `zvar->incompletefilters`: API-defined filters whose plugin is incomplete.
    Incomplete,
}

/// Names one filter of a variable's list, possibly stale: it is dereferenced only by
/// [`ZarrVar::with_filter`], after it is found among the list's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterHandle(*mut ZarrFilter);

impl FilterHandle {
    /// A handle for a filter pointer netcdf-c passed in (checked on use).
    pub fn from_ptr(ptr: *mut ZarrFilter) -> Self {
        FilterHandle(ptr)
    }
}

/// An NCZarr variable and its two filter lists, for `'a` (an export's call, or what the unsafe
/// constructor's caller promises).
pub struct ZarrVar<'a> {
    var: VarPtr,
    _borrow: PhantomData<&'a mut NC_VAR_INFO>,
}

impl std::ops::Deref for ZarrVar<'_> {
    type Target = VarPtr;
    fn deref(&self) -> &VarPtr {
        &self.var
    }
}

/// An export's variable argument: a live NCZarr `NC_VAR_INFO_T` not accessed elsewhere meanwhile
/// (NULL refused first); `NC_EINVAL` when it is not one.
impl<'call> crate::c_args::FromRawArgument<'call, *mut NC_VAR_INFO> for ZarrVar<'call> {
    type Output = NcResult<Self>;

    unsafe fn from_raw(_: &crate::c_args::Call<'call>, var: *mut NC_VAR_INFO) -> NcResult<Self> {
        // SAFETY: the handle's contract is ZarrVar::new's.
        unsafe { ZarrVar::new(var) }.ok_or(NC_EINVAL)
    }
}

/// An export's variable argument that netcdf-c declares `const` and the export only reads: a
/// [`ZarrVar`] with none of its `&mut self` methods.
pub struct ZarrVarToRead<'a>(ZarrVar<'a>);

impl<'a> std::ops::Deref for ZarrVarToRead<'a> {
    type Target = ZarrVar<'a>;
    fn deref(&self) -> &ZarrVar<'a> {
        &self.0
    }
}

/// A live NCZarr `NC_VAR_INFO_T` (NULL refused first); `NC_EINVAL` when it is not one.
impl<'call> crate::c_args::FromRawArgument<'call, *const NC_VAR_INFO> for ZarrVarToRead<'call> {
    type Output = NcResult<Self>;

    unsafe fn from_raw(_: &crate::c_args::Call<'call>, var: *const NC_VAR_INFO) -> NcResult<Self> {
        // SAFETY: the contract of ZarrVar's; the handle only reads through the pointer.
        unsafe { ZarrVar::new(var.cast_mut()) }.map(ZarrVarToRead).ok_or(NC_EINVAL)
    }
}

impl ZarrVar<'_> {
    /// # Safety
    /// `var` is NULL or a live NCZarr `NC_VAR_INFO_T` (its `format_var_info` an
    /// `NCZ_VAR_INFO_T`); see [`VarPtr::new`].
    unsafe fn new(var: *mut NC_VAR_INFO) -> Option<Self> {
        // SAFETY: forwarded contract.
        unsafe { VarPtr::new(var) }.map(|var| ZarrVar { var, _borrow: PhantomData })
    }

    /// The variable's `NCZ_VAR_INFO_T` (NULL if it has none).
    fn zarr_info(&self) -> *mut NCZ_VAR_INFO {
        self.info().format_var_info.cast()
    }

    /// The variable's type size in bytes (0 if its type is not known yet).
    /// Whether the variable's type is of variable size (`NC_TYPE_INFO_T.varsized`, netcdf-c 4.9.3
    /// on; NCZarr strings are stored fixed-size and are not). Always false for 4.9.0.
    pub fn type_is_varsized(&self) -> bool {
        #[cfg(ncf_type_varsized)]
        {
            self.type_info().is_some_and(|t| t.varsized != 0)
        }
        #[cfg(not(ncf_type_varsized))]
        false
    }

    pub fn type_size(&self) -> usize {
        self.type_info().map_or(0, |t| t.size)
    }

    /// `ncidfor(var)`: the ncid of the variable's group, for calls back into the public API.
    pub fn ncid(&self) -> NcResult<c_int> {
        // SAFETY: container, its file and the file's controller are live for an open variable.
        unsafe {
            let group = self.info().container.cast::<NC_GRP_INFO>().as_ref().ok_or(NC_EINVAL)?;
            let file = group.nc4_info.as_ref().ok_or(NC_EINVAL)?;
            let controller = file.controller.as_ref().ok_or(NC_EINVAL)?;
            Ok(controller.ext_ncid | group.hdr.id())
        }
    }

    fn list_slot(&self, which: FilterList) -> NcResult<*mut *mut NClist> {
        match which {
            // SAFETY: var is live; filters is an NClist* for NCZarr variables.
            FilterList::Chain => Ok(unsafe { ptr::addr_of_mut!((*self.as_ptr()).filters) }.cast()),
            FilterList::Incomplete => {
                let zvar = self.zarr_info();
                if zvar.is_null() {
                    return Err(NC_EINVAL);
                }
                // SAFETY: format_var_info of an NCZarr variable is its live NCZ_VAR_INFO_T.
                Ok(unsafe { ptr::addr_of_mut!((*zvar).incompletefilters) })
            }
        }
    }

    fn list(&self, which: FilterList) -> *mut NClist {
        // SAFETY: the slot is a live field of the variable.
        self.list_slot(which).map_or(ptr::null_mut(), |slot| unsafe { *slot })
    }

    /// Creates both lists if missing, as netcdf-c's own filter code does.
    pub fn ensure_lists(&mut self) -> NcResult<()> {
        for which in [FilterList::Chain, FilterList::Incomplete] {
            let slot = self.list_slot(which)?;
            // SAFETY: slot is a live field; nclistnew has no preconditions.
            unsafe {
                if (*slot).is_null() {
                    let list = ncfilters_nclistnew();
                    if list.is_null() {
                        return Err(NC_ENOMEM);
                    }
                    *slot = list;
                }
            }
        }
        Ok(())
    }

    /// The element pointers of one list (empty when the list does not exist).
    fn elements(&self, which: FilterList) -> Vec<*mut ZarrFilter> {
        // SAFETY: the list is NULL or a live NClist whose elements ncfilters put there.
        unsafe { super::nc4::list_elements(self.list(which)) }.iter().map(|p| p.cast()).collect()
    }

    /// The variable's name (for diagnostics).
    pub fn name(&self) -> String {
        // SAFETY: hdr.name is NULL or the variable's NUL-terminated name.
        let name = unsafe { crate::ffi_boundary::c_str_bytes(self.info().hdr.name) };
        name.map_or_else(|| format!("#{}", self.varid()), |n| String::from_utf8_lossy(n).into_owned())
    }

    /// The byte size of a decoded chunk ([`chunk_byte_size`]), or why it is not known.
    pub fn chunk_bytes(&self) -> Result<usize, String> {
        // Copied out, so that no reference to the NCZ_VAR_INFO_T is alive when NCZ_get_maxstrlen
        // writes its maxstrlen.
        let (chunkproduct, chunksize) = {
            // SAFETY: zarr_info is NULL or the variable's live NCZ_VAR_INFO_T.
            let zvar = unsafe { self.zarr_info().as_ref() }.ok_or("it has no NCZarr information")?;
            (zvar.chunkproduct, zvar.chunksize)
        };
        // From 4.9.2 on NCZarr stores a string variable's chunk as char[maxstrlen] per element.
        let string_elements = (cfg!(ncf_zvar_maxstrlen) && self.type_id() == Some(NC_STRING)).then(|| {
            // SAFETY: the variable is live; netcdf-c reads (and may fill in) its maxstrlen.
            (chunkproduct, unsafe { ncfilters_NCZ_get_maxstrlen(self.as_ptr().cast()) })
        });
        chunk_byte_size(chunksize, string_elements)
    }

    /// The variable's type (`nc_type`), from its `NC_TYPE_INFO_T`.
    fn type_id(&self) -> Option<c_int> {
        self.type_info().map(|t| t.hdr.id())
    }

    /// The variable's `NC_TYPE_INFO_T` (its mirrored prefix).
    fn type_info(&self) -> Option<&NC_TYPE_INFO> {
        // SAFETY: type_info is NULL or the variable's live NC_TYPE_INFO_T.
        unsafe { self.info().type_info.cast::<NC_TYPE_INFO>().as_ref() }
    }

    /// Handles for [`ZarrVar::with_filter`] to a list's filters, in list order.
    pub fn filter_handles(&self, which: FilterList) -> Vec<FilterHandle> {
        self.elements(which).into_iter().map(FilterHandle).collect()
    }

    /// Runs `f` on the filter `handle` names if it is (still) in the list: a fresh, short
    /// access, as a plugin called since the handle was taken may have changed the list.
    ///
    /// # Safety
    /// `f` calls nothing that may re-enter netcdf-c (a plugin's functions, [`super::FormatFilters`],
    /// the netcdf API): a re-entry may free the filter `f` holds. Called from safe code, it does
    /// not compile:
    ///
    /// ```compile_fail,E0133
    /// use ncfilters::c_args::with_call;
    /// use ncfilters::ffi_boundary::CallersThread;
    /// use ncfilters::test_support::{FilterList, ZarrLocation};
    /// with_call(unsafe { CallersThread::promise() }, |call| {
    ///     // SAFETY: the only handle to the variable.
    ///     if let Ok(mut found) = unsafe { ZarrLocation::find(call, 65536, 0) } {
    ///         for handle in found.var.filter_handles(FilterList::Chain) {
    ///             let _ = found.var.with_filter(FilterList::Chain, handle, |f| f.hdf5_id);
    ///         }
    ///     }
    /// });
    /// ```
    pub unsafe fn with_filter<R>(
        &mut self,
        which: FilterList,
        handle: FilterHandle,
        f: impl FnOnce(&mut ZarrFilter) -> R,
    ) -> NcResult<R> {
        let FilterHandle(ptr) = handle;
        if ptr.is_null() || !self.elements(which).contains(&ptr) {
            return Err(NC_EFILTER);
        }
        // SAFETY: an element of the list is a live CBox<ZarrFilter> owned by it; `&mut self`
        // keeps other ncfilters code off this variable, and `f` does not re-enter netcdf-c (the
        // caller's promise).
        Ok(f(unsafe { &mut *ptr }))
    }

    /// Computes the working parameters of chain filter `ptr` if not done yet. The plugin's
    /// `NCZ_modify_parameters` runs on owned copies with no reference to the filter alive (it
    /// may re-enter netcdf-c on this variable); the results are stored through a fresh access.
    pub fn ensure_working(&mut self, call: &Call<'_>, ptr: FilterHandle, ncid: c_int, varid: c_int) -> NcResult<()> {
        // SAFETY: working_job only copies what the job needs out of the filter.
        let Some(job) = (unsafe { self.with_filter(FilterList::Chain, ptr, |f| f.working_job()) })?? else {
            return Ok(());
        };
        // A panic must still end the computation, or the filter stays "computing" for good.
        let outcome = crate::ffi_boundary::contained("NCZ_modify_parameters", || job.run(call, ncid, varid));
        // SAFETY: finish_working only stores the outcome in the filter.
        unsafe { self.with_filter(FilterList::Chain, ptr, |f| f.finish_working(outcome)) }?
    }

    /// Mutable access to every filter of a list, in list order.
    ///
    /// # Safety
    /// Nothing that may re-enter netcdf-c (a plugin's functions, [`super::FormatFilters`], the
    /// netcdf API) is called while the references live: a re-entry may free the filters.
    pub unsafe fn filters_mut(&mut self, which: FilterList) -> Vec<&mut ZarrFilter> {
        // SAFETY: every element is a distinct live CBox<ZarrFilter> created by ncfilters and
        // owned by the list; `&mut self` keeps other ncfilters code off this variable, and no
        // re-entry frees them while the references live (the caller's promise).
        self.elements(which).into_iter().filter_map(|p| unsafe { p.as_mut() }).collect()
    }

    /// Shared access to every filter of a list, in list order.
    ///
    /// # Safety
    /// As for [`Self::filters_mut`]. Called from safe code, it does not compile:
    ///
    /// ```compile_fail,E0133
    /// use ncfilters::c_args::with_call;
    /// use ncfilters::ffi_boundary::CallersThread;
    /// use ncfilters::test_support::{FilterList, ZarrLocation};
    /// with_call(unsafe { CallersThread::promise() }, |call| {
    ///     // SAFETY: the only handle to the variable.
    ///     if let Ok(found) = unsafe { ZarrLocation::find(call, 65536, 0) } {
    ///         assert!(found.var.filters(FilterList::Chain).is_empty());
    ///     }
    /// });
    /// ```
    pub unsafe fn filters(&self, which: FilterList) -> Vec<&ZarrFilter> {
        // SAFETY: as in filters_mut, shared.
        self.elements(which).into_iter().filter_map(|p| unsafe { p.as_ref() }).collect()
    }

    /// The chain's filter ids, in order.
    pub fn chain_ids(&self) -> Vec<u32> {
        // SAFETY: only the ids are read.
        unsafe { self.filters(FilterList::Chain) }.iter().map(|f| f.hdf5_id).collect()
    }

    /// `NC_EFILTER`, with its diagnostic, when a codec of the chain is broken.
    pub fn check_chain_not_broken(&self) -> NcResult<()> {
        // SAFETY: check_not_broken only reads the filter and reports.
        unsafe { self.filters(FilterList::Chain) }.iter().try_for_each(|f| f.check_not_broken())
    }

    /// Where a complete filter with this id sits in the chain.
    pub fn complete_position(&self, id: u32) -> Option<usize> {
        // SAFETY: is_complete only reads the filter and its plugin's description.
        unsafe { self.filters(FilterList::Chain) }.iter().position(|f| f.hdf5_id == id && f.is_complete())
    }

    /// A copy of the visible parameters of the chain's filter at `index`.
    pub fn visible_params(&self, index: usize) -> Option<Vec<u32>> {
        // SAFETY: only the parameters are copied.
        unsafe { self.filters(FilterList::Chain) }.get(index).map(|f| f.visible.as_slice().to_vec())
    }

    /// New visible parameters for the chain's filter at `index` ([`ZarrFilter::redefine`]).
    pub fn redefine(&mut self, index: usize, params: &[u32]) -> NcResult<()> {
        // SAFETY: redefine only replaces the filter's parameters.
        let mut chain = unsafe { self.filters_mut(FilterList::Chain) };
        chain.get_mut(index).ok_or(NC_EINVAL)?.redefine(params)
    }

    /// Whether the chain filter `handle` names is suppressed (never applied).
    pub fn is_suppressed(&mut self, handle: FilterHandle) -> NcResult<bool> {
        // SAFETY: only the flag is read.
        unsafe { self.with_filter(FilterList::Chain, handle, |f| f.suppressed) }
    }

    /// Whether the chain filter `handle` names is complete ([`ZarrFilter::is_complete`]).
    pub fn is_complete(&mut self, handle: FilterHandle) -> NcResult<bool> {
        // SAFETY: is_complete only reads the filter and its plugin's description.
        unsafe { self.with_filter(FilterList::Chain, handle, |f| f.is_complete()) }
    }

    /// `NC_EFILTER` or `NC_ENOFILTER`, reported, when the chain filter `handle` names cannot
    /// run: broken, or without a complete plugin.
    pub fn check_usable(&mut self, handle: FilterHandle, varname: &str) -> NcResult<()> {
        // SAFETY: check_not_broken, is_complete and stage only read the filter and report;
        // the stage made is dropped unrun.
        unsafe {
            self.with_filter(FilterList::Chain, handle, |f| {
                f.check_not_broken()?;
                if f.is_complete() {
                    Ok(())
                } else {
                    f.stage(varname).map(drop)
                }
            })
        }?
    }

    /// The stage the chain filter `handle` names contributes ([`ZarrFilter::stage`]), to run
    /// after this returns.
    pub fn stage(&mut self, handle: FilterHandle, varname: &str) -> NcResult<Stage> {
        // SAFETY: stage only copies the plugin's Arc and the working parameters out.
        unsafe { self.with_filter(FilterList::Chain, handle, |f| f.stage(varname)) }?
    }

    /// What writing the codec JSON of the chain filter `handle` names needs
    /// ([`ZarrFilter::codec_job`]), to run after this returns.
    pub fn codec_job(&mut self, handle: FilterHandle) -> NcResult<(Arc<Plugin>, CParams)> {
        // SAFETY: codec_job only copies the plugin's Arc and the parameters out.
        unsafe { self.with_filter(FilterList::Chain, handle, |f| f.codec_job()) }?
    }

    /// Remembers the codec JSON written for the chain filter `handle` names.
    pub fn set_codec(&mut self, handle: FilterHandle, codec_id: String, text: String) -> NcResult<()> {
        // SAFETY: set_codec only stores the two strings.
        unsafe { self.with_filter(FilterList::Chain, handle, |f| f.set_codec(codec_id, text)) }
    }

    /// Appends a filter; the list owns it from then on.
    pub fn push(&mut self, which: FilterList, filter: ZarrFilter) -> NcResult<()> {
        self.ensure_lists()?;
        let raw = CBox::new(filter)?.into_raw();
        // SAFETY: the list is live; on success it holds the pointer.
        if unsafe { ncfilters_nclistpush(self.list(which), raw.cast()) } == 0 {
            // SAFETY: not pushed, so still ours.
            drop(unsafe { CBox::from_raw(raw) });
            return Err(NC_ENOMEM);
        }
        Ok(())
    }

    /// Removes and frees the element at `index` of the chain.
    pub fn remove(&mut self, which: FilterList, index: usize) {
        // SAFETY: nclistremove returns NULL for a NULL list or an index out of range (no box),
        // else the removed element, a CBox<ZarrFilter> now ours.
        drop(unsafe { CBox::from_raw(ncfilters_nclistremove(self.list(which), index).cast::<ZarrFilter>()) });
    }

    /// Frees one list and its filters, leaving the field NULL.
    pub fn free_list(&mut self, which: FilterList) -> NcResult<()> {
        let slot = self.list_slot(which)?;
        // SAFETY: slot is a live field; the list it held belongs to this variable alone.
        unsafe { free_filter_list(std::mem::replace(&mut *slot, ptr::null_mut())) };
        Ok(())
    }
}

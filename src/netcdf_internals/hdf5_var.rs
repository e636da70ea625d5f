// SPDX-License-Identifier: BSD-3-Clause
//! Access to an HDF5 variable and its filter list (`var->filters`, an `NClist*` of C-heap
//! `struct NC_HDF5_Filter*`), through netcdf-c's own list functions so C and Rust agree on it.

use super::nc4::{NC_HDF5_Filter, NClist, VarPtr, NC_CHUNKED, NC_FILE_INFO, NC_VAR_INFO};
use crate::c_heap::CArray;
use crate::error::{check, NcResult, NC_EINVAL, NC_ENOFILTER, NC_ENOMEM};
use crate::ffi_boundary::Call;
use std::os::raw::{c_int, c_uint, c_void};
use std::ptr::{self, NonNull};

extern "C" {
    fn ncfilters_nc4_hdf5_find_grp_h5_var(
        ncid: c_int,
        varid: c_int,
        h5: *mut *mut NC_FILE_INFO,
        grp: *mut *mut c_void,
        var: *mut *mut NC_VAR_INFO,
    ) -> c_int;
    fn ncfilters_nc4_find_default_chunksizes2(grp: *mut c_void, var: *mut NC_VAR_INFO) -> c_int;
    fn ncfilters_nc4_adjust_var_cache(grp: *mut c_void, var: *mut NC_VAR_INFO) -> c_int;
    fn ncfilters_nclistnew() -> *mut NClist;
    fn ncfilters_nclistfree(list: *mut NClist) -> c_int;
    fn ncfilters_nclistinsert(list: *mut NClist, index: usize, elem: *mut c_void) -> c_int;
    fn ncfilters_nclistremove(list: *mut NClist, index: usize) -> *mut c_void;
}

/// `H5Zfilter_avail`: whether HDF5 (built in, registered or on `HDF5_PLUGIN_PATH`) has filter `id`.
pub fn hdf5_filter_available(call: &Call<'_>, id: c_uint) -> NcResult<()> {
    if crate::hdf5_sys::filter_avail(call, id)? {
        Ok(())
    } else {
        Err(NC_ENOFILTER)
    }
}

/// The file and variable for `(ncid, varid)`, reading the variable's metadata lazily
/// (`nc4_hdf5_find_grp_h5_var`), which is what fills `var->filters` for files being read.
pub struct Hdf5Location<'a> {
    // Private: the safe methods read through it, so only the finder may set it.
    file: NonNull<NC_FILE_INFO>,
    // Public, so safe code may swap two locations' variables: nothing here pairs it with `file`
    // (the group a call needs is the variable's own `container`).
    pub var: Hdf5Var<'a>,
}

impl Hdf5Location<'_> {
    /// Whether the file is in define mode.
    pub fn in_define_mode(&self) -> bool {
        // SAFETY: netcdf-c returned a live file for this location.
        unsafe { self.file.as_ref() }.flags & super::nc4::NC_INDEF != 0
    }

    /// Whether the file is open for parallel I/O (`nc_create_par`/`nc_open_par`).
    pub fn is_parallel(&self) -> bool {
        // SAFETY: netcdf-c returned a live file for this location.
        unsafe { self.file.as_ref() }.parallel != 0
    }

    /// Switches the variable to collective parallel access (`NC_COLLECTIVE`).
    pub fn set_collective(&mut self) {
        // SAFETY: var is live and not accessed elsewhere meanwhile.
        unsafe { (*self.var.as_ptr()).parallel_access = super::nc4::NC_COLLECTIVE };
    }

    /// Filters force chunking; chunk sizes not yet chosen (`chunksizes[0] == 0`) get netcdf-c's defaults.
    pub fn make_chunked(&mut self) -> NcResult<()> {
        let var = self.var.as_ptr();
        // SAFETY: var is live, and its container is its own group.
        unsafe {
            (*var).storage = NC_CHUNKED;
            let chunksizes = (*var).chunksizes;
            if !chunksizes.is_null() && *chunksizes == 0 {
                let group = (*var).container;
                check(ncfilters_nc4_find_default_chunksizes2(group, var))?;
                check(ncfilters_nc4_adjust_var_cache(group, var))?;
            }
        }
        Ok(())
    }
}

/// The variable `varid` of the netCDF-4/HDF5 file `ncid`, for the rest of `call` and no longer.
///
/// # Safety
/// No other handle to the variable is used while this one is alive: two would let safe code free
/// the parameters one of them reads (`params`, `replace`). A call that C re-enters from a plugin
/// this handle's methods run may find the variable again: none of them runs a plugin.
pub unsafe fn find_hdf5_var<'call>(
    _: &crate::c_args::Call<'call>,
    ncid: c_int,
    varid: c_int,
) -> NcResult<Hdf5Location<'call>> {
    let (mut file, mut group, mut var) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid out-pointers.
    check(unsafe { ncfilters_nc4_hdf5_find_grp_h5_var(ncid, varid, &mut file, &mut group, &mut var) })?;
    let file = NonNull::new(file).ok_or(NC_EINVAL)?;
    // SAFETY: netcdf-c returned a live variable of an open HDF5 file.
    let var = unsafe { Hdf5Var::new(var) }.ok_or(NC_EINVAL)?;
    Ok(Hdf5Location { file, var })
}

/// A netCDF-4/HDF5 variable and its filter list.
pub struct Hdf5Var<'a> {
    var: VarPtr,
    _borrow: std::marker::PhantomData<&'a mut NC_VAR_INFO>,
}

impl std::ops::Deref for Hdf5Var<'_> {
    type Target = VarPtr;
    fn deref(&self) -> &VarPtr {
        &self.var
    }
}

/// An export's variable argument: a live `NC_VAR_INFO_T` of an HDF5 file (NULL refused first);
/// `NC_EINVAL` when it is not one.
impl<'call> crate::c_args::FromRawArgument<'call, *mut NC_VAR_INFO> for Hdf5Var<'call> {
    type Output = crate::error::NcResult<Self>;

    unsafe fn from_raw(_: &crate::c_args::Call<'call>, var: *mut NC_VAR_INFO) -> crate::error::NcResult<Self> {
        // SAFETY: the handle's contract is Hdf5Var::new's.
        unsafe { Hdf5Var::new(var) }.ok_or(crate::error::NC_EINVAL)
    }
}

impl Hdf5Var<'_> {
    /// # Safety
    /// `var` is NULL or a live `NC_VAR_INFO_T` of an HDF5 file (see [`VarPtr::new`]).
    unsafe fn new(var: *mut NC_VAR_INFO) -> Option<Self> {
        // SAFETY: forwarded contract.
        unsafe { VarPtr::new(var) }.map(|var| Hdf5Var { var, _borrow: std::marker::PhantomData })
    }

    fn list(&self) -> *mut NClist {
        self.info().filters.cast()
    }

    /// Creates the (empty) list if the variable has none yet, as netcdf-c's lookup does.
    pub fn ensure_list(&mut self) -> NcResult<()> {
        if self.list().is_null() {
            // SAFETY: nclistnew has no preconditions; the shim returns NULL when unlinked.
            let list = unsafe { ncfilters_nclistnew() };
            if list.is_null() {
                return Err(NC_ENOMEM);
            }
            // SAFETY: var is live; the new list now belongs to it.
            unsafe { (*self.as_ptr()).filters = list.cast() };
        }
        Ok(())
    }

    /// The filter pointers in application order (empty when there is no list). Private: a
    /// call that re-enters netcdf-c may change the list, so nothing outside borrows it.
    fn filter_pointers(&self) -> &[*mut NC_HDF5_Filter] {
        // SAFETY: the list is NULL or live, its elements C-heap NC_HDF5_Filter pointers.
        let elements = unsafe { super::nc4::list_elements(self.list()) };
        // SAFETY: same length and layout: a slice of pointers reinterpreted as typed pointers.
        unsafe { std::slice::from_raw_parts(elements.as_ptr().cast(), elements.len()) }
    }

    /// How many filters the variable has.
    pub fn count(&self) -> usize {
        self.filter_pointers().len()
    }

    /// Answers the address of the filter at `index`, as netcdf-c's `NC4_hdf5_filter_lookup`
    /// does. The variable's handle is used up, so nothing in this call can change the list after
    /// C was given the address.
    pub fn give_filter_address(self, index: usize, out: &mut crate::c_args::Out<'_, *mut NC_HDF5_Filter>) {
        let address = self.filter_pointers()[index];
        // SAFETY: a live filter of netcdf-c's own list, which C owns; this handle, the only one
        // in the call, is gone, so it stays there for C to read.
        unsafe { out.write_raw(address) }
    }

    /// A copy of the filter at `index` (a copy, not a reference: see [`Self::filter_pointers`]).
    pub fn filter(&self, index: usize) -> NC_HDF5_Filter {
        // SAFETY: list elements are live filters owned by the list.
        unsafe { *self.filter_pointers()[index] }
    }

    pub fn ids(&self) -> Vec<u32> {
        (0..self.count()).map(|i| self.filter(i).filterid).collect()
    }

    pub fn position(&self, id: u32) -> Option<usize> {
        self.ids().iter().position(|&f| f == id)
    }

    /// A copy of a filter's parameters.
    pub fn params(&self, index: usize) -> Vec<u32> {
        let filter = self.filter(index);
        if filter.nparams == 0 || filter.params.is_null() {
            return Vec::new();
        }
        // SAFETY: params holds nparams words.
        unsafe { std::slice::from_raw_parts(filter.params, filter.nparams) }.to_vec()
    }

    /// Replaces a filter's parameters and flags. The new vector is allocated before the old
    /// one is freed, so a failed allocation leaves the filter intact.
    pub fn replace(&mut self, index: usize, params: &[u32], flags: c_int) -> NcResult<()> {
        let new_params = c_params(params)?;
        let filter = self.filter_pointers()[index];
        // SAFETY: filter is live and owned by the list; its old params are C-heap.
        unsafe {
            libc::free((*filter).params.cast());
            (*filter).params = new_params;
            (*filter).nparams = params.len();
            (*filter).flags = flags;
        }
        Ok(())
    }

    /// Inserts a new C-heap filter at `index`.
    pub fn insert(&mut self, index: usize, id: u32, params: &[u32], flags: c_int) -> NcResult<()> {
        self.ensure_list()?;
        let mut cell = CArray::<NC_HDF5_Filter>::zeroed(1)?;
        let new_params = c_params(params)?;
        cell.as_mut_slice()[0] = NC_HDF5_Filter { flags, filterid: id, nparams: params.len(), params: new_params };
        let filter = cell.into_raw();
        // SAFETY: the list is live; on success it owns the filter.
        if unsafe { ncfilters_nclistinsert(self.list(), index, filter.cast()) } == 0 {
            // SAFETY: not inserted, so still ours.
            unsafe { free_filter(filter) };
            return Err(NC_ENOMEM);
        }
        Ok(())
    }

    /// Removes and frees the filter at `index`.
    pub fn remove(&mut self, index: usize) {
        // SAFETY: nclistremove returns NULL for a NULL list or an index out of range, which
        // free_filter ignores, else the removed element, now ours to free.
        unsafe { free_filter(ncfilters_nclistremove(self.list(), index).cast()) }
    }

    /// Frees every filter and the list, leaving `var->filters` NULL.
    pub fn free_list(&mut self) {
        let list = self.list();
        if list.is_null() {
            return;
        }
        for index in (0..self.count()).rev() {
            self.remove(index);
        }
        // SAFETY: the list is empty and owned by the variable, which forgets it below.
        unsafe {
            ncfilters_nclistfree(list);
            (*self.as_ptr()).filters = ptr::null_mut();
        }
    }
}

/// C-heap copy of a parameter vector; NULL when empty, as netcdf-c stores it.
fn c_params(params: &[u32]) -> NcResult<*mut c_uint> {
    if params.is_empty() {
        return Ok(ptr::null_mut());
    }
    Ok(CArray::from_slice(params)?.into_raw())
}

/// # Safety
/// `filter` is NULL or a C-heap `NC_HDF5_Filter` no list refers to any more.
unsafe fn free_filter(filter: *mut NC_HDF5_Filter) {
    if let Some(f) = NonNull::new(filter) {
        // SAFETY: per the contract, the filter and its params are C-heap and unreferenced.
        unsafe {
            libc::free(f.as_ref().params.cast());
            libc::free(f.as_ptr().cast());
        }
    }
}

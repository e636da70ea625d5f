// SPDX-License-Identifier: BSD-3-Clause
//! Mirrors of netcdf-c's netCDF-4 internal structs (`include/nc4internal.h`, `hdf5internal.h`,
//! `nclist.h`) that the HDF5 filter backend reads and writes. Struct names are the C *tags*
//! (`struct NC_VAR_INFO`), so cbindgen's prototypes match netcdf-c's declarations; every
//! layout is checked against the real headers by `gen-headers abi-check`.
#![allow(non_camel_case_types)]

use super::NC;
use std::os::raw::{c_char, c_float, c_int, c_uint, c_void};

/// `nc_bool_t` is a C enum: 4 bytes.
pub type nc_bool_t = c_int;

/// `NC_COLLECTIVE`: a variable's parallel access mode (netcdf_par.h).
pub const NC_COLLECTIVE: c_int = 1;

/// `NC_INDEF`: the file is in define mode.
pub const NC_INDEF: c_int = 0x01;
/// `NC_CHUNKED` storage.
pub const NC_CHUNKED: c_int = 0;
/// `NC_HDF5_FILTER_MISSING`.
pub const NC_HDF5_FILTER_MISSING: c_int = 1;

/// `NC_OBJ`: sort, name, id (`size_t` in 4.9.0, `int` from 4.9.3 on).
#[repr(C)]
#[derive(Debug)]
pub struct NC_OBJ {
    pub sort: c_int,
    pub name: *mut c_char,
    #[cfg(not(ncf_obj_id_int))]
    pub id: usize,
    #[cfg(ncf_obj_id_int)]
    pub id: c_int,
}

impl NC_OBJ {
    /// The object's id (a variable's varid, a group's ncid part).
    pub fn id(&self) -> c_int {
        // In 4.9.0 the id is a size_t holding an int.
        #[cfg_attr(ncf_obj_id_int, allow(clippy::unnecessary_cast))]
        let id = self.id as c_int;
        id
    }
}

/// `NClist`: a growable vector of `void*`, allocated and grown by netcdf-c (C heap).
#[cfg(not(ncf_nclist_v2))]
#[repr(C)]
#[derive(Debug)]
pub struct NClist {
    pub alloc: usize,
    pub length: usize,
    pub content: *mut *mut c_void,
}

/// `NClist` of 4.10: the content pointer first, and whether the list owns it.
#[cfg(ncf_nclist_v2)]
#[repr(C)]
#[derive(Debug)]
pub struct NClist {
    pub content: *mut *mut c_void,
    pub alloc: usize,
    pub length: usize,
    pub extendible: c_int,
}

/// `NC_DIM_INFO_T`.
#[repr(C)]
#[derive(Debug)]
pub struct NC_DIM_INFO {
    pub hdr: NC_OBJ,
    pub container: *mut c_void,
    pub len: usize,
    pub unlimited: nc_bool_t,
    pub extended: nc_bool_t,
    pub too_long: nc_bool_t,
    pub format_dim_info: *mut c_void,
    pub coord_var: *mut c_void,
}

/// `struct ChunkCache` inside `NC_VAR_INFO_T`.
#[repr(C)]
#[derive(Debug)]
pub struct ChunkCache {
    pub size: usize,
    pub nelems: usize,
    pub preemption: c_float,
}

/// `NC_VAR_INFO_T` (no configure-time ifdefs in 4.9.0).
#[repr(C)]
#[derive(Debug)]
pub struct NC_VAR_INFO {
    pub hdr: NC_OBJ,
    pub alt_name: *mut c_char,
    pub container: *mut c_void,
    pub ndims: usize,
    pub dimids: *mut c_int,
    pub dim: *mut *mut NC_DIM_INFO,
    pub is_new_var: nc_bool_t,
    pub was_coord_var: nc_bool_t,
    pub became_coord_var: nc_bool_t,
    pub fill_val_changed: nc_bool_t,
    pub attr_dirty: nc_bool_t,
    pub created: nc_bool_t,
    pub written_to: nc_bool_t,
    pub type_info: *mut c_void,
    pub atts_read: c_int,
    pub meta_read: nc_bool_t,
    pub coords_read: nc_bool_t,
    pub att: *mut c_void,
    pub no_fill: nc_bool_t,
    pub fill_value: *mut c_void,
    pub chunksizes: *mut usize,
    pub storage: c_int,
    pub endianness: c_int,
    pub parallel_access: c_int,
    pub chunkcache: ChunkCache,
    pub quantize_mode: c_int,
    pub nsd: c_int,
    pub format_var_info: *mut c_void,
    /// An `NClist*` of `struct NC_HDF5_Filter*` for HDF5 variables.
    pub filters: *mut c_void,
}

/// An `MPI_Comm` or `MPI_Info` handle: a pointer in OpenMPI, an `int` in MPICH and its
/// derivatives (cmake/ncfilters.cmake measures which and sets `ncfilters_mpi_int_handles`).
#[cfg(all(feature = "parallel4", not(ncfilters_mpi_int_handles)))]
pub type MpiHandle = *mut c_void;
#[cfg(all(feature = "parallel4", ncfilters_mpi_int_handles))]
pub type MpiHandle = c_int;

/// The leading fields of `NC_FILE_INFO_T`: `flags`, `parallel` and the `controller` behind
/// `ncidfor()`. A parallel (`USE_PARALLEL4`, feature `parallel4`) build has the file's MPI
/// communicator and info after `controller`.
#[repr(C)]
#[derive(Debug)]
pub struct NC_FILE_INFO {
    pub hdr: NC_OBJ,
    pub controller: *mut NC,
    #[cfg(feature = "parallel4")]
    pub comm: MpiHandle,
    #[cfg(feature = "parallel4")]
    pub info: MpiHandle,
    pub cmode: c_int,
    pub flags: c_int,
    pub parallel: nc_bool_t,
}

/// `NC_HDF5_VAR_INFO_T` (HDF5 ≥ 1.10: `hid_t` is 64-bit).
#[repr(C)]
#[derive(Debug)]
pub struct NC_HDF5_VAR_INFO {
    pub hdf_datasetid: i64,
    pub dimscale_hdf5_objids: *mut c_void,
    pub dimscale: nc_bool_t,
    pub dimscale_attached: *mut nc_bool_t,
    pub flags: c_int,
}

/// `struct NC_HDF5_Filter`: one element of an HDF5 variable's filter list. Allocated and
/// freed on the C heap; `libhdf5/nc4hdf.c` reads it directly when creating datasets.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NC_HDF5_Filter {
    pub flags: c_int,
    pub filterid: c_uint,
    pub nparams: usize,
    pub params: *mut c_uint,
}

// SAFETY: integers and a raw pointer, all valid at zero (CArray::zeroed makes the cells).
unsafe impl crate::c_heap::Zeroable for NC_HDF5_Filter {}

/// The element pointers of a netcdf-c list (empty for NULL or an empty list).
///
/// # Safety
/// `list` is NULL or a live `NClist` not modified while the slice is used.
pub unsafe fn list_elements<'a>(list: *const NClist) -> &'a [*mut c_void] {
    // SAFETY: a live list has `length` element pointers at `content`.
    unsafe {
        match list.as_ref() {
            Some(list) if list.length > 0 && !list.content.is_null() => {
                std::slice::from_raw_parts(list.content, list.length)
            }
            _ => &[],
        }
    }
}

/// A netCDF-4 variable (HDF5 or NCZarr) as netcdf-c hands it over. Every accessor reads
/// through the raw pointer afresh, because netcdf-c functions called in between (plugins
/// re-enter it) may change the variable. [`super::hdf5_var::Hdf5Var`] and
/// [`super::nczarr::ZarrVar`] add their format's filter list on top.
pub struct VarPtr {
    var: std::ptr::NonNull<NC_VAR_INFO>,
}

impl VarPtr {
    /// # Safety
    /// `var` is NULL or a live `NC_VAR_INFO_T` that nothing else accesses while this value
    /// is used (netcdf-c's API is not thread-safe either).
    pub unsafe fn new(var: *mut NC_VAR_INFO) -> Option<Self> {
        std::ptr::NonNull::new(var).map(|var| VarPtr { var })
    }

    pub fn as_ptr(&self) -> *mut NC_VAR_INFO {
        self.var.as_ptr()
    }

    /// The variable itself, for this module's handles: outside it, a reference held across a
    /// call that re-enters netcdf-c could outlive what it reads, so the accessors below copy.
    ///
    /// ```compile_fail,E0624
    /// use ncfilters::c_args::with_call;
    /// use ncfilters::ffi_boundary::CallersThread;
    /// use ncfilters::test_support::ZarrLocation;
    /// with_call(unsafe { CallersThread::promise() }, |call| {
    ///     // SAFETY: the only handle to the variable.
    ///     if let Ok(found) = unsafe { ZarrLocation::find(call, 65536, 0) } {
    ///         assert_eq!(found.var.info().ndims, 0);
    ///     }
    /// });
    /// ```
    pub(super) fn info(&self) -> &NC_VAR_INFO {
        // SAFETY: live per the constructor's contract.
        unsafe { self.var.as_ref() }
    }

    pub fn varid(&self) -> c_int {
        self.info().hdr.id()
    }

    /// `var->filters`: the address of the variable's filter list (not to be read through).
    pub fn filter_list_address(&self) -> *mut c_void {
        self.info().filters
    }

    pub fn ndims(&self) -> usize {
        self.info().ndims
    }

    pub fn created(&self) -> bool {
        self.info().created != 0
    }

    /// Lengths of the variable's dimensions (0 for a dimension pointer not set yet).
    pub fn dim_lengths(&self) -> Vec<usize> {
        let info = self.info();
        (0..info.ndims)
            .map(|d| {
                // SAFETY: dim holds ndims dimension pointers (NULL or live) for a defined variable.
                unsafe { (*info.dim.add(d)).as_ref() }.map_or(0, |dim| dim.len)
            })
            .collect()
    }
}

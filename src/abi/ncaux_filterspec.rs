// SPDX-License-Identifier: BSD-3-Clause
//! `netcdf_aux.h` filter-spec functions (replacing the parser in `libdispatch/daux.c`).

use crate::c_args::{CountedOut, FromRawArgument, InOut, Out, Text, VectorOut};
use crate::c_heap::CArray;
use crate::c_types::NC_H5_Filterspec;
use crate::error::{report, NcError, NcResult, NC_EINVAL};
use crate::filterspec::{self, FilterSpec, SpecError};
use std::os::raw::{c_char, c_int, c_uchar, c_uint};
use std::ptr;

fn rejected(function: &str, text: &[u8], error: SpecError) -> NcError {
    report(format_args!("{function}({:?}): {error}", String::from_utf8_lossy(text)));
    NC_EINVAL
}

/// A C-heap `NC_H5_Filterspec` whose params are C-heap too; freed with `ncaux_h5filterspec_free`.
fn c_spec(spec: &FilterSpec) -> NcResult<*mut NC_H5_Filterspec> {
    let params = CArray::from_slice(&spec.params)?;
    let mut cell = CArray::<NC_H5_Filterspec>::zeroed(1)?;
    let slot = &mut cell.as_mut_slice()[0];
    slot.filterid = spec.id;
    slot.nparams = spec.params.len() as _;
    slot.params = params.into_raw();
    Ok(cell.into_raw())
}

/// Parses one `id,p1,p2,...` spec. `*paramsp` is C-heap memory the caller `free()`s.
///
/// # Safety
/// `txt` is NULL or a NUL-terminated string; each out-pointer is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncaux_h5filterspec_parse(
    txt: *const c_char,
    idp: *mut c_uint,
    nparamsp: *mut usize,
    paramsp: *mut *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(txt);
        // SAFETY: `txt` is NULL or NUL-terminated, alive for the call (the export's `# Safety`).
        let text = unsafe { Text::from_raw(call, txt) }.0.unwrap_or_default();
        let spec = filterspec::parse_spec(text).map_err(|e| rejected("ncaux_h5filterspec_parse", text, e))?;
        let params = CArray::from_slice(&spec.params)?;
        // SAFETY: `idp` is NULL or valid for a write (the export's `# Safety`).
        unsafe { Out::<c_uint>::from_raw(call, idp) }.write(spec.id);
        // SAFETY: `nparamsp` and `paramsp` are each NULL or valid for a write (the export's `# Safety`).
        unsafe { VectorOut::from_raw(call, (nparamsp, paramsp)) }.give(params);
        Ok(())
    })
}

/// Parses an optional `[N]` prefix and `|`-separated specs. The vector and each
/// spec are C-heap: `free()` the vector, `ncaux_h5filterspec_free` each element.
///
/// # Safety
/// `txt0` is NULL or a NUL-terminated string; each out-pointer is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncaux_h5filterspec_parselist(
    txt0: *const c_char,
    formatp: *mut c_int,
    nspecsp: *mut usize,
    vectorp: *mut *mut *mut NC_H5_Filterspec,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(txt0);
        // SAFETY: `txt0` is NULL or NUL-terminated, alive for the call (the export's `# Safety`).
        let text = unsafe { Text::from_raw(call, txt0) }.0.unwrap_or_default();
        let list = filterspec::parse_spec_list(text).map_err(|e| rejected("ncaux_h5filterspec_parselist", text, e))?;
        let vector = if list.specs.is_empty() {
            None
        } else {
            let mut vector = SpecVector::with_len(list.specs.len())?;
            for (slot, spec) in list.specs.iter().enumerate() {
                vector.set(slot, spec)?;
            }
            Some(vector)
        };
        // SAFETY: `formatp` is NULL or valid for a write (the export's `# Safety`).
        unsafe { Out::<c_int>::from_raw(call, formatp) }.write(list.format);
        // SAFETY: `nspecsp` and `vectorp` are each NULL or valid for a write (the export's `# Safety`).
        let out = unsafe { VectorOut::from_raw(call, (nspecsp, vectorp)) };
        // With no place for it, the vector is freed here.
        match vector {
            Some(vector) => out.give(vector),
            None => out.give_none(),
        }
        Ok(())
    })
}

/// Encodes one constant into `uiparams`, which must have room for 2 words.
///
/// # Safety
/// `txt` is NULL or NUL-terminated; `uiparams` is NULL or writable for 2 words;
/// `nuiparamsp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncaux_h5filterspec_parse_parameter(
    txt: *const c_char,
    nuiparamsp: *mut usize,
    uiparams: *mut c_uint,
) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(txt, uiparams);
        // SAFETY: `txt` is NULL or NUL-terminated, alive for the call (the export's `# Safety`).
        let text = unsafe { Text::from_raw(call, txt) }.0.unwrap_or_default();
        let encoded =
            filterspec::parse_parameter(text).map_err(|e| rejected("ncaux_h5filterspec_parse_parameter", text, e))?;
        // uiparams has room for 2 words, the most a parameter takes.
        // SAFETY: `(nuiparamsp, uiparams)` is a count pointer NULL or writable, and a vector NULL or with room for the
        // answer; the answer is the one the caller made room for (netcdf-c's count-first contract) (the export's
        // `# Safety`).
        unsafe { CountedOut::<c_uint>::from_raw(call, (nuiparamsp, uiparams)).write(encoded.words()) };
        Ok(())
    })
}

/// Frees a spec from `ncaux_h5filterspec_parselist` (or one a C caller `calloc`'d).
///
/// # Safety
/// `f` is NULL or a C-heap spec whose `params` is NULL or C-heap, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn ncaux_h5filterspec_free(f: *mut NC_H5_Filterspec) {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |_| {
        if f.is_null() {
            return;
        }
        // SAFETY: f and its params are C-heap allocations owned by the caller.
        unsafe {
            libc::free((*f).params.cast());
            libc::free(f.cast());
        }
    })
}

/// Converts an 8-byte value to (decode=0) or from (decode≠0) the `[low32, high32]`
/// parameter layout; a no-op on little-endian machines.
///
/// # Safety
/// `mem8` is NULL or valid for reads and writes of 8 bytes.
#[no_mangle]
pub unsafe extern "C" fn ncaux_h5filterspec_fix8(mem8: *mut c_uchar, decode: c_int) {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        // u8 has alignment 1, so 8 bytes at mem8 are a [u8; 8].
        // SAFETY: `mem8.cast::<[u8; 8]>()` is NULL or valid for reads and writes (the export's `# Safety`).
        if let Some(mem) = unsafe { InOut::<[u8; 8]>::from_raw(call, mem8.cast::<[u8; 8]>()) }.get() {
            filterspec::fix8(mem, decode != 0);
        }
    })
}

/// A C-heap vector of C-heap specs that frees everything unless handed to C.
struct SpecVector {
    /// `None` once handed to C.
    slots: Option<CArray<*mut NC_H5_Filterspec>>,
}

impl SpecVector {
    fn with_len(len: usize) -> NcResult<Self> {
        Ok(SpecVector { slots: Some(CArray::zeroed(len)?) })
    }

    /// Fills an empty slot with a C-heap copy of `spec`.
    fn set(&mut self, slot: usize, spec: &FilterSpec) -> NcResult<()> {
        if let Some(slots) = &mut self.slots {
            slots.as_mut_slice()[slot] = c_spec(spec)?;
        }
        Ok(())
    }
}

// SAFETY: the vector and every spec in it were made here (`with_len`, `c_spec`) and are owned by
// this value alone until handed over; C frees them (`free`, `ncaux_h5filterspec_free`).
unsafe impl crate::c_heap::GivenToC for SpecVector {
    type Pointee = *mut NC_H5_Filterspec;
    fn count(&self) -> usize {
        self.slots.as_ref().map_or(0, CArray::len)
    }
    fn into_c(mut self) -> *mut *mut NC_H5_Filterspec {
        self.slots.take().map_or(ptr::null_mut(), CArray::into_raw)
    }
}

impl Drop for SpecVector {
    fn drop(&mut self) {
        for &spec in self.slots.iter_mut().flat_map(|slots| slots.as_mut_slice().iter()) {
            // SAFETY: each non-NULL slot was produced by c_spec and is still owned here.
            unsafe { ncaux_h5filterspec_free(spec) };
        }
    }
}

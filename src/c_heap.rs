//! Memory handed to C, or freed by C, lives on the C heap (`malloc`/`calloc`/`free`).

use crate::error::{NcResult, NC_ENOMEM};
use std::ptr::NonNull;

/// An owned, zero-initialised C-heap array of `len` plain-data elements.
///
/// Dropping it frees the memory; [`CArray::into_raw`] hands ownership to C, which
/// must release it with `free()`. A zero-length array still owns a unique
/// non-NULL allocation, as glibc's `calloc(0, n)` does for netcdf-c.
pub struct CArray<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
}

impl<T: Copy> CArray<T> {
    pub fn zeroed(len: usize) -> NcResult<Self> {
        let size = std::mem::size_of::<T>().max(1);
        // SAFETY: calloc has no preconditions; it checks len*size for overflow itself.
        let raw = unsafe { libc::calloc(len.max(1), size) } as *mut T;
        let ptr = NonNull::new(raw).ok_or(NC_ENOMEM)?;
        Ok(CArray { ptr, len })
    }

    pub fn from_slice(values: &[T]) -> NcResult<Self> {
        let mut array = Self::zeroed(values.len())?;
        array.as_mut_slice().copy_from_slice(values);
        Ok(array)
    }

    /// Takes back ownership of memory from [`CArray::into_raw`] (NULL gives `None`).
    ///
    /// # Safety
    /// `ptr` is NULL or a C-heap array of `len` initialised elements owned by the caller.
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Option<Self> {
        NonNull::new(ptr).map(|ptr| CArray { ptr, len })
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: ptr owns `len` initialised (zeroed, plain-data) elements.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Gives up ownership: the caller (C) must `free()` the pointer.
    pub fn into_raw(self) -> *mut T {
        let ptr = self.ptr.as_ptr();
        std::mem::forget(self);
        ptr
    }
}

impl<T: Copy> Drop for CArray<T> {
    fn drop(&mut self) {
        // SAFETY: ptr came from calloc and has not been handed out.
        unsafe { libc::free(self.ptr.as_ptr().cast()) }
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//! The allocator of ncfilters' Rust code: the system's, except that under glibc a block of
//! [`MAPPED_FROM`] or more is a mapping of its own, unmapped when freed.
//!
//! Why: glibc raises its mmap threshold to the size of each mapped block freed, so after the
//! first chunk a compressor's large state (bzip2's 7.2 MB at block size 9, allocated through
//! Rust's allocator by libbz2-rs-sys) comes from a malloc arena and stays resident once freed. On
//! two cores an `nccopy` to bzip2 kept 10 MB more than stock's peak RSS for it (BENCHMARKS.md). The
//! process's malloc is the program's to tune, not a library's; mapping our own large blocks does
//! the same for ours alone. Other allocators (musl, macOS, Windows) are used as they are.
//!
//! The plugin libraries and libnetcdf's Rust part install it through ncfilters-plugin.

use std::alloc::{GlobalAlloc, Layout, System};

/// The size from which a block is mapped on its own under glibc: larger than the chunk pieces'
/// small buffers, smaller than a compressor's state.
pub const MAPPED_FROM: usize = 1 << 20;

/// The allocator: see the module's documentation.
pub struct LargeBlocksMapped;

/// Whether blocks of `layout` are mapped on their own: under glibc, from [`MAPPED_FROM`] bytes,
/// aligned to at most the smallest page (a mapping starts on a page).
fn is_mapped(layout: Layout) -> bool {
    cfg!(all(target_os = "linux", target_env = "gnu")) && layout.size() >= MAPPED_FROM && layout.align() <= 4096
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod mapping {
    use std::ptr::null_mut;

    /// `size` zeroed bytes of a new private mapping; null when the system refuses.
    pub fn map(size: usize) -> *mut u8 {
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no
        // existing memory.
        let block = unsafe {
            libc::mmap(
                null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if block == libc::MAP_FAILED {
            null_mut()
        } else {
            block.cast()
        }
    }

    /// Unmaps the `size` bytes at `block`.
    ///
    /// # Safety
    /// `block` and `size` are a mapping made by [`map`] or [`remap`], used no more.
    pub unsafe fn unmap(block: *mut u8, size: usize) {
        // SAFETY: the caller's contract; munmap can then only fail for a bad range, which it is not.
        unsafe { libc::munmap(block.cast(), size) };
    }

    /// The mapping at `block` of `old` bytes grown or shrunk to `new` bytes, moved if need be;
    /// null (the old one left as it was) when the system refuses.
    ///
    /// # Safety
    /// `block` and `old` are a mapping made by [`map`] or [`remap`]; it is used no more unless
    /// null is returned.
    pub unsafe fn remap(block: *mut u8, old: usize, new: usize) -> *mut u8 {
        // SAFETY: the caller's contract.
        let moved = unsafe { libc::mremap(block.cast(), old, new, libc::MREMAP_MAYMOVE) };
        if moved == libc::MAP_FAILED {
            null_mut()
        } else {
            moved.cast()
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod mapping {
    // Never called: no block is mapped there (`is_mapped`).
    pub fn map(_: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub unsafe fn unmap(_: *mut u8, _: usize) {}
    pub unsafe fn remap(_: *mut u8, _: usize, _: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
}

// SAFETY: every block comes either from System or from its own mapping, decided by its layout
// alone, which the caller passes again to free or resize it (GlobalAlloc's contract); a mapping
// is page-aligned, so it meets any alignment `is_mapped` accepts, and it comes zeroed.
unsafe impl GlobalAlloc for LargeBlocksMapped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_mapped(layout) {
            return mapping::map(layout.size());
        }
        // SAFETY: the caller's layout, of non-zero size (GlobalAlloc's contract).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_mapped(layout) {
            return mapping::map(layout.size());
        }
        // SAFETY: as in alloc.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if is_mapped(layout) {
            // SAFETY: a block of this layout was mapped by alloc or realloc, and is freed once.
            unsafe { mapping::unmap(block, layout.size()) };
        } else {
            // SAFETY: a block of this layout came from System.
            unsafe { System.dealloc(block, layout) };
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: GlobalAlloc's contract: new_size is non-zero and, rounded to the alignment, fits isize.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (is_mapped(layout), is_mapped(new_layout)) {
            // SAFETY: the block came from System with this layout.
            (false, false) => unsafe { System.realloc(block, layout, new_size) },
            // SAFETY: the block is a mapping of layout.size() bytes.
            (true, true) => unsafe { mapping::remap(block, layout.size(), new_size) },
            _ => {
                // SAFETY: new_layout has a non-zero size.
                let moved = unsafe { self.alloc(new_layout) };
                if !moved.is_null() {
                    // SAFETY: both blocks hold at least the smaller size and are distinct; the old
                    // one is freed once, with its own layout.
                    unsafe {
                        std::ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the page holding `address` is mapped in this process.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn is_mapped_page(address: *mut u8) -> bool {
        let page = (address as usize & !4095) as *mut libc::c_void;
        let mut vector = [0u8; 1];
        // SAFETY: mincore reads the page tables for one page and writes one byte of `vector`.
        unsafe { libc::mincore(page, 1, vector.as_mut_ptr()) == 0 }
    }

    /// Under glibc a large block is gone from the process when freed, even after glibc has raised
    /// its mmap threshold above it (when a malloc'd 4 MiB would stay mapped in an arena).
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn a_large_block_is_unmapped_when_freed() {
        // SAFETY: malloc and free of one block (kept from the optimiser): glibc raises its
        // threshold to 16 MiB.
        unsafe { libc::free(std::hint::black_box(libc::malloc(16 << 20))) };
        let layout = Layout::from_size_align(4 << 20, 16).unwrap();
        // SAFETY: a non-zero layout; the block is written within its size, then freed once.
        unsafe {
            let block = LargeBlocksMapped.alloc(layout);
            assert!(!block.is_null());
            block.write_bytes(1, layout.size());
            assert!(is_mapped_page(block));
            LargeBlocksMapped.dealloc(block, layout);
            assert!(!is_mapped_page(block), "the freed block is still mapped");
        }
    }

    /// Growing and shrinking across the size keeps the contents, whichever allocator holds them.
    #[test]
    fn resizing_keeps_the_bytes() {
        let sizes = [1000, MAPPED_FROM - 1, MAPPED_FROM, 3 * MAPPED_FROM + 5, 2 * MAPPED_FROM, 10, 5 * MAPPED_FROM];
        let mut layout = Layout::from_size_align(64, 8).unwrap();
        // SAFETY: every block is resized with the layout it has, read within its size, and freed once.
        unsafe {
            let mut block = LargeBlocksMapped.alloc_zeroed(layout);
            assert!(!block.is_null() && std::slice::from_raw_parts(block, 64).iter().all(|&b| b == 0));
            block.write_bytes(7, 64);
            let mut kept = 64;
            for size in sizes {
                block = LargeBlocksMapped.realloc(block, layout, size);
                assert!(!block.is_null());
                kept = kept.min(size);
                assert!(std::slice::from_raw_parts(block, kept).iter().all(|&b| b == 7), "to {size}");
                layout = Layout::from_size_align(size, 8).unwrap();
            }
            LargeBlocksMapped.dealloc(block, layout);
        }
    }
}

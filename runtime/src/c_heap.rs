// SPDX-License-Identifier: BSD-3-Clause
//! Memory handed to C, or freed by C, lives on the C heap (`malloc`/`calloc`/`free`).

use crate::c_types::NCPluginList;
use crate::error::{NcResult, NC_ENOMEM};
use std::ptr::NonNull;

/// Types for which all-zero bytes are a valid value, so [`CArray::zeroed`] may hand out
/// calloc'd memory as `&mut [T]` (a reference, `NonZero*` or `fn()` has no zero value).
///
/// ```compile_fail,E0277
/// use ncfilters_runtime::c_heap::CArray;
/// let null: &'static u8 = CArray::<&'static u8>::zeroed(1).unwrap().as_mut_slice()[0];
/// ```
///
/// # Safety
/// The all-zero bit pattern of `size_of::<Self>()` bytes is a valid `Self`.
pub unsafe trait Zeroable: Copy {}

macro_rules! zeroable {
    ($($t:ty),*) => {
        // SAFETY: zero is a valid value of every integer and float type.
        $(unsafe impl Zeroable for $t {})*
    };
}
zeroable!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// SAFETY: a null thin raw pointer is valid (Sized: a fat pointer's zero metadata may not be).
unsafe impl<T> Zeroable for *mut T {}
// SAFETY: as for `*mut T`.
unsafe impl<T> Zeroable for *const T {}
// SAFETY: integers and a raw pointer, all valid at zero (calloc zeroes the padding too).
unsafe impl Zeroable for crate::c_types::NC_H5_Filterspec {}

mod sealed {
    pub trait Sealed {}
}

/// A value with no pointer in it: what safe code may store where C reads it back
/// ([`crate::c_args::Out::write`]), and the elements of an array it may hand to C
/// ([`GivenToC`]). A pointer C would free or follow goes only through an owning type, with the
/// count C reads at it.
///
/// ```compile_fail,E0277
/// fn stores<T: ncfilters_runtime::c_heap::PlainValue>() {}
/// stores::<*mut std::os::raw::c_char>();
/// ```
pub trait PlainValue: Copy + sealed::Sealed {}

macro_rules! plain_value {
    ($($t:ty),*) => {
        $(impl sealed::Sealed for $t {} impl PlainValue for $t {})*
    };
}
plain_value!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);
impl<T: PlainValue, const N: usize> sealed::Sealed for [T; N] {}
impl<T: PlainValue, const N: usize> PlainValue for [T; N] {}

/// A C-heap vector that C takes over with its length: what a `(count, vector)` out-pair hands
/// to C ([`crate::c_args::VectorOut::give`]), written together so that C never reads more than
/// the block holds.
///
/// # Safety
/// `into_c` gives up and returns a pointer that the value alone owned (NULL only with a count of
/// 0), to memory C may free as the export documents, holding at least [`GivenToC::count`]
/// initialised `Pointee`s; and whatever C may follow from it is owned the same way.
pub unsafe trait GivenToC {
    type Pointee;
    /// How many elements C may read at the pointer.
    fn count(&self) -> usize;
    fn into_c(self) -> *mut Self::Pointee;
}

/// The alignment of every `malloc` block on the platforms ncfilters builds for: twice a pointer's
/// size (glibc's, musl's, macOS's and Windows' C runtimes give at least this).
const MALLOC_ALIGNMENT: usize = 2 * std::mem::size_of::<usize>();

/// Compiles only for a type a `malloc` block is aligned for, so a C-heap array or box of a more
/// aligned type is refused at build time (a post-monomorphization error):
///
/// ```compile_fail,E0080
/// #[derive(Clone, Copy)]
/// #[repr(align(64))]
/// struct Wide(u8);
/// let _ = ncfilters_runtime::c_heap::CArray::from_slice(&[Wide(0)]);
/// ```
///
/// ```compile_fail,E0080
/// #[repr(align(64))]
/// struct Wide(u8);
/// let _ = ncfilters_runtime::c_heap::CBox::new(Wide(0));
/// ```
struct MallocAligned<T>(std::marker::PhantomData<T>);

impl<T> MallocAligned<T> {
    const CHECKED: () =
        assert!(std::mem::align_of::<T>() <= MALLOC_ALIGNMENT, "a malloc block is not aligned for this type");
}

/// An owned C-heap array of `len` plain-data elements.
///
/// Dropping it frees the memory; [`CArray::into_raw`] hands ownership to C, which
/// must release it with `free()`. A zero-length array still owns a unique
/// non-NULL allocation, as glibc's `calloc(0, n)` does for netcdf-c.
pub struct CArray<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
}

impl<T: Copy> CArray<T> {
    /// `len` zeroed elements, which only a [`Zeroable`] type may be.
    pub fn zeroed(len: usize) -> NcResult<Self>
    where
        T: Zeroable,
    {
        Ok(CArray { ptr: Self::calloc(len)?, len })
    }

    /// A zeroed block for `len` elements; not yet valid `T`s unless `T` is [`Zeroable`].
    fn calloc(len: usize) -> NcResult<NonNull<T>> {
        let () = MallocAligned::<T>::CHECKED;
        let size = std::mem::size_of::<T>().max(1);
        // SAFETY: calloc has no preconditions; it checks len*size for overflow itself, and its
        // blocks are aligned for T (checked above).
        let raw = unsafe { libc::calloc(len.max(1), size) } as *mut T;
        NonNull::new(raw).ok_or(NC_ENOMEM)
    }

    pub fn from_slice(values: &[T]) -> NcResult<Self> {
        let ptr = Self::calloc(values.len())?;
        // SAFETY: the block has room for values.len() elements and is not the slice's memory;
        // copied through raw pointers, so no zeroed `T` is ever read or referenced.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), ptr.as_ptr(), values.len()) };
        Ok(CArray { ptr, len: values.len() })
    }

    /// Takes back ownership of memory from [`CArray::into_raw`] (NULL gives `None`).
    ///
    /// # Safety
    /// `ptr` is NULL or a C-heap array of `len` initialised elements owned by the caller.
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Option<Self> {
        NonNull::new(ptr).map(|ptr| CArray { ptr, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: ptr owns `len` initialised elements (copied, Zeroable zeros, or from_raw's).
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

// SAFETY: `into_raw` gives up the block of `len` initialised elements, which `CArray` alone
// owned; plain values hold no pointer for C to follow.
unsafe impl<T: PlainValue> GivenToC for CArray<T> {
    type Pointee = T;
    fn count(&self) -> usize {
        self.len
    }
    fn into_c(self) -> *mut T {
        self.into_raw()
    }
}

/// A NUL-terminated `malloc`'d string that C frees with `free()`: made only by [`c_string`], so
/// its last byte is always a NUL.
///
/// ```compile_fail,E0603
/// let forged = ncfilters_runtime::c_heap::CText(ncfilters_runtime::c_heap::CArray::from_slice(&[1i8]).unwrap());
/// ```
pub struct CText(CArray<std::os::raw::c_char>);

impl CText {
    /// Gives up ownership: C must `free()` the string.
    pub fn into_raw(self) -> *mut std::os::raw::c_char {
        self.0.into_raw()
    }
}

/// `text` as a NUL-terminated `malloc`'d string that C frees with `free()` (C reads it up to
/// its first NUL byte).
pub fn c_string(text: &[u8]) -> NcResult<CText> {
    let mut block = CArray::<std::os::raw::c_char>::zeroed(text.len() + 1)?;
    for (to, &byte) in block.as_mut_slice().iter_mut().zip(text) {
        *to = byte as std::os::raw::c_char;
    }
    Ok(CText(block))
}

/// `malloc`'d C strings, all freed when dropped unless handed to C: the directories of an
/// `NCPluginList`, whose vector and strings C frees with `free()`.
#[derive(Debug)]
pub struct CStrings(Vec<*mut std::os::raw::c_char>);

impl CStrings {
    /// Copies of `texts` (all or none: on failure the copies made so far are freed).
    pub fn copy_of<S: AsRef<[u8]>>(texts: &[S]) -> NcResult<Self> {
        let mut strings = CStrings(Vec::with_capacity(texts.len()));
        for text in texts {
            strings.0.push(c_string(text.as_ref())?.into_raw());
        }
        Ok(strings)
    }

    /// Takes over a list's strings and frees its vector, leaving the list empty.
    ///
    /// # Safety
    /// The list's vector is NULL or a `malloc`'d block of `ndirs` pointers, each NULL or a
    /// `malloc`'d string, all owned by the list.
    pub unsafe fn take_list(list: &mut NCPluginList) -> Self {
        let mut strings = Vec::new();
        if !list.dirs.is_null() {
            // SAFETY: the vector holds ndirs pointers per the contract.
            strings.extend_from_slice(unsafe { std::slice::from_raw_parts(list.dirs, list.ndirs) });
            // SAFETY: the vector is malloc'd; its strings now belong to `strings`.
            unsafe { libc::free(list.dirs.cast()) };
        }
        list.dirs = std::ptr::null_mut();
        list.ndirs = 0;
        CStrings(strings)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The strings, now C's to free.
    pub fn into_raw(mut self) -> Vec<*mut std::os::raw::c_char> {
        std::mem::take(&mut self.0)
    }
}

impl Drop for CStrings {
    fn drop(&mut self) {
        for &string in &self.0 {
            // SAFETY: each string is NULL or malloc'd and owned here (free(NULL) is a no-op).
            unsafe { libc::free(string.cast()) };
        }
    }
}

/// A C-heap parameter vector `(nparams, params)` as netcdf-c and the codec plugins exchange it:
/// `params` is `malloc`'d (NULL when empty), and plugins may `free` and replace it in place
/// (`NCZ_modify_parameters`, through [`CParams::raw_parts_mut`]).
#[derive(Debug)]
pub struct CParams {
    len: usize,
    ptr: *mut std::os::raw::c_uint,
}

impl CParams {
    pub const fn empty() -> Self {
        CParams { len: 0, ptr: std::ptr::null_mut() }
    }

    pub fn from_slice(values: &[u32]) -> NcResult<Self> {
        if values.is_empty() {
            return Ok(Self::empty());
        }
        Ok(CParams { len: values.len(), ptr: CArray::from_slice(values)?.into_raw() })
    }

    /// Takes ownership of a vector a plugin returned (`len` words at `ptr`, or NULL: none,
    /// whatever `len` says).
    ///
    /// # Safety
    /// `ptr` is NULL or a C-heap array of at least `len` initialised words owned by the caller.
    pub unsafe fn from_raw(ptr: *mut std::os::raw::c_uint, len: usize) -> Self {
        CParams { len: if ptr.is_null() { 0 } else { len }, ptr }
    }

    /// No count without a vector: what C is handed never pairs NULL with a count.
    fn normalised(&mut self) -> &mut Self {
        if self.ptr.is_null() {
            self.len = 0;
        }
        self
    }

    /// `(nparams, params)` as C passes them: NULL (and 0) when empty, as netcdf-c's plugins expect.
    pub fn as_raw(&self) -> (usize, *const std::os::raw::c_uint) {
        let values = self.as_slice();
        (values.len(), if values.is_empty() { std::ptr::null() } else { values.as_ptr() })
    }

    /// `(&nparams, &params)` for a C function that may free the vector and store another (a
    /// codec's `NCZ_modify_parameters`). Raw pointers: storing through them is `unsafe`, and
    /// whoever does must leave a C-heap vector of that many words (or NULL) for `Drop` to free.
    pub fn raw_parts_mut(&mut self) -> (*mut usize, *mut *mut std::os::raw::c_uint) {
        let this = self.normalised();
        (&mut this.len, &mut this.ptr)
    }

    /// Gives the vector to C, which frees it: `(nparams, params)`.
    pub fn into_raw(mut self) -> (usize, *mut std::os::raw::c_uint) {
        self.normalised();
        let out = (self.len, self.ptr);
        std::mem::forget(self);
        out
    }

    /// The parameters; empty when the pointer is NULL whatever `len` says.
    pub fn as_slice(&self) -> &[u32] {
        if self.ptr.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: a non-NULL ptr owns at least `len` initialised words (constructor contracts;
        // plugins that replace the pair keep it consistent, as netcdf-c requires of them).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for CParams {
    fn drop(&mut self) {
        // SAFETY: ptr is NULL or a C-heap allocation this value owns.
        unsafe { libc::free(self.ptr.cast()) }
    }
}

/// A chunk buffer on the C heap as the `H5Z_func_t` protocol passes it: the allocation, the
/// size the protocol reports for it (`*buf_size`) and the bytes in use. Filters free and replace
/// the allocation; dropping the value frees whatever it holds at that point.
#[derive(Debug)]
pub struct ChunkBuffer {
    ptr: *mut std::os::raw::c_void,
    buf_size: usize,
    used: usize,
}

impl ChunkBuffer {
    /// Takes ownership of a chunk C handed over (NULL: an empty buffer, whatever `used` says).
    ///
    /// # Safety
    /// `ptr` is NULL or a `malloc`'d block of at least `used` bytes that the caller gives up.
    pub unsafe fn from_raw(ptr: *mut std::os::raw::c_void, used: usize) -> Self {
        let used = if ptr.is_null() { 0 } else { used };
        ChunkBuffer { ptr, buf_size: used, used }
    }

    /// A copy of `len` bytes at `ptr` in a new block; the caller keeps its own.
    ///
    /// # Safety
    /// `ptr` is readable for `len` bytes (or `len` is 0).
    pub unsafe fn copy_of(ptr: *const std::os::raw::c_void, len: usize) -> NcResult<Self> {
        // SAFETY: malloc has no preconditions.
        let block = unsafe { libc::malloc(len.max(1)) };
        if block.is_null() {
            return Err(NC_ENOMEM);
        }
        if len > 0 {
            // SAFETY: ptr is readable for len bytes (contract), block writable for len; distinct blocks.
            unsafe { std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), block.cast::<u8>(), len) };
        }
        Ok(ChunkBuffer { ptr: block, buf_size: len.max(1), used: len })
    }

    /// A new block holding `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> NcResult<Self> {
        // SAFETY: a slice is readable for its length.
        unsafe { Self::copy_of(bytes.as_ptr().cast(), bytes.len()) }
    }

    /// The number of bytes in use.
    pub fn len(&self) -> usize {
        self.used
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// Runs `filter` on the block per the `H5Z_func_t` protocol: it gets the bytes in use, the
    /// block's size and the block, and may free the block and store another. Whatever block it
    /// leaves is this buffer's now. Its return value is the new number of bytes in use; a
    /// failure is 0, `(size_t)-1` (netcdf-c's C plugins' error value), a NULL block, or more
    /// bytes than the block it left holds (which HDF5 2.2 rejects too). A failure keeps the bytes
    /// in use if the filter left the block and its size as they were, else leaves none in use
    /// (a block replaced on failure holds nothing known, and may be smaller).
    ///
    /// # Safety
    /// `filter` leaves in `*buf` NULL or a `malloc`'d block of at least `*buf_size` bytes, the
    /// first `return value` of them initialised when it succeeds and that fits; a failing filter
    /// that leaves `*buf` and `*buf_size` as they were leaves the bytes in use too.
    pub unsafe fn filter_in_place(
        &mut self,
        filter: impl FnOnce(usize, *mut usize, *mut *mut std::os::raw::c_void) -> usize,
    ) -> Result<usize, String> {
        // Locals, not references to self, go to C.
        let (mut ptr, mut buf_size) = (self.ptr, self.buf_size);
        let used = filter(self.used, &mut buf_size, &mut ptr);
        if (ptr, buf_size) != (self.ptr, self.buf_size) {
            // Until it succeeds, nothing in a new (or resized) block is known to be initialised.
            self.used = 0;
        }
        self.ptr = ptr;
        self.buf_size = buf_size;
        if ptr.is_null() {
            // No block has no room: a later append must allocate, not write through NULL.
            self.used = 0;
            self.buf_size = 0;
            return Err("it left no block".into());
        }
        if used == 0 || used == usize::MAX {
            return Err("it returned failure".into());
        }
        if used > buf_size {
            return Err(format!("it returned {used} bytes, more than the {buf_size} of the block it left"));
        }
        self.used = used;
        Ok(used)
    }

    /// The bytes in use.
    pub fn bytes(&self) -> &[u8] {
        if self.ptr.is_null() || self.used == 0 {
            return &[];
        }
        // SAFETY: a non-NULL block holds at least `used` initialised bytes (the H5Z_func_t
        // protocol every filter that replaced it follows).
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.used) }
    }

    /// Gives the block back to C (which frees it): `(pointer, bytes in use)`.
    pub fn into_raw(self) -> (*mut std::os::raw::c_void, usize) {
        let out = (self.ptr, self.used);
        std::mem::forget(self);
        out
    }
}

// SAFETY: `into_raw` gives up the block, which the buffer alone owned, with the bytes in use,
// all initialised (NULL only with none: `from_raw` and `filter_in_place` see to it).
unsafe impl GivenToC for ChunkBuffer {
    type Pointee = std::os::raw::c_void;
    fn count(&self) -> usize {
        self.len()
    }
    fn into_c(self) -> *mut std::os::raw::c_void {
        self.into_raw().0
    }
}

impl From<CVec> for ChunkBuffer {
    /// A filter's output, as the chain's current block.
    fn from(out: CVec) -> Self {
        let (ptr, used, buf_size) = out.into_raw();
        ChunkBuffer { ptr, buf_size, used }
    }
}

impl Drop for ChunkBuffer {
    fn drop(&mut self) {
        // SAFETY: ptr is NULL or a C-heap block this value owns.
        unsafe { libc::free(self.ptr) }
    }
}

/// A Rust value in a C-heap block: what ncfilters stores in netcdf-c's lists (C keeps the
/// pointer, never frees it; ncfilters does, through [`CBox::from_raw`]).
#[derive(Debug)]
pub struct CBox<T> {
    ptr: NonNull<T>,
}

impl<T> CBox<T> {
    pub fn new(value: T) -> NcResult<Self> {
        let () = MallocAligned::<T>::CHECKED;
        let size = std::mem::size_of::<T>().max(1);
        // SAFETY: malloc has no preconditions; its blocks are aligned for T (checked above).
        let raw = unsafe { libc::malloc(size) } as *mut T;
        let ptr = NonNull::new(raw).ok_or(NC_ENOMEM)?;
        // SAFETY: fresh allocation of size_of::<T>() bytes, aligned for T.
        unsafe { ptr.as_ptr().write(value) };
        Ok(CBox { ptr })
    }

    pub fn into_raw(self) -> *mut T {
        let ptr = self.ptr.as_ptr();
        std::mem::forget(self);
        ptr
    }

    /// # Safety
    /// `ptr` is NULL or came from [`CBox::into_raw`] and is not owned by anyone else.
    pub unsafe fn from_raw(ptr: *mut T) -> Option<Self> {
        NonNull::new(ptr).map(|ptr| CBox { ptr })
    }
}

impl<T> std::ops::Deref for CBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: ptr holds an initialised T owned by this box.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> std::ops::DerefMut for CBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: ptr holds an initialised T owned by this box, borrowed uniquely.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T> Drop for CBox<T> {
    fn drop(&mut self) {
        // SAFETY: ptr holds an initialised T from malloc, owned by this box.
        unsafe {
            std::ptr::drop_in_place(self.ptr.as_ptr());
            libc::free(self.ptr.as_ptr().cast());
        }
    }
}

/// A growable byte buffer on the C heap (`malloc`/`realloc`), for filter output that C will
/// own: [`CVec::into_raw`] hands over a block C frees with `free()`. Bytes past `init` are
/// uninitialised; [`CVec::whole_mut`] zeroes them before handing out a `&mut [u8]`, while
/// writers that fill the buffer themselves (zstd, shuffle) take [`CVec::spare_uninit`] and skip
/// that cost.
#[derive(Debug)]
pub struct CVec {
    ptr: NonNull<u8>,
    len: usize,
    capacity: usize,
    /// The first `init` bytes are initialised (`len <= init <= capacity`).
    init: usize,
}

// SAFETY: CVec uniquely owns its block, like Vec<u8>.
unsafe impl Send for CVec {}

impl CVec {
    /// An empty buffer with `capacity` zeroed bytes reserved.
    pub fn with_capacity(capacity: usize) -> NcResult<Self> {
        // SAFETY: calloc has no preconditions (large blocks come zeroed from mmap, at no cost).
        let raw = unsafe { libc::calloc(capacity.max(1), 1) } as *mut u8;
        let capacity = capacity.max(1);
        Ok(CVec { ptr: NonNull::new(raw).ok_or(NC_ENOMEM)?, len: 0, capacity, init: capacity })
    }

    /// An empty buffer with `capacity` uninitialised bytes reserved (`malloc`: a block reused
    /// from the heap is not zeroed again, which is what a 4 MiB chunk's output costs otherwise).
    pub fn with_capacity_uninit(capacity: usize) -> NcResult<Self> {
        // SAFETY: malloc has no preconditions.
        let raw = unsafe { libc::malloc(capacity.max(1)) } as *mut u8;
        Ok(CVec { ptr: NonNull::new(raw).ok_or(NC_ENOMEM)?, len: 0, capacity: capacity.max(1), init: 0 })
    }

    /// The spare capacity past the used bytes, as possibly uninitialised bytes, for a writer
    /// that fills it. Safe code may de-initialise what it is handed, so those bytes count as
    /// uninitialised from here on: only [`CVec::assume_init_len`] marks them used again.
    pub fn spare_uninit(&mut self) -> &mut [std::mem::MaybeUninit<u8>] {
        self.init = self.len;
        // SAFETY: [len, capacity) lies inside the block and is borrowed only through `self`;
        // MaybeUninit makes no claim about the bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(self.len).cast(), self.capacity - self.len) }
    }

    /// Marks the first `len` bytes as written and used.
    ///
    /// # Safety
    /// The first `len` bytes (`len <= capacity`) have been initialised.
    pub unsafe fn assume_init_len(&mut self, len: usize) {
        assert!(len <= self.capacity, "CVec::assume_init_len beyond capacity");
        self.len = len;
        self.init = self.init.max(len);
    }

    pub fn from_slice(bytes: &[u8]) -> NcResult<Self> {
        let mut out = Self::with_capacity(bytes.len())?;
        out.spare()[..bytes.len()].copy_from_slice(bytes);
        out.set_len(bytes.len());
        Ok(out)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the first `init` bytes are initialised, len <= init.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The used bytes, for changing in place.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the first `init` bytes are initialised, len <= init, and the block is borrowed
        // only through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The whole block, used part and spare capacity, for writing in place.
    pub fn whole_mut(&mut self) -> &mut [u8] {
        if self.init < self.capacity {
            // SAFETY: [init, capacity) lies inside the block.
            unsafe { std::ptr::write_bytes(self.ptr.as_ptr().add(self.init), 0, self.capacity - self.init) };
            self.init = self.capacity;
        }
        // SAFETY: the block holds `capacity` initialised (zeroed or written) bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.capacity) }
    }

    /// At most `most` bytes of the spare capacity after the used part, zeroed where they were not
    /// yet initialised: the pages past them stay untouched (for a large block, never resident).
    pub fn spare_up_to(&mut self, most: usize) -> &mut [u8] {
        let end = self.len.saturating_add(most).min(self.capacity);
        if self.init < end {
            // SAFETY: [init, end) lies inside the block.
            unsafe { std::ptr::write_bytes(self.ptr.as_ptr().add(self.init), 0, end - self.init) };
            self.init = end;
        }
        // SAFETY: [len, end) lies inside the block, is initialised (above), and is borrowed only
        // through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(self.len), end - self.len) }
    }

    /// The spare capacity after the used part.
    pub fn spare(&mut self) -> &mut [u8] {
        let len = self.len;
        &mut self.whole_mut()[len..]
    }

    /// Marks the first `len` bytes as used (`len` must not exceed the capacity).
    pub fn set_len(&mut self, len: usize) {
        assert!(len <= self.init, "CVec::set_len beyond the initialised bytes");
        self.len = len;
    }

    /// Grows the capacity to at least `capacity` (the new space is uninitialised).
    pub fn reserve_total(&mut self, capacity: usize) -> NcResult<()> {
        if capacity <= self.capacity {
            return Ok(());
        }
        // SAFETY: ptr is our malloc'd block; realloc keeps its contents.
        let raw = unsafe { libc::realloc(self.ptr.as_ptr().cast(), capacity) } as *mut u8;
        self.ptr = NonNull::new(raw).ok_or(NC_ENOMEM)?;
        self.capacity = capacity;
        Ok(())
    }

    /// Gives back the capacity past the used bytes (left as it is when `realloc` cannot).
    pub fn shrink_to_fit(&mut self) {
        let size = self.len.max(1);
        if size >= self.capacity {
            return;
        }
        // SAFETY: ptr is our malloc'd block; realloc to a smaller size keeps its first `size` bytes.
        let raw = unsafe { libc::realloc(self.ptr.as_ptr().cast(), size) } as *mut u8;
        if let Some(ptr) = NonNull::new(raw) {
            self.ptr = ptr;
            self.capacity = size;
            self.init = self.init.min(size);
        }
    }

    /// Appends `bytes` after the used part, growing the block if needed.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) -> NcResult<()> {
        let end = self.len.checked_add(bytes.len()).ok_or(NC_ENOMEM)?;
        if end > self.capacity {
            self.reserve_total(end.max(self.capacity.saturating_mul(2)))?;
        }
        // SAFETY: [len, end) lies inside the block (grown above), and `bytes` is a live slice
        // that cannot overlap a block this buffer owns uniquely.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.as_ptr().add(self.len), bytes.len()) };
        self.init = self.init.max(end);
        self.len = end;
        Ok(())
    }

    /// Hands the block to C: `(pointer, bytes used, bytes allocated)`; C frees it with `free()`.
    pub fn into_raw(self) -> (*mut std::os::raw::c_void, usize, usize) {
        let out = (self.ptr.as_ptr().cast(), self.len, self.capacity);
        std::mem::forget(self);
        out
    }
}

// SAFETY: zstd writes at most `capacity()` bytes from `as_mut_ptr()` and reports how many it
// initialised through `filled_until`, which is what `assume_init_len` requires.
unsafe impl zstd::zstd_safe::WriteBuf for CVec {
    fn as_slice(&self) -> &[u8] {
        CVec::as_slice(self)
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: zstd initialised the first n bytes, per the trait's contract.
        unsafe { self.assume_init_len(n) }
    }
}

impl Drop for CVec {
    fn drop(&mut self) {
        // SAFETY: ptr is our malloc'd block.
        unsafe { libc::free(self.ptr.as_ptr().cast()) }
    }
}

#[cfg(test)]
mod tests {
    //! Run under Miri too (`cargo xtask miri`): its malloc/free model checks every ownership
    //! hand-over here, which valgrind sees only through whole netCDF programs.
    use super::*;

    /// Of a large block, only the room asked for is paged in: a decoder's buffer grown past its
    /// output costs no more resident memory than the output (a fresh block of 64 MiB is a mapping
    /// of its own under glibc, and untouched pages are not resident).
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[cfg_attr(miri, ignore)] // mincore
    fn spare_up_to_pages_in_only_the_room_asked_for() {
        let mut out = CVec::with_capacity_uninit(64 << 20).unwrap();
        out.extend_from_slice(&[1; 100]).unwrap();
        let room = out.spare_up_to(1 << 20);
        assert_eq!(room.len(), 1 << 20);
        assert!(room.iter().all(|&byte| byte == 0));
        let start = out.as_slice().as_ptr() as usize;
        let page = 4096;
        let resident = |from: usize, to: usize| {
            let first = (start + from) & !(page - 1);
            let pages = (start + to - first).div_ceil(page);
            let mut flags = vec![0u8; pages];
            // SAFETY: mincore reads the page tables of a range inside the block and writes one byte a page.
            assert_eq!(unsafe { libc::mincore(first as *mut libc::c_void, pages * page, flags.as_mut_ptr()) }, 0);
            flags.iter().filter(|&&flag| flag & 1 == 1).count()
        };
        assert!(resident(0, (1 << 20) + 100) > 200, "the room is paged in");
        assert_eq!(resident(2 << 20, 64 << 20), 0, "pages past the room stay untouched");
        assert_eq!(out.spare_up_to(usize::MAX).len(), (64 << 20) - 100, "capped at the capacity");
    }

    /// Frees a block as C would.
    fn c_free<T>(ptr: *mut T) {
        // SAFETY: every caller passes a block from malloc/calloc/realloc that nothing else owns.
        unsafe { libc::free(ptr.cast()) }
    }

    #[test]
    fn null_with_a_count_is_handed_on_as_nothing() {
        // SAFETY: NULL with any count meets both contracts.
        let (params, chunk) =
            unsafe { (CParams::from_raw(std::ptr::null_mut(), 5), ChunkBuffer::from_raw(std::ptr::null_mut(), 100)) };
        assert_eq!(params.into_raw(), (0, std::ptr::null_mut()));
        assert_eq!(chunk.len(), 0);
        assert_eq!(chunk.into_raw(), (std::ptr::null_mut(), 0));
        let mut params = CParams::empty();
        let (len, ptr) = params.raw_parts_mut();
        // SAFETY: both point into `params`, alive here; NULL and a count is what a bad codec leaves.
        unsafe { (len.write(7), ptr.write(std::ptr::null_mut())) };
        assert_eq!(params.into_raw(), (0, std::ptr::null_mut()));
    }

    #[test]
    fn carray_round_trips_through_c_and_zero_length_is_a_real_block() {
        let empty = CArray::<u32>::zeroed(0).unwrap();
        c_free(empty.into_raw());
        let mut array = CArray::from_slice(&[1u32, 2, 3]).unwrap();
        array.as_mut_slice()[1] = 20;
        let raw = array.into_raw();
        // SAFETY: raw came from into_raw with 3 elements.
        let mut back = unsafe { CArray::from_raw(raw, 3) }.unwrap();
        assert_eq!(back.as_mut_slice(), &[1, 20, 3]);
        // SAFETY: NULL is allowed and gives None.
        assert!(unsafe { CArray::<u32>::from_raw(std::ptr::null_mut(), 3) }.is_none());
    }

    #[test]
    fn cparams_are_null_when_empty_and_survive_a_plugin_replacing_them() {
        assert_eq!(CParams::empty().as_raw(), (0, std::ptr::null()));
        assert_eq!(CParams::from_slice(&[]).unwrap().as_raw().1, std::ptr::null());
        let mut params = CParams::from_slice(&[7, 8]).unwrap();
        assert_eq!(params.as_slice(), &[7, 8]);
        // What NCZ_modify_parameters may do: free the vector and put a longer one in its place.
        let (len, ptr) = params.raw_parts_mut();
        // SAFETY: len and ptr point into `params`; the old vector is freed once and replaced by
        // a C-heap vector of the length stored.
        unsafe {
            c_free(*ptr);
            *ptr = CArray::from_slice(&[1u32, 2, 3]).unwrap().into_raw();
            *len = 3;
        }
        assert_eq!(params.as_slice(), &[1, 2, 3]);
        let (len, ptr) = params.into_raw();
        // SAFETY: into_raw gave up the vector of `len` words.
        assert_eq!(unsafe { CParams::from_raw(ptr, len) }.as_slice(), &[1, 2, 3]);
        // A NULL vector reads as empty whatever its length says.
        // SAFETY: NULL with any length is the documented empty vector.
        assert!(unsafe { CParams::from_raw(std::ptr::null_mut(), 5) }.as_slice().is_empty());
    }

    #[test]
    fn chunk_buffers_copy_hand_over_and_take_back() {
        let chunk = ChunkBuffer::from_bytes(b"chunk").unwrap();
        assert_eq!((chunk.bytes(), chunk.len()), (&b"chunk"[..], 5));
        // SAFETY: a zero-length copy reads nothing.
        let empty = unsafe { ChunkBuffer::copy_of(std::ptr::null(), 0) }.unwrap();
        assert!(empty.bytes().is_empty() && empty.is_empty());
        let (ptr, used) = chunk.into_raw();
        // SAFETY: ptr is the malloc'd block of `used` bytes into_raw gave up.
        let mut back = unsafe { ChunkBuffer::from_raw(ptr, used) };
        // What a filter does: replace the block with a longer one and report its sizes.
        // SAFETY: the closure follows the H5Z_func_t protocol: realloc keeps the 5 bytes and
        // frees the old block (or leaves it on failure, which the assert catches).
        let used = unsafe {
            back.filter_in_place(|used, buf_size, buf| {
                let grown = libc::realloc(*buf, 64);
                assert!(!grown.is_null());
                grown.cast::<u8>().add(used).write(b'!');
                (*buf, *buf_size) = (grown, 64);
                used + 1
            })
        };
        assert_eq!((used, back.bytes()), (Ok(6), &b"chunk!"[..]));
        // A failing filter keeps the block and the length.
        // SAFETY: the closure leaves the block as it is.
        assert!(unsafe { back.filter_in_place(|_, _, _| usize::MAX) }.is_err());
        assert_eq!(back.bytes(), b"chunk!");
        // A result past the block it left is a failure, and the bytes in use stay within it.
        // SAFETY: the closure leaves the block as it is and claims more than it holds.
        let past = unsafe { back.filter_in_place(|_, buf_size, _| *buf_size + 1) };
        assert_eq!(past, Err("it returned 65 bytes, more than the 64 of the block it left".into()));
        assert_eq!(back.bytes(), b"chunk!");
    }

    /// The hole a failing filter that shrank the block left: the old bytes in use stayed, and
    /// `bytes()` read past the new block's end.
    #[test]
    fn a_failing_filter_that_replaces_the_block_leaves_no_bytes_past_it() {
        let mut chunk = ChunkBuffer::from_bytes(b"sixty-four bytes or so, far more than the one byte left").unwrap();
        // SAFETY: the closure frees the block and leaves a malloc'd 1-byte one of that size.
        let failed = unsafe {
            chunk.filter_in_place(|_, buf_size, buf| {
                libc::free(*buf);
                (*buf, *buf_size) = (libc::malloc(1), 1);
                assert!(!(*buf).is_null());
                usize::MAX
            })
        };
        assert_eq!(failed, Err("it returned failure".into()));
        // len() first: with the hole, bytes() itself would read past the block.
        assert!(chunk.len() <= 1, "{} bytes in use in a 1-byte block", chunk.len());
        assert!(chunk.bytes().len() <= 1);
    }

    /// A filter that frees the block and leaves NULL with a size: the buffer keeps no room, so
    /// a later filter's append (`FilterChunk::append`) allocates instead of writing to NULL.
    #[test]
    fn a_filter_that_leaves_no_block_leaves_no_room() {
        let mut chunk = ChunkBuffer::from_bytes(b"some bytes").unwrap();
        // SAFETY: the closure frees the block and leaves NULL, as the contract allows.
        let failed = unsafe {
            chunk.filter_in_place(|_, buf_size, buf| {
                libc::free(*buf);
                (*buf, *buf_size) = (std::ptr::null_mut(), 100);
                usize::MAX
            })
        };
        assert_eq!(failed, Err("it left no block".into()));
        assert_eq!((chunk.ptr.is_null(), chunk.buf_size, chunk.len()), (true, 0, 0));
    }

    #[test]
    fn cbox_runs_the_value_s_drop_and_frees_once() {
        struct CountsDrops(std::rc::Rc<std::cell::Cell<u32>>);
        impl Drop for CountsDrops {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let drops = std::rc::Rc::new(std::cell::Cell::new(0));
        let boxed = CBox::new(CountsDrops(drops.clone())).unwrap();
        let raw = boxed.into_raw();
        assert_eq!(drops.get(), 0, "into_raw hands the value over without dropping it");
        // SAFETY: raw came from into_raw and nothing else owns it.
        let back = unsafe { CBox::from_raw(raw) }.unwrap();
        assert!(std::rc::Rc::ptr_eq(&back.0, &drops));
        drop(back);
        assert_eq!(drops.get(), 1);
    }

    #[test]
    fn cvec_hands_out_only_initialised_bytes_and_keeps_them_when_growing() {
        let mut out = CVec::with_capacity_uninit(8).unwrap();
        assert!(out.is_empty() && out.capacity() == 8);
        out.whole_mut()[..3].copy_from_slice(b"abc");
        out.set_len(3);
        out.reserve_total(1024).unwrap();
        assert_eq!(out.as_slice(), b"abc");
        assert!(out.spare().iter().all(|&b| b == 0), "grown space is zeroed before it is handed out");
        let uninit = out.spare_uninit();
        assert_eq!(uninit.len(), 1024 - 3, "only the spare capacity, never the used bytes");
        uninit[0].write(b'd');
        // SAFETY: bytes 0..4 are written ("abc" above, 'd' just now).
        unsafe { out.assume_init_len(4) };
        assert_eq!(out.as_slice(), b"abcd");
        let (ptr, used, capacity) = out.into_raw();
        assert_eq!((used, capacity), (4, 1024));
        c_free(ptr);
        assert_eq!(CVec::from_slice(b"xyz").unwrap().as_slice(), b"xyz");
    }

    #[test]
    fn c_strings_are_freed_unless_handed_to_c() {
        // Dropped: Miri reports a leak if any of the three strings stays allocated.
        drop(CStrings::copy_of(&["/a", "", "/c"]).unwrap());
        // Handed to a list as C builds one, then taken back and freed with the vector.
        let strings = CStrings::copy_of(&[b"/x".as_slice(), b"/y"]).unwrap();
        let mut vector = CArray::<*mut std::os::raw::c_char>::zeroed(strings.len()).unwrap();
        vector.as_mut_slice().copy_from_slice(&strings.into_raw());
        let mut list = NCPluginList { ndirs: 2, dirs: vector.into_raw() };
        // SAFETY: the list owns its malloc'd vector and strings.
        let taken = unsafe { CStrings::take_list(&mut list) };
        assert_eq!((list.ndirs, list.dirs.is_null(), taken.len()), (0, true, 2));
        // SAFETY: the strings are live until `taken` is dropped.
        let second = unsafe { std::ffi::CStr::from_ptr(taken.0[1]) };
        assert_eq!(second.to_bytes(), b"/y");
        // An empty list gives nothing and stays empty.
        let mut empty = NCPluginList { ndirs: 0, dirs: std::ptr::null_mut() };
        // SAFETY: an empty list owns nothing.
        assert!(unsafe { CStrings::take_list(&mut empty) }.is_empty());
    }

    /// The hole `whole_uninit` had: it handed out the used bytes too, and safe code could
    /// de-initialise bytes that `set_len` then let `as_slice` read.
    #[test]
    fn bytes_handed_out_uninitialised_cannot_be_read_without_unsafe() {
        let mut out = CVec::with_capacity(8).unwrap();
        out.whole_mut()[..8].copy_from_slice(b"abcdefgh");
        out.set_len(3);
        for byte in out.spare_uninit() {
            *byte = std::mem::MaybeUninit::uninit();
        }
        assert_eq!(out.as_slice(), b"abc", "the used bytes are not handed out");
        let past_the_written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| out.set_len(8)));
        assert!(past_the_written.is_err(), "set_len must not cover bytes handed out as uninitialised");
        assert!(out.spare().iter().all(|&b| b == 0), "whole_mut zeroes them again before lending them");
    }

    #[test]
    fn cvec_shrinks_to_its_bytes_and_grows_again() {
        let mut out = CVec::with_capacity(1 << 16).unwrap();
        out.extend_from_slice(b"kept").unwrap();
        out.shrink_to_fit();
        assert_eq!((out.as_slice(), out.capacity()), (&b"kept"[..], 4));
        out.extend_from_slice(b" and more").unwrap();
        assert_eq!(out.as_slice(), b"kept and more");
        let mut empty = CVec::with_capacity_uninit(100).unwrap();
        empty.shrink_to_fit();
        assert!(empty.is_empty() && empty.capacity() == 1, "a real block, never a zero-size one");
        assert_eq!(empty.whole_mut(), &[0u8][..], "the byte left is zeroed before it is handed out");
    }

    #[test]
    #[should_panic(expected = "beyond the initialised bytes")]
    fn cvec_refuses_to_expose_uninitialised_bytes() {
        CVec::with_capacity_uninit(8).unwrap().set_len(1);
    }
}

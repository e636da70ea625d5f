// SPDX-License-Identifier: BSD-3-Clause
//! Typed handles of the exports' pointer arguments. Each pointer an export receives becomes a
//! handle once, through the handle's one audited [`FromRawArgument`] conversion, an `unsafe`
//! block at the export with its `SAFETY:` comment; the export's body then calls safe methods. The
//! contract a pointer must meet is the handle's (its docs), which the export's `# Safety` section
//! states for its callers.
//!
//! Making a handle is unsafe, so no macro or safe function may do it for a caller: it takes an
//! `unsafe` block, which code under `#![deny(unsafe_code)]` cannot have.
//!
//! ```compile_fail,E0133
//! use ncfilters_runtime::c_args::{with_call, FromRawArgument, Out};
//! use ncfilters_runtime::ffi_boundary::CallersThread;
//! with_call(unsafe { CallersThread::promise() }, |call| Out::<u32>::from_raw(call, std::ptr::null_mut()).write(1));
//! ```
//!
//! ```compile_fail,E0133
//! use ncfilters_runtime::c_args::{with_call, FromRawArgument, Text};
//! use ncfilters_runtime::ffi_boundary::CallersThread;
//! with_call(unsafe { CallersThread::promise() }, |call| {
//!     let _ = Text::from_raw(call, c"x".as_ptr());
//! });
//! ```
//!
//! Every handle borrows the [`Call`] it was made in, which lives only while the export's body
//! runs ([`ffi_export!`](crate::ffi_export!) gives each body a fresh one): no handle, nor anything
//! borrowed from one, outlives its call.
//!
//! ```compile_fail,E0521
//! use ncfilters_runtime::c_args::{with_call, FromRawArgument, Text};
//! use ncfilters_runtime::ffi_boundary::CallersThread;
//! let mut kept: Option<Text<'static>> = None;
//! with_call(unsafe { CallersThread::promise() }, |call| {
//!     // SAFETY: a NUL-terminated literal.
//!     kept = Some(unsafe { Text::from_raw(call, c"x".as_ptr()) });
//! });
//! ```
//!
//! ```compile_fail,E0521
//! use ncfilters_runtime::c_args::{with_call, FromRawArgument, Text};
//! use ncfilters_runtime::ffi_boundary::CallersThread;
//! let mut kept: Option<&'static [u8]> = None;
//! with_call(unsafe { CallersThread::promise() }, |call| {
//!     // SAFETY: a NUL-terminated literal.
//!     kept = unsafe { Text::from_raw(call, c"x".as_ptr()) }.0;
//! });
//! ```
//!
//! Nor may one move to another thread, as the C pointer behind it need not be shared:
//!
//! ```compile_fail,E0277
//! use ncfilters_runtime::c_args::{with_call, FromRawArgument, Text};
//! use ncfilters_runtime::ffi_boundary::CallersThread;
//! fn elsewhere<T: Send>(_: T) {}
//! with_call(unsafe { CallersThread::promise() }, |call| {
//!     // SAFETY: a NUL-terminated literal.
//!     elsewhere(unsafe { Text::from_raw(call, c"x".as_ptr()) });
//! });
//! ```
//!
//! ```compile_fail,E0277
//! use ncfilters_runtime::c_args::{with_call, FromRawArgument, Out};
//! use ncfilters_runtime::ffi_boundary::CallersThread;
//! fn shared<T: Sync>(_: &T) {}
//! with_call(unsafe { CallersThread::promise() }, |call| {
//!     // SAFETY: NULL is an optional out-pointer's "nothing".
//!     shared(&unsafe { Out::<u32>::from_raw(call, std::ptr::null_mut()) });
//! });
//! ```
//!
//! NULL follows netcdf-c: an optional out-pointer or out-vector may be NULL (nothing is written),
//! a text may be NULL (`None`); an export refuses a NULL it cannot take with
//! [`reject_null!`](crate::reject_null!) before converting.

use crate::c_heap::{c_string, CArray, CStrings, CText, ChunkBuffer, GivenToC, PlainValue};
use crate::c_types::NCPluginList;
use crate::error::{report, NcResult, NC_EINVAL};
use std::marker::PhantomData;
use std::os::raw::{c_char, c_uint, c_void};

pub use crate::ffi_boundary::{with_call, Call};

/// Marks a handle as not `Send` and not `Sync`: the C memory behind it is the calling thread's
/// for the call.
type ThisThread = PhantomData<*const ()>;

/// A handle made from an export's raw pointer argument(s) `Raw` in a [`Call`]: the handle
/// itself, or a result of it where a pointer can be refused (a variable that is not one, say).
pub trait FromRawArgument<'call, Raw>: Sized {
    type Output;
    /// # Safety
    /// `raw` meets the handle's contract (its type's docs) for the rest of `call`.
    unsafe fn from_raw(call: &Call<'call>, raw: Raw) -> Self::Output;
}

/// An optional out-pointer: NULL (nothing is written) or valid for a write of `T`.
#[derive(Debug)]
pub struct Out<'a, T> {
    target: *mut T,
    _borrow: PhantomData<&'a mut T>,
}

impl<'call, T> FromRawArgument<'call, *mut T> for Out<'call, T> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, target: *mut T) -> Self {
        Out { target, _borrow: PhantomData }
    }
}

impl<T> Out<'_, T> {
    pub fn is_null(&self) -> bool {
        self.target.is_null()
    }
}

impl<T: PlainValue> Out<'_, T> {
    /// Stores `value`, unless the pointer is NULL.
    pub fn write(&mut self, value: T) {
        if !self.target.is_null() {
            // SAFETY: non-NULL, and valid for a write of T per the handle's contract.
            unsafe { self.target.write(value) }
        }
    }
}

/// A pointer out-parameter takes only what C may own: safe code cannot store a pointer it
/// made up, nor one that something else still owns.
///
/// ```compile_fail,E0599
/// use ncfilters_runtime::c_args::{with_call, FromRawArgument, Out};
/// use ncfilters_runtime::ffi_boundary::CallersThread;
/// let mut slot: *mut u8 = std::ptr::null_mut();
/// with_call(unsafe { CallersThread::promise() }, |call| {
///     // SAFETY: `slot` is writable.
///     let mut out = unsafe { Out::<*mut u8>::from_raw(call, &mut slot) };
///     out.write(std::ptr::NonNull::dangling().as_ptr());
/// });
/// ```
impl<T> Out<'_, *mut T> {
    /// Stores NULL (nothing handed over), unless the pointer is NULL.
    pub fn write_null(&mut self) {
        // SAFETY: NULL owns nothing and leads nowhere.
        unsafe { self.write_raw(std::ptr::null_mut()) }
    }

    /// Stores `pointer`, unless the out-pointer is NULL.
    ///
    /// # Safety
    /// `pointer` is C's to hold as the export documents (one C owns, or one given up to it), and
    /// stays valid for as long as the export's contract says.
    pub unsafe fn write_raw(&mut self, pointer: *mut T) {
        if !self.target.is_null() {
            // SAFETY: non-NULL, and valid for a write of a pointer per the handle's contract.
            unsafe { self.target.write(pointer) }
        }
    }
}

impl Out<'_, *mut c_char> {
    /// Hands a NUL-terminated string to C, which frees it from now on; with a NULL out-pointer
    /// it is freed here.
    pub fn give_text(&mut self, text: CText) {
        if !self.is_null() {
            // SAFETY: a string only `text` owned, NUL-terminated, malloc'd (`CText`).
            unsafe { self.write_raw(text.into_raw()) }
        }
    }
}

/// netcdf-c's `(count, vector)` out-pair for a vector C takes over, each pointer NULL (nothing
/// written there) or valid for a write: the count and the vector are written together, so the
/// count is always the vector's ([`GivenToC`]).
#[derive(Debug)]
pub struct VectorOut<'a, T> {
    count: Out<'a, usize>,
    vector: Out<'a, *mut T>,
}

impl<'call, T> FromRawArgument<'call, (*mut usize, *mut *mut T)> for VectorOut<'call, T> {
    type Output = Self;

    unsafe fn from_raw(call: &Call<'call>, (count, vector): (*mut usize, *mut *mut T)) -> Self {
        // SAFETY: the handle's contract is each `Out`'s.
        unsafe { VectorOut { count: Out::from_raw(call, count), vector: Out::from_raw(call, vector) } }
    }
}

impl<T> VectorOut<'_, T> {
    /// Hands `owned` to C with its length; with a NULL vector pointer it is freed here.
    pub fn give<O: GivenToC<Pointee = T>>(mut self, owned: O) {
        self.count.write(owned.count());
        if !self.vector.is_null() {
            // SAFETY: a vector of that many elements that only `owned` held, given up to C
            // (`GivenToC`).
            unsafe { self.vector.write_raw(owned.into_c()) }
        }
    }

    /// Nothing handed over: 0 and NULL.
    pub fn give_none(mut self) {
        self.count.write(0);
        self.vector.write_null();
    }
}

/// A value the function reads and rewrites in place: NULL (nothing done) or valid for reads and
/// writes of `T`.
#[derive(Debug)]
pub struct InOut<'a, T>(Option<&'a mut T>, ThisThread);

impl<'call, T> FromRawArgument<'call, *mut T> for InOut<'call, T> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, value: *mut T) -> Self {
        // SAFETY: NULL or valid for reads and writes per the contract.
        InOut(unsafe { value.as_mut() }, PhantomData)
    }
}

impl<T: PlainValue> InOut<'_, T> {
    pub fn get(&mut self) -> Option<&mut T> {
        self.0.as_deref_mut()
    }
}

/// netcdf-c's `(count, vector)` answer: an optional count and an optional vector with room for
/// as many values as the function answers (the caller asked for the count first).
#[derive(Debug)]
pub struct CountedOut<'a, T> {
    count: Out<'a, usize>,
    values: *mut T,
}

impl<'call, T> FromRawArgument<'call, (*mut usize, *mut T)> for CountedOut<'call, T> {
    type Output = Self;

    unsafe fn from_raw(call: &Call<'call>, (count, values): (*mut usize, *mut T)) -> Self {
        // SAFETY: the count's part of this handle's contract.
        CountedOut { count: unsafe { Out::from_raw(call, count) }, values }
    }
}

impl<T> CountedOut<'_, T> {
    /// The two pointers as the caller gave them, for a C function with the same contract.
    pub fn as_raw_parts(&mut self) -> (*mut usize, *mut T) {
        (self.count.target, self.values)
    }
}

impl<T: Copy> CountedOut<'_, T> {
    /// Stores `values.len()` and copies `values`, each unless its pointer is NULL.
    ///
    /// # Safety
    /// `values` is the function's whole answer, the one the caller made room for: the handle
    /// does not know the vector's size, and a longer slice would write past it.
    pub unsafe fn write(&mut self, values: &[T]) {
        self.count.write(values.len());
        if !self.values.is_null() {
            // SAFETY: non-NULL, with room for every value of the answer per the contract.
            unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), self.values, values.len()) };
        }
    }
}

/// A text: NULL, or NUL-terminated and alive for `'a`.
#[derive(Debug)]
pub struct Text<'a>(pub Option<&'a [u8]>, ThisThread);

impl<'call> FromRawArgument<'call, *const c_char> for Text<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, text: *const c_char) -> Self {
        // SAFETY: NULL or NUL-terminated per the contract.
        Text(unsafe { crate::ffi_boundary::c_str_bytes(text) }, PhantomData)
    }
}

/// `(bytes, len)`: NULL, or readable for `len` bytes; the text ends at the first NUL within them.
#[derive(Debug)]
pub struct Bytes<'a>(pub Option<&'a [u8]>, ThisThread);

impl<'call> FromRawArgument<'call, (*const c_char, usize)> for Bytes<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, (bytes, len): (*const c_char, usize)) -> Self {
        if bytes.is_null() {
            return Bytes(None, PhantomData);
        }
        // SAFETY: non-NULL and readable for len bytes per the contract.
        Bytes(Some(unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), len) }), PhantomData)
    }
}

/// A NUL-terminated text read as bytes up to its NUL.
impl<'a> From<Text<'a>> for Bytes<'a> {
    fn from(text: Text<'a>) -> Self {
        Bytes(text.0, PhantomData)
    }
}

impl<'a> Bytes<'a> {
    /// The bytes before the first NUL (all of them without one; none for NULL).
    pub fn text(&self) -> &'a [u8] {
        self.0.unwrap_or_default().split(|&b| b == 0).next().unwrap_or_default()
    }
}

/// `(buffer, len)` to fill: writable for `len` bytes (NULL refused first by the export).
#[derive(Debug)]
pub struct OutBytes<'a> {
    buffer: *mut c_char,
    len: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'call> FromRawArgument<'call, (*mut c_char, usize)> for OutBytes<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, (buffer, len): (*mut c_char, usize)) -> Self {
        OutBytes { buffer, len, _borrow: PhantomData }
    }
}

impl OutBytes<'_> {
    /// Copies `text` as `strncpy` does: at most `len` bytes, NUL-padded, no NUL when it fills them.
    pub fn fill_nul_padded(&mut self, text: &[u8]) {
        if self.buffer.is_null() {
            return;
        }
        let copied = text.len().min(self.len);
        // SAFETY: writable for len bytes per the contract; copied <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), self.buffer.cast::<u8>(), copied);
            std::ptr::write_bytes(self.buffer.cast::<u8>().add(copied), 0, self.len - copied);
        }
    }
}

/// A filter's `(params, nparams)`: NULL (only with `nparams == 0`) or readable for `nparams` words;
/// converts to the words (`NC_EINVAL` for NULL with `nparams > 0`).
#[derive(Debug)]
pub struct Params<'a>(PhantomData<&'a [u32]>);

impl<'call> FromRawArgument<'call, (*const c_uint, usize)> for Params<'call> {
    type Output = NcResult<&'call [u32]>;

    unsafe fn from_raw(_: &Call<'call>, (params, nparams): (*const c_uint, usize)) -> NcResult<&'call [u32]> {
        // SAFETY: NULL or readable for nparams words per the contract.
        unsafe { crate::ffi_boundary::params_slice(params, nparams) }
    }
}

/// A caller's `NCPluginList`, to read: valid, its vector NULL or holding `ndirs` pointers, each
/// NULL or NUL-terminated (NULL refused first by the export).
#[derive(Debug)]
pub struct PluginList<'a>(&'a NCPluginList, ThisThread);

impl<'call> FromRawArgument<'call, *const NCPluginList> for PluginList<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, list: *const NCPluginList) -> Self {
        // SAFETY: valid per the contract (and non-NULL: refused before).
        PluginList(unsafe { &*list }, PhantomData)
    }
}

impl<'a> PluginList<'a> {
    /// Each directory's bytes, `None` for a NULL one; `NC_EINVAL` for a NULL vector with directories.
    fn entries(&self) -> NcResult<Vec<Option<&'a [u8]>>> {
        if self.0.ndirs == 0 {
            return Ok(Vec::new());
        }
        if self.0.dirs.is_null() {
            return Err(NC_EINVAL);
        }
        // SAFETY: the vector holds ndirs pointers, each NULL or NUL-terminated, per the contract.
        Ok((0..self.0.ndirs).map(|i| unsafe { crate::ffi_boundary::c_str_bytes(*self.0.dirs.add(i)) }).collect())
    }

    /// The directories (`NC_EINVAL`, reported as `function`'s, for a NULL vector with directories,
    /// a NULL directory or one that is not UTF-8).
    pub fn dirs(&self, function: &str) -> NcResult<Vec<String>> {
        let entries = self.entries().inspect_err(|_| {
            report(format_args!("{function}: {} directories but a NULL vector", self.0.ndirs));
        })?;
        entries
            .into_iter()
            .enumerate()
            .map(|(i, entry)| {
                let bytes = entry.ok_or_else(|| {
                    report(format_args!("{function}: directory {i} is NULL"));
                    NC_EINVAL
                })?;
                String::from_utf8(bytes.to_vec()).map_err(|_| {
                    report(format_args!(
                        "{function}: directory {i} ({:?}) is not UTF-8",
                        String::from_utf8_lossy(bytes)
                    ));
                    NC_EINVAL
                })
            })
            .collect()
    }

    /// The directories joined with `sep`, a NULL one as empty.
    pub fn joined(&self, sep: u8) -> NcResult<Vec<u8>> {
        Ok(self.entries()?.into_iter().map(Option::unwrap_or_default).collect::<Vec<_>>().join(&sep))
    }
}

/// A live value of the caller's the function may change: valid and writable for the call, not
/// touched elsewhere meanwhile (NULL refused first).
#[derive(Debug)]
pub struct Live<'a, T>(&'a mut T, ThisThread);

impl<'call, T> FromRawArgument<'call, *mut T> for Live<'call, T> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, value: *mut T) -> Self {
        // SAFETY: valid, writable and non-NULL per the contract.
        Live(unsafe { &mut *value }, PhantomData)
    }
}

impl<T> std::ops::Deref for Live<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0
    }
}

impl<T> Live<'_, T> {
    /// The value to change.
    ///
    /// # Safety
    /// What is stored in its fields is what C expects there: a pointer field holds NULL or what
    /// C and ncfilters keep in it.
    pub unsafe fn as_mut(&mut self) -> &mut T {
        self.0
    }
}

/// A caller's `NCPluginList` to store an answer into: valid and writable for the call, its vector
/// NULL (a new `malloc`'d one is made) or with room for the answer, the caller's own or `malloc`'d
/// (netcdf-c's tests pass a stack array). Nothing here frees it (NULL refused first).
#[derive(Debug)]
pub struct PluginListOut<'a>(&'a mut NCPluginList, ThisThread);

impl<'call> FromRawArgument<'call, *mut NCPluginList> for PluginListOut<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, list: *mut NCPluginList) -> Self {
        // SAFETY: valid, writable and non-NULL per the contract.
        PluginListOut(unsafe { &mut *list }, PhantomData)
    }
}

impl PluginListOut<'_> {
    /// Stores `dirs`: into a new vector when the list's is NULL, else into its own.
    ///
    /// # Safety
    /// `dirs` is the function's whole answer, the one the caller made room for in a non-NULL
    /// vector: the handle does not know the vector's size.
    pub unsafe fn store<S: AsRef<[u8]>>(&mut self, dirs: &[S]) -> NcResult<()> {
        let strings = CStrings::copy_of(dirs)?;
        if self.0.dirs.is_null() && !strings.is_empty() {
            self.0.dirs = CArray::<*mut c_char>::zeroed(strings.len())?.into_raw();
        }
        for (i, string) in strings.into_raw().into_iter().enumerate() {
            // SAFETY: a vector made above, or one with room for the answer per the caller.
            unsafe { self.0.dirs.add(i).write(string) };
        }
        self.0.ndirs = dirs.len();
        Ok(())
    }

    /// Says the list has no directories (its vector stays as it is).
    pub fn set_empty(&mut self) {
        self.0.ndirs = 0;
    }
}

/// A caller's `NCPluginList` that owns what it holds, to be emptied: NULL (`None`), or valid and
/// writable for the call, its vector NULL or `malloc`'d, holding `ndirs` pointers, each NULL or a
/// `malloc`'d string, all owned by the list (`ncaux_plugin_path_clear`'s). The list itself may be
/// on the stack (netcdf-c clears its own stack lists so): nothing frees it.
///
/// ```compile_fail,E0599
/// fn body(list: ncfilters_runtime::c_args::OwnedPluginList<'_>) {
///     list.free();
/// }
/// ```
#[derive(Debug)]
pub struct OwnedPluginList<'a>(&'a mut NCPluginList, ThisThread);

impl<'call> FromRawArgument<'call, *mut NCPluginList> for OwnedPluginList<'call> {
    type Output = Option<Self>;

    unsafe fn from_raw(_: &Call<'call>, list: *mut NCPluginList) -> Option<Self> {
        // SAFETY: NULL or valid and writable per the contract.
        Some(OwnedPluginList(unsafe { list.as_mut() }?, PhantomData))
    }
}

impl OwnedPluginList<'_> {
    /// Frees the directories and the vector, and empties the list.
    pub fn clear(&mut self) {
        // SAFETY: the list owns its malloc'd vector and strings per the contract.
        drop(unsafe { CStrings::take_list(self.0) });
    }
}

/// A caller's `NCPluginList` to grow: valid and writable for the call, its vector NULL or
/// `malloc`'d holding `ndirs` pointers; its strings stay the caller's, however they were made
/// (`ncaux_plugin_path_append`/`prepend`'s; NULL refused first). Nothing here frees a string.
///
/// ```compile_fail,E0599
/// fn body(mut list: ncfilters_runtime::c_args::GrowablePluginList<'_>) {
///     list.clear();
/// }
/// ```
#[derive(Debug)]
pub struct GrowablePluginList<'a>(&'a mut NCPluginList, ThisThread);

impl<'call> FromRawArgument<'call, *mut NCPluginList> for GrowablePluginList<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, list: *mut NCPluginList) -> Self {
        // SAFETY: valid, writable and non-NULL per the contract.
        GrowablePluginList(unsafe { &mut *list }, PhantomData)
    }
}

impl GrowablePluginList<'_> {
    /// Adds a copy of `dir`, at the end or (`front`) at the start, in a new vector; the old
    /// vector is freed, its strings moved over.
    pub fn insert(&mut self, dir: &[u8], front: bool) -> NcResult<()> {
        if self.0.ndirs > 0 && self.0.dirs.is_null() {
            return Err(NC_EINVAL);
        }
        let added = CStrings::copy_of(&[dir])?;
        let mut vector = CArray::<*mut c_char>::zeroed(self.0.ndirs + 1)?;
        let slots = vector.as_mut_slice();
        let (new_slot, old_slots) = if front { (0, 1..) } else { (self.0.ndirs, 0..) };
        for (slot, i) in old_slots.zip(0..self.0.ndirs) {
            // SAFETY: the old vector holds ndirs pointers.
            slots[slot] = unsafe { *self.0.dirs.add(i) };
        }
        slots[new_slot] = added.into_raw()[0];
        // SAFETY: the old vector is NULL or malloc'd per the contract; its strings moved to the
        // new one.
        unsafe { libc::free(self.0.dirs.cast()) };
        self.0.dirs = vector.into_raw();
        self.0.ndirs += 1;
        Ok(())
    }
}

/// A `malloc`'d `NCPluginList` the caller hands back to be freed, list and all (NULL: nothing
/// to free), its vector and strings as [`OwnedPluginList`]'s: `ncaux_plugin_path_reclaim`'s
/// only, whose C contract says the list is `malloc`'d (never one on the stack).
#[derive(Debug)]
pub struct MallocdPluginList<'a>(*mut NCPluginList, PhantomData<&'a mut NCPluginList>);

impl<'call> FromRawArgument<'call, *mut NCPluginList> for MallocdPluginList<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, list: *mut NCPluginList) -> Self {
        MallocdPluginList(list, PhantomData)
    }
}

impl MallocdPluginList<'_> {
    /// Frees the list's directories and vector and empties it (NULL: nothing to do).
    pub fn clear(&mut self) {
        // SAFETY: NULL or valid and writable per the contract.
        if let Some(list) = unsafe { self.0.as_mut() } {
            OwnedPluginList(list, PhantomData).clear();
        }
    }

    /// Frees the list itself (its contents first cleared by the caller).
    pub fn free(self) {
        // SAFETY: NULL or malloc'd per the contract (free(NULL) does nothing).
        unsafe { libc::free(self.0.cast()) };
    }
}

/// A new `malloc`'d C string for an out-pointer the caller frees.
pub fn out_string(out: &mut Out<'_, *mut c_char>, text: &[u8]) -> NcResult<()> {
    if !out.is_null() {
        out.give_text(c_string(text)?);
    }
    Ok(())
}

/// A chunk a caller hands to a filter chain: NULL (only with `len == 0`) or a `malloc`'d block of
/// `len` bytes, left unchanged while it is read. Whether the chain may take it over or free it
/// depends on the status the export returns (netcdf-c gives up an encoded chunk only on
/// success), so [`CallerChunk::take`] and [`CallerChunk::free`] are `unsafe`.
#[derive(Debug)]
pub struct CallerChunk<'a> {
    data: *mut c_void,
    len: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'call> FromRawArgument<'call, (*mut c_void, usize)> for CallerChunk<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, (data, len): (*mut c_void, usize)) -> Self {
        // NULL has no bytes, whatever length came with it (the caller rejects that pair).
        let len = if data.is_null() { 0 } else { len };
        CallerChunk { data, len, _borrow: PhantomData }
    }
}

impl CallerChunk<'_> {
    pub fn is_null(&self) -> bool {
        self.data.is_null()
    }

    /// The chunk's bytes (none for NULL), for reading while no one else runs on it.
    pub fn bytes(&self) -> &[u8] {
        if self.data.is_null() {
            return &[];
        }
        // SAFETY: a block of len bytes per the contract, unchanged while borrowed.
        unsafe { std::slice::from_raw_parts(self.data.cast::<u8>(), self.len) }
    }

    /// A copy in a block of ours; the caller's stays the caller's.
    pub fn copy(&self) -> NcResult<ChunkBuffer> {
        // SAFETY: NULL or a block of len bytes per the contract.
        unsafe { ChunkBuffer::copy_of(self.data, self.len) }
    }

    /// The block itself, now ours.
    ///
    /// # Safety
    /// The caller gives the block up under the status the export returns, or it is handed back
    /// to the caller unfreed.
    pub unsafe fn take(self) -> ChunkBuffer {
        // SAFETY: a malloc'd block of len bytes (the handle's contract) that the caller gives up
        // (this function's).
        unsafe { ChunkBuffer::from_raw(self.data, self.len) }
    }

    /// Hands the block back to the caller as it came, with its length: it stays the caller's.
    pub fn hand_back(self, out: VectorOut<'_, c_void>) {
        let VectorOut { mut count, mut vector } = out;
        count.write(self.len);
        // SAFETY: the caller's own block, unchanged, which it still owns.
        unsafe { vector.write_raw(self.data) }
    }

    /// Frees the block (after a chain has replaced it).
    ///
    /// # Safety
    /// The caller gives the block up under the status the export returns.
    pub unsafe fn free(self) {
        // SAFETY: NULL or malloc'd (the handle's contract), and given up (this function's);
        // free(NULL) does nothing.
        unsafe { libc::free(self.data) };
    }
}

/// The byte count an `H5Z_func_t` returns, which HDF5 trusts as the length of the block left in
/// `*buf` (for an optional filter, a 0 keeps the chunk's old length over whatever block is
/// there). Made only by [`FilterChunk`], together with the block it counts, or its failure with
/// the block as it came; or by `unsafe` code that vouches for it. It becomes a `size_t` only as
/// the export returns (`CReturn for usize`).
///
/// ```compile_fail,E0271
/// use ncfilters_runtime::ffi_boundary::CallersThread;
/// pub unsafe extern "C" fn lies(nbytes: usize) -> usize {
///     let thread = unsafe { CallersThread::promise() };
///     ncfilters_runtime::ffi_export!(thread, |_| nbytes.saturating_mul(1000))
/// }
/// ```
///
/// ```compile_fail,E0277
/// use ncfilters_runtime::ffi_boundary::CallersThread;
/// pub unsafe extern "C" fn lies(nbytes: usize) -> usize {
///     let thread = unsafe { CallersThread::promise() };
///     ncfilters_runtime::ffi_export!(caught "lies", thread, |_| nbytes.saturating_mul(1000))
/// }
/// ```
///
/// ```compile_fail,E0603
/// let lie = ncfilters_runtime::c_args::Committed(1000);
/// ```
#[derive(Debug, PartialEq, Eq)]
#[must_use = "the count must reach HDF5 with the block it counts"]
pub struct Committed(usize);

impl Committed {
    /// # Safety
    /// `count` is 0 with `*buf` and `*buf_size` as HDF5 gave them, or `*buf` is a block of
    /// `*buf_size` bytes holding the result's `count`: an `H5Z_func_t`'s answer for this same
    /// call, passed on.
    pub const unsafe fn from_raw(count: usize) -> Self {
        Committed(count)
    }

    /// The count, for the tests.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.0
    }
}

/// Only here does a [`Committed`] count become the `size_t` HDF5 reads.
impl crate::ffi_boundary::CReturn for usize {
    type Body = Committed;
    fn from_body(body: Committed) -> usize {
        body.0
    }
}

/// A panic: 0, the filter's failure.
impl crate::ffi_boundary::OnPanic for Committed {
    fn on_panic() -> Self {
        Committed(0)
    }
    const MEANING: &'static str = "the filter fails";
}

/// `H5Z_func_t`'s chunk, `(nbytes, buf_size, buf)`: both pointers valid (a NULL one: the call
/// can only fail), `*buf` a `malloc`'d block of `*buf_size` bytes holding the chunk's `nbytes`
/// (NULL only with `nbytes == 0`), which the filter may read, then replace or grow. Each way of
/// giving it up returns the [`Committed`] count of the block it leaves, so the count HDF5 is
/// given always matches that block.
#[derive(Debug)]
pub(crate) struct FilterChunk<'a> {
    nbytes: usize,
    buf_size: &'a mut usize,
    buf: &'a mut *mut c_void,
}

impl<'call> FromRawArgument<'call, (usize, *mut usize, *mut *mut c_void)> for FilterChunk<'call> {
    type Output = Result<Self, Committed>;

    unsafe fn from_raw(
        _: &Call<'call>,
        (nbytes, buf_size, buf): (usize, *mut usize, *mut *mut c_void),
    ) -> Result<Self, Committed> {
        // SAFETY: NULL or valid and writable per the contract.
        match unsafe { (buf_size.as_mut(), buf.as_mut()) } {
            (Some(buf_size), Some(buf)) => Ok(FilterChunk { nbytes, buf_size, buf }),
            // Nothing to leave but what C gave: the failure.
            _ => Err(Committed(0)),
        }
    }
}

impl<'a> FilterChunk<'a> {
    /// The chunk's byte count.
    pub(crate) fn nbytes(&self) -> usize {
        self.nbytes
    }

    /// The chunk's bytes; `None` for a NULL block with bytes in it.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match (self.buf.is_null(), self.nbytes) {
            (_, 0) => Some(&[]),
            (true, _) => None,
            // SAFETY: the block holds nbytes bytes per the contract, unchanged while borrowed.
            (false, n) => Some(unsafe { std::slice::from_raw_parts(self.buf.cast::<u8>(), n) }),
        }
    }

    /// The filter fails: the block stays as it came.
    pub(crate) fn fail(self) -> Committed {
        Committed(0)
    }

    /// The block's first `len` bytes are the result; the chunk back when `len` is 0 (the
    /// protocol's failure) or more than the chunk's bytes.
    pub(crate) fn shrink(self, len: usize) -> Result<Committed, Self> {
        if len == 0 || len > self.nbytes {
            return Err(self);
        }
        Ok(Committed(len))
    }

    /// Replaces the block with `out`, freeing the old one; the chunk back, unchanged, when `out`
    /// is empty (0 is the protocol's failure, which would keep the old length).
    pub(crate) fn replace(self, out: crate::c_heap::CVec) -> Result<Committed, Self> {
        if out.is_empty() {
            return Err(self);
        }
        let (ptr, len, capacity) = out.into_raw();
        // SAFETY: the old block is malloc'd and the filter's to free per the protocol.
        unsafe { libc::free(*self.buf) };
        *self.buf = ptr;
        *self.buf_size = capacity;
        Ok(Committed(len))
    }

    /// Writes `extra` after the chunk's bytes, growing the block with `realloc` when it has no
    /// room; the chunk back, with the block as it was, when that fails or the result would be
    /// empty. A grown block's size is its new length, even where realloc kept its address (HDF5
    /// 2.2 checks results against it).
    pub(crate) fn append(self, extra: &[u8]) -> Result<Committed, Self> {
        let Some(len) = self.nbytes.checked_add(extra.len()).filter(|&len| len > 0) else {
            return Err(self);
        };
        let needs_growing = self.buf.is_null() || *self.buf_size < len;
        let block = if needs_growing {
            // SAFETY: the block is malloc'd (or NULL) per the contract; realloc keeps its bytes.
            let grown = unsafe { libc::realloc(*self.buf, len) };
            if grown.is_null() {
                return Err(self);
            }
            *self.buf = grown;
            *self.buf_size = len;
            grown
        } else {
            *self.buf
        };
        // SAFETY: the block holds at least len bytes: the chunk's nbytes, then room for extra.
        unsafe { std::ptr::copy_nonoverlapping(extra.as_ptr(), block.cast::<u8>().add(self.nbytes), extra.len()) };
        Ok(Committed(len))
    }
}

/// A filter's parameter vector that netcdf-c owns and lets the callee replace,
/// `(count, vector)`: both valid (NULL refused first), the vector NULL or `malloc`'d holding
/// `*count` words (NCZarr's `NCZ_modify_parameters`).
#[derive(Debug)]
pub struct HeapParams<'a> {
    count: &'a mut usize,
    vector: &'a mut *mut c_uint,
}

impl<'call> FromRawArgument<'call, (*mut usize, *mut *mut c_uint)> for HeapParams<'call> {
    type Output = Self;

    unsafe fn from_raw(_: &Call<'call>, (count, vector): (*mut usize, *mut *mut c_uint)) -> Self {
        // SAFETY: valid, writable and non-NULL per the contract.
        unsafe { HeapParams { count: &mut *count, vector: &mut *vector } }
    }
}

impl HeapParams<'_> {
    /// The words (`NC_EINVAL` for a NULL vector with a count).
    pub fn words(&self) -> NcResult<&[u32]> {
        // SAFETY: NULL or holding *count words per the contract.
        unsafe { crate::ffi_boundary::params_slice(*self.vector, *self.count) }
    }

    /// Replaces the vector with `params`, freeing the old one.
    pub fn replace(&mut self, params: crate::c_heap::CParams) {
        // SAFETY: the old vector is malloc'd (or NULL) with *count words, the callee's to free.
        drop(unsafe { crate::c_heap::CParams::from_raw(*self.vector, *self.count) });
        (*self.count, *self.vector) = params.into_raw();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NCZ_applyfilterchain rejects NULL with a length only after the chunk is a handle: the
    /// handle never claims those bytes (its `take`, `copy` and `bytes` read none).
    #[test]
    fn a_null_chunk_has_no_bytes_whatever_its_length() {
        crate::ffi_boundary::tests::in_test_call(|call| {
            // SAFETY: NULL is never read, as this test checks.
            let chunk = unsafe { CallerChunk::from_raw(call, (std::ptr::null_mut(), 64)) };
            assert!(chunk.is_null());
            assert_eq!(chunk.bytes(), &[] as &[u8]);
            assert_eq!(chunk.copy().map(|copy| copy.len()), Ok(0));
            // SAFETY: NULL: nothing to give up.
            assert_eq!(unsafe { chunk.take() }.len(), 0);
        });
    }

    /// A vector goes to C with its own length, or is freed here when C gave no place for it;
    /// a caller's chunk goes back as it came.
    #[test]
    fn a_vector_out_writes_the_vector_and_its_length_together() {
        let (mut count, mut vector) = (usize::MAX, std::ptr::null_mut::<u32>());
        let mut block = [1u8, 2, 3];
        let (mut len, mut data) = (0usize, std::ptr::null_mut::<c_void>());
        crate::ffi_boundary::tests::in_test_call(|call| {
            // SAFETY: each pointer is a live local (or NULL), valid for the call.
            unsafe {
                VectorOut::from_raw(call, (&mut count as *mut usize, &mut vector as *mut *mut u32))
                    .give(CArray::from_slice(&[4u32, 5]).unwrap());
                assert_eq!((count, std::slice::from_raw_parts(vector, 2)), (2, &[4u32, 5][..]));
                libc::free(vector.cast());
                VectorOut::from_raw(call, (&mut count as *mut usize, std::ptr::null_mut::<*mut u32>()))
                    .give(CArray::from_slice(&[6u32, 7, 8]).unwrap());
                assert_eq!(count, 3, "the count, and the vector freed here (Miri sees a leak otherwise)");
                VectorOut::<u32>::from_raw(call, (&mut count as *mut usize, &mut vector as *mut *mut u32)).give_none();
                assert_eq!((count, vector), (0, std::ptr::null_mut()));
                let chunk = CallerChunk::from_raw(call, (block.as_mut_ptr().cast(), 3));
                chunk.hand_back(VectorOut::from_raw(call, (&mut len as *mut usize, &mut data as *mut *mut c_void)));
            }
        });
        assert_eq!((len, data), (3, block.as_mut_ptr().cast()));
    }

    #[test]
    fn handles_read_and_write_through_the_call_s_pointers() {
        let mut count = 0usize;
        let mut values = [0u32; 3];
        let mut fill = [b'x'; 4];
        let words = [7u32, 8];
        crate::ffi_boundary::tests::in_test_call(|call| {
            // SAFETY: each pointer is a live local, valid for the call, as each handle requires.
            unsafe {
                assert_eq!(Text::from_raw(call, c"abc".as_ptr()).0, Some(&b"abc"[..]));
                assert_eq!(Text::from_raw(call, std::ptr::null()).0, None);
                assert_eq!(Bytes::from_raw(call, (b"ab\0cd".as_ptr().cast(), 5)).text(), b"ab");
                assert_eq!(Params::from_raw(call, (words.as_ptr(), 2)), Ok(&words[..]));
                assert_eq!(Params::from_raw(call, (std::ptr::null(), 1)), Err(NC_EINVAL));
                Out::from_raw(call, &mut count as *mut usize).write(5);
                Out::<usize>::from_raw(call, std::ptr::null_mut()).write(6);
                CountedOut::from_raw(call, (&mut count as *mut usize, values.as_mut_ptr())).write(&[1, 2]);
                OutBytes::from_raw(call, (fill.as_mut_ptr().cast(), fill.len())).fill_nul_padded(b"ab");
            }
        });
        assert_eq!(count, 2);
        assert_eq!(values, [1, 2, 0]);
        assert_eq!(fill, [b'a', b'b', 0, 0]);
    }

    #[test]
    fn an_owned_list_grows_and_is_freed_and_a_caller_s_vector_is_only_filled() {
        let mut owned = NCPluginList { ndirs: 0, dirs: std::ptr::null_mut() };
        let mut slots = [std::ptr::null_mut::<c_char>(); 2];
        let mut callers = NCPluginList { ndirs: 0, dirs: slots.as_mut_ptr() };
        crate::ffi_boundary::tests::in_test_call(|call| {
            // SAFETY: `owned` starts empty and holds only what `insert` malloc'd; `callers` has
            // room for two directories.
            unsafe {
                let mut list = GrowablePluginList::from_raw(call, &mut owned);
                list.insert(b"/b", false).unwrap();
                list.insert(b"/a", true).unwrap();
                let read = PluginList::from_raw(call, &owned);
                assert_eq!(read.dirs("test").unwrap(), ["/a", "/b"]);
                PluginListOut::from_raw(call, &mut callers).store(&["/c", "/d"]).unwrap();
                assert_eq!(PluginList::from_raw(call, &callers).dirs("test").unwrap(), ["/c", "/d"]);
                OwnedPluginList::from_raw(call, &mut owned).expect("not NULL").clear();
                assert!(OwnedPluginList::from_raw(call, std::ptr::null_mut()).is_none());
            }
        });
        assert_eq!((owned.ndirs, owned.dirs), (0, std::ptr::null_mut()));
        assert!(std::ptr::eq(callers.dirs, slots.as_mut_ptr()), "the caller's vector stays");
        // SAFETY: `store` malloc'd both strings into the caller's vector.
        unsafe { slots.iter().for_each(|&dir| libc::free(dir.cast())) };
    }

    /// An `H5Z_func_t`'s body yields a [`Committed`] count, which C gets as it is; a panic, 0.
    #[test]
    fn a_committed_count_reaches_c_and_a_panic_is_0() {
        use crate::ffi_boundary::tests::test_thread;
        let count: usize = crate::ffi_export!(named "test", test_thread(), |_| -> Committed { panic!("deliberate") });
        assert_eq!(count, 0, "an H5Z_func_t's failure");
        // SAFETY: a count that reaches no C.
        let count: usize = crate::ffi_export!(named "test", test_thread(), |_| unsafe { Committed::from_raw(7) });
        assert_eq!(count, 7, "no panic, the body's count");
    }

    #[test]
    fn a_filter_chunk_is_read_then_grown_or_replaced_and_params_replaced() {
        let mut size = 4usize;
        let mut block = crate::c_heap::CArray::from_slice(&[1u8, 2, 3, 4]).unwrap().into_raw().cast::<c_void>();
        let mut count = 2usize;
        let mut vector = crate::c_heap::CParams::from_slice(&[7, 8]).unwrap().into_raw().1;
        crate::ffi_boundary::tests::in_test_call(|call| {
            // SAFETY: `block` is a malloc'd block of `size` bytes, `vector` malloc'd with `count`
            // words; the NULL ones are what the handles refuse.
            unsafe {
                let no_size = FilterChunk::from_raw(call, (4, std::ptr::null_mut(), &mut block));
                assert_eq!(no_size.err().map(|failed| failed.count()), Some(0));
                let mut null_block = std::ptr::null_mut();
                let empty = FilterChunk::from_raw(call, (4, &mut size, &mut null_block)).unwrap();
                assert_eq!(empty.bytes(), None, "a NULL block with bytes");
                assert_eq!(empty.fail().count(), 0);
                let chunk = FilterChunk::from_raw(call, (4, &mut size, &mut block)).unwrap();
                assert_eq!(chunk.bytes(), Some(&[1, 2, 3, 4][..]));
                let chunk = chunk.shrink(5).expect_err("longer than the chunk");
                let chunk = chunk.shrink(0).expect_err("0 is the failure");
                let chunk = chunk.replace(crate::c_heap::CVec::with_capacity_uninit(8).unwrap()).expect_err("empty");
                assert_eq!(chunk.shrink(4).ok().map(|kept| kept.count()), Some(4));
                let chunk = FilterChunk::from_raw(call, (4, &mut size, &mut block)).unwrap();
                assert_eq!(
                    chunk.append(&[5, 6]).ok().map(|grown| grown.count()),
                    Some(6),
                    "the count of the grown block"
                );
                let grown = FilterChunk::from_raw(call, (6, &mut size, &mut block)).unwrap();
                assert_eq!(grown.bytes(), Some(&[1, 2, 3, 4, 5, 6][..]));
                let mut out = crate::c_heap::CVec::with_capacity_uninit(3).unwrap();
                out.extend_from_slice(&[9, 9, 9]).unwrap();
                assert_eq!(grown.replace(out).ok().map(|replaced| replaced.count()), Some(3), "the new block's count");
                let mut params = HeapParams::from_raw(call, (&mut count, &mut vector));
                assert_eq!(params.words(), Ok(&[7, 8][..]));
                params.replace(crate::c_heap::CParams::from_slice(&[3]).unwrap());
                assert_eq!(params.words(), Ok(&[3][..]));
            }
        });
        assert_eq!(size, 3);
        assert_eq!(count, 1);
        // SAFETY: both were malloc'd by the handles above, and are freed once.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(block.cast::<u8>(), 3), [9, 9, 9]);
            libc::free(block);
            libc::free(vector.cast());
        }
    }
}

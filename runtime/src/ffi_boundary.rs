// SPDX-License-Identifier: BSD-3-Clause
//! The panic boundary and the pointer helpers of the C interfaces.

use crate::error::{report, status_code, NcResult, NC_EINTERNAL, NC_EINVAL};
use std::cell::Cell;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_uint};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// One call from C: the scope every handle of the call borrows. Neither `Send` nor `Sync`, and
/// made only by [`with_call`], for the length of a closure, from the call's [`CallersThread`].
pub struct Call<'call> {
    _scope: PhantomData<&'call ()>,
    _this_thread: PhantomData<*const ()>,
}

impl std::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Call")
    }
}

/// The promise a function called from C makes once, at its top: it runs on the thread that
/// called it, the thread that uses netcdf-c and HDF5 (neither is safe to call from two threads
/// at once), for no longer than that call. A [`Call`] is made of one, so safe code on another
/// thread (a spawned thread, a worker's piece of a chunk) can make no handle and reach no C.
/// Neither `Send` nor `Sync`; made only by the `unsafe` [`CallersThread::promise`].
///
/// ```compile_fail,E0133
/// #![deny(unsafe_op_in_unsafe_fn)]
/// let thread = ncfilters_runtime::ffi_boundary::CallersThread::promise();
/// ```
///
/// ```compile_fail,E0277
/// let thread = unsafe { ncfilters_runtime::ffi_boundary::CallersThread::promise() };
/// std::thread::spawn(move || drop(thread));
/// ```
pub struct CallersThread {
    _this_thread: PhantomData<*const ()>,
}

impl std::fmt::Debug for CallersThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallersThread")
    }
}

impl CallersThread {
    /// # Safety
    /// The caller is a function that C calls (an export, or a callback given to netcdf-c or
    /// HDF5), on the thread that called it, and the value is used up within that call.
    pub unsafe fn promise() -> CallersThread {
        CallersThread { _this_thread: PhantomData }
    }
}

/// Runs `body` with a fresh [`Call`] on `thread`: what each export's body gets from
/// [`ffi_export!`](crate::ffi_export!). The call's lifetime is `body`'s own, so neither a handle
/// nor anything borrowed from one can be kept after it returns.
pub fn with_call<R>(thread: CallersThread, body: impl for<'call> FnOnce(&Call<'call>) -> R) -> R {
    let CallersThread { _this_thread } = thread;
    let _scope = CallScope::enter();
    body(&Call { _scope: PhantomData, _this_thread })
}

thread_local! {
    /// How many calls from C run on this thread (a callback's call nests in an export's).
    static CALLS_ON_THIS_THREAD: Cell<usize> = const { Cell::new(0) };
}

/// Values a [`DropInCall`] could not drop where it was dropped, waiting for a call to end.
static DROPS_WAITING: Mutex<Vec<Box<dyn Send>>> = Mutex::new(Vec::new());
/// [`DROPS_WAITING`] is not empty: one load at the end of each call, no lock.
static ANY_DROP_WAITING: AtomicBool = AtomicBool::new(false);

/// A call from C running on this thread, for as long as it lives; at its end, the values that
/// wait for a call are dropped.
struct CallScope;

impl CallScope {
    fn enter() -> Self {
        CALLS_ON_THIS_THREAD.with(|calls| calls.set(calls.get() + 1));
        CallScope
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        // Not while unwinding: a drop that panicked then would abort the process.
        if ANY_DROP_WAITING.load(Ordering::Acquire) && !std::thread::panicking() {
            let waiting = {
                let mut waiting = DROPS_WAITING.lock().unwrap_or_else(PoisonError::into_inner);
                ANY_DROP_WAITING.store(false, Ordering::Release);
                std::mem::take(&mut *waiting)
            };
            // Each drop contained: a panic let out here would replace the export's result after
            // its effects were handed to C, and leave this thread counted as in a call.
            for value in waiting {
                contained("a drop at the end of a call", || drop(value));
            }
        }
        CALLS_ON_THIS_THREAD.with(|calls| calls.set(calls.get() - 1));
    }
}

/// Whether a call from C is running on this thread: false on a worker, a spawned thread, or C's
/// own thread between calls.
pub fn in_call() -> bool {
    CALLS_ON_THIS_THREAD.try_with(|calls| calls.get() > 0).unwrap_or(false)
}

/// A value whose drop runs code that may only run within a call from C, on C's thread: a plugin
/// library, whose unloading runs its finalisers, which may call HDF5 or netcdf-c. Dropped outside
/// a call (on a spawned thread, a worker, after the last call) it waits, and is dropped when the
/// next call on any thread ends; never, if none does. That call may be a callback within one of
/// netcdf-c's or HDF5's (a filter function within `H5Dwrite`): the drop must not assume that C is
/// between operations.
pub struct DropInCall<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> DropInCall<T> {
    pub fn new(value: T) -> Self {
        DropInCall(Some(value))
    }
}

impl<T: Send + 'static> std::ops::Deref for DropInCall<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // Some until dropped.
        self.0.as_ref().expect("a DropInCall's value is there until it is dropped")
    }
}

impl<T: Send + 'static> Drop for DropInCall<T> {
    fn drop(&mut self) {
        let Some(value) = self.0.take() else { return };
        if in_call() {
            drop(value);
        } else {
            let mut waiting = DROPS_WAITING.lock().unwrap_or_else(PoisonError::into_inner);
            waiting.push(Box::new(value));
            ANY_DROP_WAITING.store(true, Ordering::Release);
        }
    }
}

impl<T: Send + std::fmt::Debug + 'static> std::fmt::Debug for DropInCall<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What a function called from C returns when its body panics: every return type crossing the
/// boundary has one, so [`guarded`] is the only place where a panic is caught.
pub trait OnPanic {
    /// The value C gets instead.
    fn on_panic() -> Self;
    /// What the diagnostic says C gets.
    const MEANING: &'static str;
}

/// `int` statuses: netcdf-c's `NC_EINTERNAL`, negative, so HDF5 callbacks fail too.
impl OnPanic for c_int {
    fn on_panic() -> Self {
        NC_EINTERNAL.code()
    }
    const MEANING: &'static str = "returning NC_EINTERNAL";
}

/// `void` functions: nothing to return.
impl OnPanic for () {
    fn on_panic() -> Self {}
    const MEANING: &'static str = "ignored";
}

/// Rust results handed back across the boundary: `NC_EINTERNAL`.
impl<T> OnPanic for NcResult<T> {
    fn on_panic() -> Self {
        Err(NC_EINTERNAL)
    }
    const MEANING: &'static str = "returning NC_EINTERNAL";
}

/// Lookups whose failure is "none", of plain values only: an `Option` of a pointer, a reference
/// or a function would reach C unvouched for (pointers go through [`Returned`]).
impl<T: crate::c_heap::PlainValue> OnPanic for Option<T> {
    fn on_panic() -> Self {
        None
    }
    const MEANING: &'static str = "treated as not found";
}

/// Runs `work`, one piece of a call's work (on a pool worker or the calling thread), and says
/// whether it panicked. The panic is carried to the call, which fails at its own boundary, and
/// the worker thread lives on.
pub fn piece_panicked(work: impl FnOnce()) -> bool {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(()) => false,
        Err(payload) => {
            drop_payload(payload);
            true
        }
    }
}

/// Drops a caught panic's payload, and the payload of any panic that drop raises: a second
/// panic let out would escape the boundary, or leave a call (`worker_pool::run`) returning while
/// its workers still run the caller's closure. Payloads whose drops panic again and again are
/// leaked after a few rounds.
fn drop_payload(mut payload: Box<dyn std::any::Any + Send>) {
    for _ in 0..4 {
        match catch_unwind(AssertUnwindSafe(|| drop(payload))) {
            Ok(()) => return,
            Err(again) => payload = again,
        }
    }
    std::mem::forget(payload);
}

/// Runs `body`, a step of ncfilters' own inside a call or on a thread of its own, which must
/// come to an end even when it panics (a filter marked "computing" until a plugin's answer is
/// stored, a check around a lookup, a worker thread): the panic is reported as an internal error
/// in `what` and becomes the type's [`OnPanic`] value, and the caller goes on. `body` gets no
/// [`Call`]. Not for C entry points: those run in [`ffi_export!`](crate::ffi_export!).
pub fn contained<R: OnPanic>(what: &str, body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        drop_payload(payload);
        report(format_args!("internal error (panic) in {what}; {}", R::MEANING));
        R::on_panic()
    })
}

/// Runs `body` with a fresh [`Call`] on `thread`, turning a panic into `R::on_panic()` with a
/// diagnostic naming `function`, so that no unwind ever reaches C. Called through
/// [`ffi_export!`](crate::ffi_export!) only (`tests/layers.rs` checks).
#[doc(hidden)]
pub fn guarded<R: OnPanic>(
    function: &str,
    thread: CallersThread,
    body: impl for<'call> FnOnce(&Call<'call>) -> R,
) -> R {
    contained(function, || with_call(thread, body))
}

/// An export's C return type and what its body gives back: `int` statuses come from
/// [`NcResult`], pointers from [`Returned`], `H5Z_func_t` byte counts from `c_args::Committed`
/// (its impl is there, with the type).
pub trait CReturn {
    /// What the body of an export with this return type yields; a panic becomes its
    /// [`OnPanic`] value.
    type Body: OnPanic;
    /// The value C gets.
    fn from_body(body: Self::Body) -> Self;
}

impl CReturn for c_int {
    type Body = NcResult<()>;
    fn from_body(body: NcResult<()>) -> c_int {
        status_code(body)
    }
}

impl CReturn for () {
    type Body = ();
    fn from_body(_: ()) {}
}

/// A pointer an export returns to C, which reads it as the export documents: NULL, or made by
/// `unsafe` code that vouches for what C reads through it (a `'static` value of the type would not
/// do: C may read a string past it, or follow its pointer fields), never from a bare pointer.
///
/// ```compile_fail,E0271
/// use ncfilters_runtime::ffi_boundary::CallersThread;
/// use std::{os::raw::c_void, ptr::NonNull};
/// pub unsafe extern "C" fn info() -> *const c_void {
///     let thread = unsafe { CallersThread::promise() };
///     ncfilters_runtime::ffi_export!(thread, |_| NonNull::<c_void>::dangling().as_ptr().cast_const())
/// }
/// ```
///
/// Nor through the form that returns the body's value as it is, nor through [`contained`]: no
/// pointer, reference or function (bare or in an `Option`) has an [`OnPanic`] value.
///
/// ```compile_fail,E0277
/// use ncfilters_runtime::ffi_boundary::CallersThread;
/// use std::{os::raw::c_void, ptr::NonNull};
/// pub unsafe extern "C" fn info() -> *const c_void {
///     let thread = unsafe { CallersThread::promise() };
///     ncfilters_runtime::ffi_export!(caught "info", thread, |_| NonNull::<c_void>::dangling().as_ptr().cast_const())
/// }
/// ```
///
/// ```compile_fail,E0277
/// use std::{os::raw::c_void, ptr::NonNull};
/// pub extern "C" fn opt() -> Option<NonNull<c_void>> {
///     ncfilters_runtime::ffi_boundary::contained("opt", || Some(NonNull::dangling()))
/// }
/// ```
#[derive(Debug)]
pub struct Returned<T>(*const T);

impl<T> Returned<T> {
    /// C's "none".
    pub const fn null() -> Self {
        Returned(std::ptr::null())
    }

    /// # Safety
    /// `pointer` is NULL or points to what the export's C contract says, valid for as long as
    /// that contract says.
    pub const unsafe fn from_raw(pointer: *const T) -> Self {
        Returned(pointer)
    }
}

impl<T> CReturn for *const T {
    type Body = Returned<T>;
    fn from_body(body: Returned<T>) -> *const T {
        body.0
    }
}

/// Pointer results: NULL, the C way of saying "none".
impl<T> OnPanic for Returned<T> {
    fn on_panic() -> Self {
        Returned::null()
    }
    const MEANING: &'static str = "returning NULL";
}

/// What an export answers when a pointer argument it needs is NULL: its return type's documented
/// value (rustls-ffi's `NullParameterOrDefault`), given by [`reject_null!`](crate::reject_null!).
/// An export that answers otherwise because netcdf-c does is listed in `abi::null_arguments`.
pub trait OnNull {
    /// The value the export's body yields instead.
    fn on_null() -> Self;
}

/// `int` statuses: `NC_EINVAL`.
impl<T> OnNull for NcResult<T> {
    fn on_null() -> Self {
        Err(NC_EINVAL)
    }
}

/// `void` functions: nothing done.
impl OnNull for () {
    fn on_null() -> Self {}
}

/// Pointers: NULL.
impl<T> OnNull for Returned<T> {
    fn on_null() -> Self {
        Returned::null()
    }
}

/// Runs the body of a function called from C inside the panic boundary, named `function`: what
/// [`ffi_export!`](crate::ffi_export!) expands to.
#[doc(hidden)]
pub fn exported<R: CReturn>(
    function: &str,
    thread: CallersThread,
    body: impl for<'call> FnOnce(&Call<'call>) -> R::Body,
) -> R {
    R::from_body(guarded(function, thread, body))
}

/// The panic boundary: every function C calls runs its body through this macro, and nothing
/// else catches a panic but [`piece_panicked`], [`contained`] and, a layer below,
/// `error::write_stderr`, which drops a diagnostic's panic (`tests/layers.rs` checks). The body is
/// a closure of the call's [`Call`], which the pointer arguments' handles borrow
/// ([`crate::c_args`]), made of the function's [`CallersThread`] promise, `thread`. Its forms:
/// - `ffi_export!(thread, |call| { ... })`: an exported function's body, with the function's own
///   name in its diagnostics; the closure yields the return type's [`CReturn::Body`] (an
///   [`NcResult`] for `int`);
/// - `ffi_export!(named NAME, thread, |call| { ... })`: the same for a C entry point that is not
///   an exported Rust function and is named otherwise (a codec's `NCZ_codec_t` functions: `"zstd
///   NCZ_codec_to_hdf5"`);
/// - `ffi_export!(caught NAME, thread, |call| { ... })`: a body whose result is returned as it is,
///   a panic becoming its type's [`OnPanic`] value (an `H5Z_func_t`'s 0), for a callback's body.
///
/// Each C entry point begins with its promise, the one `unsafe` it needs for the boundary:
/// ```
/// # use std::os::raw::c_int;
/// # use ncfilters_runtime::{ffi_boundary::CallersThread, reject_null};
/// pub unsafe extern "C" fn example_count(count: *mut c_int) -> c_int {
///     // SAFETY: C calls this on the thread that uses netcdf-c, for this call.
///     let thread = unsafe { CallersThread::promise() };
///     ncfilters_runtime::ffi_export!(thread, |_call| {
///         reject_null!(count);
///         Ok(())
///     })
/// }
/// assert_eq!(unsafe { example_count(std::ptr::null_mut()) }, -36);
/// ```
#[macro_export]
macro_rules! ffi_export {
    (named $name:expr, $thread:expr, $body:expr) => {
        $crate::ffi_boundary::exported($name, $thread, $body)
    };
    (caught $name:expr, $thread:expr, $body:expr) => {
        $crate::ffi_boundary::guarded($name, $thread, $body)
    };
    ($thread:expr, $body:expr) => {
        $crate::ffi_boundary::exported($crate::function_name!(), $thread, $body)
    };
}

/// Inside an export's body: each named pointer argument must be non-NULL, else the body
/// reports which one and yields its return type's [`OnNull`] value (`NC_EINVAL` for `int`).
#[macro_export]
macro_rules! reject_null {
    ($($argument:ident),+ $(,)?) => {
        $(
            if $argument.is_null() {
                $crate::ffi_boundary::report_null($crate::function_name!(), stringify!($argument));
                return $crate::ffi_boundary::OnNull::on_null();
            }
        )+
    };
}

/// The diagnostic of [`reject_null!`](crate::reject_null!).
pub fn report_null(function: &str, argument: &str) {
    report(format_args!("{function}: argument `{argument}` is NULL"));
}

/// The name of the enclosing function, for diagnostics (what
/// [`ffi_export!`](crate::ffi_export!) names a function by) instead of a hand-typed string that
/// can drift from the code. Inside a closure it is still the function's name (the closures'
/// `{{closure}}` path segments are skipped).
#[macro_export]
macro_rules! function_name {
    () => {{
        fn here() {}
        $crate::ffi_boundary::enclosing_function(::std::any::type_name_of_val(&here))
    }};
}

/// The function's name in the type path of an item `here` defined in it (see
/// [`function_name!`]).
pub fn enclosing_function(path: &'static str) -> &'static str {
    let mut path = path.strip_suffix("::here").unwrap_or(path);
    while let Some(outer) = path.strip_suffix("::{{closure}}") {
        path = outer;
    }
    path.rsplit("::").next().unwrap_or(path)
}

/// The bytes of a NUL-terminated C string, or `None` for NULL.
///
/// # Safety
/// `text` is NULL or points to a NUL-terminated string that outlives `'a`.
pub unsafe fn c_str_bytes<'a>(text: *const c_char) -> Option<&'a [u8]> {
    if text.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated per this function's contract.
    Some(unsafe { CStr::from_ptr(text) }.to_bytes())
}

/// A filter's `(params, nparams)` as a slice (`NC_EINVAL` for NULL with `nparams > 0`).
///
/// # Safety
/// `params` is NULL or readable for `nparams` words for the returned lifetime.
pub unsafe fn params_slice<'a>(params: *const c_uint, nparams: usize) -> NcResult<&'a [u32]> {
    match (nparams, params.is_null()) {
        (0, _) => Ok(&[]),
        (_, true) => Err(NC_EINVAL),
        // SAFETY: non-NULL and readable for nparams words per the contract.
        _ => Ok(unsafe { std::slice::from_raw_parts(params, nparams) }),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::{check, NC_EFILTER, NC_NOERR};

    /// A unit test's thread stands for C's: these bodies reach no C.
    pub(crate) fn test_thread() -> CallersThread {
        // SAFETY: nothing else calls netcdf-c or HDF5 from a unit test of the boundary.
        unsafe { CallersThread::promise() }
    }

    /// `body` within a unit test's call ([`test_thread`]).
    pub(crate) fn in_test_call<R>(body: impl for<'call> FnOnce(&Call<'call>) -> R) -> R {
        with_call(test_thread(), body)
    }

    /// A value dropped on a thread with no call waits for a call to end, and is dropped there,
    /// on that call's thread; within a call it is dropped at once.
    #[test]
    fn a_value_dropped_outside_a_call_waits_for_one() {
        use std::sync::Arc;
        use std::thread::ThreadId;
        type Drops = Arc<Mutex<Vec<(ThreadId, bool)>>>;
        struct Recorder(Drops);
        impl Drop for Recorder {
            fn drop(&mut self) {
                self.0.lock().unwrap().push((std::thread::current().id(), in_call()));
            }
        }
        let drops: Drops = Arc::default();
        let value = DropInCall::new(Recorder(drops.clone()));
        let spawned = std::thread::spawn(move || drop(value));
        let spawned_id = spawned.thread().id();
        spawned.join().unwrap();
        // Another test's call, on another thread, may have ended since: it drops the value.
        in_test_call(|_| {});
        let seen = drops.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "dropped once, by the end of a call");
        assert_ne!(seen[0].0, spawned_id, "not on the thread with no call");
        assert!(seen[0].1, "within a call");

        in_test_call(|_| drop(DropInCall::new(Recorder(drops.clone()))));
        assert_eq!(drops.lock().unwrap()[1], (std::thread::current().id(), true), "at once, within the call");

        // A waiting value whose drop panics: the call still returns its own result, and this
        // thread is no longer counted as in a call afterwards.
        struct Panics;
        impl Drop for Panics {
            fn drop(&mut self) {
                panic!("drop panics");
            }
        }
        std::thread::spawn(|| drop(DropInCall::new(Panics))).join().unwrap();
        assert_eq!(in_test_call(|_| 7), 7);
        assert!(!in_call(), "the call ended");
    }

    #[test]
    fn function_name_is_the_enclosing_function() {
        assert_eq!(crate::function_name!(), "function_name_is_the_enclosing_function");
        let in_closure = || crate::function_name!();
        assert_eq!(in_closure(), "function_name_is_the_enclosing_function", "not {{{{closure}}}}");
        let nested = || {
            let inner = || crate::function_name!();
            inner()
        };
        assert_eq!(nested(), "function_name_is_the_enclosing_function");
        assert_eq!(super::enclosing_function("a::b::f::{{closure}}::{{closure}}::here"), "f");
    }

    #[test]
    fn a_panic_becomes_each_return_type_s_failure() {
        let status: c_int = crate::ffi_export!(named "test", test_thread(), |_| panic!("deliberate"));
        assert_eq!(status, NC_EINTERNAL.code());
        assert_eq!(crate::ffi_export!(caught "test", test_thread(), |_| -> Option<u8> { panic!("deliberate") }), None);
        assert_eq!(
            crate::ffi_export!(caught "test", test_thread(), |_| -> NcResult<u8> { panic!("deliberate") }),
            Err(NC_EINTERNAL)
        );
        let () = crate::ffi_export!(caught "test", test_thread(), |_| -> () { panic!("deliberate") });
        assert_eq!(
            crate::ffi_export!(caught "test", test_thread(), |_| Some(7u8)),
            Some(7),
            "no panic, the body's value"
        );
        assert_eq!(contained("test", || -> Option<u8> { panic!("deliberate") }), None);
        assert_eq!(contained("test", || Some(3u8)), Some(3));
    }

    /// A panic payload whose own drop panics: dropping it where the panic is caught would let a
    /// second panic out of the boundary, or out of `worker_pool::run` while its workers still
    /// run the caller's closure (worker_pool's tests).
    pub(crate) struct PanicsWhenDropped;

    impl Drop for PanicsWhenDropped {
        fn drop(&mut self) {
            panic!("deliberate, from a payload's drop");
        }
    }

    #[test]
    fn a_payload_whose_drop_panics_stays_inside() {
        let status: c_int =
            crate::ffi_export!(named "test", test_thread(), |_| std::panic::panic_any(PanicsWhenDropped));
        assert_eq!(status, NC_EINTERNAL.code());
        assert!(piece_panicked(|| std::panic::panic_any(PanicsWhenDropped)));
    }

    #[test]
    fn statuses_and_results_convert_both_ways() {
        let status: c_int = crate::ffi_export!(named "test", test_thread(), |_| Ok(()));
        assert_eq!(status, NC_NOERR);
        let status: c_int = crate::ffi_export!(named "test", test_thread(), |_| Err(NC_EFILTER));
        assert_eq!(status, NC_EFILTER.code());
        assert_eq!(check(NC_NOERR), Ok(()));
        assert_eq!(check(-132), Err(NC_EFILTER));
    }
}

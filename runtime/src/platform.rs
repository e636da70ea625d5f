// SPDX-License-Identifier: BSD-3-Clause
//! What differs between the platforms the shipped crates compile for, one implementation each:
//! unix (Linux and the other ELF systems, macOS) and Windows.
//!
//! - [`at_unload!`]: a function run when the library is unloaded or the process exits: ELF's
//!   `.fini_array`, Mach-O's `__mod_term_func`; none on Windows (see the macro).
//! - [`Thread`]: a joinable thread, a plain pthread on unix (see `worker_pool` for why not
//!   `std::thread`), a `std::thread` on Windows.
//! - [`address_space_limit`]: `RLIMIT_AS` on unix, none known elsewhere.
//! - [`open_plugin`], [`loaded_libzstd`], [`this_program`]: the dynamic loader.

use std::path::Path;

/// Has `$function` (an `extern "C" fn()`) run when this library is unloaded (`dlclose`) or the
/// process exits, through the static `$name`.
///
/// Windows has no hook: one would run in `DLL_PROCESS_DETACH` (a TLS callback or `DllMain`) under
/// the loader lock, where joining a thread deadlocks on `FreeLibrary` (an exiting thread takes
/// that lock) and at process exit the other threads are already gone. The workers then sleep
/// until the process ends, which ends them.
macro_rules! at_unload {
    ($name:ident = $function:path) => {
        #[cfg(all(not(windows), not(target_vendor = "apple")))]
        #[used]
        #[link_section = ".fini_array"]
        static $name: extern "C" fn() = $function;
        #[cfg(target_vendor = "apple")]
        #[used]
        #[link_section = "__DATA,__mod_term_func"]
        static $name: extern "C" fn() = $function;
        #[cfg(windows)]
        const _: extern "C" fn() = $function;
    };
}
pub(crate) use at_unload;

/// A thread's body.
type Main = Box<dyn FnOnce() + Send>;

/// A joinable thread, joined by [`Thread::join`] (else left running).
#[cfg(unix)]
pub struct Thread(libc::pthread_t);

#[cfg(unix)]
impl Thread {
    /// Starts a thread running `main`; `None` (and `main` dropped) when it cannot start.
    pub fn spawn(main: Main) -> Option<Thread> {
        extern "C" fn start(argument: *mut libc::c_void) -> *mut libc::c_void {
            // SAFETY: `spawn` passed one box from Box::into_raw, taken back once here.
            let main = unsafe { Box::from_raw(argument.cast::<Main>()) };
            main();
            std::ptr::null_mut()
        }
        let argument = Box::into_raw(Box::new(main)).cast::<libc::c_void>();
        let mut thread: libc::pthread_t = 0;
        // SAFETY: `thread` is writable; `start` takes over the box passed in `argument` and the
        // default attributes need no set-up.
        let code = unsafe { libc::pthread_create(&mut thread, std::ptr::null(), start, argument) };
        if code != 0 {
            // SAFETY: the thread did not start, so the box is still ours to release.
            drop(unsafe { Box::from_raw(argument.cast::<Main>()) });
            return None;
        }
        Some(Thread(thread))
    }

    /// Waits for the thread to return.
    pub fn join(self) {
        // SAFETY: the thread was started joinable by `spawn`, and `self` is consumed, so it is
        // joined once.
        unsafe { libc::pthread_join(self.0, std::ptr::null_mut()) };
    }
}

/// A joinable thread: a `std::thread` off unix, which no library unload needs to outlive
/// (Windows has no unload hook, see [`at_unload!`]).
#[cfg(not(unix))]
pub struct Thread(std::thread::JoinHandle<()>);

#[cfg(not(unix))]
impl Thread {
    /// Starts a thread running `main`; `None` (and `main` dropped) when it cannot start.
    pub fn spawn(main: Main) -> Option<Thread> {
        std::thread::Builder::new().spawn(main).ok().map(Thread)
    }

    /// Waits for the thread to return.
    pub fn join(self) {
        // A panic is caught inside `main` (the worker's ffi_export!), so there is none to pass on.
        let _ = self.0.join();
    }
}

/// The process's address-space limit (`RLIMIT_AS`, `ulimit -v`), if it has one.
#[cfg(unix)]
pub fn address_space_limit() -> Option<u64> {
    if cfg!(miri) {
        return None; // Miri runs no C
    }
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a writable rlimit; getrlimit only writes it.
    let status = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) };
    #[allow(clippy::useless_conversion, reason = "rlim_t is 32 bits wide on 32-bit targets")]
    (status == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then(|| u64::from(limit.rlim_cur))
}

/// No address-space limit is known here (Windows has none per process like `ulimit -v`).
#[cfg(not(unix))]
pub fn address_space_limit() -> Option<u64> {
    None
}

/// Opens a plugin library: `RTLD_LAZY | RTLD_GLOBAL` on unix, like netcdf-c's loader.
///
/// # Safety
/// Loading a library runs its initialisers: the caller trusts the library.
#[cfg(unix)]
pub unsafe fn open_plugin(path: &Path) -> Result<libloading::Library, libloading::Error> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_LAZY};
    // SAFETY: per the contract.
    unsafe { Library::open(Some(path), RTLD_LAZY | RTLD_GLOBAL) }.map(Into::into)
}

/// Opens a plugin library (`LoadLibraryExW`, no flags).
///
/// # Safety
/// Loading a library runs its initialisers: the caller trusts the library.
#[cfg(windows)]
pub unsafe fn open_plugin(path: &Path) -> Result<libloading::Library, libloading::Error> {
    // SAFETY: per the contract.
    unsafe { libloading::Library::new(path) }
}

/// libzstd's shared library as its packages name it: Linux' `libzstd.so.1`, macOS'
/// `libzstd.1.dylib`, MinGW's `libzstd.dll`.
pub const LIBZSTD: &str = if cfg!(windows) {
    "libzstd.dll"
} else if cfg!(target_vendor = "apple") {
    "libzstd.1.dylib"
} else {
    "libzstd.so.1"
};

/// The system libzstd if it is already loaded (a new reference to it), without loading it.
#[cfg(unix)]
pub fn loaded_libzstd() -> Option<libloading::Library> {
    // SAFETY: RTLD_NOLOAD only takes another reference to an object already loaded, so no
    // initialiser runs.
    let loaded = unsafe { libloading::os::unix::Library::open(Some(LIBZSTD), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    loaded.ok().map(Into::into)
}

/// The system libzstd if it is already loaded (a new reference to it), without loading it.
#[cfg(windows)]
pub fn loaded_libzstd() -> Option<libloading::Library> {
    libloading::os::windows::Library::open_already_loaded(LIBZSTD).ok().map(Into::into)
}

/// The program itself: on unix its global symbols, those of the libraries it linked included.
#[cfg(unix)]
pub fn this_program() -> Option<libloading::Library> {
    Some(libloading::os::unix::Library::this().into())
}

/// The program's own module (Windows has no global symbol scope).
#[cfg(windows)]
pub fn this_program() -> Option<libloading::Library> {
    libloading::os::windows::Library::this().ok().map(Into::into)
}

// SPDX-License-Identifier: BSD-3-Clause
//! The FFI side of the plugin registry: opening plugin libraries, reading their
//! `H5Z_class2_t` / `NCZ_codec_t` structs defensively, and calling their functions.
//! ncfilters' own codecs are a native kind of [`CodecPart`], called as Rust.
//!
//! Everything read from a library is validated before use (NULL pointers, struct version and
//! sort, id range, NUL-terminated names), so a bad library is reported and skipped rather than
//! dereferenced. Libraries are opened `RTLD_LAZY | RTLD_GLOBAL` like netcdf-c 4.9.0's loader,
//! because netcdf-c's C plugins resolve `strlcat`, `nc_inq_*` and `NCJ*` from the global scope.

use crate::c_heap::{CParams, ChunkBuffer};
use crate::c_types::{
    H5Z_can_apply_func_t, H5Z_class2_t, H5Z_func_t, H5Z_set_local_func_t, NCZ_codec_t, H5PL_TYPE_FILTER,
    H5Z_CLASS_T_VERS, H5Z_FLAG_REVERSE,
};
use crate::codecs::Codec;
use crate::error::{NcResult, NC_EFILTER};
use crate::ffi_boundary::{Call, DropInCall};
use crate::plugin_path::PluginDir;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

const NCZ_CODEC_CLASS_VER: c_int = 1;
const NCZ_CODEC_HDF5: c_int = 1;
/// Bound on a defaults library's NULL-terminated codec list.
const MAX_DEFAULT_CODECS: usize = 4096;

/// Keeps a plugin library mapped while any part taken from it is in use.
pub type KeepAlive = Arc<dyn std::any::Any + Send + Sync>;

/// The HDF5 half of a plugin: its filter id and function (a library's, or one of ncfilters' own
/// Rust functions with the same signature).
///
/// Its fields are private, as the safe [`FilterPart::apply`] calls them: only the loader and
/// the unsafe [`FilterPart::new`] make one.
///
/// ```compile_fail,E0133
/// use ncfilters_core::plugin_loader::FilterPart;
/// FilterPart::new(1, String::new(), None, None, None);
/// ```
///
/// A library's filter function may call HDF5 (`H5Epush`, say), so [`FilterPart::apply`] takes
/// the [`Call`]: a worker's piece of a chunk, or any other thread, cannot run it.
///
/// ```compile_fail,E0061
/// use ncfilters_core::c_heap::{CParams, ChunkBuffer};
/// fn apply_in_pieces(filter: &ncfilters_core::plugin_loader::FilterPart) {
///     let _ = ncfilters_core::worker_pool::run(2, &|_| {
///         let mut chunk = ChunkBuffer::from_bytes(b"chunk").unwrap();
///         let _ = filter.apply(true, &CParams::empty(), &mut chunk);
///     });
/// }
/// ```
#[derive(Debug, Clone)]
pub struct FilterPart {
    id: u32,
    name: String,
    /// Not NULL: a class without a filter function is skipped at loading.
    function: H5Z_func_t,
    /// The class's dataset-creation callbacks (used when the filter stands in for HDF5's).
    can_apply: H5Z_can_apply_func_t,
    set_local: H5Z_set_local_func_t,
    /// `ncfilters_set_decode_limit`, which ncfilters' own plugin libraries export: the chain's
    /// decode limit reaches their decoders through it.
    set_decode_limit: Option<SetDecodeLimit>,
    /// The library the functions are in, mapped while this part (or a clone) lives; `None` for
    /// functions of this process image.
    _library: Option<KeepAlive>,
}

/// `size_t ncfilters_set_decode_limit(size_t limit)`: sets the calling thread's decode limit in
/// the plugin library and returns the previous one.
pub type SetDecodeLimit = unsafe extern "C" fn(usize) -> usize;

/// The Zarr half of a plugin: the codec's functions.
///
/// A plugin's codec functions may call netcdf-c or HDF5, so every method that runs one takes the
/// [`Call`]: safe code on another thread, given a part, cannot run them (c-blosc's `blosc_init`,
/// say) while netcdf-c is in use.
///
/// ```compile_fail,E0061
/// fn initialise_elsewhere(codec: ncfilters_core::plugin_loader::CodecPart) {
///     std::thread::spawn(move || codec.ensure_initialized());
/// }
/// ```
#[derive(Debug, Clone)]
pub struct CodecPart {
    pub codec_id: String,
    pub hdf5_id: u32,
    functions: CodecFunctions,
    /// Shared by the clones of this part: whether `NCZ_codec_initialize` has run.
    init: Arc<InitState>,
    /// The library of a [`CodecFunctions::Library`], mapped while this part (or a clone) lives;
    /// `None` for functions of this process image.
    _library: Option<KeepAlive>,
}

/// A built-in codec's `NCZ_modify_parameters` as Rust: the working parameters of `visible` for
/// variable `(ncid, varid)`, within a call. Given by the caller of [`CodecPart::native`], which
/// can ask netcdf-c.
pub type WorkingParamsFn = fn(&Call<'_>, Codec, c_int, c_int, &[u32]) -> NcResult<Vec<u32>>;

/// A copy of a plugin library's `NCZ_codec_t`.
#[derive(Debug, Clone, Copy)]
struct LibraryCodec(NCZ_codec_t);

// SAFETY: its pointers are a loaded plugin library's static data and functions (or this process
// image's), which the `_library` of the CodecPart holding it keeps mapped, and nothing here writes
// through them. Sending the copy is sound; calling its functions is not, off the thread that uses
// netcdf-c (they may call it or HDF5): every CodecPart method that calls one takes a `Call`.
unsafe impl Send for LibraryCodec {}
// SAFETY: as above.
unsafe impl Sync for LibraryCodec {}

/// What runs a codec.
#[derive(Debug, Clone, Copy)]
enum CodecFunctions {
    /// A plugin library's `NCZ_codec_t`, copied: its functions have the one signature `c_types`
    /// gives them.
    Library(LibraryCodec),
    /// One of ncfilters' standard codecs, called directly (it has no initialiser or finaliser).
    Native { codec: Codec, working: WorkingParamsFn },
}

/// A codec's `NCZ_codec_initialize` runs once, the first time the codec is used, never at
/// discovery: an unused broken plugin then costs nothing, and `NCZ_codec_finalize` runs only
/// for codecs that were initialised.
#[derive(Debug, Default)]
struct InitState {
    /// 0 not run, 1 running, 2 done.
    state: AtomicU8,
    /// The thread running the initialiser ([`thread_number`]; 0 when none), so that a re-entrant
    /// use does not wait on itself.
    runner: AtomicUsize,
}

const INIT_NOT_RUN: u8 = 0;
const INIT_RUNNING: u8 = 1;
const INIT_DONE: u8 = 2;

/// A number for the calling thread, never 0 and unique among the threads alive: the address of a
/// thread-local (no 64-bit counter: armel has no 64-bit atomics). A thread that ended may leave
/// its number to a new one, so the initialiser clears `runner` when it is done.
fn thread_number() -> usize {
    thread_local! {
        static MARK: u8 = const { 0 };
    }
    MARK.with(|mark| std::ptr::from_ref(mark) as usize)
}

/// Why a library was skipped, with the filter id it was for when that could be read.
#[derive(Debug)]
pub struct LoadError {
    pub reason: String,
    pub id: Option<u32>,
}

impl From<String> for LoadError {
    fn from(reason: String) -> Self {
        LoadError { reason, id: None }
    }
}

impl From<&str> for LoadError {
    fn from(reason: &str) -> Self {
        LoadError { reason: reason.to_string(), id: None }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What a library offers.
#[derive(Debug)]
pub enum LibraryContents {
    /// `NCZ_codec_info_defaults`: codecs for HDF5-only plugins found elsewhere; one result per entry.
    Defaults(Vec<Result<CodecPart, LoadError>>),
    /// `H5PLget_plugin_type`/`H5PLget_plugin_info` and/or `NCZ_get_codec_info`.
    Plugin { filter: Option<FilterPart>, codec: Option<CodecPart> },
}

/// Opens a candidate library: `Ok(None)` when it has none of the plugin entry points,
/// `Err(reason)` when it is bad. The parts hold the library: it stays mapped while any lives.
///
/// # Safety
/// The library at `path` is trusted code: loading runs its initialisers, and the plugin entry
/// points it exports have the types the HDF5 and NCZarr plugin interfaces give their names.
///
/// ```compile_fail,E0133
/// let _ = ncfilters_core::plugin_loader::load(std::path::Path::new("libanything.so"));
/// ```
pub unsafe fn load(path: &Path) -> Result<Option<(KeepAlive, LibraryContents)>, LoadError> {
    // SAFETY: a trusted library (the caller's contract); the flags are netcdf-c's.
    let opened = unsafe { crate::platform::open_plugin(path) }.map_err(|e| format!("cannot be loaded: {e}"))?;
    // Unloading runs the library's finalisers, which are plugin code too: only within a call.
    let library = Arc::new(DropInCall::new(opened));
    let keep: KeepAlive = library.clone();
    let symbol = |name: &[u8]| -> Option<*const c_void> {
        // SAFETY: only the symbol's address is read; it is called later with the type the
        // plugin interface defines for that name.
        unsafe { library.get::<*const c_void>(name).ok().map(|s| *s) }.filter(|p| !p.is_null())
    };
    let get_type = symbol(b"H5PLget_plugin_type\0");
    let get_info = symbol(b"H5PLget_plugin_info\0");
    let get_codec = symbol(b"NCZ_get_codec_info\0");
    let get_defaults = symbol(b"NCZ_codec_info_defaults\0");
    let set_decode_limit = symbol(b"ncfilters_set_decode_limit\0").map(|address| {
        // SAFETY: ncfilters' plugin libraries define it as `size_t (size_t)` (export_plugin!).
        unsafe { std::mem::transmute::<*const c_void, SetDecodeLimit>(address) }
    });
    let contents = if let Some(get_defaults) = get_defaults {
        // SAFETY: NCZ_codec_info_defaults_proto: `const void* (void)`, of the library kept.
        LibraryContents::Defaults(unsafe { read_defaults(get_defaults, &keep) }?)
    } else {
        let filter = match (get_type, get_info) {
            (Some(get_type), Some(get_info)) => {
                // SAFETY: the H5PL prototypes: `H5PL_type_t (void)` and `const void* (void)`.
                let part = unsafe { read_filter(get_type, get_info) }?;
                Some(FilterPart { set_decode_limit, _library: Some(keep.clone()), ..part })
            }
            (None, None) => None,
            _ => return Err("exports only one of H5PLget_plugin_type and H5PLget_plugin_info".into()),
        };
        let codec = match get_codec {
            // SAFETY: NCZ_get_codec_info_proto: `const void* (void)`, of the library kept.
            Some(get_codec) => Some(unsafe { read_codec(call_info(get_codec), Some(&keep)) }?),
            None => None,
        };
        if filter.is_none() && codec.is_none() {
            return Ok(None);
        }
        LibraryContents::Plugin { filter, codec }
    };
    Ok(Some((keep, contents)))
}

/// A directory of the plugin path in force: the only kind of directory [`load_from_plugin_path`]
/// loads from. Made only from the plugin path itself ([`PluginPathDir::in_force`]), so no
/// crate-internal path reaches the loader.
#[derive(Debug, Clone)]
pub(crate) struct PluginPathDir(PluginDir);

impl PluginPathDir {
    /// The directories of the plugin path in force, its `HDF5_PLUGIN_PATH` and generation
    /// ([`crate::plugin_path::snapshot`]).
    pub(crate) fn in_force() -> (Vec<PluginPathDir>, Option<String>, u64) {
        let snapshot = crate::plugin_path::snapshot();
        (snapshot.dirs.into_iter().map(PluginPathDir).collect(), snapshot.plugin_path_env, snapshot.generation)
    }

    /// A directory a unit test trusts as it would a directory of the plugin path.
    #[cfg(test)]
    pub(crate) fn trusted_by_test(dir: PluginDir) -> Self {
        PluginPathDir(dir)
    }

    pub(crate) fn dir(&self) -> &PluginDir {
        &self.0
    }
}

/// [`load`] of the file `file_name` of a directory of the plugin path (the registry's discovery),
/// within a call from C: a library's initialisers and entry points are plugin code, which runs
/// only on the thread that uses netcdf-c and HDF5, as every other call into a plugin does. A name
/// that is not one file name (`..`, `a/b`, an absolute path) is refused, so nothing outside the
/// directory is loaded.
pub(crate) fn load_from_plugin_path(
    _call: &Call<'_>,
    dir: &PluginPathDir,
    file_name: &str,
) -> Result<Option<(KeepAlive, LibraryContents)>, LoadError> {
    let mut components = Path::new(file_name).components();
    if !matches!((components.next(), components.next()), (Some(Component::Normal(_)), None)) {
        return Err(format!("{file_name:?} is not the name of a file in {}", dir.0.dir).into());
    }
    let path = Path::new(&dir.0.dir).join(file_name);
    // SAFETY: libraries on the plugin path are trusted code, by HDF5's and netcdf-c's own rules:
    // the path comes from the environment or from an `unsafe` set whose caller vouches for it
    // (`crate::plugin_path`), `dir` is a directory of it and the name one file of it; and `_call`
    // puts this on netcdf-c's thread, within a call.
    unsafe { load(&path) }
}

/// Calls a `const void* (void)` entry point.
///
/// # Safety
/// `function` is such a function.
unsafe fn call_info(function: *const c_void) -> *const c_void {
    // SAFETY: per the contract, the address is a `const void* (void)` C function.
    let function: unsafe extern "C" fn() -> *const c_void = unsafe { std::mem::transmute(function) };
    // SAFETY: no arguments; the plugin interface defines it as side-effect free.
    unsafe { function() }
}

/// A NUL-terminated name, or `None` for NULL / non-UTF-8 / empty.
///
/// # Safety
/// `text` is NULL or NUL-terminated.
unsafe fn name_of(text: *const c_char) -> Option<String> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { crate::ffi_boundary::c_str_bytes(text) }?;
    std::str::from_utf8(bytes).ok().filter(|s| !s.is_empty()).map(str::to_string)
}

/// # Safety
/// The arguments are the library's `H5PLget_plugin_type` and `H5PLget_plugin_info`.
unsafe fn read_filter(get_type: *const c_void, get_info: *const c_void) -> Result<FilterPart, LoadError> {
    // SAFETY: H5PLget_plugin_type returns an int-sized enum; read as c_int so any value is valid.
    let get_type: unsafe extern "C" fn() -> c_int = unsafe { std::mem::transmute(get_type) };
    // SAFETY: no arguments.
    let kind = unsafe { get_type() };
    if kind != H5PL_TYPE_FILTER {
        return Err(format!("H5PLget_plugin_type returned {kind}, not H5PL_TYPE_FILTER").into());
    }
    // SAFETY: forwarded contract.
    let info = unsafe { call_info(get_info) } as *const H5Z_class2_t;
    if info.is_null() || !info.is_aligned() {
        return Err("H5PLget_plugin_info returned NULL or a misaligned pointer".into());
    }
    // The version comes first and tells the struct's size (an H5Z_class1_t is shorter): read
    // only it before referencing the whole struct.
    // SAFETY: non-NULL and aligned; every H5Z class begins with at least an int.
    let version = unsafe { std::ptr::read(info.cast::<c_int>()) };
    if version != H5Z_CLASS_T_VERS {
        return Err(format!("H5Z_class2_t version {version} (expected {H5Z_CLASS_T_VERS})").into());
    }
    // SAFETY: non-NULL, aligned, version 1: a plugin's static H5Z_class2_t.
    filter_part(unsafe { &*info })
}

/// The filter part of a version-1 `H5Z_class2_t`.
fn filter_part(class: &H5Z_class2_t) -> Result<FilterPart, LoadError> {
    let id = u32::try_from(class.id).map_err(|_| format!("negative filter id {}", class.id))?;
    let function = class
        .filter
        .ok_or_else(|| LoadError { reason: format!("filter {id} has a NULL filter function"), id: Some(id) })?;
    // SAFETY: the class name is NULL or a NUL-terminated string.
    let name = unsafe { name_of(class.name) }.unwrap_or_default();
    Ok(FilterPart {
        id,
        name,
        function: Some(function),
        can_apply: class.can_apply,
        set_local: class.set_local,
        set_decode_limit: None,
        _library: None,
    })
}

/// # Safety
/// `info` is NULL or what `NCZ_get_codec_info` (or a defaults list) of `library` returned
/// (`None`: of this process image).
unsafe fn read_codec(info: *const c_void, library: Option<&KeepAlive>) -> Result<CodecPart, LoadError> {
    let info = info as *const NCZ_codec_t;
    if info.is_null() || !info.is_aligned() {
        return Err("codec info is NULL or misaligned".into());
    }
    // As for the filter class: the leading version says whether the rest is there.
    // SAFETY: non-NULL and aligned; an NCZ_codec_t of any version begins with an int.
    let version = unsafe { std::ptr::read(info.cast::<c_int>()) };
    if version != NCZ_CODEC_CLASS_VER {
        return Err(format!("NCZ_codec_t version {version} (expected {NCZ_CODEC_CLASS_VER})").into());
    }
    // SAFETY: non-NULL, aligned, version 1: a plugin's static NCZ_codec_t.
    let codec = unsafe { &*info };
    let id = Some(codec.hdf5id);
    if codec.sort != NCZ_CODEC_HDF5 {
        return Err(LoadError { reason: format!("NCZ_codec_t sort {} (expected NCZ_CODEC_HDF5)", codec.sort), id });
    }
    // SAFETY: codecid is NULL or NUL-terminated.
    let codec_id = unsafe { name_of(codec.codecid) }
        .ok_or_else(|| LoadError { reason: "codec has a NULL, empty or non-UTF-8 id".into(), id })?;
    let functions = CodecFunctions::Library(LibraryCodec(*codec));
    let (init, library) = (init_state_of(info as usize), library.cloned());
    Ok(CodecPart { codec_id, hdf5_id: codec.hdf5id, functions, init, _library: library })
}

/// The [`InitState`] of the library codec whose `NCZ_codec_t` is at `address`: shared by every
/// part read from it while one is alive, so that a new discovery (after `nc_plugin_path_set`)
/// of a library still loaded neither initialises nor finalises its codec a second time. Once no
/// part is left, its library may have been unloaded and loaded anew: that one starts afresh.
fn init_state_of(address: usize) -> Arc<InitState> {
    static STATES: Mutex<Vec<(usize, Weak<InitState>)>> = Mutex::new(Vec::new());
    let mut states = STATES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    states.retain(|(_, state)| state.strong_count() > 0);
    if let Some(state) = states.iter().filter(|(at, _)| *at == address).find_map(|(_, state)| state.upgrade()) {
        return state;
    }
    let state = Arc::<InitState>::default();
    states.push((address, Arc::downgrade(&state)));
    state
}

/// # Safety
/// `get_defaults` is `library`'s `NCZ_codec_info_defaults`.
unsafe fn read_defaults(
    get_defaults: *const c_void,
    library: &KeepAlive,
) -> Result<Vec<Result<CodecPart, LoadError>>, LoadError> {
    // SAFETY: forwarded contract.
    let list = unsafe { call_info(get_defaults) } as *const *const c_void;
    if list.is_null() || !list.is_aligned() {
        return Err("NCZ_codec_info_defaults returned NULL or a misaligned pointer".into());
    }
    let mut entries = Vec::new();
    for index in 0..MAX_DEFAULT_CODECS {
        // SAFETY: the list is NULL-terminated; reading stops at the terminator (or the bound).
        let entry = unsafe { *list.add(index) };
        if entry.is_null() {
            return Ok(entries);
        }
        // SAFETY: a non-NULL entry points to an NCZ_codec_t of the library.
        entries.push(unsafe { read_codec(entry, Some(library)) });
    }
    Err(format!("NCZ_codec_info_defaults list has no NULL terminator within {MAX_DEFAULT_CODECS} entries").into())
}

impl FilterPart {
    /// A filter part of functions in this process image.
    ///
    /// # Safety
    /// The functions are NULL or follow the `H5Z_class2_t` contract for filter `id`, and stay
    /// callable for the process: [`FilterPart::apply`], safe, calls `function`.
    pub unsafe fn new(
        id: u32,
        name: String,
        function: H5Z_func_t,
        can_apply: H5Z_can_apply_func_t,
        set_local: H5Z_set_local_func_t,
    ) -> Self {
        FilterPart { id, name, function, can_apply, set_local, set_decode_limit: None, _library: None }
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// The class's name (empty when it has none).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn function(&self) -> H5Z_func_t {
        self.function
    }

    pub fn can_apply(&self) -> H5Z_can_apply_func_t {
        self.can_apply
    }

    pub fn set_local(&self) -> H5Z_set_local_func_t {
        self.set_local
    }

    /// Runs the filter on `buffer` per the `H5Z_func_t` protocol: the filter may free the
    /// block and store a new one; `buffer` follows it. A return of 0 or `(size_t)-1` (the
    /// `HGOTO_ERROR` value of netcdf-c's plugins) is a failure.
    pub fn apply(&self, _: &Call<'_>, reverse: bool, params: &CParams, buffer: &mut ChunkBuffer) -> Result<(), String> {
        let Some(function) = self.function else {
            return Err(format!("filter {} ({}) has a NULL filter function", self.id, self.name));
        };
        let flags = if reverse { H5Z_FLAG_REVERSE } else { 0 };
        let (count, values) = params.as_raw();
        // The library's own copy of the limit takes this thread's for a decode, and gets its
        // previous value back after.
        // SAFETY: the library's ncfilters_set_decode_limit, held loaded with the part.
        let restore =
            self.set_decode_limit.filter(|_| reverse).map(|set| (set, unsafe { set(crate::filters::decode_limit()) }));
        // SAFETY: the buffer hands its malloc'd block of at least `used` bytes; params are NULL
        // or readable for `count` words; the filter follows the H5Z_func_t contract.
        let used = unsafe {
            buffer.filter_in_place(|used, buf_size, buf| function(flags, count, values, used, buf_size, buf))
        };
        if let Some((set, previous)) = restore {
            // SAFETY: as above.
            unsafe { set(previous) };
        }
        used.map(|_| ()).map_err(|why| {
            format!("filter {} ({}) failed to {}: {why}", self.id, self.name, if reverse { "decode" } else { "encode" })
        })
    }
}

/// A codec function's status: a negative netcdf-c code passes through; -1 (NC2_ERR, what
/// netcdf-c's plugins return from HGOTO_ERROR paths) and positive values become `NC_EFILTER`.
fn check_codec(code: c_int, what: &str, codec_id: &str) -> NcResult<()> {
    crate::error::check(code).map_err(|error| {
        crate::error::report(format_args!("codec \"{codec_id}\": {what} failed ({code})"));
        if code > 0 || code == -1 {
            NC_EFILTER
        } else {
            error
        }
    })
}

impl CodecPart {
    /// One of ncfilters' standard codecs, called as Rust; `working` computes its working
    /// parameters when [`Codec::modifies_parameters`].
    pub fn native(codec: Codec, working: WorkingParamsFn) -> Self {
        CodecPart {
            codec_id: codec.codec_id().to_string(),
            hdf5_id: codec.hdf5_id(),
            functions: CodecFunctions::Native { codec, working },
            init: Arc::default(),
            _library: None,
        }
    }

    /// Runs `NCZ_codec_initialize` if this is the codec's first use (see [`InitState`]).
    /// A plugin library is trusted native code, as HDF5 treats it: nothing is probed.
    pub fn ensure_initialized(&self, _: &Call<'_>) {
        let init = &self.init;
        let me = thread_number();
        loop {
            match init.state.compare_exchange(INIT_NOT_RUN, INIT_RUNNING, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => break,
                Err(INIT_DONE) => return,
                // Re-entered from this codec's own initialiser: go on, as netcdf-c would.
                Err(_) if init.runner.load(Ordering::Acquire) == me => return,
                Err(_) => std::thread::yield_now(),
            }
        }
        init.runner.store(me, Ordering::Release);
        if let CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_codec_initialize: Some(initialize), .. })) =
            self.functions
        {
            // SAFETY: NCZ_codec_initialize takes no arguments.
            unsafe { initialize() };
        }
        init.runner.store(0, Ordering::Release);
        init.state.store(INIT_DONE, Ordering::Release);
    }

    /// Whether `NCZ_codec_initialize` has run (or the codec has none and was used).
    pub fn is_initialized(&self) -> bool {
        self.init.state.load(Ordering::Acquire) == INIT_DONE
    }

    /// `NCZ_codec_finalize`, for a codec that was initialised, once per initialisation however
    /// many parts share it; a later use initialises it again.
    pub fn finalize(&self, _: &Call<'_>) {
        let init = &self.init.state;
        if init.compare_exchange(INIT_DONE, INIT_NOT_RUN, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return;
        }
        if let CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_codec_finalize: Some(finalize), .. })) =
            self.functions
        {
            // SAFETY: NCZ_codec_finalize takes no arguments.
            unsafe { finalize() }
        }
    }

    /// Runs a native codec function as its `NCZ_codec_t` entry point would: a panic becomes
    /// `NC_EINTERNAL`, reported under the entry point's name.
    fn native_status(&self, entry_point: &str, body: impl FnOnce() -> NcResult<()>) -> c_int {
        let name = format!("{} {entry_point}", self.codec_id);
        crate::ffi_boundary::contained(&name, || crate::error::status_code(body()))
    }

    /// `NCZ_codec_to_hdf5`: the visible HDF5 parameters of a codec's JSON text.
    pub fn to_hdf5(&self, call: &Call<'_>, codec_json: &str) -> NcResult<CParams> {
        self.ensure_initialized(call);
        match self.functions {
            CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_codec_to_hdf5: None, .. })) => Ok(CParams::empty()),
            CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_codec_to_hdf5: Some(to_hdf5), .. })) => {
                let text = CString::new(codec_json).map_err(|_| NC_EFILTER)?;
                let (mut len, mut ptr) = (0usize, std::ptr::null_mut());
                // SAFETY: text is NUL-terminated; out-pointers are valid; the plugin returns a C-heap vector.
                let code = unsafe { to_hdf5(text.as_ptr(), &mut len, &mut ptr) };
                // SAFETY: on any outcome, a non-NULL vector is the plugin's calloc'd result for us to free.
                let params = unsafe { CParams::from_raw(ptr, len) };
                check_codec(code, "NCZ_codec_to_hdf5", &self.codec_id)?;
                Ok(params)
            }
            CodecFunctions::Native { codec, .. } => {
                // Text a C codec could not be given is refused alike.
                if codec_json.contains('\0') {
                    return Err(NC_EFILTER);
                }
                let mut params = CParams::empty();
                let code = self.native_status("NCZ_codec_to_hdf5", || {
                    params = CParams::from_slice(&codec.from_json(codec_json)?)?;
                    Ok(())
                });
                check_codec(code, "NCZ_codec_to_hdf5", &self.codec_id)?;
                Ok(params)
            }
        }
    }

    /// `NCZ_hdf5_to_codec`: the codec JSON text of visible HDF5 parameters.
    pub fn to_codec(&self, call: &Call<'_>, visible: &CParams) -> NcResult<String> {
        self.ensure_initialized(call);
        match self.functions {
            CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_hdf5_to_codec: None, .. })) => {
                crate::error::report(format_args!("codec \"{}\" has no NCZ_hdf5_to_codec", self.codec_id));
                Err(NC_EFILTER)
            }
            CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_hdf5_to_codec: Some(hdf5_to_codec), .. })) => {
                let (count, values) = visible.as_raw();
                let mut text: *mut c_char = std::ptr::null_mut();
                // SAFETY: values NULL or readable for `count` words; text is a valid out-pointer.
                let code = unsafe { hdf5_to_codec(count, values, &mut text) };
                // SAFETY: text is NULL or the plugin's strdup'd string, ours to free.
                let owned =
                    unsafe { crate::ffi_boundary::c_str_bytes(text) }.map(|b| String::from_utf8_lossy(b).into_owned());
                // SAFETY: as above.
                unsafe { libc::free(text.cast()) };
                check_codec(code, "NCZ_hdf5_to_codec", &self.codec_id)?;
                owned.ok_or(NC_EFILTER)
            }
            CodecFunctions::Native { codec, .. } => {
                let mut text = None;
                let code = self.native_status("NCZ_hdf5_to_codec", || {
                    text = Some(codec.to_json(visible.as_slice())?);
                    Ok(())
                });
                check_codec(code, "NCZ_hdf5_to_codec", &self.codec_id)?;
                text.ok_or(NC_EFILTER)
            }
        }
    }

    /// Whether the codec computes working parameters itself.
    pub fn modifies_parameters(&self) -> bool {
        match self.functions {
            CodecFunctions::Library(LibraryCodec(codec)) => codec.NCZ_modify_parameters.is_some(),
            CodecFunctions::Native { codec, .. } => codec.modifies_parameters(),
        }
    }

    /// `NCZ_modify_parameters`: visible → working parameters for variable `(ncid, varid)`, within
    /// `call`. The codec may re-enter netcdf-c (`nc_inq_var`, …); a plugin may replace either
    /// vector.
    pub fn modify_parameters(
        &self,
        call: &Call<'_>,
        ncid: c_int,
        varid: c_int,
        visible: &mut CParams,
        working: &mut CParams,
    ) -> NcResult<()> {
        self.ensure_initialized(call);
        let code = match self.functions {
            CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_modify_parameters: None, .. })) => return Ok(()),
            CodecFunctions::Library(LibraryCodec(NCZ_codec_t { NCZ_modify_parameters: Some(modify), .. })) => {
                let ((visible_len, visible_ptr), (working_len, working_ptr)) =
                    (visible.raw_parts_mut(), working.raw_parts_mut());
                // SAFETY: both pairs are C-heap vectors the plugin may free and replace, as the protocol allows.
                unsafe { modify(ncid, varid, visible_len, visible_ptr, working_len, working_ptr) }
            }
            CodecFunctions::Native { codec, .. } if !codec.modifies_parameters() => return Ok(()),
            CodecFunctions::Native { codec, working: working_of } => {
                self.native_status("NCZ_modify_parameters", || {
                    *working = CParams::from_slice(&working_of(call, codec, ncid, varid, visible.as_slice())?)?;
                    Ok(())
                })
            }
        };
        check_codec(code, "NCZ_modify_parameters", &self.codec_id)
    }
}

/// Plugin parts made of Rust functions, for the registry's and the chain's unit tests.
#[cfg(any(test, feature = "test-support"))]
pub mod test_parts {
    use super::*;
    use std::os::raw::c_uint;

    extern "C" fn identity(
        _: c_uint,
        _: usize,
        _: *const c_uint,
        nbytes: usize,
        _: *mut usize,
        _: *mut *mut c_void,
    ) -> usize {
        nbytes
    }

    pub fn filter(id: u32) -> FilterPart {
        // SAFETY: `identity` reads and writes nothing.
        unsafe { filter_with(id, Some(identity)) }
    }

    /// A part whose filter function is `function`, which the safe `apply` calls.
    ///
    /// # Safety
    /// `function` keeps HDF5's filter contract: it touches only the `cd_nelmts` values, `*buf`'s
    /// `*buf_size` bytes and the two out-pointers, and frees or replaces `*buf` only with `free`
    /// and `malloc`.
    pub unsafe fn filter_with(id: u32, function: H5Z_func_t) -> FilterPart {
        let name = format!("f{id}");
        FilterPart { id, name, function, can_apply: None, set_local: None, set_decode_limit: None, _library: None }
    }

    /// A library codec with no functions.
    pub fn codec(codec_id: &str, hdf5_id: u32) -> CodecPart {
        with_functions(codec_id, hdf5_id, None, None)
    }

    /// A library codec with an initialiser and a finaliser.
    pub fn codec_with_lifecycle(
        codec_id: &str,
        hdf5_id: u32,
        initialize: extern "C" fn(),
        finalize: extern "C" fn(),
    ) -> CodecPart {
        with_functions(codec_id, hdf5_id, Some(initialize), Some(finalize))
    }

    fn with_functions(
        codec_id: &str,
        hdf5_id: u32,
        initialize: Option<unsafe extern "C" fn()>,
        finalize: Option<unsafe extern "C" fn()>,
    ) -> CodecPart {
        let functions = CodecFunctions::Library(LibraryCodec(NCZ_codec_t {
            version: NCZ_CODEC_CLASS_VER,
            sort: NCZ_CODEC_HDF5,
            codecid: std::ptr::null(),
            hdf5id: hdf5_id,
            NCZ_codec_initialize: initialize,
            NCZ_codec_finalize: finalize,
            NCZ_codec_to_hdf5: None,
            NCZ_hdf5_to_codec: None,
            NCZ_modify_parameters: None,
        }));
        CodecPart { codec_id: codec_id.to_string(), hdf5_id, functions, init: Arc::default(), _library: None }
    }

    pub fn keep_alive() -> KeepAlive {
        Arc::new(())
    }

    /// The codec part [`load`] reads from a library's `NCZ_codec_t`.
    ///
    /// # Safety
    /// `codec` is a version-1 `NCZ_codec_t` whose pointers are NULL or valid for the process.
    pub unsafe fn library_codec(codec: &'static NCZ_codec_t) -> Result<CodecPart, LoadError> {
        // SAFETY: forwarded contract; the codec is this process image's.
        unsafe { read_codec((codec as *const NCZ_codec_t).cast(), None) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{NC_EINTERNAL, NC_EINVAL};

    /// Only a file of the directory itself is loaded: a name that leads elsewhere is refused
    /// before anything is opened.
    #[test]
    fn only_a_file_of_a_plugin_path_directory_is_loaded() {
        let dir = PluginPathDir::trusted_by_test(PluginDir {
            dir: "/nonexistent/plugins".into(),
            origin: crate::plugin_path::DirOrigin::PluginPath,
        });
        for name in ["../libx.so", "sub/libx.so", "/usr/lib/libx.so", "..", ""] {
            let refused = crate::in_test_call(|call| load_from_plugin_path(call, &dir, name));
            let why = refused.err().map(|e| e.reason).unwrap_or_default();
            assert!(why.contains("is not the name of a file in /nonexistent/plugins"), "{name:?}: {why}");
        }
    }

    fn working_of(_: &Call<'_>, codec: Codec, ncid: c_int, varid: c_int, visible: &[u32]) -> NcResult<Vec<u32>> {
        match (ncid, varid) {
            (1, _) => Ok(vec![codec.hdf5_id(), varid as u32, visible.len() as u32]),
            (2, _) => Err(NC_EINVAL),
            _ => panic!("a working-parameters bug"),
        }
    }

    #[test]
    fn a_native_codec_computes_working_parameters_through_the_given_function() {
        let shuffle = CodecPart::native(Codec::Shuffle, working_of);
        assert_eq!((shuffle.codec_id.as_str(), shuffle.hdf5_id), ("shuffle", 2));
        assert!(shuffle.modifies_parameters());
        let (mut visible, mut working) = (CParams::from_slice(&[7]).unwrap(), CParams::empty());
        crate::in_test_call(|call| shuffle.modify_parameters(call, 1, 5, &mut visible, &mut working)).unwrap();
        assert_eq!((visible.as_slice(), working.as_slice()), (&[7][..], &[2, 5, 1][..]));
        assert_eq!(
            crate::in_test_call(|call| shuffle.modify_parameters(call, 2, 5, &mut visible, &mut working)),
            Err(NC_EINVAL)
        );
        assert_eq!(working.as_slice(), [2, 5, 1], "a failure leaves the working parameters alone");
        let panicked = crate::in_test_call(|call| shuffle.modify_parameters(call, 3, 5, &mut visible, &mut working));
        assert_eq!(panicked, Err(NC_EINTERNAL), "a panic");
        assert!(shuffle.is_initialized(), "used, so finalised at the end (a no-op)");
    }

    static INITIALISED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static FINALISED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    extern "C" fn count_initialise() {
        INITIALISED.fetch_add(1, Ordering::SeqCst);
    }
    extern "C" fn count_finalise() {
        FINALISED.fetch_add(1, Ordering::SeqCst);
    }

    /// A library's static `NCZ_codec_t`, as `NCZ_get_codec_info` returns it.
    struct StaticCodec(NCZ_codec_t);
    // SAFETY: read only; its one pointer is a static C string.
    unsafe impl Sync for StaticCodec {}
    static COUNTING: StaticCodec = StaticCodec(NCZ_codec_t {
        version: NCZ_CODEC_CLASS_VER,
        sort: NCZ_CODEC_HDF5,
        codecid: c"counting".as_ptr(),
        hdf5id: 40700,
        NCZ_codec_initialize: Some(count_initialise),
        NCZ_codec_finalize: Some(count_finalise),
        NCZ_codec_to_hdf5: None,
        NCZ_hdf5_to_codec: None,
        NCZ_modify_parameters: None,
    });

    /// Two discoveries of a library still loaded read the same codec twice: it is initialised
    /// once, and finalised once however many parts are finalised.
    #[test]
    fn the_parts_of_one_library_codec_share_its_initialisation() {
        // SAFETY: a version-1 codec whose pointers are static.
        let (first, again) = unsafe {
            (read_codec((&COUNTING.0 as *const NCZ_codec_t).cast(), None), test_parts::library_codec(&COUNTING.0))
        };
        let (first, again) = (first.unwrap(), again.unwrap());
        crate::in_test_call(|call| {
            first.ensure_initialized(call);
            again.ensure_initialized(call);
            assert_eq!(INITIALISED.load(Ordering::SeqCst), 1);
            first.finalize(call);
            again.finalize(call);
            assert_eq!(FINALISED.load(Ordering::SeqCst), 1);
            again.ensure_initialized(call);
            assert_eq!(INITIALISED.load(Ordering::SeqCst), 2, "used after finalising: initialised again");
        });
        drop((first, again));
        // SAFETY: as above.
        let afresh = unsafe { test_parts::library_codec(&COUNTING.0) }.unwrap();
        assert!(!afresh.is_initialized(), "no part left: the library may have been loaded anew");
    }

    /// The registry's references to a library go at `finalize`: a part taken from it, or a clone,
    /// keeps the library mapped until the last is dropped.
    #[test]
    fn a_library_codec_part_keeps_its_library_loaded() {
        let library: KeepAlive = Arc::new(());
        let loaded = Arc::downgrade(&library);
        // SAFETY: a version-1 codec whose pointers are static, standing for the library's.
        let part = unsafe { read_codec((&COUNTING.0 as *const NCZ_codec_t).cast(), Some(&library)) }.unwrap();
        let clone = part.clone();
        drop((library, part));
        assert!(loaded.upgrade().is_some(), "the clone keeps the library");
        drop(clone);
        assert!(loaded.upgrade().is_none(), "unmapped with the last part");
    }

    #[test]
    fn a_native_codec_that_keeps_its_parameters_is_not_asked() {
        let zlib = CodecPart::native(Codec::Zlib, working_of);
        assert!(!zlib.modifies_parameters());
        let (mut visible, mut working) = (CParams::from_slice(&[5]).unwrap(), CParams::empty());
        crate::in_test_call(|call| zlib.modify_parameters(call, 3, 0, &mut visible, &mut working)).unwrap();
        assert!(working.as_slice().is_empty());
        crate::in_test_call(|call| {
            assert_eq!(zlib.to_hdf5(call, "{\"id\": \"zlib\", \"level\": 4}").unwrap().as_slice(), [4]);
            let with_nul = zlib.to_hdf5(call, "{\"id\": \"zlib\",\0 \"level\": 4}");
            assert_eq!(with_nul.err(), Some(NC_EFILTER), "no C string");
            assert_eq!(zlib.to_codec(call, &visible).unwrap(), "{\"id\": \"zlib\", \"level\": \"5\"}");
        });
    }
}

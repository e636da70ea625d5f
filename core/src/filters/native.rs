// SPDX-License-Identifier: BSD-3-Clause
//! The two filters whose reference codecs stay C libraries, libblosc (c-blosc 1.x) and libsz
//! (libaec), loaded on first use instead of linked. libnetcdf then needs no more shared libraries
//! than stock (these filters are built into it too), a program that never reads blosc or szip data
//! never maps them, and a machine without them gets a clear error on that filter alone.

use std::os::raw::{c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::standard_filter_table::NativeLibrary;

/// libblosc's context API (thread-safe, no global compressor state, unlike 4.9.0's plugin).
pub struct Blosc {
    /// Never dropped (the static holding it is not): the function pointers below live in it.
    /// Held by value, not boxed, so nothing is left to leak when a plugin library holding this
    /// static is unloaded.
    _library: libloading::Library,
    pub compress_ctx: unsafe extern "C" fn(
        clevel: c_int,
        doshuffle: c_int,
        typesize: usize,
        nbytes: usize,
        src: *const c_void,
        dest: *mut c_void,
        destsize: usize,
        compressor: *const c_char,
        blocksize: usize,
        numinternalthreads: c_int,
    ) -> c_int,
    pub decompress_ctx: unsafe extern "C" fn(
        src: *const c_void,
        dest: *mut c_void,
        destsize: usize,
        numinternalthreads: c_int,
    ) -> c_int,
    pub cbuffer_validate: unsafe extern "C" fn(cbuffer: *const c_void, cbytes: usize, nbytes: *mut usize) -> c_int,
    /// `blosc_compname_to_compcode`: -1 for a compressor this build lacks. It only compares
    /// strings, unlike `blosc_list_compressors`, which fills a static buffer unlocked (and
    /// netcdf-c's C blosc plugin may call it meanwhile on C's thread).
    compname_to_compcode: unsafe extern "C" fn(compname: *const c_char) -> c_int,
}

impl Blosc {
    /// Whether this libblosc was built with compressor `name`: a c-blosc build may leave some
    /// out, snappy most often (MinGW-w64 builds from c-blosc's own tree, which no longer bundles
    /// it).
    pub fn has_compressor(&self, name: &str) -> bool {
        let Ok(name) = std::ffi::CString::new(name) else { return false };
        // SAFETY: a NUL-terminated name; the function reads it and no state of c-blosc's.
        unsafe { (self.compname_to_compcode)(name.as_ptr()) >= 0 }
    }
}

/// `SZ_com_t`.
#[repr(C)]
pub struct SzParams {
    pub options_mask: c_int,
    pub bits_per_pixel: c_int,
    pub pixels_per_block: c_int,
    pub pixels_per_scanline: c_int,
}

type SzBufferFn = unsafe extern "C" fn(
    dest: *mut c_void,
    dest_len: *mut usize,
    source: *const c_void,
    source_len: usize,
    param: *mut SzParams,
) -> c_int;

/// libaec's szip-compatible buffer API.
pub struct Szip {
    _library: libloading::Library,
    pub compress: SzBufferFn,
    pub decompress: SzBufferFn,
}

/// Opens the first of `names` that loads.
fn open(names: &[&str]) -> Result<libloading::Library, String> {
    let mut errors = Vec::new();
    for name in names {
        // SAFETY: these are the system's libblosc/libsz, whose initialisers are plain C.
        match unsafe { libloading::Library::new(name) } {
            Ok(library) => return Ok(library),
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(errors.join("; "))
}

/// Looks up `name` as a function of type `F`.
///
/// # Safety
/// `F` must be the C type of the symbol, used only while `library` is loaded.
unsafe fn function<F: Copy>(library: &libloading::Library, name: &str) -> Result<F, String> {
    // SAFETY: per the contract.
    unsafe { library.get::<F>(name.as_bytes()) }.map(|symbol| *symbol).map_err(|e| e.to_string())
}

/// libblosc, loaded on first call; the error says what could not be loaded.
pub fn blosc() -> Result<&'static Blosc, String> {
    static BLOSC: OnceLock<Result<Blosc, String>> = OnceLock::new();
    BLOSC
        .get_or_init(|| {
            let library = open(NativeLibrary::Libblosc.sonames())?;
            // SAFETY: the types are c-blosc 1.x's prototypes (blosc.h); the library is kept in the
            // static with the pointers. Nothing of c-blosc's runs here, so any thread may load it.
            unsafe {
                Ok(Blosc {
                    compress_ctx: function(&library, "blosc_compress_ctx")?,
                    decompress_ctx: function(&library, "blosc_decompress_ctx")?,
                    cbuffer_validate: function(&library, "blosc_cbuffer_validate")?,
                    compname_to_compcode: function(&library, "blosc_compname_to_compcode")?,
                    _library: library,
                })
            }
        })
        .as_ref()
        .map_err(|e| format!("blosc needs libblosc (c-blosc 1.x), which did not load: {e}"))
}

/// libsz (libaec), loaded on first call.
pub fn szip() -> Result<&'static Szip, String> {
    static SZIP: OnceLock<Result<Szip, String>> = OnceLock::new();
    SZIP.get_or_init(|| {
        let library = open(NativeLibrary::Libsz.sonames())?;
        // SAFETY: the types are libaec's szlib.h prototypes; the library is kept with them.
        unsafe {
            Ok(Szip {
                compress: function(&library, "SZ_BufftoBuffCompress")?,
                decompress: function(&library, "SZ_BufftoBuffDecompress")?,
                _library: library,
            })
        }
    })
    .as_ref()
    .map_err(|e| format!("szip needs libsz (libaec), which did not load: {e}"))
}

/// Why ncfilters' own filter `id` cannot run here: its C library does not load (`None` for a
/// filter that needs none, or whose library loads).
pub fn load_error(id: u32) -> Option<String> {
    use crate::standard_filter_table::{standard_filter, NativeLibrary};
    match standard_filter(id)?.native_library? {
        NativeLibrary::Libsz => szip().err(),
        NativeLibrary::Libblosc => blosc().err(),
    }
}

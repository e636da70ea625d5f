// SPDX-License-Identifier: BSD-3-Clause
//! A zstd compression context with the one setting zstd-safe does not expose: libzstd 1.5.7's
//! block pre-splitter turned off (`ZSTD_c_blockSplitterLevel` = 1, experimental parameter 20).
//!
//! Why: from 1.5.7 on, levels 1–4 split blocks before matching by default. On real float32
//! data (ferret-datasets) that makes level 3 encode about 30 % and decode about 20 % slower
//! for output 0.4–1 % smaller. With it off, the output is byte-for-byte that of libzstd 1.5.4,
//! which Debian 12's netcdf-c C plugin uses. A libzstd older than 1.5.7 (linked with
//! `ZSTD_SYS_USE_PKG_CONFIG`) refuses the parameter and has nothing to turn off.
//!
//! Large chunks are compressed as jobs of [`JOB_SIZE`], each on its own
//! ([`Compressor::compress_job`]), which ncfilters-filters joins into one standard frame, as
//! libzstd's multithreaded mode does (no overlap: priming each job with the end of the one before
//! costs more time than the 0.2 % of size it saves). The jobs run on ncfilters' own workers, or
//! on the calling thread alone, straight from the caller's buffer: the bytes never depend on the
//! thread count.
//!
//! A system libzstd lacks the one internal function jobs need, so with one ([`COMPRESSES_JOBS`]
//! false) large chunks are libzstd's multithreaded frames instead, of the same job size, on one
//! process-wide libzstd pool (see [`pool_threads`]), joined by a library destructor like
//! ncfilters' own pool; their bytes too depend on the job size and overlap, never on how many
//! workers ran (libzstd guarantees it for any count of at least one). A libzstd built without
//! threads has no multithreaded frames: every frame is then single-threaded, in the caller's
//! thread, as frames of 512 KiB or less always are.

use crate::c_heap::CVec;
use crate::platform;
use crate::worker_pool::{self, Lifetime};
use std::os::raw::c_int;
use std::ptr::NonNull;
use std::sync::OnceLock;
use zstd::zstd_safe::zstd_sys;

/// libzstd 1.5.7's `ZSTD_c_blockSplitterLevel` (`ZSTD_c_experimentalParam20`), by its number: the
/// bindings of older zstd-sys releases (Debian 13's 2.0.13, for libzstd 1.5.6) have no variant for it.
const ZSTD_C_BLOCK_SPLITTER_LEVEL: c_int = 1017;

/// libzstd's `ZSTD_threadPool` (opaque).
#[repr(C)]
struct ZstdThreadPool {
    _opaque: [u8; 0],
}

// libzstd's own, declared here rather than through zstd-sys' `experimental` bindings: those of
// Debian 13's zstd-safe 7.2.1 do not build against its libzstd 1.5.7, and every libzstd since
// 1.5.0 exports these.
extern "C" {
    /// `ZSTD_CCtx_setParameter`, its parameter the C `int` it is, so that one newer than the
    /// bindings can be named (libzstd refuses one it does not know).
    #[link_name = "ZSTD_CCtx_setParameter"]
    fn ZSTD_CCtx_setParameter_numbered(cctx: *mut zstd_sys::ZSTD_CCtx, param: c_int, value: c_int) -> usize;
    fn ZSTD_CCtx_refThreadPool(cctx: *mut zstd_sys::ZSTD_CCtx, pool: *mut ZstdThreadPool) -> usize;
}

// ... and these only a libzstd built with threads has: the bundled one with zstd-threads links them;
// a system one's are looked up when loaded ([`pool_functions`]), so that one without threads links
// too (Debian's zstd-sys always links the system's, and Debian's crates have no zstd-threads).
#[cfg(all(feature = "zstd-threads", not(ncfilters_system_zstd)))]
extern "C" {
    fn ZSTD_createThreadPool(threads: usize) -> *mut ZstdThreadPool;
    fn ZSTD_freeThreadPool(pool: *mut ZstdThreadPool);
}

// The one libzstd internal that job frames need: the context's next block uses no repeat offset
// from before it (zstd_compress.c; libzstd's multithreaded mode calls it for each job but the
// first). Its only argument is the context, so no internal layout is mirrored. The bundled
// libzstd links it; a system one exports only its API.
#[cfg(not(ncfilters_system_zstd))]
extern "C" {
    fn ZSTD_invalidateRepCodes(cctx: *mut zstd_sys::ZSTD_CCtx);
}

/// Whether [`Compressor::compress_job`] can run: with the bundled libzstd. With a system one,
/// large chunks are libzstd's own multithreaded frames.
pub const COMPRESSES_JOBS: bool = cfg!(not(ncfilters_system_zstd));

/// `ZSTD_createThreadPool` and `ZSTD_freeThreadPool`.
#[derive(Clone, Copy)]
struct PoolFunctions {
    create: unsafe extern "C" fn(usize) -> *mut ZstdThreadPool,
    free: unsafe extern "C" fn(*mut ZstdThreadPool),
}

/// The bundled libzstd's pool functions, linked.
#[cfg(all(feature = "zstd-threads", not(ncfilters_system_zstd)))]
fn pool_functions() -> Option<PoolFunctions> {
    Some(PoolFunctions { create: ZSTD_createThreadPool, free: ZSTD_freeThreadPool })
}

/// The system libzstd's pool functions, looked up in the loaded `libzstd.so.1` (by name, so also
/// when it was loaded `RTLD_LOCAL`; [`platform::LIBZSTD`]), else among the process's global
/// symbols; `None` when it was built without threads. Without them, contexts with workers make
/// pools of their own.
#[cfg(not(all(feature = "zstd-threads", not(ncfilters_system_zstd))))]
fn pool_functions() -> Option<PoolFunctions> {
    static FUNCTIONS: OnceLock<Option<PoolFunctions>> = OnceLock::new();
    *FUNCTIONS.get_or_init(|| {
        let library = platform::loaded_libzstd().or_else(platform::this_program)?;
        if !is_linked_libzstd(&library) {
            return None;
        }
        // SAFETY: libzstd's declarations of the two (zstd.h): the types match.
        let functions = unsafe {
            PoolFunctions {
                create: *library.get(b"ZSTD_createThreadPool\0").ok()?,
                free: *library.get(b"ZSTD_freeThreadPool\0").ok()?,
            }
        };
        // The reference is kept, so the functions stay loaded for the process's life.
        std::mem::forget(library);
        Some(functions)
    })
}

/// Whether `library`'s `ZSTD_createCCtx` is the one ncfilters calls: a pool made by another
/// libzstd (a static one linked in, another version loaded globally) must not reach our contexts,
/// whose layout its functions do not know. Where the two addresses differ for another reason
/// (a non-PIC program's stub), contexts make pools of their own: slower, never wrong.
#[cfg_attr(all(feature = "zstd-threads", not(ncfilters_system_zstd)), allow(dead_code))]
fn is_linked_libzstd(library: &libloading::Library) -> bool {
    let linked = zstd_sys::ZSTD_createCCtx as unsafe extern "C" fn() -> *mut zstd_sys::ZSTD_CCtx as usize;
    // SAFETY: only the symbol's address is read; it is never called through this type.
    let found = unsafe { library.get::<*const std::os::raw::c_void>(b"ZSTD_createCCtx\0") };
    found.is_ok_and(|symbol| *symbol as usize == linked)
}

/// `ZSTD_c_blockSplitterLevel`'s "no splitting".
const NO_BLOCK_SPLITTING: i32 = 1;

/// The size of one job of a multithreaded frame, so that a 4 MiB chunk makes 4 jobs. libzstd's
/// smallest, 512 KiB, ran no faster on 2 cores than one thread (BENCHMARKS.md); frames of 1 MiB
/// jobs are within 0.3 % of the single-threaded size on real float32 data.
pub const JOB_SIZE: usize = 1 << 20;

/// `ZSTD_c_overlapLog`'s "no overlap" between jobs.
const NO_OVERLAP: i32 = 1;

/// Whether the linked libzstd was built with threads: one without them takes no workers
/// (`ZSTD_c_nbWorkers`' upper bound is 0) and refuses the job size.
pub fn has_threads() -> bool {
    static HAS_THREADS: OnceLock<bool> = OnceLock::new();
    *HAS_THREADS.get_or_init(|| {
        // SAFETY: ZSTD_cParam_getBounds only reads libzstd's constants.
        let bounds = unsafe { zstd_sys::ZSTD_cParam_getBounds(zstd_sys::ZSTD_cParameter::ZSTD_c_nbWorkers) };
        !is_error(bounds.error) && bounds.upperBound > 0
    })
}

/// The process's libzstd worker pool.
struct SharedPool {
    pool: NonNull<ZstdThreadPool>,
    free: unsafe extern "C" fn(*mut ZstdThreadPool),
    creator: u32,
}

// SAFETY: a ZSTD_threadPool is made to be shared by contexts on any thread (it locks inside).
unsafe impl Send for SharedPool {}
// SAFETY: as above.
unsafe impl Sync for SharedPool {}

static SHARED_POOL: OnceLock<Option<SharedPool>> = OnceLock::new();
static SHARED_POOL_LIFETIME: Lifetime = Lifetime::new();

/// The threads of libzstd's pool: one per worker ([`worker_pool::threads`]), and one more when
/// the workers have every core the process may use.
///
/// Why one more: a caller whose next job finds every pool thread busy polls (libzstd's
/// `POOL_tryAdd` fails until a worker marks itself idle). On one core it polls away the very
/// time slice the worker needs: a 4 MiB chunk at level 1 ran at 0.55× single-threaded libzstd,
/// and 0.9× with the spare thread; on 2 cores level 3 went from 1.54× to 1.79× (BENCHMARKS.md).
/// The spare thread runs only on cores the process may use anyway; under a lower
/// `NCFILTERS_THREADS` it would take one more core, so the cap wins there.
fn pool_threads() -> usize {
    worker_pool::threads() + usize::from(worker_pool::threads_fill_the_cores())
}

/// The pool, started on first use with [`pool_threads`] threads; none without threads.
fn shared_pool() -> Option<&'static SharedPool> {
    SHARED_POOL
        .get_or_init(|| {
            if !has_threads() {
                return None;
            }
            let functions = pool_functions()?;
            // SAFETY: ZSTD_createThreadPool has no preconditions; NULL when the threads cannot start.
            let pool = NonNull::new(unsafe { (functions.create)(pool_threads()) })?;
            Some(SharedPool { pool, free: functions.free, creator: std::process::id() })
        })
        .as_ref()
        .filter(|shared| worker_pool::is_pool_process(shared.creator))
}

/// Frees the pool (joining its threads) when the library is unloaded or the process exits,
/// unless a compression is using it or this is a forked child.
extern "C" fn free_shared_pool_at_unload() {
    if !SHARED_POOL_LIFETIME.close() {
        return;
    }
    if let Some(Some(shared)) = SHARED_POOL.get() {
        if worker_pool::is_pool_process(shared.creator) {
            // SAFETY: the pool came from ZSTD_createThreadPool, nobody uses it (closed above, and
            // no use was in progress), and it is freed once: the destructor runs once.
            unsafe { (shared.free)(shared.pool.as_ptr()) };
        }
    }
}

platform::at_unload!(FREE_SHARED_POOL_AT_UNLOAD = free_shared_pool_at_unload);

pub struct Compressor {
    context: NonNull<zstd_sys::ZSTD_CCtx>,
    /// The context uses the shared pool (else, for multithreaded frames, a pool of its own).
    pooled: bool,
    /// libzstd has threads ([`has_threads`]): else every frame is single-threaded.
    threads: bool,
    /// The process that made it: a forked child makes its own contexts.
    creator: u32,
    /// The last multithreaded compression failed, so jobs of it may still run on the shared
    /// pool: libzstd waits for them at the next multithreaded compression, but freeing the
    /// context would free them under the pool's threads (it waits only for a pool of its own).
    unsettled: bool,
}

// SAFETY: a ZSTD_CCtx may move between threads; `&mut self` keeps its use to one at a time.
unsafe impl Send for Compressor {}

impl Compressor {
    /// A context, using the shared pool where large chunks are libzstd's multithreaded frames,
    /// or `None` when libzstd cannot allocate one.
    pub fn new() -> Option<Self> {
        Self::with_pool(if COMPRESSES_JOBS { None } else { shared_pool() })
    }

    fn with_pool(shared: Option<&SharedPool>) -> Option<Self> {
        // SAFETY: ZSTD_createCCtx has no preconditions; it returns NULL on failure.
        let context = NonNull::new(unsafe { zstd_sys::ZSTD_createCCtx() })?;
        let threads = has_threads();
        let mut compressor =
            Compressor { context, pooled: false, threads, creator: std::process::id(), unsettled: false };
        // Refused by libzstd < 1.5.7, which never splits blocks early: nothing to do then.
        let _ = compressor.set(ZSTD_C_BLOCK_SPLITTER_LEVEL, NO_BLOCK_SPLITTING);
        if threads {
            compressor.set(zstd_sys::ZSTD_cParameter::ZSTD_c_jobSize as c_int, JOB_SIZE as i32).ok()?;
            compressor.set(zstd_sys::ZSTD_cParameter::ZSTD_c_overlapLog as c_int, NO_OVERLAP).ok()?;
        }
        if let Some(shared) = shared {
            // SAFETY: both are live; the pool outlives every context that uses it (it is freed
            // only when no compression is in progress, at unload or exit).
            let code = unsafe { ZSTD_CCtx_refThreadPool(context.as_ptr(), shared.pool.as_ptr()) };
            compressor.pooled = check(code).is_ok();
        }
        Some(compressor)
    }

    /// Whether this process made the context: a forked child must not use its parent's
    /// contexts, whose workers did not follow it.
    pub fn made_here(&self) -> bool {
        worker_pool::is_pool_process(self.creator)
    }

    fn set(&self, parameter: c_int, value: i32) -> Result<(), usize> {
        // SAFETY: the context is live (owned by self); setting a parameter has no other input, and
        // libzstd refuses a number it does not know.
        let code = unsafe { ZSTD_CCtx_setParameter_numbered(self.context.as_ptr(), parameter, value) };
        check(code).map(|_| ())
    }

    /// Compresses `input` at `level` into `out` (one frame with its content size, as
    /// `ZSTD_compressCCtx` writes); `out` must be empty. `multithreaded`: a frame of
    /// [`JOB_SIZE`] jobs, run on the shared pool (inputs of at most 512 KiB, and every input
    /// when libzstd has no threads, are single-threaded frames). Err holds libzstd's error code.
    pub fn compress(&mut self, level: i32, input: &[u8], out: &mut CVec, multithreaded: bool) -> Result<(), usize> {
        assert!(out.is_empty(), "zstd_context::Compressor::compress into a used buffer");
        let multithreaded = multithreaded && self.threads;
        let _use = if multithreaded && self.pooled {
            match SHARED_POOL_LIFETIME.enter() {
                Some(using) => Some(using),
                // The process is exiting and the pool is gone: the same frame, with a pool of
                // its own for this one call.
                None => {
                    let mut own = Self::with_pool(None).ok_or(OUT_OF_MEMORY)?;
                    return own.compress_with(level, input, out, worker_pool::threads());
                }
            }
        } else {
            None
        };
        self.compress_with(level, input, out, if multithreaded { worker_pool::threads() } else { 0 })
    }

    /// [`Self::compress`] with `workers` threads (0, or a libzstd without threads: a
    /// single-threaded frame).
    fn compress_with(&mut self, level: i32, input: &[u8], out: &mut CVec, workers: usize) -> Result<(), usize> {
        let workers = if self.threads { workers } else { 0 };
        let bound = zstd::zstd_safe::compress_bound(input.len());
        if workers > 0 && out.capacity() < bound {
            // Never stop a multithreaded frame early for want of room: that returns with jobs
            // still running. Compress in full, then see whether it fits.
            let mut whole = CVec::with_capacity_uninit(bound).map_err(|_| OUT_OF_MEMORY)?;
            self.compress_with(level, input, &mut whole, workers)?;
            if whole.len() > out.capacity() {
                return Err(DESTINATION_TOO_SMALL);
            }
            return out.extend_from_slice(whole.as_slice()).map_err(|_| OUT_OF_MEMORY);
        }
        self.begin_frame(level, workers, true)?;
        debug_assert!(out.is_empty(), "the frame is written from the start of `out`");
        let spare = out.spare_uninit();
        let room = spare.len();
        let destination = spare.as_mut_ptr();
        // SAFETY: `destination` has `room` writable bytes and `input` is a live slice; libzstd
        // writes at most `room` bytes and reads `input.len()`, and keeps neither pointer.
        let code = unsafe {
            zstd_sys::ZSTD_compress2(
                self.context.as_ptr(),
                destination.cast(),
                room,
                input.as_ptr().cast(),
                input.len(),
            )
        };
        // A multithreaded compression that fails may leave jobs running (see `unsettled`); the
        // next multithreaded one waits for them first.
        if workers > 0 {
            self.unsettled = is_error(code);
        }
        let written = check(code)?;
        // SAFETY: ZSTD_compress2 succeeded, so it wrote the first `written` (<= room) bytes.
        unsafe { out.assume_init_len(written) };
        Ok(())
    }

    /// Readies the context for a new frame at `level` with `workers` threads, which carries its
    /// content size when `content_size`.
    fn begin_frame(&mut self, level: i32, workers: usize, content_size: bool) -> Result<(), usize> {
        self.reset_session();
        self.set(zstd_sys::ZSTD_cParameter::ZSTD_c_nbWorkers as c_int, workers as i32)?;
        self.set(zstd_sys::ZSTD_cParameter::ZSTD_c_compressionLevel as c_int, level)?;
        self.set(zstd_sys::ZSTD_cParameter::ZSTD_c_contentSizeFlag as c_int, i32::from(content_size))
    }

    /// Drops an unfinished frame: a failed compression leaves the stream mid-frame, where
    /// parameters cannot be set.
    fn reset_session(&mut self) {
        // SAFETY: the context is live; resetting the session only drops an unfinished frame.
        unsafe {
            zstd_sys::ZSTD_CCtx_reset(self.context.as_ptr(), zstd_sys::ZSTD_ResetDirective::ZSTD_reset_session_only)
        };
    }

    /// Compresses `job` at `level` and appends it to `out` as a frame of its own whose blocks use
    /// no repeat offset from before them, so that they may follow another job's blocks in one
    /// frame, as in libzstd's multithreaded frames. The frame has no content size and no checksum,
    /// and its window fits the job. `out` needs `compress_bound(job.len())` bytes of room; with
    /// less, the job fails and `out` is as it was. Err holds libzstd's error code (`GENERIC`
    /// without [`COMPRESSES_JOBS`]).
    pub fn compress_job(&mut self, level: i32, job: &[u8], out: &mut CVec) -> Result<(), usize> {
        if !COMPRESSES_JOBS {
            return Err(GENERIC);
        }
        if out.capacity() - out.len() < zstd::zstd_safe::compress_bound(job.len()) {
            return Err(DESTINATION_TOO_SMALL);
        }
        let used = out.len();
        self.begin_frame(level, 0, false)?;
        let context = self.context.as_ptr();
        // SAFETY: the context is live and between frames (reset above).
        check(unsafe { zstd_sys::ZSTD_CCtx_setPledgedSrcSize(context, job.len() as u64) })?;
        let spare = out.spare_uninit();
        let mut sink = zstd_sys::ZSTD_outBuffer { dst: spare.as_mut_ptr().cast(), size: spare.len(), pos: 0 };
        let mut nothing = zstd_sys::ZSTD_inBuffer { src: job.as_ptr().cast(), size: 0, pos: 0 };
        // SAFETY: `sink` describes `spare`'s writable bytes and `nothing` no bytes of a live slice;
        // with no input and ZSTD_e_continue libzstd only starts the frame, writing nothing.
        let started = unsafe {
            zstd_sys::ZSTD_compressStream2(
                context,
                &mut sink,
                &mut nothing,
                zstd_sys::ZSTD_EndDirective::ZSTD_e_continue,
            )
        };
        check(started)?;
        // SAFETY: the context is live and its frame started, with no dictionary or prefix (the
        // function's one condition: no external dictionary).
        #[cfg(not(ncfilters_system_zstd))]
        unsafe {
            ZSTD_invalidateRepCodes(context)
        };
        let mut source = zstd_sys::ZSTD_inBuffer { src: job.as_ptr().cast(), size: job.len(), pos: 0 };
        // SAFETY: as above; libzstd reads `job` and writes at most `sink.size` bytes, keeping
        // neither pointer past the call (the frame ends in it or the session is reset below).
        let left = unsafe {
            zstd_sys::ZSTD_compressStream2(context, &mut sink, &mut source, zstd_sys::ZSTD_EndDirective::ZSTD_e_end)
        };
        if check(left)? != 0 || source.pos != job.len() {
            self.reset_session();
            return Err(DESTINATION_TOO_SMALL);
        }
        let written = sink.pos;
        // SAFETY: libzstd wrote the first `written` (<= the spare room) bytes after the used ones.
        unsafe { out.assume_init_len(used + written) };
        Ok(())
    }
}

impl Drop for Compressor {
    fn drop(&mut self) {
        if self.unsettled && self.pooled {
            // Left allocated rather than freed under running jobs: only after a failure such as
            // running out of memory.
            return;
        }
        // SAFETY: the context came from ZSTD_createCCtx and is freed once, here.
        unsafe { zstd_sys::ZSTD_freeCCtx(self.context.as_ptr()) };
    }
}

/// libzstd's code for "Allocation error : not enough memory".
const OUT_OF_MEMORY: usize = (zstd_sys::ZSTD_ErrorCode::ZSTD_error_memory_allocation as usize).wrapping_neg();

/// libzstd's code for "Error (generic)".
const GENERIC: usize = (zstd_sys::ZSTD_ErrorCode::ZSTD_error_GENERIC as usize).wrapping_neg();

/// libzstd's code for "Destination buffer is too small".
const DESTINATION_TOO_SMALL: usize = (zstd_sys::ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall as usize).wrapping_neg();

fn is_error(code: usize) -> bool {
    check(code).is_err()
}

/// libzstd's size_t result: a count, or an error code.
fn check(code: usize) -> Result<usize, usize> {
    // SAFETY: ZSTD_isError only inspects the value.
    if unsafe { zstd_sys::ZSTD_isError(code) } != 0 {
        Err(code)
    } else {
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system's libzstd is the linked one only in the distribution build: in the bundled
    /// build its pool functions must not be taken for ours. On the x86-64 hosts that run the
    /// tests it is there (Debian's dpkg needs it); an emulated sysroot may lack it.
    #[test]
    #[cfg(target_os = "linux")]
    fn only_the_linked_libzstd_passes_for_it() {
        // SAFETY: the system's libzstd, whose initialisers are plain C.
        match unsafe { libloading::Library::new(platform::LIBZSTD) } {
            Ok(system) => assert_eq!(is_linked_libzstd(&system), cfg!(ncfilters_system_zstd)),
            Err(e) if cfg!(target_arch = "x86_64") => panic!("{}: {e}", platform::LIBZSTD),
            Err(_) => {}
        }
        let program = platform::this_program().expect("the program");
        if !cfg!(ncfilters_system_zstd) {
            assert!(!is_linked_libzstd(&program), "the bundled libzstd is not in the global scope");
        }
    }

    /// The number is libzstd 1.5.7's block splitter level: the linked libzstd (the bundled
    /// 1.5.7, or a system one as new) takes levels 0 to 6 for it and refuses 7.
    #[test]
    fn the_block_splitter_level_is_named_by_its_number() {
        // SAFETY: ZSTD_versionNumber has no preconditions.
        if unsafe { zstd_sys::ZSTD_versionNumber() } < 10507 {
            return;
        }
        let compressor = Compressor::with_pool(None).expect("a context");
        assert_eq!(compressor.set(ZSTD_C_BLOCK_SPLITTER_LEVEL, 6), Ok(()));
        assert!(compressor.set(ZSTD_C_BLOCK_SPLITTER_LEVEL, 7).is_err());
    }

    /// Float-like data: slowly varying values with noisy low bytes, 2 MiB.
    fn floats() -> Vec<u8> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        (0..(1 << 19))
            .flat_map(|i: u32| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let value = (i as f32 * 0.001).sin() * 100.0 + (state % 1000) as f32 * 0.0001;
                value.to_le_bytes()
            })
            .collect()
    }

    #[test]
    fn frames_decode_with_zstd_and_carry_their_size() {
        let data = floats();
        let mut compressor = Compressor::new().unwrap();
        for level in [-3, 1, 3, 9] {
            let mut out = CVec::with_capacity_uninit(zstd::zstd_safe::compress_bound(data.len())).unwrap();
            compressor.compress(level, &data, &mut out, false).unwrap();
            assert_eq!(zstd::zstd_safe::get_frame_content_size(out.as_slice()).ok(), Some(Some(data.len() as u64)));
            assert_eq!(zstd::bulk::decompress(out.as_slice(), data.len()).unwrap(), data, "level {level}");
        }
    }

    #[test]
    fn the_pre_splitter_is_off() {
        // With it on (zstd-safe's context, 1.5.7's default), level 3 output differs.
        if zstd::zstd_safe::version_number() < 10507 {
            return; // a system libzstd without the pre-splitter: nothing was turned off
        }
        let data = floats();
        let mut out = CVec::with_capacity_uninit(zstd::zstd_safe::compress_bound(data.len())).unwrap();
        Compressor::new().unwrap().compress(3, &data, &mut out, false).unwrap();
        let default = zstd::bulk::compress(&data, 3).unwrap();
        assert_ne!(out.as_slice(), &default[..], "libzstd {}", zstd::zstd_safe::version_string());
    }

    #[test]
    fn a_full_buffer_is_an_error_not_an_overrun() {
        let data = floats();
        let mut out = CVec::with_capacity_uninit(64).unwrap();
        assert!(Compressor::new().unwrap().compress(3, &data, &mut out, false).is_err());
        assert!(out.is_empty());
        assert!(Compressor::new().unwrap().compress(3, &data, &mut out, true).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn a_context_whose_output_filled_up_can_be_freed_and_reused() {
        // Output full mid-frame would leave jobs running on the shared pool, and freeing the
        // context would free them under the workers (a crash); a failure must also leave the
        // context usable.
        let mut data = floats();
        data.extend_from_within(..);
        for room in [64, 1 << 20, 3 << 20] {
            for _ in 0..20 {
                let mut out = CVec::with_capacity_uninit(room).unwrap();
                let mut compressor = Compressor::new().unwrap();
                assert!(compressor.compress(1, &data, &mut out, true).is_err());
                let mut full = CVec::with_capacity_uninit(zstd::zstd_safe::compress_bound(data.len())).unwrap();
                compressor.compress(1, &data, &mut full, true).unwrap();
                assert_eq!(zstd::bulk::decompress(full.as_slice(), data.len()).unwrap(), data);
                assert!(compressor.compress(1, &data, &mut CVec::with_capacity_uninit(room).unwrap(), true).is_err());
            }
        }
    }

    fn frame(compressor: &mut Compressor, level: i32, data: &[u8], workers: usize) -> Vec<u8> {
        let mut out = CVec::with_capacity_uninit(zstd::zstd_safe::compress_bound(data.len())).unwrap();
        compressor.compress_with(level, data, &mut out, workers).unwrap();
        out.as_slice().to_vec()
    }

    /// The bundled libzstd has threads exactly when the feature asks for them, and a system one
    /// (Debian's and Fedora's are built with them) has its pool functions found.
    #[test]
    fn libzstd_has_threads_as_built() {
        let system = platform::loaded_libzstd();
        assert_eq!(has_threads(), cfg!(feature = "zstd-threads") || system.is_some());
        assert_eq!(pool_functions().is_some(), has_threads(), "the pool functions");
        assert_eq!(shared_pool().is_some(), has_threads(), "the shared pool");
    }

    /// Without threads, a frame asked to be multithreaded is the single-threaded frame, whatever
    /// the worker count.
    #[test]
    fn without_threads_every_frame_is_single_threaded() {
        if has_threads() {
            return; // tested by `cargo test -p ncfilters-runtime --no-default-features` (xtask rust)
        }
        let mut data = floats();
        data.extend_from_within(..);
        let single = frame(&mut Compressor::with_pool(None).unwrap(), 3, &data, 0);
        for workers in [1, 4] {
            assert!(frame(&mut Compressor::new().unwrap(), 3, &data, workers) == single, "{workers} workers");
        }
        let mut out = CVec::with_capacity_uninit(zstd::zstd_safe::compress_bound(data.len())).unwrap();
        Compressor::new().unwrap().compress(3, &data, &mut out, true).unwrap();
        assert!(out.as_slice() == &single[..], "the multithreaded call's frame differs");
        assert_eq!(zstd::bulk::decompress(&single, data.len()).unwrap(), data);
    }

    #[test]
    fn multithreaded_frames_do_not_depend_on_the_worker_count() {
        if !has_threads() {
            return; // without_threads_every_frame_is_single_threaded covers that libzstd
        }
        let mut data = floats();
        data.extend_from_within(..);
        data.extend_from_within(..1 << 20); // 5 MiB: five jobs
        for level in [1, 3] {
            let single = frame(&mut Compressor::with_pool(None).unwrap(), level, &data, 0);
            let one = frame(&mut Compressor::with_pool(None).unwrap(), level, &data, 1);
            assert_ne!(one, single, "a multithreaded frame is a different frame");
            for workers in [2, 3, 8] {
                let own = frame(&mut Compressor::with_pool(None).unwrap(), level, &data, workers);
                assert!(own == one, "level {level}: {workers} workers wrote other bytes than 1");
            }
            let mut shared = Compressor::new().unwrap();
            let mut out = CVec::with_capacity_uninit(zstd::zstd_safe::compress_bound(data.len())).unwrap();
            shared.compress(level, &data, &mut out, true).unwrap();
            assert!(out.as_slice() == &one[..], "level {level}: the shared pool's frame differs");
            assert_eq!(zstd::zstd_safe::get_frame_content_size(&one).ok(), Some(Some(data.len() as u64)));
            assert_eq!(zstd::bulk::decompress(&one, data.len()).unwrap(), data);
            // Within 2 % of the single-threaded frame.
            assert!(one.len() * 100 <= single.len() * 102, "level {level}: {} vs {}", one.len(), single.len());
        }
    }

    /// A job's frame is appended after what `out` holds, or, without the room for it, `out` is
    /// left as it was.
    #[test]
    fn a_job_is_appended_or_nothing_is() {
        if !COMPRESSES_JOBS {
            return;
        }
        let data = &floats()[..JOB_SIZE];
        let mut compressor = Compressor::new().unwrap();
        let bound = zstd::zstd_safe::compress_bound(data.len());
        let mut out = CVec::with_capacity_uninit(3 + bound).unwrap();
        out.extend_from_slice(b"abc").unwrap();
        compressor.compress_job(1, data, &mut out).unwrap();
        assert_eq!(&out.as_slice()[..3], b"abc");
        let frame = &out.as_slice()[3..];
        assert_eq!(frame[..5], [0x28, 0xb5, 0x2f, 0xfd, 0], "no content size, checksum or dictionary");
        assert_eq!(zstd::bulk::decompress(frame, data.len()).unwrap(), data, "without its content size");
        let mut short = CVec::with_capacity_uninit(2 + bound - 1).unwrap();
        short.extend_from_slice(b"ab").unwrap();
        assert_eq!(compressor.compress_job(1, data, &mut short), Err(DESTINATION_TOO_SMALL));
        assert_eq!(short.as_slice(), b"ab");
        let mut again = CVec::with_capacity_uninit(bound).unwrap();
        compressor.compress_job(1, data, &mut again).unwrap();
        assert_eq!(again.as_slice(), frame, "the context is reusable");
    }

    #[test]
    fn small_inputs_are_single_threaded_frames_anyway() {
        // With threads or without.
        let data = &floats()[..512 << 10];
        let mut compressor = Compressor::with_pool(None).unwrap();
        assert_eq!(frame(&mut compressor, 3, data, 2), frame(&mut compressor, 3, data, 0));
    }
}

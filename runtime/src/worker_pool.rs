// SPDX-License-Identifier: BSD-3-Clause
//! The process's worker threads: how many cores a filter may use, and one pool, created on first
//! use, that runs the independent pieces of one large chunk side by side.
//!
//! Rules (issue 15, after issue 6's "never fork, never a thread per call"):
//! - [`threads`] is the process's CPU affinity (`sched_getaffinity`, so an MPI rank pinned to one
//!   core gets 1), capped by `NCFILTERS_THREADS` and by an address-space limit (one thread per
//!   512 MiB of `ulimit -v`); 1 means no worker thread here (libzstd's
//!   own pool keeps one, see `zstd_context`, so that a frame's bytes stay the same).
//! - The pool starts `threads() - 1` workers once; the calling thread is the last worker.
//! - Work split into pieces never depends on the thread count, so the bytes written do not either.
//! - A destructor (`.fini_array`, [`platform::at_unload!`]) joins the workers when the library is
//!   unloaded, so a plugin library that `dlclose` unmaps leaves no thread behind in its code. The
//!   workers are plain pthreads ([`platform::Thread`]), not `std::thread`s: std registers
//!   thread-local destructors in the threads it starts, and glibc keeps a library with pending ones
//!   mapped, so a plugin could never unload. A process that forked
//!   after the pool started runs the pieces on the calling thread (its workers stayed behind).

use crate::platform::{self, Thread};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The most threads ever used, whatever `NCFILTERS_THREADS` says.
const MOST_THREADS: usize = 256;

/// How many threads a filter may use: the cores this process may run on, capped by
/// `NCFILTERS_THREADS`. Read once, on first use.
pub fn threads() -> usize {
    limits().threads
}

/// Whether [`threads`] is every core this process may run on, not capped lower by
/// `NCFILTERS_THREADS`: then a thread more than that cannot reach a core the process may not use.
pub fn threads_fill_the_cores() -> bool {
    let limits = limits();
    limits.threads >= limits.cores
}

struct Limits {
    threads: usize,
    /// The cores this process may run on (at most [`MOST_THREADS`]).
    cores: usize,
}

fn limits() -> &'static Limits {
    static LIMITS: OnceLock<Limits> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let available = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cores = available.min(MOST_THREADS);
        let setting = std::env::var("NCFILTERS_THREADS").ok();
        let threads = threads_for(setting.as_deref(), available).unwrap_or_else(|bad| {
            crate::error::report(format_args!(
                "NCFILTERS_THREADS={bad:?} is not a positive number of threads; using {available}"
            ));
            cores
        });
        Limits { threads: threads.min(threads_within(platform::address_space_limit())), cores }
    })
}

/// The address space a thread of [`threads`] costs before any chunk buffer, rounded up: its stack
/// and malloc arena here and in libzstd's pool (8 + 64 MiB each on 64-bit glibc).
const ADDRESS_SPACE_PER_THREAD: u64 = 512 << 20;

/// The threads a process whose address space is limited to `limit` bytes (`ulimit -v`, common
/// on HPC login nodes) may use: at least 1. Under 200 MB, workers' stacks and arenas alone
/// would leave a 37 MB zstd chunk no room, where one thread compresses it.
fn threads_within(limit: Option<u64>) -> usize {
    limit.map_or(usize::MAX, |bytes| usize::try_from(bytes / ADDRESS_SPACE_PER_THREAD).unwrap_or(usize::MAX).max(1))
}

/// The thread count for a `NCFILTERS_THREADS` setting and the cores available; Err: the setting
/// is not a positive integer.
fn threads_for(setting: Option<&str>, available: usize) -> Result<usize, &str> {
    let cap = match setting.map(str::trim) {
        None | Some("") => usize::MAX,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(setting.unwrap_or_default()),
        },
    };
    Ok(cap.min(available).clamp(1, MOST_THREADS))
}

/// A process-wide resource that a library destructor may release: users hold a [`Use`] while
/// they work with it, and [`Lifetime::close`] releases it only when nobody does.
pub struct Lifetime {
    /// Uses in progress, plus [`CLOSED`] once closing has begun.
    state: AtomicUsize,
}

const CLOSED: usize = 1 << (usize::BITS - 1);

/// One use of a [`Lifetime`]'s resource; the resource stays until it is dropped.
pub struct Use<'a>(&'a Lifetime);

impl Lifetime {
    pub const fn new() -> Self {
        Lifetime { state: AtomicUsize::new(0) }
    }

    /// A use of the resource, or `None` once it is closed (or closing).
    pub fn enter(&self) -> Option<Use<'_>> {
        let before = self.state.fetch_add(1, Ordering::Acquire);
        if before & CLOSED != 0 {
            self.state.fetch_sub(1, Ordering::Release);
            return None;
        }
        Some(Use(self))
    }

    /// Marks the resource closed; true when nobody uses it, so the caller may release it. False:
    /// a use is in progress (another thread still working while the process exits), and the
    /// resource must be left as it is.
    pub fn close(&self) -> bool {
        self.state.fetch_or(CLOSED, Ordering::AcqRel) & !CLOSED == 0
    }
}

impl Default for Lifetime {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Use<'_> {
    fn drop(&mut self) {
        self.0.state.fetch_sub(1, Ordering::Release);
    }
}

/// The process that started the pools; a forked child has none of their threads.
pub fn is_pool_process(creator: u32) -> bool {
    std::process::id() == creator
}

/// One call's pieces: the work, which piece comes next, and how many have finished.
struct Batch {
    /// The caller's closure, its lifetime erased: the caller waits in [`run`] until every piece
    /// a worker claimed has finished, and workers call it only for pieces they claimed.
    work: *const (dyn Fn(usize) + Sync + 'static),
    pieces: usize,
    next: AtomicUsize,
    finished: Mutex<usize>,
    all_finished: Condvar,
    panicked: AtomicBool,
}

// SAFETY: `work` points to a `Sync` closure that outlives every use (see the field's comment);
// everything else is atomics and locks.
unsafe impl Send for Batch {}
// SAFETY: as above.
unsafe impl Sync for Batch {}

impl Batch {
    /// Claims and runs pieces until none is left.
    fn run_pieces(&self) {
        while let Some(piece) = self.claim() {
            // SAFETY: the piece was claimed above and is below `pieces`, so the caller of `run`
            // is still waiting for it and the closure is alive (see `work`).
            let work = unsafe { &*self.work };
            if crate::ffi_boundary::piece_panicked(|| work(piece)) {
                self.panicked.store(true, Ordering::Relaxed);
            }
            let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
            *finished += 1;
            if *finished == self.pieces {
                self.all_finished.notify_all();
            }
        }
    }

    /// The next piece, if one is left. The counter never passes `pieces`: a counter that
    /// wrapped (`pieces` near `usize::MAX`) would hand out pieces again after [`run`] returned.
    fn claim(&self) -> Option<usize> {
        let next_piece = |next: usize| (next < self.pieces).then(|| next + 1);
        self.next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, next_piece).ok()
    }

    fn exhausted(&self) -> bool {
        self.next.load(Ordering::Relaxed) >= self.pieces
    }
}

#[derive(Default)]
struct Queue {
    batches: Vec<Arc<Batch>>,
    closing: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
}

struct Pool {
    shared: Arc<Shared>,
    workers: Mutex<Vec<Thread>>,
    creator: u32,
}

static POOL: OnceLock<Option<Pool>> = OnceLock::new();
static POOL_LIFETIME: Lifetime = Lifetime::new();

/// The pool, started on first use; `None` with one thread or when no worker could start.
fn pool() -> Option<&'static Pool> {
    POOL.get_or_init(|| {
        let wanted = threads() - 1;
        if wanted == 0 {
            return None;
        }
        let shared = Arc::new(Shared::default());
        let mut workers = Vec::with_capacity(wanted);
        for _ in 0..wanted {
            match start_worker(&shared) {
                Some(thread) => workers.push(thread),
                None => break, // fewer workers only means less parallelism
            }
        }
        (!workers.is_empty()).then(|| Pool { shared, workers: Mutex::new(workers), creator: std::process::id() })
    })
    .as_ref()
}

/// Starts one worker thread holding a reference to `shared`.
fn start_worker(shared: &Arc<Shared>) -> Option<Thread> {
    let shared = Arc::clone(shared);
    Thread::spawn(Box::new(move || {
        crate::ffi_boundary::contained("ncfilters' worker thread", || work_until_closed(&shared))
    }))
}

fn work_until_closed(shared: &Shared) {
    let mut queue = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if queue.closing {
            return;
        }
        let Some(batch) = queue.batches.iter().find(|b| !b.exhausted()).cloned() else {
            queue = shared.wake.wait(queue).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        drop(queue);
        batch.run_pieces();
        queue = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.batches.retain(|b| !b.exhausted());
    }
}

/// A piece of work panicked (the other pieces still ran).
#[derive(Debug, PartialEq, Eq)]
pub struct PiecePanicked;

/// Runs `work(0)`, …, `work(pieces - 1)`, each once, on the pool's workers and the calling
/// thread, and returns when all have finished. Pieces run in no fixed order, so each must write
/// only its own part of the result.
pub fn run(pieces: usize, work: &(dyn Fn(usize) + Sync)) -> Result<(), PiecePanicked> {
    let usable = POOL_LIFETIME.enter().and_then(|lease| {
        let pool = pool().filter(|pool| is_pool_process(pool.creator))?;
        Some((lease, pool))
    });
    let Some((_lease, pool)) = usable.filter(|_| pieces > 1) else {
        return run_serially(pieces, work);
    };
    // SAFETY: only the lifetime is erased; this function does not return before every claimed
    // piece has finished (below), and no piece is claimed after that.
    let work: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(work) };
    let batch = Arc::new(Batch {
        work,
        pieces,
        next: AtomicUsize::new(0),
        finished: Mutex::new(0),
        all_finished: Condvar::new(),
        panicked: AtomicBool::new(false),
    });
    {
        let mut queue = pool.shared.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.batches.push(Arc::clone(&batch));
    }
    pool.shared.wake.notify_all();
    batch.run_pieces();
    let mut finished = batch.finished.lock().unwrap_or_else(|e| e.into_inner());
    while *finished < pieces {
        finished = batch.all_finished.wait(finished).unwrap_or_else(|e| e.into_inner());
    }
    drop(finished);
    let mut queue = pool.shared.queue.lock().unwrap_or_else(|e| e.into_inner());
    queue.batches.retain(|b| !Arc::ptr_eq(b, &batch));
    drop(queue);
    if batch.panicked.load(Ordering::Relaxed) {
        Err(PiecePanicked)
    } else {
        Ok(())
    }
}

/// How pieces run: [`run`] (the pool) or [`run_serially`].
pub type Runner = fn(usize, &(dyn Fn(usize) + Sync)) -> Result<(), PiecePanicked>;

/// `work(0)`, …, `work(pieces - 1)` through `runner`, their results in piece order.
pub fn map<T: Send>(
    pieces: usize,
    work: &(dyn Fn(usize) -> T + Sync),
    runner: Runner,
) -> Result<Vec<T>, PiecePanicked> {
    let slots: Vec<Mutex<Option<T>>> = (0..pieces).map(|_| Mutex::new(None)).collect();
    runner(pieces, &|piece| {
        let result = work(piece);
        *slots[piece].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    })?;
    slots.into_iter().map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()).ok_or(PiecePanicked)).collect()
}

/// [`run`] on the calling thread alone, in order: what `NCFILTERS_THREADS=1` does.
pub fn run_serially(pieces: usize, work: &(dyn Fn(usize) + Sync)) -> Result<(), PiecePanicked> {
    let mut panicked = false;
    for piece in 0..pieces {
        panicked |= crate::ffi_boundary::piece_panicked(|| work(piece));
    }
    if panicked {
        Err(PiecePanicked)
    } else {
        Ok(())
    }
}

/// Stops and joins the workers, unless a call is using them (a thread still compressing while
/// the process exits) or this is a forked child, which has none of them.
fn shut_down() {
    if !POOL_LIFETIME.close() {
        return;
    }
    let Some(Some(pool)) = POOL.get() else { return };
    if !is_pool_process(pool.creator) {
        return;
    }
    pool.shared.queue.lock().unwrap_or_else(|e| e.into_inner()).closing = true;
    pool.shared.wake.notify_all();
    let workers = std::mem::take(&mut *pool.workers.lock().unwrap_or_else(|e| e.into_inner()));
    for worker in workers {
        worker.join(); // it returns now that the queue is closing
    }
}

extern "C" fn shut_down_at_unload() {
    // At unload, on whichever thread unloads: no Call, which would promise netcdf-c's thread.
    crate::ffi_boundary::contained("ncfilters' worker pool shutdown", shut_down)
}

// Runs when the library is unloaded (`dlclose`) or the process exits.
platform::at_unload!(SHUT_DOWN_AT_UNLOAD = shut_down_at_unload);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A piece whose panic payload panics again when dropped: `run` still returns only after
    /// every piece ran, with the failure.
    #[test]
    fn a_piece_whose_panic_payload_panics_when_dropped_fails_the_call_only() {
        use crate::ffi_boundary::tests::PanicsWhenDropped;
        let pieces_ran = AtomicUsize::new(0);
        let outcome = run(4, &|piece| {
            pieces_ran.fetch_add(1, Ordering::SeqCst);
            if piece == 1 {
                std::panic::panic_any(PanicsWhenDropped);
            }
        });
        assert!(outcome.is_err(), "the piece's panic is the call's failure");
        assert_eq!(pieces_ran.into_inner(), 4, "every piece ran before run returned");
    }

    /// With `pieces` at `usize::MAX`, the claim that finds none left does not wrap the counter
    /// round to piece 0 (which `run` would hand out again after returning).
    #[test]
    fn the_last_claim_leaves_no_piece_to_claim_again() {
        let ran = AtomicUsize::new(0);
        let work = |_: usize| {
            ran.fetch_add(1, Ordering::Relaxed);
        };
        let work: &(dyn Fn(usize) + Sync) = &work;
        // SAFETY: only the lifetime is erased; the batch is used only within this test, while
        // `work` lives.
        let work: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(work) };
        let batch = Batch {
            work,
            pieces: usize::MAX,
            next: AtomicUsize::new(usize::MAX - 2),
            finished: Mutex::new(0),
            all_finished: Condvar::new(),
            panicked: AtomicBool::new(false),
        };
        batch.run_pieces();
        assert_eq!(ran.load(Ordering::Relaxed), 2, "the last two pieces");
        assert!(batch.exhausted(), "no piece left");
        batch.run_pieces();
        assert_eq!(ran.load(Ordering::Relaxed), 2, "none claimed again");
    }

    #[test]
    fn the_setting_caps_the_cores() {
        assert_eq!(threads_for(None, 8), Ok(8));
        assert_eq!(threads_for(Some(""), 8), Ok(8));
        assert_eq!(threads_for(Some("1"), 8), Ok(1));
        assert_eq!(threads_for(Some(" 4 "), 8), Ok(4));
        assert_eq!(threads_for(Some("64"), 8), Ok(8), "a cap, not a request");
        assert_eq!(threads_for(None, 100_000), Ok(MOST_THREADS));
        assert_eq!(threads_for(Some("0"), 8), Err("0"));
        assert_eq!(threads_for(Some("-2"), 8), Err("-2"));
        assert_eq!(threads_for(Some("all"), 8), Err("all"));
        assert_eq!(threads_for(Some("2"), 0), Ok(1), "never no thread");
    }

    #[test]
    fn an_address_space_limit_caps_the_threads() {
        assert_eq!(threads_within(None), usize::MAX, "no limit");
        assert_eq!(threads_within(Some(200_000 << 10)), 1, "ulimit -v 200000");
        assert_eq!(threads_within(Some(1 << 30)), 2);
        assert_eq!(threads_within(Some(16 << 30)), 32);
        assert_eq!(threads_within(Some(0)), 1, "never no thread");
    }

    #[test]
    fn every_piece_runs_once_and_panics_are_reported() {
        for pieces in [0, 1, 2, 3, 17, 1000] {
            let counts: Vec<AtomicUsize> = (0..pieces).map(|_| AtomicUsize::new(0)).collect();
            run(pieces, &|piece| {
                counts[piece].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1), "{pieces} pieces");
        }
        let finished = AtomicUsize::new(0);
        let result = run(8, &|piece| {
            if piece == 3 {
                panic!("piece 3 fails");
            }
            finished.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(result, Err(PiecePanicked));
        assert_eq!(finished.load(Ordering::Relaxed), 7, "the other pieces still ran");
    }

    #[test]
    fn several_callers_share_the_pool() {
        std::thread::scope(|scope| {
            for caller in 0..4usize {
                scope.spawn(move || {
                    for _ in 0..50 {
                        let sum = AtomicUsize::new(0);
                        run(16, &|piece| {
                            sum.fetch_add(piece + caller, Ordering::Relaxed);
                        })
                        .unwrap();
                        assert_eq!(sum.load(Ordering::Relaxed), 120 + 16 * caller);
                    }
                });
            }
        });
    }

    #[test]
    fn a_closed_lifetime_refuses_new_uses_and_waits_for_none() {
        let lifetime = Lifetime::new();
        let first = lifetime.enter().unwrap();
        assert!(!lifetime.close(), "in use");
        assert!(lifetime.enter().is_none(), "closing");
        drop(first);
        assert!(lifetime.close(), "now free");
        let free = Lifetime::new();
        assert!(free.close());
    }
}

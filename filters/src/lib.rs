// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters-filters: the standard filters written in Rust, with byte formats identical to netcdf-c
//! 4.9.0's C plugins and HDF5's built-in filters: deflate, bzip2, zstd, shuffle, fletcher32, and
//! blosc's frame format. The filters that call C libraries (blosc, szip) stay in ncfilters-core.
//!
//! Each filter works on byte slices and writes C-heap output ([`CVec`]), so the `H5Z_func_t`
//! adapter can hand results to C without a copy. Decoders never allocate without bound: output
//! stops at [`MAX_DECODED`] (HDF5's largest chunk) or a smaller limit the caller knows.
//!
//! This crate forbids unsafe code: the C heap, the worker threads, libzstd's context and the SIMD
//! kernels it uses are ncfilters-runtime's.
#![forbid(unsafe_code)]
// The plugin path trusts the environment (core's `plugin_path`): no allow may change it.
#![forbid(clippy::disallowed_methods)]

// blosc's frame format, which ncfilters-core's blosc filter writes around libblosc's blocks.
#[doc(hidden)]
pub mod blosc_frame;
pub mod bzip2;
pub mod deflate;
pub mod fletcher32;
pub mod shuffle;
pub mod zstd;

// The runtime's modules under their names of before the split, so the filters read as they did.
use ncfilters_logic::error;
use ncfilters_runtime::{adler32, c_heap, shuffle_simd, worker_pool, zstd_context};

use c_heap::CVec;
use std::fmt;
use std::sync::{Condvar, Mutex, PoisonError};

/// The most a decoder produces: HDF5 chunks are at most 2^32 - 1 bytes.
pub const MAX_DECODED: usize = u32::MAX as usize;

thread_local! {
    /// The decoded-size limit the NCZarr chain sets around its decode calls (see [`DecodeLimit`]).
    static DECODE_LIMIT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The most the filter being called may decode: the NCZarr chain's limit when one is set on
/// this thread, else [`MAX_DECODED`].
pub fn decode_limit() -> usize {
    DECODE_LIMIT.with(|limit| limit.get()).map_or(MAX_DECODED, |limit| limit.min(MAX_DECODED))
}

/// Replaces this thread's decode limit, returning the previous one ([`MAX_DECODED`] when none
/// was set). ncfilters' own plugin libraries export it as `ncfilters_set_decode_limit`, so that
/// the NCZarr chain of the libnetcdf that loaded them bounds their decoders too. Never panics
/// (a thread being torn down has no limit to set).
pub fn replace_decode_limit(limit: usize) -> usize {
    DECODE_LIMIT.try_with(|slot| slot.replace(Some(limit))).ok().flatten().unwrap_or(MAX_DECODED)
}

/// Sets the decode limit of this thread's filter calls until dropped (also on unwind), then
/// restores the previous one. The filters built into this library read it, and so do
/// ncfilters' own plugin libraries, through [`replace_decode_limit`]; a C plugin cannot be
/// bounded from here.
pub struct DecodeLimit {
    previous: Option<usize>,
}

impl DecodeLimit {
    pub fn set(limit: usize) -> Self {
        DecodeLimit { previous: DECODE_LIMIT.with(|slot| slot.replace(Some(limit))) }
    }
}

impl Drop for DecodeLimit {
    fn drop(&mut self) {
        DECODE_LIMIT.with(|slot| slot.set(self.previous));
    }
}

/// Why a filter failed; the adapter reports it and returns 0 to HDF5/NCZarr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError(pub String);

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub type FilterResult<T> = Result<T, FilterError>;

pub fn fail<T>(message: impl Into<String>) -> FilterResult<T> {
    Err(FilterError(message.into()))
}

/// What a filter says when an allocation failed.
const OUT_OF_MEMORY: &str = "out of memory";

pub fn out_of_memory(_: error::NcError) -> FilterError {
    FilterError(OUT_OF_MEMORY.into())
}

impl FilterError {
    fn is_out_of_memory(&self) -> bool {
        self.0 == OUT_OF_MEMORY
    }
}

/// A new C-heap output buffer of `capacity` bytes.
pub fn output(capacity: usize) -> FilterResult<CVec> {
    CVec::with_capacity(capacity).map_err(out_of_memory)
}

/// A new C-heap output buffer of `capacity` uninitialised bytes, for a writer that fills it.
pub fn output_uninit(capacity: usize) -> FilterResult<CVec> {
    CVec::with_capacity_uninit(capacity).map_err(out_of_memory)
}

/// `work(0)`, …, `work(pieces - 1)` side by side through `runner`, their results in piece order:
/// the first failure, or `name: a piece panicked` when one panicked (the others still ran).
/// A piece that ran out of memory makes them all run again on the calling thread alone, as
/// `NCFILTERS_THREADS=1` would: the bytes are the same, and workers' stacks and malloc arenas
/// count against a process's address-space limit (`ulimit -v`) where one thread's do not.
pub fn map_pieces<T: Send>(
    name: &str,
    pieces: usize,
    work: &(dyn Fn(usize) -> FilterResult<T> + Sync),
    runner: worker_pool::Runner,
) -> FilterResult<Vec<T>> {
    let run = |runner| {
        worker_pool::map(pieces, work, runner)
            .map_err(|_| FilterError(format!("{name}: a piece panicked")))?
            .into_iter()
            .collect::<FilterResult<Vec<T>>>()
    };
    match run(runner) {
        Err(error) if error.is_out_of_memory() => run(worker_pool::run_serially),
        result => result,
    }
}

/// `produce(0)`, …, `produce(pieces - 1)` side by side through `runner`, each result handed to
/// `consume` in piece order as soon as those before it have been, so that only the pieces in
/// flight are held. A piece more than two per thread ahead of the next to consume, with those
/// between running, waits for it before it starts: a thread the system stalls cannot make the
/// others hold the whole chunk.
/// The first failure of either ends the work (pieces not yet started are skipped); one that ran
/// out of memory makes the pieces not consumed yet run again on the calling thread alone, as
/// [`map_pieces`] does. A panic in either is `name: a piece panicked`.
pub fn map_in_order<T: Send>(
    name: &str,
    pieces: usize,
    produce: &(dyn Fn(usize) -> FilterResult<T> + Sync),
    consume: &mut (dyn FnMut(T) -> FilterResult<()> + Send),
    runner: worker_pool::Runner,
) -> FilterResult<()> {
    let state = Mutex::new(InOrder {
        next: 0,
        started: vec![false; pieces],
        waiting: (0..pieces).map(|_| None).collect(),
        failed: None,
        consume,
    });
    let caught_up = Condvar::new();
    let ahead = 2 * worker_pool::threads();
    let lock = || state.lock().unwrap_or_else(PoisonError::into_inner);
    let work = |number: usize| {
        let mut guard = lock();
        guard.started[number] = true;
        // Only for pieces already running, so that a runner that starts a later piece before an
        // earlier one cannot wait forever.
        while number >= guard.next + ahead
            && guard.started[guard.next..number].iter().all(|&started| started)
            && guard.failed.is_none()
        {
            guard = caught_up.wait(guard).unwrap_or_else(PoisonError::into_inner);
        }
        if guard.failed.is_some() || number < guard.next {
            return;
        }
        drop(guard);
        // Whatever ends this piece, the pieces waiting for it are told.
        let told = Told { state: &state, caught_up: &caught_up };
        let produced = produce(number);
        let mut guard = lock();
        let in_order = &mut *guard;
        match produced {
            Ok(value) => in_order.waiting[number] = Some(value),
            Err(error) => in_order.fail(error),
        }
        while let Some(value) = in_order.waiting.get_mut(in_order.next).and_then(Option::take) {
            if let Err(error) = (in_order.consume)(value) {
                in_order.fail(error);
                break;
            }
            in_order.next += 1;
        }
        drop(guard);
        drop(told);
    };
    for runner in [runner, worker_pool::run_serially] {
        let ran = runner(pieces, &work);
        let mut guard = lock();
        if ran.is_err() || guard.failed.as_ref().is_some_and(|error| error.0 == PANICKED) {
            return fail(format!("{name}: a piece panicked"));
        }
        match guard.failed.take() {
            None if guard.next == pieces => return Ok(()),
            None => return fail(format!("{name}: a piece was not consumed")),
            Some(error) if error.is_out_of_memory() => guard.waiting.iter_mut().for_each(|value| *value = None),
            Some(error) => return Err(error),
        }
    }
    fail(OUT_OF_MEMORY)
}

/// What [`map_in_order`]'s pieces share.
struct InOrder<'a, T> {
    next: usize,
    started: Vec<bool>,
    waiting: Vec<Option<T>>,
    failed: Option<FilterError>,
    consume: &'a mut (dyn FnMut(T) -> FilterResult<()> + Send),
}

impl<T> InOrder<'_, T> {
    /// Keeps the first failure.
    fn fail(&mut self, error: FilterError) {
        self.failed.get_or_insert(error);
    }
}

/// What a piece that panicked records.
const PANICKED: &str = "a piece panicked";

/// Wakes the pieces waiting in [`map_in_order`] when a piece ends, and records a panic.
struct Told<'a, 'b, T> {
    state: &'a Mutex<InOrder<'b, T>>,
    caught_up: &'a Condvar,
}

impl<T> Drop for Told<'_, '_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.state.lock().unwrap_or_else(PoisonError::into_inner).fail(FilterError(PANICKED.into()));
        }
        self.caught_up.notify_all();
    }
}

/// A part of an output buffer that one piece of work, on whichever thread runs it, writes.
pub type Place<'a, T> = Mutex<&'a mut [T]>;

/// `buffer` cut into consecutive places of `lengths`, each behind its own lock so that pieces
/// running side by side write their own; and what is left after them. `None`: they do not fit.
pub fn disjoint_places<T>(
    mut buffer: &mut [T],
    lengths: impl IntoIterator<Item = usize>,
) -> Option<(Vec<Place<'_, T>>, &mut [T])> {
    let mut places = Vec::new();
    for length in lengths {
        if length > buffer.len() {
            return None;
        }
        let (place, rest) = std::mem::take(&mut buffer).split_at_mut(length);
        places.push(Mutex::new(place));
        buffer = rest;
    }
    Some((places, buffer))
}

/// The most output a step of [`decode_in_steps`] writes.
pub const DECODE_STEP: usize = 1 << 20;

/// What one decoding step did: whether the stream ended, the input bytes it read and the output
/// bytes it wrote.
pub struct Stepped {
    pub ended: bool,
    pub read: usize,
    pub written: usize,
}

/// Decodes `input` in steps into a buffer of `ratio` times its size, doubled as the output needs,
/// up to `limit`. `step(unread, room)` decodes from the input not yet read into `room`: at most
/// [`DECODE_STEP`] zeroed bytes after the output so far (safe code hands out only initialised
/// bytes), so that a buffer grown beyond the output keeps the rest of its pages untouched, as a
/// C decoder's does. A truncated stream (input used up with room to spare), output at `limit`, or
/// a step that neither read nor wrote, is an error.
pub fn decode_in_steps(
    name: &str,
    input: &[u8],
    ratio: usize,
    limit: usize,
    mut step: impl FnMut(&[u8], &mut [u8]) -> FilterResult<Stepped>,
) -> FilterResult<CVec> {
    let mut out = decode_buffer(input.len(), ratio, limit)?;
    let mut read = 0;
    loop {
        let written = out.len();
        let room = out.spare_up_to(DECODE_STEP);
        let room_len = room.len();
        let stepped = step(&input[read..], room)?;
        if stepped.written > room_len || stepped.read > input.len() - read {
            return fail(format!("{name}: the decoder claims more than it was given"));
        }
        out.set_len(written + stepped.written);
        read += stepped.read;
        if stepped.ended {
            return Ok(out);
        }
        if read == input.len() && stepped.written < room_len {
            return fail(format!("{name}: truncated stream"));
        }
        if stepped.written == 0 && stepped.read == 0 {
            return fail(format!("{name}: the decoder stopped short of the end of the stream"));
        }
        if out.len() == out.capacity() {
            if out.capacity() >= limit {
                return fail(format!("{name}: output exceeds {limit} bytes"));
            }
            out.reserve_total(out.capacity().saturating_mul(2).min(limit)).map_err(out_of_memory)?;
        }
    }
}

/// The first output buffer of a decoder: a guess from the input size, within `limit`.
pub fn decode_buffer(input_len: usize, ratio: usize, limit: usize) -> FilterResult<CVec> {
    output(input_len.saturating_mul(ratio).max(4096).min(limit.max(1)))
}

#[cfg(test)]
mod helper_tests {
    use super::*;

    #[test]
    fn decode_limit_is_scoped_and_restored_on_unwind() {
        assert_eq!(decode_limit(), MAX_DECODED);
        {
            let _outer = DecodeLimit::set(1000);
            assert_eq!(decode_limit(), 1000);
            let unwound = std::panic::catch_unwind(|| {
                let _inner = DecodeLimit::set(10);
                assert_eq!(decode_limit(), 10);
                panic!("a filter panicked");
            });
            assert!(unwound.is_err());
            assert_eq!(decode_limit(), 1000, "the inner guard restored the outer limit");
        }
        assert_eq!(decode_limit(), MAX_DECODED);
    }

    #[test]
    fn disjoint_places_cover_the_buffer_in_order_or_refuse() {
        let mut buffer = [0u8; 10];
        let (places, rest) = disjoint_places(&mut buffer, [3, 0, 4]).unwrap();
        assert_eq!(places.iter().map(|p| p.lock().unwrap().len()).collect::<Vec<_>>(), [3, 0, 4]);
        assert_eq!(rest.len(), 3);
        places[2].lock().unwrap()[0] = 7;
        drop(places);
        assert_eq!(buffer[3], 7, "the third place starts after the first two");
        assert!(disjoint_places(&mut buffer, [6, 5]).is_none());
    }

    #[test]
    fn a_piece_out_of_memory_makes_the_pieces_run_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let tries = std::sync::atomic::AtomicUsize::new(0);
        let on_the_caller_only = |i: usize| {
            tries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if std::thread::current().id() == caller {
                Ok(i)
            } else {
                Err(FilterError(OUT_OF_MEMORY.into()))
            }
        };
        // A runner that puts every piece on another thread, as a pool of workers would.
        fn elsewhere(pieces: usize, work: &(dyn Fn(usize) + Sync)) -> Result<(), worker_pool::PiecePanicked> {
            std::thread::scope(|scope| scope.spawn(|| (0..pieces).for_each(work)).join())
                .map_err(|_| worker_pool::PiecePanicked)
        }
        assert_eq!(map_pieces("t", 3, &on_the_caller_only, elsewhere), Ok(vec![0, 1, 2]));
        assert_eq!(tries.into_inner(), 6, "three pieces elsewhere, then three here");
        let other_failure = map_pieces("t", 3, &|_| fail::<usize>("t: corrupt"), elsewhere);
        assert_eq!(other_failure, fail("t: corrupt"), "only running out of memory is tried again");
    }

    #[test]
    fn map_pieces_keeps_the_order_and_reports_failures_and_panics() {
        for runner in [worker_pool::run as worker_pool::Runner, worker_pool::run_serially] {
            assert_eq!(map_pieces("t", 5, &|i| Ok(i * 2), runner), Ok(vec![0, 2, 4, 6, 8]));
            let failing = map_pieces("t", 5, &|i| if i == 3 { fail("t: piece 3") } else { Ok(i) }, runner);
            assert_eq!(failing, fail("t: piece 3"));
            let panicking = map_pieces("t", 5, &|i| if i == 1 { panic!("deliberate") } else { Ok(i) }, runner);
            assert_eq!(panicking, fail("t: a piece panicked"));
        }
    }

    /// Each piece on a thread of its own, started in order.
    fn each_on_a_thread(pieces: usize, work: &(dyn Fn(usize) + Sync)) -> Result<(), worker_pool::PiecePanicked> {
        let panicked = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            for piece in 0..pieces {
                let panicked = &panicked;
                scope.spawn(move || {
                    if ncfilters_runtime::ffi_boundary::piece_panicked(|| work(piece)) {
                        panicked.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                });
            }
        });
        match panicked.into_inner() {
            true => Err(worker_pool::PiecePanicked),
            false => Ok(()),
        }
    }

    /// Runs the pieces on this thread, the last first.
    fn backwards(pieces: usize, work: &(dyn Fn(usize) + Sync)) -> Result<(), worker_pool::PiecePanicked> {
        let panicked =
            (0..pieces).rev().filter(|&piece| ncfilters_runtime::ffi_boundary::piece_panicked(|| work(piece)));
        match panicked.count() {
            0 => Ok(()),
            _ => Err(worker_pool::PiecePanicked),
        }
    }

    #[test]
    fn map_in_order_consumes_in_order_and_holds_few_pieces() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let runners = [worker_pool::run as worker_pool::Runner, worker_pool::run_serially, each_on_a_thread, backwards];
        for (index, runner) in runners.into_iter().enumerate() {
            let (held, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            // The first piece is the slowest: without the bound the others would all finish and
            // wait for it.
            let produce = |piece: usize| {
                if piece == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                most.fetch_max(held.fetch_add(1, SeqCst) + 1, SeqCst);
                Ok(piece)
            };
            let mut consumed = Vec::new();
            let mut consume = |piece: usize| {
                held.fetch_sub(1, SeqCst);
                consumed.push(piece);
                Ok(())
            };
            assert_eq!(map_in_order("t", 40, &produce, &mut consume, runner), Ok(()));
            assert_eq!(consumed, (0..40).collect::<Vec<_>>());
            // The pool starts the pieces in order; threads of their own may not, and backwards
            // every piece is held until the first has run.
            let bound = if index < 2 { 2 * worker_pool::threads() } else { 40 };
            assert!(most.load(SeqCst) <= bound, "runner {index}: {} pieces held, over {bound}", most.load(SeqCst));
        }
    }

    #[test]
    fn map_in_order_stops_at_failures_and_panics_and_retries_out_of_memory() {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        for runner in [worker_pool::run as worker_pool::Runner, worker_pool::run_serially, each_on_a_thread, backwards]
        {
            let mut consumed = Vec::new();
            let failing = map_in_order(
                "t",
                30,
                &|piece| if piece == 3 { fail("t: piece 3") } else { Ok(piece) },
                &mut |piece| {
                    consumed.push(piece);
                    Ok(())
                },
                runner,
            );
            assert_eq!(failing, fail("t: piece 3"));
            assert!(consumed.len() <= 3 && consumed.iter().copied().eq(0..consumed.len()), "{consumed:?}");
            let refused =
                map_in_order("t", 30, &Ok, &mut |piece| if piece == 7 { fail("t: 7") } else { Ok(()) }, runner);
            assert_eq!(refused, fail("t: 7"));
            let panicking = map_in_order(
                "t",
                30,
                &|piece| if piece == 1 { panic!("deliberate") } else { Ok(piece) },
                &mut |_| Ok(()),
                runner,
            );
            assert_eq!(panicking, fail("t: a piece panicked"));
            let short = AtomicBool::new(true);
            let mut consumed = Vec::new();
            let once_short = |piece| match piece == 5 && short.swap(false, SeqCst) {
                true => fail(OUT_OF_MEMORY),
                false => Ok(piece),
            };
            assert_eq!(
                map_in_order(
                    "t",
                    30,
                    &once_short,
                    &mut |piece| {
                        consumed.push(piece);
                        Ok(())
                    },
                    runner
                ),
                Ok(())
            );
            assert_eq!(consumed, (0..30).collect::<Vec<_>>(), "consumed once each, in order");
        }
    }
}

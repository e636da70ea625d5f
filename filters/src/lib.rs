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
use std::sync::Mutex;

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
}

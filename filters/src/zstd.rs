// SPDX-License-Identifier: BSD-3-Clause
//! zstd (filter 32015): one plain zstd frame with its content size, level `(int)params[0]`
//! (negative levels travel as their 32-bit pattern), written with libzstd's block pre-splitter
//! off (see [`crate::zstd_context`]). Chunks over [`MULTITHREAD_ABOVE`] are compressed as jobs of
//! [`JOB_SIZE`] on all cores and joined into one frame ([`encode_in_jobs`]), the same bytes
//! whatever the thread count. Contexts are reused per thread. Unlike 4.9.0's H5Zzstd (netcdf-c
//! #3370), the input length is `nbytes`, not `*buf_size`; frames without a content size decode too.
#![forbid(unsafe_code)]

use super::{fail, FilterResult};
use crate::c_heap::CVec;
use crate::worker_pool;
use crate::zstd_context::{Compressor, COMPRESSES_JOBS, JOB_SIZE};
use std::cell::RefCell;
use zstd::zstd_safe::{self, DCtx, InBuffer, OutBuffer};

thread_local! {
    static COMPRESSOR: RefCell<Option<Compressor>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

fn error(what: &str, code: usize) -> super::FilterError {
    super::FilterError(format!("zstd: {what} ({})", zstd_safe::get_error_name(code)))
}

/// The level of the single parameter 4.9.0 requires.
pub fn level(params: &[u32]) -> FilterResult<i32> {
    match params {
        [level] => Ok(*level as i32),
        _ => fail(format!("zstd takes 1 parameter, not {}", params.len())),
    }
}

/// Chunks larger than this are compressed as several jobs on all cores: with fewer than two jobs
/// of [`JOB_SIZE`] there is nothing to share.
pub const MULTITHREAD_ABOVE: usize = JOB_SIZE;

pub fn encode(level: i32, input: &[u8]) -> FilterResult<CVec> {
    if input.len() > MULTITHREAD_ABOVE && COMPRESSES_JOBS {
        if worker_pool::threads() == 1 {
            return encode_jobs_in_place(level, input);
        }
        return encode_in_jobs(level, input, worker_pool::run);
    }
    let mut out = super::output_uninit(zstd_safe::compress_bound(input.len()))?;
    with_compressor(|compressor| {
        compressor
            .compress(level, input, &mut out, input.len() > MULTITHREAD_ABOVE)
            .map_err(|code| error("compression failed", code))
    })?;
    Ok(out)
}

/// `work` with this thread's compression context, made on first use.
fn with_compressor<T>(work: impl FnOnce(&mut Compressor) -> FilterResult<T>) -> FilterResult<T> {
    COMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.as_ref().is_none_or(|compressor| !compressor.made_here()) {
            *slot =
                Some(Compressor::new().ok_or_else(|| super::FilterError("zstd: out of memory for a context".into()))?);
        }
        work(slot.as_mut().expect("set just above"))
    })
}

/// A zstd frame's magic number, as it is written.
const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A job frame's header: the magic number, a descriptor of 0 (no content size, checksum or
/// dictionary; a window, not a single segment) and the window's byte.
const JOB_HEADER: usize = 6;

/// One frame of `input` at `level`, made of [`JOB_SIZE`] jobs compressed by `runner` each on its
/// own, as libzstd's multithreaded mode makes its frames but straight from the caller's buffer.
/// Each job's blocks join the frame as soon as those before them have, so only the jobs in flight
/// are held twice. The header is the frame's: its content size, and the largest window of the
/// jobs (no job refers to another's bytes). The bytes depend on the input and level only, not on
/// which thread ran which job, nor on [`encode_jobs_in_place`].
fn encode_in_jobs(level: i32, input: &[u8], runner: worker_pool::Runner) -> FilterResult<CVec> {
    let jobs = input.len().div_ceil(JOB_SIZE);
    let mut out = frame_buffer(input)?;
    let mut window = 0;
    let compress_job = |number: usize| {
        let job = &input[number * JOB_SIZE..((number + 1) * JOB_SIZE).min(input.len())];
        let mut frame = super::output_uninit(zstd_safe::compress_bound(job.len()))?;
        with_compressor(|compressor| {
            compressor.compress_job(level, job, &mut frame).map_err(|code| error("compression failed", code))
        })?;
        let job_window = chain_job(frame.as_mut_slice(), number + 1 == jobs)?;
        Ok((frame, job_window))
    };
    let mut join_job = |(frame, job_window): (CVec, u8)| {
        window = window.max(job_window);
        out.extend_from_slice(&frame.as_slice()[JOB_HEADER..]).map_err(super::out_of_memory)
    };
    super::map_in_order("zstd", jobs, &compress_job, &mut join_job, runner)?;
    Ok(with_frame_header(out, input.len(), window))
}

/// [`encode_in_jobs`]' frame, on the calling thread alone, each job written where its blocks
/// belong: its frame's header lands on the 6 bytes before them, which are put back after it.
fn encode_jobs_in_place(level: i32, input: &[u8]) -> FilterResult<CVec> {
    let mut out = frame_buffer(input)?;
    let jobs = input.len().div_ceil(JOB_SIZE);
    let mut window = 0;
    with_compressor(|compressor| {
        for (number, job) in input.chunks(JOB_SIZE).enumerate() {
            let start = out.len() - JOB_HEADER;
            let mut covered = [0; JOB_HEADER];
            covered.copy_from_slice(&out.as_slice()[start..]);
            out.set_len(start);
            compressor.compress_job(level, job, &mut out).map_err(|code| error("compression failed", code))?;
            let frame = &mut out.as_mut_slice()[start..];
            window = window.max(chain_job(frame, number + 1 == jobs)?);
            frame[..JOB_HEADER].copy_from_slice(&covered);
        }
        Ok(())
    })?;
    Ok(with_frame_header(out, input.len(), window))
}

/// The buffer a frame of `input`'s jobs is written into: room for every job's frame, after the
/// frame header's bytes, which [`with_frame_header`] fills once the window is known.
fn frame_buffer(input: &[u8]) -> FilterResult<CVec> {
    let header_size = frame_header(input.len() as u64, 0).len();
    let room = input.chunks(JOB_SIZE).map(|job| zstd_safe::compress_bound(job.len())).sum::<usize>();
    let mut out = super::output_uninit(header_size + room)?;
    out.extend_from_slice(&[0; 14][..header_size]).map_err(super::out_of_memory)?;
    Ok(out)
}

/// `out` from [`frame_buffer`], its first bytes now the header of a frame of `content_size` bytes
/// whose largest window is `window`'s.
fn with_frame_header(mut out: CVec, content_size: usize, window: u8) -> CVec {
    let header = frame_header(content_size as u64, window);
    out.as_mut_slice()[..header.len()].copy_from_slice(&header);
    out
}

/// Checks that `frame` is a job's frame as [`Compressor::compress_job`] writes it, and returns
/// its window's byte; unless it is the `last` job, its last block is no longer marked last, so
/// that the next job's blocks may follow it.
fn chain_job(frame: &mut [u8], last: bool) -> FilterResult<u8> {
    if frame.len() < JOB_HEADER || frame[..4] != MAGIC || frame[4] != 0 {
        return fail("zstd: a job's frame has an unexpected header");
    }
    let window = frame[5];
    let mut at = JOB_HEADER;
    let last_block = loop {
        let Some(&[low, middle, high]) = frame.get(at..at + 3) else {
            return fail("zstd: a job's frame ends inside its blocks");
        };
        let word = u32::from(low) | u32::from(middle) << 8 | u32::from(high) << 16;
        let content = match (word >> 1) & 3 {
            0 | 2 => (word >> 3) as usize, // raw or compressed: that many bytes
            1 => 1,                        // one byte repeated
            _ => return fail("zstd: a job's frame has a reserved block type"),
        };
        let end = at + 3 + content;
        if end > frame.len() {
            return fail("zstd: a job's frame ends inside its blocks");
        }
        if word & 1 == 1 {
            if end != frame.len() {
                return fail("zstd: a job's frame has bytes after its last block");
            }
            break at;
        }
        at = end;
    };
    if !last {
        frame[last_block] &= !1;
    }
    Ok(window)
}

/// The header of a frame of `content_size` bytes (over 255) whose window is `window`'s: no
/// checksum or dictionary, the size in 4 bytes, or 8 from 2^32 - 1 on, as libzstd writes it.
fn frame_header(content_size: u64, window: u8) -> Vec<u8> {
    let (size_flag, size_bytes) = if content_size < u64::from(u32::MAX) { (2u8, 4) } else { (3, 8) };
    let mut header = MAGIC.to_vec();
    header.extend([size_flag << 6, window]);
    header.extend_from_slice(&content_size.to_le_bytes()[..size_bytes]);
    header
}

/// A declared content size is trusted for a one-shot decode up to this ratio to the input;
/// beyond it (a decompression bomb declares gigabytes in a few bytes) the output buffer grows
/// only as data actually decodes.
const TRUSTED_RATIO: usize = 256;

/// Decodes one frame, producing at most `limit` bytes.
pub fn decode(input: &[u8], limit: usize) -> FilterResult<CVec> {
    match zstd_safe::get_frame_content_size(input) {
        Err(_) => fail("zstd: not a zstd frame"),
        Ok(Some(size)) if size > limit as u64 => fail(format!("zstd: frame of {size} bytes exceeds {limit}")),
        Ok(Some(size)) if size as usize <= input.len().saturating_mul(TRUSTED_RATIO).max(1 << 20) => {
            DECOMPRESSOR.with(|slot| {
                let mut slot = slot.borrow_mut();
                let dctx = slot.get_or_insert_with(DCtx::create);
                let mut out = super::output_uninit(size as usize)?;
                let written = dctx.decompress(&mut out, input).map_err(|code| error("corrupt frame", code))?;
                if written != size as usize {
                    return fail(format!("zstd: frame gave {written} bytes, its header says {size}"));
                }
                Ok(out)
            })
        }
        Ok(Some(size)) => decode_streaming(input, limit.min(size as usize)),
        Ok(None) => decode_streaming(input, limit),
    }
}

/// The smallest window limit: 8 MiB, the window libzstd's levels up to 19 write a frame with
/// when its size is not known in advance, so that such frames decode whatever the chunk's size.
const WINDOW_LOG_FLOOR: u32 = 23;

/// libzstd's default limit on a frame's window, `ZSTD_WINDOWLOG_LIMIT_DEFAULT` (zstd.h, 128 MiB;
/// in its experimental section, so not in zstd-sys' default bindings).
const WINDOW_LOG_LIMIT_DEFAULT: u32 = 27;

/// The window a streamed decode of at most `limit` bytes may reserve, as a power of two: what
/// holds `limit` bytes, at least [`WINDOW_LOG_FLOOR`], at most libzstd's own default (128 MiB).
/// Without it a few-byte frame could make libzstd reserve 128 MiB for a chunk of a few kilobytes.
fn window_log_max(limit: usize) -> u32 {
    let holds_limit = usize::BITS - limit.saturating_sub(1).leading_zeros();
    holds_limit.clamp(WINDOW_LOG_FLOOR, WINDOW_LOG_LIMIT_DEFAULT)
}

/// A frame without a content size: stream into a growing buffer up to `limit`.
fn decode_streaming(input: &[u8], limit: usize) -> FilterResult<CVec> {
    DECOMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        let dctx = slot.get_or_insert_with(DCtx::create);
        dctx.reset(zstd_safe::ResetDirective::SessionOnly).map_err(|code| error("reset failed", code))?;
        let window_log = window_log_max(limit);
        dctx.set_parameter(zstd_safe::DParameter::WindowLogMax(window_log))
            .map_err(|code| error("setting the window limit failed", code))?;
        let too_large =
            (zstd_safe::zstd_sys::ZSTD_ErrorCode::ZSTD_error_frameParameter_windowTooLarge as usize).wrapping_neg();
        let failed = |code: usize| {
            if code == too_large {
                super::FilterError(format!(
                    "zstd: the frame needs a window over {} bytes, more than a chunk of at most {limit} bytes may use",
                    1u64 << window_log
                ))
            } else {
                error("corrupt frame", code)
            }
        };
        super::decode_in_steps("zstd", input, 4, limit, |unread, room| {
            let mut source = InBuffer::around(unread);
            let mut sink = OutBuffer::around(room);
            let remaining = dctx.decompress_stream(&mut sink, &mut source).map_err(failed)?;
            Ok(super::Stepped { ended: remaining == 0, read: source.pos(), written: sink.pos() })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_levels_and_frames_without_size() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        for lvl in [-5, 1, 3, 19] {
            let packed = encode(lvl, &data).unwrap();
            assert_eq!(&packed.as_slice()[..4], &[0x28, 0xb5, 0x2f, 0xfd], "zstd magic");
            assert_eq!(decode(packed.as_slice(), usize::MAX).unwrap().as_slice(), &data[..]);
        }
        // A streamed frame has no content size.
        let mut streamed = Vec::new();
        let mut encoder = zstd::stream::Encoder::new(&mut streamed, 3).unwrap();
        std::io::Write::write_all(&mut encoder, &data).unwrap();
        encoder.finish().unwrap();
        assert!(matches!(zstd_safe::get_frame_content_size(&streamed), Ok(None)));
        assert_eq!(decode(&streamed, usize::MAX).unwrap().as_slice(), &data[..]);
        assert!(decode(&streamed, 1024).is_err(), "capped");
        assert!(decode(&streamed[..streamed.len() - 10], usize::MAX).is_err(), "truncated");
        let packed = encode(1, &data).unwrap();
        assert!(decode(packed.as_slice(), 1024).is_err(), "declared size over the cap");
        // A bomb: 64 MiB of zeros in a few hundred bytes decodes by growing, not by trusting the header.
        let zeros = vec![0u8; 64 << 20];
        let bomb = encode(19, &zeros).unwrap();
        assert!(bomb.len() * TRUSTED_RATIO < zeros.len());
        assert_eq!(decode(bomb.as_slice(), usize::MAX).unwrap().len(), zeros.len());
        assert!(decode(bomb.as_slice(), 1 << 20).is_err());
        assert!(decode(&packed.as_slice()[..packed.len() - 3], usize::MAX).is_err());
        assert!(decode(b"definitely not zstd", usize::MAX).is_err());
        assert_eq!(level(&[(-3i32) as u32]), Ok(-3));
    }

    /// Float-like data (slowly varying values, noisy low bytes), `values` of them.
    fn floats(values: u32) -> Vec<u8> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        (0..values)
            .flat_map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ((i as f32 * 0.001).sin() * 100.0 + (state % 1000) as f32 * 0.0001).to_le_bytes()
            })
            .collect()
    }

    /// Runs each piece on a thread of its own, started in order, the later ones first.
    fn last_first(pieces: usize, work: &(dyn Fn(usize) + Sync)) -> Result<(), worker_pool::PiecePanicked> {
        std::thread::scope(|scope| {
            for piece in 0..pieces {
                scope.spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(20 * (pieces - piece) as u64));
                    work(piece)
                });
            }
        });
        Ok(())
    }

    /// Runs every piece twice, as a run that ran out of memory is run again on the calling thread.
    fn twice(pieces: usize, work: &(dyn Fn(usize) + Sync)) -> Result<(), worker_pool::PiecePanicked> {
        (0..pieces).chain(0..pieces).for_each(work);
        Ok(())
    }

    /// Large chunks: one frame of jobs, which decodes (whole, and streamed within a window of
    /// one job), carries the chunk's size, is the same bytes on any thread count and in any order
    /// of the jobs, and is within
    /// 2 % of the single frame's size.
    #[test]
    fn jobs_make_one_frame_whatever_the_threads() {
        if !COMPRESSES_JOBS {
            return; // a system libzstd: its multithreaded frames (zstd_context's tests)
        }
        let mut noise = 0x9e37_79b9_7f4a_7c15u64;
        let random: Vec<u8> = (0..(3 << 20) / 8)
            .flat_map(|_| {
                noise ^= noise << 13;
                noise ^= noise >> 7;
                noise ^= noise << 17;
                noise.to_le_bytes()
            })
            .collect();
        // Each job starts with a run, which a context that still assumed libzstd's initial repeat
        // offsets would code as "the last offset", and ends with a copy from 5000 bytes back, so
        // that the decoder's last offset is another (in compressed blocks: a block stored raw
        // changes no offset).
        let mut repeats = floats(3 << 18);
        for job in repeats.chunks_mut(JOB_SIZE) {
            job[0] = 1;
            job[1..200].fill(0);
            let end = job.len();
            job.copy_within(end - 5300..end - 5100, end - 300);
        }
        let cases = [
            ("repeats at the jobs' starts", repeats),
            ("floats", floats((5 << 18) + 31)),
            ("one byte over a job", floats(1 << 18).into_iter().chain([7]).collect()),
            ("zeros", vec![0u8; 3 << 20]),
            ("random", random),
        ];
        for (name, data) in &cases {
            for level in [-3, 1, 3, 9] {
                let on_all = encode_in_jobs(level, data, worker_pool::run).unwrap();
                let serial = encode_in_jobs(level, data, worker_pool::run_serially).unwrap();
                assert!(on_all.as_slice() == serial.as_slice(), "{name}, level {level}: the threads changed the bytes");
                for (runner, how) in [(last_first as worker_pool::Runner, "last job first"), (twice, "run twice")] {
                    let other = encode_in_jobs(level, data, runner).unwrap();
                    assert!(on_all.as_slice() == other.as_slice(), "{name}, level {level}: {how}, other bytes");
                }
                let in_place = encode_jobs_in_place(level, data).unwrap();
                assert!(on_all.as_slice() == in_place.as_slice(), "{name}, level {level}: in place, other bytes");
                assert!(encode(level, data).unwrap().as_slice() == on_all.as_slice());
                assert_eq!(zstd_safe::get_frame_content_size(on_all.as_slice()).ok(), Some(Some(data.len() as u64)));
                let decoded = decode(on_all.as_slice(), usize::MAX).unwrap();
                assert!(decoded.as_slice() == &data[..], "{name}, level {level}: decoded other bytes");
                let mut streamed = zstd::stream::Decoder::new(on_all.as_slice()).unwrap();
                streamed.window_log_max(20).unwrap();
                let mut again = Vec::new();
                std::io::Read::read_to_end(&mut streamed, &mut again).unwrap();
                assert!(again == *data, "{name}, level {level}: the streamed decode differs");
                if *name == "floats" {
                    let mut single = super::super::output_uninit(zstd_safe::compress_bound(data.len())).unwrap();
                    with_compressor(|c| c.compress(level, data, &mut single, false).map_err(|code| error("", code)))
                        .unwrap();
                    assert!(
                        on_all.len() * 100 <= single.len() * 102,
                        "{name}, level {level}: {} vs {}",
                        on_all.len(),
                        single.len()
                    );
                }
            }
        }
    }

    /// What is not a job frame as compress_job writes it is an error, not a panic or a frame.
    #[test]
    fn a_job_frame_is_checked() {
        let job = |bytes: &[u8], last: bool| {
            let mut frame = bytes.to_vec();
            chain_job(&mut frame, last).map(|window| (frame, window))
        };
        // A raw block of 2 bytes, last, after the header of window byte 0x50.
        let good = [0x28, 0xb5, 0x2f, 0xfd, 0, 0x50, 0x11, 0, 0, b'a', b'b'];
        let (frame, window) = job(&good, false).unwrap();
        assert_eq!((frame[6], window), (0x10, 0x50), "the last block is no longer last");
        assert_eq!(job(&good, true).unwrap().0, good, "the last job's frame is left as it is");
        for (bad, why) in [
            (&good[..5], "unexpected header"),
            (&[0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x50, 0x11, 0, 0, b'a', b'b'][..], "unexpected header"),
            (&good[..8], "ends inside its blocks"),
            (&good[..10], "ends inside its blocks"),
            (&[&good[..], b"c"].concat()[..], "bytes after its last block"),
            (&[0x28, 0xb5, 0x2f, 0xfd, 0, 0x50, 0x07, 0, 0][..], "reserved block type"),
            (&[0x28, 0xb5, 0x2f, 0xfd, 0, 0x50, 0x10, 0, 0, b'a', b'b'][..], "ends inside its blocks"),
        ] {
            let message = job(bad, false).unwrap_err().0;
            assert!(message.contains(why), "{bad:?}: {message}");
        }
        assert_eq!(frame_header(300 << 20, 0x50)[4..], [0x80, 0x50, 0, 0, 0xc0, 0x12]);
        assert_eq!(frame_header(u64::from(u32::MAX), 0x58).len(), 6 + 8);
    }

    /// A frame without a content size that asks for a larger window than its chunk's limit
    /// allows is refused before libzstd reserves the window; a default frame still decodes.
    #[test]
    fn the_window_follows_the_decode_limit() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let streamed = |window_log: u32| {
            let mut frame = Vec::new();
            let mut encoder = zstd::stream::Encoder::new(&mut frame, 3).unwrap();
            encoder.set_parameter(zstd_safe::CParameter::WindowLog(window_log)).unwrap();
            std::io::Write::write_all(&mut encoder, &data).unwrap();
            encoder.finish().unwrap();
            assert!(matches!(zstd_safe::get_frame_content_size(&frame), Ok(None)));
            frame
        };
        let wide = streamed(27);
        let refused = decode(&wide, 1 << 20).unwrap_err().0;
        assert!(refused.contains("window over 8388608 bytes"), "{refused}");
        assert_eq!(decode(&wide, 1 << 27).unwrap().as_slice(), &data[..], "a chunk that may use the window");
        assert_eq!(decode(&streamed(23), 1 << 20).unwrap().as_slice(), &data[..], "the floor's window");
        assert_eq!(window_log_max(0), 23);
        assert_eq!(window_log_max((1 << 24) + 1), 25);
        assert_eq!(window_log_max(usize::MAX), 27);
        assert!(level(&[]).is_err() && level(&[1, 2]).is_err());
    }
}

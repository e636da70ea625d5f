// SPDX-License-Identifier: BSD-3-Clause
//! zstd (filter 32015): one plain zstd frame with its content size, level `(int)params[0]`
//! (negative levels travel as their 32-bit pattern), written with libzstd's block pre-splitter
//! off (see [`crate::zstd_context`]). Chunks over [`MULTITHREAD_ABOVE`] are libzstd
//! multithreaded frames, the same bytes whatever the thread count. Contexts are reused per thread. Unlike
//! 4.9.0's H5Zzstd (netcdf-c #3370), the input length is `nbytes`, not `*buf_size`; frames
//! without a content size decode too.
#![forbid(unsafe_code)]

use super::{fail, FilterResult};
use crate::c_heap::CVec;
use crate::zstd_context::Compressor;
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
/// of [`crate::zstd_context::JOB_SIZE`] there is nothing to share.
pub const MULTITHREAD_ABOVE: usize = crate::zstd_context::JOB_SIZE;

pub fn encode(level: i32, input: &[u8]) -> FilterResult<CVec> {
    let mut out = super::output_uninit(zstd_safe::compress_bound(input.len()))?;
    COMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.as_ref().is_none_or(|compressor| !compressor.made_here()) {
            *slot =
                Some(Compressor::new().ok_or_else(|| super::FilterError("zstd: out of memory for a context".into()))?);
        }
        let compressor = slot.as_mut().expect("set just above");
        compressor
            .compress(level, input, &mut out, input.len() > MULTITHREAD_ABOVE)
            .map_err(|code| error("compression failed", code))?;
        Ok(out)
    })
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
        let mut out = super::decode_buffer(input.len(), 4, limit)?;
        let mut source = InBuffer::around(input);
        loop {
            let written = out.len();
            let (remaining, pos) = {
                let mut sink = OutBuffer::around_pos(out.whole_mut(), written);
                let remaining = dctx.decompress_stream(&mut sink, &mut source).map_err(failed)?;
                (remaining, sink.pos())
            };
            out.set_len(pos);
            if remaining == 0 {
                return Ok(out);
            }
            super::grow_decoded("zstd", &mut out, source.pos() == input.len(), limit)?;
        }
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

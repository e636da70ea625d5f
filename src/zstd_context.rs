//! A zstd compression context with the one setting zstd-safe does not expose: libzstd 1.5.7's
//! block pre-splitter turned off (`ZSTD_c_blockSplitterLevel` = 1, experimental parameter 20).
//!
//! Why: from 1.5.7 on, levels 1–4 split blocks before matching by default. On real float32
//! data (ferret-datasets) that makes level 3 encode about 30 % and decode about 20 % slower
//! for output 0.4–1 % smaller. With it off, the output is byte-for-byte that of libzstd 1.5.4,
//! which Debian 12's netcdf-c C plugin uses. A libzstd older than 1.5.7 (linked with
//! `ZSTD_SYS_USE_PKG_CONFIG`) refuses the parameter and has nothing to turn off.

use crate::c_heap::CVec;
use std::ptr::NonNull;
use zstd::zstd_safe::zstd_sys;

/// `ZSTD_c_blockSplitterLevel`'s "no splitting".
const NO_BLOCK_SPLITTING: i32 = 1;

pub struct Compressor {
    context: NonNull<zstd_sys::ZSTD_CCtx>,
}

// SAFETY: a ZSTD_CCtx may move between threads; `&mut self` keeps its use to one at a time.
unsafe impl Send for Compressor {}

impl Compressor {
    /// A context, or `None` when libzstd cannot allocate one.
    pub fn new() -> Option<Self> {
        // SAFETY: ZSTD_createCCtx has no preconditions; it returns NULL on failure.
        let context = NonNull::new(unsafe { zstd_sys::ZSTD_createCCtx() })?;
        let compressor = Compressor { context };
        // Refused by libzstd < 1.5.7, which never splits blocks early: nothing to do then.
        let _ = compressor.set(zstd_sys::ZSTD_cParameter::ZSTD_c_experimentalParam20, NO_BLOCK_SPLITTING);
        Some(compressor)
    }

    fn set(&self, parameter: zstd_sys::ZSTD_cParameter, value: i32) -> Result<(), usize> {
        // SAFETY: the context is live (owned by self); setting a parameter has no other input.
        let code = unsafe { zstd_sys::ZSTD_CCtx_setParameter(self.context.as_ptr(), parameter, value) };
        check(code).map(|_| ())
    }

    /// Compresses `input` at `level` into `out` (one frame with its content size, as
    /// `ZSTD_compressCCtx` writes); `out` must be empty. Err holds libzstd's error code.
    pub fn compress(&mut self, level: i32, input: &[u8], out: &mut CVec) -> Result<(), usize> {
        assert!(out.is_empty(), "zstd_context::Compressor::compress into a used buffer");
        self.set(zstd_sys::ZSTD_cParameter::ZSTD_c_compressionLevel, level)?;
        let room = out.capacity();
        let destination = out.whole_uninit().as_mut_ptr();
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
        let written = check(code)?;
        // SAFETY: ZSTD_compress2 succeeded, so it wrote the first `written` (<= room) bytes.
        unsafe { out.assume_init_len(written) };
        Ok(())
    }
}

impl Drop for Compressor {
    fn drop(&mut self) {
        // SAFETY: the context came from ZSTD_createCCtx and is freed once, here.
        unsafe { zstd_sys::ZSTD_freeCCtx(self.context.as_ptr()) };
    }
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
            compressor.compress(level, &data, &mut out).unwrap();
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
        Compressor::new().unwrap().compress(3, &data, &mut out).unwrap();
        let default = zstd::bulk::compress(&data, 3).unwrap();
        assert_ne!(out.as_slice(), &default[..], "libzstd {}", zstd::zstd_safe::version_string());
    }

    #[test]
    fn a_full_buffer_is_an_error_not_an_overrun() {
        let data = floats();
        let mut out = CVec::with_capacity_uninit(64).unwrap();
        assert!(Compressor::new().unwrap().compress(3, &data, &mut out).is_err());
        assert!(out.is_empty());
    }
}

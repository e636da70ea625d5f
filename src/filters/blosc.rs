//! blosc (filter 32001): c-blosc 1.x frames, through the system's libblosc, loaded on first use
//! (the reference implementation of the format, so frames are exactly what c-blosc reads and writes).
//!
//! Parameters as H5Zblosc.c reads them: `cd[2]` type size, `cd[4]` level (default 5),
//! `cd[5]` shuffle (default 1), `cd[6]` compressor code (default blosclz when absent). They are
//! checked on encode only: a frame says how it was made, so decoding needs none of them (as
//! H5Zblosc.c ignores the level and shuffle on read, this decodes whatever parameters the file's
//! writer left).
//! Unlike 4.9.0 (netcdf-c #3075), a chunk blosc cannot shrink is stored (blosc's memcpy frame)
//! instead of failing; the context API keeps no global state between threads.

use super::{fail, output, FilterResult};
use crate::c_heap::CVec;
use crate::standard_filters::BLOSC_COMPRESSORS;
use std::os::raw::c_int;

/// `BLOSC_MAX_OVERHEAD`: a frame's header; with this much room compression cannot fail.
const MAX_OVERHEAD: usize = 16;
/// `BLOSC_MAX_BUFFERSIZE`.
const MAX_BUFFER: usize = i32::MAX as usize - MAX_OVERHEAD;

/// The settings H5Zblosc.c derives from `cd_values`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub type_size: usize,
    pub level: u32,
    pub shuffle: u32,
    pub compressor: usize,
}

pub fn settings(params: &[u32]) -> FilterResult<Settings> {
    if params.len() < 3 {
        return fail(format!("blosc needs at least 3 parameters, not {}", params.len()));
    }
    let settings = Settings {
        type_size: params[2] as usize,
        level: params.get(4).copied().unwrap_or(5),
        shuffle: params.get(5).copied().unwrap_or(1),
        compressor: params.get(6).map_or(0, |&c| c as usize),
    };
    if settings.level > 9 {
        return fail(format!("blosc level {} is not 0..9", settings.level));
    }
    if settings.shuffle > 2 {
        return fail(format!("blosc shuffle {} is not 0, 1 or 2", settings.shuffle));
    }
    if settings.compressor >= BLOSC_COMPRESSORS.len() {
        return fail(format!("unknown blosc compressor code {}", settings.compressor));
    }
    Ok(settings)
}

pub fn encode(settings: Settings, input: &[u8]) -> FilterResult<CVec> {
    if input.len() > MAX_BUFFER {
        return fail(format!("blosc cannot take a chunk of {} bytes", input.len()));
    }
    let blosc = super::native::blosc().map_err(super::FilterError)?;
    let mut out = output(input.len() + MAX_OVERHEAD)?;
    let room = out.capacity();
    // SAFETY: src holds input.len() bytes, dest has `room` writable bytes; the compressor name is
    // NUL-terminated; blosc writes at most destsize bytes.
    let written = unsafe {
        (blosc.compress_ctx)(
            settings.level as c_int,
            settings.shuffle as c_int,
            settings.type_size.max(1),
            input.len(),
            input.as_ptr().cast(),
            out.whole_mut().as_mut_ptr().cast(),
            room,
            BLOSC_COMPRESSORS[settings.compressor].as_ptr(),
            0,
            1,
        )
    };
    match usize::try_from(written) {
        Ok(n) if n > 0 && n <= room => {
            out.set_len(n);
            Ok(out)
        }
        _ => fail(format!("blosc compression failed ({written})")),
    }
}

/// The most a frame may expand, so that a corrupt header cannot make a reader allocate
/// gigabytes for a few bytes. zstd's RLE blocks, the most compressible of blosc's codecs, hold
/// 128 KiB in 4 bytes (32,768:1); c-blosc reaches 32,601:1 on 256 MiB of zeros in one block,
/// and 18,376:1 with the automatic block size H5Zblosc.c and ncfilters write with.
const MAX_RATIO: usize = 1 << 16;

/// Decodes one frame, producing at most `limit` bytes (and at most [`MAX_RATIO`] times its size).
pub fn decode(input: &[u8], limit: usize) -> FilterResult<CVec> {
    let blosc = super::native::blosc().map_err(super::FilterError)?;
    let mut size = 0usize;
    if input.len() < MAX_OVERHEAD {
        return fail("blosc: not a valid frame");
    }
    // SAFETY: validate reads the header within `cbytes` and checks the frame is consistent.
    if unsafe { (blosc.cbuffer_validate)(input.as_ptr().cast(), input.len(), &mut size) } != 0 {
        return fail("blosc: not a valid frame");
    }
    if size > limit {
        return fail(format!("blosc: frame of {size} bytes exceeds {limit}"));
    }
    let ratio_cap = input.len().saturating_mul(MAX_RATIO).max(1 << 20);
    if size > ratio_cap {
        return fail(format!(
            "blosc: a frame of {} bytes claims {size} bytes decoded, over {ratio_cap}: corrupt",
            input.len()
        ));
    }
    let mut out = output(size)?;
    // SAFETY: the frame was validated; dest has `size` writable bytes.
    let written =
        unsafe { (blosc.decompress_ctx)(input.as_ptr().cast(), out.whole_mut().as_mut_ptr().cast(), size.max(1), 1) };
    if written < 0 || written as usize != size {
        return fail(format!("blosc: corrupt frame ({written})"));
    }
    out.set_len(size);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_all_compressors_and_incompressible_chunks() {
        let smooth: Vec<u8> = (0..100_000u32).flat_map(|i| ((i / 10) as f32).to_le_bytes()).collect();
        let mut state = 1u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) as u8
            })
            .collect();
        for compressor in 0..6 {
            for shuffle in 0..3 {
                let s = Settings { type_size: 4, level: 5, shuffle, compressor };
                for data in [&smooth, &noise] {
                    let packed = encode(s, data).expect("an incompressible chunk is stored, not failed");
                    assert_eq!(decode(packed.as_slice(), usize::MAX).unwrap().as_slice(), &data[..]);
                }
            }
        }
        let packed = encode(Settings { type_size: 4, level: 5, shuffle: 1, compressor: 1 }, &smooth).unwrap();
        assert!(decode(packed.as_slice(), 1000).is_err(), "capped");
        assert!(decode(&packed.as_slice()[..packed.len() / 2], usize::MAX).is_err(), "truncated");
        assert!(decode(b"short", usize::MAX).is_err());
        assert_eq!(settings(&[0, 0, 4]).unwrap(), Settings { type_size: 4, level: 5, shuffle: 1, compressor: 0 });
        assert!(settings(&[2, 2, 4, 0, 5, 1, 9]).is_err(), "unknown compressor");
        assert!(settings(&[2, 2]).is_err());
    }

    /// Frames at the highest ratio blosc writes decode; a header claiming more is refused before
    /// any allocation.
    #[test]
    fn the_ratio_cap_takes_the_most_compressible_frames_and_refuses_more() {
        let zeros = vec![0u8; 64 << 20];
        let densest = Settings { type_size: 1, level: 9, shuffle: 0, compressor: 5 };
        let packed = encode(densest, &zeros).unwrap();
        assert!(packed.len() * 10_000 < zeros.len(), "{} bytes: not the densest case", packed.len());
        assert_eq!(decode(packed.as_slice(), usize::MAX).unwrap().len(), zeros.len());

        let small = encode(densest, &zeros[..4 << 20]).unwrap();
        let mut claims_more = small.as_slice().to_vec();
        let claimed = small.len() * MAX_RATIO + (1 << 20);
        claims_more[4..8].copy_from_slice(&(claimed as u32).to_le_bytes());
        let refused = decode(&claims_more, usize::MAX).unwrap_err().0;
        assert!(refused.contains("over") && refused.contains("corrupt"), "{refused}");
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//! szip (filter 4): `cd_values = {mask, pixels per block, bits per pixel, pixels per scanline}`;
//! a chunk is its uncompressed length (4 bytes, little-endian) followed by libaec's
//! `SZ_BufftoBuffCompress` output, as H5Zszip.c writes it. Compression fails, as there, when
//! the result would not be smaller than the input. libsz (libaec) is loaded on first use.

use super::native::{szip, SzParams};
use super::{fail, output_uninit, FilterResult};
use crate::c_heap::CVec;
use std::os::raw::c_int;

const SZ_OK: c_int = 0;

fn sz_params(params: &[u32]) -> FilterResult<SzParams> {
    let &[mask, pixels_per_block, bits_per_pixel, pixels_per_scanline] = params else {
        return fail(format!("szip takes 4 parameters, not {}", params.len()));
    };
    // What H5Pset_szip and set_local guarantee; libaec divides by some of these unchecked.
    if pixels_per_block % 2 != 0 || !(2..=32).contains(&pixels_per_block) {
        return fail(format!("szip: {pixels_per_block} pixels per block is not even and 2..32"));
    }
    if !(1..=32).contains(&bits_per_pixel) && bits_per_pixel != 64 {
        return fail(format!("szip: {bits_per_pixel} bits per pixel is not 1..32 or 64"));
    }
    if !(1..=4096).contains(&pixels_per_scanline) {
        return fail(format!("szip: {pixels_per_scanline} pixels per scanline is not 1..4096"));
    }
    let int = |v: u32| c_int::try_from(v).map_err(|_| super::FilterError(format!("szip parameter {v} out of range")));
    Ok(SzParams {
        options_mask: int(mask)?,
        bits_per_pixel: int(bits_per_pixel)?,
        pixels_per_block: int(pixels_per_block)?,
        pixels_per_scanline: int(pixels_per_scanline)?,
    })
}

pub fn encode(params: &[u32], input: &[u8]) -> FilterResult<CVec> {
    let mut sz = sz_params(params)?;
    let lib = szip().map_err(super::FilterError)?;
    let length = u32::try_from(input.len()).map_err(|_| super::FilterError("szip: chunk over 4 GiB".into()))?;
    // Uninitialised, as the C filter's: zeroing a block libaec overwrites cost about 1 % of encode.
    let mut out = output_uninit(input.len() + 4)?;
    let (header, body) = out.spare_uninit().split_at_mut(4);
    for (place, byte) in header.iter_mut().zip(length.to_le_bytes()) {
        place.write(byte);
    }
    let mut size = input.len();
    // SAFETY: body has input.len() writable bytes; libaec writes at most *dest_len of them.
    let status =
        unsafe { (lib.compress)(body.as_mut_ptr().cast(), &mut size, input.as_ptr().cast(), input.len(), &mut sz) };
    if status != SZ_OK || size > input.len() {
        return fail(format!("szip compression failed ({status}): parameters {params:?}, or data szip cannot shrink"));
    }
    // SAFETY: the header and the `size` bytes libaec reported are written.
    unsafe { out.assume_init_len(size + 4) };
    Ok(out)
}

/// The largest length header trusted for a chunk of `n` compressed bytes: libaec decodes into a
/// buffer of the full size, so a corrupt header must not make it allocate gigabytes. Real data
/// stay far below (a 4 MiB chunk of zeros compresses about 2,700 to 1 with 32-pixel blocks).
const MAX_RATIO: usize = 1 << 14;

/// Decodes a chunk, producing at most `limit` bytes (and at most [`MAX_RATIO`] times its size).
pub fn decode(params: &[u32], input: &[u8], limit: usize) -> FilterResult<CVec> {
    let mut sz = sz_params(params)?;
    let lib = szip().map_err(super::FilterError)?;
    let Some((length, body)) = input.split_first_chunk::<4>() else {
        return fail("szip: chunk shorter than its length header");
    };
    let length = u32::from_le_bytes(*length) as usize;
    let limit = limit.min(input.len().saturating_mul(MAX_RATIO).max(1 << 20));
    if length > limit {
        return fail(format!(
            "szip: a chunk of {} bytes claims {length} bytes decoded, over {limit}: corrupt",
            input.len()
        ));
    }
    let mut out = output_uninit(length)?;
    let mut size = length;
    // SAFETY: dest has `length` writable bytes; libaec writes at most *dest_len.
    let status = unsafe {
        (lib.decompress)(out.spare_uninit().as_mut_ptr().cast(), &mut size, body.as_ptr().cast(), body.len(), &mut sz)
    };
    if status != SZ_OK || size != length {
        return fail(format!("szip: corrupt chunk ({status}, {size} of {length} bytes)"));
    }
    // SAFETY: libaec reported all `length` bytes written.
    unsafe { out.assume_init_len(length) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NN | K13 | RAW | LSB, what H5Pset_szip + set_local store for little-endian data.
    const MASK: u32 = 169;

    #[test]
    fn round_trip_and_bad_chunks() {
        let data: Vec<u8> = (0..65_536u32).flat_map(|i| ((i / 16) as f32).to_le_bytes()).collect();
        let params = [MASK, 32, 32, 4096];
        let packed = encode(&params, &data).unwrap();
        assert_eq!(&packed.as_slice()[..4], &(data.len() as u32).to_le_bytes());
        assert_eq!(decode(&params, packed.as_slice(), usize::MAX).unwrap().as_slice(), &data[..]);
        assert!(decode(&params, packed.as_slice(), 1000).is_err(), "capped");
        let mut bomb = packed.as_slice()[..64].to_vec();
        bomb[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            decode(&params, &bomb, usize::MAX).unwrap_err().0.contains("corrupt"),
            "length header beyond the ratio cap"
        );
        assert!(decode(&params, &packed.as_slice()[..100], usize::MAX).is_err(), "truncated");
        assert!(decode(&params, &[1, 2], usize::MAX).is_err());
        assert!(encode(&[MASK, 32, 32], &data).is_err(), "3 parameters");
        // The most compressible chunk, 4 MiB of zeros, still decodes under the ratio cap.
        let zeros = vec![0u8; 4 << 20];
        let packed = encode(&[MASK, 32, 8, 4096], &zeros).unwrap();
        assert!(packed.len() * MAX_RATIO > zeros.len(), "{} bytes", packed.len());
        assert_eq!(decode(&[MASK, 32, 8, 4096], packed.as_slice(), usize::MAX).unwrap().as_slice(), &zeros[..]);
        assert!(encode(&[MASK, 31, 32, 4096], &data).is_err(), "odd pixels per block");
        // Parameters libaec would divide by zero on (found by h5z_szip_decode) fail cleanly.
        for bad in [[141, 0, 16, 64], [141, 8, 0, 64], [141, 8, 16, 0], [141, 64, 16, 64], [141, 8, 33, 64]] {
            assert!(decode(&bad, packed.as_slice(), usize::MAX).is_err(), "{bad:?}");
        }
    }
}

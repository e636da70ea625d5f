// SPDX-License-Identifier: BSD-3-Clause
//! Parameter vectors of the standard-filter helpers (`nc_def_var_bzip2` and friends).
#![forbid(unsafe_code)]

use crate::c_types::ids::{BLOSC_BITSHUFFLE, BLOSC_ZSTD};
use crate::error::{NcResult, NC_EFILTER, NC_EINVAL};
use std::ffi::CStr;

/// blosc's compressor names by code (`BLOSC_BLOSCLZ` … `BLOSC_ZSTD`, `blosc_compcode_to_compname`):
/// the codec's `"cname"` and the name the filter hands libblosc.
pub const BLOSC_COMPRESSORS: [&CStr; BLOSC_ZSTD as usize + 1] =
    [c"blosclz", c"lz4", c"lz4hc", c"snappy", c"zlib", c"zstd"];

/// bzip2 block size in units of 100k: 1..=9.
pub fn bzip2_params(level: i32) -> NcResult<[u32; 1]> {
    if !(1..=9).contains(&level) {
        return Err(NC_EINVAL);
    }
    Ok([level as u32])
}

/// Zstandard level: -131072..=22, stored as its 32-bit pattern.
pub fn zstd_params(level: i32) -> NcResult<[u32; 1]> {
    if !(-131072..=22).contains(&level) {
        return Err(NC_EINVAL);
    }
    Ok([level as u32])
}

/// The settings `nc_def_var_blosc` takes and `nc_inq_var_blosc` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloscSettings {
    pub subcompressor: u32,
    pub level: u32,
    pub blocksize: u32,
    pub addshuffle: u32,
}

/// The 7 HDF5 parameters `{0,0,0,blocksize,level,shuffle,subcompressor}`; the first
/// three are filled in by the filter's set_local (HDF5) or modify_parameters (NCZarr).
pub fn blosc_params(settings: BloscSettings) -> NcResult<[u32; 7]> {
    if settings.addshuffle > BLOSC_BITSHUFFLE || settings.subcompressor > BLOSC_ZSTD {
        return Err(NC_EINVAL);
    }
    Ok([0, 0, 0, settings.blocksize, settings.level, settings.addshuffle, settings.subcompressor])
}

pub fn blosc_settings(params: &[u32]) -> NcResult<BloscSettings> {
    match *params {
        [_, _, _, blocksize, level, addshuffle, subcompressor] => {
            Ok(BloscSettings { subcompressor, level, blocksize, addshuffle })
        }
        _ => Err(NC_EFILTER),
    }
}

/// `FILTER_BLOSC_VERSION` and `BLOSC_VERSION_FORMAT`: what blosc's set_local stores in `cd[0..2]`.
pub const BLOSC_FILTER_REVISION: u32 = 2;
pub const BLOSC_FORMAT_VERSION: u32 = 2;
/// `BLOSC_MAX_TYPESIZE`: larger types are shuffled as bytes.
const BLOSC_MAX_TYPESIZE: usize = 255;

/// blosc's local parameters (H5Zblosc.c's set_local, NCZstdfilters.c's modify_parameters):
/// `{revision, format, base type size, chunk bytes, level, shuffle, compressor}` from the user's
/// parameters, the type (and, for an array type, its element) size and the chunk's lengths.
pub fn blosc_local_params(
    user: &[u32],
    type_size: usize,
    base_type_size: usize,
    chunk_lens: &[u64],
) -> NcResult<Vec<u32>> {
    let mut params = user.to_vec();
    if params.len() < 4 {
        params.resize(4, 0);
    }
    let base = if base_type_size > BLOSC_MAX_TYPESIZE { 1 } else { base_type_size };
    let chunk_bytes = chunk_lens.iter().try_fold(type_size as u64, |bytes, &len| bytes.checked_mul(len));
    params[0] = BLOSC_FILTER_REVISION;
    params[1] = BLOSC_FORMAT_VERSION;
    params[2] = u32::try_from(base).map_err(|_| NC_EFILTER)?;
    params[3] = chunk_bytes.and_then(|b| u32::try_from(b).ok()).ok_or(NC_EFILTER)?;
    Ok(params)
}

/// The release's H5Zblosc.c gives c-blosc only the chunk's size as room, so a chunk it cannot
/// shrink fails (at level 0 every chunk).
pub const BLOSC_FAILS_INCOMPRESSIBLE: bool = cfg!(ncf_blosc_fails_incompressible);

/// blosc's HDF5 `set_local` parameters: [`blosc_local_params`], except that netcdf-c 4.9.3 on
/// stores 0, 0 in the first two slots (its NCZarr codec keeps the revision and format; the
/// decoder reads neither).
pub fn blosc_set_local_params(
    user: &[u32],
    type_size: usize,
    base_type_size: usize,
    chunk_lens: &[u64],
) -> NcResult<Vec<u32>> {
    let mut params = blosc_local_params(user, type_size, base_type_size, chunk_lens)?;
    if cfg!(ncf_blosc_zero_slots) {
        params[..2].fill(0);
    }
    Ok(params)
}

/// szip option-mask bits (H5Zpublic.h).
pub mod szip_mask {
    pub const ALLOW_K13: u32 = 1;
    pub const CHIP: u32 = 2;
    pub const LSB: u32 = 8;
    pub const MSB: u32 = 16;
    pub const RAW: u32 = 128;
    /// Nearest-neighbour coding: the tests' mask (the coding bits pass through unchanged).
    #[cfg(test)]
    pub const NN: u32 = 32;
}
/// `SZ_MAX_BLOCKS_PER_SCANLINE` and `SZ_MAX_PIXELS_PER_SCANLINE`.
const SZ_MAX_BLOCKS_PER_SCANLINE: u64 = 128;
const SZ_MAX_PIXELS_PER_SCANLINE: u64 = SZ_MAX_BLOCKS_PER_SCANLINE * 32;

/// What `H5Pset_szip` does to the user's mask (NCZarr repeats it in modify_parameters).
pub fn szip_user_mask(mask: u32) -> u32 {
    (mask & !szip_mask::CHIP) | szip_mask::ALLOW_K13 | szip_mask::RAW
}

/// szip's bits per pixel for a type of `bits` significant bits: over 24 is rounded up to 32 or 64.
pub fn szip_bits_per_pixel(bits: u64) -> u64 {
    match bits {
        25..=32 => 32,
        33..=64 => 64,
        _ => bits,
    }
}

/// szip's working parameters `{mask, pixels per block, bits per pixel, pixels per scanline}`
/// (H5Zszip.c's set_local, NCZhdf5filters.c's modify_parameters): `scanline` is the fastest
/// dimension's length, `npoints` the chunk's element count, `little_endian` the data's order.
pub fn szip_local_params(
    user: &[u32],
    bits_per_pixel: u64,
    scanline: u64,
    npoints: u64,
    little_endian: bool,
) -> NcResult<[u32; 4]> {
    let (mask, pixels_per_block) = match *user {
        [mask, ppb, ..] => (mask, u64::from(ppb)),
        _ => return Err(NC_EFILTER),
    };
    let most = pixels_per_block * SZ_MAX_BLOCKS_PER_SCANLINE;
    let scanline = if scanline < pixels_per_block {
        if npoints < pixels_per_block {
            crate::error::report(format_args!(
                "szip: {pixels_per_block} pixels per block is more than the chunk's {npoints} elements"
            ));
            return Err(NC_EFILTER);
        }
        most.min(npoints)
    } else if scanline <= SZ_MAX_PIXELS_PER_SCANLINE {
        most.min(scanline)
    } else {
        most
    };
    let order = if little_endian { szip_mask::LSB } else { szip_mask::MSB };
    let mask = (mask & !(szip_mask::LSB | szip_mask::MSB)) | order;
    let word = |v: u64| u32::try_from(v).map_err(|_| NC_EFILTER);
    Ok([mask, word(pixels_per_block)?, word(bits_per_pixel)?, word(scanline)?])
}

/// The level of a one-parameter filter (bzip2, zstd), as the signed value it was defined with.
pub fn single_level(params: &[u32]) -> NcResult<i32> {
    match *params {
        [level] => Ok(level as i32),
        _ => Err(NC_EFILTER),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(bzip2_params(0), Err(NC_EINVAL));
        assert_eq!(bzip2_params(9), Ok([9]));
        assert_eq!(zstd_params(-131072), Ok([(-131072i32) as u32]));
        assert_eq!(zstd_params(23), Err(NC_EINVAL));
        let s = BloscSettings { subcompressor: 5, level: 9, blocksize: 256, addshuffle: 2 };
        assert_eq!(blosc_settings(&blosc_params(s).unwrap()), Ok(s));
        assert_eq!(blosc_params(BloscSettings { subcompressor: 6, ..s }), Err(NC_EINVAL));
        assert_eq!(blosc_params(BloscSettings { addshuffle: 3, ..s }), Err(NC_EINVAL));
        assert_eq!(single_level(&[1, 2]), Err(NC_EFILTER));
        assert_eq!(single_level(&[(-5i32) as u32]), Ok(-5));
    }

    #[test]
    fn blosc_local() {
        let user = blosc_params(BloscSettings { subcompressor: 1, level: 5, blocksize: 0, addshuffle: 1 }).unwrap();
        assert_eq!(blosc_local_params(&user, 4, 4, &[10, 20]).unwrap(), [2, 2, 4, 800, 5, 1, 1]);
        assert_eq!(blosc_local_params(&[], 300, 300, &[2]).unwrap(), [2, 2, 1, 600]);
        assert_eq!(blosc_local_params(&user, 8, 8, &[1 << 20, 1 << 20]), Err(NC_EFILTER), "chunk over 4 GiB");
        let slots = if cfg!(ncf_blosc_zero_slots) { [0, 0] } else { [2, 2] };
        assert_eq!(blosc_set_local_params(&user, 4, 4, &[10, 20]).unwrap(), [slots[0], slots[1], 4, 800, 5, 1, 1]);
    }

    #[test]
    fn szip_local() {
        use szip_mask::*;
        let user = [szip_user_mask(NN), 32];
        assert_eq!(user[0], NN | ALLOW_K13 | RAW);
        assert_eq!(szip_bits_per_pixel(8 * 4), 32);
        assert_eq!(szip_bits_per_pixel(8 * 3), 24);
        assert_eq!(szip_bits_per_pixel(40), 64);
        // A 100-element scanline: kept (under 128 blocks); little-endian.
        assert_eq!(szip_local_params(&user, 32, 100, 1000, true).unwrap(), [NN | ALLOW_K13 | RAW | LSB, 32, 32, 100]);
        // Long scanlines are cut to 128 blocks; big-endian replaces LSB.
        assert_eq!(
            szip_local_params(&[user[0] | LSB, 32], 64, 10_000, 10_000, false).unwrap()[..],
            [NN | ALLOW_K13 | RAW | MSB, 32, 64, 4096]
        );
        // A short scanline uses the chunk's element count.
        assert_eq!(szip_local_params(&user, 16, 8, 1000, true).unwrap()[3], 1000);
        assert_eq!(szip_local_params(&user, 16, 8, 20, true), Err(NC_EFILTER), "fewer elements than a block");
        assert_eq!(szip_local_params(&[NN], 16, 8, 20, true), Err(NC_EFILTER));
    }
}

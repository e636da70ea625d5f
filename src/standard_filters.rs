//! Parameter vectors of the standard-filter helpers (`nc_def_var_bzip2` and friends).
#![forbid(unsafe_code)]

use crate::c_types::ids::{BLOSC_BITSHUFFLE, BLOSC_ZSTD};
use crate::error::{NcResult, NC_EFILTER, NC_EINVAL};

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
}

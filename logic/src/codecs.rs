// SPDX-License-Identifier: BSD-3-Clause
//! The Zarr codecs of the standard filters (what netcdf-c 4.9.0's `NCZhdf5filters.c` and
//! `NCZstdfilters.c` provide): HDF5 parameters to codec JSON and back, and the working parameters
//! a filter needs for a given variable.
//!
//! The JSON written here is 4.9.0's text, byte for byte (`{"id": "zlib", "level": "5"}`); the
//! NCZarr engine turns it into the numeric dialect when that is selected ([`crate::codec_json`]).
//! Reading accepts numbers or integer strings.
#![forbid(unsafe_code)]

use crate::codec_json::{integer_of, parse_codec};
use crate::error::{NcResult, NC_EFILTER, NC_EINVAL};
use crate::standard_filters::{
    blosc_local_params, szip_bits_per_pixel, szip_local_params, szip_user_mask, BLOSC_COMPRESSORS,
};
use serde_json::{Map, Value};

/// A standard codec: one per row of the table of standard filters, whose row gives its ids.
pub use crate::standard_filter_table::Codec;

/// What a codec's `NCZ_modify_parameters` may ask of the variable it is defined on.
pub trait VarFacts {
    /// The size of the variable's type in bytes.
    fn type_size(&self) -> NcResult<usize>;
    /// The chunk lengths, or `None` when the variable is not chunked (or is a scalar).
    fn chunk_lens(&self) -> NcResult<Option<Vec<u64>>>;
    /// The length of the fastest-varying dimension (`None` for a scalar).
    fn last_dim_len(&self) -> NcResult<Option<u64>>;
    /// Whether the data are little-endian (native order when the variable has none set).
    fn little_endian(&self) -> NcResult<bool>;
}

impl Codec {
    /// `NCZ_hdf5_to_codec`: the codec JSON of visible parameters, as 4.9.0 writes it.
    pub fn to_json(self, params: &[u32]) -> NcResult<String> {
        let id = self.codec_id();
        match self {
            Codec::Zlib | Codec::Bz2 | Codec::Zstd => {
                let level = params.first().ok_or(NC_EFILTER)?;
                Ok(format!("{{\"id\": \"{id}\", \"level\": \"{level}\"}}"))
            }
            Codec::Shuffle => {
                Ok(format!("{{\"id\": \"{id}\", \"elementsize\": \"{}\"}}", params.first().copied().unwrap_or(0)))
            }
            Codec::Fletcher32 => Ok(format!("{{\"id\": \"{id}\"}}")),
            Codec::Blosc => {
                let [_, _, _, blocksize, level, shuffle, compressor, ..] = *params else { return Err(NC_EINVAL) };
                let name =
                    BLOSC_COMPRESSORS.get(compressor as usize).ok_or(NC_EFILTER)?.to_str().map_err(|_| NC_EFILTER)?;
                // H5Zblosc's "%d": the shuffle's bit pattern as a signed number.
                let shuffle = shuffle as i32;
                Ok(format!("{{\"id\": \"{id}\",\"clevel\": {level},\"blocksize\": {blocksize},\"cname\": \"{name}\",\"shuffle\": {shuffle}}}"))
            }
            Codec::Szip => {
                let [mask, pixels_per_block, ..] = *params else { return Err(NC_EFILTER) };
                Ok(format!("{{\"id\": \"{id}\", \"mask\": {mask}, \"pixels-per-block\": {pixels_per_block}}}"))
            }
        }
    }

    /// `NCZ_codec_to_hdf5`: the visible parameters of a codec object.
    pub fn from_json(self, text: &str) -> NcResult<Vec<u32>> {
        let (id, codec) = parse_codec(text).map_err(|e| {
            crate::error::report(format_args!("{e}"));
            NC_EFILTER
        })?;
        if id != self.codec_id() {
            return Err(NC_EINVAL);
        }
        match self {
            Codec::Zlib | Codec::Bz2 | Codec::Zstd => {
                let level = integer(&codec, "level").ok_or(NC_EFILTER)?;
                Ok(vec![u32::try_from(level).map_err(|_| NC_EINVAL)?])
            }
            Codec::Shuffle | Codec::Fletcher32 => Ok(Vec::new()),
            Codec::Blosc => {
                // Absent keys take H5Zblosc.h's defaults: level 9, block size 1, no shuffle, lz4.
                let word = |key: &str, default: i64| -> NcResult<u32> {
                    match codec.get(key) {
                        None => Ok(default as u32),
                        Some(_) => integer(&codec, key).and_then(|v| u32::try_from(v).ok()).ok_or(NC_EFILTER),
                    }
                };
                let shuffle = match codec.get("shuffle") {
                    None => 0,
                    Some(_) => integer(&codec, "shuffle").and_then(|v| i32::try_from(v).ok()).ok_or(NC_EFILTER)? as u32,
                };
                let compressor = match codec.get("cname") {
                    None => 1,
                    Some(Value::String(name)) => {
                        BLOSC_COMPRESSORS.iter().position(|c| c.to_bytes() == name.as_bytes()).ok_or_else(|| {
                            crate::error::report(format_args!("codec \"blosc\": unknown compressor \"{name}\""));
                            NC_EFILTER
                        })? as u32
                    }
                    Some(_) => return Err(NC_EFILTER),
                };
                Ok(vec![0, 0, 0, word("blocksize", 1)?, word("clevel", 9)?, shuffle, compressor])
            }
            Codec::Szip => {
                let word = |key: &str| integer(&codec, key).and_then(|v| u32::try_from(v).ok()).ok_or(NC_EFILTER);
                Ok(vec![word("mask")?, word("pixels-per-block")?])
            }
        }
    }

    /// Whether the working parameters differ from the visible ones (`NCZ_modify_parameters`).
    pub const fn modifies_parameters(self) -> bool {
        matches!(self, Codec::Shuffle | Codec::Blosc | Codec::Szip)
    }

    /// The working parameters of the filter on `var`.
    pub fn working(self, visible: &[u32], var: &dyn VarFacts) -> NcResult<Vec<u32>> {
        match self {
            Codec::Shuffle => Ok(vec![u32::try_from(var.type_size()?).map_err(|_| NC_EFILTER)?]),
            Codec::Blosc => {
                if visible.len() < 7 {
                    return Err(NC_EFILTER);
                }
                let chunks = var.chunk_lens()?.ok_or(NC_EFILTER)?;
                let type_size = var.type_size()?;
                blosc_local_params(visible, type_size, type_size, &chunks)
            }
            Codec::Szip => {
                let chunks = var.chunk_lens()?.ok_or(NC_EFILTER)?;
                let scanline = var.last_dim_len()?.ok_or(NC_EFILTER)?;
                let [mask, pixels_per_block, ..] = *visible else { return Err(NC_EFILTER) };
                let type_bits = (var.type_size()? as u64).checked_mul(8).ok_or(NC_EFILTER)?;
                let bits = szip_bits_per_pixel(type_bits);
                let Some(npoints) = chunks.iter().try_fold(1u64, |points, &len| points.checked_mul(len)) else {
                    crate::error::report(format_args!("szip: the chunk's element count {chunks:?} overflows"));
                    return Err(NC_EFILTER);
                };
                let params = szip_local_params(
                    &[szip_user_mask(mask), pixels_per_block],
                    bits,
                    scanline,
                    npoints,
                    var.little_endian()?,
                )?;
                Ok(params.to_vec())
            }
            _ => Ok(visible.to_vec()),
        }
    }
}

/// An integer member given as a number or an integer string (4.9.0 writes strings), read as the
/// NCZarr engine reads it.
fn integer(codec: &Map<String, Value>, key: &str) -> Option<i64> {
    integer_of(codec.get(key)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_netcdf_c_4_9_0_text() {
        assert_eq!(Codec::Zlib.to_json(&[5]).unwrap(), r#"{"id": "zlib", "level": "5"}"#);
        assert_eq!(Codec::Bz2.to_json(&[9, 4]).unwrap(), r#"{"id": "bz2", "level": "9"}"#);
        assert_eq!(Codec::Zstd.to_json(&[u32::MAX]).unwrap(), r#"{"id": "zstd", "level": "4294967295"}"#);
        assert_eq!(Codec::Shuffle.to_json(&[]).unwrap(), r#"{"id": "shuffle", "elementsize": "0"}"#);
        assert_eq!(Codec::Fletcher32.to_json(&[]).unwrap(), r#"{"id": "fletcher32"}"#);
        assert_eq!(Codec::Zlib.to_json(&[]), Err(NC_EFILTER));
    }

    #[test]
    fn json_reads_both_dialects() {
        assert_eq!(Codec::Zlib.from_json(r#"{"id": "zlib", "level": "5"}"#).unwrap(), [5]);
        assert_eq!(Codec::Zstd.from_json(r#"{"id": "zstd", "level": 4294967293}"#).unwrap(), [4294967293]);
        assert_eq!(Codec::Shuffle.from_json(r#"{"id": "shuffle", "elementsize": 4}"#).unwrap(), Vec::<u32>::new());
        assert_eq!(Codec::Bz2.from_json(r#"{"id": "zlib", "level": 1}"#), Err(NC_EINVAL));
        assert_eq!(Codec::Bz2.from_json(r#"{"id": "bz2"}"#), Err(NC_EFILTER));
    }

    struct Var {
        type_size: usize,
        chunks: Option<Vec<u64>>,
        last_dim: u64,
    }

    impl VarFacts for Var {
        fn type_size(&self) -> NcResult<usize> {
            Ok(self.type_size)
        }
        fn chunk_lens(&self) -> NcResult<Option<Vec<u64>>> {
            Ok(self.chunks.clone())
        }
        fn last_dim_len(&self) -> NcResult<Option<u64>> {
            Ok(Some(self.last_dim))
        }
        fn little_endian(&self) -> NcResult<bool> {
            Ok(true)
        }
    }

    #[test]
    fn working_parameters() {
        let var = Var { type_size: 8, chunks: Some(vec![4, 50]), last_dim: 100 };
        assert_eq!(Codec::Shuffle.working(&[], &var).unwrap(), [8]);
        assert_eq!(Codec::Zlib.working(&[3], &var).unwrap(), [3]);
        assert_eq!(Codec::Blosc.working(&[0, 0, 0, 0, 5, 1, 1], &var).unwrap(), [2, 2, 8, 1600, 5, 1, 1]);
        assert_eq!(Codec::Blosc.working(&[0, 0, 0, 0, 5, 1], &var), Err(NC_EFILTER));
        // NN mask 32 → NN | K13 | RAW | LSB = 169; 64-bit pixels; the 100-long scanline kept.
        assert_eq!(Codec::Szip.working(&[32, 32], &var).unwrap(), [169, 32, 64, 100]);
        let contiguous = Var { chunks: None, ..var };
        assert_eq!(Codec::Szip.working(&[32, 32], &contiguous), Err(NC_EFILTER));
    }

    /// Sizes from a hostile `.zarray` fail; release builds would otherwise wrap, debug builds panic.
    #[test]
    fn sizes_that_overflow_fail() {
        let huge = Var { type_size: 8, chunks: Some(vec![u64::MAX / 2, 3]), last_dim: 100 };
        assert_eq!(Codec::Szip.working(&[32, 32], &huge), Err(NC_EFILTER));
        assert_eq!(Codec::Blosc.working(&[0, 0, 0, 0, 5, 1, 1], &huge), Err(NC_EFILTER));
        let wide_type = Var { type_size: usize::MAX / 4, chunks: Some(vec![4]), last_dim: 4 };
        assert_eq!(Codec::Szip.working(&[32, 32], &wide_type), Err(NC_EFILTER));
    }

    #[test]
    fn blosc_and_szip_json() {
        let blosc = [2, 2, 4, 4000, 5, 1, 1];
        let text = Codec::Blosc.to_json(&blosc).unwrap();
        assert_eq!(text, r#"{"id": "blosc","clevel": 5,"blocksize": 4000,"cname": "lz4","shuffle": 1}"#);
        assert_eq!(Codec::Blosc.from_json(&text).unwrap(), [0, 0, 0, 4000, 5, 1, 1]);
        assert_eq!(Codec::Blosc.from_json(r#"{"id": "blosc"}"#).unwrap(), [0, 0, 0, 1, 9, 0, 1], "H5Zblosc.h defaults");
        assert_eq!(Codec::Blosc.from_json(r#"{"id": "blosc", "cname": "nope"}"#), Err(NC_EFILTER));
        assert_eq!(Codec::Blosc.to_json(&blosc[..6]), Err(NC_EINVAL));
        assert_eq!(Codec::Blosc.to_json(&[0, 0, 0, 0, 5, 1, 6]), Err(NC_EFILTER));
        let text = Codec::Szip.to_json(&[169, 32, 32, 100]).unwrap();
        assert_eq!(text, r#"{"id": "szip", "mask": 169, "pixels-per-block": 32}"#);
        assert_eq!(Codec::Szip.from_json(&text).unwrap(), [169, 32]);
        assert_eq!(Codec::Szip.from_json(r#"{"id": "szip", "mask": "4"}"#), Err(NC_EFILTER));
    }
}

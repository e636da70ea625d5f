//! The Zarr codecs of the standard filters (what netcdf-c 4.9.0's `NCZhdf5filters.c` and
//! `NCZstdfilters.c` provide): HDF5 parameters to codec JSON and back, and the working parameters
//! a filter needs for a given variable.
//!
//! The JSON written here is 4.9.0's text, byte for byte (`{"id": "zlib", "level": "5"}`); the
//! NCZarr engine turns it into the numeric dialect when that is selected ([`crate::codec_json`]).
//! Reading accepts numbers or integer strings.
#![forbid(unsafe_code)]

use crate::codec_json::parse_codec;
use crate::error::{NcResult, NC_EFILTER, NC_EINVAL};
use serde_json::Value;

/// A standard codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Zlib,
    Shuffle,
    Fletcher32,
    Bz2,
    Zstd,
}

impl Codec {
    /// The numcodecs id.
    pub const fn codec_id(self) -> &'static str {
        match self {
            Codec::Zlib => "zlib",
            Codec::Shuffle => "shuffle",
            Codec::Fletcher32 => "fletcher32",
            Codec::Bz2 => "bz2",
            Codec::Zstd => "zstd",
        }
    }

    /// The HDF5 filter id.
    pub const fn hdf5_id(self) -> u32 {
        match self {
            Codec::Zlib => 1,
            Codec::Shuffle => 2,
            Codec::Fletcher32 => 3,
            Codec::Bz2 => 307,
            Codec::Zstd => 32015,
        }
    }

    /// `NCZ_hdf5_to_codec`: the codec JSON of visible parameters, as 4.9.0 writes it.
    pub fn to_json(self, params: &[u32]) -> NcResult<String> {
        let id = self.codec_id();
        match self {
            Codec::Zlib | Codec::Bz2 | Codec::Zstd => {
                let level = params.first().ok_or(NC_EFILTER)?;
                Ok(format!("{{\"id\": \"{id}\", \"level\": \"{level}\"}}"))
            }
            Codec::Shuffle => Ok(format!("{{\"id\": \"{id}\", \"elementsize\": \"{}\"}}", params.first().copied().unwrap_or(0))),
            Codec::Fletcher32 => Ok(format!("{{\"id\": \"{id}\"}}")),
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
                let level = match codec.get("level") {
                    Some(Value::Number(n)) => n.as_u64(),
                    Some(Value::String(s)) => s.parse().ok(),
                    _ => None,
                };
                let level = level.ok_or(NC_EFILTER)?;
                Ok(vec![u32::try_from(level).map_err(|_| NC_EINVAL)?])
            }
            Codec::Shuffle | Codec::Fletcher32 => Ok(Vec::new()),
        }
    }

    /// Whether the working parameters differ from the visible ones (`NCZ_modify_parameters`).
    pub const fn modifies_parameters(self) -> bool {
        matches!(self, Codec::Shuffle)
    }

    /// The working parameters for a variable whose type is `type_size` bytes.
    pub fn working(self, visible: &[u32], type_size: usize) -> NcResult<Vec<u32>> {
        match self {
            Codec::Shuffle => Ok(vec![u32::try_from(type_size).map_err(|_| NC_EFILTER)?]),
            _ => Ok(visible.to_vec()),
        }
    }
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
        assert_eq!(Codec::Shuffle.working(&[], 8).unwrap(), [8]);
        assert_eq!(Codec::Zlib.working(&[3], 8).unwrap(), [3]);
    }
}

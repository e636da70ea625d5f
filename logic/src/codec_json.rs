// SPDX-License-Identifier: BSD-3-Clause
//! Codec JSON of NCZarr `.zarray` metadata: what ncfilters writes (two dialects) and what it
//! accepts on read (both dialects plus what zarr-python/numcodecs write).
//!
//! The codec plugins (`NCZ_hdf5_to_codec`/`NCZ_codec_to_hdf5`) own the parameter mapping; this
//! module only rewrites their text:
//! - **numeric** (default): integers are JSON numbers, zstd levels are signed and shuffle's
//!   `elementsize` is the variable's type size, so zarr-python/numcodecs can decode the data;
//! - **legacy**: the plugin's text unchanged, byte for byte what netcdf-c 4.9.0 writes
//!   (e.g. `"level": "9"`).
//!
//! On read, a codec object is validated before it reaches a plugin (4.9.0's plugins dereference
//! NULL for a missing `"level"`), and numcodecs' forms are mapped to what the plugins accept.
#![forbid(unsafe_code)]

use crate::error::{NcError, NcResult, NC_EFILTER};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Environment variable selecting the dialect written: `numeric` or `legacy`.
pub const DIALECT_ENV: &str = "NCFILTERS_CODEC_DIALECT";

/// Which codec JSON ncfilters writes into `.zarray` and `_Codecs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Numeric,
    Legacy,
}

impl Dialect {
    pub fn parse(name: &str) -> Option<Dialect> {
        match name.trim().to_ascii_lowercase().as_str() {
            "numeric" => Some(Dialect::Numeric),
            "legacy" => Some(Dialect::Legacy),
            _ => None,
        }
    }

    /// The build's default (CMake option `NCFILTERS_CODEC_DIALECT`), else numeric.
    pub fn build_default() -> Dialect {
        option_env!("NCFILTERS_DEFAULT_CODEC_DIALECT").and_then(Dialect::parse).unwrap_or(Dialect::Numeric)
    }

    /// `$NCFILTERS_CODEC_DIALECT` if set (an unknown value is reported and ignored), else the build default.
    pub fn current() -> Dialect {
        match std::env::var(DIALECT_ENV) {
            Ok(value) if !value.is_empty() => Dialect::parse(&value).unwrap_or_else(|| {
                crate::error::report(format_args!(
                    "{DIALECT_ENV}={value:?} is neither \"numeric\" nor \"legacy\"; writing {:?}",
                    Dialect::build_default()
                ));
                Dialect::build_default()
            }),
            _ => Dialect::build_default(),
        }
    }
}

/// Why a codec object was rejected; shown to the user, and mapped to `NC_EFILTER`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError(pub String);

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl CodecError {
    pub fn status(&self) -> NcError {
        NC_EFILTER
    }
}

fn bad(message: impl Into<String>) -> CodecError {
    CodecError(message.into())
}

/// Parses one codec object and returns it with its `"id"`.
pub fn parse_codec(text: &str) -> Result<(String, Map<String, Value>), CodecError> {
    let value: Value = serde_json::from_str(text).map_err(|e| bad(format!("codec {text} is not valid JSON ({e})")))?;
    let Value::Object(object) = value else {
        return Err(bad(format!("codec {text} is not a JSON object")));
    };
    match object.get("id") {
        Some(Value::String(id)) if !id.is_empty() => Ok((id.clone(), object)),
        Some(other) => Err(bad(format!("codec {text}: \"id\" must be a non-empty string, not {other}"))),
        None => Err(bad(format!("codec {text} has no \"id\""))),
    }
}

/// An integer written either as a JSON number or, as netcdf-c 4.9.0 does, as a decimal string.
pub fn integer_of(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_u64().and_then(|u| i64::try_from(u).ok())),
        Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
        }
        _ => None,
    }
}

/// The integer under `key`, which must be present.
fn required_integer(id: &str, codec: &Map<String, Value>, key: &str) -> Result<i64, CodecError> {
    let value = codec.get(key).ok_or_else(|| bad(format!("codec \"{id}\" has no \"{key}\"")))?;
    integer_of(value).ok_or_else(|| bad(format!("codec \"{id}\": \"{key}\" must be an integer, not {value}")))
}

/// The integer under `key` if present.
fn optional_integer(id: &str, codec: &Map<String, Value>, key: &str) -> Result<Option<i64>, CodecError> {
    match codec.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => integer_of(value)
            .map(Some)
            .ok_or_else(|| bad(format!("codec \"{id}\": \"{key}\" must be an integer, not {value}"))),
    }
}

fn set_integer(codec: &mut Map<String, Value>, key: &str, value: i64) {
    codec.insert(key.to_string(), Value::Number(Number::from(value)));
}

/// numcodecs' Blosc `shuffle` codes: -1 is AUTOSHUFFLE (bit shuffle for 1-byte types, else byte shuffle).
const BLOSC_AUTOSHUFFLE: i64 = -1;
const BLOSC_SHUFFLE: i64 = 1;
const BLOSC_BITSHUFFLE: i64 = 2;

/// Validates a codec object read from `.zarray` and rewrites it into the form the codec plugins
/// accept: integers as JSON numbers, negative zstd levels as their 32-bit pattern (how the HDF5
/// parameter carries them), blosc AUTOSHUFFLE resolved with the variable's `type_size`.
/// Codecs ncfilters does not know pass through after the `"id"` check.
pub fn readable_codec(text: &str, type_size: usize) -> Result<String, CodecError> {
    let (id, mut codec) = parse_codec(text)?;
    match id.as_str() {
        "zlib" | "bz2" => {
            let level = required_integer(&id, &codec, "level")?;
            set_integer(&mut codec, "level", level);
        }
        "zstd" => {
            let level = required_integer(&id, &codec, "level")?;
            let level =
                i32::try_from(level).map_err(|_| bad(format!("codec \"zstd\": level {level} is out of range")))?;
            set_integer(&mut codec, "level", i64::from(level as u32));
        }
        "shuffle" => {
            if let Some(size) = optional_integer(&id, &codec, "elementsize")? {
                set_integer(&mut codec, "elementsize", size);
            }
        }
        "szip" => {
            for key in ["mask", "pixels-per-block"] {
                let value = required_integer(&id, &codec, key)?;
                set_integer(&mut codec, key, value);
            }
        }
        "blosc" => {
            for key in ["clevel", "blocksize", "typesize"] {
                if let Some(value) = optional_integer(&id, &codec, key)? {
                    set_integer(&mut codec, key, value);
                }
            }
            if let Some(shuffle) = optional_integer(&id, &codec, "shuffle")? {
                let resolved = match shuffle {
                    BLOSC_AUTOSHUFFLE if type_size == 1 => BLOSC_BITSHUFFLE,
                    BLOSC_AUTOSHUFFLE => BLOSC_SHUFFLE,
                    0..=2 => shuffle,
                    _ => return Err(bad(format!("codec \"blosc\": shuffle {shuffle} is not -1, 0, 1 or 2"))),
                };
                set_integer(&mut codec, "shuffle", resolved);
            }
            match codec.get("cname") {
                None | Some(Value::String(_)) => {}
                Some(other) => return Err(bad(format!("codec \"blosc\": \"cname\" must be a string, not {other}"))),
            }
        }
        _ => {}
    }
    Ok(to_ncjson_text(&Value::Object(codec)))
}

/// Keys whose string values are names, never numbers.
const STRING_KEYS: &[&str] = &["id", "cname"];

/// Rewrites the JSON text a codec plugin produced (`NCZ_hdf5_to_codec`) into the dialect to
/// write. `type_size` is the variable's type size (shuffle's element size in numeric form).
pub fn written_codec(plugin_text: &str, dialect: Dialect, type_size: usize) -> NcResult<String> {
    if dialect == Dialect::Legacy {
        return Ok(plugin_text.to_string());
    }
    let (id, mut codec) = parse_codec(plugin_text).map_err(|e| {
        crate::error::report(format_args!("a codec plugin produced bad JSON: {e}"));
        NC_EFILTER
    })?;
    for (key, value) in codec.iter_mut() {
        if STRING_KEYS.contains(&key.as_str()) {
            continue;
        }
        if let (Value::String(_), Some(n)) = (&*value, integer_of(value)) {
            *value = Value::Number(Number::from(n));
        }
    }
    match id.as_str() {
        // The HDF5 parameter carries the signed level as its 32-bit pattern.
        "zstd" => {
            if let Some(level) = codec.get("level").and_then(integer_of) {
                if let Ok(bits) = u32::try_from(level) {
                    set_integer(&mut codec, "level", i64::from(bits as i32));
                }
            }
        }
        // 4.9.0 writes the visible parameter, normally absent, as 0; numcodecs needs the real size.
        "shuffle" => set_integer(&mut codec, "elementsize", type_size as i64),
        _ => {}
    }
    Ok(to_ncjson_text(&Value::Object(codec)))
}

/// JSON text in netcdf-c's `NCJunparse` layout: `{"k": v, "k2": v2}`, arrays `[a,b]`.
pub fn to_ncjson_text(value: &Value) -> String {
    let mut out = String::new();
    write_ncjson(value, &mut out);
    out
}

fn write_ncjson(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_ncjson(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_ncjson(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_is_the_plugin_text_unchanged() {
        let text = r#"{"id": "zlib", "level": "5"}"#;
        assert_eq!(written_codec(text, Dialect::Legacy, 4).unwrap(), text);
    }

    #[test]
    fn numeric_turns_integer_strings_into_numbers() {
        assert_eq!(
            written_codec(r#"{"id": "zlib", "level": "5"}"#, Dialect::Numeric, 4).unwrap(),
            r#"{"id": "zlib", "level": 5}"#
        );
        assert_eq!(
            written_codec(r#"{"id": "bz2", "level": "9"}"#, Dialect::Numeric, 8).unwrap(),
            r#"{"id": "bz2", "level": 9}"#
        );
        let blosc = r#"{"id": "blosc","clevel": 5,"blocksize": 256,"cname": "lz4","shuffle": 1}"#;
        assert_eq!(
            written_codec(blosc, Dialect::Numeric, 4).unwrap(),
            r#"{"id": "blosc", "clevel": 5, "blocksize": 256, "cname": "lz4", "shuffle": 1}"#
        );
    }

    #[test]
    fn numeric_writes_signed_zstd_levels_and_real_shuffle_sizes() {
        assert_eq!(
            written_codec(r#"{"id": "zstd", "level": "4294967295"}"#, Dialect::Numeric, 4).unwrap(),
            r#"{"id": "zstd", "level": -1}"#
        );
        assert_eq!(
            written_codec(r#"{"id": "shuffle", "elementsize": "0"}"#, Dialect::Numeric, 8).unwrap(),
            r#"{"id": "shuffle", "elementsize": 8}"#
        );
    }

    #[test]
    fn numeric_rejects_plugin_output_that_is_not_a_codec() {
        assert_eq!(written_codec("[1]", Dialect::Numeric, 4), Err(NC_EFILTER));
        assert_eq!(written_codec(r#"{"level": 1}"#, Dialect::Numeric, 4), Err(NC_EFILTER));
    }

    #[test]
    fn reading_accepts_both_dialects_and_numcodecs() {
        assert_eq!(readable_codec(r#"{"id": "zlib", "level": "5"}"#, 4).unwrap(), r#"{"id": "zlib", "level": 5}"#);
        assert_eq!(readable_codec(r#"{"id":"zlib","level":5}"#, 4).unwrap(), r#"{"id": "zlib", "level": 5}"#);
        assert_eq!(
            readable_codec(r#"{"id":"zstd","level":-3,"checksum":false}"#, 4).unwrap(),
            r#"{"id": "zstd", "level": 4294967293, "checksum": false}"#
        );
        assert_eq!(
            readable_codec(r#"{"id":"blosc","cname":"zstd","clevel":3,"shuffle":-1,"blocksize":0}"#, 4).unwrap(),
            r#"{"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 1, "blocksize": 0}"#
        );
        assert!(readable_codec(r#"{"id":"blosc","shuffle":-1}"#, 1).unwrap().contains(r#""shuffle": 2"#));
        assert_eq!(readable_codec(r#"{"id":"blosc"}"#, 4).unwrap(), r#"{"id": "blosc"}"#);
        assert_eq!(readable_codec(r#"{"id":"fletcher32"}"#, 4).unwrap(), r#"{"id": "fletcher32"}"#);
        assert_eq!(readable_codec(r#"{"id":"mystery","x":[1,2]}"#, 4).unwrap(), r#"{"id": "mystery", "x": [1,2]}"#);
    }

    #[test]
    fn reading_rejects_bad_codecs_with_a_reason() {
        for (text, reason) in [
            (r#"{"level": 1}"#, "has no \"id\""),
            (r#"{"id": 7}"#, "must be a non-empty string"),
            (r#"{"id": ""}"#, "must be a non-empty string"),
            (r#""zlib""#, "not a JSON object"),
            (r#"[{"id":"zlib"}]"#, "not a JSON object"),
            (r#"{"id":"zlib"}"#, "has no \"level\""),
            (r#"{"id":"bz2","level":"high"}"#, "must be an integer"),
            (r#"{"id":"zstd","level":[1]}"#, "must be an integer"),
            (r#"{"id":"zstd","level":1e99}"#, "must be an integer"),
            (r#"{"id":"zstd","level":99999999999}"#, "out of range"),
            (r#"{"id":"szip","mask":1}"#, "has no \"pixels-per-block\""),
            (r#"{"id":"blosc","shuffle":5}"#, "is not -1, 0, 1 or 2"),
            (r#"{"id":"blosc","cname":3}"#, "\"cname\" must be a string"),
            ("{", "not valid JSON"),
        ] {
            let error = readable_codec(text, 4).unwrap_err();
            assert!(error.0.contains(reason), "{text}: {error}");
            assert_eq!(error.status(), NC_EFILTER);
        }
    }

    #[test]
    fn dialect_names() {
        assert_eq!(Dialect::parse("Legacy"), Some(Dialect::Legacy));
        assert_eq!(Dialect::parse("numeric"), Some(Dialect::Numeric));
        assert_eq!(Dialect::parse("strings"), None);
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//! Filter-spec text to HDF5 `unsigned int` parameters (netcdf-c Appendix D,
//! "Filter Specification Syntax" and Appendix A's 8-byte encoding).
//!
//! Grammar accepted (blanks are spaces or tabs):
//! ```text
//! list      := [ "[" blanks? int blanks? "]" ] spec ( "|" spec )*      (or the empty string)
//! spec      := blanks? uint32 ( "," blanks? constant )*
//! constant  := integer tag32? | integer ("l"|"ul") | decimal ("f"|"d") | decimal-ending-in-"."
//! tag32     := "b" | "ub" | "s" | "us" | "u"                    (case-insensitive)
//! ```
//! Every input this grammar accepts gives the same words as netcdf-c 4.9.0's `daux.c`.
//! Where `daux.c` silently guesses or misbehaves (empty items, trailing blanks or junk,
//! overflow, `1.5` with no tag, unknown tags) this module returns a [`SpecError`].
#![forbid(unsafe_code)]

use std::fmt;

/// One parsed filter: an HDF5 filter id and its encoded parameter words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterSpec {
    pub id: u32,
    pub params: Vec<u32>,
}

/// A parsed `|` list and its optional `[N]` format prefix (0 when absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterSpecList {
    pub format: i32,
    pub specs: Vec<FilterSpec>,
}

/// One constant encoded as one or two words (8-byte values are `[low32, high32]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodedParam {
    words: [u32; 2],
    len: usize,
}

impl EncodedParam {
    fn one(word: u32) -> Self {
        EncodedParam { words: [word, 0], len: 1 }
    }
    fn eight_bytes(value: u64) -> Self {
        EncodedParam { words: [value as u32, (value >> 32) as u32], len: 2 }
    }
    pub fn words(&self) -> &[u32] {
        &self.words[..self.len]
    }
}

/// Why a filter spec was rejected. Every variant maps to `NC_EINVAL` at the C boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecError {
    EmptySpec,
    BadId { text: String },
    EmptyParameter { index: usize },
    BadConstant { text: String, reason: &'static str },
    BadFormatPrefix { text: String },
    NothingAfterFormat,
    EmptySpecInList { index: usize },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::EmptySpec => write!(f, "empty filter spec"),
            SpecError::BadId { text } => {
                write!(f, "filter id {text:?} is not an unsigned 32-bit decimal integer")
            }
            SpecError::EmptyParameter { index } => write!(f, "parameter {index} is empty"),
            SpecError::BadConstant { text, reason } => {
                write!(f, "bad filter parameter {text:?}: {reason}")
            }
            SpecError::BadFormatPrefix { text } => {
                write!(f, "bad format prefix {text:?}: expected \"[N]\" with an integer N")
            }
            SpecError::NothingAfterFormat => write!(f, "format prefix with no filter spec after it"),
            SpecError::EmptySpecInList { index } => write!(f, "filter spec {index} in the '|' list is empty"),
        }
    }
}

impl std::error::Error for SpecError {}

fn is_blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

fn skip_blanks(text: &[u8]) -> &[u8] {
    let start = text.iter().position(|&b| !is_blank(b)).unwrap_or(text.len());
    &text[start..]
}

fn lossy(text: &[u8]) -> String {
    String::from_utf8_lossy(text).into_owned()
}

/// Parses `id,p1,p2,...` (`ncaux_h5filterspec_parse`).
pub fn parse_spec(text: &[u8]) -> Result<FilterSpec, SpecError> {
    if text.is_empty() {
        return Err(SpecError::EmptySpec);
    }
    let mut pieces = text.split(|&b| b == b',');
    let id_text = skip_blanks(pieces.next().unwrap_or_default());
    let id = parse_unsigned(id_text)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| SpecError::BadId { text: lossy(id_text) })?;
    let mut params = Vec::new();
    for (index, piece) in pieces.enumerate() {
        let encoded = parse_parameter(piece).map_err(|e| match e {
            SpecError::EmptySpec => SpecError::EmptyParameter { index: index + 1 },
            other => other,
        })?;
        params.extend_from_slice(encoded.words());
    }
    Ok(FilterSpec { id, params })
}

/// Parses an optional `[N]` prefix and `|`-separated specs (`ncaux_h5filterspec_parselist`).
pub fn parse_spec_list(text: &[u8]) -> Result<FilterSpecList, SpecError> {
    let (format, body) = match text.strip_prefix(b"[") {
        Some(rest) => {
            let close =
                rest.iter().position(|&b| b == b']').ok_or_else(|| SpecError::BadFormatPrefix { text: lossy(text) })?;
            let number = trim_blanks(&rest[..close]);
            let format = parse_signed(number)
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| SpecError::BadFormatPrefix { text: lossy(&rest[..close]) })?;
            let body = &rest[close + 1..];
            if body.is_empty() {
                return Err(SpecError::NothingAfterFormat);
            }
            (format, body)
        }
        None => (0, text),
    };
    if body.is_empty() {
        return Ok(FilterSpecList { format, specs: Vec::new() });
    }
    let specs = body
        .split(|&b| b == b'|')
        .enumerate()
        .map(
            |(index, piece)| {
                if piece.is_empty() {
                    Err(SpecError::EmptySpecInList { index })
                } else {
                    parse_spec(piece)
                }
            },
        )
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FilterSpecList { format, specs })
}

/// Encodes one constant (`ncaux_h5filterspec_parse_parameter`); leading blanks are skipped.
pub fn parse_parameter(text: &[u8]) -> Result<EncodedParam, SpecError> {
    let text = skip_blanks(text);
    if text.is_empty() {
        return Err(SpecError::EmptySpec);
    }
    encode_constant(text)
}

fn trim_blanks(text: &[u8]) -> &[u8] {
    let text = skip_blanks(text);
    let end = text.iter().rposition(|&b| !is_blank(b)).map_or(0, |i| i + 1);
    &text[..end]
}

/// The kind a constant's tag selects; mirrors `daux.c`'s `gettype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int32 { mask: u32 },
    Int64 { unsigned: bool },
    Float,
    Double,
}

/// Splits a constant into its numeric body and kind, reading the tag from the last
/// one or two characters as `daux.c` does, but requiring the tag to be a real one.
fn split_tag(text: &[u8]) -> Result<(&[u8], Kind), &'static str> {
    let last = text[text.len() - 1].to_ascii_lowercase();
    // daux.c only looks at a second-to-last 'u' when the constant is longer than 2 chars.
    let unsigned_marker = text.len() > 2 && text[text.len() - 2].eq_ignore_ascii_case(&b'u');
    let (tag_len, kind) = match last {
        b'0'..=b'9' => (0, Kind::Int32 { mask: u32::MAX }),
        b'.' => (0, Kind::Float),
        b'u' => (1, Kind::Int32 { mask: u32::MAX }),
        b'b' => (1, Kind::Int32 { mask: 0xFF }),
        b's' => (1, Kind::Int32 { mask: 0xFFFF }),
        b'l' => (1, Kind::Int64 { unsigned: unsigned_marker }),
        b'f' => (1, Kind::Float),
        b'd' => (1, Kind::Double),
        _ => return Err("unknown type tag (expected b, ub, s, us, u, l, ul, f, d or a trailing '.')"),
    };
    let tag_len = match (last, unsigned_marker) {
        (b'b' | b's' | b'l', true) => 2,
        (b'f' | b'd', true) => return Err("'u' cannot mark a floating-point constant"),
        _ => tag_len,
    };
    Ok((&text[..text.len() - tag_len], kind))
}

fn encode_constant(text: &[u8]) -> Result<EncodedParam, SpecError> {
    let bad = |reason: &'static str| SpecError::BadConstant { text: lossy(text), reason };
    let (body, kind) = split_tag(text).map_err(bad)?;
    match kind {
        Kind::Int32 { mask } => {
            let word = if body.first() == Some(&b'-') {
                let value = parse_signed(body).ok_or_else(|| bad(NOT_INTEGER))?;
                let value = i32::try_from(value).map_err(|_| bad("below the 32-bit range"))?;
                value as u32
            } else {
                let value = parse_unsigned(body).ok_or_else(|| bad(NOT_INTEGER))?;
                u32::try_from(value).map_err(|_| bad("above the 32-bit range"))?
            };
            Ok(EncodedParam::one(word & mask))
        }
        Kind::Int64 { unsigned: true } => {
            let value =
                parse_unsigned(body).ok_or_else(|| bad("not an unsigned decimal integer, or beyond 64 bits"))?;
            Ok(EncodedParam::eight_bytes(value))
        }
        Kind::Int64 { unsigned: false } => {
            let value =
                parse_signed(body).ok_or_else(|| bad("not a decimal integer, or beyond the signed 64-bit range"))?;
            Ok(EncodedParam::eight_bytes(value as u64))
        }
        Kind::Float => {
            let value = parse_decimal(body).ok_or_else(|| bad(NOT_DECIMAL))?;
            let single = value as f32;
            if !single.is_finite() {
                return Err(bad("beyond the 32-bit float range"));
            }
            Ok(EncodedParam::one(single.to_bits()))
        }
        Kind::Double => {
            let value = parse_decimal(body).ok_or_else(|| bad(NOT_DECIMAL))?;
            if !value.is_finite() {
                return Err(bad("beyond the 64-bit float range"));
            }
            Ok(EncodedParam::eight_bytes(value.to_bits()))
        }
    }
}

const NOT_INTEGER: &str = "not a decimal integer (a floating-point value needs an f or d tag)";
const NOT_DECIMAL: &str = "not a decimal number";

fn all_digits(text: &[u8]) -> bool {
    !text.is_empty() && text.iter().all(u8::is_ascii_digit)
}

/// `[+]digits` fitting in u64.
fn parse_unsigned(text: &[u8]) -> Option<u64> {
    let digits = text.strip_prefix(b"+").unwrap_or(text);
    if !all_digits(digits) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// `[+-]digits` fitting in i64.
fn parse_signed(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if !all_digits(digits) {
        return None;
    }
    let magnitude: i128 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// `[+-](digits[.digits*] | .digits)([eE][+-]digits)?`, correctly rounded like `strtod`.
fn parse_decimal(text: &[u8]) -> Option<f64> {
    let unsigned = match text.first() {
        Some(b'-' | b'+') => &text[1..],
        _ => text,
    };
    let (mantissa, exponent) = match unsigned.iter().position(|&b| b == b'e' || b == b'E') {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.iter().position(|&b| b == b'.') {
        Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
        None => (mantissa, &b""[..]),
    };
    let digits_ok = |d: &[u8]| d.iter().all(u8::is_ascii_digit);
    if whole.is_empty() && fraction.is_empty() || !digits_ok(whole) || !digits_ok(fraction) {
        return None;
    }
    if let Some(exponent) = exponent {
        let exponent = exponent.strip_prefix(b"-").or_else(|| exponent.strip_prefix(b"+")).unwrap_or(exponent);
        if !all_digits(exponent) {
            return None;
        }
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// netcdf-c's `ncaux_h5filterspec_fix8`: 8-byte values travel as `[low32, high32]`
/// on every platform, which is a no-op on little-endian machines.
pub fn fix8(mem8: &mut [u8; 8], decode: bool) {
    if cfg!(target_endian = "big") {
        let swap_halves = |m: &mut [u8; 8]| {
            m[..4].reverse();
            m[4..].reverse();
        };
        if decode {
            swap_halves(mem8);
            mem8.reverse();
        } else {
            mem8.reverse();
            swap_halves(mem8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Vec<u32> {
        parse_spec(text.as_bytes()).expect(text).params
    }

    #[test]
    fn tst_filterparser_vector() {
        let spec = "32768, -17b, 23ub, -25S, 27US, 77, 93U, 2147483647, -2147483648, 4294967295U, 789f, -9223372036854775807L, 18446744073709551615UL, 12345678.12345678d";
        let parsed = parse_spec(spec.as_bytes()).unwrap();
        assert_eq!(parsed.id, 32768);
        assert_eq!(
            parsed.params,
            vec![
                239, 23, 65511, 27, 77, 93, 2147483647, 2147483648, 4294967295, 1145389056, 1, 2147483648, 4294967295,
                4294967295, 3287505826, 1097305129
            ]
        );
    }

    #[test]
    fn every_tag_form() {
        assert_eq!(params("1,5b"), [5]);
        assert_eq!(params("1,300B"), [300 & 0xFF]);
        assert_eq!(params("1,-1ub"), [255]);
        assert_eq!(params("1,-1s"), [0xFFFF]);
        assert_eq!(params("1,70000us"), [70000 & 0xFFFF]);
        assert_eq!(params("1,-77"), [(-77i32) as u32]);
        assert_eq!(params("1,77"), [77]);
        assert_eq!(params("1,7u"), [7]);
        assert_eq!(params("1,+7"), [7]);
        assert_eq!(params("1,1.5f"), [1.5f32.to_bits()]);
        assert_eq!(params("1,2."), [2.0f32.to_bits()]);
        assert_eq!(params("1,-2.5e3F"), [(-2500.0f32).to_bits()]);
        let d = 0.1f64.to_bits();
        assert_eq!(params("1,0.1d"), [d as u32, (d >> 32) as u32]);
        assert_eq!(params("1,-1L"), [u32::MAX, u32::MAX]);
        assert_eq!(params("1,5l"), [5, 0]);
        assert_eq!(params("1,4294967296UL"), [0, 1]);
        assert_eq!(params("1,\t 9"), [9]);
        assert_eq!(parse_spec(b" 307").unwrap(), FilterSpec { id: 307, params: vec![] });
    }

    #[test]
    fn bad_inputs_are_rejected() {
        for bad in [
            "",
            "307,9,",
            "307,,9",
            "307, ",
            "307,9 ",
            "307 ,9",
            "307,4294967296",
            "307,-2147483649",
            "307,1.5",
            "307,9x",
            "307,9q",
            "307,18446744073709551616UL",
            "307,9223372036854775808L",
            "307,-1UL",
            ",9",
            "x,9",
            "-1,9",
            "4294967296",
            "307,1e39f",
            "307,1e309d",
            "307,1.5uf",
            "307,ub",
            "307,b",
            "307,.",
            "307,1..f",
            "307,1e+f",
            "307,--1",
        ] {
            assert!(parse_spec(bad.as_bytes()).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn lists_and_format_prefix() {
        let list = parse_spec_list(b"[2]307,9|1,2|40000").unwrap();
        assert_eq!(list.format, 2);
        assert_eq!(list.specs.len(), 3);
        assert_eq!(list.specs[1], FilterSpec { id: 1, params: vec![2] });
        assert_eq!(parse_spec_list(b"").unwrap().specs.len(), 0);
        for bad in ["[2]", "[2", "[x]307", "307|", "307||1", "|307", "[99999999999]1"] {
            assert!(parse_spec_list(bad.as_bytes()).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn single_parameter() {
        assert_eq!(parse_parameter(b"  -17b").unwrap().words(), [239]);
        assert_eq!(parse_parameter(b"1L").unwrap().words(), [1, 0]);
        assert!(parse_parameter(b"   ").is_err());
    }

    #[test]
    fn fix8_round_trips() {
        let mut mem = 0x0102_0304_0506_0708u64.to_ne_bytes();
        let original = mem;
        fix8(&mut mem, false);
        fix8(&mut mem, true);
        assert_eq!(mem, original);
    }

    /// daux.c's contract on either byte order: an 8-byte value travels as the two words
    /// `[low32, high32]`; a filter that copies those words' memory and applies fix8 with decode
    /// set gets the value back, and fix8 without decode gives a client those words. On a
    /// little-endian machine fix8 does nothing, so only a big-endian one (s390x, `cargo xtask
    /// cross`) can catch a wrong swap.
    #[test]
    fn fix8_turns_8_byte_values_into_low_and_high_words_on_either_byte_order() {
        for (spec, value) in
            [("1,1.5d", 1.5f64.to_bits()), ("1,-2L", (-2i64) as u64), ("1,18446744073709551615UL", u64::MAX)]
        {
            let words = params(spec);
            assert_eq!(words, [value as u32, (value >> 32) as u32], "{spec}");
            let mut memory = [0u8; 8];
            memory[..4].copy_from_slice(&words[0].to_ne_bytes());
            memory[4..].copy_from_slice(&words[1].to_ne_bytes());
            fix8(&mut memory, true);
            assert_eq!(u64::from_ne_bytes(memory), value, "{spec}: decoded by a filter");
            let mut memory = value.to_ne_bytes();
            fix8(&mut memory, false);
            let halves = [&memory[..4], &memory[4..]].map(|half| u32::from_ne_bytes(half.try_into().unwrap()));
            assert_eq!(halves, [words[0], words[1]], "{spec}: encoded by a client");
        }
    }
}

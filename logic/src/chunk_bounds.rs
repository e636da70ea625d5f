// SPDX-License-Identifier: BSD-3-Clause
//! The bounds and text an NCZarr chunk filter chain keeps to: a decoded chunk's byte size, how
//! much larger a decoded stage may be, and the `_Codecs` attribute's order.

use std::os::raw::c_int;

/// `_Codecs`: the codec texts of a variable's filters, given as `(chain position, codec text)`,
/// in chain order, as a JSON array (`None` when the variable has no filter at all). Filters whose
/// codec text is not known yet (defined but not written) are left out.
pub fn codecs_json_array<'a>(filters: impl IntoIterator<Item = (usize, Option<&'a str>)>) -> Option<String> {
    let mut ordered: Vec<(usize, Option<&str>)> = filters.into_iter().collect();
    if ordered.is_empty() {
        return None;
    }
    ordered.sort_by_key(|(chain_index, _)| *chain_index);
    let texts: Vec<&str> = ordered.iter().filter_map(|(_, text)| *text).collect();
    Some(format!("[{}]", texts.join(",")))
}

/// How much bigger than the chunk an intermediate decoded stage may be: what an earlier stage's
/// encoding adds (fletcher32's 4 bytes, a blosc header, a compressor's worst-case expansion on
/// incompressible data, about 1% for bzip2).
pub fn decode_limit_for(chunk_bytes: usize) -> usize {
    chunk_bytes.saturating_add(chunk_bytes / 32).saturating_add(4096)
}

/// The byte size of a variable's decoded chunk: `chunksize` (`NCZ_VAR_INFO_T`), or for a string
/// variable stored as `char[maxstrlen]` per element (4.9.2 on), `chunkproduct * maxstrlen`.
/// A size that is zero, negative or overflows (a hostile `.zarray` or attribute) is an error:
/// the chain decodes nothing it cannot bound.
pub fn chunk_byte_size(chunksize: u64, string_elements: Option<(u64, c_int)>) -> Result<usize, String> {
    let size = match string_elements {
        Some((elements, maxstrlen)) => {
            let maxstrlen = u64::try_from(maxstrlen)
                .ok()
                .filter(|&len| len > 0)
                .ok_or_else(|| format!("its string length {maxstrlen} is not positive"))?;
            elements
                .checked_mul(maxstrlen)
                .ok_or_else(|| format!("its {elements} strings of {maxstrlen} bytes overflow a chunk's size"))?
        }
        None => chunksize,
    };
    match usize::try_from(size) {
        Ok(0) => Err("its chunk size is 0".into()),
        Ok(size) => Ok(size),
        Err(_) => Err(format!("its chunk size {size} does not fit in memory")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk size that is not known (zero, a bad string length, an overflow) is an error, so
    /// that no decode runs unbounded.
    #[test]
    fn a_chunk_size_that_is_not_known_is_an_error() {
        assert_eq!(chunk_byte_size(400, None), Ok(400));
        assert_eq!(chunk_byte_size(800, Some((100, 12))), Ok(1200), "strings: char[maxstrlen] per element");
        for (chunksize, strings, why) in [
            (0, None, "chunk size is 0"),
            (8, Some((0, 12)), "chunk size is 0"),
            (8, Some((100, 0)), "string length 0 is not positive"),
            (8, Some((100, -1)), "string length -1 is not positive"),
            (8, Some((u64::MAX / 4, 8)), "overflow"),
        ] {
            let error = chunk_byte_size(chunksize, strings).unwrap_err();
            assert!(error.contains(why), "{chunksize} {strings:?}: {error}");
        }
    }

    /// In chain order (a stable sort: defined filters share position 0), unwritten ones left out.
    #[test]
    fn codecs_are_listed_in_chain_order() {
        assert_eq!(codecs_json_array([]), None);
        let filters =
            [(1, Some("{\"id\":\"b\"}")), (0, Some("{\"id\":\"a\"}")), (0, None), (0, Some("{\"id\":\"c\"}"))];
        assert_eq!(codecs_json_array(filters).as_deref(), Some("[{\"id\":\"a\"},{\"id\":\"c\"},{\"id\":\"b\"}]"));
        assert_eq!(codecs_json_array([(0, None)]).as_deref(), Some("[]"), "a filter, none written yet");
    }
}

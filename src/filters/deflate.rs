//! deflate (HDF5 filter 1): a zlib stream (2-byte header, adler32 trailer) as `compress2()`
//! writes it, through flate2 with the zlib-rs backend. Decoding stops at the end of the stream
//! (trailing bytes are ignored, as H5Zdeflate does) and fails on a truncated or corrupt one.
#![forbid(unsafe_code)]

use super::{fail, output, FilterResult};
use crate::c_heap::CVec;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// zlib-rs's level 1 is a faster, looser strategy (zlib-ng's "quick") whose output runs 10–15%
/// larger than zlib's level 1; its level 2 matches zlib's level 1 in size, so level 1 uses it.
/// (The stored parameter stays 1; decoders do not depend on it.)
fn effective_level(level: u32) -> u32 {
    if level == 1 {
        2
    } else {
        level
    }
}

/// Compresses `input` at `level` (0..=9).
pub fn encode(level: u32, input: &[u8]) -> FilterResult<CVec> {
    if level > 9 {
        return fail(format!("deflate level {level} is not 0..9"));
    }
    let mut stream = Compress::new(Compression::new(effective_level(level)), true);
    // zlib's deflateBound for the stream plus header and trailer: one pass is enough.
    let mut out = output(input.len() + input.len() / 1000 + (input.len() >> 12) + 64)?;
    loop {
        let consumed = stream.total_in() as usize;
        let written = stream.total_out() as usize;
        let status = stream
            .compress(&input[consumed..], &mut out.whole_mut()[written..], FlushCompress::Finish)
            .map_err(|e| super::FilterError(format!("deflate: {e}")))?;
        out.set_len(stream.total_out() as usize);
        match status {
            Status::StreamEnd => return Ok(out),
            _ => {
                let grown = out.capacity() * 2;
                out.reserve_total(grown).map_err(super::out_of_memory)?;
            }
        }
    }
}

/// Decompresses a zlib stream, producing at most `limit` bytes.
pub fn decode(input: &[u8], limit: usize) -> FilterResult<CVec> {
    let mut stream = Decompress::new(true);
    let mut out = super::decode_buffer(input.len(), 4, limit)?;
    loop {
        let consumed = stream.total_in() as usize;
        let written = stream.total_out() as usize;
        let status = stream
            .decompress(&input[consumed..], &mut out.whole_mut()[written..], FlushDecompress::None)
            .map_err(|e| super::FilterError(format!("deflate: corrupt stream ({e})")))?;
        out.set_len(stream.total_out() as usize);
        if status == Status::StreamEnd {
            return Ok(out);
        }
        super::grow_decoded("deflate", &mut out, stream.total_in() as usize == input.len(), limit)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Miri interprets zlib-rs too: small inputs and a few levels there.
    const VALUES: u32 = if cfg!(miri) { 256 } else { 100_000 };
    const LEVELS: &[u32] = if cfg!(miri) { &[0, 1, 9] } else { &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9] };

    #[test]
    fn round_trip_and_zlib_framing() {
        let data: Vec<u8> = (0..VALUES).flat_map(|i| ((i as f32).sin() * 1000.0).to_le_bytes()).collect();
        for &level in LEVELS {
            let packed = encode(level, &data).unwrap();
            assert_eq!(packed.as_slice()[0], 0x78, "zlib header");
            assert_eq!(decode(packed.as_slice(), usize::MAX).unwrap().as_slice(), &data[..]);
        }
        assert!(encode(10, &data).is_err());
        assert_eq!(decode(encode(6, &[]).unwrap().as_slice(), 100).unwrap().len(), 0);
    }

    #[test]
    fn bad_streams_fail_cleanly() {
        let data = vec![7u8; VALUES as usize * 10];
        let packed = encode(9, &data).unwrap();
        let bytes = packed.as_slice();
        assert!(decode(&bytes[..bytes.len() / 2], usize::MAX).is_err(), "truncated");
        let mut corrupt = bytes.to_vec();
        corrupt[bytes.len() - 2] ^= 0xff;
        assert!(decode(&corrupt, usize::MAX).is_err(), "bad adler32");
        assert!(decode(b"not zlib", usize::MAX).is_err());
        let bomb = decode(bytes, data.len() / 16).unwrap_err();
        assert!(bomb.0.contains("exceeds"), "{bomb}");
        let mut trailing = bytes.to_vec();
        trailing.extend_from_slice(b"junk");
        assert_eq!(decode(&trailing, usize::MAX).unwrap().len(), data.len(), "trailing bytes ignored");
    }
}

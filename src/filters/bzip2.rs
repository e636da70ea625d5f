//! bzip2 (filter 307): a raw `.bz2` stream ("BZh9…") as `BZ2_bzBuffToBuffCompress` writes it,
//! block size `params[0]` (1..=9, default 9), through the `bzip2` crate on libbz2-rs-sys.
#![forbid(unsafe_code)]

use super::{fail, out_of_memory, output, FilterError, FilterResult};
use crate::c_heap::CVec;
use bzip2::{Action, Compress, Compression, Decompress, Status};

/// The block size in 100 kB units: `params[0]`, or 9 when absent (H5Zbzip2.c).
pub fn block_size(params: &[u32]) -> FilterResult<u32> {
    match params.first().copied().unwrap_or(9) {
        level @ 1..=9 => Ok(level),
        level => fail(format!("bzip2 block size {level} is not 1..9")),
    }
}

pub fn encode(block_size: u32, input: &[u8]) -> FilterResult<CVec> {
    let mut stream = Compress::new(Compression::new(block_size), 0);
    let mut out = output(input.len() + input.len() / 100 + 600)?;
    loop {
        let consumed = stream.total_in() as usize;
        let written = stream.total_out() as usize;
        let status = stream
            .compress(&input[consumed..], &mut out.whole_mut()[written..], Action::Finish)
            .map_err(|e| FilterError(format!("bzip2: {e}")))?;
        out.set_len(stream.total_out() as usize);
        if status == Status::StreamEnd {
            return Ok(out);
        }
        let grown = out.capacity() * 2;
        out.reserve_total(grown).map_err(out_of_memory)?;
    }
}

/// Decompresses one bzip2 stream, producing at most `limit` bytes.
pub fn decode(input: &[u8], limit: usize) -> FilterResult<CVec> {
    let mut stream = Decompress::new(false);
    let mut out = super::decode_buffer(input.len(), 3, limit)?;
    loop {
        let consumed = stream.total_in() as usize;
        let written = stream.total_out() as usize;
        let status = stream
            .decompress(&input[consumed..], &mut out.whole_mut()[written..])
            .map_err(|e| FilterError(format!("bzip2: corrupt stream ({e})")))?;
        out.set_len(stream.total_out() as usize);
        if status == Status::StreamEnd {
            return Ok(out);
        }
        super::grow_decoded("bzip2", &mut out, stream.total_in() as usize == input.len(), limit)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_header_and_bad_input() {
        let data: Vec<u8> = (0..300_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        for level in [1, 9] {
            let packed = encode(level, &data).unwrap();
            assert_eq!(&packed.as_slice()[..4], format!("BZh{level}").as_bytes());
            assert_eq!(decode(packed.as_slice(), usize::MAX).unwrap().as_slice(), &data[..]);
        }
        let packed = encode(9, &data).unwrap();
        assert!(decode(&packed.as_slice()[..packed.len() / 2], usize::MAX).is_err());
        assert!(decode(packed.as_slice(), 1000).is_err());
        assert!(decode(b"BZh9 not really", usize::MAX).is_err());
        assert_eq!(block_size(&[]), Ok(9));
        assert!(block_size(&[0]).is_err() && block_size(&[10]).is_err());
    }
}

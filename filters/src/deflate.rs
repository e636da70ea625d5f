// SPDX-License-Identifier: BSD-3-Clause
//! deflate (HDF5 filter 1): a zlib stream (2-byte header, adler32 trailer) as `compress2()`
//! writes it, through flate2 on zlib-rs (on the system's zlib in the distribution build).
//! Decoding stops at the end of the stream (trailing bytes are ignored, as H5Zdeflate does) and
//! fails on a truncated or corrupt one.
//!
//! Chunks over [`PARALLEL_ABOVE`] are compressed as pigz does, on all cores: [`BLOCK`]-sized
//! pieces, each primed with the 32 KiB before it as a dictionary and ended at a byte boundary
//! (sync flush), joined into one zlib stream with the whole chunk's Adler-32. Any zlib reader
//! reads it, and its bytes depend only on the chunk and the level, never on the thread count.
//! (This is NCZarr's zlib codec and ncfilters' plugin; HDF5's own deflate for netCDF-4 files is
//! a predefined filter no library replaces.)
#![forbid(unsafe_code)]

use super::{fail, output, FilterResult};
use crate::c_heap::CVec;
use crate::worker_pool;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// Chunks larger than this are compressed in [`BLOCK`]s on all cores.
pub const PARALLEL_ABOVE: usize = 1 << 20;
/// One piece of a parallel stream. pigz uses 128 KiB; twice that keeps the stream within 0.5 %
/// of the single-threaded one on real float32 data (BENCHMARKS.md).
pub const BLOCK: usize = 256 << 10;
/// deflate's window: what a piece may refer back to.
const WINDOW: usize = 32 << 10;

/// zlib-rs's level 1 is a faster, looser strategy (zlib-ng's "quick") whose output runs 10–15%
/// larger than zlib's level 1; its level 2 matches zlib's level 1 in size, so level 1 uses it.
/// (The stored parameter stays 1; decoders do not depend on it.) The system's zlib keeps its own.
fn effective_level(level: u32) -> u32 {
    if level == 1 && cfg!(not(feature = "system-libs")) {
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
    if level > 0 && input.len() > PARALLEL_ABOVE {
        return encode_in_blocks(level, input, worker_pool::run);
    }
    encode_whole(level, input)
}

/// One zlib stream from one deflate pass, as `compress2()` writes it.
fn encode_whole(level: u32, input: &[u8]) -> FilterResult<CVec> {
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

/// The zlib header zlib writes for `level` (RFC 1950: 32 KiB window, FLEVEL as deflate.c
/// derives it, check bits).
fn zlib_header(level: u32) -> [u8; 2] {
    let flevel = match effective_level(level) {
        0 | 1 => 0,
        2..=5 => 1,
        6 => 2,
        _ => 3,
    };
    let header = (0x78u16 << 8) | (flevel << 6);
    (header + 31 - header % 31).to_be_bytes()
}

/// One block's raw deflate data and the Adler-32 of its input.
struct Block {
    raw: Vec<u8>,
    adler: u32,
}

/// pigz's parallel deflate (see the module comment), its blocks run by `runner`.
fn encode_in_blocks(level: u32, input: &[u8], runner: worker_pool::Runner) -> FilterResult<CVec> {
    let blocks = input.len().div_ceil(BLOCK);
    let compress_block = |number: usize| {
        let start = number * BLOCK;
        let block = &input[start..(start + BLOCK).min(input.len())];
        let dictionary = &input[start.saturating_sub(WINDOW)..start];
        let last = number + 1 == blocks;
        deflate_block(level, dictionary, block, last).map(|raw| Block { raw, adler: crate::adler32::adler32(block) })
    };
    let pieces = super::map_pieces("deflate", blocks, &compress_block, runner)?;
    let size = 2 + pieces.iter().map(|block| block.raw.len()).sum::<usize>() + 4;
    let mut out = super::output_uninit(size)?;
    out.extend_from_slice(&zlib_header(level)).map_err(super::out_of_memory)?;
    let mut adler = 1;
    // Each block is freed as soon as it is copied, so the join needs one compressed chunk more.
    for (number, block) in pieces.into_iter().enumerate() {
        out.extend_from_slice(&block.raw).map_err(super::out_of_memory)?;
        let length = (input.len() - number * BLOCK).min(BLOCK) as u64;
        adler = crate::adler32::combine(adler, block.adler, length);
    }
    out.extend_from_slice(&adler.to_be_bytes()).map_err(super::out_of_memory)?;
    Ok(out)
}

/// Raw deflate of `block` after `dictionary`, ending on a byte boundary (an empty stored block)
/// unless it is the `last` one, which ends the stream.
fn deflate_block(level: u32, dictionary: &[u8], block: &[u8], last: bool) -> FilterResult<Vec<u8>> {
    let error = |e: flate2::CompressError| super::FilterError(format!("deflate: {e}"));
    let mut stream = Compress::new(Compression::new(effective_level(level)), false);
    if !dictionary.is_empty() {
        stream.set_dictionary(dictionary).map_err(error)?;
    }
    let flush = if last { FlushCompress::Finish } else { FlushCompress::Sync };
    let mut raw = Vec::with_capacity(block.len() + block.len() / 1000 + 64);
    loop {
        let consumed = stream.total_in() as usize;
        let status = stream.compress_vec(&block[consumed..], &mut raw, flush).map_err(error)?;
        let done = if last {
            status == Status::StreamEnd
        } else {
            stream.total_in() as usize == block.len() && raw.len() < raw.capacity()
        };
        if done {
            raw.shrink_to_fit();
            return Ok(raw);
        }
        raw.reserve(raw.capacity().max(4096));
    }
}

/// Decompresses a zlib stream, producing at most `limit` bytes.
pub fn decode(input: &[u8], limit: usize) -> FilterResult<CVec> {
    let mut stream = Decompress::new(true);
    super::decode_in_steps("deflate", input, 4, limit, |unread, room| {
        let (read, written) = (stream.total_in(), stream.total_out());
        let status = stream
            .decompress(unread, room, FlushDecompress::None)
            .map_err(|e| super::FilterError(format!("deflate: corrupt stream ({e})")))?;
        Ok(super::Stepped {
            ended: status == Status::StreamEnd,
            read: (stream.total_in() - read) as usize,
            written: (stream.total_out() - written) as usize,
        })
    })
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

    /// Real-looking float32 data of `bytes` bytes.
    fn floats(bytes: usize) -> Vec<u8> {
        (0..bytes / 4).flat_map(|i| ((i as f32 * 0.0007).sin() * 300.0 + (i % 7) as f32 * 0.01).to_le_bytes()).collect()
    }

    #[test]
    #[cfg_attr(miri, ignore)] // megabytes through zlib-rs: too slow interpreted
    fn large_chunks_are_one_zlib_stream_from_blocks() {
        let data = floats(PARALLEL_ABOVE + 3 * BLOCK + 12345);
        for level in [1, 6, 9] {
            let blocks = encode(level, &data).unwrap();
            let whole = encode_whole(level, &data).unwrap();
            assert_ne!(blocks.as_slice(), whole.as_slice(), "level {level}: the block path ran");
            assert_eq!(blocks.as_slice()[..2], whole.as_slice()[..2], "level {level}: zlib's header");
            assert_eq!(decode(blocks.as_slice(), usize::MAX).unwrap().as_slice(), &data[..]);
            // zlib (flate2's reader, a second decoder) reads it as one stream too.
            let mut read = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(blocks.as_slice()), &mut read).unwrap();
            assert!(read == data, "level {level}");
            assert!(blocks.len() * 1000 <= whole.len() * 1005, "level {level}: {} vs {}", blocks.len(), whole.len());
            // The blocks run one after another on one thread give the same bytes.
            let serial = encode_in_blocks(level, &data, worker_pool::run_serially).unwrap();
            assert!(serial.as_slice() == blocks.as_slice());
        }
        let mut corrupt = encode(1, &data).unwrap().as_slice().to_vec();
        let at = corrupt.len() - 1;
        corrupt[at] ^= 1;
        assert!(decode(&corrupt, usize::MAX).is_err(), "the combined Adler-32 is checked");
        let exact = floats(PARALLEL_ABOVE);
        assert_eq!(
            encode(1, &exact).unwrap().as_slice(),
            encode_whole(1, &exact).unwrap().as_slice(),
            "at the threshold: one pass"
        );
        assert_eq!(
            encode(0, &data).unwrap().as_slice(),
            encode_whole(0, &data).unwrap().as_slice(),
            "stored: one pass"
        );
    }

    #[test]
    fn headers_are_zlibs() {
        for level in 0..=9 {
            let whole = encode_whole(level, b"header").unwrap();
            assert_eq!(zlib_header(level), whole.as_slice()[..2], "level {level}");
        }
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

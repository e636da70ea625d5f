// SPDX-License-Identifier: BSD-3-Clause
//! bzip2 (filter 307): a raw `.bz2` stream ("BZh9…") as `BZ2_bzBuffToBuffCompress` writes it,
//! block size `params[0]` (1..=9, default 9), through the `bzip2` crate on libbz2-rs-sys.
//!
//! A chunk larger than one [`piece_size`] is compressed as pieces on all cores, each piece one
//! bzip2 block, and the blocks joined bit by bit into one stream with the combined CRC (as
//! lbzip2 does), so that every reader sees a single ordinary stream: netcdf-c's C plugin stops at
//! the first end of stream and would drop the rest of a multi-stream chunk. The bytes depend on
//! the chunk and the block size only, never on the thread count.
#![forbid(unsafe_code)]

use super::{fail, out_of_memory, output, FilterError, FilterResult};
use crate::c_heap::CVec;
use crate::worker_pool;
use bzip2::{Action, Compress, Compression, Decompress, Status};

/// A block's first 48 bits (the BCD digits of pi).
const BLOCK_MAGIC: u64 = 0x3141_5926_5359;
/// The end-of-stream marker's 48 bits (of sqrt(pi)).
const END_MAGIC: u64 = 0x1772_4538_5090;
/// "BZh" and the block-size digit.
const HEADER_BITS: usize = 32;
/// The end-of-stream marker and the combined CRC.
const TRAILER_BITS: usize = 80;

/// The block size in 100 kB units: `params[0]`, or 9 when absent (H5Zbzip2.c).
pub fn block_size(params: &[u32]) -> FilterResult<u32> {
    match params.first().copied().unwrap_or(9) {
        level @ 1..=9 => Ok(level),
        level => fail(format!("bzip2 block size {level} is not 1..9")),
    }
}

/// The input of one piece of a parallel stream: what always fits one block. libbz2 fills a
/// block with `100000 * block_size - 19` symbols of its first run-length stage, which turns 4
/// equal bytes into 5 symbols at worst; the margin covers the run pending at the end.
pub fn piece_size(block_size: u32) -> usize {
    (100_000 * block_size as usize - 19) * 4 / 5 - 64
}

pub fn encode(block_size: u32, input: &[u8]) -> FilterResult<CVec> {
    if input.len() > piece_size(block_size) {
        return encode_in_pieces(block_size, input, worker_pool::run);
    }
    encode_stream(block_size, input)
}

/// One stream from one pass of libbz2.
fn encode_stream(block_size: u32, input: &[u8]) -> FilterResult<CVec> {
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

/// Pieces of [`piece_size`] compressed as one-block streams by `runner`, joined into one stream.
/// Memory: each piece keeps only its bytes, and is freed as soon as it is joined, so the join
/// needs about one compressed chunk more, not three.
fn encode_in_pieces(block_size: u32, input: &[u8], runner: worker_pool::Runner) -> FilterResult<CVec> {
    let size = piece_size(block_size);
    let compress_piece = |number: usize| {
        let piece = &input[number * size..((number + 1) * size).min(input.len())];
        encode_stream(block_size, piece).and_then(|mut stream| {
            stream.shrink_to_fit();
            let (end, crc) = only_block(stream.as_slice())?;
            Ok((stream, end, crc))
        })
    };
    let pieces = super::map_pieces("bzip2", input.len().div_ceil(size), &compress_piece, runner)?;
    let bits = HEADER_BITS + pieces.iter().map(|(_, end, _)| end - HEADER_BITS).sum::<usize>() + TRAILER_BITS;
    let mut writer = BitWriter::new(super::output_uninit(bits.div_ceil(8))?);
    writer.copy_bits(pieces[0].0.as_slice(), 0, HEADER_BITS)?;
    let mut combined = 0u32;
    for (stream, end, crc) in pieces {
        writer.copy_bits(stream.as_slice(), HEADER_BITS, end)?;
        combined = combined.rotate_left(1) ^ crc;
    }
    writer.put(END_MAGIC >> 24, 24);
    writer.put(END_MAGIC & 0xff_ffff, 24);
    writer.put(u64::from(combined), 32);
    writer.finish()
}

/// `count` (at most 57) bits of `data` from bit `start`, most significant first.
fn bits(data: &[u8], start: usize, count: usize) -> u64 {
    let mut value = 0u64;
    for bit in start..start + count {
        value = (value << 1) | u64::from(data[bit / 8] >> (7 - bit % 8) & 1);
    }
    value
}

/// Where the one block of a stream ends (the bit where its end-of-stream marker starts) and the
/// block's CRC; an error if the stream is not exactly one block.
fn only_block(stream: &[u8]) -> FilterResult<(usize, u32)> {
    let total = stream.len() * 8;
    if total < HEADER_BITS + 80 + TRAILER_BITS || bits(stream, HEADER_BITS, 48) != BLOCK_MAGIC {
        return fail("bzip2: a piece is not one block");
    }
    let crc = bits(stream, HEADER_BITS + 48, 32) as u32;
    // One block: the combined CRC is the block's. The marker is followed by 0..=7 padding bits.
    (0..8)
        .map(|pad| total - TRAILER_BITS - pad)
        .find(|&end| bits(stream, end, 48) == END_MAGIC && bits(stream, end + 48, 32) as u32 == crc)
        .map(|end| (end, crc))
        .ok_or_else(|| FilterError("bzip2: a piece is not one block".into()))
}

/// Bits appended most significant first, into a C block; whole bytes reach it in batches.
struct BitWriter {
    out: CVec,
    /// Whole bytes not yet in `out`.
    staged: Vec<u8>,
    /// The last `count` (< 8) bits written, not yet a whole byte.
    pending: u64,
    count: u32,
}

/// The bytes a [`BitWriter`] gathers before it appends them to its block.
const BATCH: usize = 1 << 16;

impl BitWriter {
    fn new(out: CVec) -> Self {
        BitWriter { out, staged: Vec::with_capacity(BATCH), pending: 0, count: 0 }
    }

    /// Appends the low `count` (at most 32) bits of `value`.
    fn put(&mut self, value: u64, count: u32) {
        self.pending = (self.pending << count) | (value & ((1 << count) - 1));
        self.count += count;
        while self.count >= 8 {
            self.count -= 8;
            self.staged.push((self.pending >> self.count) as u8);
        }
        self.pending &= (1 << self.count) - 1;
    }

    /// Moves the staged bytes into the block.
    fn flush(&mut self) -> FilterResult<()> {
        self.out.extend_from_slice(&self.staged).map_err(out_of_memory)?;
        self.staged.clear();
        Ok(())
    }

    /// Appends bits `start..end` of `data` (`start` on a byte boundary).
    fn copy_bits(&mut self, data: &[u8], start: usize, end: usize) -> FilterResult<()> {
        let whole = &data[start / 8..end / 8];
        if self.count == 0 {
            self.flush()?;
            self.out.extend_from_slice(whole).map_err(out_of_memory)?;
        } else {
            for batch in whole.chunks(BATCH) {
                for &byte in batch {
                    self.put(u64::from(byte), 8);
                }
                self.flush()?;
            }
        }
        let rest = (end % 8) as u32;
        if rest > 0 {
            self.put(u64::from(data[end / 8] >> (8 - rest)), rest);
        }
        Ok(())
    }

    /// The block, padded with zero bits to a whole byte.
    fn finish(mut self) -> FilterResult<CVec> {
        if self.count > 0 {
            self.put(0, 8 - self.count);
        }
        self.flush()?;
        Ok(self.out)
    }
}

/// Decompresses one bzip2 stream, producing at most `limit` bytes.
pub fn decode(input: &[u8], limit: usize) -> FilterResult<CVec> {
    let mut stream = Decompress::new(false);
    super::decode_in_steps("bzip2", input, 3, limit, |unread, room| {
        let (read, written) = (stream.total_in(), stream.total_out());
        let status =
            stream.decompress(unread, room).map_err(|e| FilterError(format!("bzip2: corrupt stream ({e})")))?;
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

    /// Float-like data with runs of 4 equal bytes, bzip2's worst case for fitting a block.
    fn awkward(bytes: usize) -> Vec<u8> {
        (0..bytes)
            .map(|i| if i % 8 < 4 { (i / 8 % 251) as u8 } else { ((i as u64).wrapping_mul(2654435761) >> 13) as u8 })
            .collect()
    }

    #[test]
    #[cfg_attr(miri, ignore)] // megabytes through bzip2: too slow interpreted
    fn large_chunks_are_one_stream_from_pieces() {
        for level in [1, 9] {
            let data = awkward(2 * piece_size(level) + 12345);
            let joined = encode(level, &data).unwrap();
            let serial = encode_in_pieces(level, &data, worker_pool::run_serially).unwrap();
            assert!(joined.as_slice() == serial.as_slice(), "level {level}: the thread count changed the bytes");
            assert_eq!(&joined.as_slice()[..4], format!("BZh{level}").as_bytes());
            assert!(decode(joined.as_slice(), usize::MAX).unwrap().as_slice() == &data[..], "level {level}");
            // One stream: a second decoder (the bzip2 crate's reader, which would stop at the first
            // end of stream like netcdf-c's C plugin) reads all of it.
            let mut read = Vec::new();
            std::io::Read::read_to_end(&mut bzip2::read::BzDecoder::new(joined.as_slice()), &mut read).unwrap();
            assert!(read == data, "level {level}");
        }
        // On float data the pieces' blocks (80 % of a full one) cost under 2 % of size.
        let floats: Vec<u8> = (0..3 * piece_size(9) / 4)
            .flat_map(|i| ((i as f32 * 0.0007).sin() * 300.0 + (i % 7) as f32 * 0.01).to_le_bytes())
            .collect();
        let (joined, whole) = (encode(9, &floats).unwrap(), encode_stream(9, &floats).unwrap());
        assert!(joined.len() * 100 <= whole.len() * 102, "{} vs {}", joined.len(), whole.len());
        let at_the_limit = awkward(piece_size(9));
        assert!(encode(9, &at_the_limit).unwrap().as_slice() == encode_stream(9, &at_the_limit).unwrap().as_slice());
        // Runs of 4 expand by 5/4, the most: a piece of them still makes one block.
        let runs: Vec<u8> = (0..piece_size(1)).map(|i| (i / 4 % 2) as u8).collect();
        assert!(only_block(encode_stream(1, &runs).unwrap().as_slice()).is_ok());
    }
}

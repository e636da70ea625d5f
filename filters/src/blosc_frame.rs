// SPDX-License-Identifier: BSD-3-Clause
//! The layout of a c-blosc 1.x frame, for compressing and decompressing one frame in pieces.
//!
//! A frame is a 16-byte header (format versions, flags, type size, then little-endian
//! `nbytes`, `blocksize` and `cbytes`), one 32-bit start offset per block, then each block's
//! streams. Blocks are compressed independently, so frames of consecutive whole blocks,
//! compressed with the same settings and block size, join into the frame of all of them: the
//! headers agree, the streams follow one another, and only the start offsets move.

#![forbid(unsafe_code)]

/// `BLOSC_MAX_OVERHEAD`: the header.
pub const HEADER: usize = 16;
/// `BLOSC_MEMCPYED`: the frame holds the input as is, after the header, with no block starts.
const MEMCPYED: u8 = 0x2;

/// Where the streams of a frame of `blocks` blocks start: after the header and a 32-bit start
/// per block.
pub fn streams_at(blocks: usize) -> usize {
    HEADER + 4 * blocks
}

/// What a frame's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Format versions, flags and type size: equal in frames written with the same settings.
    pub leading: [u8; 4],
    pub nbytes: usize,
    pub block_size: usize,
    pub cbytes: usize,
}

impl Header {
    pub fn read(frame: &[u8]) -> Option<Header> {
        let word = |at: usize| frame.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        Some(Header {
            leading: frame.get(..4)?.try_into().ok()?,
            nbytes: word(4)?,
            block_size: word(8)?,
            cbytes: word(12)?,
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.leading);
        for value in [self.nbytes, self.block_size, self.cbytes] {
            out.extend_from_slice(&(value as u32).to_le_bytes());
        }
    }

    pub fn memcpyed(&self) -> bool {
        self.leading[2] & MEMCPYED != 0
    }

    fn blocks(&self) -> usize {
        self.nbytes.div_ceil(self.block_size)
    }
}

/// A frame of whole blocks in order: its header, its block starts, and where its streams are.
#[derive(Debug)]
struct Blocks<'a> {
    header: Header,
    starts: Vec<usize>,
    streams: &'a [u8],
}

impl Blocks<'_> {
    /// Where this frame's streams start.
    fn streams_at(&self) -> usize {
        streams_at(self.starts.len())
    }
}

/// `frame` read as blocks whose streams follow one another in block order (as c-blosc writes
/// them on one thread), or `None`.
fn blocks(frame: &[u8]) -> Option<Blocks<'_>> {
    let header = Header::read(frame)?;
    if header.memcpyed() || header.block_size == 0 || header.cbytes > frame.len() {
        return None;
    }
    let count = header.blocks();
    let first = HEADER.checked_add(count.checked_mul(4)?)?;
    let starts: Vec<usize> = frame
        .get(HEADER..first)?
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let in_order = starts.first() == Some(&first)
        && starts.windows(2).all(|pair| pair[0] < pair[1])
        && starts.last().is_some_and(|&last| last < header.cbytes);
    in_order.then(|| Blocks { header, starts, streams: &frame[first..header.cbytes] })
}

/// One frame written from frames of its consecutive whole blocks, taken in block order as they
/// come: each gives where its streams are, to be written after those before it; the header and
/// block starts, known once every block has come, are written last, before the streams.
#[derive(Debug)]
pub struct Joiner {
    nbytes: usize,
    block_size: usize,
    leading: Option<[u8; 4]>,
    /// The block starts so far, as written.
    starts: Vec<u8>,
    taken_bytes: usize,
    streams_len: usize,
    /// A frame whose last block is partial has come: it must be the last.
    ended: bool,
}

impl Joiner {
    /// The joiner of a frame of `nbytes` bytes in blocks of `block_size`.
    pub fn new(nbytes: usize, block_size: usize) -> Joiner {
        Joiner { nbytes, block_size, leading: None, starts: Vec::new(), taken_bytes: 0, streams_len: 0, ended: false }
    }

    fn blocks(&self) -> usize {
        self.nbytes.div_ceil(self.block_size.max(1))
    }

    /// Where the joined frame's streams start: the length of its header and block starts.
    pub fn streams_at(&self) -> usize {
        streams_at(self.blocks())
    }

    /// The joined frame's length so far: where the next frame's streams go.
    pub fn written(&self) -> usize {
        self.streams_at() + self.streams_len
    }

    /// Takes `frame`, the next blocks of the joined one, and gives the range of its streams in
    /// it; `None` when it is not such a frame (other settings or block size, blocks past the
    /// joined frame's, a partial block before the end), or when a writer of the joined frame
    /// into `room` bytes that gives each stream, after its length word, `worst(bytes the stream
    /// holds decoded)` of room, would have had less left than that before one of its streams
    /// (c-blosc writes a block's streams into what is left of the room when less is left, and
    /// may then store the whole chunk instead). Nothing is taken on `None`.
    pub fn take(
        &mut self,
        frame: &[u8],
        room: usize,
        worst: impl Fn(usize) -> usize,
    ) -> Option<std::ops::Range<usize>> {
        let piece = blocks(frame)?;
        let leading = self.leading.unwrap_or(piece.header.leading);
        let fits = !self.ended
            && piece.header.leading == leading
            && piece.header.block_size == self.block_size
            && self.taken_bytes + piece.header.nbytes <= self.nbytes
            && never_short_of_room(&piece, self.written(), room, worst);
        if !fits {
            return None;
        }
        let moved = piece.starts.iter().map(|start| u32::try_from(start - piece.streams_at() + self.written()).ok());
        let moved: Vec<u32> = moved.collect::<Option<_>>()?;
        self.starts.extend(moved.iter().flat_map(|start| start.to_le_bytes()));
        self.leading = Some(leading);
        self.taken_bytes += piece.header.nbytes;
        self.streams_len += piece.streams.len();
        self.ended = piece.header.nbytes % self.block_size != 0;
        Some(piece.streams_at()..piece.streams_at() + piece.streams.len())
    }

    /// The joined frame's header and block starts, once frames of all its blocks have been
    /// taken.
    pub fn head(&self) -> Option<Vec<u8>> {
        let cbytes = self.written();
        if self.taken_bytes != self.nbytes || u32::try_from(cbytes).is_err() || u32::try_from(self.nbytes).is_err() {
            return None;
        }
        let mut head = Vec::with_capacity(self.streams_at());
        Header { leading: self.leading?, nbytes: self.nbytes, block_size: self.block_size, cbytes }.write(&mut head);
        head.extend_from_slice(&self.starts);
        Some(head)
    }
}

/// Whether `piece`'s streams, written from `written` on, never had less than `worst` of `room`
/// left (see [`Joiner::take`]); `false` when a block's streams cannot be read.
fn never_short_of_room(piece: &Blocks<'_>, mut written: usize, room: usize, worst: impl Fn(usize) -> usize) -> bool {
    let streams_at = piece.streams_at();
    for (index, &start) in piece.starts.iter().enumerate() {
        let end = piece.starts.get(index + 1).map_or(piece.streams.len(), |&next| next - streams_at);
        let mut block = &piece.streams[start - streams_at..end];
        let decoded = piece.header.block_size.min(piece.header.nbytes - index * piece.header.block_size);
        let mut lengths = Vec::new();
        while let Some((word, rest)) = block.split_first_chunk::<4>() {
            let length = u32::from_le_bytes(*word) as usize;
            let Some(stream_rest) = rest.get(length..) else { return false };
            lengths.push(length);
            block = stream_rest;
        }
        if !block.is_empty() || lengths.is_empty() || decoded % lengths.len() != 0 {
            return false;
        }
        for length in &lengths {
            written += 4;
            if written + worst(decoded / lengths.len()) > room {
                return false;
            }
            written += length;
        }
    }
    true
}

/// A frame of some of a frame's blocks, and where their bytes go in the decoded chunk: its
/// header and block starts, then `streams` of the frame it was cut from (copied only when the
/// piece is decoded, so that a chunk's pieces are not all in memory at once).
#[derive(Debug)]
pub struct Piece {
    pub head: Vec<u8>,
    pub streams: std::ops::Range<usize>,
    pub decoded_at: usize,
    pub decoded_len: usize,
}

impl Piece {
    /// The piece's frame, from the frame it was cut from.
    pub fn frame(&self, whole: &[u8]) -> Vec<u8> {
        [self.head.as_slice(), &whole[self.streams.clone()]].concat()
    }
}

/// `frame` cut into frames of `blocks_per_piece` blocks each (the last one holding the rest),
/// or `None` when its streams are not in block order or it would be one piece.
pub fn split(frame: &[u8], blocks_per_piece: usize) -> Option<Vec<Piece>> {
    let whole = blocks(frame)?;
    let count = whole.starts.len();
    let per_piece = blocks_per_piece.max(1);
    if count <= per_piece || whole.header.nbytes < 2 * whole.header.block_size {
        return None;
    }
    let whole_streams_at = whole.streams_at();
    let block = whole.header.block_size;
    // c-blosc refuses a frame smaller than its block size, so a partial last block joins the piece
    // before it.
    let mut firsts: Vec<usize> = (0..count).step_by(per_piece).collect();
    if whole.header.nbytes - firsts[firsts.len() - 1] * block < block {
        firsts.pop();
    }
    if firsts.len() < 2 {
        return None;
    }
    let mut pieces = Vec::with_capacity(firsts.len());
    for (index, &first_block) in firsts.iter().enumerate() {
        let end_block = firsts.get(index + 1).copied().unwrap_or(count);
        let starts = &whole.starts[first_block..end_block];
        let stream_start = starts[0] - whole_streams_at;
        let stream_end = whole.starts.get(end_block).map_or(whole.streams.len(), |&next| next - whole_streams_at);
        let streams = &whole.streams[stream_start..stream_end];
        let piece_streams_at = streams_at(starts.len());
        let decoded_at = first_block * block;
        let decoded_len = (end_block * block).min(whole.header.nbytes) - decoded_at;
        let cbytes = piece_streams_at + streams.len();
        let mut head = Vec::with_capacity(piece_streams_at);
        Header { nbytes: decoded_len, cbytes, ..whole.header }.write(&mut head);
        for start in starts {
            head.extend_from_slice(&((start - starts[0] + piece_streams_at) as u32).to_le_bytes());
        }
        let streams = whole_streams_at + stream_start..whole_streams_at + stream_end;
        pieces.push(Piece { head, streams, decoded_at, decoded_len });
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame of `sizes.len()` blocks of `block` bytes (the last `last` bytes), whose block `i`
    /// has one stream of `sizes[i]` bytes all equal to `label + i`.
    fn labelled_frame(block: usize, last: usize, sizes: &[usize], label: u8) -> Vec<u8> {
        let nbytes = block * (sizes.len() - 1) + last;
        let streams_at = HEADER + 4 * sizes.len();
        let cbytes = streams_at + sizes.iter().map(|size| 4 + size).sum::<usize>();
        let mut out = Vec::new();
        Header { leading: [2, 1, 0x11, 4], nbytes, block_size: block, cbytes }.write(&mut out);
        let mut at = streams_at;
        for size in sizes {
            out.extend_from_slice(&(at as u32).to_le_bytes());
            at += 4 + size;
        }
        for (index, size) in sizes.iter().enumerate() {
            out.extend_from_slice(&(*size as u32).to_le_bytes());
            out.extend(std::iter::repeat_n(label + index as u8, *size));
        }
        out
    }

    /// `frames` joined by a [`Joiner`] with room for anything, or `None` where it refuses one.
    fn joined(frames: &[&[u8]], nbytes: usize, block_size: usize) -> Option<Vec<u8>> {
        let mut joiner = Joiner::new(nbytes, block_size);
        let mut out = vec![0; joiner.streams_at()];
        for frame in frames {
            out.extend_from_slice(&frame[joiner.take(frame, 1 << 40, |n| n)?]);
        }
        let head = joiner.head()?;
        out[..head.len()].copy_from_slice(&head);
        Some(out)
    }

    fn frame(block: usize, last: usize, sizes: &[usize]) -> Vec<u8> {
        labelled_frame(block, last, sizes, 0)
    }

    #[test]
    fn split_then_join_gives_the_frame_back() {
        let whole = frame(1024, 100, &[7, 9, 3, 11, 5]);
        let pieces = split(&whole, 2).unwrap();
        assert_eq!(
            pieces.iter().map(|p| (p.decoded_at, p.decoded_len)).collect::<Vec<_>>(),
            [(0, 2048), (2048, 2148)],
            "the partial last block joins the piece before it"
        );
        assert_eq!(pieces[0].frame(&whole), labelled_frame(1024, 1024, &[7, 9], 0));
        assert_eq!(pieces[1].frame(&whole), labelled_frame(1024, 100, &[3, 11, 5], 2));
        assert!(split(&whole, 4).is_none(), "one piece with the partial block");
        let thirds = split(&frame(1024, 1024, &[7, 9, 3, 11, 5, 2]), 2).unwrap();
        assert_eq!(thirds.len(), 3);
        let frames: Vec<Vec<u8>> = pieces.iter().map(|p| p.frame(&whole)).collect();
        let frames: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
        assert_eq!(joined(&frames, 4196, 1024).unwrap(), whole);
        assert_eq!(joined(&frames[..1], 4196, 1024), None, "blocks missing");
        assert_eq!(joined(&frames, 4196 + 1024, 1024), None, "bytes missing");
        assert_eq!(joined(&frames, 4196, 2048), None, "another block size");
        assert_eq!(joined(&[frames[1], frames[0]], 4196, 1024), None, "a partial block before the end");
    }

    /// Block 0 has two streams of 3 and 5 bytes, block 1 one stream of 2 bytes.
    #[test]
    fn the_room_left_is_counted_stream_by_stream() {
        let streams: [&[u8]; 2] = [&[3, 0, 0, 0, 1, 1, 1, 5, 0, 0, 0, 2, 2, 2, 2, 2], &[2, 0, 0, 0, 9, 9]];
        let mut whole = Vec::new();
        let (head, cbytes) = (HEADER + 8, HEADER + 8 + 22);
        Header { leading: [2, 1, 0, 2], nbytes: 200, block_size: 128, cbytes }.write(&mut whole);
        whole.extend_from_slice(&(head as u32).to_le_bytes());
        whole.extend_from_slice(&((head + 16) as u32).to_le_bytes());
        whole.extend(streams.concat());
        let fits = |frame: &[u8], written: usize, room: usize, worst: fn(usize) -> usize| {
            let mut joiner = Joiner::new(200, 128);
            // Streams before this frame's, so that its own are written from `written` on.
            joiner.streams_len = written - joiner.streams_at();
            joiner.take(frame, room, worst).is_some()
        };
        // Streams of 64, 64 and 72 bytes decoded; the last stream's length word ends at byte 44.
        assert!(fits(&whole, head, 44 + 72, |n| n));
        assert!(!fits(&whole, head, 44 + 71, |n| n));
        assert!(!fits(&whole, head, 1000, |n| n + 1000), "the first stream already");
        assert!(fits(&whole, head + 10, 54 + 72, |n| n), "counted from where the frame goes");
        assert!(!fits(&whole, head + 10, 54 + 71, |n| n));
        let mut bad = whole.clone();
        bad[head] = 200; // a stream longer than its block
        assert!(!fits(&bad, head, 1000, |n| n));
    }

    #[test]
    fn frames_that_cannot_be_cut_or_joined_are_refused() {
        let whole = frame(1024, 1024, &[7, 9, 3]);
        assert!(split(&whole, 3).is_none(), "one piece");
        let mut memcpyed = whole.clone();
        memcpyed[2] |= MEMCPYED;
        assert!(split(&memcpyed, 1).is_none());
        let mut out_of_order = whole.clone();
        out_of_order.copy_within(16..20, 20);
        assert!(split(&out_of_order, 1).is_none());
        assert!(split(&whole[..whole.len() - 1], 1).is_none(), "truncated");
        assert!(split(&whole[..10], 1).is_none());
        let partial = frame(1024, 100, &[5, 5]);
        assert_eq!(joined(&[&partial, &whole], 1124 + 3072, 1024), None, "a partial block before the end");
        let mut other_flags = whole.clone();
        other_flags[2] = 0x10;
        assert_eq!(joined(&[&whole, &other_flags], 6144, 1024), None);
        assert_eq!(joined(&[&whole, &whole], 6144, 1024).unwrap().len(), 16 + 24 + 2 * 31);
        assert_eq!(joined(&[], 6144, 1024), None);
    }
}

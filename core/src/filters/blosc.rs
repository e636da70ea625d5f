// SPDX-License-Identifier: BSD-3-Clause
//! blosc (filter 32001): c-blosc 1.x frames, through the system's libblosc, loaded on first use
//! (the reference implementation of the format, so frames are exactly what c-blosc reads and writes).
//!
//! Parameters as H5Zblosc.c reads them: `cd[2]` type size, `cd[4]` level (default 5),
//! `cd[5]` shuffle (default 1), `cd[6]` compressor code (default blosclz when absent). They are
//! checked on encode only: a frame says how it was made, so decoding needs none of them (as
//! H5Zblosc.c ignores the level and shuffle on read, this decodes whatever parameters the file's
//! writer left).
//! Unlike 4.9.0 (netcdf-c #3075), a chunk blosc cannot shrink is stored (blosc's memcpy frame)
//! instead of failing, except in 4.9.2, whose own suite requires the failure
//! (`ncf_blosc_fails_incompressible`; docs/compatibility.md). The context API keeps no global state
//! between threads.
//!
//! Chunks from 512 KiB (`PIECES_FROM`) on run on the worker pool, not on c-blosc's own threads
//! (which its context API starts and joins on every call): pieces of whole blocks are compressed
//! as frames of their own with the block size c-blosc picks for the whole chunk, and joined into
//! c-blosc's frame, byte for byte (`blosc_frame`); frames whose blocks are in order decode in
//! pieces the same way.

use super::native::Blosc;
use super::{blosc_frame, disjoint_places, fail, map_in_order, map_pieces, output_uninit, FilterResult};
use crate::c_heap::CVec;
use crate::standard_filters::BLOSC_COMPRESSORS;
use crate::worker_pool;
use std::mem::MaybeUninit;
use std::os::raw::c_int;
use std::sync::Mutex;

/// `BLOSC_MAX_OVERHEAD`: a frame's header; with this much room compression cannot fail.
const MAX_OVERHEAD: usize = 16;
/// `BLOSC_MAX_BUFFERSIZE`.
const MAX_BUFFER: usize = i32::MAX as usize - MAX_OVERHEAD;

/// The settings H5Zblosc.c derives from `cd_values`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub type_size: usize,
    pub level: u32,
    pub shuffle: u32,
    pub compressor: usize,
}

pub fn settings(params: &[u32]) -> FilterResult<Settings> {
    if params.len() < 3 {
        return fail(format!("blosc needs at least 3 parameters, not {}", params.len()));
    }
    let settings = Settings {
        type_size: params[2] as usize,
        level: params.get(4).copied().unwrap_or(5),
        shuffle: params.get(5).copied().unwrap_or(1),
        compressor: params.get(6).map_or(0, |&c| c as usize),
    };
    if settings.level > 9 {
        return fail(format!("blosc level {} is not 0..9", settings.level));
    }
    if settings.shuffle > 2 {
        return fail(format!("blosc shuffle {} is not 0, 1 or 2", settings.shuffle));
    }
    if settings.compressor >= BLOSC_COMPRESSORS.len() {
        return fail(format!("unknown blosc compressor code {}", settings.compressor));
    }
    Ok(settings)
}

pub fn encode(settings: Settings, input: &[u8]) -> FilterResult<CVec> {
    if input.len() > MAX_BUFFER {
        return fail(format!("blosc cannot take a chunk of {} bytes", input.len()));
    }
    let blosc = super::native::blosc().map_err(super::FilterError)?;
    // Asked once here, so that pieces on the worker pool never each fail the same way.
    let compressor = compressor_name(settings.compressor);
    if !blosc.has_compressor(compressor) {
        return fail(built_without(compressor));
    }
    let room = input.len() + if FAILS_INCOMPRESSIBLE { 0 } else { MAX_OVERHEAD };
    if input.len() >= PIECES_FROM && worker_pool::threads() > 1 {
        if let Some(frame) = encode_in_pieces(blosc, settings, input, room, worker_pool::run)? {
            return Ok(frame);
        }
    }
    compress(blosc, settings, input, 0, room)
}

/// [`crate::standard_filters::BLOSC_FAILS_INCOMPRESSIBLE`], the release's.
const FAILS_INCOMPRESSIBLE: bool = crate::standard_filters::BLOSC_FAILS_INCOMPRESSIBLE;

/// Chunks from this size on are compressed and decompressed in pieces on the worker pool.
pub const PIECES_FROM: usize = 512 << 10;
/// About how much of a chunk one piece holds.
const PIECE_BYTES: usize = 256 << 10;

/// What `blosc_compress_ctx` and `blosc_decompress_ctx` return for a compressor the library was
/// built without.
const NO_CODEC_SUPPORT: c_int = -5;

fn built_without(compressor: &str) -> String {
    format!("libblosc was built without the {compressor} compressor: this chunk cannot be written with it")
}

/// A compressor's name, or `"unknown"` past c-blosc's list.
fn compressor_name(code: usize) -> &'static str {
    BLOSC_COMPRESSORS.get(code).and_then(|name| name.to_str().ok()).unwrap_or("unknown")
}

/// One call of `blosc_compress_ctx` on one thread, with `block_size` 0 for blosc's own choice,
/// into `room` bytes.
fn compress(blosc: &Blosc, settings: Settings, input: &[u8], block_size: usize, room: usize) -> FilterResult<CVec> {
    let mut out = output_uninit(room)?;
    let written = compress_into(blosc, settings, input, block_size, &mut out.spare_uninit()[..room])?;
    // SAFETY: blosc wrote the frame's first `written` bytes.
    unsafe { out.assume_init_len(written) };
    Ok(out)
}

/// [`compress`] into `dest`: the frame's size, its bytes written at the start of `dest`.
fn compress_into(
    blosc: &Blosc,
    settings: Settings,
    input: &[u8],
    block_size: usize,
    dest: &mut [MaybeUninit<u8>],
) -> FilterResult<usize> {
    // SAFETY: src holds input.len() bytes, dest has dest.len() writable bytes; the compressor
    // name is NUL-terminated; blosc writes at most destsize bytes.
    let written = unsafe {
        (blosc.compress_ctx)(
            settings.level as c_int,
            settings.shuffle as c_int,
            settings.type_size.max(1),
            input.len(),
            input.as_ptr().cast(),
            dest.as_mut_ptr().cast(),
            dest.len(),
            BLOSC_COMPRESSORS[settings.compressor].as_ptr(),
            block_size,
            1,
        )
    };
    match usize::try_from(written) {
        Ok(n) if n > 0 && n <= dest.len() => Ok(n),
        // c-blosc's answer when the frame does not fit (never with a header's room to spare). Only
        // a release that gives no more room than the chunk makes that a failed chunk; elsewhere
        // only the pieces path gets here, and it falls back to the one call.
        Ok(0) if FAILS_INCOMPRESSIBLE && dest.len() <= input.len() => fail(format!(
            "blosc cannot shrink this chunk of {} bytes into {} bytes; netcdf-c {} fails such a chunk, as \
             its own blosc filter does (4.9.3 on store it)",
            input.len(),
            dest.len(),
            crate::NETCDF_RELEASE
        )),
        // c-blosc's "no support for this compressor": the library was built without it.
        Err(_) if written == NO_CODEC_SUPPORT => fail(built_without(compressor_name(settings.compressor))),
        _ => fail(format!("blosc compression failed ({written})")),
    }
}

/// The frame c-blosc writes for `input` on one thread, made of pieces of whole blocks compressed
/// side by side by `runner` and joined (see `blosc_frame`); `None` where that cannot give the
/// same bytes: blosc's block size is not known or not below half the chunk, or the chunk is too
/// incompressible for c-blosc to leave every block in its frame given `room` bytes.
///
/// Each piece is compressed into a buffer of its own, and its streams join the output as soon as
/// those of the pieces before it have; the header comes last. The output's pages are touched
/// once, where the frame's bytes go, as one c-blosc call's are.
fn encode_in_pieces(
    blosc: &Blosc,
    settings: Settings,
    input: &[u8],
    room: usize,
    runner: worker_pool::Runner,
) -> FilterResult<Option<CVec>> {
    if settings.level == 0 {
        return Ok(None); // stored as is
    }
    let Some(sizes) = block_sizes(blosc, settings).filter(|sizes| 2 * sizes.automatic <= input.len()) else {
        return Ok(None);
    };
    encode_in_sized_pieces(blosc, settings, sizes, input, room, runner)
}

/// [`encode_in_pieces`] with c-blosc's block size predicted as `sizes`. The prediction places
/// the pieces; every piece's frame is checked against it before its bytes count.
fn encode_in_sized_pieces(
    blosc: &Blosc,
    settings: Settings,
    sizes: BlockSizes,
    input: &[u8],
    room: usize,
    runner: worker_pool::Runner,
) -> FilterResult<Option<CVec>> {
    let block = sizes.automatic;
    let piece_size = (PIECE_BYTES / block).max(1) * block;
    let pieces = (input.len() / piece_size).max(1);
    let range = |piece: usize| {
        let end = if piece + 1 == pieces { input.len() } else { (piece + 1) * piece_size };
        piece * piece_size..end
    };
    // A piece's frame with every stream stored as is: its bytes, a header, and a block start and
    // up to 16 stream lengths (one per byte of a type) per block; and snappy's worst case past it.
    let spare = blosc_frame::HEADER + 68 * range(pieces - 1).len().div_ceil(block) + block / 6 + 64;
    // c-blosc gives a stream the room its decoded bytes take (snappy's bound for snappy) or, when
    // less is left of its room, what is left, and may then store a stream or the chunk as is.
    let worst = |decoded: usize| decoded + decoded / 6 + 32;
    let mut joiner = blosc_frame::Joiner::new(input.len(), block);
    let mut out = output_uninit(room)?;
    out.extend_from_slice(&vec![0; joiner.streams_at().min(room)]).map_err(super::out_of_memory)?;
    let compress_piece = |number: usize| -> FilterResult<CVec> {
        let piece = &input[range(number)];
        let piece_room = piece.len() + spare;
        let frame = compress(blosc, settings, piece, sizes.requested, piece_room)?;
        // c-blosc wrote it as it would with room to spare.
        match blosc_frame::Joiner::new(piece.len(), block).take(frame.as_slice(), piece_room, worst) {
            Some(_) => Ok(frame),
            None => fail(UNJOINABLE),
        }
    };
    let mut join_piece = |frame: CVec| -> FilterResult<()> {
        // And the whole as c-blosc writes it into the chunk's size plus a header.
        let frame = frame.as_slice();
        match joiner.take(frame, room, worst).filter(|streams| out.len() + streams.len() <= room) {
            Some(streams) => out.extend_from_slice(&frame[streams]).map_err(super::out_of_memory),
            None => fail(UNJOINABLE),
        }
    };
    // A piece that fails, or does not fit its room (nearly incompressible data), leaves the chunk
    // to c-blosc, which says why.
    if map_in_order("blosc", pieces, &compress_piece, &mut join_piece, runner).is_err() {
        return Ok(None);
    }
    // A frame of other blocks or bytes means c-blosc chose another block size than predicted.
    let Some(head) = joiner.head().filter(|_| out.len() == joiner.written()) else {
        return Ok(None);
    };
    out.as_mut_slice()[..head.len()].copy_from_slice(&head);
    Ok(Some(out))
}

/// Why a piece's frame does not join the chunk's.
const UNJOINABLE: &str = "blosc: a piece does not join the frame";

/// The block size c-blosc picks for chunks of at least twice that size with `settings`, and the
/// block size to ask for to get it (c-blosc enlarges a requested size for codecs it splits by
/// byte), found by compressing zeros once per settings: both depend on the library's version and
/// build. `None` when the probes do not tell.
fn block_sizes(blosc: &Blosc, settings: Settings) -> Option<BlockSizes> {
    static FOUND: Mutex<Vec<(Settings, Option<BlockSizes>)>> = Mutex::new(Vec::new());
    let known = |found: &[(Settings, Option<BlockSizes>)]| found.iter().find(|(s, _)| *s == settings).map(|f| f.1);
    if let Some(sizes) = known(&FOUND.lock().unwrap_or_else(|e| e.into_inner())) {
        return sizes;
    }
    let zeros = vec![0u8; PROBE_BYTES];
    let block_size_of = |input: &[u8], requested: usize| {
        compress(blosc, settings, input, requested, input.len() + MAX_OVERHEAD)
            .ok()
            .and_then(|frame| blosc_frame::Header::read(frame.as_slice()))
            .filter(|header| !header.memcpyed())
            .map(|header| header.block_size)
    };
    let sizes = block_size_of(&zeros, 0).filter(|&automatic| automatic > 0 && automatic * 2 <= PROBE_BYTES).and_then(
        |automatic| {
            // c-blosc takes a type size over 255 as 1.
            let type_size = if settings.type_size > 255 { 1 } else { settings.type_size.max(1) };
            let smaller = automatic / type_size;
            [automatic, smaller, smaller + 1, automatic.div_ceil(type_size)]
                .into_iter()
                .filter(|&requested| requested > 0)
                .find(|&requested| block_size_of(&zeros[..2 * automatic], requested) == Some(automatic))
                .map(|requested| BlockSizes { automatic, requested })
        },
    );
    let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    if found.len() >= 64 {
        found.clear();
    }
    found.push((settings, sizes));
    sizes
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BlockSizes {
    /// What c-blosc picks by itself.
    automatic: usize,
    /// What to pass to c-blosc to get `automatic`.
    requested: usize,
}

/// The probe's size: more than twice any block size c-blosc 1.x picks (at most 1 MiB).
const PROBE_BYTES: usize = 4 << 20;

/// The most a frame may expand, so that a corrupt header cannot make a reader allocate
/// gigabytes for a few bytes. zstd's RLE blocks, the most compressible of blosc's codecs, hold
/// 128 KiB in 4 bytes (32,768:1); c-blosc reaches 32,601:1 on 256 MiB of zeros in one block,
/// and 18,376:1 with the automatic block size H5Zblosc.c and ncfilters write with.
const MAX_RATIO: usize = 1 << 16;

/// Decodes one frame, producing at most `limit` bytes (and at most [`MAX_RATIO`] times its size).
pub fn decode(input: &[u8], limit: usize) -> FilterResult<CVec> {
    let blosc = super::native::blosc().map_err(super::FilterError)?;
    let size = validated_size(blosc, input)?;
    if size > limit {
        return fail(format!("blosc: frame of {size} bytes exceeds {limit}"));
    }
    let ratio_cap = input.len().saturating_mul(MAX_RATIO).max(1 << 20);
    if size > ratio_cap {
        return fail(format!(
            "blosc: a frame of {} bytes claims {size} bytes decoded, over {ratio_cap}: corrupt",
            input.len()
        ));
    }
    let mut out = output_uninit(size)?;
    let pieces = if size >= PIECES_FROM && worker_pool::threads() > 1 { split(input) } else { None };
    let place = &mut out.spare_uninit()[..size];
    match pieces {
        Some(pieces) => decompress_pieces(blosc, input, &pieces, place, worker_pool::run)?,
        None => decompress_validated(blosc, input, place)?,
    }
    // SAFETY: the frame's `size` bytes were decompressed into the block.
    unsafe { out.assume_init_len(size) };
    Ok(out)
}

/// A frame cut into pieces of about [`PIECE_BYTES`] decoded, when its streams are in block order.
fn split(frame: &[u8]) -> Option<Vec<blosc_frame::Piece>> {
    let block = blosc_frame::Header::read(frame)?.block_size;
    blosc_frame::split(frame, PIECE_BYTES / block.max(1))
}

/// Each piece of `frame` decompressed into its place in `out`, side by side by `runner`.
fn decompress_pieces(
    blosc: &Blosc,
    frame: &[u8],
    pieces: &[blosc_frame::Piece],
    out: &mut [MaybeUninit<u8>],
    runner: worker_pool::Runner,
) -> FilterResult<()> {
    let consecutive = pieces.iter().try_fold(0, |at, piece| (piece.decoded_at == at).then_some(at + piece.decoded_len));
    let places = consecutive
        .and_then(|_| disjoint_places(out, pieces.iter().map(|piece| piece.decoded_len)))
        .filter(|(_, rest)| rest.is_empty());
    let Some((places, _)) = places else {
        return fail("blosc: not a valid frame");
    };
    let decompress_piece = |number: usize| {
        let mut place = places[number].lock().unwrap_or_else(|e| e.into_inner());
        decompress(blosc, &pieces[number].frame(frame), &mut place[..])
    };
    map_pieces("blosc", pieces.len(), &decompress_piece, runner).map(|_| ())
}

/// The decoded size of `frame`, once c-blosc has found it a consistent frame.
fn validated_size(blosc: &Blosc, frame: &[u8]) -> FilterResult<usize> {
    let mut size = 0usize;
    if frame.len() < MAX_OVERHEAD {
        return fail("blosc: not a valid frame");
    }
    // SAFETY: validate reads the header within `cbytes` and checks the frame is consistent.
    if unsafe { (blosc.cbuffer_validate)(frame.as_ptr().cast(), frame.len(), &mut size) } != 0 {
        return fail("blosc: not a valid frame");
    }
    Ok(size)
}

/// One frame decompressed on this thread into `out`, which it must fill exactly (on success
/// every byte of `out` is written).
fn decompress(blosc: &Blosc, frame: &[u8], out: &mut [MaybeUninit<u8>]) -> FilterResult<()> {
    if validated_size(blosc, frame)? != out.len() {
        return fail("blosc: not a valid frame");
    }
    decompress_validated(blosc, frame, out)
}

/// [`decompress`] of a frame [`validated_size`] accepted, with `out` of the size it gave.
fn decompress_validated(blosc: &Blosc, frame: &[u8], out: &mut [MaybeUninit<u8>]) -> FilterResult<()> {
    let size = out.len();
    // SAFETY: the frame was validated and decodes to `size` bytes; dest has `size` writable bytes.
    let written = unsafe { (blosc.decompress_ctx)(frame.as_ptr().cast(), out.as_mut_ptr().cast(), size.max(1), 1) };
    if written == NO_CODEC_SUPPORT {
        // The header's flags byte keeps the stream's format in its top three bits.
        const FORMATS: [&str; 5] = ["blosclz", "lz4", "snappy", "zlib", "zstd"];
        let name = frame.get(2).and_then(|flags| FORMATS.get(usize::from(flags >> 5))).unwrap_or(&"its");
        return fail(format!("libblosc was built without the {name} compressor, which this chunk needs"));
    }
    if written < 0 || written as usize != size {
        return fail(format!("blosc: corrupt frame ({written})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the loaded libblosc was built without `compressor` (only snappy may be missing:
    /// c-blosc's own tree no longer bundles it). Where so, writing with it and reading a chunk
    /// that needs it must each say so.
    fn library_lacks(compressor: usize) -> bool {
        let blosc = crate::filters::native::blosc().unwrap();
        let name = compressor_name(compressor);
        if blosc.has_compressor(name) {
            return false;
        }
        assert_eq!(name, "snappy", "libblosc without {name}");
        let lz4 = Settings { type_size: 4, level: 5, shuffle: 1, compressor: 1 };
        let data: Vec<u8> = (0..4000u32).map(|i| (i / 7) as u8).collect();
        let e = encode(Settings { compressor, ..lz4 }, &data).unwrap_err();
        assert!(e.0.contains("built without the snappy compressor"), "{e}");
        let e = compress(blosc, Settings { compressor, ..lz4 }, &data, 0, data.len() + MAX_OVERHEAD).unwrap_err();
        assert!(e.0.contains("built without the snappy compressor"), "c-blosc's own answer: {e}");
        // An lz4 frame relabelled snappy (the format in the flags' top bits) is still valid.
        let mut frame = encode(lz4, &data).unwrap().as_slice().to_vec();
        frame[2] = (frame[2] & 0x1f) | (2 << 5);
        let e = decode(&frame, usize::MAX).unwrap_err();
        assert!(e.0.contains("built without the snappy compressor, which this chunk needs"), "{e}");
        true
    }

    #[test]
    fn compressors_are_asked_by_name() {
        let blosc = crate::filters::native::blosc().unwrap();
        assert!(blosc.has_compressor("blosclz") && blosc.has_compressor("lz4") && blosc.has_compressor("zstd"));
        for unknown in ["", "lz", "lz4 ", "LZ4", "lz4\0hc", "lizard2"] {
            assert!(!blosc.has_compressor(unknown), "{unknown:?}");
        }
    }

    #[test]
    fn round_trip_all_compressors_and_incompressible_chunks() {
        let smooth: Vec<u8> = (0..100_000u32).flat_map(|i| ((i / 10) as f32).to_le_bytes()).collect();
        let mut state = 1u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) as u8
            })
            .collect();
        for compressor in (0..6).filter(|&compressor| !library_lacks(compressor)) {
            for shuffle in 0..3 {
                let s = Settings { type_size: 4, level: 5, shuffle, compressor };
                for data in [&smooth, &noise] {
                    match encode(s, data) {
                        Ok(packed) => {
                            assert!(!(FAILS_INCOMPRESSIBLE && data == &noise), "4.9.2 fails noise");
                            assert_eq!(decode(packed.as_slice(), usize::MAX).unwrap().as_slice(), &data[..]);
                        }
                        Err(e) => {
                            assert!(FAILS_INCOMPRESSIBLE && data == &noise, "{e}: only 4.9.2 fails, only noise");
                            assert!(e.0.contains("cannot shrink"), "{e}");
                        }
                    }
                }
            }
        }
        let packed = encode(Settings { type_size: 4, level: 5, shuffle: 1, compressor: 1 }, &smooth).unwrap();
        assert!(decode(packed.as_slice(), 1000).is_err(), "capped");
        assert!(decode(&packed.as_slice()[..packed.len() / 2], usize::MAX).is_err(), "truncated");
        assert!(decode(b"short", usize::MAX).is_err());
        assert_eq!(settings(&[0, 0, 4]).unwrap(), Settings { type_size: 4, level: 5, shuffle: 1, compressor: 0 });
        assert!(settings(&[2, 2, 4, 0, 5, 1, 9]).is_err(), "unknown compressor");
        assert!(settings(&[2, 2]).is_err());
    }

    /// The release's H5Zblosc.c is one c-blosc call with room for the chunk (4.9.2) or for the
    /// chunk and a header (the others): `encode` gives that call's answer, frame or failure,
    /// whichever way it compresses, also where the frame nearly fills the chunk.
    #[test]
    fn encode_answers_as_the_releases_c_blosc_call() {
        let blosc = crate::filters::native::blosc().unwrap();
        let size = (5 << 19) + 12_345;
        let mut state = 3u64;
        let smooth: Vec<u8> = (0..size).map(|i| ((i / 4) as f32 * 0.01).sin().to_le_bytes()[i % 4]).collect();
        let mut noisy = |from: usize| -> Vec<u8> {
            let mut data = smooth.clone();
            for byte in &mut data[from..] {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                *byte = (state >> 33) as u8;
            }
            data
        };
        let (half_noise, mostly_noise) = (noisy(size / 2), noisy(size / 8));
        let room = if FAILS_INCOMPRESSIBLE { size } else { size + MAX_OVERHEAD };
        for (name, data) in [("smooth", &smooth), ("half noise", &half_noise), ("mostly noise", &mostly_noise)] {
            for compressor in 0..BLOSC_COMPRESSORS.len() {
                for (level, shuffle) in [(0, 1), (5, 0), (5, 1)] {
                    let s = Settings { type_size: 4, level, shuffle, compressor };
                    let case = format!("{name}, compressor {compressor}, level {level}, shuffle {shuffle}");
                    match (compress(blosc, s, data, 0, room), encode(s, data)) {
                        (Ok(c), Ok(ours)) => assert!(c.as_slice() == ours.as_slice(), "{case}: other bytes"),
                        (Err(_), Err(_)) => {}
                        (c, ours) => {
                            panic!("{case}: c-blosc {:?}, encode {:?}", c.map(|f| f.len()), ours.map(|f| f.len()))
                        }
                    }
                }
            }
        }
    }

    /// Large chunks are compressed in pieces of whole blocks side by side and joined:
    /// the frame must be c-blosc's own, byte for byte, for every compressor, shuffle, type size
    /// and level, whatever the pieces ran on; and any frame c-blosc writes decodes in pieces.
    #[test]
    fn frames_made_in_pieces_are_c_blosc_frames_byte_for_byte() {
        let blosc = crate::filters::native::blosc().unwrap();
        let size = (5 << 19) + 12_345;
        let smooth: Vec<u8> = (0..size).map(|i| ((i / 4) as f32 * 0.01).sin().to_le_bytes()[i % 4]).collect();
        let mut state = 7u64;
        let noise: Vec<u8> = (0..size)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) as u8
            })
            .collect();
        let half: Vec<u8> = smooth[..size / 8].iter().chain(&noise[size / 8..]).copied().collect();
        let steps: Vec<u8> = (0..size).map(|i| (i / 1000) as u8).collect();
        let zeros = vec![0u8; size];
        let datasets =
            [("steps", &steps), ("zeros", &zeros), ("floats", &smooth), ("noise", &noise), ("mostly noise", &half)];
        let (mut joined, mut split_frames) = (0, 0);
        for compressor in (0..BLOSC_COMPRESSORS.len()).filter(|&compressor| !library_lacks(compressor)) {
            let levels: &[u32] = if compressor <= 1 { &[1, 5, 9] } else { &[4] };
            for &level in levels {
                for shuffle in 0..3 {
                    for type_size in [1, 3, 4, 8] {
                        let s = Settings { type_size, level, shuffle, compressor };
                        for (name, data) in datasets {
                            let serial = compress(blosc, s, data, 0, data.len() + MAX_OVERHEAD).unwrap();
                            for runner in [worker_pool::run as worker_pool::Runner, worker_pool::run_serially] {
                                match encode_in_pieces(blosc, s, data, data.len() + MAX_OVERHEAD, runner).unwrap() {
                                    Some(frame) => {
                                        assert!(
                                            frame.as_slice() == serial.as_slice(),
                                            "{s:?} {name}: not c-blosc's frame"
                                        );
                                        joined += 1;
                                    }
                                    // Only where c-blosc may store the chunk as is, or blocks are large.
                                    None => {
                                        let block = blosc_frame::Header::read(serial.as_slice()).unwrap().block_size;
                                        let squeezed = serial.len() + block + block / 6 + 32 > data.len();
                                        assert!(
                                            !matches!(name, "steps" | "zeros") && squeezed || 2 * block > data.len(),
                                            "{s:?} {name}: not made in pieces"
                                        )
                                    }
                                }
                            }
                            if let Some(pieces) = split(serial.as_slice()) {
                                let out = in_pieces(blosc, serial.as_slice(), &pieces, data.len()).unwrap();
                                assert!(out == *data, "{s:?} {name}: decoded in pieces");
                                split_frames += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(joined > 200 && split_frames > 100, "{joined} frames joined, {split_frames} split");
    }

    /// A block size other than the predicted one (a c-blosc that chose differently) makes the
    /// encoder fall back to the one call.
    #[test]
    fn a_wrong_block_size_prediction_falls_back() {
        let blosc = crate::filters::native::blosc().unwrap();
        let data: Vec<u8> = (0..(6usize << 20)).map(|i| (i / 1000) as u8).collect();
        let s = Settings { type_size: 4, level: 5, shuffle: 1, compressor: 1 };
        let serial = compress(blosc, s, &data, 0, data.len() + MAX_OVERHEAD).unwrap();
        let right = block_sizes(blosc, s).unwrap();
        let made = |sizes| encode_in_sized_pieces(blosc, s, sizes, &data, data.len() + MAX_OVERHEAD, worker_pool::run);
        assert!(made(right).unwrap().unwrap().as_slice() == serial.as_slice(), "the right prediction joins");
        // c-blosc's blocks then hold more (a longer header than predicted) or fewer bytes than
        // predicted (pieces of one block each, clamped to the piece: a shorter header).
        let fewer_blocks = BlockSizes { automatic: 2 * right.automatic, ..right };
        let more_blocks = BlockSizes { automatic: right.automatic / 4, ..right };
        for wrong in [fewer_blocks, more_blocks] {
            assert!(made(wrong).unwrap().is_none(), "{wrong:?} {right:?}: made in pieces");
        }
    }

    #[test]
    fn a_corrupt_stream_fails_decoding_in_pieces_too() {
        let blosc = crate::filters::native::blosc().unwrap();
        let data: Vec<u8> = (0..4u32 << 20).map(|i| (i / 1000) as u8).collect();
        let s = Settings { type_size: 4, level: 5, shuffle: 1, compressor: 1 };
        let frame = compress(blosc, s, &data, 0, data.len() + MAX_OVERHEAD).unwrap();
        let pieces = split(frame.as_slice()).expect("in pieces");
        assert!(in_pieces(blosc, frame.as_slice(), &pieces, data.len()).unwrap() == data);
        let mut corrupt = frame.as_slice().to_vec();
        let middle = corrupt.len() / 2;
        corrupt[middle..middle + 64].fill(0xff);
        let pieces = split(&corrupt).expect("the block starts are intact");
        assert!(in_pieces(blosc, &corrupt, &pieces, data.len()).is_err());
        assert!(in_pieces(blosc, &corrupt, &pieces, data.len() - 1).is_err(), "pieces larger than the room");
    }

    /// `pieces` of `frame` decompressed on the pool into `len` bytes.
    fn in_pieces(blosc: &Blosc, frame: &[u8], pieces: &[blosc_frame::Piece], len: usize) -> FilterResult<Vec<u8>> {
        let mut out = vec![MaybeUninit::new(0u8); len];
        decompress_pieces(blosc, frame, pieces, &mut out, worker_pool::run)?;
        // SAFETY: every byte was initialised (to 0) before the call.
        Ok(out.into_iter().map(|byte| unsafe { byte.assume_init() }).collect())
    }

    /// Frames at the highest ratio blosc writes decode; a header claiming more is refused before
    /// any allocation.
    #[test]
    fn the_ratio_cap_takes_the_most_compressible_frames_and_refuses_more() {
        let zeros = vec![0u8; 64 << 20];
        let densest = Settings { type_size: 1, level: 9, shuffle: 0, compressor: 5 };
        let packed = encode(densest, &zeros).unwrap();
        assert!(packed.len() * 10_000 < zeros.len(), "{} bytes: not the densest case", packed.len());
        assert_eq!(decode(packed.as_slice(), usize::MAX).unwrap().len(), zeros.len());

        let small = encode(densest, &zeros[..4 << 20]).unwrap();
        let mut claims_more = small.as_slice().to_vec();
        let claimed = small.len() * MAX_RATIO + (1 << 20);
        claims_more[4..8].copy_from_slice(&(claimed as u32).to_le_bytes());
        let refused = decode(&claims_more, usize::MAX).unwrap_err().0;
        assert!(refused.contains("over") && refused.contains("corrupt"), "{refused}");
    }
}

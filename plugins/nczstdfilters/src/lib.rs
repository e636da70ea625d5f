//! lib__nczstdfilters.so: codec defaults for the standard filters (bz2, zstd, blosc).
use ncfilters::abi::plugin as p;

ncfilters::export_codec_defaults!(p::bz2::CODEC, p::zstd::CODEC, p::blosc::CODEC);

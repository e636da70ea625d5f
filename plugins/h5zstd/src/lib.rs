//! lib__nch5zstd.so: the zstd filter (HDF5 id 32015) and its codec.
use ncfilters::abi::plugin as p;

ncfilters::export_plugin!(p::ZSTD, p::zstd::CODEC);

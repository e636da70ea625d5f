//! lib__nczhdf5filters.so: codec defaults for HDF5 filters (zlib, shuffle, fletcher32, szip).
use ncfilters::abi::plugin as p;

ncfilters::export_codec_defaults!(p::zlib::CODEC, p::shuffle::CODEC, p::fletcher32::CODEC, p::szip::CODEC);

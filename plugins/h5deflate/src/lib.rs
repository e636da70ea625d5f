//! lib__nch5deflate.so: the deflate filter (HDF5 id 1) and its zlib codec.
use ncfilters::abi::plugin as p;

ncfilters::export_plugin!(p::DEFLATE, p::zlib::CODEC);

//! lib__nch5shuffle.so: the shuffle filter (HDF5 id 2) and its codec.
use ncfilters::abi::plugin as p;

ncfilters::export_plugin!(p::SHUFFLE, p::shuffle::CODEC);

//! lib__nch5bzip2.so: the bzip2 filter (HDF5 id 307) and its bz2 codec.
use ncfilters::abi::plugin as p;

ncfilters::export_plugin!(p::BZIP2, p::bz2::CODEC);

//! lib__nch5blosc.so: the blosc filter (HDF5 id 32001) and its codec; c-blosc's libblosc is
//! loaded on first use.
use ncfilters::abi::plugin as p;

ncfilters::export_plugin!(p::BLOSC, p::blosc::CODEC);

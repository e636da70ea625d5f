//! lib__nch5fletcher32.so: the fletcher32 filter (HDF5 id 3) and its codec.
use ncfilters::abi::plugin as p;

ncfilters::export_plugin!(p::FLETCHER32, p::fletcher32::CODEC);

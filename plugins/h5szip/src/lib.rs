//! lib__nch5szip.so: the szip filter (HDF5 id 4) and its codec, for NCZarr (HDF5 has its own
//! szip for netCDF-4 files); libaec's libsz is loaded on first use.
use ncfilters::abi::plugin as p;

ncfilters::export_plugin!(p::SZIP, p::szip::CODEC);

// SPDX-License-Identifier: BSD-3-Clause
//! lib__nch5szip.so: the szip filter (HDF5 id 4) and its codec, for NCZarr (HDF5 has its own
//! szip for netCDF-4 files); libaec's libsz is loaded on first use.

ncfilters_plugin::export_standard_plugin!(szip);

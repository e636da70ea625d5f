// SPDX-License-Identifier: BSD-3-Clause
//! lib__nczhdf5filters.so: codec defaults for HDF5 filters (zlib, shuffle, fletcher32, szip).

ncfilters_plugin::export_codec_defaults!(Hdf5Filters);

// SPDX-License-Identifier: BSD-3-Clause
//! lib__nch5deflate.so: the deflate filter (HDF5 id 1) and its zlib codec.

ncfilters_plugin::export_standard_plugin!(deflate);

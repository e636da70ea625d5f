// SPDX-License-Identifier: BSD-3-Clause
//! lib__nch5shuffle.so: the shuffle filter (HDF5 id 2) and its codec.

ncfilters_plugin::export_standard_plugin!(shuffle);

// SPDX-License-Identifier: BSD-3-Clause
//! lib__nch5bzip2.so: the bzip2 filter (HDF5 id 307) and its bz2 codec.

ncfilters_plugin::export_standard_plugin!(bzip2);

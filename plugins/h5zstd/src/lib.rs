// SPDX-License-Identifier: BSD-3-Clause
//! lib__nch5zstd.so: the zstd filter (HDF5 id 32015) and its codec.

ncfilters_plugin::export_standard_plugin!(zstd);

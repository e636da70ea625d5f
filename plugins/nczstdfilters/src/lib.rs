// SPDX-License-Identifier: BSD-3-Clause
//! lib__nczstdfilters.so: codec defaults for the standard filters (bz2, zstd, blosc).

ncfilters_plugin::export_codec_defaults!(StdFilters);

// SPDX-License-Identifier: BSD-3-Clause
//! lib__nch5blosc.so: the blosc filter (HDF5 id 32001) and its codec; c-blosc's libblosc is
//! loaded on first use.

ncfilters_plugin::export_standard_plugin!(blosc);

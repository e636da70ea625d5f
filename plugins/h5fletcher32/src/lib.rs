// SPDX-License-Identifier: BSD-3-Clause
//! lib__nch5fletcher32.so: the fletcher32 filter (HDF5 id 3) and its codec.

ncfilters_plugin::export_standard_plugin!(fletcher32);

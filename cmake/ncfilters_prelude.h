/* SPDX-License-Identifier: BSD-3-Clause */
/* Force-included (gcc -include) into every C translation unit of netcdf-c by ncfilters.cmake.
 *
 * netcdf-c's own include/nc4internal.h, hdf5internal.h and nc_tests.h say #include "netcdf_filter.h",
 * which the compiler resolves next to them, i.e. to netcdf-c's copy, before any -I directory.
 * Both copies share the NETCDF_FILTER_H guard, so including ncfilters' header first makes it
 * the one in effect everywhere. netcdf_filter.h expects netcdf.h's EXTERNL; define it only
 * for the duration, so netcdf.h still defines it its own way later. */
#include <stddef.h>
#ifndef EXTERNL
#define EXTERNL extern
#define NCFILTERS_PRELUDE_DEFINED_EXTERNL
#endif
#include "../include/netcdf_filter.h"
#ifdef NCFILTERS_PRELUDE_DEFINED_EXTERNL
#undef EXTERNL
#undef NCFILTERS_PRELUDE_DEFINED_EXTERNL
#endif

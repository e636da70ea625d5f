/*
 * Weak references from ncfilters to netcdf-c internals.
 *
 * Inside libnetcdf.so (the CMake module whole-archives libncfilters.a into it) these
 * bind to netcdf-c's own definitions. In a standalone libncfilters.so, or a Rust test
 * binary, they stay NULL and each wrapper returns NC_ENOTBUILT instead of failing to
 * link. Rust cannot declare weak symbols on stable, hence this file.
 */
#include <stddef.h>

#define NCFILTERS_ENOTBUILT (-128) /* NC_ENOTBUILT */

struct NC;

extern int NC_check_id(int ncid, struct NC **ncpp) __attribute__((weak));
extern int nc_inq_vartype(int ncid, int varid, int *xtypep) __attribute__((weak));
extern int NC4_inq_type_fixed_size(int ncid, int xtype, int *fixedsizep) __attribute__((weak));

int ncfilters_netcdf_linked(void) { return NC_check_id != NULL; }

int ncfilters_NC_check_id(int ncid, struct NC **ncpp)
{
    return NC_check_id ? NC_check_id(ncid, ncpp) : NCFILTERS_ENOTBUILT;
}

int ncfilters_nc_inq_vartype(int ncid, int varid, int *xtypep)
{
    return nc_inq_vartype ? nc_inq_vartype(ncid, varid, xtypep) : NCFILTERS_ENOTBUILT;
}

int ncfilters_NC4_inq_type_fixed_size(int ncid, int xtype, int *fixedsizep)
{
    return NC4_inq_type_fixed_size ? NC4_inq_type_fixed_size(ncid, xtype, fixedsizep) : NCFILTERS_ENOTBUILT;
}

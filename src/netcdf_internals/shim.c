/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Weak references from ncfilters to netcdf-c internals.
 *
 * Inside libnetcdf.so (the CMake module whole-archives libncfilters.a into it) these
 * bind to netcdf-c's own definitions. In a standalone libncfilters.so, or a Rust test
 * binary, they stay NULL and each wrapper returns NC_ENOTBUILT instead of failing to
 * link. Rust cannot declare weak symbols on stable, hence this file.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NCFILTERS_ENOTBUILT (-128) /* NC_ENOTBUILT */

struct NC;

extern int NC_check_id(int ncid, struct NC **ncpp) __attribute__((weak));
extern int NC4_inq_type_fixed_size(int ncid, int xtype, int *fixedsizep) __attribute__((weak));

int ncfilters_netcdf_linked(void) { return NC_check_id != NULL; }

int ncfilters_NC_check_id(int ncid, struct NC **ncpp)
{
    return NC_check_id ? NC_check_id(ncid, ncpp) : NCFILTERS_ENOTBUILT;
}

int ncfilters_NC4_inq_type_fixed_size(int ncid, int xtype, int *fixedsizep)
{
    return NC4_inq_type_fixed_size ? NC4_inq_type_fixed_size(ncid, xtype, fixedsizep) : NCFILTERS_ENOTBUILT;
}

/* netCDF-4/HDF5 internals used by the HDF5 filter backend (src/abi/hdf5filter.rs). */
struct NC_FILE_INFO;
struct NC_GRP_INFO;
struct NC_VAR_INFO;
struct NClist;

extern int nc4_hdf5_find_grp_h5_var(int ncid, int varid, struct NC_FILE_INFO **h5,
                                    struct NC_GRP_INFO **grp, struct NC_VAR_INFO **var) __attribute__((weak));
extern int nc4_find_default_chunksizes2(struct NC_GRP_INFO *grp, struct NC_VAR_INFO *var) __attribute__((weak));
extern int nc4_adjust_var_cache(struct NC_GRP_INFO *grp, struct NC_VAR_INFO *var) __attribute__((weak));
extern struct NClist *nclistnew(void) __attribute__((weak));
extern int nclistfree(struct NClist *l) __attribute__((weak));
extern int nclistinsert(struct NClist *l, size_t index, void *elem) __attribute__((weak));
extern void *nclistremove(struct NClist *l, size_t index) __attribute__((weak));

int ncfilters_nc4_hdf5_find_grp_h5_var(int ncid, int varid, struct NC_FILE_INFO **h5,
                                       struct NC_GRP_INFO **grp, struct NC_VAR_INFO **var)
{
    return nc4_hdf5_find_grp_h5_var ? nc4_hdf5_find_grp_h5_var(ncid, varid, h5, grp, var) : NCFILTERS_ENOTBUILT;
}

int ncfilters_nc4_find_default_chunksizes2(struct NC_GRP_INFO *grp, struct NC_VAR_INFO *var)
{
    return nc4_find_default_chunksizes2 ? nc4_find_default_chunksizes2(grp, var) : NCFILTERS_ENOTBUILT;
}

int ncfilters_nc4_adjust_var_cache(struct NC_GRP_INFO *grp, struct NC_VAR_INFO *var)
{
    return nc4_adjust_var_cache ? nc4_adjust_var_cache(grp, var) : NCFILTERS_ENOTBUILT;
}

struct NClist *ncfilters_nclistnew(void) { return nclistnew ? nclistnew() : NULL; }
int ncfilters_nclistfree(struct NClist *l) { return nclistfree ? nclistfree(l) : 0; }
int ncfilters_nclistinsert(struct NClist *l, size_t index, void *elem)
{
    return nclistinsert ? nclistinsert(l, index, elem) : 0;
}
void *ncfilters_nclistremove(struct NClist *l, size_t index) { return nclistremove ? nclistremove(l, index) : NULL; }

/* NCZarr internals and netcdf-c's JSON functions, used by the NCZarr filter engine (src/abi/zfilter.rs). */
struct NCjson;

extern int ncz_find_grp_file_var(int ncid, int varid, struct NC_FILE_INFO **file,
                                 struct NC_GRP_INFO **grp, struct NC_VAR_INFO **var) __attribute__((weak));
extern int nclistpush(struct NClist *l, const void *elem) __attribute__((weak));
extern int NCJparse(const char *text, unsigned flags, struct NCjson **jsonp) __attribute__((weak));
extern int NCJunparse(const struct NCjson *json, unsigned flags, char **textp) __attribute__((weak));

int ncfilters_ncz_find_grp_file_var(int ncid, int varid, struct NC_FILE_INFO **file,
                                    struct NC_GRP_INFO **grp, struct NC_VAR_INFO **var)
{
    return ncz_find_grp_file_var ? ncz_find_grp_file_var(ncid, varid, file, grp, var) : NCFILTERS_ENOTBUILT;
}

int ncfilters_nclistpush(struct NClist *l, const void *elem) { return nclistpush ? nclistpush(l, elem) : 0; }

/* netcdf-c 4.9.2 on: the length NCZarr stores each string of a variable in (0 before). */
struct NC_OBJ;
extern int NCZ_get_maxstrlen(struct NC_OBJ *obj) __attribute__((weak));
int ncfilters_NCZ_get_maxstrlen(struct NC_OBJ *obj) { return NCZ_get_maxstrlen ? NCZ_get_maxstrlen(obj) : 0; }

/* -1 is NCJ_ERR. */
int ncfilters_NCJparse(const char *text, unsigned flags, struct NCjson **jsonp)
{
    return NCJparse ? NCJparse(text, flags, jsonp) : -1;
}

int ncfilters_NCJunparse(const struct NCjson *json, unsigned flags, char **textp)
{
    return NCJunparse ? NCJunparse(json, flags, textp) : -1;
}

extern void NCJreclaim(struct NCjson *json) __attribute__((weak));
void ncfilters_NCJreclaim(struct NCjson *json) { if (NCJreclaim) NCJreclaim(json); }

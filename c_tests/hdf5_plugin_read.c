/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reads one dataset with HDF5 alone, so that its filter comes from a plugin on HDF5_PLUGIN_PATH
 * (cargo xtask matrix: ncfilters' plugin libraries under an HDF5 built to require signed plugins).
 *
 * Usage: hdf5_plugin_read FILE DATASET. Exits 0 when the whole dataset reads, 1 when HDF5 refuses
 * it (its error stack is printed), 2 on bad usage.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FILE DATASET\n", argv[0]);
        return 2;
    }
    hid_t file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = file < 0 ? -1 : H5Dopen2(file, argv[2], H5P_DEFAULT);
    hid_t space = dset < 0 ? -1 : H5Dget_space(dset);
    hssize_t n = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
    unsigned char *data = n > 0 ? malloc((size_t)n) : NULL;
    herr_t status = data ? H5Dread(dset, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : -1;
    if (status >= 0)
        printf("read %lld bytes of %s\n", (long long)n, argv[2]);
    else
        printf("HDF5 cannot read %s\n", argv[2]);
    free(data);
    if (space >= 0) H5Sclose(space);
    if (dset >= 0) H5Dclose(dset);
    if (file >= 0) H5Fclose(file);
    return status >= 0 ? 0 : 1;
}

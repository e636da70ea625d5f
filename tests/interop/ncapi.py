# SPDX-License-Identifier: BSD-3-Clause
"""A small ctypes binding to netcdf-c's C API, for tests that drive libnetcdf.so directly.

NETCDF_LIB names the libnetcdf.so to load (the harness points it at the ncfilters build).
Every call raises NcError with netcdf-c's status code and nc_strerror text.
"""
import ctypes
import os

import numpy as np

NC_NOERR = 0
NC_EFILTER = -132
NC_ENOFILTER = -136
NC_CLOBBER = 0x0000
NC_NETCDF4 = 0x1000
NC_NOWRITE = 0x0000
NC_CHUNKED = 0

NC_TYPES = {np.dtype("int8"): 1, np.dtype("int16"): 3, np.dtype("int32"): 4, np.dtype("float32"): 5,
            np.dtype("float64"): 6, np.dtype("uint8"): 7, np.dtype("uint16"): 8, np.dtype("uint32"): 9,
            np.dtype("int64"): 10, np.dtype("uint64"): 11}
DTYPES = {code: dtype for dtype, code in NC_TYPES.items()}

lib = ctypes.CDLL(os.environ["NETCDF_LIB"])
lib.nc_strerror.restype = ctypes.c_char_p


class NcError(Exception):
    def __init__(self, status, call):
        super().__init__(f"{call}: {lib.nc_strerror(status).decode()} ({status})")
        self.status = status


def check(status, call):
    if status != NC_NOERR:
        raise NcError(status, call)


def c_uints(values):
    return (ctypes.c_uint * max(1, len(values)))(*values)


def c_sizes(values):
    return (ctypes.c_size_t * max(1, len(values)))(*values)


class Dataset:
    """An open netCDF dataset (an NCZarr URL or a netCDF-4 path)."""

    def __init__(self, path, mode="r"):
        self.ncid = ctypes.c_int()
        if mode == "w":
            check(lib.nc_create(path.encode(), NC_CLOBBER | NC_NETCDF4, ctypes.byref(self.ncid)), f"nc_create({path})")
        else:
            check(lib.nc_open(path.encode(), NC_NOWRITE, ctypes.byref(self.ncid)), f"nc_open({path})")

    def close(self):
        check(lib.nc_close(self.ncid), "nc_close")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        else:
            lib.nc_close(self.ncid)

    def def_dim(self, name, length):
        dimid = ctypes.c_int()
        check(lib.nc_def_dim(self.ncid, name.encode(), ctypes.c_size_t(length), ctypes.byref(dimid)), "nc_def_dim")
        return dimid.value

    def def_var(self, name, dtype, dims, chunks=None, filters=()):
        """A variable with chunk sizes and filters [(id, [params])] applied in order."""
        varid = ctypes.c_int()
        dimids = (ctypes.c_int * len(dims))(*dims)
        check(lib.nc_def_var(self.ncid, name.encode(), NC_TYPES[np.dtype(dtype)], len(dims), dimids,
                             ctypes.byref(varid)), f"nc_def_var({name})")
        if chunks is not None:
            check(lib.nc_def_var_chunking(self.ncid, varid, NC_CHUNKED, c_sizes(chunks)), "nc_def_var_chunking")
        for filter_id, params in filters:
            check(lib.nc_def_var_filter(self.ncid, varid, ctypes.c_uint(filter_id), ctypes.c_size_t(len(params)),
                                        c_uints(params)), f"nc_def_var_filter({name}, {filter_id}, {params})")
        return varid.value

    # The per-filter definition calls of netcdf.h/netcdf_filter.h, on a variable defined by def_var.
    def def_var_filter(self, varid, filter_id, params):
        check(lib.nc_def_var_filter(self.ncid, varid, ctypes.c_uint(filter_id), ctypes.c_size_t(len(params)),
                                    c_uints(params)), f"nc_def_var_filter({varid}, {filter_id}, {params})")

    def def_var_deflate(self, varid, shuffle, deflate, level):
        check(lib.nc_def_var_deflate(self.ncid, varid, shuffle, deflate, level),
              f"nc_def_var_deflate({varid}, {shuffle}, {deflate}, {level})")

    def def_var_fletcher32(self, varid, fletcher32=1):
        check(lib.nc_def_var_fletcher32(self.ncid, varid, fletcher32), f"nc_def_var_fletcher32({varid}, {fletcher32})")

    def def_var_szip(self, varid, options_mask, pixels_per_block):
        check(lib.nc_def_var_szip(self.ncid, varid, options_mask, pixels_per_block),
              f"nc_def_var_szip({varid}, {options_mask}, {pixels_per_block})")

    def def_var_bzip2(self, varid, level):
        check(lib.nc_def_var_bzip2(self.ncid, varid, level), f"nc_def_var_bzip2({varid}, {level})")

    def def_var_zstandard(self, varid, level):
        check(lib.nc_def_var_zstandard(self.ncid, varid, level), f"nc_def_var_zstandard({varid}, {level})")

    def def_var_blosc(self, varid, subcompressor, level, blocksize, addshuffle):
        check(lib.nc_def_var_blosc(self.ncid, varid, ctypes.c_uint(subcompressor), ctypes.c_uint(level),
                                   ctypes.c_uint(blocksize), ctypes.c_uint(addshuffle)),
              f"nc_def_var_blosc({varid}, {subcompressor}, {level}, {blocksize}, {addshuffle})")

    def enddef(self):
        check(lib.nc_enddef(self.ncid), "nc_enddef")

    def variables(self):
        """Names of the root group's variables."""
        count = ctypes.c_int()
        check(lib.nc_inq_nvars(self.ncid, ctypes.byref(count)), "nc_inq_nvars")
        names = []
        for varid in range(count.value):
            name = ctypes.create_string_buffer(257)
            check(lib.nc_inq_varname(self.ncid, varid, name), "nc_inq_varname")
            names.append(name.value.decode())
        return names

    def varid(self, name):
        varid = ctypes.c_int()
        check(lib.nc_inq_varid(self.ncid, name.encode(), ctypes.byref(varid)), f"nc_inq_varid({name})")
        return varid.value

    def put(self, name, array):
        array = np.ascontiguousarray(array)
        check(lib.nc_put_var(self.ncid, self.varid(name), array.ctypes.data_as(ctypes.c_void_p)), f"nc_put_var({name})")

    def shape_and_type(self, varid):
        xtype, ndims = ctypes.c_int(), ctypes.c_int()
        dimids = (ctypes.c_int * 64)()
        check(lib.nc_inq_var(self.ncid, varid, None, ctypes.byref(xtype), ctypes.byref(ndims), dimids, None), "nc_inq_var")
        shape = []
        for d in range(ndims.value):
            length = ctypes.c_size_t()
            check(lib.nc_inq_dimlen(self.ncid, dimids[d], ctypes.byref(length)), "nc_inq_dimlen")
            shape.append(length.value)
        return tuple(shape), DTYPES[xtype.value]

    def get(self, name):
        varid = self.varid(name)
        shape, dtype = self.shape_and_type(varid)
        out = np.empty(shape, dtype=dtype)
        check(lib.nc_get_var(self.ncid, varid, out.ctypes.data_as(ctypes.c_void_p)), f"nc_get_var({name})")
        return out

    def filter_ids(self, name):
        """The ids nc_inq_var_filter_ids reports (0 for a codec without a plugin)."""
        varid = self.varid(name)
        count = ctypes.c_size_t()
        check(lib.nc_inq_var_filter_ids(self.ncid, varid, ctypes.byref(count), None), "nc_inq_var_filter_ids")
        ids = (ctypes.c_uint * max(1, count.value))()
        check(lib.nc_inq_var_filter_ids(self.ncid, varid, ctypes.byref(count), ids), "nc_inq_var_filter_ids")
        return list(ids[:count.value])

    def filters(self, name):
        """[(id, [params])] as nc_inq_var_filter_ids/info report them."""
        varid = self.varid(name)
        result = []
        for filter_id in self.filter_ids(name):
            nparams = ctypes.c_size_t()
            check(lib.nc_inq_var_filter_info(self.ncid, varid, filter_id, ctypes.byref(nparams), None), "nc_inq_var_filter_info")
            params = (ctypes.c_uint * max(1, nparams.value))()
            check(lib.nc_inq_var_filter_info(self.ncid, varid, filter_id, ctypes.byref(nparams), params), "nc_inq_var_filter_info")
            result.append((filter_id, list(params[:nparams.value])))
        return result

    def codecs(self, name):
        """The _Codecs attribute text, or None."""
        varid = self.varid(name)
        length = ctypes.c_size_t()
        if lib.nc_inq_attlen(self.ncid, varid, b"_Codecs", ctypes.byref(length)) != NC_NOERR:
            return None
        text = ctypes.create_string_buffer(length.value + 1)
        check(lib.nc_get_att_text(self.ncid, varid, b"_Codecs", text), "nc_get_att_text(_Codecs)")
        return text.value.decode()


def zarr_url(directory, mode="nczarr"):
    """The netcdf-c URL of a file-system Zarr store."""
    return f"file://{os.path.abspath(directory)}#mode={mode},file"

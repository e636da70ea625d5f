// SPDX-License-Identifier: BSD-3-Clause
//! Sizes, alignments and field offsets of every `repr(C)` struct ncfilters defines or reads,
//! as the Rust compiler lays them out, and the C program that compares them with the netcdf-c
//! tree being built ([`layout_check_source`]). cmake/ncfilters.cmake compiles and runs it at
//! configure time (the `ncfilters-layout-check` program prints it), `gen-headers abi-check`
//! compiles it as `_Static_assert`s.
#![forbid(unsafe_code)]

use crate::c_types::{H5Z_class2_t, NCPluginList, NCZ_codec_t, NC_H5_Filterspec};
use crate::netcdf_internals::nc4::{
    ChunkCache, NC_HDF5_Filter, NClist, NC_DIM_INFO, NC_FILE_INFO, NC_HDF5_VAR_INFO, NC_OBJ, NC_VAR_INFO,
};
use crate::netcdf_internals::nczarr::{NCZ_VAR_INFO, NC_GRP_INFO, NC_TYPE_INFO};
use crate::netcdf_internals::{NC_Dispatch, NC};
use std::fmt::Write;
use std::mem::{align_of, offset_of, size_of};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldLayout {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLayout {
    /// How C spells the type, e.g. `struct NC_Dispatch`.
    pub c_name: &'static str,
    pub size: usize,
    pub align: usize,
    pub fields: Vec<FieldLayout>,
    /// False for a mirror of only the leading fields of a C struct: then the C struct
    /// must be at least as large, and its alignment is not compared.
    pub complete: bool,
}

fn field_size<S, F>(_: fn(&S) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! layout_of {
    (prefix $c_name:literal, $ty:ident { $($field:ident),* $(,)? }) => {
        StructLayout { complete: false, ..layout_of!($c_name, $ty { $($field),* }) }
    };
    ($c_name:literal, $ty:ident { $($field:ident),* $(,)? }) => {
        StructLayout {
            c_name: $c_name,
            size: size_of::<$ty>(),
            align: align_of::<$ty>(),
            fields: vec![$(FieldLayout {
                name: stringify!($field),
                offset: offset_of!($ty, $field),
                size: field_size(|s: &$ty| &s.$field),
            }),*],
            complete: true,
        }
    };
}

/// `NCZ_VAR_INFO_T`: 4.9.0's fields, from 4.9.2 on `maxstrlen`, from 4.9.3 on the two after it.
fn ncz_var_info_layout() -> StructLayout {
    #[allow(unused_mut)]
    let mut layout = layout_of!(
        "NCZ_VAR_INFO_T",
        NCZ_VAR_INFO {
            common,
            chunkproduct,
            chunksize,
            order,
            scalar,
            cache,
            xarray,
            dimension_separator,
            incompletefilters
        }
    );
    #[cfg(ncf_zvar_maxstrlen)]
    layout.fields.extend(layout_of!("NCZ_VAR_INFO_T", NCZ_VAR_INFO { maxstrlen }).fields);
    #[cfg(ncf_zvar_zarr_objects)]
    layout.fields.extend(layout_of!("NCZ_VAR_INFO_T", NCZ_VAR_INFO { zarray, zattrs }).fields);
    layout
}

/// Every mirrored struct with all of its fields.
pub fn mirrored_structs() -> Vec<StructLayout> {
    vec![
        layout_of!("NC_H5_Filterspec", NC_H5_Filterspec { filterid, nparams, params }),
        layout_of!("NCPluginList", NCPluginList { ndirs, dirs }),
        layout_of!(
            "NCZ_codec_t",
            NCZ_codec_t {
                version,
                sort,
                codecid,
                hdf5id,
                NCZ_codec_initialize,
                NCZ_codec_finalize,
                NCZ_codec_to_hdf5,
                NCZ_hdf5_to_codec,
                NCZ_modify_parameters
            }
        ),
        layout_of!(
            "H5Z_class2_t",
            H5Z_class2_t { version, id, encoder_present, decoder_present, name, can_apply, set_local, filter }
        ),
        layout_of!("NC", NC { ext_ncid, int_ncid, dispatch, dispatchdata, path, mode }),
        layout_of!("NC_OBJ", NC_OBJ { sort, name, id }),
        #[cfg(not(ncf_nclist_v2))]
        layout_of!("NClist", NClist { alloc, length, content }),
        #[cfg(ncf_nclist_v2)]
        layout_of!("NClist", NClist { content, alloc, length, extendible }),
        layout_of!(
            "NC_DIM_INFO_T",
            NC_DIM_INFO { hdr, container, len, unlimited, extended, too_long, format_dim_info, coord_var }
        ),
        layout_of!("struct ChunkCache", ChunkCache { size, nelems, preemption }),
        layout_of!(
            "NC_VAR_INFO_T",
            NC_VAR_INFO {
                hdr,
                alt_name,
                container,
                ndims,
                dimids,
                dim,
                is_new_var,
                was_coord_var,
                became_coord_var,
                fill_val_changed,
                attr_dirty,
                created,
                written_to,
                type_info,
                atts_read,
                meta_read,
                coords_read,
                att,
                no_fill,
                fill_value,
                chunksizes,
                storage,
                endianness,
                parallel_access,
                chunkcache,
                quantize_mode,
                nsd,
                format_var_info,
                filters
            }
        ),
        #[cfg(not(feature = "parallel4"))]
        layout_of!(prefix "NC_FILE_INFO_T", NC_FILE_INFO { hdr, controller, cmode, flags, parallel }),
        #[cfg(feature = "parallel4")]
        layout_of!(prefix "NC_FILE_INFO_T", NC_FILE_INFO { hdr, controller, comm, info, cmode, flags, parallel }),
        layout_of!(prefix "NC_GRP_INFO_T", NC_GRP_INFO { hdr, format_grp_info, nc4_info }),
        #[cfg(not(ncf_type_varsized))]
        layout_of!(prefix "NC_TYPE_INFO_T", NC_TYPE_INFO { hdr, container, rc, endianness, size, committed }),
        #[cfg(ncf_type_varsized)]
        layout_of!(
            prefix "NC_TYPE_INFO_T",
            NC_TYPE_INFO { hdr, container, rc, endianness, size, committed, nc_type_class, format_type_info, varsized }
        ),
        ncz_var_info_layout(),
        layout_of!(
            "NC_HDF5_VAR_INFO_T",
            NC_HDF5_VAR_INFO { hdf_datasetid, dimscale_hdf5_objids, dimscale, dimscale_attached, flags }
        ),
        layout_of!("struct NC_HDF5_Filter", NC_HDF5_Filter { flags, filterid, nparams, params }),
        layout_of!(
            "struct NC_Dispatch",
            NC_Dispatch {
                model,
                dispatch_version,
                create,
                open,
                redef,
                _enddef,
                sync,
                abort,
                close,
                set_fill,
                inq_format,
                inq_format_extended,
                inq,
                inq_type,
                def_dim,
                inq_dimid,
                inq_dim,
                inq_unlimdim,
                rename_dim,
                inq_att,
                inq_attid,
                inq_attname,
                rename_att,
                del_att,
                get_att,
                put_att,
                def_var,
                inq_varid,
                rename_var,
                get_vara,
                put_vara,
                get_vars,
                put_vars,
                get_varm,
                put_varm,
                inq_var_all,
                var_par_access,
                def_var_fill,
                show_metadata,
                inq_unlimdims,
                inq_ncid,
                inq_grps,
                inq_grpname,
                inq_grpname_full,
                inq_grp_parent,
                inq_grp_full_ncid,
                inq_varids,
                inq_dimids,
                inq_typeids,
                inq_type_equal,
                def_grp,
                rename_grp,
                inq_user_type,
                inq_typeid,
                def_compound,
                insert_compound,
                insert_array_compound,
                inq_compound_field,
                inq_compound_fieldindex,
                def_vlen,
                put_vlen_element,
                get_vlen_element,
                def_enum,
                insert_enum,
                inq_enum_member,
                inq_enum_ident,
                def_opaque,
                def_var_deflate,
                def_var_fletcher32,
                def_var_chunking,
                def_var_endian,
                def_var_filter,
                set_var_chunk_cache,
                get_var_chunk_cache,
                inq_var_filter_ids,
                inq_var_filter_info,
                def_var_quantize,
                inq_var_quantize,
                inq_filter_avail
            }
        ),
    ]
}

/// The mirrored structs netcdf-c's headers declare: all but `NCPluginList` before 4.9.3, whose
/// plugin-path API ncfilters adds (its header declares the struct, from the same Rust type).
pub fn declared_by_netcdf_c() -> Vec<StructLayout> {
    let mut structs = mirrored_structs();
    structs.retain(|layout| crate::PLUGIN_PATH_RELEASE || layout.c_name != "NCPluginList");
    structs
}

/// netcdf-c's headers that declare the mirrored structs, after the tree's config.h.
const LAYOUT_CHECK_INCLUDES: &str = "#include \"config.h\"\n#include <stddef.h>\n#include <stdio.h>\n\
#include \"netcdf.h\"\n#include \"netcdf_filter.h\"\n#include \"netcdf_aux.h\"\n\
#include \"netcdf_filter_build.h\"\n#include \"netcdf_dispatch.h\"\n#include \"nc.h\"\n\
#include \"nclist.h\"\n#include \"nc4internal.h\"\n#include \"hdf5internal.h\"\n\
#include \"zincludes.h\"\n#include \"zfilter.h\"\n";

/// How the program reports: run (the default), it prints one line per difference, naming the
/// struct, the field, and the value ncfilters expects and the tree's, and exits 1; compiled with
/// `NCF_LAYOUT_COMPILE_ONLY` every check is a `_Static_assert` (no program to run).
const LAYOUT_CHECK_PRELUDE: &str = "\
#ifdef NCF_LAYOUT_COMPILE_ONLY
#define NCF_EQUAL(what, expected, found) _Static_assert((found) == (expected), what \" differs from ncfilters' mirror\")
#define NCF_AT_LEAST(what, expected, found) _Static_assert((found) >= (expected), what \" is smaller than ncfilters' mirror\")
#else
static int ncf_differences;
static void ncf_compare(const char *what, size_t expected, size_t found, int at_least) {
    if (at_least ? found >= expected : found == expected) return;
    printf(\"%s: ncfilters expects %s%zu, this netcdf-c has %zu\\n\", what, at_least ? \"at least \" : \"\", expected, found);
    ncf_differences++;
}
#define NCF_EQUAL(what, expected, found) ncf_compare(what, expected, found, 0)
#define NCF_AT_LEAST(what, expected, found) ncf_compare(what, expected, found, 1)
#endif
";

/// The C program that checks every struct of [`declared_by_netcdf_c`] against netcdf-c's own
/// headers: each size, each alignment (of the structs mirrored whole) and each field's offset and
/// size. It needs the tree's include directories (`include`, `libhdf5`, `libnczarr`,
/// `libncpoco`, the build's `include` and config.h) and HDF5's.
pub fn layout_check_source() -> String {
    let mut c = format!(
        "/* ncfilters' mirrors of netcdf-c {}'s structs against the headers of the tree being built\n   \
         (generated by ncfilters::abi_layout::layout_check_source). */\n{LAYOUT_CHECK_INCLUDES}{LAYOUT_CHECK_PRELUDE}\n\
         static void ncf_layout_checks(void) {{\n",
        crate::NETCDF_RELEASE
    );
    for layout in declared_by_netcdf_c() {
        let t = layout.c_name;
        if layout.complete {
            let _ = writeln!(c, "    NCF_EQUAL(\"sizeof({t})\", {}, sizeof({t}));", layout.size);
            let _ = writeln!(c, "    NCF_EQUAL(\"alignment of {t}\", {}, _Alignof({t}));", layout.align);
        } else {
            let _ = writeln!(c, "    NCF_AT_LEAST(\"sizeof({t})\", {}, sizeof({t}));", layout.size);
        }
        for f in &layout.fields {
            let _ = writeln!(c, "    NCF_EQUAL(\"offset of {t}.{0}\", {1}, offsetof({t}, {0}));", f.name, f.offset);
            let _ = writeln!(c, "    NCF_EQUAL(\"size of {t}.{0}\", {1}, sizeof((({t}*)0)->{0}));", f.name, f.size);
        }
    }
    c.push_str(
        "}\n\nint main(void) {\n    ncf_layout_checks();\n#ifdef NCF_LAYOUT_COMPILE_ONLY\n    return 0;\n#else\n    \
         return ncf_differences != 0;\n#endif\n}\n",
    );
    c
}

#[cfg(test)]
mod tests {
    /// Version 5's table: `model` and `dispatch_version`, then 77 function pointers (624 bytes on
    /// 64-bit targets, 316 on 32-bit ones).
    #[test]
    fn dispatch_table_is_version_5_size() {
        let dispatch = super::mirrored_structs().into_iter().find(|s| s.c_name == "struct NC_Dispatch").unwrap();
        let size = 2 * std::mem::size_of::<std::os::raw::c_int>() + 77 * std::mem::size_of::<fn()>();
        assert_eq!((dispatch.size, dispatch.fields.len()), (size, 79));
    }

    #[test]
    fn the_layout_check_compares_every_field_of_every_mirrored_struct() {
        let source = super::layout_check_source();
        let structs = super::declared_by_netcdf_c();
        let fields: usize = structs.iter().map(|s| s.fields.len()).sum();
        assert_eq!(source.matches("    NCF_EQUAL(\"offset of ").count(), fields);
        assert_eq!(source.matches("    NCF_EQUAL(\"size of ").count(), fields);
        let complete = structs.iter().filter(|s| s.complete).count();
        assert_eq!(source.matches("    NCF_EQUAL(\"alignment of ").count(), complete);
        assert_eq!(source.matches("    NCF_AT_LEAST(\"sizeof(").count(), structs.len() - complete);
        assert!(source.contains("NCF_EQUAL(\"offset of NCZ_VAR_INFO_T.chunkproduct\""));
    }
}

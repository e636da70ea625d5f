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
    pub fields: &'static [FieldLayout],
    /// False for a mirror of only the leading fields of a C struct: then the C struct
    /// must be at least as large, and its alignment is not compared.
    pub complete: bool,
}

const fn field_size<S, F>(_: fn(&S) -> &F) -> usize {
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
            fields: &[$(FieldLayout {
                name: stringify!($field),
                offset: offset_of!($ty, $field),
                size: field_size(|s: &$ty| &s.$field),
            }),*],
            complete: true,
        }
    };
}

/// `NCZ_VAR_INFO_T`: 4.9.0's fields, from 4.9.2 on `maxstrlen`, from 4.9.3 on the two after it.
macro_rules! ncz_var_info_layout {
    ($($later:ident),*) => {
        layout_of!(
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
                $(, $later)*
            }
        )
    };
}

/// Every mirrored struct with all of its fields.
pub const MIRRORED_STRUCTS: &[StructLayout] = &[
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
    #[cfg(not(ncf_zvar_maxstrlen))]
    ncz_var_info_layout!(),
    #[cfg(all(ncf_zvar_maxstrlen, not(ncf_zvar_zarr_objects)))]
    ncz_var_info_layout!(maxstrlen),
    #[cfg(ncf_zvar_zarr_objects)]
    ncz_var_info_layout!(maxstrlen, zarray, zattrs),
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
];

/// Whether netcdf-c's headers declare `layout`: all but `NCPluginList` before 4.9.3, whose
/// plugin-path API ncfilters adds (its header declares the struct, from the same Rust type).
const fn declared_by_netcdf_c(layout: &StructLayout) -> bool {
    crate::PLUGIN_PATH_RELEASE || !same_text(layout.c_name, "NCPluginList")
}

/// The mirrored structs netcdf-c's headers declare ([`declared_by_netcdf_c`]).
pub fn structs_declared_by_netcdf_c() -> Vec<StructLayout> {
    MIRRORED_STRUCTS.iter().filter(|layout| declared_by_netcdf_c(layout)).cloned().collect()
}

const fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
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
#define NCF_EQUAL(what, expected, found) _Static_assert((found) == (expected), what \" differs from the ncfilters mirror\")
#define NCF_AT_LEAST(what, expected, found) _Static_assert((found) >= (expected), what \" is smaller than the ncfilters mirror\")
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

/// Text written into a byte buffer at compile time: as much as fits, and the length it needs.
struct ConstWriter<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl ConstWriter<'_> {
    const fn byte(&mut self, byte: u8) {
        if self.len < self.out.len() {
            self.out[self.len] = byte;
        }
        self.len += 1;
    }

    const fn text(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            self.byte(bytes[i]);
            i += 1;
        }
    }

    /// `text` backwards.
    const fn reversed(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = bytes.len();
        while i > 0 {
            i -= 1;
            self.byte(bytes[i]);
        }
    }

    const fn texts(&mut self, texts: &[&str]) {
        let mut i = 0;
        while i < texts.len() {
            self.text(texts[i]);
            i += 1;
        }
    }

    const fn number(&mut self, mut value: usize) {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (value % 10) as u8;
            value /= 10;
            count += 1;
            if value == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self.byte(digits[count]);
        }
    }

    /// `    CHECK("what", value, found);`, each of `what` and `found` written from its pieces.
    const fn check(&mut self, check: &str, what: &[&str], value: usize, found: &[&str]) {
        self.texts(&["    ", check, "(\""]);
        self.texts(what);
        self.text("\", ");
        self.number(value);
        self.text(", ");
        self.texts(found);
        self.text(");\n");
    }
}

/// The markers around the layout check's text in the `ncfilters-layout-check` program, so that a
/// build for a target nothing here can run reads it from the file (cmake/ncfilters.cmake):
/// `NCFILTERS-LAYOUT-CHECK-BEGIN` and a newline, and `NCFILTERS-LAYOUT-CHECK-END`. The code holds
/// them backwards, so that the file has them forwards only around the text.
const BEGIN_REVERSED: &str = "\nNIGEB-KCEHC-TUOYAL-SRETLIFCN";
const END_REVERSED: &str = "DNE-KCEHC-TUOYAL-SRETLIFCN";
/// The lengths of the markers.
pub const EMBEDDED_BEGIN_LEN: usize = BEGIN_REVERSED.len();
pub const EMBEDDED_END_LEN: usize = END_REVERSED.len();

/// Writes the C program that checks every struct netcdf-c's headers declare (between the markers
/// when `marked`) into `out`, as far as it fits; returns its whole length. It checks each size,
/// each alignment (of the structs mirrored whole) and each field's offset and size. It needs the
/// tree's include directories (`include`, `libhdf5`, `libnczarr`, `libncpoco`, the build's
/// `include` and config.h) and HDF5's.
const fn write_layout_check(out: &mut [u8], marked: bool) -> usize {
    let mut c = ConstWriter { out, len: 0 };
    if marked {
        c.reversed(BEGIN_REVERSED);
    }
    c.texts(&[
        "/* ncfilters' mirrors of netcdf-c ",
        crate::NETCDF_RELEASE,
        "'s structs against the headers of the tree being built\n   \
         (generated by ncfilters::abi_layout::layout_check_source). */\n",
        LAYOUT_CHECK_INCLUDES,
        LAYOUT_CHECK_PRELUDE,
        "\nstatic void ncf_layout_checks(void) {\n",
    ]);
    let mut s = 0;
    while s < MIRRORED_STRUCTS.len() {
        let layout = &MIRRORED_STRUCTS[s];
        s += 1;
        if !declared_by_netcdf_c(layout) {
            continue;
        }
        let t = layout.c_name;
        if layout.complete {
            c.check("NCF_EQUAL", &["sizeof(", t, ")"], layout.size, &["sizeof(", t, ")"]);
            c.check("NCF_EQUAL", &["alignment of ", t], layout.align, &["_Alignof(", t, ")"]);
        } else {
            c.check("NCF_AT_LEAST", &["sizeof(", t, ")"], layout.size, &["sizeof(", t, ")"]);
        }
        let mut f = 0;
        while f < layout.fields.len() {
            let field = &layout.fields[f];
            f += 1;
            let name = field.name;
            c.check("NCF_EQUAL", &["offset of ", t, ".", name], field.offset, &["offsetof(", t, ", ", name, ")"]);
            c.check("NCF_EQUAL", &["size of ", t, ".", name], field.size, &["sizeof(((", t, "*)0)->", name, ")"]);
        }
    }
    c.text(
        "}\n\nint main(void) {\n    ncf_layout_checks();\n#ifdef NCF_LAYOUT_COMPILE_ONLY\n    return 0;\n#else\n    \
         return ncf_differences != 0;\n#endif\n}\n",
    );
    if marked {
        c.reversed(END_REVERSED);
    }
    c.len
}

/// How long [`embedded_layout_check`] is.
pub const EMBEDDED_LEN: usize = write_layout_check(&mut [], true);

/// [`layout_check_source`]'s program between its markers ([`EMBEDDED_BEGIN_LEN`]), for the
/// `ncfilters-layout-check` program to hold (`N` is [`EMBEDDED_LEN`]).
pub const fn embedded_layout_check<const N: usize>() -> [u8; N] {
    let mut out = [0; N];
    let written = write_layout_check(&mut out, true);
    assert!(written == N, "N is EMBEDDED_LEN");
    out
}

/// The C program that checks the mirrors against the netcdf-c tree being built
/// ([`write_layout_check`]).
pub fn layout_check_source() -> String {
    let mut out = vec![0; write_layout_check(&mut [], false)];
    write_layout_check(&mut out, false);
    // ASCII: the program's text and the names of types and fields.
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    /// Version 5's table: `model` and `dispatch_version`, then 77 function pointers (624 bytes on
    /// 64-bit targets, 316 on 32-bit ones).
    #[test]
    fn dispatch_table_is_version_5_size() {
        let dispatch = super::MIRRORED_STRUCTS.iter().find(|s| s.c_name == "struct NC_Dispatch").unwrap();
        let size = 2 * std::mem::size_of::<std::os::raw::c_int>() + 77 * std::mem::size_of::<fn()>();
        assert_eq!((dispatch.size, dispatch.fields.len()), (size, 79));
    }

    #[test]
    fn the_layout_check_compares_every_field_of_every_mirrored_struct() {
        let source = super::layout_check_source();
        let structs = super::structs_declared_by_netcdf_c();
        let fields: usize = structs.iter().map(|s| s.fields.len()).sum();
        assert_eq!(source.matches("    NCF_EQUAL(\"offset of ").count(), fields);
        assert_eq!(source.matches("    NCF_EQUAL(\"size of ").count(), fields);
        let complete = structs.iter().filter(|s| s.complete).count();
        assert_eq!(source.matches("    NCF_EQUAL(\"alignment of ").count(), complete);
        assert_eq!(source.matches("    NCF_AT_LEAST(\"sizeof(").count(), structs.len() - complete);
        assert!(source.contains("NCF_EQUAL(\"offset of NCZ_VAR_INFO_T.chunkproduct\""));
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//! gen-headers: writes include/*.h from the ncfilters sources with cbindgen, and the files
//! derived from the table of standard filters (`cmake/ncfilters_plugins.cmake`, the README's
//! table); checks that the checked-in copies are current; and checks ncfilters' ABI against the
//! headers of the netcdf-c release it is built for (`NCFILTERS_NETCDF_VERSION`).
//!
//! ```text
//! gen-headers                 regenerate include/*.h and the files derived from the table
//! gen-headers --check         fail if any of them differs from what would be generated now
//! gen-headers abi-check --netcdf-src DIR --netcdf-build DIR [--lib libncfilters.so] [--expect-failure] [-- CFLAGS...]
//! ```

mod standard_filter_lists;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};
use std::{env, fs};

/// A generated header and the exported functions it declares (all others are excluded).
struct Header {
    file: &'static str,
    functions: &'static [&'static str],
}

const HEADERS: &[Header] = &[
    Header {
        file: "netcdf_filter.h",
        functions: &[
            "nc_def_var_filter",
            "nc_inq_var_filter_ids",
            "nc_inq_var_filter_info",
            "nc_inq_var_filter",
            "nc_inq_filter_avail",
            "nc_def_var_bzip2",
            "nc_inq_var_bzip2",
            "nc_def_var_zstandard",
            "nc_inq_var_zstandard",
            "nc_def_var_blosc",
            "nc_inq_var_blosc",
            "nc_plugin_path_ndirs",
            "nc_plugin_path_get",
            "nc_plugin_path_set",
            "ncaux_plugin_path_parsen",
            "ncaux_plugin_path_parse",
            "ncaux_plugin_path_tostring",
            "ncaux_plugin_path_clear",
            "ncaux_plugin_path_reclaim",
            "ncaux_plugin_path_append",
            "ncaux_plugin_path_prepend",
            "ncaux_plugin_path_stringlen",
            "ncaux_plugin_path_stringget",
            "ncaux_plugin_path_stringset",
        ],
    },
    Header { file: "netcdf_filter_build.h", functions: &[] },
    Header { file: "netcdf_filter_hdf5_build.h", functions: &[] },
    // ncfilters' own API, not a netcdf-c header.
    Header {
        file: "ncfilters.h",
        functions: &["ncfilters_report", "ncfilters_describe_spec", "ncfilters_describe_codec"],
    },
];

fn crate_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("crate root")
}

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("gen-headers: {message}");
    exit(1)
}

fn run_cbindgen(config: cbindgen::Config) -> String {
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_root())
        .with_config(config)
        .generate()
        .unwrap_or_else(|e| fail(format!("cbindgen: {e}")));
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("cbindgen writes UTF-8")
}

/// One exported function as cbindgen renders it: `ret name(args)`.
struct Prototype {
    name: String,
    ret: String,
    args: String,
}

/// Every function cbindgen sees: the `#[no_mangle]` exports, and (`imports == true`) the
/// `extern "C"` imports of the netcdf-c shim, which it prints with an `extern` prefix.
fn prototypes(imports: bool) -> Vec<Prototype> {
    let config = cbindgen::Config {
        language: cbindgen::Language::C,
        no_includes: true,
        documentation: false,
        usize_is_size_t: true,
        line_length: 100_000,
        export: cbindgen::ExportConfig { item_types: vec![cbindgen::ItemType::Functions], ..Default::default() },
        ..Default::default()
    };
    run_cbindgen(config)
        .lines()
        .filter(|line| line.ends_with(");") && (imports || !line.starts_with("extern ")))
        .map(|line| line.strip_prefix("extern ").unwrap_or(line))
        .map(|line| {
            let open = line.find('(').expect("prototype has '('");
            let head = &line[..open];
            let split = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            Prototype {
                name: head[split..].to_string(),
                ret: head[..split].trim().to_string(),
                args: line[open + 1..line.len() - 2].to_string(),
            }
        })
        .collect()
}

fn exported_prototypes() -> Vec<Prototype> {
    prototypes(false)
}

fn render_header(header: &Header, functions: &[Prototype]) -> String {
    let config_path = crate_root().join("tools/gen-headers/config").join(header.file.replace(".h", ".toml"));
    let mut config =
        cbindgen::Config::from_file(&config_path).unwrap_or_else(|e| fail(format!("{}: {e}", config_path.display())));
    let excluded = functions.iter().map(|p| p.name.clone()).filter(|name| !header.functions.contains(&name.as_str()));
    config.export.exclude.extend(excluded);
    let text = run_cbindgen(config);
    for function in header.functions {
        if !text.contains(&format!(" {function}(")) {
            fail(format!("{}: function {function} is listed for it but not exported by ncfilters", header.file));
        }
    }
    text
}

/// cbindgen's exports, which the headers are rendered from, are the `#[no_mangle]` functions of
/// `src/` that the source scan finds (the NULL-policy test, symbol provenance and the CMake
/// module's list read the same scan), and every function a header lists is one of them.
fn check_exports_match_the_scan() {
    let scanned: BTreeSet<String> =
        ncfilters_source_scan::exports(&crate_root().join("src")).into_iter().map(|e| e.name).collect();
    let rendered: BTreeSet<String> = exported_prototypes().into_iter().map(|p| p.name).collect();
    if scanned != rendered {
        fail(format!(
            "cbindgen and the source scan see different exports: only cbindgen {:?}, only the scan {:?}",
            rendered.difference(&scanned).collect::<Vec<_>>(),
            scanned.difference(&rendered).collect::<Vec<_>>()
        ));
    }
    let unlisted: Vec<&str> =
        HEADERS.iter().flat_map(|h| h.functions.iter().copied()).filter(|f| !scanned.contains(*f)).collect();
    if !unlisted.is_empty() {
        fail(format!("headers list functions ncfilters does not export: {unlisted:?}"));
    }
}

fn headers(check_only: bool) {
    check_exports_match_the_scan();
    let functions = prototypes(true);
    let include = crate_root().join("include");
    let mut stale = Vec::new();
    for header in HEADERS {
        let text = render_header(header, &functions);
        let path = include.join(header.file);
        if check_only {
            if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(header.file);
            }
        } else {
            fs::write(&path, text).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
            println!("wrote {}", path.display());
        }
    }
    if !stale.is_empty() {
        fail(format!(
            "stale headers in include/: {} (run `cargo run -p gen-headers` and commit the result)",
            stale.join(", ")
        ));
    }
    if check_only {
        println!("include/ headers are current ({} files)", HEADERS.len());
    }
    standard_filter_lists(check_only);
}

/// Writes (or checks) the files derived from the table of standard filters.
fn standard_filter_lists(check_only: bool) {
    let root = crate_root();
    let files = standard_filter_lists::generated_files(&root).unwrap_or_else(|e| fail(e));
    let mut stale = Vec::new();
    for (file, text) in &files {
        let path = root.join(file);
        if check_only {
            if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(*file);
            }
        } else {
            fs::write(&path, text).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
            println!("wrote {}", path.display());
        }
    }
    if !stale.is_empty() {
        fail(format!(
            "stale files derived from logic/src/standard_filter_table.rs: {} (run `cargo run -p gen-headers` and commit the result)",
            stale.join(", ")
        ));
    }
    if check_only {
        println!("the files derived from the table of standard filters are current ({} files)", files.len());
    }
}

/// Functions only a release with its own plugin-path code (4.9.3 on) has: ncfilters exports
/// them there alone (prefixes; cbindgen sees every export, whatever its cfg).
const PLUGIN_PATH_RELEASE_ONLY: [&str; 6] = [
    "nc_plugin_path_initialize",
    "nc_plugin_path_finalize",
    "NC4_hdf5_plugin_path_",
    "NCZ_plugin_path_",
    "NCZ_load_all_plugins",
    "NCZ_plugin_loaded",
];

/// The plugin-path API that netcdf-c 4.9.0 and 4.9.2 lack and ncfilters adds, declared as 4.9.3 does.
const PLUGIN_PATH_API_ADDED: &str =
    "/* The plugin-path API of netcdf-c 4.9.3, which ncfilters adds to 4.9.0 (netcdf_filter.h, netcdf_aux.h). */\n\
    typedef struct NCPluginList { size_t ndirs; char** dirs; } NCPluginList;\n\
    int nc_plugin_path_ndirs(size_t* ndirsp);\n\
    int nc_plugin_path_get(NCPluginList* dirs);\n\
    int nc_plugin_path_set(NCPluginList* dirs);\n\
    int ncaux_plugin_path_parsen(size_t pathlen, const char* pathlist0, char sep, NCPluginList* dirs);\n\
    int ncaux_plugin_path_parse(const char* pathlist0, char sep, NCPluginList* dirs);\n\
    int ncaux_plugin_path_tostring(const NCPluginList* dirs, char sep, char** catp);\n\
    int ncaux_plugin_path_clear(NCPluginList* dirs);\n\
    int ncaux_plugin_path_reclaim(NCPluginList* dirs);\n\
    int ncaux_plugin_path_append(NCPluginList* dirs, const char* dir);\n\
    int ncaux_plugin_path_prepend(struct NCPluginList* dirs, const char* dir);\n\
    int ncaux_plugin_path_stringlen(void);\n\
    int ncaux_plugin_path_stringget(int pathlen, char* path);\n\
    int ncaux_plugin_path_stringset(int pathlen, const char* path);\n\n";

/// netcdf-c 4.9.3's plugin-path functions defined without a header declaration (called by
/// libsrc4/nc4dispatch.c), and its internal header of the others.
const PLUGIN_PATH_RELEASE_DECLARATIONS: &str = "#include \"ncplugins.h\"\n#include \"zplugins.h\"\n\
    int nc_plugin_path_initialize(void); /* libdispatch/dplugins.c */\n\
    int nc_plugin_path_finalize(void);\n\
    const char* NC4_hdf5_plugin_path_tostring(void); /* libhdf5/hdf5plugins.c */\n\n";

/// Functions netcdf-c defines (and exports) without declaring them in any header,
/// declared here exactly as their definitions read.
const UNDECLARED_DEFINITIONS: &str = "/* Defined without a header declaration in netcdf-c. */\n\
    int NCZ_filter_remove(NC_VAR_INFO_T* var, unsigned int id); /* libnczarr/zfilter.c */\n\n\
    /* Called by ncfilters.cmake's fixed copies of zsync.c and zxcache.c. */\n\
    int ncfilters_zarr_codec(const NC_FILE_INFO_T* file, NC_VAR_INFO_T* var, const char* key, const NCjson* jcodec, int chainindex);\n\
    int ncfilters_zarr_raw_chunk(NC_VAR_INFO_T* var, size64_t size);\n\n\
    /* ncfilters' own API (include/ncfilters.h), declared as there: netcdf-c has no such functions. */\n\
    int ncfilters_report(char **json_out);\n\
    int ncfilters_describe_spec(const char *spec, char **json_out);\n\
    int ncfilters_describe_codec(const char *codec_json, char **json_out);\n\n";

/// The HDF5 functions plugins/common/src/shim.c forwards to, with their signatures in HDF5's own
/// types. The shim declares them itself (it is compiled without hdf5.h), so the check compares
/// these with the HDF5 headers in use, and [`HDF5_TYPES_AS_SHIM_DECLARES`] with the shim's types.
const HDF5_FUNCTIONS: [(&str, &str); 19] = [
    ("H5Zfilter_avail", "htri_t (*)(H5Z_filter_t)"),
    ("H5Zregister", "herr_t (*)(const void *)"),
    (
        "H5Pget_filter_by_id2",
        "herr_t (*)(hid_t, H5Z_filter_t, unsigned int *, size_t *, unsigned int *, size_t, char *, unsigned int *)",
    ),
    ("H5Pmodify_filter", "herr_t (*)(hid_t, H5Z_filter_t, unsigned int, size_t, const unsigned int *)"),
    ("H5Pget_chunk", "int (*)(hid_t, int, hsize_t *)"),
    ("H5Tget_size", "size_t (*)(hid_t)"),
    ("H5Tget_precision", "size_t (*)(hid_t)"),
    ("H5Tget_offset", "int (*)(hid_t)"),
    ("H5Tget_order", "H5T_order_t (*)(hid_t)"),
    ("H5Tget_class", "H5T_class_t (*)(hid_t)"),
    ("H5Tget_super", "hid_t (*)(hid_t)"),
    ("H5Tclose", "herr_t (*)(hid_t)"),
    ("H5Sget_simple_extent_dims", "int (*)(hid_t, hsize_t *, hsize_t *)"),
    ("H5Sget_simple_extent_npoints", "hssize_t (*)(hid_t)"),
    ("H5Zget_filter_info", "herr_t (*)(H5Z_filter_t, unsigned int *)"),
    ("H5PLsize", "herr_t (*)(unsigned int *)"),
    ("H5PLget", "ssize_t (*)(unsigned int, char *, size_t)"),
    ("H5PLremove", "herr_t (*)(unsigned int)"),
    ("H5PLappend", "herr_t (*)(const char *)"),
];

/// Each HDF5 type of [`HDF5_FUNCTIONS`] and the callbacks, and the integer type the shim and
/// logic/src/c_types.rs use for it: the same size and signedness is the same ABI.
const HDF5_TYPES_AS_SHIM_DECLARES: [(&str, &str); 10] = [
    ("hid_t", "long long"),
    ("hsize_t", "unsigned long long"),
    ("hssize_t", "long long"),
    ("ssize_t", "long"),
    ("herr_t", "int"),
    ("htri_t", "int"),
    ("H5Z_filter_t", "int"),
    ("H5T_order_t", "int"),
    ("H5T_class_t", "int"),
    ("H5PL_type_t", "int"),
];

/// The names shim.c forwards to HDF5 (`FORWARD("hdf5", ...)`).
fn shim_hdf5_functions() -> Vec<String> {
    let shim = fs::read_to_string(crate_root().join("plugins/common/src/shim.c")).unwrap_or_else(|e| fail(e));
    shim.split("FORWARD(\"hdf5\",")
        .skip(1)
        .filter_map(|rest| rest.split(',').nth(2).map(|name| name.trim().to_string()))
        .collect()
}

/// The `_Static_assert`s of HDF5's side of the ABI: the functions ncfilters calls, the filter
/// class and callbacks it implements, the plugin entry points and the constants it relies on.
fn hdf5_abi_source() -> String {
    let forwarded = shim_hdf5_functions();
    let listed: Vec<String> = HDF5_FUNCTIONS.iter().map(|(name, _)| name.to_string()).collect();
    if forwarded != listed {
        fail(format!("shim.c forwards {forwarded:?} to HDF5; HDF5_FUNCTIONS lists {listed:?}"));
    }
    let mut c = String::from(
        "/* HDF5's side: what ncfilters calls through shim.c and implements for HDF5. */\n\
         #include \"H5PLextern.h\"\n\
         #define NCF_SAME_INTEGER(a, b) _Static_assert(sizeof(a) == sizeof(b) && (((a)-1 < (a)0) == ((b)-1 < (b)0)), #a \" and \" #b \" differ\")\n\
         #define NCF_SIGNATURE(f, type) _Static_assert(__builtin_types_compatible_p(__typeof__(&f), type), #f \": HDF5 declares another signature\")\n",
    );
    for (hdf5, shim) in HDF5_TYPES_AS_SHIM_DECLARES {
        let _ = writeln!(c, "NCF_SAME_INTEGER({hdf5}, {shim});");
    }
    for (name, signature) in HDF5_FUNCTIONS {
        let _ = writeln!(c, "NCF_SIGNATURE({name}, {signature});");
    }
    c.push_str(
        "NCF_SIGNATURE(H5PLget_plugin_type, H5PL_type_t (*)(void));\n\
         NCF_SIGNATURE(H5PLget_plugin_info, const void *(*)(void));\n\
         _Static_assert(__builtin_types_compatible_p(H5Z_func_t, size_t (*)(unsigned int, size_t, const unsigned int *, size_t, size_t *, void **)), \"H5Z_func_t differs\");\n\
         _Static_assert(__builtin_types_compatible_p(H5Z_can_apply_func_t, htri_t (*)(hid_t, hid_t, hid_t)), \"H5Z_can_apply_func_t differs\");\n\
         _Static_assert(__builtin_types_compatible_p(H5Z_set_local_func_t, herr_t (*)(hid_t, hid_t, hid_t)), \"H5Z_set_local_func_t differs\");\n",
    );
    use ncfilters::c_types::{ids, H5PL_TYPE_FILTER, H5Z_CLASS_T_VERS, H5Z_FLAG_REVERSE, H5Z_FLAG_SKIP_EDC};
    let constants: [(&str, i64); 10] = [
        ("H5Z_FLAG_REVERSE", H5Z_FLAG_REVERSE.into()),
        ("H5Z_FLAG_SKIP_EDC", H5Z_FLAG_SKIP_EDC.into()),
        ("H5Z_CLASS_T_VERS", H5Z_CLASS_T_VERS.into()),
        ("H5PL_TYPE_FILTER", H5PL_TYPE_FILTER.into()),
        ("H5Z_FILTER_DEFLATE", ids::H5Z_FILTER_DEFLATE.into()),
        ("H5Z_FILTER_SHUFFLE", ids::H5Z_FILTER_SHUFFLE.into()),
        ("H5Z_FILTER_FLETCHER32", ids::H5Z_FILTER_FLETCHER32.into()),
        ("H5Z_FILTER_SZIP", ids::H5Z_FILTER_SZIP.into()),
        ("H5Z_FILTER_NBIT", ids::H5Z_FILTER_NBIT.into()),
        ("H5Z_FILTER_SCALEOFFSET", ids::H5Z_FILTER_SCALEOFFSET.into()),
    ];
    for (name, value) in constants {
        let _ = writeln!(c, "_Static_assert({name} == {value}, \"{name} differs\");");
    }
    c.push('\n');
    c
}

/// The C translation unit of the ABI check: the layout checks of every mirrored struct (the
/// program the module runs at configure time, here as `_Static_assert`s), then one
/// `_Static_assert` per other fact ncfilters relies on.
fn abi_check_source(exports: &[Prototype]) -> String {
    let mut c = format!(
        "/* Generated by gen-headers abi-check: ncfilters' ABI against netcdf-c {}'s own headers. */\n\
         #define NCF_LAYOUT_COMPILE_ONLY\n",
        ncfilters::NETCDF_RELEASE
    );
    c.push_str(&ncfilters::abi_layout::layout_check_source());
    c.push('\n');
    c.push_str(UNDECLARED_DEFINITIONS);
    c.push_str(&hdf5_abi_source());
    c.push_str(if ncfilters::PLUGIN_PATH_RELEASE { PLUGIN_PATH_RELEASE_DECLARATIONS } else { PLUGIN_PATH_API_ADDED });
    c.push_str("/* Every exported function has netcdf-c's signature. */\n");
    for p in exports {
        let _ = writeln!(c, "typedef {} ncfilters_sig_{}({});", p.ret, p.name, p.args);
        let _ = writeln!(
            c,
            "_Static_assert(__builtin_types_compatible_p(ncfilters_sig_{0}, __typeof__({0})), \"{0}: signature differs from netcdf-c\");",
            p.name
        );
    }
    c
}

/// Whether this build exports `name` (4.9.0 and 4.9.2 builds leave out the release-only functions).
fn exported_in_this_release(name: &str) -> bool {
    ncfilters::PLUGIN_PATH_RELEASE || !PLUGIN_PATH_RELEASE_ONLY.iter().any(|prefix| name.starts_with(prefix))
}

fn defined_symbols(lib: &Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .unwrap_or_else(|e| fail(format!("nm: {e}")));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.split_whitespace().collect::<Vec<_>>().get(1..3).map(|v| (v[0].to_string(), v[1].to_string()))
        })
        .filter(|(kind, _)| kind == "T")
        .map(|(_, name)| name)
        .collect()
}

fn abi_check(args: &[String]) {
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).map(PathBuf::from);
    let src = value("--netcdf-src").unwrap_or_else(|| fail("abi-check needs --netcdf-src"));
    let build = value("--netcdf-build").unwrap_or_else(|| fail("abi-check needs --netcdf-build"));
    let expect_failure = args.iter().any(|a| a == "--expect-failure");
    // Compiler flags after `--`, e.g. HDF5's include directory for hdf5internal.h.
    let extra_cflags = args.iter().skip_while(|a| *a != "--").skip(1);
    let mut exports = exported_prototypes();
    exports.retain(|p| exported_in_this_release(&p.name));

    if let Some(lib) = value("--lib") {
        let declared: BTreeSet<String> = exports.iter().map(|p| p.name.clone()).collect();
        let exported = defined_symbols(&lib);
        let undeclared: Vec<_> = exported.difference(&declared).collect();
        if !undeclared.is_empty() || exported.is_empty() {
            fail(format!("{} exports functions the check does not cover: {undeclared:?}", lib.display()));
        }
        println!("abi-check: {} exported functions of {} covered", exported.len(), lib.display());
    }

    let dir = crate_root().join("target/abi-check");
    fs::create_dir_all(&dir).unwrap_or_else(|e| fail(e));
    let source = dir.join(if expect_failure { "abi_check_broken_mirror.c" } else { "abi_check.c" });
    fs::write(&source, abi_check_source(&exports)).unwrap_or_else(|e| fail(e));
    let output = Command::new(env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c11", "-fsyntax-only", "-Werror=incompatible-pointer-types"])
        .arg(format!("-I{}", build.display()))
        .arg(format!("-I{}", build.join("include").display()))
        .arg(format!("-I{}", src.join("include").display()))
        .arg(format!("-I{}", src.join("libhdf5").display()))
        .arg(format!("-I{}", src.join("libnczarr").display()))
        .arg(format!("-I{}", src.join("libncpoco").display()))
        .args(extra_cflags)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| fail(format!("cc: {e}")));
    let source_text = fs::read_to_string(&source).unwrap_or_default();
    let asserts = source_text.matches("_Static_assert(").count() + source_text.matches("    NCF_").count();
    let stderr = String::from_utf8_lossy(&output.stderr);
    match (output.status.success(), expect_failure) {
        (true, false) => println!("abi-check: {asserts} assertions hold against {}", src.display()),
        (false, true) => {
            let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("");
            println!("abi-check: the broken mirror is caught as expected: {first}");
        }
        (true, true) => fail("the deliberately broken mirror passed the ABI check: the check is not effective"),
        (false, false) => fail(format!("ABI mismatch against netcdf-c ({}):\n{stderr}", source.display())),
    }
}

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => headers(false),
        Some("--check") => headers(true),
        Some("abi-check") => abi_check(&args[1..]),
        Some(other) => {
            fail(format!("unknown argument {other:?}; see the doc comment in tools/gen-headers/src/main.rs"))
        }
    }
}

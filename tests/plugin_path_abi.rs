// SPDX-License-Identifier: BSD-3-Clause
//! The plugin-path API through its C ABI (`nc_plugin_path_*`, `ncaux_plugin_path_*`): the list
//! helpers, the process-wide path, bad arguments, and many threads replacing and reading the path
//! at once. With `NCFILTERS_STOCK_LIBNETCDF` naming a stock libnetcdf that has the helpers
//! (netcdf-c 4.9.3 on), the `#[ignore]`d differential test compares them with netcdf-c's.
//!
//! No HDF5 is loaded here, so only the path itself changes (HDF5's table is the harness's part).

use libloading::Library;
use ncfilters::abi::plugin_path_api as api;
use ncfilters::c_types::NCPluginList;
use ncfilters::error::{NC_EINVAL, NC_NOERR};
use ncfilters_core::plugin_path::PATH_SEPARATOR;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::ptr;
use std::sync::Mutex;

/// The tests that replace the process's plugin path run one at a time.
static PATH: Mutex<()> = Mutex::new(());

fn empty() -> NCPluginList {
    NCPluginList { ndirs: 0, dirs: ptr::null_mut() }
}

/// The directories of a list.
fn dirs_of(list: &NCPluginList) -> Vec<String> {
    (0..list.ndirs)
        .map(|i| {
            // SAFETY: the list holds ndirs NUL-terminated strings.
            unsafe { CStr::from_ptr(*list.dirs.add(i)) }.to_string_lossy().into_owned()
        })
        .collect()
}

fn parse(text: &str, sep: u8) -> Vec<String> {
    let text = CString::new(text).unwrap();
    let mut list = empty();
    // SAFETY: valid arguments.
    assert_eq!(unsafe { api::ncaux_plugin_path_parse(text.as_ptr(), sep as c_char, &mut list) }, NC_NOERR);
    let dirs = dirs_of(&list);
    // SAFETY: the list came from parse.
    assert_eq!(unsafe { api::ncaux_plugin_path_clear(&mut list) }, NC_NOERR);
    assert!(list.dirs.is_null() && list.ndirs == 0);
    dirs
}

/// A list whose vector and strings are malloc'd, as netcdf-c's callers make them.
fn list_of(dirs: &[&str]) -> NCPluginList {
    let mut list = empty();
    for dir in dirs {
        let dir = CString::new(*dir).unwrap();
        // SAFETY: valid arguments.
        assert_eq!(unsafe { api::ncaux_plugin_path_append(&mut list, dir.as_ptr()) }, NC_NOERR);
    }
    list
}

fn set(dirs: &[&str]) {
    let mut list = list_of(dirs);
    // SAFETY: a valid list.
    assert_eq!(unsafe { api::nc_plugin_path_set(&mut list) }, NC_NOERR);
    // SAFETY: the list is ours.
    unsafe { api::ncaux_plugin_path_clear(&mut list) };
}

fn get() -> Vec<String> {
    let mut list = empty();
    // SAFETY: a valid, empty list.
    assert_eq!(unsafe { api::nc_plugin_path_get(&mut list) }, NC_NOERR);
    let dirs = dirs_of(&list);
    // SAFETY: the vector and strings were malloc'd for us.
    unsafe { api::ncaux_plugin_path_clear(&mut list) };
    dirs
}

#[test]
fn parse_splits_on_the_separator_and_keeps_empty_pieces() {
    assert_eq!(parse("/zero;/one;;/two", b';'), ["/zero", "/one", "", "/two"]);
    let platform_s = format!("/a{PATH_SEPARATOR}/b");
    assert_eq!(parse(&platform_s, 0), ["/a", "/b"], "'\\0' is the platform's separator");
    assert_eq!(parse("/a;/b", b':'), ["/a;/b"]);
    assert!(parse("", b';').is_empty());
    // parsen stops at pathlen and at a NUL.
    let mut list = empty();
    let text = b"/x;/y\0;/z";
    // SAFETY: text is readable for its length.
    let status = unsafe { api::ncaux_plugin_path_parsen(text.len(), text.as_ptr().cast(), b';' as c_char, &mut list) };
    assert_eq!(status, NC_NOERR);
    assert_eq!(dirs_of(&list), ["/x", "/y"]);
    // SAFETY: ours.
    unsafe { api::ncaux_plugin_path_clear(&mut list) };
}

#[test]
fn tostring_append_prepend_and_reclaim() {
    let mut list = list_of(&["/b", "/c"]);
    let front = CString::new("/a").unwrap();
    // SAFETY: valid arguments.
    assert_eq!(unsafe { api::ncaux_plugin_path_prepend(&mut list, front.as_ptr()) }, NC_NOERR);
    let mut text: *mut c_char = ptr::null_mut();
    // SAFETY: valid arguments.
    assert_eq!(unsafe { api::ncaux_plugin_path_tostring(&list, b';' as c_char, &mut text) }, NC_NOERR);
    // SAFETY: a malloc'd NUL-terminated string we own.
    assert_eq!(unsafe { CStr::from_ptr(text) }.to_str().unwrap(), "/a;/b;/c");
    // SAFETY: ours.
    unsafe { libc::free(text.cast()) };
    // SAFETY: valid arguments ('\0': the platform's separator).
    assert_eq!(unsafe { api::ncaux_plugin_path_tostring(&list, 0, &mut text) }, NC_NOERR);
    // SAFETY: as above.
    assert_eq!(unsafe { CStr::from_ptr(text) }.to_str().unwrap(), format!("/a{PATH_SEPARATOR}/b{PATH_SEPARATOR}/c"));
    // SAFETY: ours.
    unsafe { libc::free(text.cast()) };
    // reclaim frees the struct too: it must be malloc'd.
    // SAFETY: malloc of the struct's size; the list's contents move into it.
    let boxed = unsafe { libc::malloc(std::mem::size_of::<NCPluginList>()) }.cast::<NCPluginList>();
    // SAFETY: boxed is a fresh block of the right size.
    unsafe { boxed.write(list) };
    // SAFETY: a malloc'd list with malloc'd contents.
    assert_eq!(unsafe { api::ncaux_plugin_path_reclaim(boxed) }, NC_NOERR);
}

#[test]
fn bad_arguments_are_refused_without_a_crash() {
    let dir = CString::new("/d").unwrap();
    // SAFETY: every call checks its pointers.
    unsafe {
        assert_eq!(api::ncaux_plugin_path_parse(dir.as_ptr(), 0, ptr::null_mut()), NC_EINVAL.code());
        assert_eq!(api::ncaux_plugin_path_tostring(ptr::null(), 0, ptr::null_mut()), NC_EINVAL.code());
        assert_eq!(api::ncaux_plugin_path_append(ptr::null_mut(), dir.as_ptr()), NC_EINVAL.code());
        let mut list = empty();
        assert_eq!(api::ncaux_plugin_path_append(&mut list, ptr::null()), NC_EINVAL.code());
        assert_eq!(api::ncaux_plugin_path_clear(ptr::null_mut()), NC_NOERR);
        assert_eq!(api::nc_plugin_path_set(ptr::null_mut()), NC_EINVAL.code());
        let mut no_vector = NCPluginList { ndirs: 2, dirs: ptr::null_mut() };
        assert_eq!(api::nc_plugin_path_set(&mut no_vector), NC_EINVAL.code());
        let mut null_entry: [*mut c_char; 1] = [ptr::null_mut()];
        let mut with_null = NCPluginList { ndirs: 1, dirs: null_entry.as_mut_ptr() };
        assert_eq!(api::nc_plugin_path_set(&mut with_null), NC_EINVAL.code());
        assert_eq!(api::ncaux_plugin_path_stringset(0, dir.as_ptr()), NC_EINVAL.code());
        assert_eq!(api::ncaux_plugin_path_stringset(-1, dir.as_ptr()), NC_EINVAL.code());
        assert_eq!(api::ncaux_plugin_path_stringget(4, ptr::null_mut()), NC_EINVAL.code());
        assert_eq!(api::nc_plugin_path_get(ptr::null_mut()), NC_NOERR, "as netcdf-c: nothing to fill");
    }
}

#[test]
fn set_replaces_the_path_that_get_ndirs_and_the_fortran_helpers_see() {
    let _one_at_a_time = PATH.lock().unwrap_or_else(|p| p.into_inner());
    set(&["/zero", "/one", "/two"]);
    assert_eq!(get(), ["/zero", "/one", "/two"]);
    let mut ndirs = 0usize;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { api::nc_plugin_path_ndirs(&mut ndirs) }, NC_NOERR);
    assert_eq!(ndirs, 3);
    // SAFETY: the test's thread is the only one calling netcdf-c.
    assert_eq!(unsafe { api::ncaux_plugin_path_stringlen() }, "/zero;/one;/two".len() as c_int);
    let mut buffer = [0x55 as c_char; 32];
    // SAFETY: buffer is writable for its length.
    assert_eq!(unsafe { api::ncaux_plugin_path_stringget(buffer.len() as c_int, buffer.as_mut_ptr()) }, NC_NOERR);
    // SAFETY: NUL-padded within the buffer.
    assert_eq!(unsafe { CStr::from_ptr(buffer.as_ptr()) }.to_str().unwrap(), "/zero;/one;/two");
    assert!(buffer[15..].iter().all(|&b| b == 0), "strncpy pads with NULs");
    // Too short: truncated, without a NUL, never past the length.
    let mut short = [0x55 as c_char; 8];
    // SAFETY: writable for 5 bytes.
    assert_eq!(unsafe { api::ncaux_plugin_path_stringget(5, short.as_mut_ptr()) }, NC_NOERR);
    assert_eq!(&short[..6], &[b'/' as c_char, b'z' as c_char, b'e' as c_char, b'r' as c_char, b'o' as c_char, 0x55]);
    let text = b"/a;/mod;/b";
    // SAFETY: readable for its length.
    assert_eq!(unsafe { api::ncaux_plugin_path_stringset(text.len() as c_int, text.as_ptr().cast()) }, NC_NOERR);
    assert_eq!(get(), ["/a", "/mod", "/b"]);
    set(&[]);
    assert!(get().is_empty());
}

#[test]
fn threads_replacing_and_reading_the_path_always_see_a_whole_list() {
    let _one_at_a_time = PATH.lock().unwrap_or_else(|p| p.into_inner());
    let lists: [&[&str]; 3] = [&["/a", "/b"], &["/c", "/d", "/e", "/f"], &[]];
    // A reader may run before any writer: it must see one of the lists, not the initial path.
    set(lists[0]);
    std::thread::scope(|scope| {
        for t in 0..8 {
            scope.spawn(move || {
                for i in 0..300 {
                    if (t + i) % 3 == 0 {
                        set(lists[(t + i) % lists.len()]);
                    } else {
                        let seen = get();
                        assert!(lists.iter().any(|l| seen == *l), "a torn list: {seen:?}");
                    }
                }
            });
        }
    });
}

/// netcdf-c's helper signatures, from the stock library.
type Parse = unsafe extern "C" fn(*const c_char, c_char, *mut NCPluginList) -> c_int;
type ToString = unsafe extern "C" fn(*const NCPluginList, c_char, *mut *mut c_char) -> c_int;

#[test]
#[ignore = "needs NCFILTERS_STOCK_LIBNETCDF (a stock netcdf-c 4.9.3 or later); run by cargo xtask differential"]
fn the_helpers_agree_with_netcdf_c() {
    let path = std::env::var("NCFILTERS_STOCK_LIBNETCDF").expect("NCFILTERS_STOCK_LIBNETCDF");
    // SAFETY: netcdf-c's own library.
    let library = unsafe { Library::new(&path) }.unwrap();
    // SAFETY: the exported functions have these signatures (netcdf_aux.h).
    let (c_parse, c_tostring) = unsafe {
        (
            *library.get::<Parse>(b"ncaux_plugin_path_parse\0").unwrap(),
            *library.get::<ToString>(b"ncaux_plugin_path_tostring\0").unwrap(),
        )
    };
    let inputs = ["/zero;/one;/two", "/a:/b::/c", ";", ":", "/only", "a;b:c", ";;x;", "/usr/local/hdf5/lib/plugin"];
    let mut compared = 0;
    for text in inputs {
        for sep in [b';', b':', 0u8] {
            let input = CString::new(text).unwrap();
            let (mut theirs, mut ours) = (empty(), empty());
            // SAFETY: valid arguments to both.
            unsafe {
                assert_eq!(c_parse(input.as_ptr(), sep as c_char, &mut theirs), NC_NOERR);
                assert_eq!(api::ncaux_plugin_path_parse(input.as_ptr(), sep as c_char, &mut ours), NC_NOERR);
            }
            assert_eq!(dirs_of(&ours), dirs_of(&theirs), "parse({text:?}, {:?})", sep as char);
            for out_sep in [b';', 0u8] {
                let (mut a, mut b): (*mut c_char, *mut c_char) = (ptr::null_mut(), ptr::null_mut());
                // SAFETY: valid arguments; both return malloc'd strings.
                unsafe {
                    assert_eq!(c_tostring(&theirs, out_sep as c_char, &mut a), NC_NOERR);
                    assert_eq!(api::ncaux_plugin_path_tostring(&ours, out_sep as c_char, &mut b), NC_NOERR);
                    assert_eq!(CStr::from_ptr(b), CStr::from_ptr(a), "tostring of {text:?}");
                    libc::free(a.cast());
                    libc::free(b.cast());
                }
                compared += 1;
            }
            // SAFETY: both lists' contents are malloc'd (netcdf-c's by calloc/strdup).
            unsafe {
                api::ncaux_plugin_path_clear(&mut theirs);
                api::ncaux_plugin_path_clear(&mut ours);
            }
        }
    }
    println!("PASS ncaux_plugin_path_parse/tostring agree with {path} on {compared} cases");

    // The NULL arguments netcdf-c accepts or refuses (src/abi/null_arguments.rs): same answers.
    type List = unsafe extern "C" fn(*mut NCPluginList) -> c_int;
    type Insert = unsafe extern "C" fn(*mut NCPluginList, *const c_char) -> c_int;
    type Text = unsafe extern "C" fn(c_int, *mut c_char) -> c_int;
    let dir = CString::new("/d").unwrap();
    // SAFETY: the exported functions have these signatures (netcdf_aux.h, netcdf_filter.h); NULL
    // is an answer both give without reading further.
    unsafe {
        let list = |name: &[u8]| *library.get::<List>(name).unwrap();
        for (name, ours) in [
            (&b"nc_plugin_path_get\0"[..], api::nc_plugin_path_get as List),
            (b"nc_plugin_path_set\0", api::nc_plugin_path_set),
            (b"ncaux_plugin_path_clear\0", api::ncaux_plugin_path_clear),
            (b"ncaux_plugin_path_reclaim\0", api::ncaux_plugin_path_reclaim),
        ] {
            assert_eq!(ours(ptr::null_mut()), list(name)(ptr::null_mut()), "{}(NULL)", String::from_utf8_lossy(name));
        }
        let insert = |name: &[u8]| *library.get::<Insert>(name).unwrap();
        let mut empty_list = empty();
        for (name, ours) in [
            (&b"ncaux_plugin_path_append\0"[..], api::ncaux_plugin_path_append as Insert),
            (b"ncaux_plugin_path_prepend\0", api::ncaux_plugin_path_prepend),
        ] {
            assert_eq!(ours(ptr::null_mut(), dir.as_ptr()), insert(name)(ptr::null_mut(), dir.as_ptr()));
            assert_eq!(ours(&mut empty_list, ptr::null()), insert(name)(&mut empty_list, ptr::null()));
        }
        assert_eq!(
            c_parse(dir.as_ptr(), 0, ptr::null_mut()),
            api::ncaux_plugin_path_parse(dir.as_ptr(), 0, ptr::null_mut())
        );
        let (mut theirs, mut ours) = (empty(), empty());
        assert_eq!(c_parse(ptr::null(), 0, &mut theirs), api::ncaux_plugin_path_parse(ptr::null(), 0, &mut ours));
        assert_eq!((theirs.ndirs, ours.ndirs), (0, 0));
        assert_eq!(
            c_tostring(ptr::null(), 0, ptr::null_mut()),
            api::ncaux_plugin_path_tostring(ptr::null(), 0, ptr::null_mut())
        );
        let text = |name: &[u8]| *library.get::<Text>(name).unwrap();
        assert_eq!(
            text(b"ncaux_plugin_path_stringget\0")(4, ptr::null_mut()),
            api::ncaux_plugin_path_stringget(4, ptr::null_mut())
        );
    }
    println!("PASS NULL arguments to the plugin-path API get netcdf-c's answers");
}

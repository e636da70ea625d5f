// SPDX-License-Identifier: BSD-3-Clause
//! Differential test: ncfilters' filter-spec parser against netcdf-c 4.9.0's C parser in the
//! stock libnetcdf.so the harness builds (`NCFILTERS_STOCK_LIBNETCDF`), through the same C ABI.
//!
//! Valid specs are generated at random (fixed seed) from the documented grammar; both
//! implementations must return identical ids and parameter words. Inputs on which the C
//! parser misbehaves (over-reads, wraps, guesses) are only given to ncfilters, which must
//! reject them with NC_EINVAL.

use libloading::{Library, Symbol};
use ncfilters::abi::ncaux_filterspec as ours;
use ncfilters::c_types::NC_H5_Filterspec;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_uint};
use std::ptr;

type ParseFn = unsafe extern "C" fn(*const c_char, *mut c_uint, *mut usize, *mut *mut c_uint) -> c_int;
type ParseListFn =
    unsafe extern "C" fn(*const c_char, *mut c_int, *mut usize, *mut *mut *mut NC_H5_Filterspec) -> c_int;
type FreeFn = unsafe extern "C" fn(*mut NC_H5_Filterspec);

/// xorshift64*: deterministic, so a failure is reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

fn decimal(rng: &mut Rng) -> String {
    let whole = rng.below(1_000_000);
    let frac = rng.below(100_000_000);
    let sign = rng.pick(&["", "-", "+"]);
    match rng.below(4) {
        0 => format!("{sign}{whole}.{frac}"),
        1 => format!("{sign}{whole}.{frac}e{}", rng.below(20) as i64 - 10),
        2 => format!("{sign}.{frac}"),
        _ => format!("{sign}{whole}"),
    }
}

/// One constant the documented grammar accepts.
fn constant(rng: &mut Rng) -> String {
    let u = |rng: &mut Rng| rng.pick(&["u", "U"]);
    match rng.below(12) {
        0 => format!("{}", rng.next() as u32),
        1 => format!("-{}", rng.below(1 << 31)),
        2 => format!("{}{}", rng.next() as u32, u(rng)),
        3 => format!("{}{}", rng.below(100_000) as i64 - 50_000, rng.pick(&["b", "B"])),
        4 => format!("{}{}{}", rng.below(100_000), u(rng), rng.pick(&["b", "B"])),
        5 => format!("{}{}", rng.below(200_000) as i64 - 100_000, rng.pick(&["s", "S"])),
        6 => format!("{}{}{}", rng.below(200_000), u(rng), rng.pick(&["s", "S"])),
        7 => format!("{}{}", rng.next() as i64, rng.pick(&["l", "L"])),
        8 => format!("{}{}{}", rng.next(), u(rng), rng.pick(&["l", "L"])),
        9 => format!("{}{}", decimal(rng), rng.pick(&["f", "F"])),
        10 => format!("{}{}", decimal(rng), rng.pick(&["d", "D"])),
        _ => format!("{}.", rng.below(1_000_000)),
    }
}

fn spec(rng: &mut Rng) -> String {
    let mut text = format!("{}", rng.next() as u32);
    for _ in 0..rng.below(8) {
        text.push(',');
        text.push_str(rng.pick(&["", "", " ", "\t", "  "]));
        text.push_str(&constant(rng));
    }
    text
}

/// (status, id, params) from one implementation of `ncaux_h5filterspec_parse`.
fn run_parse(parse: ParseFn, text: &str) -> (c_int, u32, Vec<u32>) {
    let c_text = CString::new(text).unwrap();
    let (mut id, mut n, mut params) = (0, 0usize, ptr::null_mut());
    // SAFETY: valid C string and out-pointers; params is C-heap and freed below.
    let status = unsafe { parse(c_text.as_ptr(), &mut id, &mut n, &mut params) };
    let values = if status == 0 && !params.is_null() {
        // SAFETY: the parser returned n words at params.
        let v = unsafe { std::slice::from_raw_parts(params, n) }.to_vec();
        // SAFETY: C-heap memory owned by us now.
        unsafe { libc::free(params.cast()) };
        v
    } else {
        Vec::new()
    };
    (status, id, values)
}

/// (status, format, [(id, params)]) from one implementation of `ncaux_h5filterspec_parselist`.
fn run_parselist(parse: ParseListFn, free: FreeFn, text: &str) -> (c_int, c_int, Vec<(u32, Vec<u32>)>) {
    let c_text = CString::new(text).unwrap();
    let (mut format, mut n, mut vector) = (0, 0usize, ptr::null_mut());
    // SAFETY: valid C string and out-pointers.
    let status = unsafe { parse(c_text.as_ptr(), &mut format, &mut n, &mut vector) };
    let mut specs = Vec::new();
    if status == 0 && !vector.is_null() {
        for i in 0..n {
            // SAFETY: vector holds n spec pointers, each with nparams words.
            unsafe {
                let spec = *vector.add(i);
                specs.push(((*spec).filterid, std::slice::from_raw_parts((*spec).params, (*spec).nparams).to_vec()));
                free(spec);
            }
        }
        // SAFETY: the vector itself is C-heap.
        unsafe { libc::free(vector.cast()) };
    }
    (status, format, specs)
}

#[test]
#[ignore = "needs the stock libnetcdf.so; run by `cargo xtask differential`"]
fn matches_netcdf_c_on_valid_specs_and_rejects_where_c_misbehaves() {
    let path = std::env::var("NCFILTERS_STOCK_LIBNETCDF")
        .expect("set NCFILTERS_STOCK_LIBNETCDF to netcdf-c 4.9.0's stock libnetcdf.so");
    // SAFETY: loading netcdf-c; its initialisers have no preconditions.
    let lib = unsafe { Library::new(&path) }.expect("load stock libnetcdf.so");
    // SAFETY: the symbols have the netcdf_aux.h signatures these types spell out.
    let (c_parse, c_parselist, c_free): (Symbol<ParseFn>, Symbol<ParseListFn>, Symbol<FreeFn>) = unsafe {
        (
            lib.get(b"ncaux_h5filterspec_parse\0").unwrap(),
            lib.get(b"ncaux_h5filterspec_parselist\0").unwrap(),
            lib.get(b"ncaux_h5filterspec_free\0").unwrap(),
        )
    };

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut compared = 0;
    for _ in 0..20_000 {
        let text = spec(&mut rng);
        let c = run_parse(*c_parse, &text);
        assert_eq!(c.0, 0, "the C parser rejected a valid spec {text:?}");
        assert_eq!(run_parse(ours::ncaux_h5filterspec_parse, &text), c, "parse({text:?})");
        compared += 1;
    }
    for _ in 0..5_000 {
        let count = 1 + rng.below(4);
        let text = (0..count).map(|_| spec(&mut rng)).collect::<Vec<_>>().join("|");
        let c = run_parselist(*c_parselist, *c_free, &text);
        assert_eq!(c.0, 0, "the C parser rejected a valid list {text:?}");
        assert_eq!(
            run_parselist(ours::ncaux_h5filterspec_parselist, ours::ncaux_h5filterspec_free, &text),
            c,
            "parselist({text:?})"
        );
        // 4.9.0 frees an interior pointer when a "[N]" prefix is present (abort in glibc), so
        // the prefixed form is compared with C's result for the list alone.
        let format = rng.below(10) as c_int;
        let prefixed = run_parselist(
            ours::ncaux_h5filterspec_parselist,
            ours::ncaux_h5filterspec_free,
            &format!("[{format}]{text}"),
        );
        assert_eq!(prefixed, (c.0, format, c.2), "parselist([{format}]{text:?})");
        compared += 2;
    }

    // Where 4.9.0 reads out of bounds, wraps or guesses, only ncfilters is asked: NC_EINVAL.
    let misbehaving = [
        "307,9,",
        "307,,9",
        "307, ",
        "307,9 ",
        "307,4294967296",
        "307,-2147483649",
        "307,1.5",
        "307,9q",
        "307,18446744073709551616UL",
        "307,9223372036854775808L",
        ",9",
        "307,1e39f",
    ];
    for text in misbehaving {
        assert_eq!(run_parse(ours::ncaux_h5filterspec_parse, text).0, -36, "{text:?} must be NC_EINVAL");
    }
    for text in ["[1]", "[x]307", "307||1", "307,9,|1"] {
        assert_eq!(
            run_parselist(ours::ncaux_h5filterspec_parselist, ours::ncaux_h5filterspec_free, text).0,
            -36,
            "{text:?}"
        );
    }
    println!(
        "differential parser test: {compared} valid inputs identical to netcdf-c 4.9.0; {} misbehaving inputs rejected",
        misbehaving.len() + 4
    );
}

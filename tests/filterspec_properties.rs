// SPDX-License-Identifier: BSD-3-Clause
//! Property tests of the filter-spec parser, and its C ABI under bad and NULL arguments.

use ncfilters::abi::ncaux_filterspec::*;
use ncfilters::filterspec::{parse_parameter, parse_spec, parse_spec_list};
use proptest::prelude::*;
use std::ffi::CString;
use std::ptr;

const NC_EINVAL: i32 = -36;

fn words(text: &str) -> Vec<u32> {
    parse_parameter(text.as_bytes()).unwrap_or_else(|e| panic!("{text:?}: {e}")).words().to_vec()
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = parse_spec(&bytes);
        let _ = parse_spec_list(&bytes);
        let _ = parse_parameter(&bytes);
    }

    #[test]
    fn u32_round_trips(v: u32) {
        prop_assert_eq!(words(&v.to_string()), vec![v]);
        prop_assert_eq!(words(&format!("{v}U")), vec![v]);
    }

    #[test]
    fn negative_i32_keeps_its_bit_pattern(v in i32::MIN..0) {
        prop_assert_eq!(words(&v.to_string()), vec![v as u32]);
    }

    #[test]
    fn bytes_and_shorts_are_truncated(v in -100_000i32..100_000) {
        prop_assert_eq!(words(&format!("{v}b")), vec![(v as u32) & 0xFF]);
        prop_assert_eq!(words(&format!("{v}S")), vec![(v as u32) & 0xFFFF]);
    }

    #[test]
    fn i64_and_u64_are_low_then_high(v: i64, u: u64) {
        prop_assert_eq!(words(&format!("{v}L")), vec![v as u64 as u32, ((v as u64) >> 32) as u32]);
        prop_assert_eq!(words(&format!("{u}UL")), vec![u as u32, (u >> 32) as u32]);
    }

    #[test]
    fn doubles_and_floats_round_trip(d in proptest::num::f64::NORMAL, f in proptest::num::f32::NORMAL) {
        let bits = d.to_bits();
        prop_assert_eq!(words(&format!("{d:e}d")), vec![bits as u32, (bits >> 32) as u32]);
        prop_assert_eq!(words(&format!("{f:e}f")), vec![f.to_bits()]);
    }

    #[test]
    fn out_of_range_integers_are_rejected(v in (u32::MAX as u64 + 1)..u64::MAX) {
        let (above, below) = (v.to_string(), format!("-{}", v));
        prop_assert!(parse_parameter(above.as_bytes()).is_err());
        prop_assert!(parse_parameter(below.as_bytes()).is_err());
    }

    #[test]
    fn specs_round_trip_through_text(id: u32, params in proptest::collection::vec(any::<u32>(), 0..16)) {
        let text = std::iter::once(id.to_string()).chain(params.iter().map(u32::to_string)).collect::<Vec<_>>().join(",");
        let spec = parse_spec(text.as_bytes()).unwrap();
        prop_assert_eq!((spec.id, spec.params), (id, params));
    }

    #[test]
    fn empty_items_are_rejected(id: u32, at in 0usize..4) {
        let mut items: Vec<String> = vec![id.to_string(), "1".into(), "2".into(), "3".into()];
        items.insert(at + 1, String::new());
        prop_assert!(parse_spec(items.join(",").as_bytes()).is_err());
    }
}

#[test]
fn c_abi_rejects_null_and_bad_input() {
    // SAFETY (whole test): every pointer passed is NULL or valid for its use.
    unsafe {
        assert_eq!(ncaux_h5filterspec_parse(ptr::null(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut()), NC_EINVAL);
        assert_eq!(
            ncaux_h5filterspec_parselist(ptr::null(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut()),
            NC_EINVAL
        );
        let one = CString::new("9").unwrap();
        assert_eq!(ncaux_h5filterspec_parse_parameter(one.as_ptr(), ptr::null_mut(), ptr::null_mut()), NC_EINVAL);
        ncaux_h5filterspec_free(ptr::null_mut());
        ncaux_h5filterspec_fix8(ptr::null_mut(), 1);
        for bad in ["", "307,9,", "307,,9", "307,1.5", "x"] {
            let text = CString::new(bad).unwrap();
            let mut params = ptr::null_mut();
            assert_eq!(
                ncaux_h5filterspec_parse(text.as_ptr(), ptr::null_mut(), ptr::null_mut(), &mut params),
                NC_EINVAL,
                "{bad:?}"
            );
            assert!(params.is_null(), "{bad:?}: output written on error");
        }
        let text = CString::new("[3]307,9|1,2").unwrap();
        let (mut format, mut n, mut vector) = (0, 0usize, ptr::null_mut());
        assert_eq!(ncaux_h5filterspec_parselist(text.as_ptr(), &mut format, &mut n, &mut vector), 0);
        assert_eq!((format, n), (3, 2));
        let second = &**vector.add(1);
        assert_eq!((second.filterid, second.nparams, *second.params), (1, 1, 2));
        for i in 0..n {
            ncaux_h5filterspec_free(*vector.add(i));
        }
        libc::free(vector.cast());
        // Outputs are optional, as in netcdf-c (nccopy passes NULL for formatp).
        assert_eq!(ncaux_h5filterspec_parselist(text.as_ptr(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut()), 0);
        let mut two = [0u32; 2];
        let mut count = 0usize;
        let big = CString::new("-1L").unwrap();
        assert_eq!(ncaux_h5filterspec_parse_parameter(big.as_ptr(), &mut count, two.as_mut_ptr()), 0);
        assert_eq!((count, two), (2, [u32::MAX, u32::MAX]));
    }
}

#[test]
fn filter_api_without_netcdf_is_not_built_rather_than_a_crash() {
    // This test binary does not link netcdf-c: the weak references stay NULL.
    assert!(!ncfilters::test_support::netcdf_linked());
    // SAFETY: the test's thread is the only one calling netcdf-c.
    assert_eq!(unsafe { ncfilters::abi::filter_api::nc_inq_filter_avail(0, 307) }, -128);
    // SAFETY: NULL out-pointers are allowed.
    assert_eq!(unsafe { ncfilters::abi::filter_api::nc_def_var_filter(0, 0, 307, 1, ptr::null()) }, -128);
}

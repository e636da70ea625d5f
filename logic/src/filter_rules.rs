// SPDX-License-Identifier: BSD-3-Clause
//! The rules netcdf-c 4.9.0 applies to a variable's filter list: where a new HDF5 filter goes
//! (libhdf5/hdf5filter.c), and which definitions conflict (the same checks in libnczarr/zfilter.c).
#![forbid(unsafe_code)]

use crate::c_types::ids::{H5Z_FILTER_DEFLATE, H5Z_FILTER_FLETCHER32, H5Z_FILTER_SHUFFLE, H5Z_FILTER_SZIP};
use crate::error::{NcResult, NC_EFILTER, NC_EINDEFINE, NC_EINVAL, NC_ELATEDEF};

/// `NC_MAX_PIXELS_PER_BLOCK`.
const MAX_PIXELS_PER_BLOCK: u32 = 32;

/// Where a filter not yet on the variable is inserted: fletcher32 first, shuffle next
/// (after a leading fletcher32), everything else appended in definition order.
pub fn insert_position(existing_ids: &[u32], id: u32) -> usize {
    match (existing_ids.first(), id) {
        (None, _) => 0,
        (Some(_), H5Z_FILTER_FLETCHER32) => 0,
        (Some(&first), H5Z_FILTER_SHUFFLE) => usize::from(first == H5Z_FILTER_FLETCHER32),
        _ => existing_ids.len(),
    }
}

/// What both backends check first: define mode (`NC_EINDEFINE`), not a scalar (`NC_EINVAL`),
/// and not yet created in the file (`NC_ELATEDEF`), in 4.9.0's order.
pub fn check_definable(in_define_mode: bool, ndims: usize, created: bool) -> NcResult<()> {
    if !in_define_mode {
        Err(NC_EINDEFINE)
    } else if ndims == 0 {
        Err(NC_EINVAL)
    } else if created {
        Err(NC_ELATEDEF)
    } else {
        Ok(())
    }
}

/// How defining a filter changes a variable's parallel access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParallelAccess {
    /// The file is not open for parallel I/O (or the build has none).
    Unchanged,
    /// HDF5 writes filtered data collectively only, so the variable switches to `NC_COLLECTIVE`.
    Collective,
}

/// The HDF5 backend's rule for a filter on a variable of a file open for parallel I/O: in a
/// build with parallel netCDF-4 (`USE_PARALLEL4`), collective access when HDF5 writes filtered
/// data in parallel (`HDF5_SUPPORTS_PAR_FILTERS`, HDF5 ≥ 1.10.3), else `NC_EINVAL`. A serial
/// build never opens a file for parallel I/O.
pub fn parallel_access_for_filter(file_is_parallel: bool) -> NcResult<ParallelAccess> {
    if !cfg!(feature = "parallel4") || !file_is_parallel {
        Ok(ParallelAccess::Unchanged)
    } else if cfg!(feature = "hdf5-parallel-filters") {
        Ok(ParallelAccess::Collective)
    } else {
        Err(NC_EINVAL)
    }
}

/// Checks a filter that is not yet on the variable (a re-definition skips these, as in 4.9.0).
pub fn check_new_filter(id: u32, params: &[u32], have_deflate: bool, have_szip: bool) -> NcResult<()> {
    match id {
        H5Z_FILTER_DEFLATE => {
            let [level] = params else { return Err(NC_EFILTER) };
            if !(0..=9).contains(&(*level as i32)) || have_szip {
                return Err(NC_EINVAL);
            }
        }
        H5Z_FILTER_SZIP => {
            let [_, pixels_per_block] = params else { return Err(NC_EFILTER) };
            if pixels_per_block % 2 != 0 || *pixels_per_block > MAX_PIXELS_PER_BLOCK || have_deflate {
                return Err(NC_EINVAL);
            }
        }
        _ => {}
    }
    Ok(())
}

/// szip's pixels per block may not exceed the elements of the variable (zero-length
/// dimensions skipped). Unlike 4.9.0, which reads `params[1]` regardless, a re-definition
/// with fewer than 2 parameters is `NC_EFILTER`.
pub fn check_szip_block(params: &[u32], dim_lengths: &[usize]) -> NcResult<()> {
    let pixels_per_block = *params.get(1).ok_or(NC_EFILTER)?;
    let elements = dim_lengths.iter().filter(|&&len| len != 0).fold(1usize, |n, &len| n.saturating_mul(len));
    if pixels_per_block as usize > elements {
        return Err(NC_EINVAL);
    }
    Ok(())
}

/// A variable as the define-filter rules see it, in either backend (`nc_def_var_filter` on a
/// netCDF-4/HDF5 file or on an NCZarr dataset).
pub trait FilterTarget {
    /// Whether the variable already has filter `id`.
    fn has_filter(&self, id: u32) -> bool;
    fn dim_lengths(&self) -> Vec<usize>;
    /// Makes a contiguous variable chunked, as a filter needs.
    fn make_chunked(&mut self) -> NcResult<()>;
    /// Adds filter `id`, or replaces its parameters if the variable has it.
    fn add_filter(&mut self, id: u32, params: &[u32]) -> NcResult<()>;
}

/// The rules both backends apply to define a filter, after [`check_definable`]: a new filter is
/// checked against the variable's ([`check_new_filter`]) and makes it chunked; szip's block is
/// checked against the variable's size, a re-definition's too; then the filter is added.
pub fn define_filter(var: &mut impl FilterTarget, id: u32, params: &[u32]) -> NcResult<()> {
    if !var.has_filter(id) {
        check_new_filter(id, params, var.has_filter(H5Z_FILTER_DEFLATE), var.has_filter(H5Z_FILTER_SZIP))?;
        var.make_chunked()?;
    }
    if id == H5Z_FILTER_SZIP {
        check_szip_block(params, &var.dim_lengths())?;
    }
    var.add_filter(id, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variable that records what the rules did to it.
    #[derive(Default)]
    struct Recorded {
        filters: Vec<(u32, Vec<u32>)>,
        dims: Vec<usize>,
        chunked: bool,
    }

    impl FilterTarget for Recorded {
        fn has_filter(&self, id: u32) -> bool {
            self.filters.iter().any(|(have, _)| *have == id)
        }
        fn dim_lengths(&self) -> Vec<usize> {
            self.dims.clone()
        }
        fn make_chunked(&mut self) -> NcResult<()> {
            self.chunked = true;
            Ok(())
        }
        fn add_filter(&mut self, id: u32, params: &[u32]) -> NcResult<()> {
            match self.filters.iter_mut().find(|(have, _)| *have == id) {
                Some(filter) => filter.1 = params.to_vec(),
                None => self.filters.push((id, params.to_vec())),
            }
            Ok(())
        }
    }

    #[test]
    fn defining_checks_a_new_filter_then_chunks_and_a_redefinition_only_szip_s_block() {
        let mut var = Recorded { dims: vec![4, 0, 8], ..Recorded::default() };
        assert_eq!(define_filter(&mut var, H5Z_FILTER_DEFLATE, &[10]), Err(NC_EINVAL), "level 10");
        assert!(!var.chunked && var.filters.is_empty(), "a refused filter changes nothing");
        define_filter(&mut var, H5Z_FILTER_DEFLATE, &[5]).unwrap();
        assert!(var.chunked);
        assert_eq!(define_filter(&mut var, H5Z_FILTER_SZIP, &[32, 8]), Err(NC_EINVAL), "szip after deflate");
        define_filter(&mut var, H5Z_FILTER_DEFLATE, &[10]).unwrap();
        assert_eq!(var.filters, [(H5Z_FILTER_DEFLATE, vec![10])], "a re-definition skips the new-filter checks");
        let mut var = Recorded { dims: vec![4, 0, 8], ..Recorded::default() };
        assert_eq!(define_filter(&mut var, H5Z_FILTER_SZIP, &[32, 64]), Err(NC_EINVAL), "64 pixels > 32 elements");
        define_filter(&mut var, H5Z_FILTER_SZIP, &[32, 32]).unwrap();
        assert_eq!(define_filter(&mut var, H5Z_FILTER_SZIP, &[32]), Err(NC_EFILTER), "re-defined, still checked");
    }

    #[test]
    fn a_file_not_open_for_parallel_io_keeps_its_access() {
        assert_eq!(parallel_access_for_filter(false), Ok(ParallelAccess::Unchanged));
    }

    #[test]
    fn a_parallel_file_switches_to_collective_access_where_hdf5_filters_in_parallel() {
        let expected = if !cfg!(feature = "parallel4") {
            Ok(ParallelAccess::Unchanged)
        } else if cfg!(feature = "hdf5-parallel-filters") {
            Ok(ParallelAccess::Collective)
        } else {
            Err(NC_EINVAL)
        };
        assert_eq!(parallel_access_for_filter(true), expected);
    }

    #[test]
    fn order_is_fletcher32_shuffle_then_definition_order() {
        assert_eq!(insert_position(&[], 3), 0);
        assert_eq!(insert_position(&[1, 307], 3), 0);
        assert_eq!(insert_position(&[3, 1], 2), 1);
        assert_eq!(insert_position(&[1], 2), 0);
        assert_eq!(insert_position(&[1, 2], 307), 2);
    }

    #[test]
    fn definability_in_netcdf_c_order() {
        assert_eq!(check_definable(false, 0, true), Err(NC_EINDEFINE));
        assert_eq!(check_definable(true, 0, true), Err(NC_EINVAL));
        assert_eq!(check_definable(true, 2, true), Err(NC_ELATEDEF));
        assert_eq!(check_definable(true, 2, false), Ok(()));
    }

    #[test]
    fn deflate_and_szip_checks() {
        assert_eq!(check_new_filter(1, &[5, 6], false, false), Err(NC_EFILTER));
        assert_eq!(check_new_filter(1, &[10], false, false), Err(NC_EINVAL));
        assert_eq!(check_new_filter(1, &[u32::MAX], false, false), Err(NC_EINVAL));
        assert_eq!(check_new_filter(1, &[5], false, true), Err(NC_EINVAL));
        assert_eq!(check_new_filter(1, &[0], false, false), Ok(()));
        assert_eq!(check_new_filter(4, &[32], false, false), Err(NC_EFILTER));
        assert_eq!(check_new_filter(4, &[32, 7], false, false), Err(NC_EINVAL));
        assert_eq!(check_new_filter(4, &[32, 34], false, false), Err(NC_EINVAL));
        assert_eq!(check_new_filter(4, &[32, 32], true, false), Err(NC_EINVAL));
        assert_eq!(check_new_filter(307, &[], true, true), Ok(()));
        assert_eq!(check_szip_block(&[32, 32], &[8, 0, 4]), Ok(()));
        assert_eq!(check_szip_block(&[32, 32], &[4, 0, 4]), Err(NC_EINVAL));
        assert_eq!(check_szip_block(&[32, 32], &[4, 7]), Err(NC_EINVAL));
        assert_eq!(check_szip_block(&[32], &[64]), Err(NC_EFILTER));
    }
}

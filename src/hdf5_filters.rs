// SPDX-License-Identifier: BSD-3-Clause
//! The netCDF-4/HDF5 filter policy below the exports (`abi::hdf5filter` converts the pointers
//! and calls these): defining a filter on a variable, whether a filter will run, and which
//! standard filters' HDF5 classes are ncfilters' stand-ins (`abi::builtin` registers them).
#![deny(unsafe_code)]

use crate::error::{NcResult, NC_ENOFILTER};
use crate::ffi_boundary::Call;
use crate::filter_rules as rules;
use crate::netcdf_internals::hdf5_var::{hdf5_filter_available, Hdf5Location, Hdf5Var};
use std::os::raw::{c_int, c_uint};

/// Adds filter `id` to the variable, or, if it is already there, replaces its parameters
/// and flags in place. New fletcher32 and shuffle filters go first (see [`rules::insert_position`]).
pub fn add_filter(var: &mut Hdf5Var, id: u32, params: &[u32], flags: c_int) -> NcResult<()> {
    var.ensure_list()?;
    match var.position(id) {
        Some(index) => var.replace(index, params, flags),
        None => var.insert(rules::insert_position(&var.ids(), id), id, params, flags),
    }
}

impl rules::FilterTarget for Hdf5Location<'_> {
    fn has_filter(&self, id: u32) -> bool {
        self.var.position(id).is_some()
    }
    fn dim_lengths(&self) -> Vec<usize> {
        self.var.dim_lengths()
    }
    fn make_chunked(&mut self) -> NcResult<()> {
        Hdf5Location::make_chunked(self)
    }
    fn add_filter(&mut self, id: u32, params: &[u32]) -> NcResult<()> {
        add_filter(&mut self.var, id, params, 0)
    }
}

/// HDF5 has filter `id` and it will run: a built-in stand-in whose C library (libblosc,
/// libsz) does not load is not available, so callers learn it before the first chunk fails.
pub fn filter_will_run(call: &Call<'_>, id: c_uint) -> NcResult<()> {
    hdf5_filter_available(call, id)?;
    match unavailable_reason(call, id) {
        Some(why) => {
            crate::error::report(format_args!("filter {id} is not available: {why}"));
            Err(NC_ENOFILTER)
        }
        None => Ok(()),
    }
}

/// The ids whose stand-in this process registered.
static REGISTERED: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

fn registered_ids() -> std::sync::MutexGuard<'static, Vec<u32>> {
    REGISTERED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether HDF5's class for `id` is the stand-in this process registered.
pub fn is_stand_in(id: u32) -> bool {
    registered_ids().contains(&id)
}

/// Records that HDF5's class for `id` is now this process's stand-in.
pub fn record_stand_in(id: u32) {
    let mut ids = registered_ids();
    if !ids.contains(&id) {
        ids.push(id);
    }
}

/// Why HDF5's filter `id`, found available, cannot actually run: when HDF5's class for it is our
/// stand-in and the implementation it would pick is ncfilters' own blosc or szip, whose C library
/// does not load. `None` when it will run (or the class is not ours to judge).
pub fn unavailable_reason(call: &Call<'_>, id: u32) -> Option<String> {
    if !is_stand_in(id) {
        return None;
    }
    match crate::nczarr_filters::registry(call).get(id).cloned() {
        Some(plugin) => plugin.unavailable_reason(),
        None => Some(format!("no implementation of filter {id} was found")),
    }
}

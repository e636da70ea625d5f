// SPDX-License-Identifier: BSD-3-Clause
//! What a run of `test` covers. `cargo xtask test` covers every release and every slow check;
//! with `NCFILTERS_TIER=ci` a run covers one slow check and two releases (one beside the heaviest
//! checks: `SlowCheck::releases_beside`), chosen by the UTC day (`NCFILTERS_CI_DAY`, days since 1970, replays another day's run).

use std::sync::OnceLock;

use crate::harness::{Failure, Result};
use crate::release::{Release, RELEASES};
use crate::slow_checks::{SlowCheck, SLOW_CHECKS};

/// The releases `test` builds and tests: all of them, or in CI those of [`releases_on`] today.
pub fn releases_for_this_run() -> Result<Vec<&'static Release>> {
    Ok(match ci_day()? {
        None => RELEASES.iter().collect(),
        Some(day) => releases_on(day),
    })
}

/// The slow checks `test` runs: all of them, or in CI the one of [`slow_check_on`] today.
pub fn slow_checks_for_this_run() -> Result<Vec<&'static SlowCheck>> {
    Ok(match ci_day()? {
        None => SLOW_CHECKS.iter().collect(),
        Some(day) => vec![slow_check_on(day)],
    })
}

/// The slow checks in turn, one a day.
pub fn slow_check_on(day: u64) -> &'static SlowCheck {
    &SLOW_CHECKS[(day % SLOW_CHECKS.len() as u64) as usize]
}

/// The releases beside the day's slow check (`SlowCheck::releases_beside`; each takes 12 to 20
/// minutes on a 2-core machine, times in docs/testing.md):
/// - two: one of the older releases and one of 4.9.2 and 4.10.0 (the releases added last), each
///   by turns from day to day, in the table's order. Three took 95 minutes beside a light check;
/// - one: for valgrind, which reuses the builds and the suite the run made, its own release (two
///   beside it ran past CI's 90 minutes on 2026-12-03); else 4.9.2 or 4.10.0, by turns from one
///   round of the checks to the next.
pub fn releases_on(day: u64) -> Vec<&'static Release> {
    let check = slow_check_on(day);
    let versions: Vec<&str> = match (check.tests_serial_builds_of(), check.releases_beside()) {
        (Some(needed), _) => vec![needed.version],
        (None, 1) => {
            let round = day / SLOW_CHECKS.len() as u64;
            vec![LAST_ADDED[(round % LAST_ADDED.len() as u64) as usize]]
        }
        (None, _) => {
            let older: Vec<&str> =
                RELEASES.iter().map(|release| release.version).filter(|v| !LAST_ADDED.contains(v)).collect();
            let turn = choosing_day_number(day);
            vec![older[(turn % older.len() as u64) as usize], LAST_ADDED[(turn % LAST_ADDED.len() as u64) as usize]]
        }
    };
    RELEASES.iter().filter(|release| versions.contains(&release.version)).collect()
}

/// How many days before `day` chose their two releases by turns (not valgrind's, not one): the
/// turns then advance only on such days, so no older release waits for the other days too.
fn choosing_day_number(day: u64) -> u64 {
    let chooses = |check: &SlowCheck| check.releases_beside() == 2 && check.tests_serial_builds_of().is_none();
    let per_round = SLOW_CHECKS.iter().filter(|check| chooses(check)).count() as u64;
    let round = day / SLOW_CHECKS.len() as u64;
    let within = SLOW_CHECKS[..(day % SLOW_CHECKS.len() as u64) as usize].iter().filter(|check| chooses(check));
    round * per_round + within.count() as u64
}

/// The releases added last, which every CI run tests one of.
const LAST_ADDED: [&str; 2] = ["4.9.2", "4.10.0"];

/// Whether this is CI's run (`NCFILTERS_TIER=ci`).
pub fn is_ci_tier() -> bool {
    std::env::var("NCFILTERS_TIER").as_deref() == Ok("ci")
}

/// With `NCFILTERS_TIER=ci`, the day of the run: `NCFILTERS_CI_DAY` or today (UTC); else `None`.
/// Decided once per process, so that a run crossing midnight builds the releases its slow check
/// (valgrind) was chosen with.
fn ci_day() -> Result<Option<u64>> {
    static DAY: OnceLock<std::result::Result<Option<u64>, String>> = OnceLock::new();
    DAY.get_or_init(|| {
        if !is_ci_tier() {
            return Ok(None);
        }
        match std::env::var("NCFILTERS_CI_DAY") {
            Ok(day) => day
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("NCFILTERS_CI_DAY={day:?} is not a day number (days since 1970, e.g. 20787)")),
            Err(_) => Ok(Some(today())),
        }
    })
    .clone()
    .map_err(Failure)
}

/// Days since 1970 (UTC).
fn today() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_secs() / 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (releases, check) pair comes round in the least common multiple of the two counts,
    /// twice over: a Debian package's day alternates its release from one round of the checks to the next.
    fn cycle() -> u64 {
        let (releases, checks) = (RELEASES.len() as u64, SLOW_CHECKS.len() as u64);
        let gcd = (1..=releases.min(checks)).rev().find(|d| releases % d == 0 && checks % d == 0).unwrap_or(1);
        2 * releases * checks / gcd
    }

    fn versions(day: u64) -> Vec<&'static str> {
        releases_on(day).iter().map(|release| release.version).collect()
    }

    #[test]
    fn two_releases_by_turns_an_older_one_and_one_added_last() {
        // Days 1, 2, 3, 5 and 8: parallel 4.9.3, the matrix's static configuration, s390x, NCZarr
        // filters off and debian13; the turns skip day 4 (valgrind 4.9.3, its own release only).
        assert_eq!(slow_check_on(1).name(), "parallel 4.9.3");
        assert_eq!(versions(1), ["4.9.0", "4.9.2"]);
        assert_eq!(versions(2), ["4.9.3", "4.10.0"]);
        assert_eq!(slow_check_on(3).name(), "cross s390x");
        assert_eq!(versions(3), ["4.9.2", "4.10.1"]);
        assert_eq!(versions(4), ["4.9.3"]);
        assert_eq!(versions(5), ["4.9.0", "4.10.0"]);
        assert_eq!(slow_check_on(8).name(), "debian13");
        assert_eq!(versions(8), ["4.9.0", "4.9.2"]);
    }

    #[test]
    fn the_arm64_suite_under_qemu_has_one_release_beside_it() {
        assert_eq!(slow_check_on(32).name(), "debian13-arm64");
        assert_eq!(versions(32), ["4.9.2"]);
    }

    /// Every CI run but valgrind's (its own release) tests 4.9.2 or 4.10.0 (the releases added
    /// last); a day tests as many releases as its check leaves room for; over the cycle each release runs on at
    /// least a quarter of the days, and none goes more than 11 days untested.
    #[test]
    fn every_ci_run_tests_a_new_release_and_the_valgrind_check_s_release() {
        let mut runs = [0; 5];
        let mut last_run = [None::<u64>; 5];
        for day in 0..2 * cycle() {
            let releases = releases_on(day);
            let names = versions(day);
            let check = slow_check_on(day);
            match check.tests_serial_builds_of() {
                Some(needed) => assert!(releases.iter().any(|r| std::ptr::eq(*r, needed)), "day {day}: {names:?}"),
                None => assert!(names.iter().any(|v| LAST_ADDED.contains(v)), "day {day}: {names:?}"),
            }
            assert_eq!(releases.len(), check.releases_beside(), "day {day}: {}", check.name());
            for release in releases {
                let index = RELEASES.iter().position(|r| std::ptr::eq(r, release)).unwrap();
                if day < cycle() {
                    runs[index] += 1;
                }
                if let Some(last) = last_run[index] {
                    assert!(day - last <= 11, "{} untested from day {last} to day {day}", release.version);
                }
                last_run[index] = Some(day);
            }
        }
        assert!(runs.iter().all(|&n| n * 4 >= cycle()), "{runs:?} in {} days", cycle());
    }

    #[test]
    fn a_valgrind_day_tests_its_own_release_only() {
        // Day 0: valgrind 4.9.0 (with two releases, CI ran past 90 minutes on 2026-12-03); day 12:
        // valgrind 4.10.1, the last release.
        assert_eq!(slow_check_on(20_794).name(), "valgrind 4.9.0", "2026-12-07");
        assert_eq!(versions(0), ["4.9.0"]);
        assert_eq!(versions(12), ["4.10.1"]);
        assert_eq!(slow_check_on(20_852).name(), "valgrind 4.10.0", "2027-02-03");
        assert_eq!(versions(20_852), ["4.10.0"]);
    }

    #[test]
    fn a_debian_package_s_day_tests_one_of_the_releases_added_last() {
        // Day 13: deb trixie; day 29: deb bookworm; day 31: deb trixie i386; day 33: deb trixie from
        // Debian's crates; day 50: deb trixie again, a round of the checks later.
        assert_eq!(slow_check_on(13).name(), "deb trixie");
        assert_eq!(versions(13), ["4.9.2"]);
        assert_eq!(slow_check_on(29).name(), "deb bookworm");
        assert_eq!(versions(29), ["4.9.2"]);
        assert_eq!(slow_check_on(31).name(), "deb trixie i386");
        assert_eq!(versions(31), ["4.9.2"]);
        assert_eq!(slow_check_on(33).name(), "deb trixie debian-crates");
        assert_eq!(versions(33), ["4.9.2"]);
        assert_eq!(slow_check_on(50).name(), "deb trixie");
        assert_eq!(versions(50), ["4.10.0"]);
    }

    /// Each of netcdf-c's releases for Windows has a day of its own, and the shipped crates' tests
    /// under Wine another: together they take too long for one run.
    #[test]
    fn each_windows_release_and_the_tests_under_wine_have_a_day_of_their_own() {
        let names: Vec<String> = (0..SLOW_CHECKS.len() as u64).map(|day| slow_check_on(day).name()).collect();
        let wine: Vec<&str> = names.iter().map(String::as_str).filter(|name| name.starts_with("wine")).collect();
        assert_eq!(wine, ["wine 4.9.3", "wine 4.10.1", "wine"]);
        assert_eq!(slow_check_on(20_791).name(), "wine 4.10.1", "2026-12-04");
        assert_eq!(versions(20_791), ["4.10.0"]);
    }
}

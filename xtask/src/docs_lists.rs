// SPDX-License-Identifier: BSD-3-Clause
//! The lists the docs keep, held to the code they describe: the module's options (its header
//! comment), the xtask subcommands, the order `test` runs its steps in, which steps build netcdf-c
//! first, the example of a replayed CI day, each release's test counts and the kinds of slow check
//! (docs/testing.md), the functions of `include/ncfilters.h`, the symbols libnetcdf adds and the
//! tools the release tarball's workspace leaves out (docs/packaging.md), and the run-time settings
//! (README.md, against the `ncfilters` command's help and man page).
//! Tests only.

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
    }

    fn read(relative: &str) -> String {
        std::fs::read_to_string(repo().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
    }

    /// The `ncfilters_…` names in backquotes in `text`.
    fn quoted_ncfilters_names(text: &str) -> BTreeSet<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .filter(|word| {
                word.starts_with("ncfilters_") && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
            .map(str::to_string)
            .collect()
    }

    /// The text from the line holding `start` to the next blank line.
    fn paragraph_from<'a>(text: &'a str, start: &str) -> &'a str {
        let begin = text.find(start).unwrap_or_else(|| panic!("no `{start}`"));
        let rest = &text[begin..];
        &rest[..rest.find("\n\n").unwrap_or(rest.len())]
    }

    /// Every option a user sets (`option(…)`, `set(… CACHE …)`, the cargo it finds) is in the
    /// module's header comment, and the comment names no other.
    #[test]
    fn the_module_header_lists_every_option() {
        let module = read("cmake/ncfilters.cmake");
        let mut options = BTreeSet::new();
        for line in module.lines().map(str::trim_start) {
            let name = |rest: &str| rest.split([' ', ')']).next().unwrap_or_default().to_string();
            if let Some(rest) = line.strip_prefix("option(NCFILTERS_") {
                options.insert(format!("NCFILTERS_{}", name(rest)));
            } else if let Some(rest) = line.strip_prefix("set(NCFILTERS_").filter(|rest| rest.contains(" CACHE ")) {
                options.insert(format!("NCFILTERS_{}", name(rest)));
            } else if line.starts_with("find_program(NCFILTERS_CARGO ") {
                options.insert("NCFILTERS_CARGO".to_string());
            }
        }
        let header: BTreeSet<String> = module
            .lines()
            .take_while(|line| line.starts_with('#') || line.is_empty())
            .filter_map(|line| line.strip_prefix("#   NCFILTERS_"))
            .map(|rest| format!("NCFILTERS_{}", rest.split(' ').next().unwrap_or_default()))
            .collect();
        assert!(options.len() >= 10, "{options:?}");
        assert_eq!(header, options, "the header comment of cmake/ncfilters.cmake against its options");
    }

    /// docs/testing.md names every subcommand `cargo xtask --help` lists.
    #[test]
    fn testing_md_names_every_subcommand() {
        use clap::CommandFactory;
        let testing = read("docs/testing.md");
        // The list of them, not merely somewhere in the page (`macos` was named elsewhere only).
        let list = paragraph_from(&testing, "Each build step is a subcommand too");
        let missing: Vec<String> = crate::Cli::command()
            .get_subcommands()
            .filter(|command| !command.is_hide_set())
            .map(|command| command.get_name().to_string())
            .filter(|name| name != "test" && !list.contains(&format!("`{name}`")))
            .collect();
        assert!(missing.is_empty(), "docs/testing.md's list of subcommands lacks: {missing:?}");
    }

    /// What packaging.md says `ncfilters.h` declares and libnetcdf adds is what they do.
    #[test]
    fn packaging_md_names_the_header_s_functions_and_the_added_symbols() {
        let header: BTreeSet<String> = read("include/ncfilters.h")
            .lines()
            .filter(|line| !line.starts_with([' ', '*', '/', '#']))
            .filter_map(|line| line.split('(').next()?.split([' ', '*']).next_back())
            .filter(|name| name.starts_with("ncfilters_"))
            .map(str::to_string)
            .collect();
        let packaging = read("docs/packaging.md");
        let declared = paragraph_from(&packaging, "- `include/ncfilters.h`, which declares");
        assert_eq!(quoted_ncfilters_names(declared), header, "{declared}");
        let count = ["one", "two", "three", "four", "five", "six"][header.len() - 1];
        assert!(declared.contains(&format!("declares {count} functions")), "{declared}");

        let mut exported = BTreeSet::new();
        for file in std::fs::read_dir(repo().join("src/abi")).unwrap().flatten() {
            let text = std::fs::read_to_string(file.path()).unwrap();
            for piece in text.split("extern \"C\" fn ").skip(1) {
                let name: String = piece.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if name.starts_with("ncfilters_") {
                    exported.insert(name);
                }
            }
        }
        let added = paragraph_from(&packaging, "libnetcdf exports every symbol stock exports");
        assert_eq!(quoted_ncfilters_names(added), exported, "{added}");
        // The symbols besides ncfilters' own that `matrix` allows (xtask/src/matrix.rs), named too.
        let matrix = read("xtask/src/matrix.rs");
        let list = &matrix[matrix.find("const DECLARED_BUT_UNDEFINED").expect("matrix.rs lists them")..];
        let list = &list[list.find("= [").unwrap()..list.find("];").unwrap()];
        let declared: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
        assert!(!declared.is_empty(), "{list}");
        for name in declared {
            assert!(added.contains(&format!("`{name}`")), "packaging.md does not name {name}: {added}");
        }
    }

    /// The backquoted words of `text` that are `cargo xtask` subcommands, each once, in the order
    /// they first appear.
    fn step_names_in(text: &str) -> Vec<String> {
        use clap::CommandFactory;
        let steps: BTreeSet<String> =
            crate::Cli::command().get_subcommands().map(|command| command.get_name().to_string()).collect();
        let mut named: Vec<String> = Vec::new();
        for word in text.split('`').skip(1).step_by(2) {
            if steps.contains(word) && !named.iter().any(|n| n == word) {
                named.push(word.to_string());
            }
        }
        named
    }

    /// docs/testing.md's "It runs, in this order" list names the steps of `test` in the order
    /// `run_all_tests` runs them (`planned_stages`), and then the slow checks' kinds, which run in
    /// `SLOW_CHECKS`' order, in any order.
    #[test]
    fn testing_md_lists_the_steps_of_test_in_their_order() {
        use crate::slow_checks::SLOW_CHECKS;
        let testing = read("docs/testing.md");
        let begin = testing.find("It runs, in this order").expect("testing.md has the list");
        let list = &testing[begin..];
        let list = &list[..list.find("\n\n").unwrap_or(list.len())];
        let kind = |stage: &str| stage.split(' ').next().unwrap_or_default().to_string();
        let slow: BTreeSet<String> = SLOW_CHECKS.iter().map(|check| kind(&check.name())).collect();
        let releases: Vec<_> = crate::release::RELEASES.iter().collect();
        let checks: Vec<_> = SLOW_CHECKS.iter().collect();
        let mut kinds: Vec<String> = Vec::new();
        for stage in crate::planned_stages(&releases, &checks) {
            let stage = kind(&stage);
            if !kinds.contains(&stage) {
                kinds.push(stage);
            }
        }
        let ordered: Vec<String> = kinds.iter().filter(|k| !slow.contains(*k)).cloned().collect();
        assert_eq!(kinds[..ordered.len()], ordered[..], "the slow checks run last");
        let named = step_names_in(list);
        assert!(named.len() >= ordered.len(), "testing.md's list names {named:?}");
        assert_eq!(named[..ordered.len()], ordered[..], "testing.md's list against run_all_tests' order");
        let named_slow: BTreeSet<String> = named[ordered.len()..].iter().cloned().collect();
        assert_eq!(named_slow, slow, "testing.md's list of the slow checks, after the other steps");
    }

    /// docs/testing.md names the steps that build both serial netcdf-c trees first, as main.rs does.
    #[test]
    fn testing_md_names_the_steps_that_build_netcdf_first() {
        use clap::{CommandFactory, Parser};
        let testing = read("docs/testing.md");
        let sentence = paragraph_from(&testing, "Run alone, `abi`");
        let sentence = &sentence[..sentence.find("first").expect("the sentence says `first`")];
        let named: BTreeSet<String> = step_names_in(sentence).into_iter().collect();
        let mut building = BTreeSet::new();
        for command in crate::Cli::command().get_subcommands() {
            let name = command.get_name().to_string();
            let cli = crate::Cli::try_parse_from(["cargo xtask", &name])
                .or_else(|_| crate::Cli::try_parse_from(["cargo xtask", &name, "a.log"]))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            if cli.step.needs_netcdf_builds() {
                building.insert(name);
            }
        }
        assert!(building.contains("abi"), "{building:?}");
        assert_eq!(named, building, "testing.md against Step::needs_netcdf_builds: {sentence}");
    }

    /// Days since 1970 as a UTC date, `YYYY-MM-DD` (Howard Hinnant's `civil_from_days`).
    fn date_of(days: u64) -> String {
        let z = days as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!("{year:04}-{month:02}-{day:02}")
    }

    /// The replayed CI day of docs/testing.md is the date it says, and runs the releases and the
    /// slow check it says (`rotation`).
    #[test]
    fn testing_md_s_replayed_ci_day_is_what_the_rotation_runs() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(20_811), "2026-12-24");
        let testing = read("docs/testing.md");
        let example = paragraph_from(&testing, "`NCFILTERS_CI_DAY=<days since 1970>`").replace('\n', " ");
        let marker = "NCFILTERS_CI_DAY=";
        let at = example
            .match_indices(marker)
            .map(|(at, _)| at + marker.len())
            .find(|&at| example[at..].starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or_else(|| panic!("no day number in {example}"));
        let rest = &example[at..];
        let day_text: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let day: u64 = day_text.parse().unwrap();
        let rest = &rest[rest.find(" for ").expect("`for <date>`") + " for ".len()..];
        let date = &rest[..10];
        assert_eq!(date, date_of(day), "{example}");
        assert!(example.contains(&format!("date -u -d {date} ")), "{example}");
        let rest = &rest[rest.find("(releases ").expect("`(releases …`") + "(releases ".len()..];
        let (releases, rest) = rest.split_at(rest.find(", and `").expect("the releases, then `, and` the check"));
        let named: Vec<&str> = releases.split([',', ' ']).filter(|w| !w.is_empty() && *w != "and").collect();
        let expected: Vec<&str> = crate::rotation::releases_on(day).iter().map(|release| release.version).collect();
        assert_eq!(named, expected, "{example}");
        let check = &rest[", and `".len()..];
        let check = &check[..check.find('`').unwrap()];
        assert_eq!(check, crate::rotation::slow_check_on(day).name(), "{example}");
    }

    /// docs/testing.md's counts for each release are the release table's: the ctest tests of the
    /// serial builds, those the parallel build passes of all it runs, and the `valgrind` tests.
    #[test]
    fn testing_md_s_test_counts_are_the_release_table_s() {
        let testing = read("docs/testing.md");
        let counts = paragraph_from(&testing, "The test counts each build must pass:").replace('\n', " ");
        let (serial, parallel) = counts.split_at(counts.find("the parallel builds").expect("the parallel counts"));
        let valgrind = paragraph_from(&testing, "All of a release's ctest tests reach the library").replace('\n', " ");
        for release in &crate::release::RELEASES {
            let version = release.version;
            let serial_count = format!(" {} ({version})", release.ctest_expected);
            assert!(serial.contains(&serial_count), "no `{serial_count}` in {serial}");
            let failing = release.parallel_stock_failures.iter().filter(|failure| failure.on_ncfilters).count();
            let passed = release.parallel_ctest_expected;
            let parallel_count = match failing {
                0 => format!(" {passed} ({version})"),
                _ => format!(" {passed} of {} ({version})", passed + failing),
            };
            assert!(parallel.contains(&parallel_count), "no `{parallel_count}` in {parallel}");
            assert!(failing > 0 || !parallel.contains(&format!(" of {passed} ({version})")), "{version}: {parallel}");
            let tests = crate::valgrind::VALGRIND_TESTS.len() + release.valgrind_tests.len();
            assert!(valgrind.contains(&format!(" {tests} for {version}")), "no `{tests} for {version}` in {valgrind}");
        }
    }

    /// docs/testing.md names every kind of slow check of the rotation.
    #[test]
    fn testing_md_names_every_kind_of_slow_check() {
        let testing = read("docs/testing.md");
        let bullet = paragraph_from(&testing, "- slow checks: one a run").replace('\n', " ");
        let named: BTreeSet<&str> = bullet.split('`').skip(1).step_by(2).collect();
        for check in &crate::slow_checks::SLOW_CHECKS {
            let name = check.name();
            let kind = name.split(' ').next().unwrap_or_default();
            assert!(named.contains(kind), "docs/testing.md's slow checks do not name `{kind}` ({name})");
        }
    }

    /// The README's run-time settings are the `ncfilters` command's (and so its man page's)
    /// environment variables.
    #[test]
    fn the_readme_s_run_time_settings_are_the_man_page_s_environment() {
        let readme = read("README.md");
        let table = paragraph_from(&readme, "| variable | effect |");
        let in_readme: BTreeSet<&str> =
            table.lines().filter_map(|row| row.strip_prefix("| `")?.split('`').next()).collect();
        let after_help = ncfilters_cli::command(None).get_after_help().expect("the closing text").to_string();
        let environment = &after_help[after_help.find("\nEnvironment:\n").expect("an Environment block")..];
        let in_man_page: BTreeSet<String> = environment
            .lines()
            .skip(2)
            .filter_map(|line| line.strip_prefix("  ").filter(|term| !term.starts_with(' ')))
            .map(|term| term.split(' ').next().unwrap_or_default().to_string())
            .collect();
        assert!(in_readme.len() >= 6, "{in_readme:?}");
        assert_eq!(in_readme, in_man_page.iter().map(String::as_str).collect(), "README.md against ncfilters' help");
    }

    /// packaging.md names the development tools the release tarball's workspace leaves out.
    #[test]
    fn packaging_md_names_the_tools_the_tarball_s_workspace_leaves_out() {
        let packaging = read("docs/packaging.md");
        let start = "Its workspace leaves out the development tools (";
        let text = &packaging[packaging.find(start).expect("packaging.md says what it leaves out") + start.len()..];
        // The names, up to the `:` that says where the code has them.
        let text = &text[..text.find([':', ')']).unwrap()];
        let named: BTreeSet<&str> = text.split('`').skip(1).step_by(2).collect();
        let expected: BTreeSet<&str> = crate::licences::DEV_ONLY_MEMBERS.into_iter().collect();
        assert_eq!(named, expected, "{text}");
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters' own Rust sources read with syn, for the tests that check them: the C exports
//! (`src/abi/null_arguments.rs`'s NULL policy and panic boundary), the layer order a `lib.rs`
//! declares and the crate paths each file uses (`tests/layers.rs`, xtask's module graph).
//! One parser for all of them, so that none of them reads Rust by splitting text.
#![forbid(unsafe_code)]

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A file's syntax tree; panics (these are tests) naming the file when it cannot be read or parsed.
pub fn parse_file(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

/// Every `.rs` file under `dir`, recursively, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, &mut found);
    found.sort();
    found
}

/// A module a `lib.rs` (or `mod.rs`) declares, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredModule {
    pub name: String,
    /// The `reason` of its `#[expect(unsafe_code, reason = "…")]`, when it has one.
    pub unsafe_reason: Option<String>,
    /// Whether an `allow(unsafe_code)` (which states no reason) is on it.
    pub allows_unsafe_without_reason: bool,
}

/// The modules `file` declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), in order.
pub fn declared_modules(file: &Path) -> Vec<DeclaredModule> {
    parse_file(file)
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(module) if module.content.is_none() => Some(DeclaredModule {
                name: module.ident.to_string(),
                unsafe_reason: module.attrs.iter().find_map(expected_unsafe_reason),
                allows_unsafe_without_reason: module.attrs.iter().any(allows_unsafe_code),
            }),
            _ => None,
        })
        .collect()
}

/// The reason of `#[expect(unsafe_code, reason = "…")]`, or of the same inside `cfg_attr`.
fn expected_unsafe_reason(attribute: &syn::Attribute) -> Option<String> {
    let list = attribute.meta.require_list().ok()?;
    let lint_list = if attribute.path().is_ident("cfg_attr") {
        let inner: syn::punctuated::Punctuated<syn::Meta, syn::Token![,]> =
            list.parse_args_with(syn::punctuated::Punctuated::parse_terminated).ok()?;
        inner.into_iter().find_map(|meta| match meta {
            syn::Meta::List(lints) if lints.path.is_ident("expect") => Some(lints),
            _ => None,
        })?
    } else if attribute.path().is_ident("expect") {
        list.clone()
    } else {
        return None;
    };
    let arguments: syn::punctuated::Punctuated<syn::Meta, syn::Token![,]> =
        lint_list.parse_args_with(syn::punctuated::Punctuated::parse_terminated).ok()?;
    if !arguments.iter().any(|meta| meta.path().is_ident("unsafe_code")) {
        return None;
    }
    arguments.iter().find_map(|meta| match meta {
        syn::Meta::NameValue(pair) if pair.path.is_ident("reason") => match &pair.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }) => Some(text.value()),
            _ => None,
        },
        _ => None,
    })
}

fn allows_unsafe_code(attribute: &syn::Attribute) -> bool {
    attribute.path().is_ident("allow")
        && attribute.meta.require_list().is_ok_and(|list| list.tokens.to_string().contains("unsafe_code"))
}

/// A `#[no_mangle]` function of ncfilters' sources: an entry point of the C ABI.
#[derive(Debug, Clone)]
pub struct Export {
    pub name: String,
    pub file: PathBuf,
    /// The names of its arguments of pointer type, in order.
    pub pointer_arguments: Vec<String>,
    /// The macros its body invokes, each with the first word of its input (`ffi_export!(caught …)`
    /// gives `("ffi_export", Some("caught"))`).
    pub macros: Vec<(String, Option<String>)>,
    /// Whether its body calls anything (a function, a method, a macro).
    pub calls_anything: bool,
    /// The `cfg(…)` conditions on it and on the modules around it (`ncf_plugin_path_release`):
    /// empty when every build has it.
    pub cfgs: Vec<String>,
}

impl Export {
    /// Whether its body invokes `name!` (with `first_word` first when given).
    pub fn invokes(&self, name: &str, first_word: Option<&str>) -> bool {
        self.macros.iter().any(|(macro_name, word)| {
            macro_name == name && first_word.is_none_or(|wanted| word.as_deref() == Some(wanted))
        })
    }
}

/// Every `#[no_mangle]` (or `#[unsafe(no_mangle)]`) function of the `.rs` files under `dir`, at
/// any depth of modules, in file order.
pub fn exports(dir: &Path) -> Vec<Export> {
    let mut found = Vec::new();
    for file in rust_files(dir) {
        let syntax = parse_file(&file);
        let mut collector = ExportCollector { file: &file, found: &mut found, cfgs: Vec::new() };
        collector.visit_file(&syntax);
    }
    found
}

struct ExportCollector<'a> {
    file: &'a Path,
    found: &'a mut Vec<Export>,
    /// The `cfg` conditions of the modules being visited.
    cfgs: Vec<String>,
}

/// The conditions of an item's `#[cfg(…)]` attributes, as text.
fn cfg_conditions(attributes: &[syn::Attribute]) -> Vec<String> {
    attributes
        .iter()
        .filter(|attribute| attribute.path().is_ident("cfg"))
        .filter_map(|attribute| attribute.meta.require_list().ok().map(|list| list.tokens.to_string()))
        .collect()
}

impl<'ast> Visit<'ast> for ExportCollector<'_> {
    /// The exports a `macro_rules!` writes (a plugin library's entry points): each arm's expansion
    /// read as items, its metavariables as plain names.
    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        if item.mac.path.is_ident("macro_rules") {
            for expansion in arm_expansions(item.mac.tokens.clone()) {
                if let Ok(items) = syn::parse2::<syn::File>(without_metavariables(expansion)) {
                    self.visit_file(&items);
                }
            }
        }
        syn::visit::visit_item_macro(self, item);
    }

    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        let depth = self.cfgs.len();
        self.cfgs.extend(cfg_conditions(&module.attrs));
        syn::visit::visit_item_mod(self, module);
        self.cfgs.truncate(depth);
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        if function.attrs.iter().any(is_no_mangle) {
            let mut body = BodyCollector::default();
            body.visit_block(&function.block);
            self.found.push(Export {
                name: function.sig.ident.to_string(),
                file: self.file.to_path_buf(),
                pointer_arguments: pointer_arguments(&function.sig),
                calls_anything: body.calls || !body.macros.is_empty(),
                macros: body.macros,
                cfgs: [self.cfgs.clone(), cfg_conditions(&function.attrs)].concat(),
            });
        }
        syn::visit::visit_item_fn(self, function);
    }
}

/// The expansions of a `macro_rules!`'s arms: the group after each `=>`.
fn arm_expansions(rules: TokenStream) -> Vec<TokenStream> {
    let tokens: Vec<TokenTree> = rules.into_iter().collect();
    tokens
        .windows(3)
        .filter_map(|window| match window {
            [TokenTree::Punct(equals), TokenTree::Punct(greater), TokenTree::Group(expansion)]
                if equals.as_char() == '=' && greater.as_char() == '>' =>
            {
                Some(expansion.stream())
            }
            _ => None,
        })
        .collect()
}

/// A macro expansion as plain Rust: `$name` becomes `name` (`$crate` `crate`), and a repetition
/// `$( … )sep?op` its contents once.
fn without_metavariables(tokens: TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match (&tokens[i], tokens.get(i + 1)) {
            (TokenTree::Punct(dollar), Some(TokenTree::Ident(name))) if dollar.as_char() == '$' => {
                out.push(TokenTree::Ident(name.clone()));
                i += 2;
            }
            (TokenTree::Punct(dollar), Some(TokenTree::Group(repeated))) if dollar.as_char() == '$' => {
                out.extend(without_metavariables(repeated.stream()));
                i += 2;
                let is_operator =
                    |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if "?*+".contains(p.as_char()));
                if is_operator(tokens.get(i)) {
                    i += 1;
                } else if is_operator(tokens.get(i + 1)) {
                    i += 2;
                }
            }
            (TokenTree::Group(group), _) => {
                let mut copy = proc_macro2::Group::new(group.delimiter(), without_metavariables(group.stream()));
                copy.set_span(group.span());
                out.push(TokenTree::Group(copy));
                i += 1;
            }
            (token, _) => {
                out.push(token.clone());
                i += 1;
            }
        }
    }
    out.into_iter().collect()
}

fn is_no_mangle(attribute: &syn::Attribute) -> bool {
    attribute.path().is_ident("no_mangle")
        || (attribute.path().is_ident("unsafe")
            && attribute.meta.require_list().is_ok_and(|list| list.tokens.to_string() == "no_mangle"))
}

fn pointer_arguments(signature: &syn::Signature) -> Vec<String> {
    signature
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(argument) if is_pointer(&argument.ty) => match argument.pat.as_ref() {
                syn::Pat::Ident(name) => Some(name.ident.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A raw pointer, or an `Option` of a function pointer (a nullable C callback).
fn is_pointer(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Ptr(_) => true,
        syn::Type::Path(path) => path.path.segments.last().is_some_and(|last| {
            last.ident == "Option"
                && matches!(&last.arguments, syn::PathArguments::AngleBracketed(arguments)
                    if arguments.args.iter().any(|a| matches!(a, syn::GenericArgument::Type(syn::Type::BareFn(_)))))
        }),
        _ => false,
    }
}

#[derive(Default)]
struct BodyCollector {
    macros: Vec<(String, Option<String>)>,
    calls: bool,
}

impl<'ast> Visit<'ast> for BodyCollector {
    fn visit_macro(&mut self, invocation: &'ast syn::Macro) {
        let name = invocation.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let first_word = invocation.tokens.clone().into_iter().next().and_then(|token| match token {
            TokenTree::Ident(word) => Some(word.to_string()),
            _ => None,
        });
        // A macro's input is tokens to syn; read it as expressions (after a leading form word,
        // `ffi_export!(caught name, || …)`) so that the macros and calls inside count too.
        let skip = usize::from(matches!(first_word.as_deref(), Some("named" | "caught")));
        let input: TokenStream = invocation.tokens.clone().into_iter().skip(skip).collect();
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(expressions) = syn::parse::Parser::parse2(parser, input) {
            expressions.iter().for_each(|expression| self.visit_expr(expression));
        }
        self.macros.push((name, first_word));
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        self.calls = true;
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.calls = true;
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// The paths a file names from one of `roots` (`crate`, `super`, a crate's name), as (root, the
/// segment after it): in `use` trees, grouped ones included (`use crate::{a, b::c}` names `a` and
/// `b`), in paths anywhere, and in macro bodies (`$crate::m` is `crate`'s). A root after `::`
/// (`a::super::b`) is not one. Comments are not tokens, and a string literal (a doc comment's
/// text among them) is a single token, so neither counts.
pub fn paths_from(file: &Path, roots: &[&str]) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    collect_paths(tokens_of(file), roots, &mut found);
    found
}

/// The calls in a file of a function named one of `names` (`guarded(…)`, `x::guarded(…)`, in
/// macro bodies too): each as `name`, once per call.
pub fn calls_of(file: &Path, names: &[&str]) -> Vec<String> {
    fn collect(tokens: TokenStream, names: &[&str], found: &mut Vec<String>) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match (token, tokens.get(i + 1)) {
                (TokenTree::Ident(name), Some(TokenTree::Group(arguments)))
                    if arguments.delimiter() == Delimiter::Parenthesis && names.iter().any(|n| name == n) =>
                {
                    found.push(name.to_string());
                }
                (TokenTree::Group(group), _) => collect(group.stream(), names, found),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    collect(tokens_of(file), names, &mut found);
    found
}

/// The functions of a file (in macro bodies too) whose own body calls a function named `name`
/// (`promise(…)`, `X::promise(…)`), each as (its name, whether it is declared `unsafe`). A call
/// in a function nested in another counts for the inner one only.
pub fn functions_calling(file: &Path, name: &str) -> Vec<(String, bool)> {
    fn calls(tokens: TokenStream, name: &str) -> bool {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match (&tokens[i], tokens.get(i + 1)) {
                (TokenTree::Ident(f), Some(TokenTree::Ident(_))) if f == "fn" => {
                    // A nested function: its body is its own.
                    i = body_of(&tokens, i).map_or(tokens.len(), |(end, _)| end + 1);
                    continue;
                }
                (TokenTree::Ident(called), Some(TokenTree::Group(arguments)))
                    if called == name && arguments.delimiter() == Delimiter::Parenthesis =>
                {
                    return true;
                }
                (TokenTree::Group(group), _) if calls(group.stream(), name) => return true,
                _ => {}
            }
            i += 1;
        }
        false
    }
    /// The index and tokens of the body of the function whose `fn` is at `at`.
    fn body_of(tokens: &[TokenTree], at: usize) -> Option<(usize, TokenStream)> {
        let mut depth = 0i32;
        for (i, token) in tokens.iter().enumerate().skip(at + 2) {
            match token {
                TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
                TokenTree::Punct(p) if p.as_char() == '>' && !is_arrow(tokens, i) => depth -= 1,
                TokenTree::Punct(p) if p.as_char() == ';' && depth == 0 => return None,
                TokenTree::Group(group) if group.delimiter() == Delimiter::Brace && depth == 0 => {
                    return Some((i, group.stream()));
                }
                _ => {}
            }
        }
        None
    }
    fn is_arrow(tokens: &[TokenTree], i: usize) -> bool {
        i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '-')
    }
    fn collect(tokens: TokenStream, name: &str, found: &mut Vec<(String, bool)>) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match (token, tokens.get(i + 1)) {
                (TokenTree::Ident(f), Some(TokenTree::Ident(function))) if f == "fn" => {
                    let Some((_, body)) = body_of(&tokens, i) else { continue };
                    let qualifiers = tokens[..i].iter().rev().take_while(|t| match t {
                        TokenTree::Ident(q) => ["unsafe", "extern", "const", "async"].iter().any(|w| q == w),
                        TokenTree::Literal(_) => true,
                        _ => false,
                    });
                    let is_unsafe = qualifiers.into_iter().any(|t| matches!(t, TokenTree::Ident(q) if q == "unsafe"));
                    if calls(body.clone(), name) {
                        found.push((function.to_string(), is_unsafe));
                    }
                }
                (TokenTree::Group(group), _) => collect(group.stream(), name, found),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    collect(tokens_of(file), name, &mut found);
    found
}

fn tokens_of(file: &Path) -> TokenStream {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    text.parse().unwrap_or_else(|e| panic!("cannot tokenize {}: {e:?}", file.display()))
}

fn collect_paths(tokens: TokenStream, roots: &[&str], found: &mut BTreeSet<(String, String)>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        if let TokenTree::Group(group) = token {
            collect_paths(group.stream(), roots, found);
        }
        let TokenTree::Ident(root) = token else { continue };
        let after_path = i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == ':');
        if !roots.iter().any(|r| root == r) || after_path || !is_path_separator(&tokens[i + 1..]) {
            continue;
        }
        let root = root.to_string();
        match tokens.get(i + 3) {
            Some(TokenTree::Ident(segment)) => {
                found.insert((root, segment.to_string()));
            }
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                found.extend(first_segments_of_group(group.stream()).into_iter().map(|s| (root.clone(), s)));
            }
            _ => {}
        }
    }
}

fn is_path_separator(tokens: &[TokenTree]) -> bool {
    matches!(tokens, [TokenTree::Punct(a), TokenTree::Punct(b), ..] if a.as_char() == ':' && b.as_char() == ':')
}

/// The first path segment of each comma-separated element of a `use` group: `a, b::c, d::{e}`
/// gives `a`, `b` and `d`.
fn first_segments_of_group(tokens: TokenStream) -> Vec<String> {
    let mut segments = Vec::new();
    let mut at_element_start = true;
    for token in tokens {
        match token {
            TokenTree::Punct(p) if p.as_char() == ',' => at_element_start = true,
            TokenTree::Ident(name) if at_element_start => {
                segments.push(name.to_string());
                at_element_start = false;
            }
            _ => at_element_start = false,
        }
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ncfilters-source-scan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn paths_are_read_from_use_groups_paths_and_macro_bodies_but_not_comments_or_strings() {
        let file = write(
            "paths.rs",
            r#"
            use crate::{a, b::c, d::{e, f}};
            use std::fmt;
            use ncfilters_core::plugin_path;
            // crate::commented
            /// crate::documented
            fn f() { crate::g::h(); let _ = "crate::quoted"; x::super::y(); guarded("x", || 1); }
            macro_rules! m { () => { $crate::i::j(); a::guarded(1) }; }
            fn k() { super::l::m(); let guarded = 1; }
            "#,
        );
        let segments =
            |roots: &[&str]| -> Vec<String> { paths_from(&file, roots).into_iter().map(|(_, s)| s).collect() };
        assert_eq!(segments(&["crate"]), ["a", "b", "d", "g", "i"]);
        assert_eq!(segments(&["super"]), ["l"]);
        assert_eq!(segments(&["ncfilters_core"]), ["plugin_path"]);
        assert_eq!(calls_of(&file, &["guarded"]), ["guarded", "guarded"]);
    }

    #[test]
    fn functions_calling_a_name_say_whether_they_are_unsafe() {
        let file = write(
            "promise.rs",
            r#"
            pub unsafe extern "C" fn export() -> c_int { let t = unsafe { T::promise() }; run(t) }
            fn helper<F: Fn() -> u8>(f: F) -> Vec<u8> { vec![promise()] }
            pub(crate) unsafe fn inner() { fn nested() { promise(); } let promise = 1; }
            fn declared_only();
            macro_rules! m { () => { pub extern "C" fn from_macro() { $crate::T::promise(); } }; }
            "#,
        );
        let found = functions_calling(&file, "promise");
        let expected = [("export", true), ("helper", false), ("nested", false), ("from_macro", false)];
        assert_eq!(found, expected.map(|(f, u)| (f.to_string(), u)));
    }

    #[test]
    fn exports_carry_their_pointer_arguments_and_boundary() {
        let dir = std::env::temp_dir().join(format!("ncfilters-source-scan-exports-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("inner")).unwrap();
        std::fs::write(
            dir.join("inner/a.rs"),
            r#"
            #[no_mangle]
            pub unsafe extern "C" fn nc_a(ncid: c_int, p: *mut c_int, cb: Option<unsafe extern "C" fn()>) -> c_int {
                ffi_export!(|| { reject_null!(p); Ok(()) })
            }
            #[cfg(feature_x)]
            mod m {
                #[unsafe(no_mangle)]
                pub extern "C" fn nc_b() -> c_int { ffi_export!(caught "x", || 1) }
            }
            pub extern "C" fn not_exported(q: *mut u8) {}
            #[no_mangle]
            pub extern "C" fn nc_constant() -> c_int { 1 }
            macro_rules! export {
                ($class:expr $(, $codec:expr)?) => {
                    #[no_mangle]
                    pub extern "C" fn nc_from_macro(x: *const u8) -> usize { $crate::ffi_export!(|| $class) }
                    $( #[no_mangle] pub extern "C" fn nc_repeated() -> usize { $codec } )?
                };
            }
            "#,
        )
        .unwrap();
        let exports = exports(&dir);
        let names: Vec<&str> = exports.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["nc_a", "nc_b", "nc_constant", "nc_from_macro", "nc_repeated"]);
        assert_eq!(exports[3].pointer_arguments, ["x"]);
        assert!(exports[3].invokes("ffi_export", None) && !exports[4].calls_anything);
        assert_eq!(exports[0].pointer_arguments, ["p", "cb"]);
        assert!(exports[0].invokes("ffi_export", None) && exports[0].invokes("reject_null", None));
        assert!(exports[1].invokes("ffi_export", Some("caught")) && !exports[0].invokes("ffi_export", Some("caught")));
        assert!(!exports[2].calls_anything);
        assert_eq!((exports[0].cfgs.len(), exports[1].cfgs.as_slice()), (0, &["feature_x".to_string()][..]));
    }

    #[test]
    fn declared_modules_keep_their_order_and_unsafe_reasons() {
        let file = write(
            "lib.rs",
            r#"
            pub mod low;
            #[expect(unsafe_code, reason = "C memory")]
            pub mod middle;
            #[cfg_attr(target_arch = "x86_64", expect(unsafe_code, reason = "intrinsics"))]
            mod simd;
            #[allow(unsafe_code)]
            pub(crate) mod high;
            mod inline { }
            "#,
        );
        let modules = declared_modules(&file);
        let names: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["low", "middle", "simd", "high"]);
        assert_eq!(modules[1].unsafe_reason.as_deref(), Some("C memory"));
        assert_eq!(modules[2].unsafe_reason.as_deref(), Some("intrinsics"));
        assert!(modules[3].allows_unsafe_without_reason && modules[3].unsafe_reason.is_none());
    }
}

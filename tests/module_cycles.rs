//! No import cycles among the top modules of any crate, nor among the
//! modules of the harness's larger folders: what docs/ARCHITECTURE.md
//! says, held true.
//!
//! A module uses another when one of its files names a path into it,
//! outside comments, strings and `#[cfg(test)]` modules: `crate::OTHER`,
//! `super::OTHER` from any depth (resolved from the file's place, inline
//! modules included), each branch of a grouped `crate::{a, b::c}`, and a
//! name another module re-exports (`crate::Context`, when `lib.rs` has
//! `pub use context::Context`), which uses the module that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace members' source folders.
fn crate_sources() -> Vec<PathBuf> {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).expect("read Cargo.toml");
    let start = manifest.find("members = [").expect("a members list");
    let list = &manifest[start + "members = [".len()..];
    let list = &list[..list.find(']').expect("the list's end")];
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root().join(m).join("src"))
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut next = vec![dir.to_path_buf()];
    while let Some(dir) = next.pop() {
        for entry in fs::read_dir(&dir).expect("read a source folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                next.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// A token of code: an identifier (keywords included) or one punctuation
/// character, `::` kept whole.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Punct(&'static str),
    Other,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` as tokens, without comments, string and character literals.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Token::Other);
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), else a lifetime.
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push(Token::Other);
            } else if at(i + 2) == '\'' {
                i += 3;
                out.push(Token::Other);
            } else {
                i += 1;
            }
        } else if is_ident(c) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // Raw strings: r"..", r#".."#, br"..".
            if matches!(word.as_str(), "r" | "br") && matches!(at(i), '"' | '#') {
                let mut hashes = 0;
                while at(i) == '#' {
                    hashes += 1;
                    i += 1;
                }
                if at(i) == '"' {
                    i += 1;
                    loop {
                        if i >= chars.len() {
                            break;
                        }
                        if chars[i] == '"' && (1..=hashes).all(|h| at(i + h) == '#') {
                            i += 1 + hashes;
                            break;
                        }
                        i += 1;
                    }
                    out.push(Token::Other);
                    continue;
                }
            }
            out.push(Token::Ident(word));
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::Punct("::"));
            i += 2;
        } else {
            out.push(match c {
                '{' => Token::Punct("{"),
                '}' => Token::Punct("}"),
                ',' => Token::Punct(","),
                ';' => Token::Punct(";"),
                '*' => Token::Punct("*"),
                '#' => Token::Punct("#"),
                '[' => Token::Punct("["),
                ']' => Token::Punct("]"),
                '(' => Token::Punct("("),
                ')' => Token::Punct(")"),
                c if c.is_whitespace() => {
                    i += 1;
                    continue;
                }
                _ => Token::Other,
            });
            i += 1;
        }
    }
    out
}

fn ident(tokens: &[Token], i: usize) -> Option<&str> {
    match tokens.get(i) {
        Some(Token::Ident(word)) => Some(word),
        _ => None,
    }
}

fn punct(tokens: &[Token], i: usize, p: &str) -> bool {
    matches!(tokens.get(i), Some(Token::Punct(q)) if *q == p)
}

/// The index just past the `}` that closes the `{` at `open`.
fn past_block(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct("{") => depth += 1,
            Token::Punct("}") => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// One path of a use tree or expression: its segments and the name it is
/// known by where it is imported (`as` included).
#[derive(Debug, Clone, PartialEq, Eq)]
struct NamedPath {
    segments: Vec<String>,
    name: Option<String>,
}

/// The paths of the tree starting at `i` (`a::b`, `a::{b, c::d as e}`),
/// each after `prefix`; and the index past the tree.
fn path_tree(tokens: &[Token], mut i: usize, prefix: &[String]) -> (Vec<NamedPath>, usize) {
    let mut segments = prefix.to_vec();
    loop {
        if let Some(word) = ident(tokens, i) {
            // `a::{self, b}`: `self` names `a`.
            if word == "self" && !segments.is_empty() {
                i += 1;
                let name = segments.last().cloned();
                return (vec![NamedPath { segments, name }], i);
            }
            segments.push(word.to_owned());
            i += 1;
            if punct(tokens, i, "::") {
                i += 1;
                continue;
            }
            let mut name = Some(word.to_owned());
            if ident(tokens, i) == Some("as") {
                name = ident(tokens, i + 1).map(str::to_owned);
                i += 2;
            }
            return (vec![NamedPath { segments, name }], i);
        }
        if punct(tokens, i, "{") {
            let mut paths = Vec::new();
            i += 1;
            while i < tokens.len() && !punct(tokens, i, "}") {
                let (more, next) = path_tree(tokens, i, &segments);
                paths.extend(more);
                i = next.max(i + 1);
                if punct(tokens, i, ",") {
                    i += 1;
                }
            }
            return (paths, i + 1);
        }
        // A glob or the path's end: the module it names.
        return (
            vec![NamedPath {
                segments,
                name: None,
            }],
            i,
        );
    }
}

/// What one file says: the paths it names from its module's ancestors
/// (`crate::`, `super::`) as absolute paths, and its `use` items: the
/// name each brings into a module, with the absolute path it stands for.
#[derive(Debug, Default)]
struct FileUses {
    named: Vec<Vec<String>>,
    imports: Vec<(Vec<String>, String, Vec<String>)>,
}

/// The module path of a file under `src` (`a/b.rs`, `a/b/mod.rs`: `[a, b]`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("a file of the crate");
    let mut path: Vec<String> = relative
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = path.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        path.push(stem.to_owned());
    }
    path
}

/// Whether `module` of the crate at `src` is a file or a folder of its own.
fn has_file(src: &Path, module: &[String]) -> bool {
    let dir = module.iter().fold(src.to_path_buf(), |d, s| d.join(s));
    dir.with_extension("rs").is_file() || dir.join("mod.rs").is_file()
}

/// The paths `text` (the file at `module` of the crate at `src`) names,
/// resolved from the crate's root.
fn uses_of(src: &Path, module: &[String], text: &str) -> FileUses {
    let tokens = tokens(text);
    let mut uses = FileUses::default();
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let here = || {
            let mut m = module.to_vec();
            m.extend(inline.iter().map(|(n, _)| n.clone()));
            m
        };
        // `#[cfg(test)]` on a module: skipped whole.
        if punct(&tokens, i, "#")
            && punct(&tokens, i + 1, "[")
            && ident(&tokens, i + 2) == Some("cfg")
            && punct(&tokens, i + 3, "(")
            && ident(&tokens, i + 4) == Some("test")
            && punct(&tokens, i + 5, ")")
            && punct(&tokens, i + 6, "]")
        {
            let mut j = i + 7;
            if ident(&tokens, j) == Some("pub") {
                j += 1;
            }
            if ident(&tokens, j) == Some("mod") && punct(&tokens, j + 2, "{") {
                i = past_block(&tokens, j + 2);
                continue;
            }
        }
        match &tokens[i] {
            Token::Punct("{") => depth += 1,
            Token::Punct("}") => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Token::Ident(word) if word == "mod" => {
                if let Some(name) = ident(&tokens, i + 1)
                    && punct(&tokens, i + 2, "{")
                {
                    inline.push((name.to_owned(), depth + 1));
                }
            }
            Token::Ident(word) if word == "use" => {
                let m = here();
                let (paths, next) = path_tree(&tokens, i + 1, &[]);
                for path in paths {
                    let Some(absolute) = absolute(src, &m, &path.segments, true) else {
                        continue;
                    };
                    if let Some(name) = path.name {
                        uses.imports.push((m.clone(), name, absolute.clone()));
                    }
                    uses.named.push(absolute);
                }
                i = next;
                continue;
            }
            Token::Ident(word)
                if matches!(word.as_str(), "crate" | "super")
                    && punct(&tokens, i + 1, "::")
                    && !(i > 0 && punct(&tokens, i - 1, "::")) =>
            {
                let m = here();
                let (paths, next) = path_tree(&tokens, i, &[]);
                for path in paths {
                    if let Some(absolute) = absolute(src, &m, &path.segments, false) {
                        uses.named.push(absolute);
                    }
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    uses
}

/// `segments`, named in `module`, from the crate's root: `crate::`,
/// `super::`, `self::`, and (in a `use`) a path from one of the module's
/// own submodules. `None` for another crate's path.
fn absolute(
    src: &Path,
    module: &[String],
    segments: &[String],
    in_use: bool,
) -> Option<Vec<String>> {
    let first = segments.first()?;
    let (mut base, mut rest) = match first.as_str() {
        "crate" => (Vec::new(), &segments[1..]),
        "self" => (module.to_vec(), &segments[1..]),
        "super" => (module.to_vec(), segments),
        _ if in_use => {
            let mut local = module.to_vec();
            local.push(first.clone());
            if !has_file(src, &local) {
                return None;
            }
            (module.to_vec(), segments)
        }
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The modules of `dir` (the folder of module `parent` in the crate at
/// `src`: its `NAME.rs` files and `NAME/` folders, not `lib.rs`, `main.rs`
/// or `mod.rs`) and, for each, the modules it uses.
fn graph(src: &Path, parent: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let dir = parent.iter().fold(src.to_path_buf(), |d, s| d.join(s));
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(&dir).expect("read a source folder") {
        let path = entry.expect("a directory entry").path();
        let Some(name) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            modules.entry(name).or_default().extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs")
            && !matches!(name.as_str(), "lib" | "main" | "mod")
        {
            modules.entry(name).or_default().push(path);
        }
    }
    // Every file of the crate but its binary's root: the names its modules
    // import, for re-exports.
    let mut named: BTreeMap<PathBuf, Vec<Vec<String>>> = BTreeMap::new();
    let mut imports: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    for file in rust_files(src) {
        if file == src.join("main.rs") {
            continue;
        }
        let text = fs::read_to_string(&file).expect("read a source file");
        let uses = uses_of(src, &module_of(src, &file), &text);
        for (module, name, target) in uses.imports {
            imports.insert((module, name), target);
        }
        named.insert(file, uses.named);
    }
    // The module of `dir` that `path` reaches, through re-exports too.
    let reached = |path: &[String]| -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        let mut next = vec![path.to_vec()];
        let mut seen = BTreeSet::new();
        while let Some(path) = next.pop() {
            if !seen.insert(path.clone()) {
                continue;
            }
            if path.len() > parent.len() && path.starts_with(parent) {
                let child = &path[parent.len()];
                if modules.contains_key(child) {
                    found.insert(child.clone());
                }
            }
            for k in 1..=path.len() {
                // A module of that name wins (`pub use run::run` re-exports
                // a function, not the module `run`).
                if k < path.len() && has_file(src, &path[..k]) {
                    continue;
                }
                let key = (path[..k - 1].to_vec(), path[k - 1].clone());
                if let Some(target) = imports.get(&key) {
                    let mut resolved = target.clone();
                    resolved.extend(path[k..].iter().cloned());
                    next.push(resolved);
                }
            }
        }
        found
    };
    modules
        .iter()
        .map(|(module, files)| {
            let mut uses = BTreeSet::new();
            for file in files {
                for path in named.get(file).into_iter().flatten() {
                    uses.extend(reached(path).into_iter().filter(|other| other != module));
                }
            }
            (module.clone(), uses)
        })
        .collect()
}

/// The modules that lie on a cycle of `graph`, in groups that reach one
/// another, and one cycle through each group.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<(BTreeSet<String>, Vec<String>)> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut next: Vec<&str> = graph
            .get(from)
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        while let Some(node) = next.pop() {
            if seen.insert(node.to_owned()) {
                next.extend(graph.get(node).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<String>> =
        graph.keys().map(|n| (n.as_str(), reach(n))).collect();
    let mut groups: Vec<(BTreeSet<String>, Vec<String>)> = Vec::new();
    for node in graph.keys() {
        if !reaches[node.as_str()].contains(node) || groups.iter().any(|(g, _)| g.contains(node)) {
            continue;
        }
        let group: BTreeSet<String> = reaches[node.as_str()]
            .iter()
            .filter(|other| reaches[other.as_str()].contains(node))
            .cloned()
            .collect();
        groups.push((group, a_cycle_from(graph, node)));
    }
    groups
}

/// A shortest cycle through `start`.
fn a_cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut frontier = vec![start];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for node in frontier {
            for other in graph.get(node).into_iter().flatten() {
                if other == start {
                    let mut cycle = vec![start.to_owned()];
                    let mut at = node;
                    while at != start {
                        cycle.push(at.to_owned());
                        at = came_from[at];
                    }
                    cycle.push(start.to_owned());
                    cycle.reverse();
                    return cycle;
                }
                if !came_from.contains_key(other.as_str()) {
                    came_from.insert(other, node);
                    next.push(other.as_str());
                }
            }
        }
        frontier = next;
    }
    Vec::new()
}

/// The cycles of `graph`, for people: each group's modules and one cycle.
fn describe(groups: &[(BTreeSet<String>, Vec<String>)]) -> String {
    groups
        .iter()
        .map(|(group, cycle)| {
            format!(
                "{} modules ({}), e.g. {}",
                group.len(),
                group.iter().cloned().collect::<Vec<_>>().join(", "),
                cycle.join(" -> ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[test]
fn no_crate_has_an_import_cycle_among_its_top_modules() {
    let sources = crate_sources();
    assert!(sources.len() >= 10, "{sources:?}");
    let mut found = Vec::new();
    for src in sources {
        let groups = cycles(&graph(&src, &[]));
        if !groups.is_empty() {
            found.push(format!("{}:\n  {}", src.display(), describe(&groups)));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_harness_folders_have_no_import_cycle() {
    let src = root().join("src");
    let mut found = Vec::new();
    for folder in ["gherkin", "load", "replay", "testbed"] {
        let graph = graph(&src, &[folder.to_owned()]);
        assert!(graph.len() > 3, "{folder}: {graph:?}");
        let groups = cycles(&graph);
        if !groups.is_empty() {
            found.push(format!("src/{folder}:\n  {}", describe(&groups)));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// A temporary crate's `src`, with `files`.
fn a_crate(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().expect("a folder")).expect("create a folder");
        fs::write(path, text).expect("write");
    }
    dir
}

/// The one cycle of the crate at `dir`, if any.
fn the_cycle(dir: &Path) -> Option<Vec<String>> {
    let groups = cycles(&graph(dir, &[]));
    assert!(groups.len() <= 1, "{groups:?}");
    groups.into_iter().next().map(|(_, cycle)| cycle)
}

/// The check sees a cycle where there is one, and none in comments,
/// strings or tests.
#[test]
fn a_cycle_is_found() {
    let abc = || vec!["a".to_owned(), "b".into(), "c".into(), "a".into()];
    let dir = a_crate(&[
        ("lib.rs", "mod a; mod b; mod c;\n"),
        (
            "a.rs",
            "use crate::b::B;\n// crate::c in a comment only\nconst T: &str = \"crate::c\";\n",
        ),
        ("b.rs", "pub struct B;\nfn f() { crate::c::g() }\n"),
        (
            "c.rs",
            "pub fn g() {}\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
        ),
    ]);
    assert_eq!(the_cycle(dir.path()), None);
    fs::write(
        dir.path().join("c.rs"),
        "pub fn g() { let _ = crate::a::X; }\n",
    )
    .expect("write");
    assert_eq!(the_cycle(dir.path()), Some(abc()));

    // `super::` from a top file and from a file in a sub-folder, and a
    // grouped import.
    let dir = a_crate(&[
        ("lib.rs", "mod a; mod b; mod c;\n"),
        ("a.rs", "use super::b::B;\n"),
        ("b.rs", "use crate::{x, c::{self, g}};\n"),
        ("c/mod.rs", "mod inner;\n"),
        ("c/inner.rs", "fn h() { super::super::a::f() }\n"),
    ]);
    assert_eq!(the_cycle(dir.path()), Some(abc()));

    // A name re-exported by the crate's root, and `super::` in an inline
    // module, which names its own file's module.
    let dir = a_crate(&[
        ("lib.rs", "mod a; mod b; mod c;\npub use a::A;\n"),
        ("a.rs", "pub struct A;\nfn f() { crate::b::g() }\n"),
        ("b.rs", "pub fn g() { crate::c::h() }\n"),
        ("c.rs", "pub fn h() { let _ = crate::A; }\n"),
    ]);
    assert_eq!(the_cycle(dir.path()), Some(abc()));
    fs::write(
        dir.path().join("c.rs"),
        "mod imp { use super::A; }\npub fn h() {}\n",
    )
    .expect("write");
    assert_eq!(the_cycle(dir.path()), None);
}

//! No import cycles among the top modules of any crate, nor among the
//! modules of the harness's larger folders: what docs/ARCHITECTURE.md
//! says, held true. A module uses another when one of its files names
//! `crate::OTHER` (for the folders: `crate::FOLDER::OTHER`, or
//! `super::OTHER` from a file directly in the folder) outside comments and
//! its `#[cfg(test)] mod tests`.

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

/// A file's code without its comments and its test module.
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("read a source file");
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers that follow each `prefix` in `code`.
fn named_after<'a>(code: &'a str, prefix: &str) -> Vec<&'a str> {
    code.match_indices(prefix)
        .filter(|(at, _)| {
            // A whole path segment: not `mycrate::` for `crate::`.
            !code[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .map(|(at, _)| {
            let rest = &code[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// The modules of `dir` (its `NAME.rs` files and `NAME/` folders, not
/// `lib.rs`, `main.rs` or `mod.rs`) and, for each, the modules it uses.
fn graph(dir: &Path, prefix: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(dir).expect("read a source folder") {
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
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(module, files)| {
            let mut uses = BTreeSet::new();
            for file in files {
                let code = code_of(file);
                let mut named = named_after(&code, prefix);
                // `super::` from a file directly in the folder names a sibling.
                if prefix != "crate::" && file.parent() == Some(dir) {
                    named.extend(named_after(&code, "super::"));
                }
                uses.extend(
                    named
                        .into_iter()
                        .filter(|other| *other != module && names.contains(*other))
                        .map(str::to_owned),
                );
            }
            (module.clone(), uses)
        })
        .collect()
}

/// One cycle of `graph`, if it has any.
fn a_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_an_import_cycle_among_its_top_modules() {
    let sources = crate_sources();
    assert!(sources.len() >= 10, "{sources:?}");
    for src in sources {
        let graph = graph(&src, "crate::");
        if let Some(cycle) = a_cycle(&graph) {
            panic!("{}: {}", src.display(), cycle.join(" -> "));
        }
    }
}

#[test]
fn the_harness_folders_have_no_import_cycle() {
    for folder in ["gherkin", "load", "replay", "testbed"] {
        let dir = root().join("src").join(folder);
        let graph = graph(&dir, &format!("crate::{folder}::"));
        assert!(graph.len() > 3, "{folder}: {graph:?}");
        if let Some(cycle) = a_cycle(&graph) {
            panic!("src/{folder}: {}", cycle.join(" -> "));
        }
    }
}

/// The check sees a cycle where there is one.
#[test]
fn a_cycle_is_found() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let write = |name: &str, text: &str| fs::write(dir.path().join(name), text).expect("write");
    write("lib.rs", "mod a; mod b; mod c;\n");
    write("a.rs", "use crate::b::B;\n// crate::c in a comment only\n");
    write("b.rs", "pub struct B;\nfn f() { crate::c::g() }\n");
    write(
        "c.rs",
        "pub fn g() {}\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
    );
    assert_eq!(a_cycle(&graph(dir.path(), "crate::")), None);
    write("c.rs", "pub fn g() { let _ = crate::a::X; }\n");
    assert_eq!(
        a_cycle(&graph(dir.path(), "crate::")),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

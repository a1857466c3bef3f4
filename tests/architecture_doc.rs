//! docs/ARCHITECTURE.md names every crate of the workspace and every top
//! module of each crate, so a new crate or module cannot arrive without the
//! picture saying where it sits.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace members' paths, from the root manifest.
fn members() -> Vec<String> {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).expect("read Cargo.toml");
    let start = manifest.find("members = [").expect("a members list");
    let list = &manifest[start + "members = [".len()..];
    let list = &list[..list.find(']').expect("the list's end")];
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// A crate's package name, from its manifest.
fn package_name(dir: &Path) -> String {
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("read a member's Cargo.toml");
    let package = &manifest[manifest.find("[package]").expect("a [package] table")..];
    package
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "name").then(|| value.trim().trim_matches('"').to_owned())
        })
        .expect("a package name")
}

/// The crate's top modules: `src/NAME.rs` and `src/NAME/` (not the crate
/// roots).
fn top_modules(dir: &Path) -> Vec<String> {
    let mut modules: Vec<String> = fs::read_dir(dir.join("src"))
        .expect("read src/")
        .map(|e| e.expect("a directory entry").path())
        .filter_map(|p| {
            if p.is_dir() {
                return Some(p.file_name()?.to_str()?.to_owned());
            }
            let stem = p.file_stem()?.to_str()?;
            (p.extension()? == "rs" && !matches!(stem, "lib" | "main")).then(|| stem.to_owned())
        })
        .collect();
    modules.sort();
    modules
}

/// Whether the document names a module: `name`, `name.rs`, `name/` or a
/// path ending in one of them, in backticks or in a code block's tree.
fn names_module(doc: &str, module: &str) -> bool {
    [
        format!("`{module}`"),
        format!("{module}.rs"),
        format!("{module}/"),
        format!("::{module}"),
        format!("{module}::"),
    ]
    .iter()
    .any(|form| doc.contains(form.as_str()))
}

#[test]
fn architecture_names_every_crate_and_top_module() {
    let doc =
        fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("read ARCHITECTURE.md");
    let mut missing = Vec::new();
    for member in members() {
        let dir = root().join(&member);
        let name = package_name(&dir);
        if !doc.contains(&format!("`{name}`")) {
            missing.push(format!("crate `{name}` ({member}/)"));
        }
        for module in top_modules(&dir) {
            if !names_module(&doc, &module) {
                missing.push(format!("module `{module}` of `{name}` ({member}/src/)"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md does not name:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn the_check_sees_the_workspace() {
    // Guards the check itself: were the manifest parse to find nothing, the
    // test above would pass on any document.
    let members = members();
    assert!(members.len() >= 7, "members: {members:?}");
    assert!(top_modules(&root().join("core")).contains(&"calc".to_owned()));
    assert!(!names_module("`calculator`", "calc"));
    assert!(names_module("see `calc`", "calc"));
}

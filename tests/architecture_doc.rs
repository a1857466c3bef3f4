//! docs/ARCHITECTURE.md names every crate of the workspace and every top
//! module of each crate, and each crate's section names every module file
//! of that crate, so a new crate, module or file cannot arrive without the
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

/// Every module file of the crate below `src/` (not the crate roots), as
/// its path from `src/`: `queue.rs`, `metrics_client/shared.rs`; a
/// `mod.rs` stands for its folder (`metrics_client/`).
fn module_files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).expect("read a source folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .expect("below src/")
                .to_string_lossy()
                .replace('\\', "/");
            if matches!(rel.as_str(), "lib.rs" | "main.rs") || rel.starts_with("bin/") {
                continue;
            }
            out.push(match rel.strip_suffix("/mod.rs") {
                Some(folder) => format!("{folder}/"),
                None => rel,
            });
        }
    }
    let mut out = Vec::new();
    walk(&dir.join("src"), &dir.join("src"), &mut out);
    out.sort();
    out
}

/// The document's section of crate `name`: from its heading (`## ... (`name`)`)
/// to the next heading naming another crate so; `None` when it has none.
fn section<'a>(doc: &'a str, name: &str, crates: &[String]) -> Option<&'a str> {
    let heading = |line: &str, crate_name: &str| {
        line.starts_with("## ") && line.contains(&format!("(`{crate_name}`)"))
    };
    let mut offset = 0;
    let mut start = None;
    for line in doc.split_inclusive('\n') {
        if start.is_none() && heading(line, name) {
            start = Some(offset);
        } else if let Some(begin) = start
            && crates.iter().any(|c| c != name && heading(line, c))
        {
            return Some(&doc[begin..offset]);
        }
        offset += line.len();
    }
    start.map(|begin| &doc[begin..])
}

/// Whether `section` names the module file `file` (a path from `src/`): by
/// its file name (`shared.rs`) or, for a folder, `name/`.
fn names_file(section: &str, file: &str) -> bool {
    let last = file
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(file);
    if file.ends_with('/') {
        section.contains(&format!("{last}/"))
    } else {
        section.contains(last)
    }
}

/// Each crate with a section of its own in the document names every
/// module file of its `src/` there, so a file cannot arrive, nor a
/// section drift from the code, without the test seeing it.
#[test]
fn each_crate_section_names_every_module_file() {
    let doc =
        fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("read ARCHITECTURE.md");
    let members = members();
    let names: Vec<String> = members
        .iter()
        .map(|m| package_name(&root().join(m)))
        .collect();
    let mut missing = Vec::new();
    let mut sections = 0;
    for (member, name) in members.iter().zip(&names) {
        let Some(text) = section(&doc, name, &names) else {
            continue;
        };
        sections += 1;
        for file in module_files(&root().join(member)) {
            if !names_file(text, &file) {
                let dir = if member == "." {
                    String::new()
                } else {
                    format!("{member}/")
                };
                missing.push(format!("`{name}`: {dir}src/{file}"));
            }
        }
    }
    assert!(sections >= 5, "only {sections} crate sections found");
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md's crate sections do not name:\n  {}",
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
    let files = module_files(&root().join("controller"));
    assert!(files.contains(&"metrics_client/".to_owned()), "{files:?}");
    assert!(files.contains(&"metrics_client/shared.rs".to_owned()));
    assert!(!files.contains(&"lib.rs".to_owned()));
    let crates = ["hpa-core".to_owned(), "hpa-sim".to_owned()];
    let doc = "## The core (`hpa-core`)\ncalc.rs\n## The sim (`hpa-sim`)\nstore.rs\n";
    assert_eq!(
        section(doc, "hpa-core", &crates),
        Some("## The core (`hpa-core`)\ncalc.rs\n")
    );
    assert!(names_file("calc.rs", "calc.rs") && !names_file("calc.rs", "store.rs"));
    assert!(names_file("selector/ parsing", "selector/"));
}

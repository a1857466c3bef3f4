//! docs/ARCHITECTURE.md names every crate of the workspace and every top
//! module of each crate, and each crate's section names every module file
//! of that crate by its path, so a new crate, module or file cannot arrive
//! without the picture saying where it sits. A path is named by itself
//! (`src/load/cleanup.rs`), by an ending no other file shares
//! (`steps/controller.rs`), or within the folder a code block's tree puts
//! it under: a file name described in one folder does not count for
//! another folder's file of the same name.

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

/// One mention of a file or folder in a section: its text (`shared.rs`,
/// `steps/controller.rs`, `selector/`), the folders it is read in, nearest
/// first (in a code block's tree: the folder entry it sits under, then the
/// one above, up to `src/` itself: `""`), and whether it is a path from
/// `src/` (`src/testbed/cleanup.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mention {
    folders: Vec<String>,
    text: String,
    from_src: bool,
}

/// The file and folder mentions of `section`, a section of the crate at
/// `member`. In a code block's tree a line's folder is the folder entry
/// (`name/`) above it at a smaller indentation, and `name/:` within an
/// entry opens a folder for the words after it, until the next such.
fn mentions(section: &str, member: &str) -> Vec<Mention> {
    let is_path_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-');
    let mut out = Vec::new();
    let mut in_block = false;
    // The tree entries above the current line: (indentation, the entry's
    // folder, the sub-folder open in it).
    let mut entries: Vec<(usize, String, String)> = Vec::new();
    for line in section.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            entries.clear();
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        // The folder of the line's first word, and of the words after it.
        let (mut parent, mut folder) = (String::new(), String::new());
        if in_block && !line.trim().is_empty() {
            while entries.last().is_some_and(|(at, _, _)| *at >= indent) {
                entries.pop();
            }
            parent = entries.last().map(|e| e.1.clone()).unwrap_or_default();
            folder = entries.last().map(|e| e.2.clone()).unwrap_or_default();
            let first = line.split_whitespace().next().unwrap_or_default();
            if first.ends_with('/') {
                folder = format!("{parent}{first}");
                entries.push((indent, folder.clone(), folder.clone()));
            }
        }
        let is_entry = in_block
            && line
                .split_whitespace()
                .next()
                .is_some_and(|w| w.ends_with('/'));
        let mut first_word = true;
        let mut at = 0;
        while at < line.len() {
            let Some(start) = line[at..].find(is_path_char).map(|n| at + n) else {
                break;
            };
            let end = line[start..]
                .find(|c: char| !is_path_char(c))
                .map_or(line.len(), |n| start + n);
            at = end;
            let word = line[start..end].trim_end_matches('.');
            let mut here = vec![folder.clone(), parent.clone(), String::new()];
            if first_word && start == indent && is_entry {
                here.remove(0);
            }
            here.dedup();
            first_word = false;
            if in_block && word.ends_with('/') && line[end..].starts_with(':') {
                // `name/:` opens that folder, within the entry's.
                if let Some(entry) = entries.last_mut() {
                    folder = if word.starts_with(&entry.1) {
                        word.to_owned()
                    } else {
                        format!("{}{word}", entry.1)
                    };
                    entry.2 = folder.clone();
                    here = vec![entry.1.clone(), String::new()];
                }
            }
            if !(word.ends_with(".rs") || word.ends_with('/')) {
                continue;
            }
            out.push(match word.rfind("src/") {
                Some(src) if src == 0 || word[..src] == format!("{member}/") => Mention {
                    folders: vec![String::new()],
                    text: word[src + "src/".len()..].to_owned(),
                    from_src: true,
                },
                Some(_) => continue,
                None => Mention {
                    folders: here,
                    text: word.to_owned(),
                    from_src: false,
                },
            });
        }
    }
    out
}

/// The module file (a path from `src/`, among `files`) that `mention`
/// names: in the nearest of its folders that has one, the path itself
/// from there, else the one file there whose path ends with it; `None`
/// when it names none, or several in that folder.
fn named_by<'a>(mention: &Mention, files: &'a [String]) -> Option<&'a String> {
    for folder in &mention.folders {
        let exact = format!("{folder}{}", mention.text);
        if let Some(file) = files.iter().find(|f| **f == exact) {
            return Some(file);
        }
        if mention.from_src {
            return None;
        }
        let suffix = format!("/{}", mention.text);
        let mut found = files
            .iter()
            .filter(|f| f.starts_with(folder.as_str()) && f.ends_with(&suffix));
        if let Some(file) = found.next() {
            return found.next().is_none().then_some(file);
        }
    }
    None
}

/// The module files of `files` that `section` (of the crate at `member`)
/// names.
fn named_files(section: &str, member: &str, files: &[String]) -> Vec<String> {
    mentions(section, member)
        .iter()
        .filter_map(|m| named_by(m, files))
        .cloned()
        .collect()
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
        let files = module_files(&root().join(member));
        let named = named_files(text, member, &files);
        for file in &files {
            if !named.contains(file) {
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
    let files: Vec<String> = [
        "calc.rs",
        "client.rs",
        "metrics_client/",
        "metrics_client/client.rs",
        "steps/controller.rs",
        "steps/time.rs",
        "world/time.rs",
        "testbed/controller.rs",
        "testbed/cleanup.rs",
        "load/cleanup.rs",
    ]
    .map(String::from)
    .to_vec();
    let named = |section: &str| {
        let mut named = named_files(section, ".", &files);
        named.sort();
        named.dedup();
        named
    };
    // A file name counts for one file only: the path itself, or a path
    // ending that no other file shares.
    assert_eq!(named("calc.rs, client.rs"), ["calc.rs", "client.rs"]);
    assert_eq!(named("controller.rs, cleanup.rs, time.rs"), [] as [&str; 0]);
    assert_eq!(
        named("`steps/controller.rs`, src/load/cleanup.rs"),
        ["load/cleanup.rs", "steps/controller.rs"]
    );
    assert_eq!(named("`core/src/calc.rs`"), [] as [&str; 0]);
    // In a code block's tree a name is read within the folder above it, and
    // `name/:` opens a folder within its entry's.
    let tree = "```text\n client.rs  the kube client\n metrics_client/  lists\n   client.rs  requests\n```\n";
    assert_eq!(
        named(tree),
        ["client.rs", "metrics_client/", "metrics_client/client.rs"]
    );
    let tree = "```text\n steps/  the steps: controller.rs\n testbed/  where: controller.rs, cleanup.rs\n```\n";
    assert_eq!(
        named(tree),
        [
            "steps/controller.rs",
            "testbed/cleanup.rs",
            "testbed/controller.rs"
        ]
    );
    let files = [
        "gherkin/steps/time.rs",
        "gherkin/world/time.rs",
        "gherkin/world/",
    ]
    .map(String::from);
    let tree = "```text\n gherkin/  steps/: time.rs; world/: the world,\n           time.rs\n```\n";
    assert_eq!(
        named_files(tree, ".", &files),
        [
            "gherkin/steps/time.rs",
            "gherkin/world/",
            "gherkin/world/time.rs"
        ]
    );
}

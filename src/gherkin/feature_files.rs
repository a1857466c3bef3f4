//! Loads feature files for a run: finds them under the paths given, parses
//! them, puts their doc strings right, expands examples, and hands them to
//! cucumber in one stream (one run, one JUnit report over every path).
//!
//! The `gherkin` crate keeps a doc string's media type (`"""yaml`) as its
//! first line and dedents by the lines' common indentation. The Gherkin
//! specification says the media type is not content, the opening
//! delimiter's indentation is what each line loses, and `\"\"\"` inside is a
//! literal `"""`. [`fix_doc_strings`] re-reads every doc string from the
//! source that way, so every step sees the content a Gherkin user wrote.

use std::path::{Path, PathBuf};
use std::{fmt, vec};

use cucumber::feature::Ext as _;
use cucumber::gherkin::{self, Feature, GherkinEnv, Step};
use futures::stream;

/// Why features could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file could not be read.
    #[error("{path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid Gherkin: `file:line:col: ...`.
    #[error("{path}:{line}:{col}: not valid Gherkin (expected {expected})")]
    Syntax {
        path: PathBuf,
        line: usize,
        col: usize,
        expected: String,
    },
    /// A scenario outline's examples do not expand.
    #[error("{path}: {reason}")]
    Examples { path: PathBuf, reason: String },
}

/// The `.feature` files under `paths` (a file as given; a folder searched
/// recursively), each folder's files in name order.
pub fn feature_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LoadError> {
    files_under(dir, &["feature"], out).map_err(|(path, source)| LoadError::Read { path, source })
}

/// The files under `dir` (recursively) whose extension is one of
/// `extensions` (any case), each folder's entries in name order. An error
/// names the folder that could not be read.
pub(crate) fn files_under(
    dir: &Path,
    extensions: &[&str],
    out: &mut Vec<PathBuf>,
) -> Result<(), (PathBuf, std::io::Error)> {
    let read = |source| (dir.to_path_buf(), source);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, extensions, out)?;
        } else if path
            .extension()
            .is_some_and(|e| extensions.iter().any(|x| e.eq_ignore_ascii_case(x)))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Parses one feature file, with doc strings as the Gherkin spec reads them
/// and scenario outlines expanded.
pub fn load_file(path: &Path) -> Result<Feature, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut feature = Feature::parse(&text, GherkinEnv::default())
        .map_err(|e| first_bad_line(path, &text).unwrap_or_else(|| syntax(path, &e)))?;
    feature.path = Some(path.to_path_buf());
    fix_doc_strings(&mut feature, &text);
    feature.expand_examples().map_err(|e| LoadError::Examples {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// The position of a parse error (the crate keeps it private but prints
/// `Error at LINE:COL: {expected}`).
fn syntax(path: &Path, e: &gherkin::ParseError) -> LoadError {
    let text = e.to_string();
    let rest = text.strip_prefix("Error at ").unwrap_or(&text);
    let (pos, expected) = rest.split_once(": ").unwrap_or((rest, ""));
    let (line, col) = pos.split_once(':').unwrap_or((pos, "0"));
    LoadError::Syntax {
        path: path.to_path_buf(),
        line: line.parse().unwrap_or(0),
        col: col.parse().unwrap_or(0),
        expected: expected.to_owned(),
    }
}

/// English step and block keywords (the crate's parser knows the others;
/// this check only explains what it refused).
const STEP_KEYWORDS: [&str; 6] = ["Given ", "When ", "Then ", "And ", "But ", "* "];
const BLOCK_KEYWORDS: [&str; 9] = [
    "Feature:",
    "Rule:",
    "Background:",
    "Scenario Outline:",
    "Scenario Template:",
    "Scenario:",
    "Example:",
    "Examples:",
    "Scenarios:",
];

/// The first line that breaks Gherkin's line structure, with its column:
/// free text after a step, a table row without its closing `|`, a doc
/// string never closed, text before `Feature:`. The crate's parser reports
/// where its grammar gave up, which is often lines later.
fn first_bad_line(path: &Path, text: &str) -> Option<LoadError> {
    let bad = |line: usize, col: usize, expected: &str| LoadError::Syntax {
        path: path.to_path_buf(),
        line,
        col,
        expected: expected.to_owned(),
    };
    let mut feature_seen = false;
    // Free text is a description right after a block keyword, until a step.
    let mut description = false;
    let mut doc: Option<(&str, usize, usize)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        let col = raw.chars().count() - raw.trim_start().chars().count() + 1;
        if let Some((delimiter, _, _)) = doc {
            if t.starts_with(delimiter) {
                doc = None;
            }
            continue;
        }
        if t.is_empty() || t.starts_with('#') || t.starts_with('@') {
            continue;
        }
        if BLOCK_KEYWORDS.iter().any(|k| t.starts_with(k)) {
            feature_seen |= t.starts_with("Feature:");
            if !feature_seen {
                return Some(bad(line, col, "Feature: first"));
            }
            description = true;
            continue;
        }
        if !feature_seen {
            return Some(bad(line, col, "Feature:"));
        }
        if STEP_KEYWORDS.iter().any(|k| t.starts_with(k)) {
            description = false;
            continue;
        }
        if t.starts_with('|') {
            if !t.ends_with('|') || t.len() < 2 {
                return Some(bad(
                    line,
                    raw.chars().count() + 1,
                    "| at the end of the table row",
                ));
            }
            continue;
        }
        if let Some(d) = ["\"\"\"", "```"].into_iter().find(|d| t.starts_with(d)) {
            doc = Some((d, line, col));
            continue;
        }
        if !description {
            return Some(bad(
                line,
                col,
                "a step (Given, When, Then, And, But), a table, a doc string, a tag, a comment or a keyword such as Scenario:",
            ));
        }
    }
    doc.map(|(d, line, col)| bad(line, col, &format!("a closing {d} for this doc string")))
}

/// Every feature of `files`.
pub fn load(files: &[PathBuf]) -> Result<Vec<Feature>, LoadError> {
    files.iter().map(|f| load_file(f)).collect()
}

/// Re-reads every step's doc string from `source` as the Gherkin spec says.
pub fn fix_doc_strings(feature: &mut Feature, source: &str) {
    let lines: Vec<&str> = source.lines().collect();
    let fix = |steps: &mut Vec<Step>| {
        for step in steps.iter_mut().filter(|s| s.docstring.is_some()) {
            if let Some(doc) = doc_string_after(&lines, step.position.line) {
                step.docstring = Some(doc.content);
            }
        }
    };
    if let Some(bg) = &mut feature.background {
        fix(&mut bg.steps);
    }
    for s in &mut feature.scenarios {
        fix(&mut s.steps);
    }
    for r in &mut feature.rules {
        if let Some(bg) = &mut r.background {
            fix(&mut bg.steps);
        }
        for s in &mut r.scenarios {
            fix(&mut s.steps);
        }
    }
}

/// A doc string as the Gherkin specification reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocString {
    /// The media type after the opening delimiter (`yaml`), if any.
    pub media_type: Option<String>,
    /// The content: each line less the opening delimiter's indentation,
    /// escaped delimiters undone, lines joined by `\n`, no final newline.
    pub content: String,
}

/// The doc string that follows the step on 1-based line `step_line`, if
/// one does (blank and comment lines may come between).
pub fn doc_string_after(lines: &[&str], step_line: usize) -> Option<DocString> {
    let mut rest = lines.iter().skip(step_line);
    let open = loop {
        let line = rest.next()?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        break *line;
    };
    let trimmed = open.trim_start();
    let indent = open.chars().count() - trimmed.chars().count();
    let delimiter = ["\"\"\"", "```"]
        .into_iter()
        .find(|d| trimmed.starts_with(d))?;
    let media = trimmed[delimiter.len()..].trim();
    let escaped = delimiter
        .chars()
        .map(|c| format!("\\{c}"))
        .collect::<String>();
    let mut content = Vec::new();
    for line in rest {
        if line.trim_start().starts_with(delimiter) {
            return Some(DocString {
                media_type: (!media.is_empty()).then(|| media.to_owned()),
                content: content.join("\n"),
            });
        }
        content.push(dedent(line, indent).replace(&escaped, delimiter));
    }
    None
}

/// `line` less up to `indent` leading whitespace characters (all of its
/// leading whitespace when it has less).
fn dedent(line: &str, indent: usize) -> &str {
    for (removed, (i, c)) in line.char_indices().enumerate() {
        if removed == indent || !c.is_whitespace() {
            return &line[i..];
        }
    }
    ""
}

/// The cucumber parser of a run: features already loaded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Loaded;

impl cucumber::Parser<Vec<Feature>> for Loaded {
    type Cli = cucumber::cli::Empty;
    type Output = stream::Iter<vec::IntoIter<cucumber::parser::Result<Feature>>>;

    fn parse(self, input: Vec<Feature>, _cli: Self::Cli) -> Self::Output {
        stream::iter(input.into_iter().map(Ok).collect::<Vec<_>>())
    }
}

/// What a selection found, for the message when it is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub files: usize,
    pub scenarios: usize,
    pub selected: usize,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} feature file{}, {} scenario{}, {} selected",
            self.files,
            s(self.files),
            self.scenarios,
            s(self.scenarios),
            self.selected
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> DocString {
        let lines: Vec<&str> = text.lines().collect();
        doc_string_after(&lines, 1).unwrap()
    }

    #[test]
    fn a_media_type_is_not_content_and_the_delimiter_indent_is_removed() {
        let d = doc("    Given the HPA:\n      \"\"\"yaml\n      a:\n        b: 1\n      \"\"\"\n");
        assert_eq!(d.media_type.as_deref(), Some("yaml"));
        assert_eq!(d.content, "a:\n  b: 1");
    }

    #[test]
    fn backticks_and_less_indented_lines_and_blank_lines() {
        let d = doc("  Given x:\n\n    ```yaml \n      a\n  b\n\n    ```\n");
        assert_eq!(d.media_type.as_deref(), Some("yaml"));
        assert_eq!(d.content, "  a\nb\n");
    }

    #[test]
    fn content_indented_more_than_the_delimiter_keeps_the_difference() {
        // Common-indentation dedent would strip everything; Gherkin keeps it.
        let d = doc("Given x:\n  \"\"\"\n      deep\n      deeper\n  \"\"\"\n");
        assert_eq!(d.content, "    deep\n    deeper");
        assert_eq!(d.media_type, None);
    }

    #[test]
    fn escaped_delimiters_are_literal() {
        let d = doc("Given x:\n  \"\"\"\n  say \\\"\\\"\\\" and ```\n  \"\"\"\n");
        assert_eq!(d.content, "say \"\"\" and ```");
        let d = doc("Given x:\n  ```\n  a \\`\\`\\` b\n  ```\n");
        assert_eq!(d.content, "a ``` b");
    }

    #[test]
    fn a_parsed_feature_gets_the_spec_content() {
        let text = "Feature: f\n  Scenario: s\n    Given the HPA:\n      \"\"\"yaml\n      kind: X\n      \"\"\"\n    # a comment\n    And the HPA \"web\" has behavior:\n      ```\n      scaleUp: {}\n      ```\n";
        let mut f = Feature::parse(text, GherkinEnv::default()).unwrap();
        assert_eq!(
            f.scenarios[0].steps[0].docstring.as_deref(),
            Some("yaml\n      kind: X\n"),
            "the gherkin crate's reading, which this module corrects"
        );
        fix_doc_strings(&mut f, text);
        let docs: Vec<_> = f.scenarios[0]
            .steps
            .iter()
            .map(|s| s.docstring.clone())
            .collect();
        assert_eq!(
            docs,
            [Some("kind: X".to_owned()), Some("scaleUp: {}".to_owned())]
        );
    }

    #[test]
    fn the_first_bad_line_is_named_with_its_column() {
        let at = |text: &str| match first_bad_line(Path::new("f.feature"), text) {
            Some(LoadError::Syntax { line, col, .. }) => Some((line, col)),
            _ => None,
        };
        let ok = "# c\n@tag\nFeature: x\n  about it\n  Scenario: y\n    a description\n    Given a:\n      | a | b |\n    And b:\n      \"\"\"yaml\n      free: text\n      \"\"\"\n";
        assert_eq!(at(ok), None);
        assert_eq!(
            at("Feature: x\n  Scenario: y\n    Given a\n  Oops what\n"),
            Some((4, 3))
        );
        assert_eq!(
            at("Feature: x\n  Scenario: y\n    Given a\n      | a | b\n"),
            Some((4, 14))
        );
        assert_eq!(
            at("Feature: x\n  Scenario: y\n    Given a\n      ```\n      x\n"),
            Some((4, 7))
        );
        assert_eq!(at("Feture: x\n  Scenario: y\n"), Some((1, 1)));
    }

    #[test]
    fn a_syntax_error_names_file_line_and_column() {
        let dir = std::env::temp_dir().join(format!("hpa-harness-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.feature");
        std::fs::write(
            &path,
            "Feature: f\n  Scenario: s\n    Given x\n  Oops what\n",
        )
        .unwrap();
        let err = load_file(&path).unwrap_err().to_string();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(err.starts_with(&format!("{}:4:", path.display())), "{err}");
    }
}

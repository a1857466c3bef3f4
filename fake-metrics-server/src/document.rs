//! Reading script documents, YAML or JSON, and the errors of reading and
//! checking them: one error type for the script, its rules and its patches,
//! so every part reports a field path the same way.

use serde::Deserialize;

/// Errors from reading or checking a script or a change.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The YAML did not parse or did not match the format.
    #[error("script YAML, line {line} column {column}: {message}")]
    Yaml {
        /// The parser's message.
        message: String,
        /// 1-based line, 0 when unknown.
        line: u64,
        /// 1-based column, 0 when unknown.
        column: u64,
    },
    /// The JSON did not parse or did not match the format.
    #[error("script JSON, line {line} column {column}: {message}")]
    Json {
        /// The parser's message.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The document parsed but a field is inconsistent with the rest.
    #[error("script field {field}: {message}")]
    Invalid {
        /// Path of the offending field, e.g. `pods[2].containers[0].name`.
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl ScriptError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Reads a YAML document into `T`, mapping errors to [`ScriptError::Yaml`].
pub fn from_yaml<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, ScriptError> {
    serde_saphyr::from_str_with_options(text, crate::limits::yaml_options()).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        ScriptError::Yaml {
            message: e.to_string(),
            line,
            column,
        }
    })
}

/// Reads a JSON document into `T`, mapping errors to [`ScriptError::Json`].
pub fn from_json<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, ScriptError> {
    serde_json::from_str(text).map_err(|e| ScriptError::Json {
        message: e.to_string(),
        line: e.line(),
        column: e.column(),
    })
}

/// Reads YAML or JSON: JSON when the content type says so or the text starts
/// with `{` or `[`, YAML otherwise (JSON errors then point at the right place).
pub fn from_body<T: for<'de> Deserialize<'de>>(
    text: &str,
    content_type: Option<&str>,
) -> Result<T, ScriptError> {
    let json_type = content_type.is_some_and(|c| c.contains("json"));
    let looks_json = matches!(text.trim_start().chars().next(), Some('{' | '['));
    if json_type || (content_type.is_none() && looks_json) {
        from_json(text)
    } else {
        from_yaml(text)
    }
}

/// Checks a name field: not empty, no `/`, no spaces.
pub(crate) fn check_name(field: &str, name: &str) -> Result<(), ScriptError> {
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
        return Err(ScriptError::invalid(
            field,
            format!("{name:?} is not a valid name (empty, or has '/' or spaces)"),
        ));
    }
    Ok(())
}

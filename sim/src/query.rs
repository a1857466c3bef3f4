//! Query parameters of list and watch, read the way the API server reads
//! them: a value that does not parse is a 400, never a panic or a silent
//! default.

use std::time::Duration;

use crate::error::ApiError;

/// The server-side cap of a watch's `timeoutSeconds`. The API server takes
/// any int64; a deadline past what a clock can hold is the same as none, so
/// a larger value is cut to this (a year) instead of overflowing an instant.
pub const MAX_WATCH_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// The watch timeout when the client names none (the API server picks
/// between 30 and 60 minutes; the sim the upper end).
pub const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

/// The query pairs of `uri`, percent-decoded.
pub fn pairs(uri: &http::Uri) -> Result<Vec<(String, String)>, ApiError> {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|q| q.0)
        .map_err(|e| ApiError::BadRequest(format!("bad query string: {e}")))
}

/// `timeoutSeconds`: an int64 as the API server reads it (400 otherwise);
/// zero or negative means the default, anything above a year a year.
pub fn watch_timeout(value: Option<&str>) -> Result<Duration, ApiError> {
    let Some(text) = value.filter(|t| !t.is_empty()) else {
        return Ok(DEFAULT_WATCH_TIMEOUT);
    };
    let secs: i64 = text.parse().map_err(|_| {
        ApiError::BadRequest(format!(
            "invalid timeoutSeconds {text:?}: must be a 64-bit integer"
        ))
    })?;
    Ok(match u64::try_from(secs) {
        Ok(0) | Err(_) => DEFAULT_WATCH_TIMEOUT,
        Ok(s) => Duration::from_secs(s).min(MAX_WATCH_TIMEOUT),
    })
}

/// `limit`: an int64 (400 otherwise); zero or negative means no limit.
pub fn limit(value: Option<&str>) -> Result<Option<usize>, ApiError> {
    let Some(text) = value.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let n: i64 = text
        .parse()
        .map_err(|_| ApiError::BadRequest(format!("invalid limit {text:?}: must be an integer")))?;
    Ok(usize::try_from(n).ok().filter(|n| *n > 0))
}

/// `resourceVersion` of a watch or list: empty, or an unsigned integer (the
/// sim's resourceVersions are a counter); anything else is a 400.
pub fn resource_version(value: Option<&str>) -> Result<Option<u64>, ApiError> {
    let Some(text) = value.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    text.parse()
        .map(Some)
        .map_err(|_| ApiError::BadRequest(format!("invalid resourceVersion {text:?}")))
}

/// The continue token of the next page after `ns/name`: hex of the key.
pub fn encode_continue(ns: &str, name: &str) -> String {
    format!("{ns}/{name}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The key a continue token stands for; any token the sim did not make is a
/// 400 (whatever its bytes: it is read byte-wise, never sliced as text).
pub fn decode_continue(token: &str) -> Result<(String, String), ApiError> {
    let bad = || ApiError::BadRequest(format!("continue key is not valid: {token:?}"));
    let hex = token.as_bytes();
    if !hex.len().is_multiple_of(2) {
        return Err(bad());
    }
    let digit = |b: u8| {
        char::from(b)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let bytes = hex
        .chunks_exact(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (ns, name) = text.split_once('/').ok_or_else(bad)?;
    Ok((ns.to_owned(), name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let t = encode_continue("default", "web-12");
        assert_eq!(
            decode_continue(&t).unwrap(),
            ("default".into(), "web-12".into())
        );
        assert!(decode_continue("zz").is_err());
    }

    #[test]
    fn a_continue_token_with_multibyte_text_is_a_bad_request_not_a_panic() {
        // `?continue=%E2%82%ACa`: four bytes, "€a"; slicing it two bytes at
        // a time as text panicked at a char boundary.
        let err = decode_continue("\u{20ac}a").unwrap_err();
        assert_eq!(err.code(), http::StatusCode::BAD_REQUEST);
        assert!(decode_continue("+1").is_err(), "a sign is not a hex digit");
    }

    #[test]
    fn a_watch_timeout_past_int64_is_a_bad_request_and_a_huge_one_is_capped() {
        let err = watch_timeout(Some("18446744073709551615")).unwrap_err();
        assert_eq!(err.code(), http::StatusCode::BAD_REQUEST);
        assert_eq!(
            watch_timeout(Some("9223372036854775807")).unwrap(),
            MAX_WATCH_TIMEOUT
        );
        assert_eq!(watch_timeout(Some("10")).unwrap(), Duration::from_secs(10));
        assert_eq!(watch_timeout(None).unwrap(), DEFAULT_WATCH_TIMEOUT);
        assert!(watch_timeout(Some("ten")).is_err());
    }

    #[test]
    fn limits_and_resource_versions_that_do_not_parse_are_bad_requests() {
        assert_eq!(limit(Some("5")).unwrap(), Some(5));
        assert_eq!(limit(Some("-1")).unwrap(), None);
        assert!(limit(Some("five")).is_err());
        assert_eq!(resource_version(Some("42")).unwrap(), Some(42));
        assert_eq!(resource_version(Some("")).unwrap(), None);
        assert!(resource_version(Some("-1")).is_err());
    }
}

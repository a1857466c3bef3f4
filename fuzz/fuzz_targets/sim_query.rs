//! The sim's query parameters (`continue`, `limit`, `timeoutSeconds`,
//! `resourceVersion`): any query string is an answer or a 400, never a
//! panic; continue tokens the sim makes decode to their key.
#![no_main]

use hpa_sim::query;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(uri) = format!("/api/v1/pods?{text}").parse::<http::Uri>()
        && let Ok(pairs) = query::pairs(&uri)
    {
        for (_, v) in &pairs {
            let v = Some(v.as_str());
            let _ = query::decode_continue(v.unwrap_or_default());
            let _ = query::limit(v);
            let _ = query::watch_timeout(v);
            let _ = query::resource_version(v);
        }
    }
    let _ = query::decode_continue(text);
    if let Some((ns, name)) = text.split_once('/') {
        let token = query::encode_continue(ns, name);
        let back = query::decode_continue(&token).expect("a token the sim made decodes");
        assert_eq!((back.0.as_str(), back.1.as_str()), (ns, name));
    }
});

//! The JSON twin of `sanitize`, for hosts that can only pass strings.
//!
//! Request: `{"input": "<text>"}` or `{"input_base64": "<base64>"}`, plus
//! `"options": {...}` with any subset of the `options` record (missing
//! fields take their defaults). Response: `{"Ok": <sanitized>}` or
//! `{"Err": <sanitize-error>}`. JSON names, enum cases and variant tags
//! alike are the WIT names with `-` replaced by `_` (`"format": "openai"`,
//! `"encoding": "cl100k_base"`, `{"Err": {"invalid_options": "..."}}`).

use base64::Engine;
use serde::Deserialize;
use serde_json::Value;

use crate::api::{Options, SanitizeError};
use crate::options::default_options;
use crate::pack::CompiledPack;

#[derive(Deserialize)]
struct Request {
    input: Option<String>,
    input_base64: Option<String>,
    #[serde(default)]
    options: Value,
}

/// Parses options given as a partial JSON object over the defaults.
pub fn options_from_json(v: &Value) -> Result<Options, SanitizeError> {
    let mut base = serde_json::to_value(default_options()).expect("options serialize");
    match v {
        Value::Null => {}
        Value::Object(m) => {
            let b = base.as_object_mut().expect("object");
            for (k, val) in m {
                if !b.contains_key(k) {
                    return Err(SanitizeError::InvalidOptions(format!("unknown option `{k}`")));
                }
                b.insert(k.clone(), val.clone());
            }
        }
        _ => return Err(SanitizeError::InvalidOptions("options must be an object".into())),
    }
    serde_json::from_value(base).map_err(|e| SanitizeError::InvalidOptions(format!("options: {e}")))
}

fn parse(request: &str) -> Result<(Vec<u8>, Options), SanitizeError> {
    let req: Request = serde_json::from_str(request)
        .map_err(|e| SanitizeError::InvalidInput(format!("request is not valid JSON of the expected shape: {e}")))?;
    let input = match (req.input, req.input_base64) {
        (Some(s), None) => s.into_bytes(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b.as_bytes())
            .map_err(|e| SanitizeError::InvalidInput(format!("input_base64: {e}")))?,
        (None, None) => Vec::new(),
        (Some(_), Some(_)) => {
            return Err(SanitizeError::InvalidInput("give either input or input_base64, not both".into()))
        }
    };
    Ok((input, options_from_json(&req.options)?))
}

/// Runs `sanitize` on a JSON request and returns the JSON response.
pub fn sanitize_json(request: &str, pack: &CompiledPack) -> String {
    let result = parse(request).and_then(|(input, opts)| crate::pipeline::sanitize(&input, &opts, pack));
    serde_json::to_string(&result).expect("result serializes")
}

/// The JSON twin of `effective-budget`.
pub fn effective_budget_json(options: &str, pack: &CompiledPack) -> String {
    let result = serde_json::from_str::<Value>(options)
        .map_err(|e| SanitizeError::InvalidOptions(format!("options are not JSON: {e}")))
        .and_then(|v| options_from_json(&v))
        .and_then(|o| crate::options::resolve(&o, &pack.rules));
    serde_json::to_string(&result).expect("result serializes")
}

#[derive(Deserialize)]
struct DrainRequest {
    gap: crate::api::Gap,
    #[serde(default)]
    data_base64: String,
    #[serde(default)]
    last: bool,
}

/// The JSON twin of `drain`.
pub fn drain_json(request: &str, pack: &CompiledPack) -> String {
    let result = serde_json::from_str::<DrainRequest>(request)
        .map_err(|e| SanitizeError::InvalidInput(format!("drain request is not valid JSON of the expected shape: {e}")))
        .and_then(|r| {
            let data = base64::engine::general_purpose::STANDARD
                .decode(r.data_base64.as_bytes())
                .map_err(|e| SanitizeError::InvalidInput(format!("data_base64: {e}")))?;
            crate::stages::byte_cap::drain::step(&r.gap, &data, r.last, pack)
        });
    serde_json::to_string(&result).expect("result serializes")
}

//! Declared output schemas: a tool that lists an `outputSchema` gets a
//! `structuredContent` that still validates against it, or none.
//!
//! A client checks `structuredContent` against the tool's `outputSchema`
//! (the MCP specification asks it to; the TypeScript SDK's client throws
//! when it does not validate, and when a tool with a schema returns none
//! without `isError`). Thinning with notes inside the document (a note
//! string among an array's objects) breaks such a schema. So:
//!
//! * each `tools/list` page's schemas are compiled and kept by tool name
//!   (the listing's first page starts afresh);
//! * a call of a tool with one asks the pipeline to thin its structured
//!   content keeping the shape ([`StructuredFit::Schema`]: arrays cut with
//!   no note among their items, no member dropped or added, the cuts said
//!   in the text);
//! * what comes back is checked with a real validator (the `jsonschema`
//!   crate, the linear-time `regex` engine for `pattern`, no remote or
//!   file `$ref`); when it does not validate (a `minItems`, a cut string
//!   under a `pattern`), the call is sanitized again with
//!   [`StructuredFit::Omitted`]: the text stays, the structured content is
//!   left out with a note saying why. An invalid one is never sent.
//!
//! A schema the validator cannot compile (a lookaround in a `pattern`, an
//! unresolvable `$ref`) is logged once and the tool still gets the
//! shape-keeping thinning, unchecked. Validation errors are logged by
//! their locations only (the instance and schema paths), never a value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use result_sanitizer_host::api::StructuredFit;

/// A tool's declared schema, compiled; `None`: declared but not compiled.
type Checker = Option<Arc<jsonschema::Validator>>;

/// The output schemas of one session's server, by tool name.
#[derive(Default)]
pub struct Schemas {
    by_tool: Mutex<HashMap<String, Checker>>,
}

impl Schemas {
    /// Takes note of one `tools/list` page's tools (`first`: the listing
    /// starts afresh).
    pub fn note(&self, tools: &[Value], first: bool) {
        let mut by_tool = self.by_tool.lock().expect("schemas lock");
        if first {
            by_tool.clear();
        }
        for t in tools {
            let (Some(name), Some(schema)) = (t.get("name").and_then(Value::as_str), t.get("outputSchema")) else {
                continue;
            };
            by_tool.insert(name.into(), compile(name, schema));
        }
    }

    /// How `tool`'s structured content is to be fitted, and its checker
    /// when it declares a schema the validator compiled.
    pub fn fit_for(&self, tool: &str) -> (StructuredFit, Checker) {
        match self.by_tool.lock().expect("schemas lock").get(tool) {
            Some(c) => (StructuredFit::Schema, c.clone()),
            None => (StructuredFit::Marked, None),
        }
    }
}

fn compile(tool: &str, schema: &Value) -> Checker {
    let built = jsonschema::options()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .should_validate_formats(false)
        .build(schema);
    match built {
        Ok(v) => Some(Arc::new(v)),
        Err(e) => {
            // The schema is the server's, not the result: its location only.
            tracing::warn!(
                target: "result_sanitizer::mcp",
                tool,
                schema_path = %e.schema_path,
                "the tool's outputSchema does not compile here: its structured content is thinned keeping its shape, unchecked"
            );
            None
        }
    }
}

/// Whether the sanitized result `message` (JSON text) has a
/// `structuredContent` that `checker` rejects. A message without one, or
/// that does not parse, passes (nothing to check).
pub fn rejects(checker: &jsonschema::Validator, tool: &str, message: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Structured {
        #[serde(rename = "structuredContent")]
        structured: Option<Value>,
    }
    let Ok(Structured { structured: Some(s) }) = serde_json::from_str::<Structured>(message) else {
        return false;
    };
    let Some(e) = checker.iter_errors(&s).next() else { return false };
    tracing::info!(
        target: "result_sanitizer::mcp",
        tool,
        instance_path = %e.instance_path,
        schema_path = %e.schema_path,
        "thinned structuredContent does not validate against the tool's outputSchema: left out"
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_are_kept_by_tool_and_a_listing_starts_afresh() {
        let s = Schemas::default();
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        s.note(&[json!({"name": "a", "outputSchema": schema}), json!({"name": "b"})], true);
        let (fit, checker) = s.fit_for("a");
        assert_eq!(fit, StructuredFit::Schema);
        let checker = checker.expect("compiled");
        assert!(!rejects(&checker, "a", r#"{"content":[],"structuredContent":{"n":1}}"#));
        assert!(rejects(&checker, "a", r#"{"content":[],"structuredContent":{"n":"one"}}"#));
        assert!(!rejects(&checker, "a", r#"{"content":[]}"#));
        assert_eq!(s.fit_for("b").0, StructuredFit::Marked);
        // A later page adds; a new first page forgets.
        s.note(&[json!({"name": "c", "outputSchema": {"type": "object"}})], false);
        assert_eq!(s.fit_for("a").0, StructuredFit::Schema);
        s.note(&[], true);
        assert_eq!(s.fit_for("a").0, StructuredFit::Marked);
    }

    #[test]
    fn a_schema_that_does_not_compile_still_keeps_the_shape_unchecked() {
        let s = Schemas::default();
        // A lookahead: not in the linear-time engine.
        let schema = json!({"type": "object", "properties": {"k": {"type": "string", "pattern": "^(?=a)a+$"}}});
        s.note(&[json!({"name": "t", "outputSchema": schema})], true);
        let (fit, checker) = s.fit_for("t");
        assert_eq!(fit, StructuredFit::Schema);
        assert!(checker.is_none());
    }
}

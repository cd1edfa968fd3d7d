//! Between the pipeline's JSON names and this crate's binding types.
//!
//! Every JSON the pipeline reads or writes names enum cases in snake_case
//! (`head_tail_lines`, `o200k_base`; docs/record.schema.json). The binding
//! types that wasmtime generates here can carry no serde renames, so serde
//! names their cases in Rust's case (`HeadTailLines`). These two functions
//! rename the enum-valued fields of a record or of options across that gap;
//! the field names themselves agree already.

use serde_json::Value;

/// A record serialized from the binding type, renamed to the record's JSON
/// (its enum fields: `class`, `strategy`, `encoding`, `stages[].stage`).
pub(crate) fn record_to_json_names(v: &mut Value) {
    for key in ["class", "strategy", "encoding"] {
        recase(v.get_mut(key), to_snake);
    }
    if let Some(Value::Array(stages)) = v.get_mut("stages") {
        for st in stages {
            recase(st.get_mut("stage"), to_snake);
        }
    }
}

/// Options in the pipeline's JSON, renamed for the binding type (its enum
/// fields: `format`, `input`, `encoding`, `source`).
pub(crate) fn options_to_binding_names(v: &mut Value) {
    for key in ["format", "input", "encoding", "source", "structured_fit"] {
        recase(v.get_mut(key), to_rust_case);
    }
}

fn recase(v: Option<&mut Value>, f: fn(&str) -> String) {
    if let Some(Value::String(s)) = v {
        *s = f(s);
    }
}

/// `HeadTailLines` → `head_tail_lines`, `O200kBase` → `o200k_base`.
fn to_snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// `head_tail_lines` → `HeadTailLines`, `o200k_base` → `O200kBase`.
fn to_rust_case(s: &str) -> String {
    s.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_cases_round_trip() {
        for (rust, snake) in [("HeadTailLines", "head_tail_lines"), ("O200kBase", "o200k_base"), ("Mcp", "mcp")] {
            assert_eq!((to_snake(rust), to_rust_case(snake)), (snake.to_string(), rust.to_string()));
        }
    }
}

//! Walking the strings of a JSON value, for the passes that rewrite them
//! all (redaction of structured content, defanging of a parsed document).

use serde_json::Value;

/// Calls `f` on every string of `v`, object keys included: a member's
/// value, then its key. A rewritten key keeps its member's place (the
/// map keeps insertion order).
pub fn each_string(v: &mut Value, f: &mut impl FnMut(&mut String)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| each_string(x, f)),
        Value::Object(o) => {
            for (mut k, mut val) in std::mem::take(o) {
                each_string(&mut val, f);
                f(&mut k);
                o.insert(k, val);
            }
        }
        _ => {}
    }
}

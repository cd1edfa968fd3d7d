//! Structure-aware cuts of JSON: what comes out is still valid JSON.
//!
//! A document over its budget is *thinned* at one of a fixed ladder of
//! [`LEVELS`], from generous to harsh. At a level:
//!
//! * an array longer than `items` keeps its first `items - 1` elements and
//!   its last one; in their place stands one string element,
//!   `"[truncated: 998 items omitted (indexes 1-998 of 1000)]"`;
//! * an object with more than `keys` members keeps the first `keys - 1` and
//!   gains a member `"[truncated]": "N more keys omitted"`;
//! * a string longer than `chars` characters keeps its start and ends with
//!   `… [truncated: N chars omitted]`;
//! * a container deeper than `depth` becomes a summary string,
//!   `"[truncated: object with 12 keys omitted]"`.
//!
//! The truncation information is data inside the document, never a broken
//! string, and every cut is counted in [`StructureCuts`].
//!
//! [`thin_bare`] thins for a document a schema will check (MCP structured
//! content of a tool that declares an `outputSchema`): arrays are cut
//! without a note element (the cuts are returned, to be said outside),
//! members are neither dropped nor added and containers never summarised,
//! so the types and required members stay; only strings carry their note. Members keep
//! their order (serde_json's `preserve_order`). The fit searches
//! the ladder by bisection (thinning is monotone: a harsher level is never
//! larger), so a document is thinned and rendered O(log levels) times; each
//! thinning is linear in the part of the document it keeps.

use crate::record::no_cuts;
use serde_json::{Map, Value};

use crate::api::StructureCuts;
use crate::markup::marker::{self, PREFIX};

/// One rung of the ladder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// Most array items kept (at least 2: first and last).
    pub items: usize,
    /// Most object members kept.
    pub keys: usize,
    /// Most characters kept of one string.
    pub chars: usize,
    /// Deepest container kept; deeper ones are summarised.
    pub depth: usize,
}

const fn lv(items: usize, keys: usize, chars: usize, depth: usize) -> Level {
    Level { items, keys, chars, depth }
}

/// From generous to harsh; the last one summarises the root itself.
pub const LEVELS: &[Level] = &[
    lv(1000, 1000, 4000, 64),
    lv(500, 500, 2000, 48),
    lv(200, 300, 1000, 32),
    lv(100, 200, 600, 24),
    lv(50, 100, 400, 16),
    lv(30, 60, 300, 12),
    lv(20, 40, 200, 10),
    lv(12, 30, 150, 8),
    lv(8, 20, 100, 6),
    lv(5, 15, 80, 5),
    lv(3, 10, 60, 4),
    lv(3, 8, 40, 3),
    lv(2, 6, 30, 3),
    lv(2, 4, 20, 2),
    lv(2, 3, 16, 1),
    lv(2, 2, 12, 0),
];

/// `v` thinned at `level`; `cuts` counts what was left out. `rest` is the
/// recovery wording appended to each note ("not kept", "recallable").
pub fn thin(v: &Value, level: &Level, rest: &str, cuts: &mut StructureCuts) -> Value {
    Thin { lv: level, rest, cuts, arrays: None }.at(v, 0, &mut String::new())
}

/// An array thinned with its note outside the document ([`thin_bare`]):
/// where it is (a JSON pointer) and which items were left out.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayCut {
    /// JSON pointer of the array (`""`: the root).
    pub path: String,
    /// Items left out: indexes `first..=last` of `of`.
    pub omitted: usize,
    pub first: usize,
    pub last: usize,
    pub of: usize,
}

/// `v` thinned at `level` keeping the shape a schema checks: an array
/// keeps its first `items - 1` items and its last with no note among them
/// (each such cut listed in `arrays`), objects keep every member and no
/// container is summarised; a long string is cut as by [`thin`] (its note
/// stays inside it, and it stays a string).
pub fn thin_bare(v: &Value, level: &Level, rest: &str, cuts: &mut StructureCuts, arrays: &mut Vec<ArrayCut>) -> Value {
    Thin { lv: level, rest, cuts, arrays: Some(arrays) }.at(v, 0, &mut String::new())
}

/// One thinning: with `arrays`, bare (notes outside, shape kept).
struct Thin<'a> {
    lv: &'a Level,
    rest: &'a str,
    cuts: &'a mut StructureCuts,
    arrays: Option<&'a mut Vec<ArrayCut>>,
}

impl Thin<'_> {
    /// `v` at `depth`; `path` is its JSON pointer, kept only when bare.
    fn at(&mut self, v: &Value, depth: usize, path: &mut String) -> Value {
        let (lv, rest) = (self.lv, self.rest);
        let bare = self.arrays.is_some();
        match v {
            Value::Array(a) if !a.is_empty() && depth >= lv.depth && !bare => {
                self.cuts.containers += 1;
                Value::String(marker::json_container("array of", a.len(), "items", rest))
            }
            Value::Object(m) if !m.is_empty() && depth >= lv.depth && !bare => {
                self.cuts.containers += 1;
                Value::String(marker::json_container("object", m.len(), "keys", rest))
            }
            Value::Array(a) => {
                let n = a.len();
                let keep = lv.items.max(2);
                if n <= keep {
                    return Value::Array(a.iter().enumerate().map(|(i, x)| self.item(x, i, depth, path)).collect());
                }
                let head = keep - 1;
                let omitted = n - keep;
                self.cuts.items += omitted as u64;
                let mut out: Vec<Value> =
                    a[..head].iter().enumerate().map(|(i, x)| self.item(x, i, depth, path)).collect();
                match self.arrays.as_deref_mut() {
                    Some(arrays) => {
                        arrays.push(ArrayCut { path: path.clone(), omitted, first: head, last: n - 2, of: n })
                    }
                    None => out.push(Value::String(marker::json_items(omitted, head, n - 2, n, rest))),
                }
                out.push(self.item(&a[n - 1], n - 1, depth, path));
                Value::Array(out)
            }
            Value::Object(m) => {
                let n = m.len();
                let keep = if n > lv.keys && !bare { lv.keys.saturating_sub(1).max(1) } else { n };
                let mut out = Map::new();
                for (k, x) in m.iter().take(keep) {
                    let len = path.len();
                    if bare {
                        pointer_push(path, k);
                    }
                    out.insert(k.clone(), self.at(x, depth + 1, path));
                    path.truncate(len);
                }
                if keep < n {
                    self.cuts.keys += (n - keep) as u64;
                    let (key, note) = marker::json_keys(n - keep, rest);
                    out.insert(key, Value::String(note));
                }
                Value::Object(out)
            }
            Value::String(s) => {
                let chars = s.chars().count();
                // Our own notes (a byte-cap note) are never shortened.
                if chars <= lv.chars || s.starts_with(PREFIX) {
                    return v.clone();
                }
                let end = s.char_indices().nth(lv.chars).map_or(s.len(), |(i, _)| i);
                self.cuts.chars += (chars - lv.chars) as u64;
                Value::String(marker::json_string(&s[..end], chars - lv.chars, rest))
            }
            _ => v.clone(),
        }
    }

    /// Item `i` of an array at `depth`.
    fn item(&mut self, x: &Value, i: usize, depth: usize, path: &mut String) -> Value {
        let len = path.len();
        if self.arrays.is_some() {
            path.push('/');
            path.push_str(&i.to_string());
        }
        let out = self.at(x, depth + 1, path);
        path.truncate(len);
        out
    }
}

/// `path` followed by the member `key`, escaped as a JSON pointer does.
fn pointer_push(path: &mut String, key: &str) {
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

/// A JSON document cut by the byte cap, closed after its last complete
/// element: the text up to the last `,` outside strings, then `note` as one
/// more element of the innermost open container (a member
/// `"[truncated: byte cap]"` in an object), then the closing brackets.
/// `None` when the prefix has no such point (or nests deeper than 512).
/// One pass over the text.
pub fn close_prefix(text: &str, note: &str) -> Option<String> {
    let mut stack: Vec<u8> = Vec::new();
    let mut last: Option<(usize, Vec<u8>)> = None;
    let (mut in_str, mut esc) = (false, false);
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                stack.push(b);
                if stack.len() > 512 {
                    return None;
                }
            }
            b']' | b'}' => {
                stack.pop()?;
            }
            b',' if !stack.is_empty() => last = Some((i, stack.clone())),
            _ => {}
        }
    }
    let (pos, stack) = last?;
    let note = serde_json::to_string(note).expect("a string serializes");
    let mut out = String::with_capacity(pos + note.len() + stack.len() + 32);
    out.push_str(&text[..pos]);
    match stack.last() {
        Some(b'{') => {
            let key = serde_json::to_string(&marker::json_cap_key()).expect("a string serializes");
            out.push_str(&format!(", {key}: {note}"))
        }
        _ => out.push_str(&format!(", {note}")),
    }
    for &b in stack.iter().rev() {
        out.push(if b == b'[' { ']' } else { '}' });
    }
    Some(out)
}

/// Renders JSON for the model: pretty-printed (line structure helps both
/// reading and line-based recovery).
pub fn render(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("a Value serializes")
}

/// The most generous level whose thinned value `fits` accepts, with what
/// `fits` returned and the cuts; `None` when not even the harshest fits.
pub fn fit<R>(v: &Value, rest: &str, fits: impl FnMut(&Value) -> Option<R>) -> Option<(R, StructureCuts)> {
    fit_with(|lv, cuts| thin(v, lv, rest, cuts), fits).map(|(r, cuts, _)| (r, cuts))
}

/// [`fit`] with [`thin_bare`]: also the arrays cut at the level found.
pub fn fit_bare<R>(
    v: &Value,
    rest: &str,
    fits: impl FnMut(&Value) -> Option<R>,
) -> Option<(R, StructureCuts, Vec<ArrayCut>)> {
    let mut arrays = Vec::new();
    let found = fit_with(
        |lv, cuts| {
            arrays.clear();
            thin_bare(v, lv, rest, cuts, &mut arrays)
        },
        fits,
    );
    // Thinning is deterministic: the last level tried is not always the
    // one found, so the arrays of the one found are made again.
    found.map(|(r, cuts, i)| {
        let mut again = no_cuts();
        arrays.clear();
        thin_bare(v, &LEVELS[i], rest, &mut again, &mut arrays);
        (r, cuts, arrays)
    })
}

/// The bisection of [`fit`] over a thinning; also the level's index.
fn fit_with<R>(
    mut thin: impl FnMut(&Level, &mut StructureCuts) -> Value,
    mut fits: impl FnMut(&Value) -> Option<R>,
) -> Option<(R, StructureCuts, usize)> {
    let mut attempt = |i: usize| {
        let mut cuts = no_cuts();
        let t = thin(&LEVELS[i], &mut cuts);
        fits(&t).map(|r| (r, cuts, i))
    };
    // Bisection for the first level that fits (thinning is monotone).
    let (mut lo, mut hi) = (0usize, LEVELS.len());
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi) / 2;
        match attempt(mid) {
            Some(found) => {
                best = Some(found);
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arrays_keep_first_and_last_with_a_count() {
        let v = json!({"items": (0..1000).collect::<Vec<_>>(), "name": "x".repeat(50)});
        let mut cuts = no_cuts();
        let t = thin(&v, &lv(3, 10, 20, 8), ", not kept", &mut cuts);
        let a = t["items"].as_array().unwrap();
        assert_eq!(a.len(), 4);
        assert_eq!((a[0].clone(), a[1].clone(), a[3].clone()), (json!(0), json!(1), json!(999)));
        assert_eq!(a[2], json!("[truncated: 997 items omitted (indexes 2-998 of 1000), not kept]"));
        assert!(t["name"].as_str().unwrap().ends_with("[truncated: 30 chars omitted, not kept]"));
        assert_eq!((cuts.items, cuts.chars), (997, 30));
    }

    #[test]
    fn a_cut_document_is_closed_after_its_last_complete_element() {
        let t = r#"{"a": [1, 2, {"b": "x,y"}, 4], "c": {"d": 1, "e": "unfinish"#;
        let closed = close_prefix(t, "[truncated: cap]").unwrap();
        let v: Value = serde_json::from_str(&closed).unwrap();
        assert_eq!(v["a"], json!([1, 2, {"b": "x,y"}, 4]));
        assert_eq!(v["c"], json!({"d": 1, "[truncated: byte cap]": "[truncated: cap]"}));
        let v: Value = serde_json::from_str(&close_prefix("[[1, 2], [3, 4", "n").unwrap()).unwrap();
        assert_eq!(v, json!([[1, 2], [3, "n"]]));
        assert!(close_prefix("{\"a\": \"no comma", "n").is_none());
    }

    #[test]
    fn depth_and_keys() {
        let v = json!({"a": {"b": {"c": [1, 2]}}, "k1": 1, "k2": 2, "k3": 3});
        let mut cuts = no_cuts();
        let t = thin(&v, &lv(2, 2, 100, 2), "", &mut cuts);
        assert_eq!(t["a"]["b"], json!("[truncated: object with 1 keys omitted]"));
        assert_eq!(t["[truncated:]"], json!("3 more keys omitted"));
        assert_eq!((cuts.containers, cuts.keys), (1, 3));
    }

    #[test]
    fn bare_thinning_keeps_the_shape_and_says_where_it_cut() {
        let v = json!({
            "items": (0..100).map(|i| json!({"id": i, "tags": ["a", "b", "c", "d"]})).collect::<Vec<_>>(),
            "a/b": {"deep": {"deeper": {"deepest": [1, 2, 3, 4, 5]}}},
            "k1": 1, "k2": 2, "k3": 3, "name": "x".repeat(50)
        });
        let mut cuts = no_cuts();
        let mut arrays = Vec::new();
        let t = thin_bare(&v, &lv(3, 2, 20, 1), ", not kept", &mut cuts, &mut arrays);
        // Every member kept, every container still one, every item an object.
        assert_eq!(
            t.as_object().unwrap().keys().collect::<Vec<_>>(),
            v.as_object().unwrap().keys().collect::<Vec<_>>()
        );
        let items = t["items"].as_array().unwrap();
        assert_eq!(items.iter().map(|x| x["id"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 99]);
        assert!(items.iter().all(|x| x["tags"] == json!(["a", "b", "d"])));
        assert_eq!(t["a/b"]["deep"]["deeper"]["deepest"], json!([1, 2, 5]));
        assert!(t["name"].as_str().unwrap().ends_with("[truncated: 30 chars omitted, not kept]"));
        assert_eq!((cuts.items, cuts.keys, cuts.containers, cuts.chars), (97 + 3 + 2, 0, 0, 30));
        let at = |p: &str| arrays.iter().find(|a| a.path == p).cloned();
        assert_eq!(at("/items"), Some(ArrayCut { path: "/items".into(), omitted: 97, first: 2, last: 98, of: 100 }));
        assert_eq!(at("/items/99/tags").map(|a| (a.first, a.last)), Some((2, 2)));
        assert_eq!(at("/a~1b/deep/deeper/deepest").map(|a| a.omitted), Some(2));
        assert_eq!(arrays.len(), 3 + 1 + 1);
    }

    #[test]
    fn fit_picks_the_most_generous_level_that_fits() {
        let v = json!((0..5000).map(|i| json!({"id": i, "name": format!("item {i}")})).collect::<Vec<_>>());
        let (text, cuts) = fit(&v, "", |t| Some(render(t)).filter(|s| s.len() <= 4000)).unwrap();
        assert!(text.len() <= 4000);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert!(back.as_array().unwrap().len() >= 3);
        assert!(cuts.items > 0);
    }
}

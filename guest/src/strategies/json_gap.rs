//! A JSON document read as head + tail, closed into one valid document.
//!
//! A host that reads a long output keeps its head and its tail and drains the
//! middle ([`crate::stages::byte_cap::drain`]); the drain scans the middle's
//! JSON nesting ([`crate::support::json_scan`]). The middle lies inside one
//! container of the document, the shallowest it reaches: its elements before
//! the middle end the head, its elements after it start the tail. The kept
//! text is the head up to the end of a complete element of that container,
//! one note element (a member `"[truncated:]"` in an object) that counts the
//! elements left out and where they were, then the tail from the start of a
//! complete element on: every container around the middle is whole, so the
//! text is the original document with a run of one container's elements
//! replaced by the note. How many elements each side keeps is the budget's
//! call (three quarters from the start, one quarter from the end, as for
//! records), down to none.

use crate::support::json_scan::Nest;

/// Where the elements of the container around the middle are.
#[derive(Debug, PartialEq)]
pub struct Layout {
    /// The container is an object.
    pub object: bool,
    /// Just after its opening bracket (in the head).
    pub open: usize,
    /// Its commas in the head, in order: a complete element ends at each.
    pub head_commas: Vec<usize>,
    /// Its commas in the tail, in order: a complete element starts after each.
    pub tail_commas: Vec<usize>,
    /// Its closing bracket (in the tail).
    pub close: usize,
    /// Elements between the last head comma and the first tail comma
    /// (the middle's).
    pub middle: u64,
}

struct Frame {
    object: bool,
    open: usize,
    commas: Vec<usize>,
}

impl Layout {
    /// The layout of `text`, whose middle was drained at `at` with the
    /// nesting `nest`. `None` when the text is not JSON as far as a scan
    /// tells, or the middle is not inside one container with a comma on
    /// its tail side.
    pub fn find(text: &str, at: usize, nest: &Nest) -> Option<Layout> {
        let b = text.as_bytes();
        // The head: its open containers, with their commas.
        let mut frames: Vec<Frame> = Vec::new();
        let (mut in_str, mut esc) = (false, false);
        for (i, &c) in b[..at].iter().enumerate() {
            if in_str {
                match c {
                    _ if esc => esc = false,
                    b'\\' => esc = true,
                    b'"' => in_str = false,
                    c if c < 0x20 => return None,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => {
                    frames.push(Frame { object: c == b'{', open: i + 1, commas: Vec::new() });
                    if frames.len() > 512 {
                        return None;
                    }
                }
                b']' | b'}' => {
                    frames.pop()?;
                }
                b',' => frames.last_mut()?.commas.push(i),
                _ => {}
            }
        }
        let hd = frames.len() as i64;
        let floor = hd + nest.min_depth;
        // The tail, from the middle's end: the first comma at the lowest
        // depth so far is where its complete elements start.
        let (mut in_str, mut esc) = (nest.in_str, nest.esc);
        let (mut d, mut low) = (hd + nest.depth, floor);
        let mut found: Option<i64> = None;
        let mut tail_commas = Vec::new();
        let mut close = None;
        for (i, &c) in b.iter().enumerate().skip(at) {
            if in_str {
                match c {
                    _ if esc => esc = false,
                    b'\\' => esc = true,
                    b'"' => in_str = false,
                    c if c < 0x20 => return None,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => d += 1,
                b']' | b'}' => {
                    d -= 1;
                    match found {
                        Some(k) if d < k => {
                            close = Some(i);
                            break;
                        }
                        None if d < low => low = d,
                        _ => {}
                    }
                }
                b',' => match found {
                    None if d == low => {
                        found = Some(d);
                        tail_commas.push(i);
                    }
                    Some(k) if d == k => tail_commas.push(i),
                    _ => {}
                },
                _ => {}
            }
        }
        let level = found?;
        if level < 1 || level > hd {
            return None;
        }
        let frame = frames.swap_remove(level as usize - 1);
        let middle = 1 + if level == floor { nest.commas } else { 0 };
        Some(Layout {
            object: frame.object,
            open: frame.open,
            head_commas: frame.commas,
            tail_commas,
            close: close?,
            middle,
        })
    }

    /// Elements of the container in all.
    pub fn total(&self) -> u64 {
        (self.head_commas.len() + self.tail_commas.len()) as u64 + self.middle
    }

    /// Most elements a cut can keep.
    pub fn most(&self) -> usize {
        self.head_commas.len() + self.tail_commas.len()
    }

    /// The cut that keeps `k` elements, three quarters from the start:
    /// (head end, tail start, head elements kept, tail elements kept).
    pub fn cut(&self, k: usize) -> (usize, usize, usize, usize) {
        let (hn, tn) = (self.head_commas.len(), self.tail_commas.len());
        let k = k.min(hn + tn);
        // The last element shows as soon as two are kept.
        let (mut h, mut t) = crate::strategies::records::shares(k);
        if k >= 2 && t == 0 {
            (h, t) = (k - 1, 1);
        }
        if h > hn {
            t += h - hn;
            h = hn;
        }
        if t > tn {
            h += t - tn;
            t = tn;
        }
        let head_end = if h == 0 { self.open } else { self.head_commas[h - 1] };
        let tail_start = if t == 0 { self.close } else { self.tail_commas[tn - t] + 1 };
        (head_end, tail_start, h, t)
    }

    /// `text` cut by [`Self::cut`]`(k)` with the note that `note` words
    /// for (omitted, first index, last index, total) in its place.
    pub fn render(&self, text: &str, k: usize, note: impl Fn(u64, u64, u64, u64) -> String) -> String {
        let (head_end, tail_start, h, t) = self.cut(k);
        let omitted = self.total() - (h + t) as u64;
        let note = note(omitted, h as u64, h as u64 + omitted - 1, self.total());
        let note = serde_json::to_string(&note).expect("a string serializes");
        let mut out = String::with_capacity(head_end + note.len() + text.len() - tail_start + 32);
        out.push_str(&text[..head_end]);
        out.push_str(if h > 0 { ", " } else { "" });
        if self.object {
            let key = serde_json::to_string(&crate::markup::marker::json_keys(0, "").0).expect("a string serializes");
            out.push_str(&key);
            out.push_str(": ");
        }
        out.push_str(&note);
        out.push_str(if t > 0 { ", " } else { "" });
        out.push_str(&text[tail_start..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::json_scan;
    use serde_json::{json, Value};

    /// `doc` with bytes `a..b` drained as a host does (scanned, dropped).
    fn layout(doc: &str, a: usize, b: usize) -> (String, Option<Layout>) {
        let mut scans = Vec::new();
        json_scan::feed_all(&mut scans, &doc.as_bytes()[a..b]);
        let nest = json_scan::middle(&doc.as_bytes()[..a], b"", &scans, b"");
        let text = format!("{}{}", &doc[..a], &doc[b..]);
        let l = nest.and_then(|n| Layout::find(&text, a, &n));
        (text, l)
    }

    fn note(o: u64, f: u64, l: u64, t: u64) -> String {
        format!("{o} omitted ({f}-{l} of {t})")
    }

    #[test]
    fn an_array_of_objects_keeps_whole_elements_at_both_ends() {
        let v: Vec<Value> = (0..50).map(|i| json!({"id": i, "tags": ["a", "b"], "s": "x,]}"})).collect();
        let doc = serde_json::to_string(&v).unwrap();
        // Every cut of the middle: the text parses, both ends are the
        // document's, the counts are exact.
        for a in (1..doc.len() / 2).step_by(7) {
            for b in (doc.len() / 2..doc.len() - 1).step_by(11) {
                let (text, l) = layout(&doc, a, b);
                let Some(l) = l else { continue };
                assert_eq!(l.total(), 50, "cut {a}..{b}");
                for k in [0, 1, 2, 5, l.most()] {
                    let out = l.render(&text, k, note);
                    let back: Vec<Value> = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{a}..{b} k {k}: {e}"));
                    let (_, _, h, t) = l.cut(k);
                    assert_eq!(back.len(), h + t + 1);
                    assert_eq!(&back[..h], &v[..h]);
                    assert_eq!(&back[h + 1..], &v[50 - t..]);
                    assert_eq!(back[h], json!(note(50 - (h + t) as u64, h as u64, 49 - t as u64, 50)));
                }
            }
        }
    }

    #[test]
    fn an_object_with_one_huge_array_is_cut_inside_the_array() {
        let items: Vec<Value> = (0..100).map(|i| json!([i, {"k": i}])).collect();
        let v = json!({"total": 100, "items": items, "meta": {"next": null}});
        let doc = serde_json::to_string_pretty(&v).unwrap();
        let (a, b) = (doc.len() / 3, doc.len() * 2 / 3);
        let (text, l) = layout(&doc, a, b);
        let l = l.unwrap();
        assert!(!l.object);
        assert_eq!(l.total(), 100);
        let out = l.render(&text, 4, note);
        let back: Value = serde_json::from_str(&out).unwrap();
        assert_eq!((back["total"].clone(), back["meta"].clone()), (json!(100), json!({"next": null})));
        let a = back["items"].as_array().unwrap();
        assert_eq!((a.len(), a[0].clone(), a[4].clone()), (5, json!([0, {"k": 0}]), json!([99, {"k": 99}])));
        assert_eq!(a[3], json!(note(96, 3, 98, 100)));
    }

    #[test]
    fn an_object_gets_a_note_member() {
        let m: serde_json::Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!({"v": [i]}))).collect();
        let doc = serde_json::to_string(&Value::Object(m)).unwrap();
        let (text, l) = layout(&doc, 100, doc.len() - 100);
        let l = l.unwrap();
        assert!(l.object);
        let back: serde_json::Map<String, Value> = serde_json::from_str(&l.render(&text, 2, note)).unwrap();
        let keys: Vec<&String> = back.keys().collect();
        assert_eq!(keys, ["k0", "[truncated:]", "k39"]);
    }

    #[test]
    fn plain_text_is_no_layout() {
        let doc = "error: [x, y]\nthe end, \"quoted\nline\n".repeat(20);
        assert!(layout(&doc, 30, doc.len() - 30).1.is_none());
    }
}

//! The JSON nesting of a run of bytes, without parsing it.
//!
//! A JSON document read as head + tail (its middle drained by a host) is
//! closed into one valid document around the container the middle lies in
//! ([`crate::strategies::json_gap`]). What that needs of the middle is its
//! nesting: how deep it goes below where it starts, where it ends, and how
//! many commas it holds at its lowest depth (the elements of that
//! container it holds). A [`JsonScan`] says that for one run of bytes; two
//! scans compose ([`then`]). The drain step keeps one scan per way the
//! head may end (outside a string, inside one, inside one after a
//! backslash), since it does not see the head; the pipeline picks the one
//! the head calls for.
//!
//! [`values`] counts about how many values a JSON text holds, to tell
//! before parsing whether its parse fits the pipeline's memory.

use crate::api::JsonScan;

/// Nesting past which a scan gives up (as `close_prefix` does).
const MAX_DEPTH: i64 = 512;

/// A scan that starts inside a string (`in_str`), after a backslash (`esc`).
pub fn start(in_str: bool, esc: bool) -> JsonScan {
    JsonScan { in_str, esc, dead: false, depth: 0, min_depth: 0, commas: 0 }
}

/// The three starts the drain step keeps, in this order.
pub fn starts() -> Vec<JsonScan> {
    vec![start(false, false), start(true, false), start(true, true)]
}

/// Which of [`starts`] a head that ends in this string state calls for.
pub fn index(in_str: bool, esc: bool) -> usize {
    match (in_str, esc) {
        (false, _) => 0,
        (true, false) => 1,
        (true, true) => 2,
    }
}

/// `s` with `bytes` scanned.
pub fn feed(s: &mut JsonScan, bytes: &[u8]) {
    if s.dead {
        return;
    }
    let (mut in_str, mut esc, mut depth, mut min, mut commas) = (s.in_str, s.esc, s.depth, s.min_depth, s.commas);
    for &b in bytes {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            } else if b < 0x20 {
                // A raw control character (a line break) is never inside
                // a JSON string: this start was wrong.
                s.dead = true;
                return;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    s.dead = true;
                    return;
                }
            }
            b']' | b'}' => {
                depth -= 1;
                if depth < min {
                    min = depth;
                    commas = 0;
                    if depth < -MAX_DEPTH {
                        s.dead = true;
                        return;
                    }
                }
            }
            b',' if depth == min => commas += 1,
            _ => {}
        }
    }
    *s = JsonScan { in_str, esc, dead: false, depth, min_depth: min, commas };
}

/// `a` then `b` (`b` started in the string state `a` ended in).
pub fn then(a: &JsonScan, b: &JsonScan) -> JsonScan {
    let low = a.depth + b.min_depth;
    let (min_depth, commas) = match low.cmp(&a.min_depth) {
        std::cmp::Ordering::Less => (low, b.commas),
        std::cmp::Ordering::Equal => (low, a.commas + b.commas),
        std::cmp::Ordering::Greater => (a.min_depth, a.commas),
    };
    JsonScan { in_str: b.in_str, esc: b.esc, dead: a.dead || b.dead, depth: a.depth + b.depth, min_depth, commas }
}

/// What the pipeline keeps of a scan of the omitted middle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nest {
    /// It ends inside a string, after a backslash.
    pub in_str: bool,
    /// See `in_str`.
    pub esc: bool,
    /// Depth at its end, relative to its start.
    pub depth: i64,
    /// Lowest depth reached.
    pub min_depth: i64,
    /// Commas at `min_depth`.
    pub commas: u64,
}

/// The nesting of a middle whose head is `head`, the partial line the
/// join moved out of the head `before`, the host's scans of what it
/// drained `drained` (none: not scanned), and the tail's partial line
/// `after`. `None` when it is not JSON as far as a scan can tell.
pub fn middle(head: &[u8], before: &[u8], drained: &[JsonScan], after: &[u8]) -> Option<Nest> {
    let h = scan(start(false, false), head);
    let a = scan(start(h.in_str, h.esc), before);
    let d = drained.get(index(a.in_str, a.esc))?;
    let ad = then(&a, d);
    let b = scan(start(ad.in_str, ad.esc), after);
    let m = then(&ad, &b);
    (!h.dead && !m.dead).then_some(Nest {
        in_str: m.in_str,
        esc: m.esc,
        depth: m.depth,
        min_depth: m.min_depth,
        commas: m.commas,
    })
}

fn scan(mut s: JsonScan, bytes: &[u8]) -> JsonScan {
    feed(&mut s, bytes);
    s
}

/// Every live scan of `scans` (the three starts when empty) with `bytes`.
pub fn feed_all(scans: &mut Vec<JsonScan>, bytes: &[u8]) {
    if scans.is_empty() {
        *scans = starts();
    }
    for s in scans.iter_mut() {
        feed(s, bytes);
    }
}

/// About how many values and keys a JSON text holds (its commas, colons
/// and opening brackets outside strings, plus one): one pass, no
/// allocation, before anything is parsed.
pub fn values(raw: &[u8]) -> usize {
    let (mut n, mut i) = (1, 0);
    while let Some(&b) = raw.get(i) {
        i += 1;
        match b {
            // A string: skipped to its closing quote, escapes and all.
            b'"' => loop {
                let Some(k) = raw.get(i..).and_then(|rest| memchr::memchr2(b'"', b'\\', rest)) else { return n };
                let quote = raw[i + k] == b'"';
                i += k + if quote { 1 } else { 2 };
                if quote {
                    break;
                }
            },
            b',' | b':' | b'[' | b'{' => n += 1,
            _ => {}
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings() {
        for (json, n) in [
            ("0", 1),
            ("[0,0,0]", 4),
            (r#"{"a":[1,2],"b":{}}"#, 8),
            (r#"["a,b:[{", "\\", "\"[,", 1]"#, 5),
            (r#""unterminated \"#, 1),
        ] {
            assert_eq!(values(json.as_bytes()), n, "{json}");
        }
    }

    fn scan(from: JsonScan, t: &str) -> JsonScan {
        super::scan(from, t.as_bytes())
    }

    #[test]
    fn depth_floor_and_commas_compose_whatever_the_split() {
        let t = r#"1}, {"a": "x,]"}, 3], [4, 5], "s\"[", 6"#;
        let whole = scan(start(false, false), t);
        assert_eq!((whole.depth, whole.min_depth, whole.commas), (-2, -2, 3));
        for cut in 0..=t.len() {
            let a = scan(start(false, false), &t[..cut]);
            let b = scan(start(a.in_str, a.esc), &t[cut..]);
            assert_eq!(then(&a, &b), whole, "cut {cut}");
        }
        // Starting inside a string: the quote ends it.
        let s = scan(start(true, false), r#"tail", 1, 2]"#);
        assert_eq!((s.depth, s.min_depth, s.commas, s.dead), (-1, -1, 0, false));
        // A line break inside a string: not this start.
        assert!(scan(start(true, false), "a\nb").dead);
    }
}

//! The message's JSON, written in order: the text blocks are most of its
//! bytes, and serde_json escapes a string a byte at a time (in wasm, 9 %
//! of an 8 KiB call). [`Json::string`] skips eight bytes at a time that
//! need no escape and writes what serde_json writes, byte for byte (a
//! test compares them on every byte value); everything else is written by
//! serde_json.

use serde::Serialize;

/// A JSON text being written.
pub(super) struct Json(Vec<u8>);

/// Each byte's escape, as serde_json writes it: `u` for `\u00XX`, 0 for
/// none.
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Whether one of the eight bytes of `w` needs an escape: a control byte,
/// a quote or a backslash (exact, by the usual zero-byte tests).
fn any_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const TOP: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & TOP;
    let below_space = w.wrapping_sub(0x20 * ONES) & !w & TOP;
    (below_space | zero(w ^ (u64::from(b'"') * ONES)) | zero(w ^ (u64::from(b'\\') * ONES))) != 0
}

impl Json {
    pub fn with_capacity(n: usize) -> Self {
        Json(Vec::with_capacity(n))
    }

    /// `s` as it stands: JSON punctuation and keys.
    pub fn raw(&mut self, s: &str) -> &mut Self {
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    /// `s` as a JSON string.
    pub fn string(&mut self, s: &str) -> &mut Self {
        let (b, out) = (s.as_bytes(), &mut self.0);
        out.reserve(b.len() + 2);
        out.push(b'"');
        let (mut done, mut i) = (0, 0);
        while i < b.len() {
            if i + 8 <= b.len() && !any_escape(u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"))) {
                i += 8;
                continue;
            }
            let c = b[i];
            match ESCAPE[usize::from(c)] {
                0 => {}
                e => {
                    out.extend_from_slice(&b[done..i]);
                    out.extend_from_slice(&[b'\\', e]);
                    if e == b'u' {
                        const HEX: &[u8; 16] = b"0123456789abcdef";
                        out.extend_from_slice(&[b'0', b'0', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
                    }
                    done = i + 1;
                }
            }
            i += 1;
        }
        out.extend_from_slice(&b[done..]);
        out.push(b'"');
        self
    }

    /// `v` as serde_json writes it.
    pub fn value(&mut self, v: &impl Serialize) -> &mut Self {
        serde_json::to_writer(&mut self.0, v).expect("serializes");
        self
    }

    /// The text written.
    pub fn finish(self) -> String {
        // Only whole strings and serde_json's output went in.
        String::from_utf8(self.0).expect("UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde_json's bytes for every byte value, alone, in a run of eight
    /// and at every offset of one.
    #[test]
    fn strings_are_serde_jsons() {
        let mut texts: Vec<String> = (0..128u8).map(|c| char::from(c).to_string()).collect();
        texts.extend(["é", "中文", "😀", "\u{2028}", ""].map(String::from));
        for c in 0..128u8 {
            for at in 0..9 {
                let mut s = "abcdefghijklmnopq".to_string();
                s.insert(at, char::from(c));
                texts.push(s.clone());
                texts.push(s.repeat(3) + "é\"x");
            }
        }
        for s in texts {
            let mut j = Json::with_capacity(0);
            j.string(&s);
            assert_eq!(j.finish(), serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }
}

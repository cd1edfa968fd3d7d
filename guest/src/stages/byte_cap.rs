//! The byte hard cap, on a UTF-8 boundary.
//!
//! Applied before anything that allocates per byte (decoding, the
//! tokenizer). Hosts cap while reading and stop reading at the cap; the
//! pipeline caps again so that a host that did not still gets a bound.

/// Length of the longest prefix of `bytes` that is at most `cap` bytes and
/// does not end inside a UTF-8 sequence.
pub fn cap_len(bytes: &[u8], cap: usize) -> usize {
    if bytes.len() <= cap {
        return bytes.len();
    }
    let mut end = cap;
    // Step back over continuation bytes (at most 3) to the sequence start;
    // cut before the start if the whole sequence does not fit.
    let mut back = 0;
    while end > 0 && back < 3 && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
        back += 1;
    }
    if back == 0 {
        return cap;
    }
    // `end` is now the lead byte of the sequence that `cap` splits (or an
    // invalid run); drop it when it is a lead byte.
    if bytes[end] >= 0xC0 {
        end
    } else {
        cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_splits_a_character() {
        let s = "a€b".as_bytes(); // € is 3 bytes
        assert_eq!(cap_len(s, 1), 1);
        assert_eq!(cap_len(s, 2), 1);
        assert_eq!(cap_len(s, 3), 1);
        assert_eq!(cap_len(s, 4), 4);
        assert_eq!(cap_len(s, 10), 5);
        let e = "😀😀".as_bytes();
        for cap in 0..8 {
            let n = cap_len(e, cap);
            assert!(std::str::from_utf8(&e[..n]).is_ok(), "cap {cap}");
            assert!(n <= cap);
        }
    }
}

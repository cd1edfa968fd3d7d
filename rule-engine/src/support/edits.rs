//! Replacements over a string, and the offset map back to the source.
//!
//! Decoding (invalid UTF-8 → U+FFFD), redaction and defanging all replace
//! spans of text. Truncation markers and records must name positions in the
//! *original* output, so each stage keeps an [`OffsetMap`] from its output
//! back to its input. A map is the sorted list of replaced spans; a position
//! inside an unchanged run maps by a constant shift, a position inside a
//! replacement maps to the start of the span it replaced. Mapping costs one
//! binary search.

/// One replacement: `src[start..end]` becomes `with`.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    /// Start in the source, inclusive.
    pub start: usize,
    /// End in the source, exclusive.
    pub end: usize,
    /// Replacement text.
    pub with: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Seg {
    out_start: usize,
    out_end: usize,
    src_start: usize,
    src_end: usize,
}

/// Maps offsets of an edited string back to its source.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OffsetMap {
    segs: Vec<Seg>,
}

impl OffsetMap {
    /// Identity map.
    pub fn identity() -> Self {
        Self::default()
    }

    /// Adds a replaced span; spans must be added in increasing order.
    pub fn push(&mut self, out_start: usize, out_end: usize, src_start: usize, src_end: usize) {
        self.segs.push(Seg { out_start, out_end, src_start, src_end });
    }

    /// Source offset of output offset `off`.
    pub fn to_src(&self, off: usize) -> usize {
        let i = self.segs.partition_point(|s| s.out_start <= off);
        if i == 0 {
            return off;
        }
        let s = self.segs[i - 1];
        if off < s.out_end {
            s.src_start
        } else {
            s.src_end + (off - s.out_end)
        }
    }

    /// Source offset for an exclusive end `off`: a position inside a
    /// replacement maps to the end of the span it replaced.
    pub fn to_src_end(&self, off: usize) -> usize {
        let i = self.segs.partition_point(|s| s.out_start < off);
        if i == 0 {
            return off;
        }
        let s = self.segs[i - 1];
        if off <= s.out_end {
            if off == s.out_start {
                s.src_start
            } else {
                s.src_end
            }
        } else {
            s.src_end + (off - s.out_end)
        }
    }

    /// The first output offset in `0..=len` (`len` the output's length)
    /// whose source offset is at or after `src`: where a source position
    /// (a drained middle, say) is in the output. Binary search; the map is
    /// monotone.
    pub fn first_at_or_after(&self, len: usize, src: usize) -> usize {
        let (mut lo, mut hi) = (0usize, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.to_src(mid) < src {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Each replacement as its output span and the source span it
    /// replaced, in order.
    pub fn segments(&self) -> impl Iterator<Item = (std::ops::Range<usize>, std::ops::Range<usize>)> + '_ {
        self.segs.iter().map(|s| (s.out_start..s.out_end, s.src_start..s.src_end))
    }

    /// The replacement strictly containing output offset `off`, if any, as
    /// its output span: a cut there would split a replacement string.
    pub fn enclosing(&self, off: usize) -> Option<(usize, usize)> {
        let i = self.segs.partition_point(|s| s.out_start < off);
        let s = self.segs.get(i.checked_sub(1)?)?;
        (off < s.out_end).then_some((s.out_start, s.out_end))
    }
}

/// Applies `edits` (sorted, non-overlapping) to `src`.
pub fn apply(src: &str, edits: &[Edit]) -> (String, OffsetMap) {
    if edits.is_empty() {
        return (src.to_string(), OffsetMap::identity());
    }
    let mut out = String::with_capacity(src.len());
    let mut map = OffsetMap::identity();
    let mut pos = 0;
    for e in edits {
        debug_assert!(e.start >= pos && e.end >= e.start);
        out.push_str(&src[pos..e.start]);
        let out_start = out.len();
        out.push_str(&e.with);
        map.push(out_start, out.len(), e.start, e.end);
        pos = e.end;
    }
    out.push_str(&src[pos..]);
    (out, map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_through_replacements() {
        let src = "ab SECRET cd";
        let (out, map) = apply(src, &[Edit { start: 3, end: 9, with: "[R]".into() }]);
        assert_eq!(out, "ab [R] cd");
        assert_eq!(map.to_src(0), 0);
        assert_eq!(map.to_src(3), 3);
        assert_eq!(map.to_src(4), 3);
        assert_eq!(map.to_src(6), 9);
        assert_eq!(map.to_src(8), 11);
        assert_eq!(map.to_src_end(6), 9);
        assert_eq!(map.to_src_end(9), 12);
        assert_eq!(map.to_src_end(3), 3);
    }
}

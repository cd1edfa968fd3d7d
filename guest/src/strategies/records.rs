//! Whole records for JSON lines and CSV.
//!
//! One record per line (a CSV field with an embedded newline counts as a
//! line break here; the cut is still on a line boundary). A CSV header,
//! the first line, is always kept. The budget decides how many records are
//! kept, three quarters from the start and one quarter from the end; the
//! marker between them says which records, lines and bytes are omitted and
//! how many records there are in all.

/// The record layout of a text.
pub struct Records {
    /// End of the header line, newline included (0 without a header).
    pub header_end: usize,
    /// Start byte of each record.
    pub starts: Vec<usize>,
    /// Length of the text.
    pub len: usize,
    /// A drained middle at this offset (a line start) held this many
    /// records: they count, and no cut keeps them.
    pub hidden: Option<(usize, usize)>,
}

impl Records {
    /// Splits `text` into records; with `header`, the first line is one.
    pub fn split(text: &str, header: bool) -> Self {
        let b = text.as_bytes();
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', b).map(|p| p + 1).filter(|&p| p < b.len()));
        let header_end = if header && !starts.is_empty() {
            starts.remove(0);
            starts.first().copied().unwrap_or(b.len())
        } else {
            0
        };
        if text.is_empty() {
            starts.clear();
        }
        Self { header_end, starts, len: b.len(), hidden: None }
    }

    /// `self` around a drained middle at `at` (a line start) that held
    /// `n` records.
    pub fn around(mut self, at: usize, n: usize) -> Self {
        self.hidden = Some((at, n));
        self
    }

    /// Records in all.
    pub fn count(&self) -> usize {
        self.starts.len() + self.hidden.map_or(0, |(_, n)| n)
    }

    /// The byte cut that keeps `head` records from the start and `tail`
    /// from the end (header always kept). Around a drained middle, each
    /// side keeps what it has, the rest going to the other.
    pub fn cut(&self, head: usize, tail: usize) -> (usize, usize) {
        let n = self.starts.len();
        let (mut head, mut tail) = (head, tail);
        if let Some((at, _)) = self.hidden {
            let before = self.starts.partition_point(|&s| s < at);
            let after = n - before;
            if head > before {
                tail += head - before;
                head = before;
            }
            if tail > after {
                head = (head + tail - after).min(before);
                tail = after;
            }
        } else if head + tail >= n {
            return (self.len, self.len);
        }
        let head_end = if head == 0 { self.header_end } else { self.starts.get(head).copied().unwrap_or(self.len) };
        let tail_start = if tail == 0 { self.len } else { self.starts[n - tail] };
        (head_end.max(self.header_end), tail_start.max(head_end))
    }

    /// Index (from 0) of the record holding byte `off`. At a drained
    /// middle, `after` says which side: the middle's first record, or the
    /// first after it.
    pub fn index_of(&self, off: usize, after: bool) -> usize {
        let i = self.starts.partition_point(|&s| s <= off).saturating_sub(1);
        match self.hidden {
            Some((at, n)) if off > at || (off == at && after) => i + n,
            Some((at, _)) if off == at => self.starts.partition_point(|&s| s < at),
            _ => i,
        }
    }
}

/// Head and tail shares of `k` kept records.
pub fn shares(k: usize) -> (usize, usize) {
    let head = (k * 3).div_ceil(4);
    (head, k - head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_cut() {
        let t = "id,name\n1,a\n2,b\n3,c\n4,d\n";
        let r = Records::split(t, true);
        assert_eq!((r.header_end, r.count()), (8, 4));
        let (h, tl) = r.cut(1, 1);
        assert_eq!((&t[..h], &t[tl..]), ("id,name\n1,a\n", "4,d\n"));
        assert_eq!(r.cut(0, 0), (8, t.len()));
        assert_eq!(r.index_of(12, false), 1);
        assert_eq!(shares(5), (4, 1));
    }

    #[test]
    fn a_drained_middle_counts_and_is_never_kept() {
        // Records 1-2 shown, 3-6 drained, 7-8 shown.
        let t = "id,name\n1,a\n2,b\n7,g\n8,h\n";
        let r = Records::split(t, true).around(16, 4);
        assert_eq!(r.count(), 8);
        assert_eq!(r.cut(8, 0), (16, 16));
        assert_eq!(r.cut(3, 1), (16, 16));
        assert_eq!(r.cut(2, 1), (16, 20));
        assert_eq!(
            (r.index_of(12, false), r.index_of(16, false), r.index_of(16, true), r.index_of(20, true)),
            (1, 2, 6, 7)
        );
    }
}

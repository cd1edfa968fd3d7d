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
        Self { header_end, starts, len: b.len() }
    }

    /// Records in all.
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// The byte cut that keeps `head` records from the start and `tail`
    /// from the end (header always kept).
    pub fn cut(&self, head: usize, tail: usize) -> (usize, usize) {
        let n = self.count();
        if head + tail >= n {
            return (self.len, self.len);
        }
        let head_end = if head == 0 { self.header_end } else { self.starts[head] };
        let tail_start = if tail == 0 { self.len } else { self.starts[n - tail] };
        (head_end, tail_start)
    }

    /// Index (from 0) of the record holding byte `off`.
    pub fn index_of(&self, off: usize) -> usize {
        self.starts.partition_point(|&s| s <= off).saturating_sub(1)
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
        assert_eq!(r.index_of(12), 1);
        assert_eq!(shares(5), (4, 1));
    }
}

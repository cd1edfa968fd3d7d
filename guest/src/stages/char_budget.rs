//! The character budget: head and tail, line-aware.
//!
//! When the text has more than `max-chars` characters, the first
//! `head-chars` and the last `tail-chars` are kept. A cut moves to the
//! nearest line boundary inside the kept part when that keeps at least half
//! of it, so line-oriented output shows whole lines; otherwise (one huge
//! line) it cuts on a character boundary. Cost: one counting pass plus
//! two short scans.

use crate::support::located::Cut;
use crate::support::text::{byte_of_char, char_count};

/// Moves a head end back to just after a newline, if that keeps ≥ half.
pub fn snap_head(text: &str, end: usize) -> (usize, bool) {
    if end == 0 || end >= text.len() || text.as_bytes()[end - 1] == b'\n' {
        return (end, true);
    }
    match memchr::memrchr(b'\n', &text.as_bytes()[..end]) {
        Some(p) if p + 1 >= end / 2 => (p + 1, true),
        _ => (end, false),
    }
}

/// Moves a tail start forward to just after a newline, if that keeps ≥ half.
pub fn snap_tail(text: &str, start: usize) -> (usize, bool) {
    if start == 0 || start >= text.len() || text.as_bytes()[start - 1] == b'\n' {
        return (start, true);
    }
    let kept = text.len() - start;
    match memchr::memchr(b'\n', &text.as_bytes()[start..]) {
        Some(p) if p < kept / 2 => (start + p + 1, true),
        _ => (start, false),
    }
}

/// The char-budget cut of `text`, and whether it fell on line boundaries.
pub fn cut(text: &str, max_chars: u32, head_chars: u32, tail_chars: u32) -> (Cut, bool) {
    let none = (Cut::none(text.len()), true);
    if text.len() <= max_chars as usize {
        return none; // bytes ≥ chars
    }
    let total = char_count(text);
    if total <= max_chars as usize {
        return none;
    }
    let head = byte_of_char(text, head_chars as usize);
    let tail = byte_of_char(text, total - tail_chars as usize);
    let (head, h_lines) = snap_head(text, head);
    let (tail, t_lines) = snap_tail(text, tail);
    (Cut { head_end: head, tail_start: tail.max(head) }, h_lines && t_lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_whole_lines() {
        let text: String = (0..1000).map(|i| format!("line {i:04}\n")).collect();
        let (c, lines) = cut(&text, 2000, 1200, 400);
        assert!(lines && c.is_cut());
        assert!(text[..c.head_end].ends_with('\n'));
        assert!(text[..c.tail_start].ends_with('\n'));
        assert!(char_count(&text[..c.head_end]) <= 1200);
        assert!(char_count(&text[c.tail_start..]) <= 400);
    }

    #[test]
    fn long_line_cuts_on_char_boundary() {
        let text = "€".repeat(5000);
        let (c, lines) = cut(&text, 1000, 600, 200);
        assert!(!lines);
        assert!(text.is_char_boundary(c.head_end) && text.is_char_boundary(c.tail_start));
        assert_eq!(char_count(&text[..c.head_end]), 600);
        assert_eq!(char_count(&text[c.tail_start..]), 200);
    }

    #[test]
    fn fits() {
        assert!(!cut("short", 1000, 600, 200).0.is_cut());
    }
}

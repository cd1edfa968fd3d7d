//! The token budget over everything the model will see.
//!
//! The budget covers the final text: boundary, error line, markers and
//! content. The check is exact on the rendered output, so marker digits and
//! the re-tokenization at the joins are accounted for:
//!
//! 1. Render the char-budget cut. If its byte length is within the budget
//!    (a token is at least one byte), or the upper bound of `token_bound`
//!    (the rule engine's `support/token_bound.rs`) is, it fits without
//!    tokenizing.
//! 2. Otherwise count, stopping once over the budget. If it fits, done.
//! 3. Otherwise measure the overhead (the render with no content), share the
//!    rest between head and tail in the char budget's proportion, and find
//!    the token boundaries from the start of the head and the end of the
//!    tail (moved to character, then line, boundaries).
//! 4. Render and count again; while over, shrink both shares by the excess
//!    and retry. After a few rounds the content goes entirely. The minimum
//!    budget is larger than any one marker, but not always than all of them
//!    (a cut, the byte cap, notes and an untrusted frame at 256 tokens): then
//!    the summary line that opens the text goes too, and a tool error's
//!    line keeps its code and a marker only.

use crate::stages::char_budget::{snap_head, snap_tail};
use crate::stages::wrap::{Rendered, Renderer};
use crate::support::located::Cut;
use crate::support::tokenizer::Tokenizer;

/// Outcome of fitting.
pub struct Fitted {
    /// The rendered output (with the cut finally applied).
    pub rendered: Rendered,
    /// Its token count, when counted.
    pub tokens: Option<u64>,
    /// Whether every cut fell on a line boundary.
    pub whole_lines: bool,
}

/// Fits `text`, already cut by the char budget as `initial`, to `budget`
/// tokens as `r` renders it.
pub fn fit(
    text: &str,
    initial: Cut,
    initial_lines: bool,
    budget: u32,
    head_share: f64,
    tok: Tokenizer<'_>,
    r: &Renderer,
) -> Fitted {
    let render = |cut: Cut| r.render(cut);
    let budget = budget as usize;
    let rendered = render(initial);
    // Proved without tokenizing (byte length or bound), or counted, with
    // counting stopped once over the budget: a large text costs about
    // `budget` tokens of work here, not its whole length.
    if let Some(n) = tok.count_within(rendered.text.as_str(), budget) {
        return Fitted { rendered, tokens: n.map(|n| n as u64), whole_lines: initial_lines };
    }
    let empty = Cut { head_end: 0, tail_start: text.len() };
    let overhead = tok.count(render(empty).text.as_str());
    // Marker digits can grow a little once content is back: keep a margin.
    let mut avail = budget.saturating_sub(overhead + 16);
    for _round in 0..12 {
        let head_k = (avail as f64 * head_share).floor() as usize;
        let tail_k = avail - head_k;
        let (cut, lines) = cut_for_tokens(text, initial, head_k, tail_k, tok);
        let rendered = render(cut);
        let n = tok.count(rendered.text.as_str());
        if n <= budget {
            return Fitted { rendered, tokens: Some(n as u64), whole_lines: lines };
        }
        let excess = n - budget;
        let next = avail.saturating_sub(excess + 8 + avail / 50);
        if next == 0 || next >= avail {
            break;
        }
        avail = next;
    }
    let rendered = render(empty);
    let n = tok.count(rendered.text.as_str());
    if n > budget {
        // The markers alone are over a small budget (several cuts, notes,
        // an untrusted frame): the summary line and a tool error's message
        // go; each cut keeps its own marker.
        let terse = r.render_terse(empty);
        let m = tok.count(terse.text.as_str());
        if m < n {
            return Fitted { rendered: terse, tokens: Some(m as u64), whole_lines: true };
        }
    }
    Fitted { rendered, tokens: Some(n as u64), whole_lines: true }
}

/// Head of `head_k` tokens from the start, tail of `tail_k` from the end,
/// both inside the char-budget cut `initial`.
fn cut_for_tokens(text: &str, initial: Cut, head_k: usize, tail_k: usize, tok: Tokenizer<'_>) -> (Cut, bool) {
    let head_region = &text[..initial.head_end];
    // A cut (or one around a drained middle) bounds the tail region.
    let tail_from = if initial.is_cut() || initial.tail_start < text.len() { initial.tail_start } else { 0 };
    let tail_region = &text[tail_from..];
    let head_end = tok.prefix_bytes(head_region, head_k);
    let (head_end, h_lines) = snap_head(text, head_end);
    let tail_len = tok.suffix_bytes(tail_region, tail_k);
    let tail_start = text.len() - tail_len;
    let (tail_start, t_lines) = snap_tail(text, tail_start);
    let tail_start = tail_start.max(head_end).max(tail_from);
    (Cut { head_end, tail_start }, h_lines && t_lines)
}

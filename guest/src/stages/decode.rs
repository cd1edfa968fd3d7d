//! Decoding: the bytes read become text.
//!
//! Invalid UTF-8 is replaced by U+FFFD and counted, never dropped; the
//! offset map from decoding lets every later position be reported in bytes
//! of the original input, and the line index answers "which line is byte
//! N on" (see [`crate::support::text`]).

use crate::record;
use crate::support::edits::OffsetMap;
use crate::support::text::{self, Lines};

/// The decoded text, the way back, and its sizes.
pub(crate) struct Decoded {
    /// The text.
    pub text: String,
    /// Text offsets → bytes read.
    pub map: OffsetMap,
    /// Its lines.
    pub lines: Lines,
    /// Sizes for the record (`defanged` is set by redaction).
    pub stats: record::Decoded,
}

/// Decodes the bytes read.
pub(crate) fn run(read: &[u8]) -> Decoded {
    let d = text::decode(read);
    let lines = Lines::new(&d.text);
    let stats = record::Decoded {
        chars: text::char_count(&d.text) as u64,
        lines: lines.count(),
        invalid: d.invalid,
        defanged: 0,
    };
    Decoded { text: d.text, map: d.map, lines, stats }
}

//! Tokenizing without fancy-regex: the same tokens as tiktoken-rs's
//! `encode_ordinary`, several times faster in wasm.
//!
//! tiktoken splits text into pieces by one regex, then byte-pair-merges
//! each piece. Both o200k and cl100k patterns end in `\s+(?!\S)|\s+`, and
//! that one look-ahead makes the whole pattern a fancy-regex program: a
//! backtracking VM that tries each alternative in turn at every piece.
//! In wasm that split was most of the tokenizer's time (`docs/benchmarks.md`).
//!
//! **The split.** The pattern without `\s+(?!\S)` (its last alternative
//! `\s+`; cl100k's also without possessive quantifiers) is a plain regex; an
//! anchored lazy-DFA search (regex-automata) from the end of one piece
//! finds the end of the next, one forward scan per piece. It splits as the
//! full pattern does except at one place: a run of two or more whitespace
//! characters, none a line break, followed by a non-space. The full
//! pattern leaves the run's last character to start the next piece (so
//! `"  x"` is `" "`, `" x"`); the plain one takes the whole run. Only the
//! `\s+` alternative yields such a piece (every earlier one needs a
//! letter, digit, symbol or line break), so such a piece, unless it ends
//! the text, gives back its last character. The property test below holds
//! this against tiktoken for both encodings.
//!
//! Most pieces are ASCII, and a DFA search per piece spends its time
//! starting: [`split_ascii`] decides those pieces with a class table and
//! a few loops, and leaves the DFA every piece it would have to read a
//! non-ASCII byte for. A second property test checks, piece by piece,
//! that it ends each piece where the DFA does.
//!
//! **The merge.** A piece that is one token (most are) is found in a hash
//! table of every token's bytes. Any other piece is byte-pair merged over
//! that table by tiktoken's rule: of the adjacent parts, the pair whose
//! joined bytes are the lowest-ranked token merges first (the leftmost of
//! equal ones), until no joined pair is a token. Handing such a piece to
//! tiktoken would split it with fancy-regex again. `O(n²)` in the piece's
//! length, as tiktoken's is; the tokenizer's chunks bound it.
//!
//! **Cost.** A token of one or two bytes has its rank in a direct table
//! (256 KiB, of which a log reads a few pages); the others are 8-byte
//! entries in a `hashbrown` table that hold a token of up to four bytes
//! whole, and for a longer one where its bytes are in one buffer; built
//! with the tokenizer's own tables (snapshotted at build time for o200k).
//! A piece costs one DFA scan over it and one lookup: at most two reads in
//! megabytes of table for most pieces, where an entry that held only a rank
//! took four (`docs/benchmarks.md`, session 38).

use std::hash::BuildHasher;
use std::sync::OnceLock;

use hashbrown::HashTable;
use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};
use rustc_hash::FxBuildHasher;
use tiktoken_rs::{CoreBPE, Rank};

use crate::api::Encoding;
use crate::support::split_ascii;
use crate::support::text::same_bytes;

/// The look-ahead alternative the plain pattern goes without.
const LOOKAHEAD: &str = r"|\s+(?!\S)";

/// cl100k's pattern as tiktoken-rs writes it (not exported), without the
/// look-ahead, its last `\s` as `\s+`, and its possessive quantifiers
/// greedy: each possessive one is followed by a class it excludes, so
/// giving back could never match.
const CL100K_PLAIN: &str =
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+";

/// The split pattern and token table of one encoding.
pub struct Pieces {
    enc: Encoding,
    re: Regex,
    /// The bytes of every token longer than [`INLINE`] bytes, one after
    /// another.
    bytes: Vec<u8>,
    /// Ordinary tokens of three bytes or more, found by their bytes.
    table: HashTable<Entry>,
    /// The rank + 1 of each one- and two-byte token, by its bytes (`b` at
    /// `b`, `b0 b1` at 256 + `b0 << 8 | b1`), 0 for none. Most pieces of a
    /// log are that short (a digit, a `-`): one read in a table whose
    /// used part stays in the cache.
    short: Box<[u32]>,
}

/// Tokens this long or shorter keep their bytes in their [`Entry`].
const INLINE: usize = 4;

/// A token of the table, in one word: its bytes when it has at most
/// [`INLINE`] (little-endian, in the low 32 bits), else where they start in
/// [`Pieces::bytes`]; its rank (bits 32 to 55) and length (the top 8 bits).
/// A short piece is then found with two memory reads (the table's control
/// bytes and the entry), where a rank that pointed into a table of
/// offsets, then into the bytes, took four: the table is megabytes, and
/// each read a likely cache miss.
#[derive(Clone, Copy)]
struct Entry(u64);

impl Entry {
    fn new(rank: Rank, len: usize, payload: u32) -> Option<Self> {
        (rank < 1 << 24 && len < 1 << 8).then(|| Entry(u64::from(payload) | u64::from(rank) << 32 | (len as u64) << 56))
    }
    fn len(self) -> usize {
        (self.0 >> 56) as usize
    }
    fn rank(self) -> Rank {
        (self.0 >> 32) as Rank & 0xFF_FFFF
    }
    fn payload(self) -> u32 {
        self.0 as u32
    }
    /// Its bytes; `long` is [`Pieces::bytes`].
    fn bytes(self, long: &[u8]) -> std::borrow::Cow<'_, [u8]> {
        if self.len() <= INLINE {
            std::borrow::Cow::Owned(self.payload().to_le_bytes()[..self.len()].to_vec())
        } else {
            std::borrow::Cow::Borrowed(&long[self.payload() as usize..][..self.len()])
        }
    }
}

/// Where a one- or two-byte token's rank is in [`Pieces::short`].
fn short_index(b: &[u8]) -> Option<usize> {
    match *b {
        [x] => Some(usize::from(x)),
        [x, y] => Some(256 + (usize::from(x) << 8 | usize::from(y))),
        _ => None,
    }
}

/// The bytes of a piece of at most [`INLINE`] bytes, as an [`Entry`] holds
/// them.
fn inline_bytes(b: &[u8]) -> u32 {
    b.iter().rev().fold(0, |w, &x| w << 8 | u32::from(x))
}

/// The table's hash of a token's bytes: a multiply for the short ones
/// that most pieces are, FxHash for the rest.
fn hash_bytes(b: &[u8]) -> u64 {
    if b.len() <= 7 {
        let w = b.iter().rev().fold(b.len() as u64, |w, &x| w << 8 | u64::from(x));
        let x = w.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // hashbrown reads the top bits and the bottom ones: fold the
        // well-mixed top half down.
        x ^ x >> 32
    } else {
        FxBuildHasher.hash_one(b)
    }
}

/// Ranks of an encoding, special tokens included: every rank below this
/// decodes or is unused, none above does (a test checks both).
fn rank_end(enc: Encoding) -> Rank {
    match enc {
        Encoding::O200kBase => 200_019,
        Encoding::Cl100kBase => 100_277,
    }
}

/// The plain split pattern of `enc`, or `None` if tiktoken's o200k
/// pattern no longer has the shape this module relies on.
fn plain_pattern(enc: Encoding) -> Option<String> {
    match enc {
        Encoding::O200kBase => {
            let full = tiktoken_rs::O200K_BASE_PAT_STR;
            (full.matches(LOOKAHEAD).count() == 1 && full.ends_with(r"|\s+(?!\S)|\s+"))
                .then(|| full.replace(LOOKAHEAD, ""))
        }
        Encoding::Cl100kBase => Some(CL100K_PLAIN.to_string()),
    }
}

impl Pieces {
    /// The pieces of `enc`, built on first use; `None` if tiktoken's
    /// pattern is not the shape the split relies on (then tiktoken alone
    /// tokenizes).
    pub fn get(enc: Encoding, bpe: &CoreBPE) -> Option<&'static Pieces> {
        static O200K: OnceLock<Option<Pieces>> = OnceLock::new();
        static CL100K: OnceLock<Option<Pieces>> = OnceLock::new();
        let cell = match enc {
            Encoding::O200kBase => &O200K,
            Encoding::Cl100kBase => &CL100K,
        };
        cell.get_or_init(|| Self::build(enc, bpe)).as_ref()
    }

    fn build(enc: Encoding, bpe: &CoreBPE) -> Option<Self> {
        let re = Regex::new(&plain_pattern(enc)?).ok()?;
        let specials = bpe.special_tokens();
        // Made at their full size first: the pre-initialised component's
        // snapshot keeps every heap byte written, freed or not, so nothing
        // here grows by copying or goes through a list on the way.
        let end = rank_end(enc);
        let mut bytes = Vec::with_capacity(end as usize * 8);
        let mut table = HashTable::with_capacity(end as usize);
        let mut short = vec![0u32; 256 + (1 << 16)].into_boxed_slice();
        for r in 0..end {
            let Ok(b) = bpe.decode_bytes(&[r]) else { continue };
            if std::str::from_utf8(&b).is_ok_and(|s| specials.contains(s)) {
                continue;
            }
            if let Some(i) = short_index(&b) {
                short[i] = r.checked_add(1)?;
                continue;
            }
            let payload = if b.len() <= INLINE {
                inline_bytes(&b)
            } else {
                let at = u32::try_from(bytes.len()).ok()?;
                bytes.extend_from_slice(&b);
                at
            };
            let e = Entry::new(r, b.len(), payload)?;
            table.insert_unique(hash_bytes(&b), e, |e| hash_bytes(&e.bytes(&bytes)));
        }
        Some(Pieces { enc, re, bytes, table, short })
    }

    /// The tokens of `text`, as `bpe.encode_ordinary(text)` gives them.
    pub fn encode(&self, bpe: &CoreBPE, text: &str) -> Vec<Rank> {
        let mut out = Vec::with_capacity(text.len() / 3);
        let mut at = 0;
        while at < text.len() {
            let end = match split_ascii::piece_end(self.enc, text.as_bytes(), at) {
                Some(end) => end,
                None => match self.search(text, at) {
                    Some(end) => end,
                    // Every character starts a piece; should one not,
                    // tiktoken takes the rest as it would have.
                    None => {
                        out.extend(bpe.encode_ordinary(&text[at..]));
                        return out;
                    }
                },
            };
            let piece = &text[at..end];
            match self.rank(piece.as_bytes()) {
                Some(r) => out.push(r),
                None => {
                    if !self.merge(piece.as_bytes(), &mut out) {
                        out.extend(bpe.encode_ordinary(piece));
                    }
                }
            }
            at = end;
        }
        out
    }

    /// Where the piece that starts at `at` ends, by the plain pattern's
    /// DFA and the look-ahead's rule (for text [`split_ascii`] leaves).
    fn search(&self, text: &str, at: usize) -> Option<usize> {
        let input = Input::new(text).range(at..).anchored(Anchored::Yes);
        let end = self.re.search_half(&input).map(|m| m.offset()).filter(|&e| e > at)?;
        Some(if end < text.len() { spaces_give_back(&text[at..end]).map_or(end, |k| at + k) } else { end })
    }

    /// The rank of the token whose bytes are `b`, if one is.
    fn rank(&self, b: &[u8]) -> Option<Rank> {
        if let Some(i) = short_index(b) {
            return self.short[i].checked_sub(1);
        }
        let h = hash_bytes(b);
        let e = if b.len() <= INLINE {
            let w = inline_bytes(b);
            self.table.find(h, |e| e.len() == b.len() && e.payload() == w)
        } else {
            // An entry of this length holds an offset (`b` is longer than
            // an inline token); compared without wasm's `memcmp` call.
            self.table.find(h, |e| e.len() == b.len() && same_bytes(&self.bytes[e.payload() as usize..][..b.len()], b))
        };
        e.map(|e| e.rank())
    }

    /// Pushes the tokens of `piece` (see the module docs, "The merge");
    /// false, with nothing pushed, should a byte not be a token (every
    /// byte is one in both encodings).
    fn merge(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let joined = |s: usize, e: usize| self.rank(&piece[s..e]).unwrap_or(Rank::MAX);
        // Part `i` is `piece[at[i]..at[i + 1]]`; `pair[i]` ranks parts
        // `i` and `i + 1` joined.
        let mut at: Vec<usize> = (0..=piece.len()).collect();
        let mut pair: Vec<Rank> = (0..piece.len().saturating_sub(1)).map(|i| joined(i, i + 2)).collect();
        // `min_by_key` returns the first of equal minima: the leftmost.
        while let Some((i, _)) = pair.iter().enumerate().filter(|&(_, &r)| r != Rank::MAX).min_by_key(|&(_, &r)| r) {
            at.remove(i + 1);
            pair.remove(i);
            if i > 0 {
                pair[i - 1] = joined(at[i - 1], at[i + 1]);
            }
            if i < pair.len() {
                pair[i] = joined(at[i], at[i + 2]);
            }
        }
        let start = out.len();
        for w in at.windows(2) {
            match self.rank(&piece[w[0]..w[1]]) {
                Some(r) => out.push(r),
                None => {
                    out.truncate(start);
                    return false;
                }
            }
        }
        true
    }
}

/// Where the look-ahead would have ended `piece` (a plain-pattern piece
/// followed by more text): before its last character, if it is two or
/// more whitespace characters and no line break.
fn spaces_give_back(piece: &str) -> Option<usize> {
    let mut last = 0;
    for (i, c) in piece.char_indices() {
        if !c.is_whitespace() || c == '\r' || c == '\n' {
            return None;
        }
        last = i;
    }
    (last > 0).then_some(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bpe(enc: Encoding) -> &'static CoreBPE {
        match enc {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        }
    }

    fn same(enc: Encoding, s: &str) {
        let b = bpe(enc);
        let p = Pieces::get(enc, b).expect("the patterns have the shape");
        // Compared without printing the text: it may be a source file.
        assert!(p.encode(b, s) == b.encode_ordinary(s), "{enc:?}: tokens differ on a text of {} bytes", s.len());
    }

    #[test]
    fn ranks_end_where_the_encodings_do() {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let b = bpe(enc);
            let end = rank_end(enc);
            assert!(b.decode_bytes(&[end - 1]).is_ok(), "{enc:?}: the last rank decodes");
            assert!((end..end + 1000).all(|r| b.decode_bytes(&[r]).is_err()), "{enc:?}: nothing past the end");
        }
    }

    #[test]
    fn whitespace_runs_split_as_the_lookahead_does() {
        let cases = [
            "a  b",
            "a   b",
            "a \n  b",
            "\t\tx",
            "  ",
            "x  ",
            "x \u{3000}\u{3000}y",
            "\r\n  \r\n",
            "a\u{a0}\u{a0}b",
            "  123",
            "   !x",
            "\n\n   fn main() {}\n",
            "x \t \t",
            "don't  DON'T   we'LL",
            "é  ́x",
            "日本  語",
            "a\u{2028}  b",
            " ",
            "\u{85}  x",
            "  \u{1F600}  ",
            "x\n    ",
            "x\n\t\t",
            "a \n \n  ",
            "it's it'\u{17f} IT'\u{17f}",
        ];
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for c in cases {
                same(enc, c);
            }
        }
    }

    #[test]
    fn this_repository_tokenizes_the_same() {
        // Real text nobody wrote for this test: the crate's own sources
        // and the project's docs.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in ["guest/src", "host/src", "docs", "rules"] {
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if let Ok(s) = std::fs::read_to_string(&p) {
                        files.push(s);
                    }
                }
            }
        }
        assert!(files.len() > 50, "found {} files", files.len());
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for f in &files {
                same(enc, f);
            }
        }
    }

    /// The same check over a tree of real text given by hand (not run
    /// by `make test`: the corpus is not in the repository), e.g.
    /// `TOKENS_CORPUS=~/.cargo/registry/src cargo test --release -p
    /// result-sanitizer-pipeline --lib -- --ignored corpus_tokenizes_the_same`.
    /// UTF-8 files up to 256 KiB; prints how many files and bytes.
    #[test]
    #[ignore]
    fn corpus_tokenizes_the_same() {
        let root = std::env::var("TOKENS_CORPUS").expect("TOKENS_CORPUS names a directory");
        let (mut files, mut bytes) = (0usize, 0usize);
        let mut stack = vec![std::path::PathBuf::from(root)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                let Ok(m) = e.metadata() else { continue };
                if m.is_dir() {
                    stack.push(p);
                } else if m.is_file() && m.len() <= 256 << 10 {
                    if let Ok(s) = std::fs::read_to_string(&p) {
                        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                            same(enc, &s);
                        }
                        files += 1;
                        bytes += s.len();
                    }
                }
            }
        }
        println!("{files} files, {bytes} bytes: the same tokens in both encodings");
    }

    fn texts() -> impl Strategy<Value = String> {
        let atoms = prop::sample::select(vec![
            " ", "  ", "\t", "\n", "\r\n", "\r", "\u{a0}", "\u{3000}", "\u{2028}", "\u{85}", "\u{b}", "\u{c}", "a",
            "Z", "hello", "World", "'s", "'LL", "'t", "x'", "1", "12", "1234", "٣", "²", "!", "...", "//", "/", "{",
            "é", "e\u{301}", "\u{301}", "日本", "😀", "_", "-", "\u{200b}", "'re", "'Ve", "'d", "'M", "'", "ABC",
            "ABc", "aBC", "\u{17f}", "\u{212a}", "\u{1}", "\u{7f}", "/\n", "!/", "\t!", " x",
        ]);
        prop::collection::vec(atoms, 0..64).prop_map(|v| v.concat())
    }

    /// Mostly ASCII a character at a time, for the split without a regex
    /// (`split_ascii`): every ASCII byte, the letters of contractions, and
    /// now and then a character it must leave to the DFA.
    fn ascii_texts() -> impl Strategy<Value = String> {
        let c = prop_oneof![
            4 => (0x20u8..0x7f).prop_map(char::from),
            2 => prop::sample::select(vec!['\'', 's', 'S', 'r', 'E', 'v', 'l', 'L', 'd', 'm', 't', ' ', 'A', '7', '/']),
            2 => prop::sample::select(vec!['\t', '\n', '\r', '\u{b}', '\u{c}', '\0', '\u{1f}', '\u{7f}']),
            1 => prop::sample::select(vec!['é', 'ſ', '\u{212a}', '\u{a0}', '\u{2028}', '٣', '😀', '\u{301}', '—']),
        ];
        prop::collection::vec(c, 0..200).prop_map(|v| v.into_iter().collect())
    }

    /// Both encodings give `s` tiktoken-rs's tokens.
    fn tiktoken_agrees(s: &str) -> Result<(), TestCaseError> {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let b = bpe(enc);
            let p = Pieces::get(enc, b).expect("the patterns have the shape");
            prop_assert_eq!(p.encode(b, s), b.encode_ordinary(s), "{:?}", enc);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn same_tokens_as_tiktoken(s in texts()) {
            tiktoken_agrees(&s)?;
        }

        /// The split itself, piece by piece (equal tokens could hide a
        /// different split): wherever `split_ascii` decides a piece, it
        /// ends where the DFA and the look-ahead's rule end it.
        #[test]
        fn ascii_pieces_end_where_the_dfa_ends_them(s in ascii_texts()) {
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let p = Pieces::get(enc, bpe(enc)).expect("the patterns have the shape");
                let mut at = 0;
                while let Some(end) = p.search(&s, at) {
                    if let Some(e) = split_ascii::piece_end(enc, s.as_bytes(), at) {
                        prop_assert_eq!(e, end, "{:?} at {}", enc, at);
                    }
                    at = end;
                }
                prop_assert_eq!(at, s.len());
            }
        }

        #[test]
        fn mostly_ascii_tokenizes_the_same(s in ascii_texts()) {
            tiktoken_agrees(&s)?;
        }
    }
}

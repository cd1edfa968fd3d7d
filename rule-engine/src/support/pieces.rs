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
//! **The merge.** A piece that is one token (most are) is found in a hash
//! table of every token's bytes. Any other piece is byte-pair merged over
//! that table by tiktoken's rule: of the adjacent parts, the pair whose
//! joined bytes are the lowest-ranked token merges first (the leftmost of
//! equal ones), until no joined pair is a token. Handing such a piece to
//! tiktoken would split it with fancy-regex again. `O(n²)` in the piece's
//! length, as tiktoken's is; the tokenizer's chunks bound it.
//!
//! **Cost.** The table holds each token's bytes once, in one buffer, and
//! 4-byte ranks in a `hashbrown` table: about 3.4 MiB for o200k, built
//! with the tokenizer's own tables (snapshotted at build time for o200k).
//! A piece costs one DFA scan over it and one hash lookup.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use hashbrown::HashTable;
use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};
use rustc_hash::FxBuildHasher;
use tiktoken_rs::{CoreBPE, Rank};

use crate::api::Encoding;

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
    re: Regex,
    /// Every token's bytes, by rank: rank `r` is `bytes[starts[r]..starts[r + 1]]`
    /// (empty for a rank that is not an ordinary token).
    bytes: Vec<u8>,
    starts: Vec<u32>,
    /// Ordinary ranks, found by their bytes.
    table: HashTable<Rank>,
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
        let end = rank_end(enc);
        let mut bytes = Vec::with_capacity(end as usize * 8);
        let mut starts = Vec::with_capacity(end as usize + 1);
        let mut ranks = Vec::with_capacity(end as usize);
        for r in 0..end {
            starts.push(u32::try_from(bytes.len()).ok()?);
            let Ok(b) = bpe.decode_bytes(&[r]) else { continue };
            if std::str::from_utf8(&b).is_ok_and(|s| specials.contains(s)) {
                continue;
            }
            bytes.extend_from_slice(&b);
            ranks.push(r);
        }
        starts.push(u32::try_from(bytes.len()).ok()?);
        let mut p = Pieces { re, bytes, starts, table: HashTable::with_capacity(ranks.len()) };
        for r in ranks {
            let h = FxBuildHasher.hash_one(p.token(r));
            let Pieces { table, bytes, starts, .. } = &mut p;
            table.insert_unique(h, r, |&x| {
                FxBuildHasher.hash_one(&bytes[starts[x as usize] as usize..starts[x as usize + 1] as usize])
            });
        }
        Some(p)
    }

    fn token(&self, r: Rank) -> &[u8] {
        &self.bytes[self.starts[r as usize] as usize..self.starts[r as usize + 1] as usize]
    }

    /// The tokens of `text`, as `bpe.encode_ordinary(text)` gives them.
    pub fn encode(&self, bpe: &CoreBPE, text: &str) -> Vec<Rank> {
        let mut out = Vec::with_capacity(text.len() / 3);
        let mut at = 0;
        while at < text.len() {
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            let end = match self.re.search_half(&input) {
                Some(m) if m.offset() > at => m.offset(),
                // Every character starts a piece; should one not, tiktoken
                // takes the rest as it would have.
                _ => {
                    out.extend(bpe.encode_ordinary(&text[at..]));
                    return out;
                }
            };
            let end = if end < text.len() { spaces_give_back(&text[at..end]).map_or(end, |k| at + k) } else { end };
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

    /// The rank of the token whose bytes are `b`, if one is.
    fn rank(&self, b: &[u8]) -> Option<Rank> {
        let h = FxBuildHasher.hash_one(b);
        self.table.find(h, |&r| self.token(r) == b).copied()
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
            "é", "e\u{301}", "\u{301}", "日本", "😀", "_", "-", "\u{200b}",
        ]);
        prop::collection::vec(atoms, 0..64).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn same_tokens_as_tiktoken(s in texts()) {
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let b = bpe(enc);
                let p = Pieces::get(enc, b).expect("the patterns have the shape");
                prop_assert_eq!(p.encode(b, &s), b.encode_ordinary(&s), "{:?}", enc);
            }
        }
    }
}

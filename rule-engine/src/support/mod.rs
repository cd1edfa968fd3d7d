//! Helpers of the engine that the pipeline shares: replacements with
//! offset maps, text positions and boundaries, content types and regions of
//! named files, the tokenizer (its split, its token table, its chunks and
//! its upper bound), and the error words.

pub mod chunks;
pub mod code;
pub mod edits;
pub mod encodings;
pub mod error_words;
pub mod json;
pub mod pieces;
pub mod regions;
pub mod sniff;
pub mod split_ascii;
pub mod text;
pub mod token_bound;
pub mod tokenizer;

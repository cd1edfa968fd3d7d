//! sha256 as lowercase hex: the one way the host names bytes by their hash
//! (pack files, signed ranges, key ids, the embedded pipeline's cache copy,
//! kept outputs' files). `host/build.rs` keeps its own copy: a build script
//! is a separate compilation unit and cannot use the host's dependencies.

use sha2::{Digest, Sha256};

/// sha256 of `bytes`, 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Bytes as lowercase hex, two digits each (keys and signatures in
/// `signing` are written this way too).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|x| format!("{x:02x}")).collect()
}

//! A redacted value as a report shows it: a keyed hash (HMAC-SHA256 under
//! the caller's key, its first 8 bytes in hex), never the value. The one
//! definition, for the record's sites and a host's stream report alike.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// A value as a report shows it: HMAC-SHA256 under `key`, its first 8
/// bytes in hex. The one definition, for the record's sites and a host's
/// stream report alike.
pub fn value_hash(key: &[u8], value: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(value);
    mac.finalize().into_bytes()[..8].iter().map(|x| format!("{x:02x}")).collect()
}

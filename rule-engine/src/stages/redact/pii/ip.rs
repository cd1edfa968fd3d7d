//! IP addresses.
//!
//! An IPv4 address is four decimal octets (0-255, no leading zeros)
//! joined by dots, not part of a longer dotted run (`1.2.3.4.5` is a
//! version) and not glued to a letter or digit. An IPv6 address is what
//! the standard library parses as one, written with at least two colons
//! between hex digits, not glued to a word.
//!
//! By default only addresses that point into someone's own network are
//! taken: private (RFC 1918), shared (100.64/10), link-local (169.254/16,
//! fe80::/10) and unique-local (fc00::/7). With public addresses asked for,
//! every address that routes on the internet is taken too (IPv4 outside
//! 0/8, 127/8 and 224/3; IPv6 in 2000::/3). Loopback, unspecified,
//! broadcast and multicast addresses name no one and stay. Missed: an
//! address with a zone (`fe80::1%eth0` keeps the zone's name after a
//! replaced address), IPv4 in other notations (hex, one integer).

use std::net::{Ipv4Addr, Ipv6Addr};

/// Whether the four octets `o` are an address to take.
pub(super) fn v4(o: [u8; 4], public: bool) -> bool {
    let a = Ipv4Addr::from(o);
    let shared = o[0] == 100 && (64..128).contains(&o[1]);
    if a.is_private() || a.is_link_local() || shared {
        return true;
    }
    public && !(o[0] == 0 || a.is_loopback() || o[0] >= 224)
}

/// The IPv6 addresses in `text` to take, as byte ranges.
pub(super) fn find_v6(text: &str, public: bool, out: &mut Vec<std::ops::Range<usize>>) {
    let b = text.as_bytes();
    let part = |c: u8| c.is_ascii_hexdigit() || c == b':' || c == b'.';
    let glued = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut done = 0;
    for colon in memchr::memchr_iter(b':', b) {
        if colon < done {
            continue;
        }
        let mut s = colon;
        while s > 0 && part(b[s - 1]) {
            s -= 1;
        }
        let mut e = colon;
        while e < b.len() && part(b[e]) {
            e += 1;
        }
        done = e;
        // A sentence's full stop is not part of the address.
        let mut end = e;
        while end > s && b[end - 1] == b'.' {
            end -= 1;
        }
        let token = &text[s..end];
        if token.bytes().filter(|&c| c == b':').count() < 2
            || (s > 0 && glued(b[s - 1]))
            || (e < b.len() && glued(b[e]))
        {
            continue;
        }
        if let Ok(a) = token.parse::<Ipv6Addr>() {
            if take_v6(a, public) {
                out.push(s..end);
            }
        }
    }
}

fn take_v6(a: Ipv6Addr, public: bool) -> bool {
    let first = a.segments()[0];
    let unique_local = first & 0xfe00 == 0xfc00;
    let link_local = first & 0xffc0 == 0xfe80;
    if unique_local || link_local {
        return true;
    }
    if let Some(mapped) = a.to_ipv4_mapped() {
        return v4(mapped.octets(), public);
    }
    public && first & 0xe000 == 0x2000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(text: &str, public: bool) -> Vec<&str> {
        let mut out = Vec::new();
        find_v6(text, public, &mut out);
        out.into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn private_by_default_public_when_asked() {
        assert!(v4([10, 1, 2, 3], false) && v4([192, 168, 0, 9], false) && v4([100, 64, 0, 1], false));
        assert!(!v4([8, 8, 8, 8], false) && v4([8, 8, 8, 8], true));
        assert!(!v4([127, 0, 0, 1], true) && !v4([255, 255, 255, 0], true) && !v4([0, 0, 0, 0], true));
        assert_eq!(v6("from fd12:3456:789a::10 and 2001:db8::1.", false), ["fd12:3456:789a::10"]);
        assert_eq!(v6("from fe80::1 and [2606:4700::1111]:443.", true), ["fe80::1", "2606:4700::1111"]);
        // Code and clocks: `std::fmt`, `12:30:45`, `a::b`, MAC addresses.
        assert!(v6("use std::fmt; at 12:30:45 a::b de:ad:be:ef:00:01 ::1", true).is_empty());
    }
}

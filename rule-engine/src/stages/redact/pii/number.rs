//! A window of a run of digits ([`Number`]), as the pass over the text
//! (the parent module) hands it to the detectors. Its own module so that
//! the detectors (`phone`, `ssn`) take it from below, not from the module
//! that calls them.

/// A window of a run: the digits, how they are grouped, the separators.
pub(super) struct Number<'a> {
    /// The digits of every group, in order.
    pub digits: &'a [u8],
    /// Digits per group.
    pub groups: &'a [usize],
    /// The separator after each group but the last.
    pub seps: &'a [&'a [u8]],
    /// Written after a `+`.
    pub plus: bool,
    /// Written after a `(` (`(415) 555-0132`).
    pub paren: bool,
}

//! The record builder (see crate::pipeline).

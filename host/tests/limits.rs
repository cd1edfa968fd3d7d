//! Hostile packs against the real limits: fuel, epoch deadline, memory cap;
//! and the next call after a trap is served normally.

mod common;

use std::time::Duration;

use result_sanitizer::pack_build::{self, DetectCode, RulesFile};
use result_sanitizer::{Error, Guest, Limits, Sanitizer};
use wasm_encoder::{BlockType, Instruction as I};

fn hostile(name: &str, body: Vec<I<'static>>) -> Vec<u8> {
    let rules = RulesFile::parse("hostile.toml", "").unwrap();
    let id = rules.identity(Some(name), Some("0.0.1"), Some("*")).unwrap();
    pack_build::build_with_code(&rules, &id, Some(DetectCode { locals: vec![], body })).unwrap()
}

fn infinite_loop() -> Vec<I<'static>> {
    vec![I::Loop(BlockType::Empty), I::Br(0), I::End, I::Unreachable, I::End]
}

fn grow_forever() -> Vec<I<'static>> {
    vec![
        I::Loop(BlockType::Empty),
        I::I32Const(1),
        I::MemoryGrow(0),
        I::I32Const(-1),
        I::I32Eq,
        I::If(BlockType::Empty),
        I::Unreachable,
        I::End,
        I::Br(0),
        I::End,
        I::Unreachable,
        I::End,
    ]
}

fn served_normally(s: &Sanitizer) {
    let out = s.sanitize(b"key AKIAQ3EGRTZ7MBXK4WNP", &common::opts("x")).expect("next call is served");
    assert!(out.message.contains("[REDACTED:aws-access-key-id]"));
}

#[test]
fn looping_pack_is_stopped_by_fuel() {
    let s = Sanitizer::new(Limits { pack_fuel: 5_000_000, timeout: Duration::from_secs(60), ..Limits::default() }).unwrap();
    let pack = s.load_pack_unverified(&hostile("spinner", infinite_loop())).unwrap();
    for _ in 0..2 {
        let e = s.sanitize_with(&pack, b"some text", &common::opts("x")).unwrap_err();
        assert!(matches!(&e, Error::Fuel { guest: Guest::Pack(n), limit: 5_000_000 } if n == "spinner"), "{e}");
        assert_eq!(e.to_string(), "rule pack `spinner` ran out of fuel (limit 5000000 units)");
        served_normally(&s);
    }
}

#[test]
fn looping_pack_is_stopped_by_the_epoch_deadline() {
    let limits = Limits { fuel: u64::MAX / 4, pack_fuel: u64::MAX / 4, timeout: Duration::from_millis(300), ..Limits::default() };
    let s = Sanitizer::new(limits).unwrap();
    let pack = s.load_pack_unverified(&hostile("sleeper", infinite_loop())).unwrap();
    let t = std::time::Instant::now();
    let e = s.sanitize_with(&pack, b"some text", &common::opts("x")).unwrap_err();
    assert!(matches!(&e, Error::Timeout { guest: Guest::Pack(n), ms: 300 } if n == "sleeper"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10));
    served_normally(&s);
}

#[test]
fn growing_pack_is_stopped_by_the_memory_cap() {
    let s = Sanitizer::new(Limits { pack_memory: 4 << 20, ..Limits::default() }).unwrap();
    let pack = s.load_pack_unverified(&hostile("balloon", grow_forever())).unwrap();
    let e = s.sanitize_with(&pack, b"some text", &common::opts("x")).unwrap_err();
    assert!(matches!(&e, Error::Memory { guest: Guest::Pack(n), bytes } if n == "balloon" && *bytes == 4 << 20), "{e}");
    served_normally(&s);
    // The trapped instance was replaced: the pack fails the same way again.
    let e = s.sanitize_with(&pack, b"again", &common::opts("x")).unwrap_err();
    assert!(matches!(e, Error::Memory { .. }));
}

#[test]
fn pipeline_fuel_is_enforced_too() {
    let s = Sanitizer::new(Limits { fuel: 100_000, ..Limits::default() }).unwrap();
    let input = "x".repeat(100_000);
    let e = s.sanitize(input.as_bytes(), &common::opts("x")).unwrap_err();
    assert!(matches!(e, Error::Fuel { guest: Guest::Pipeline, .. }), "{e}");
}

#[test]
fn a_pack_whose_regex_does_not_compile_is_a_typed_error() {
    // Bypass the builder's validation, as a hostile pack would.
    let mut rules = RulesFile::parse("p.toml", "[pack]\nname='broken'\nversion='1'\ntenant='*'\n").unwrap();
    let bad: pack_build::RuleToml = toml::from_str(
        "id = 'broken'\nregex = '(unclosed'\nkeywords = ['x']\nexamples = ['x']\ncounter_examples = ['y']\n",
    )
    .unwrap();
    rules.rules.push(toml::Spanned::new(0..0, bad));
    let id = rules.identity(None, None, None).unwrap();
    let wasm = pack_build::build(&rules, &id).unwrap();
    let s = Sanitizer::new(Limits::default()).unwrap();
    let pack = s.load_pack_unverified(&wasm).unwrap();
    let e = s.sanitize_with(&pack, b"x marks the spot", &common::opts("x")).unwrap_err();
    assert!(matches!(&e, Error::InvalidPack(m) if m.contains("broken")), "{e}");
    served_normally(&s);
}

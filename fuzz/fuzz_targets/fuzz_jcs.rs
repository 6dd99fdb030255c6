//! Fuzz `jcs_digest`: for any bytes the strict reader never panics; whatever it accepts can be
//! canonicalized and digested, and bytes → parse_strict → canonicalize → parse_strict →
//! canonicalize reaches a fixed point after one step.
#![no_main]

use jcs_digest::{
    Profile, StrictJsonErrorKind, canonicalize, parse_strict, tool_definition_preimage,
};
use libfuzzer_sys::fuzz_target;

/// Whether `literal` is the canonical text of an integral double of magnitude in
/// [2^53, 1e21): the one kind of canonical text the strict reader refuses by design (an
/// integer literal outside ±(2^53−1), docs/design.md §2).
fn is_large_integral_double(literal: &str) -> bool {
    literal
        .trim_start_matches('-')
        .bytes()
        .all(|b| b.is_ascii_digit())
        && literal
            .parse::<f64>()
            .is_ok_and(|x| x.abs() >= 9_007_199_254_740_992.0 && x.abs() < 1e21 && x.fract() == 0.0)
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = parse_strict(data) else {
        return;
    };
    // Everything the strict reader accepts has canonical bytes.
    let canonical = canonicalize(&value).expect("a strictly read value canonicalizes");
    if value.is_object() {
        let preimage = tool_definition_preimage(&value, Profile::Trace)
            .expect("a strictly read object has a tool digest preimage");
        assert!(preimage.starts_with(br#"{"profile":"trace.mcp-tool-definition.v1","tool":{"#));
        assert!(preimage.ends_with(b"}}"));
    }
    match parse_strict(&canonical) {
        Ok(reread) => {
            let again = canonicalize(&reread).expect("canonical bytes canonicalize");
            assert_eq!(again, canonical, "canonicalization is not idempotent");
        }
        Err(error) => match error.kind() {
            StrictJsonErrorKind::IntegerOutOfRange { literal, .. } => {
                assert!(is_large_integral_double(literal), "{error}");
            }
            _ => panic!("canonical bytes refused by the strict reader: {error}"),
        },
    }
});

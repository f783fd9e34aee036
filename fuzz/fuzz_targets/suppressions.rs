#![no_main]
//! The suppression-comment scanner, on arbitrary bytes, and the queries the
//! pipeline makes of its result.
use libfuzzer_sys::fuzz_target;
use unsnarl::filter::suppressions::{Suppressions, parse_bytes};

fuzz_target!(|data: &[u8]| {
    let s = parse_bytes(data);
    for (line, code) in s.codes() {
        let _ = unsnarl::filter::selection::Code::parse(code);
        let _ = s.suppresses(line, &|c| c == code);
    }
    for d in &s.directives {
        let _ = s.suppresses(d.line.saturating_add(1), &|_| true);
    }
    let _ = s.suppresses(u32::MAX, &|_| true);
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(Suppressions::parse(text), s);
    }
});

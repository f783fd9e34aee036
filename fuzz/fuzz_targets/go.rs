#![no_main]
use libfuzzer_sys::fuzz_target;
use unsnarl_model::Language;

fuzz_target!(|data: &[u8]| {
    unsnarl_fuzz::analyze(data, Language::Go, "pkg/main.go");
});

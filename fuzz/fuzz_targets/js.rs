#![no_main]
//! JavaScript and TypeScript share a front end; the file name picks the
//! dialect (JSX, TypeScript, TSX). The variant comes from the input's length
//! so that a seed keeps its bytes and a crash reproduces from its file.
use libfuzzer_sys::fuzz_target;
use unsnarl_model::Language;

fuzz_target!(|data: &[u8]| {
    let (lang, path) = match data.len() % 4 {
        0 => (Language::JavaScript, "src/app.js"),
        1 => (Language::JavaScript, "src/app.jsx"),
        2 => (Language::TypeScript, "src/app.ts"),
        _ => (Language::TypeScript, "src/app.tsx"),
    };
    unsnarl_fuzz::analyze(data, lang, path);
});

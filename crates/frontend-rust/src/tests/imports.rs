//! `use` and `extern crate` forms → `FileModel::imports` and resolution.

use super::util::*;

fn imports(m: &unsnarl_model::FileModel) -> Vec<(String, String)> {
    m.imports
        .iter()
        .map(|i| (i.local.to_string(), i.target.to_string()))
        .collect()
}

fn has(m: &unsnarl_model::FileModel, local: &str, target: &str) -> bool {
    imports(m).contains(&(local.to_string(), target.to_string()))
}

#[test]
fn simple_use() {
    let m = lower("use std::sync::Mutex;");
    assert_eq!(
        imports(&m),
        vec![("Mutex".into(), "std::sync::Mutex".into())]
    );
}

#[test]
fn use_list_with_rename() {
    let m = lower("use std::sync::{Arc, Mutex as M};");
    assert!(has(&m, "Arc", "std::sync::Arc"));
    assert!(has(&m, "M", "std::sync::Mutex"));
    assert_eq!(m.imports.len(), 2);
}

#[test]
fn use_self_in_list() {
    let m = lower("use tokio::sync::mpsc::{self, channel};");
    assert!(has(&m, "mpsc", "tokio::sync::mpsc"));
    assert!(has(&m, "channel", "tokio::sync::mpsc::channel"));
}

#[test]
fn nested_lists() {
    let m = lower("use std::{sync::{atomic::{AtomicBool, Ordering}, Arc}, thread};");
    assert!(has(&m, "AtomicBool", "std::sync::atomic::AtomicBool"));
    assert!(has(&m, "Ordering", "std::sync::atomic::Ordering"));
    assert!(has(&m, "Arc", "std::sync::Arc"));
    assert!(has(&m, "thread", "std::thread"));
}

#[test]
fn glob_use() {
    let m = lower("use tokio::prelude::*;");
    assert!(has(&m, "*", "tokio::prelude"));
}

#[test]
fn crate_self_super_paths() {
    let m = lower_at(
        "src/net/conn.rs",
        "use crate::db::Pool;\nuse self::inner::Thing;\nuse super::util::helper;\nuse super::super::top;\n",
    );
    assert!(has(&m, "Pool", "crate::db::Pool"));
    assert!(has(&m, "Thing", "crate::net::conn::inner::Thing"));
    assert!(has(&m, "helper", "crate::net::util::helper"));
    assert!(has(&m, "top", "crate::top"));
}

#[test]
fn pub_use_and_leading_colons() {
    let m = lower("pub use ::std::thread::spawn;\npub(crate) use tokio::time::sleep as tsleep;");
    assert!(has(&m, "spawn", "std::thread::spawn"));
    assert!(has(&m, "tsleep", "tokio::time::sleep"));
}

#[test]
fn extern_crate_forms() {
    let m = lower("extern crate tokio as rt;\nextern crate serde;\nfn f() { rt::spawn(x); }");
    assert!(has(&m, "rt", "tokio"));
    assert!(has(&m, "serde", "serde"));
    assert_eq!(target(&m, "spawn"), Some("tokio::spawn"));
}

#[test]
fn underscore_import_is_recorded_but_not_bound() {
    let m = lower("use std::io::Write as _;\nfn f() { Write::flush(x); }");
    assert!(has(&m, "_", "std::io::Write"));
    // `Write` itself is not in scope, and capitalized unknowns stay unresolved.
    assert_eq!(target(&m, "flush"), None);
}

#[test]
fn core_and_alloc_normalize_to_std() {
    let m = lower("use core::sync::atomic::AtomicUsize;\nuse alloc::sync::Arc;");
    assert!(has(&m, "AtomicUsize", "std::sync::atomic::AtomicUsize"));
    assert!(has(&m, "Arc", "std::sync::Arc"));
}

#[test]
fn use_through_an_earlier_import_or_local_module() {
    // Uniform paths: `use` can start from a name already in scope.
    let m = lower("use std::sync;\nuse sync::Mutex;\nmod db;\nuse db::query;");
    assert!(has(&m, "Mutex", "std::sync::Mutex"));
    assert!(has(&m, "query", "crate::db::query"));
}

#[test]
fn block_level_use_is_scoped_to_the_block() {
    let m = lower("fn a() { use std::thread::sleep; sleep(d); }\nfn b() { sleep(d); }");
    assert!(has(&m, "sleep", "std::thread::sleep"));
    let (_, a) = func(&m, "a");
    let (_, b) = func(&m, "b");
    let target_in = |f: &unsnarl_model::Function| {
        unsnarl_model::walk::calls_in_block(&m, &f.body)
            .into_iter()
            .map(|c| m.call(c).unwrap().target.clone())
            .next()
            .flatten()
    };
    assert_eq!(target_in(a).as_deref(), Some("std::thread::sleep"));
    assert_eq!(target_in(b), None);
}

#[test]
fn import_spans_cover_the_use_tree() {
    let text = "use std::sync::{Arc, Mutex as M};";
    let m = lower(text);
    let spans: Vec<&str> = m.imports.iter().map(|i| text_of(text, i.span)).collect();
    assert_eq!(spans, vec!["Arc", "Mutex as M"]);
}

#[test]
fn use_inside_inline_module_resolves_against_it() {
    let m = lower_at(
        "src/a.rs",
        "mod inner { use super::helper; use self::deep::x; pub fn f() { helper(); } }\nfn helper() {}",
    );
    assert!(has(&m, "helper", "crate::a::helper"));
    assert!(has(&m, "x", "crate::a::inner::deep::x"));
    assert_eq!(target(&m, "helper"), Some("crate::a::helper"));
}

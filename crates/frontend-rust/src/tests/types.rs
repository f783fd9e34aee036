//! Declared types (`TypeRef`): text as written, resolved interesting type.

use super::util::*;

/// The resolved type of the single field of `struct S` declared after `prelude`.
fn field_type(prelude: &str, ty: &str) -> unsnarl_model::TypeRef {
    let m = lower(&format!("{prelude}\nstruct S {{ f: {ty} }}"));
    let t = m.types.iter().find(|t| t.name == "S").unwrap();
    t.fields[0].ty.clone()
}

#[test]
fn peels_smart_pointers_and_options() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            "use std::sync::{Arc, Mutex};",
            "Arc<Mutex<Inner>>",
            Some("std::sync::Mutex"),
        ),
        (
            "use std::sync::Mutex;",
            "Mutex<u8>",
            Some("std::sync::Mutex"),
        ),
        (
            "use tokio::sync::Mutex;",
            "std::sync::Arc<Mutex<u8>>",
            Some("tokio::sync::Mutex"),
        ),
        (
            "use std::sync::RwLock;",
            "Option<Box<RwLock<u8>>>",
            Some("std::sync::RwLock"),
        ),
        (
            "use std::rc::Rc; use std::cell::RefCell;",
            "Rc<RefCell<u8>>",
            Some("std::cell::RefCell"),
        ),
        (
            "use std::sync;",
            "sync::Mutex<u8>",
            Some("std::sync::Mutex"),
        ),
        (
            "",
            "tokio::sync::mpsc::Sender<u8>",
            Some("tokio::sync::mpsc::Sender"),
        ),
        ("", "&'static str", None),
        ("", "*const u8", None),
        ("", "String", Some("std::string::String")),
        ("", "Arc<T>", None),
        ("", "Vec<u8>", Some("std::vec::Vec")),
        (
            "use std::sync::Mutex;",
            "&'a mut Mutex<u8>",
            Some("std::sync::Mutex"),
        ),
        (
            "",
            "Pin<Box<dyn Future<Output = ()> + Send>>",
            Some("std::future::Future"),
        ),
        ("", "impl Fn(u8) -> u8", Some("std::ops::Fn")),
        ("", "(u8, u8)", None),
        ("", "[u8; 4]", None),
    ];
    for (prelude, ty, want) in cases {
        let t = field_type(prelude, ty);
        assert_eq!(t.resolved.as_deref(), *want, "{ty} with {prelude:?}");
        assert_eq!(t.text, *ty);
    }
}

#[test]
fn multiline_types_are_normalized() {
    let t = field_type("", "Vec<\n    // comment\n    u8,\n>");
    assert_eq!(t.text, "Vec< u8, >");
}

#[test]
fn self_and_local_types() {
    let m = lower(
        "struct Inner;\nstruct S { i: Box<Inner> }\nimpl S { fn get(&self) -> &Self { self } }",
    );
    assert_eq!(
        m.types[1].fields[0].ty.resolved.as_deref(),
        Some("crate::Inner")
    );
    let (_, get) = func(&m, "get");
    assert_eq!(
        get.returns.as_ref().unwrap().resolved.as_deref(),
        Some("crate::S")
    );
}

#[test]
fn param_and_return_types() {
    let m = lower(
        "use std::sync::mpsc::Receiver;\nfn f(rx: Receiver<u8>, n: usize) -> Result<std::fs::File, E> { todo!() }",
    );
    let (_, f) = func(&m, "f");
    assert_eq!(
        f.params[0].ty.as_ref().unwrap().resolved.as_deref(),
        Some("std::sync::mpsc::Receiver")
    );
    assert_eq!(f.params[1].ty.as_ref().unwrap().resolved, None);
    assert_eq!(
        f.returns.as_ref().unwrap().resolved.as_deref(),
        Some("std::fs::File")
    );
}

#[test]
fn declared_types_of_lets_and_statics() {
    let m = lower(
        "use std::sync::{Arc, Mutex};\nuse once_cell::sync::Lazy;\n\
         static M: Lazy<Mutex<u8>> = Lazy::new(|| Mutex::new(0));\n\
         const N: usize = 3;\n\
         fn f() { let x: Arc<Mutex<u8>> = make(); let (a, b): (u8, u8) = (1, 2); let y = 1; }",
    );
    let decl: Vec<(String, Option<String>)> = m
        .declared_types
        .iter()
        .map(|(e, t)| {
            (
                m.name_of(*e).unwrap().to_string(),
                t.resolved.as_deref().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        decl,
        vec![
            ("M".to_string(), Some("std::sync::Mutex".to_string())),
            ("N".to_string(), None),
            ("x".to_string(), Some("std::sync::Mutex".to_string())),
        ]
    );
}

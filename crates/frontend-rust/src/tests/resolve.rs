//! Call targets and name resolution.

use super::util::*;
use unsnarl_model::ExprKind;

#[test]
fn imported_module_path_call() {
    let m = lower("use std::thread;\nfn f() { thread::sleep(d); }");
    assert_eq!(target(&m, "sleep"), Some("std::thread::sleep"));
    let c = call(&m, "sleep");
    assert!(c.receiver.is_none());
    match &m.expr(c.func).kind {
        ExprKind::Path { text, resolved } => {
            assert_eq!(text, "thread::sleep");
            assert_eq!(resolved.as_deref(), Some("std::thread::sleep"));
        }
        k => panic!("func is {k:?}"),
    }
}

#[test]
fn full_paths_and_unimported_crates() {
    let m =
        lower("fn f() { std::thread::sleep(d); tokio::spawn(fut); ::tokio::task::yield_now(); }");
    assert_eq!(target(&m, "sleep"), Some("std::thread::sleep"));
    assert_eq!(target(&m, "spawn"), Some("tokio::spawn"));
    assert_eq!(target(&m, "yield_now"), Some("tokio::task::yield_now"));
}

#[test]
fn imported_type_associated_fn() {
    let m = lower("use std::sync::Mutex;\nfn f() { let m = Mutex::new(0); }");
    assert_eq!(target(&m, "new"), Some("std::sync::Mutex::new"));
}

#[test]
fn turbofish_is_dropped_from_path_text() {
    let m = lower("fn f() { let v = Vec::<u8>::with_capacity(3); }");
    assert_eq!(
        target(&m, "with_capacity"),
        Some("std::vec::Vec::with_capacity")
    );
    let c = call(&m, "with_capacity");
    assert!(
        matches!(&m.expr(c.func).kind, ExprKind::Path { text, .. } if text == "Vec::with_capacity")
    );
}

#[test]
fn local_types_and_functions() {
    let m = lower_at(
        "src/store.rs",
        "struct Foo;\nimpl Foo { fn new() -> Self { Foo } fn make() -> Self { Self::new() } }\nfn helper() {}\nfn f() { Foo::new(); helper(); }",
    );
    let targets: Vec<_> = calls(&m)
        .iter()
        .map(|(_, c)| (c.name.clone(), c.target.clone()))
        .collect();
    assert!(targets.contains(&("new".into(), Some("crate::store::Foo::new".into()))));
    assert!(targets.contains(&("helper".into(), Some("crate::store::helper".into()))));
    // `Self::new()` inside the impl.
    let (_, make) = func(&m, "make");
    let inner = unsnarl_model::walk::calls_in_block(&m, &make.body);
    assert_eq!(
        m.call(inner[0]).unwrap().target.as_deref(),
        Some("crate::store::Foo::new")
    );
}

#[test]
fn items_declared_after_use_site_resolve() {
    let m = lower("fn f() { later(); }\nfn later() {}");
    assert_eq!(target(&m, "later"), Some("crate::later"));
}

#[test]
fn method_calls_are_unresolved_with_receiver() {
    let m = lower("fn f(a: A) { a.b.c(1); }");
    let c = call(&m, "c");
    assert_eq!(c.target, None);
    let recv = c.receiver.expect("receiver");
    assert_eq!(m.dotted(recv).as_deref(), Some("a.b"));
    match &m.expr(c.func).kind {
        ExprKind::Attr { obj, name, .. } => {
            assert_eq!(*obj, recv);
            assert_eq!(name, "c");
        }
        k => panic!("func is {k:?}"),
    }
    assert_eq!(c.args.len(), 1);
}

#[test]
fn locals_shadow_imports() {
    let m = lower(
        "use std::thread::sleep;\nfn f(sleep: F) { sleep(); }\nfn g() { let spawn = make(); spawn(); }\nfn spawn() {}",
    );
    let c: Vec<_> = calls(&m)
        .into_iter()
        .filter(|(_, c)| c.name == "sleep" || c.name == "spawn")
        .map(|(_, c)| c.target.clone())
        .collect();
    assert_eq!(c, vec![None, None]);
}

#[test]
fn shadowing_starts_at_the_let() {
    let m = lower("fn helper() {}\nfn f() { helper(); let helper = 1; }");
    assert_eq!(target(&m, "helper"), Some("crate::helper"));
}

#[test]
fn names_and_paths_carry_resolution() {
    let m = lower(
        "use std::sync::atomic::Ordering;\nstatic X: u8 = 0;\nfn f(a: u8) { g(Ordering::Relaxed, X, a); }",
    );
    let c = call(&m, "g");
    let res: Vec<_> = c
        .args
        .iter()
        .map(|a| m.resolved(a.value).map(str::to_string))
        .collect();
    assert_eq!(
        res,
        vec![
            Some("std::sync::atomic::Ordering::Relaxed".to_string()),
            Some("crate::X".to_string()),
            None
        ]
    );
}

#[test]
fn generic_params_and_unknown_types_stay_unresolved() {
    let m = lower("fn f<T: Default>() -> T { T::default() }\nfn g() { Unknown::new(); }");
    assert_eq!(target(&m, "default"), None);
    assert_eq!(target(&m, "new"), None);
}

#[test]
fn prelude_names() {
    let m =
        lower("fn f(g: G) { drop(g); let v = Vec::new(); let s = Some(1); let b = Box::new(2); }");
    assert_eq!(target(&m, "drop"), Some("std::mem::drop"));
    assert_eq!(target(&m, "new"), Some("std::vec::Vec::new"));
    assert_eq!(target(&m, "Some"), Some("std::option::Option::Some"));
}

#[test]
fn inline_modules_nest_and_do_not_see_parent_names() {
    let m = lower_at(
        "src/app.rs",
        "use std::thread;\nfn top() {}\nmod inner {\n  pub fn f() { top(); thread::sleep(d); super::top(); crate::x::y(); }\n}",
    );
    let (_, f) = func(&m, "f");
    assert_eq!(f.qualname, "crate::app::inner::f");
    let targets: Vec<_> = unsnarl_model::walk::calls_in_block(&m, &f.body)
        .into_iter()
        .map(|c| m.call(c).unwrap().target.as_deref().map(str::to_string))
        .collect();
    // `thread` is not imported in `inner`: a lowercase unknown is taken as
    // a crate name.
    assert_eq!(
        targets,
        vec![
            None,
            Some("thread::sleep".to_string()),
            Some("crate::app::top".to_string()),
            Some("crate::x::y".to_string())
        ]
    );
}

#[test]
fn glob_from_parent_module_resolves() {
    let m = lower_at(
        "src/app.rs",
        "use std::thread;\nfn top() {}\n#[cfg(test)]\nmod tests {\n  use super::*;\n  #[test]\n  fn t() { top(); thread::sleep(d); }\n}",
    );
    assert_eq!(target(&m, "top"), Some("crate::app::top"));
    assert_eq!(target(&m, "sleep"), Some("std::thread::sleep"));
}

#[test]
fn type_alias_followed_in_types() {
    let m = lower(
        "use std::sync::{Arc, Mutex};\ntype Shared = Arc<Mutex<u8>>;\nstruct S { s: Shared }",
    );
    let t = &m.types[0];
    assert_eq!(t.fields[0].ty.resolved.as_deref(), Some("std::sync::Mutex"));
}

#[test]
fn self_type_paths_in_trait_default_methods() {
    let m = lower("trait T { fn a() {} fn b() { Self::a(); } }");
    assert_eq!(target(&m, "a"), Some("crate::T::a"));
}

#[test]
fn anchored_paths() {
    let m = lower("struct Foo;\nfn f() { <Foo as Default>::default(); <Vec<u8>>::new(); }");
    assert_eq!(target(&m, "default"), Some("crate::Foo::default"));
    assert_eq!(target(&m, "new"), Some("std::vec::Vec::new"));
}

#[test]
fn enum_variant_patterns_resolve() {
    let m = lower(
        "enum State { Idle, Busy(u8) }\nfn f(s: State) { match s { State::Idle => {}, State::Busy(n) => {}, None => {} } }",
    );
    let d = dump(&m);
    assert!(
        d.contains("pattern: path State::Idle =crate::State::Idle"),
        "{d}"
    );
    assert!(
        d.contains("child: path State::Busy =crate::State::Busy"),
        "{d}"
    );
    assert!(
        d.contains("pattern: name None =std::option::Option::None"),
        "{d}"
    );
}

#[test]
fn unit_struct_and_const_as_ident_patterns() {
    let m = lower("const MAX: u8 = 9;\nfn f(x: u8) { match x { MAX => {}, other => { other; } } }");
    let d = dump(&m);
    assert!(d.contains("pattern: name MAX =crate::MAX"), "{d}");
    assert!(d.contains("pattern: name other\n"), "{d}");
}

#[test]
fn tests_files_module_path() {
    let m = lower_at(
        "tests/integration.rs",
        "fn helper() {}\n#[test]\nfn t() { helper(); }",
    );
    assert_eq!(m.module, "crate::tests::integration");
    assert_eq!(
        target(&m, "helper"),
        Some("crate::tests::integration::helper")
    );
}

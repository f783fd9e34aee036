//! Functions, methods, closures, async blocks, types declared by items,
//! attributes and test detection.

use super::util::*;
use unsnarl_model::{ExprKind, FnKind, StmtKind};

#[test]
fn module_function_and_funcdef() {
    let text = "/// doc\n#[inline]\npub async fn fetch(url: &str, n: u32) -> Result<String, E> { get(url).await }";
    let m = lower_at("src/net.rs", text);
    assert_eq!(m.module, "crate::net");
    let (fid, f) = func(&m, "fetch");
    assert_eq!(f.kind, FnKind::Function);
    assert!(f.is_async);
    assert_eq!(f.qualname, "crate::net::fetch");
    assert_eq!(f.parent, Some(unsnarl_model::FuncId(0)));
    assert_eq!(text_of(text, f.name_span), "fetch");
    assert!(text_of(text, f.span).starts_with("pub async fn"));
    let params: Vec<_> = f
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.ty.as_ref().unwrap().text.as_str()))
        .collect();
    assert_eq!(params, vec![("url", "&str"), ("n", "u32")]);
    assert_eq!(f.returns.as_ref().unwrap().text, "Result<String, E>");
    assert_eq!(f.decorators, vec!["inline"]);
    // The module body holds the FuncDef.
    let body = &m.functions[0].body;
    assert!(matches!(m.stmt(body[0]).kind, StmtKind::FuncDef(id) if id == fid));
    // The tail expression is returned.
    assert_eq!(kinds(&m, &f.body), vec!["return"]);
}

#[test]
fn impl_methods() {
    let text = "pub struct Server { n: u8 }\nimpl Server {\n  pub fn new() -> Self { Server { n: 0 } }\n  pub async fn run(&mut self, x: u8) {}\n}";
    let m = lower_at("src/srv.rs", text);
    let (_, new) = func(&m, "new");
    assert_eq!(new.kind, FnKind::Method);
    assert_eq!(new.qualname, "crate::srv::Server::new");
    assert_eq!(new.class.as_deref(), Some("crate::srv::Server"));
    assert_eq!(new.receiver, None);
    assert_eq!(
        new.returns.as_ref().unwrap().resolved.as_deref(),
        Some("crate::srv::Server")
    );
    let (_, run) = func(&m, "run");
    assert!(run.is_async);
    assert_eq!(run.receiver.as_deref(), Some("self"));
    assert_eq!(run.params.len(), 1, "self is the receiver, not a param");
    assert_eq!(run.parent, Some(unsnarl_model::FuncId(0)));
    // The struct is the class: one TypeDecl, one ClassDef, none for the impl.
    assert_eq!(m.types.len(), 1);
    assert_eq!(m.types[0].qualname, "crate::srv::Server");
    assert_eq!(kinds(&m, &m.functions[0].body), vec!["classdef"]);
}

#[test]
fn impl_of_a_type_declared_elsewhere_gets_a_type_decl() {
    let m = lower_at(
        "src/impls.rs",
        "use crate::db::Pool;\nimpl Pool { fn get(&self) {} }\nimpl std::fmt::Display for Pool { fn fmt(&self) {} }",
    );
    assert_eq!(m.types.len(), 1);
    assert_eq!(m.types[0].qualname, "crate::db::Pool");
    assert_eq!(m.types[0].name, "Pool");
    let (_, get) = func(&m, "get");
    assert_eq!(get.qualname, "crate::db::Pool::get");
    let (_, fmt) = func(&m, "fmt");
    assert_eq!(fmt.class.as_deref(), Some("crate::db::Pool"));
    assert_eq!(kinds(&m, &m.functions[0].body), vec!["classdef"]);
}

#[test]
fn generic_impl_and_reference_self_types() {
    let m = lower(
        "struct W<T>(T);\nimpl<T: Send> W<T> { fn a(&self) {} }\nimpl<'a> Tr for &'a W<u8> { fn b(&self) {} }",
    );
    assert_eq!(func(&m, "a").1.qualname, "crate::W::a");
    assert_eq!(func(&m, "b").1.qualname, "crate::W::b");
}

#[test]
fn trait_default_methods() {
    let m = lower("pub trait Store { fn get(&self) -> u8; async fn load(&self) { self.get(); } }");
    assert_eq!(m.types[0].qualname, "crate::Store");
    // Only the method with a body is a function.
    assert_eq!(m.functions.len(), 2);
    let (_, load) = func(&m, "load");
    assert_eq!(load.kind, FnKind::Method);
    assert_eq!(load.class.as_deref(), Some("crate::Store"));
    assert!(load.is_async);
    assert_eq!(load.qualname, "crate::Store::load");
}

#[test]
fn nested_functions() {
    let m = lower("fn outer() { fn inner() { deep(); } inner(); fn deep() {} }");
    let (outer_id, _) = func(&m, "outer");
    let (_, inner) = func(&m, "inner");
    assert_eq!(inner.qualname, "crate::outer::inner");
    assert_eq!(inner.parent, Some(outer_id));
    assert_eq!(target(&m, "inner"), Some("crate::outer::inner"));
    // Items of a block are visible before their definition.
    assert_eq!(target(&m, "deep"), Some("crate::outer::deep"));
    let (_, outer) = func(&m, "outer");
    assert_eq!(kinds(&m, &outer.body), vec!["funcdef", "expr", "funcdef"]);
}

#[test]
fn closures() {
    let text = "fn f() { let a = |x: u8| x + 1; let b = move || { g(); h() }; let c = async move |y| { y.await }; }";
    let m = lower(text);
    let (fid, _) = func(&m, "f");
    let closures: Vec<_> = m
        .functions
        .iter()
        .filter(|f| matches!(f.kind, FnKind::Closure | FnKind::AsyncBlock))
        .collect();
    assert_eq!(closures.len(), 3);
    let a = closures[0];
    assert_eq!(a.kind, FnKind::Closure);
    assert_eq!(a.parent, Some(fid));
    assert_eq!(a.qualname, "");
    assert_eq!(a.params[0].name, "x");
    assert_eq!(a.params[0].ty.as_ref().unwrap().text, "u8");
    assert_eq!(text_of(text, a.name_span), "|x: u8|");
    // Expression body → one Return.
    assert_eq!(kinds(&m, &a.body), vec!["return"]);
    // Block body: statements, tail returned.
    assert_eq!(kinds(&m, &closures[1].body), vec!["expr", "return"]);
    let c = closures[2];
    assert_eq!(c.kind, FnKind::AsyncBlock);
    assert!(c.is_async);
    assert_eq!(text_of(text, c.name_span), "async move |y|");
}

#[test]
fn closure_returning_async_block() {
    let m = lower("fn f() { spawn(|| async move { work().await }); }");
    let c = call(&m, "spawn");
    let ExprKind::Closure(cl) = m.expr(c.args[0].value).kind else {
        panic!()
    };
    let closure = m.func(cl);
    assert_eq!(closure.kind, FnKind::Closure);
    let StmtKind::Return(Some(ret)) = m.stmt(closure.body[0]).kind else {
        panic!()
    };
    let ExprKind::Closure(ab) = m.expr(ret).kind else {
        panic!()
    };
    let block = m.func(ab);
    assert_eq!(block.kind, FnKind::AsyncBlock);
    assert!(block.is_async);
    assert_eq!(block.parent, Some(cl));
}

#[test]
fn async_blocks() {
    let text = "fn f() { let fut = async move { a().await; b() }; tokio::spawn(async { c().await }); async {}; }";
    let m = lower(text);
    let blocks: Vec<_> = m
        .function_ids()
        .filter(|&i| m.func(i).kind == FnKind::AsyncBlock)
        .collect();
    assert_eq!(blocks.len(), 3);
    let first = m.func(blocks[0]);
    assert!(first.is_async);
    assert_eq!(text_of(text, first.name_span), "async move");
    assert_eq!(kinds(&m, &first.body), vec!["expr", "return"]);
    // A discarded async block is an expression statement holding the closure.
    let (_, f) = func(&m, "f");
    let last = *f.body.last().unwrap();
    let StmtKind::Expr(e) = m.stmt(last).kind else {
        panic!()
    };
    assert!(matches!(m.expr(e).kind, ExprKind::Closure(_)));
}

#[test]
fn structs_enums_unions_types() {
    let m = lower(
        "use std::sync::{Arc, Mutex};\nstruct A { m: Arc<Mutex<u8>>, n: u32 }\nstruct T(Mutex<u8>, String);\nstruct U;\nenum E { X, Y(u8) }\nunion N { a: u8 }",
    );
    let q: Vec<_> = m.types.iter().map(|t| t.qualname.as_str()).collect();
    assert_eq!(
        q,
        vec!["crate::A", "crate::T", "crate::U", "crate::E", "crate::N"]
    );
    let a = &m.types[0];
    assert_eq!(a.fields[0].name, "m");
    assert_eq!(a.fields[0].ty.text, "Arc<Mutex<u8>>");
    assert_eq!(a.fields[0].ty.resolved.as_deref(), Some("std::sync::Mutex"));
    let t = &m.types[1];
    assert_eq!(t.fields[0].name, "0");
    assert_eq!(t.fields[1].name, "1");
    assert_eq!(
        t.fields[1].ty.resolved.as_deref(),
        Some("std::string::String")
    );
    assert_eq!(m.types[4].fields.len(), 1);
    assert_eq!(kinds(&m, &m.functions[0].body), vec!["classdef"; 5]);
}

#[test]
fn const_and_static_items() {
    let m = lower(
        "use std::sync::Mutex;\nstatic STATE: Mutex<u8> = Mutex::new(0);\nstatic mut N: u8 = 1;\nconst C: &str = \"x\";\nconst _: () = ();",
    );
    assert_dump_has(
        &m,
        &[
            "assign Declare { mutable: false }",
            "target: name STATE =crate::STATE",
            "value: call new =std::sync::Mutex::new",
            "assign Declare { mutable: true }",
            "target: name N =crate::N",
            "target: name C =crate::C",
            "value: lit Str(\"x\")",
            "target: name _",
        ],
    );
}

#[test]
fn associated_consts() {
    let m = lower("struct S;\nimpl S { const LIMIT: usize = compute(); }");
    assert_dump_has(
        &m,
        &["target: name LIMIT =crate::S::LIMIT", "value: call compute"],
    );
}

#[test]
fn attributes_become_decorators() {
    let m = lower(
        "use async_trait::async_trait;\n#[tokio::main(flavor = \"current_thread\", worker_threads = 2)]\nasync fn main() {}\n#[async_trait]\nimpl T for S { #[tracing::instrument(skip(self))] async fn m(&self) {} }\n#[cfg_attr(feature = \"x\", inline)]\nfn g() {}\n#[unsafe(no_mangle)]\nfn h() {}",
    );
    let (_, main) = func(&m, "main");
    assert_eq!(main.decorators, vec!["tokio::main"]);
    assert_eq!(main.decorator_calls.len(), 1);
    let c = m.call(main.decorator_calls[0]).unwrap();
    assert_eq!(c.target.as_deref(), Some("tokio::main"));
    let flavor = c.kwarg("flavor").unwrap();
    assert_eq!(
        m.literal(flavor),
        Some(&unsnarl_model::Lit::Str("current_thread".into()))
    );
    assert_eq!(
        c.kwarg("worker_threads").and_then(|e| m.int_value(e)),
        Some(2)
    );
    let (_, mm) = func(&m, "m");
    assert_eq!(mm.decorators, vec!["tracing::instrument"]);
    assert_eq!(func(&m, "g").1.decorators, vec!["inline"]);
    assert_eq!(func(&m, "h").1.decorators, vec!["no_mangle"]);
}

#[test]
fn test_functions_and_modules() {
    let m = lower(
        "fn prod() {}\n#[test]\nfn t1() { let c = || 1; }\n#[tokio::test]\nasync fn t2() {}\n#[cfg(test)]\nfn helper() {}\n#[cfg(test)]\nmod tests { fn inner() {} mod deeper { fn d() {} } }\n#[cfg(all(test, feature = \"x\"))]\nmod t2 { fn x() {} }\n#[cfg(not(test))]\nmod nt { fn y() {} }",
    );
    assert!(!m.is_test);
    let test_of = |n: &str| func(&m, n).1.is_test;
    assert!(!test_of("prod"));
    assert!(test_of("t1"));
    assert!(test_of("t2"));
    assert!(test_of("helper"));
    assert!(test_of("inner"));
    assert!(test_of("d"));
    assert!(test_of("x"));
    assert!(!test_of("y"));
    // Closures inside tests are test code.
    let closure = m
        .functions
        .iter()
        .find(|f| f.kind == FnKind::Closure)
        .unwrap();
    assert!(closure.is_test);
    assert_eq!(func(&m, "inner").1.qualname, "crate::tests::inner");
    assert_eq!(func(&m, "d").1.qualname, "crate::tests::deeper::d");
}

#[test]
fn test_files() {
    assert!(lower_at("tests/it.rs", "fn a() {}").is_test);
    let m = lower_at("tests/it.rs", "fn a() {}");
    assert!(func(&m, "a").1.is_test);
    assert!(lower_at("src/foo/tests.rs", "").is_test);
    assert!(!lower_at("src/foo.rs", "").is_test);
    // A whole file under `#![cfg(test)]`.
    let m = lower_at("src/foo.rs", "#![cfg(test)]\nfn a() {}");
    assert!(m.is_test);
    assert!(func(&m, "a").1.is_test);
}

#[test]
fn generated_files() {
    assert!(lower("// @generated by build.rs\nfn a() {}").is_generated);
    assert!(!lower("fn a() {}").is_generated);
}

#[test]
fn pattern_params() {
    let m = lower("fn f((a, b): (u8, u8), _: u8, mut c: u8) { a; b; c; }");
    let (_, f) = func(&m, "f");
    let names: Vec<_> = f.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["(a, b)", "_", "c"]);
}

#[test]
fn bodiless_functions_are_skipped() {
    let m = lower("extern \"C\" { fn ext(); }\ntrait T { fn decl(&self); }");
    assert_eq!(m.functions.len(), 1);
}

#[test]
fn functions_in_impls_inside_functions() {
    let m = lower("fn outer() { struct L; impl L { fn m(&self) {} } }");
    let (oid, _) = func(&m, "outer");
    let (_, meth) = func(&m, "m");
    assert_eq!(meth.class.as_deref(), Some("crate::outer::L"));
    assert_eq!(meth.parent, Some(oid));
    let (_, outer) = func(&m, "outer");
    assert_eq!(kinds(&m, &outer.body), vec!["classdef"]);
}

#[test]
fn cfg_test_impls_and_traits() {
    let m = lower(
        "struct S;\n#[cfg(test)]\nimpl S { fn helper(&self) {} }\nimpl S { fn prod(&self) {} }",
    );
    assert!(func(&m, "helper").1.is_test);
    assert!(!func(&m, "prod").1.is_test);
}

#[test]
fn gen_blocks_are_closures() {
    let m = lower("fn f() { let g = gen { yield 1; }; }");
    let g = m
        .functions
        .iter()
        .find(|f| f.is_generator)
        .expect("gen block");
    assert_eq!(g.kind, FnKind::Closure);
    assert!(!g.is_async);
}

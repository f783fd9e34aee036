use super::*;
use unsnarl_model::{CollKind, ExprKind, FnKind, StmtKind, TypeRef};

fn tr(text: &str, resolved: Option<&str>) -> TypeRef {
    TypeRef {
        text: text.into(),
        resolved: resolved.map(Into::into),
    }
}

#[test]
fn functions_get_qualnames_spans_and_module_funcdefs() {
    let src = "package store\n\nfunc Open(path string) error { return nil }\n";
    let m = lower_at("internal/store/db.go", src);
    assert_eq!(m.module, "internal/store");
    let (id, f) = func(&m, "Open");
    assert_eq!(f.kind, FnKind::Function);
    assert_eq!(f.qualname, "internal/store.Open");
    assert_eq!(f.parent, Some(FuncId(0)));
    assert!(!f.is_async);
    let ns = f.name_span;
    assert_eq!(&src[ns.start as usize..ns.end as usize], "Open");
    assert_eq!(
        &src[f.span.start as usize..f.span.end as usize],
        src[15..].trim_end()
    );
    assert_eq!(f.params.len(), 1);
    assert_eq!(f.params[0].name, "path");
    assert_eq!(f.params[0].ty, Some(tr("string", Some("string"))));
    assert_eq!(f.returns, Some(tr("error", Some("error"))));
    // The module body holds the declaration.
    let module = &m.functions[0];
    assert_eq!(module.kind, FnKind::Module);
    assert!(matches!(m.stmt(module.body[0]).kind, StmtKind::FuncDef(d) if d == id));
}

#[test]
fn root_package_module_is_the_package_name() {
    // A file at the scan root is named by its package clause (see
    // `lower` in src/lib.rs), not by its directory `.`.
    let m = lower_at("main.go", "package main\nfunc main() {}\n");
    assert_eq!(m.module, "main");
    assert_eq!(func(&m, "main").1.qualname, "main.main");
}

#[test]
fn methods_have_receiver_class_and_qualname() {
    let src = r#"package pkg
import "sync"
type Server struct {
	mu    sync.Mutex
	conns map[string]*Conn
}
func (s *Server) Close() error { return nil }
func (Server) Name() string { return "" }
func (l *List[T]) Push(v T) {}
"#;
    let m = lower(src);
    let (_, close) = func(&m, "Close");
    assert_eq!(close.kind, FnKind::Method);
    assert_eq!(close.qualname, "pkg.Server.Close");
    assert_eq!(close.class.as_deref(), Some("pkg.Server"));
    assert_eq!(close.receiver.as_deref(), Some("s"));
    assert_eq!(close.parent, Some(FuncId(0)));
    assert!(close.params.is_empty(), "the receiver is not a parameter");
    let (_, name) = func(&m, "Name");
    assert_eq!(name.receiver, None);
    assert_eq!(name.class.as_deref(), Some("pkg.Server"));
    let (_, push) = func(&m, "Push");
    assert_eq!(push.qualname, "pkg.List.Push");
    assert_eq!(push.receiver.as_deref(), Some("l"));
    // `T` is the receiver's type parameter, not a package type.
    assert_eq!(push.params[0].ty, Some(tr("T", None)));
}

#[test]
fn struct_types_record_fields() {
    let src = r#"package pkg
import (
	"sync"
	"context"
)
type Worker struct {
	sync.Mutex
	*Base
	wg         *sync.WaitGroup
	a, b       int `json:"a"`
	ch         chan<- int
	cancel     context.CancelFunc
	items      List[string]
	// a comment
	inner struct{ x int }
}
"#;
    let m = lower(src);
    assert_eq!(m.types.len(), 1);
    let t = &m.types[0];
    assert_eq!(t.name, "Worker");
    assert_eq!(t.qualname, "pkg.Worker");
    let fields: Vec<(&str, &TypeRef)> = t.fields.iter().map(|f| (f.name.as_str(), &f.ty)).collect();
    assert_eq!(
        fields,
        vec![
            ("Mutex", &tr("sync.Mutex", Some("sync.Mutex"))),
            ("Base", &tr("*Base", Some("pkg.Base"))),
            ("wg", &tr("*sync.WaitGroup", Some("sync.WaitGroup"))),
            ("a", &tr("int", Some("int"))),
            ("b", &tr("int", Some("int"))),
            ("ch", &tr("chan<- int", None)),
            (
                "cancel",
                &tr("context.CancelFunc", Some("context.CancelFunc"))
            ),
            ("items", &tr("List[string]", Some("pkg.List"))),
            ("inner", &tr("struct{ x int }", None)),
        ]
    );
    // The type is declared where it is written.
    assert_eq!(kinds(&m, &m.functions[0].body), vec!["classdef"]);
    let field_span = t.fields[2].span;
    assert_eq!(
        &src[field_span.start as usize..field_span.end as usize],
        "wg"
    );
}

#[test]
fn non_struct_types_interfaces_and_aliases() {
    let src = r#"package pkg
type (
	ID int
	Store interface { Get(k string) ([]byte, error) }
	Alias = ID
)
func (id ID) String() string { return "" }
"#;
    let m = lower(src);
    let names: Vec<&str> = m.types.iter().map(|t| t.qualname.as_str()).collect();
    assert_eq!(names, vec!["pkg.ID", "pkg.Store"]);
    assert!(m.types.iter().all(|t| t.fields.is_empty()));
    assert_eq!(
        kinds(&m, &m.functions[0].body),
        vec!["classdef", "classdef", "pass", "funcdef"]
    );
}

#[test]
fn local_types_are_scoped_to_their_function() {
    let src = r#"package pkg
func f() {
	type item struct{ n int }
	x := item{n: 1}
	_ = x
}
"#;
    let m = lower(src);
    assert_eq!(m.types[0].qualname, "pkg.f.item");
    assert_dump_has(
        &m,
        "class pkg.f.item
         assign Declare { mutable: true }
           target: name x
           value: Struct item=pkg.f.item
             [n]: lit Int(1)",
    );
}

#[test]
fn params_variadic_unnamed_and_results() {
    let src = r#"package pkg
import "sync"
func f(mu *sync.Mutex, a, b int, opts ...Option) (n int, err error) { return }
func g(int, string) {}
func h() (*sync.RWMutex) { return nil }
"#;
    let m = lower(src);
    let (_, f) = func(&m, "f");
    let params: Vec<(&str, Option<&TypeRef>)> = f
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.ty.as_ref()))
        .collect();
    assert_eq!(
        params,
        vec![
            ("mu", Some(&tr("*sync.Mutex", Some("sync.Mutex")))),
            ("a", Some(&tr("int", Some("int")))),
            ("b", Some(&tr("int", Some("int")))),
            ("opts", Some(&tr("...Option", None))),
        ]
    );
    assert_eq!(f.returns, Some(tr("(n int, err error)", None)));
    let (_, g) = func(&m, "g");
    assert_eq!(g.params.len(), 2);
    assert!(g.params.iter().all(|p| p.name.is_empty()));
    let (_, h) = func(&m, "h");
    assert_eq!(h.returns, Some(tr("(*sync.RWMutex)", Some("sync.RWMutex"))));
}

#[test]
fn func_literals_are_closures_with_parents() {
    let src = r#"package pkg
func f() {
	go func(n int) {
		defer func() { recover() }()
	}(1)
	cb := func() error { return nil }
	_ = cb
}
var handler = func() {}
"#;
    let m = lower(src);
    let (fid, _) = func(&m, "f");
    let closures: Vec<(FuncId, &Function)> = m
        .function_ids()
        .map(|id| (id, m.func(id)))
        .filter(|(_, f)| f.kind == FnKind::Closure)
        .collect();
    assert_eq!(closures.len(), 4);
    let (outer_id, outer) = closures[0];
    assert_eq!(outer.parent, Some(fid));
    assert_eq!(outer.params[0].name, "n");
    assert!(outer.name.is_empty() && outer.qualname.is_empty());
    let ns = outer.name_span;
    assert_eq!(&src[ns.start as usize..ns.end as usize], "func");
    assert_eq!(closures[1].1.parent, Some(outer_id));
    assert_eq!(closures[2].1.returns, Some(tr("error", Some("error"))));
    assert_eq!(closures[3].1.parent, Some(FuncId(0)));
    // `go func(){}()`: a call of the closure expression.
    assert_dump_has(
        &m,
        "go: call ?
           func: closure fn#2
           arg: lit Int(1)",
    );
    // recover() is inside the inner closure's body, not f's.
    let f_calls: Vec<String> = unsnarl_model::walk::calls_in_block(&m, &m.func(fid).body)
        .into_iter()
        .map(|c| m.call(c).unwrap().name.to_string())
        .collect();
    assert!(!f_calls.contains(&"recover".to_string()));
}

#[test]
fn package_level_var_and_const_declarations() {
    let src = r#"package pkg
import "sync"
var mu sync.Mutex
var (
	a, b = 1, 2
	once sync.Once
	cache = map[string]int{}
)
const (
	X = iota
	Y
)
const Z int = 3
"#;
    let m = lower(src);
    assert_dump_has(
        &m,
        "assign Declare { mutable: true }
           target: name mu =pkg.mu
           value: Struct sync.Mutex
         assign Declare { mutable: true }
           target: Tuple
             elem: name a =pkg.a
             elem: name b =pkg.b
           value: Tuple
             elem: lit Int(1)
             elem: lit Int(2)
         assign Declare { mutable: true }
           target: name once =pkg.once
           value: Struct sync.Once
         assign Declare { mutable: true }
           target: name cache =pkg.cache
           value: Dict map[string]int
         assign Declare { mutable: false }
           target: name X =pkg.X
           value: other
         assign Declare { mutable: false }
           target: name Y =pkg.Y
         assign Declare { mutable: false }
           target: name Z =pkg.Z
           value: lit Int(3)",
    );
}

#[test]
fn var_without_value_is_the_zero_value_of_its_type() {
    let m = lower_body(
        "import \"sync\"",
        "var wg sync.WaitGroup\nvar x, y int\nvar p *sync.Mutex",
    );
    let body = body_of(&m, "f");
    assert_eq!(kinds(&m, body), vec!["assign"; 4]);
    let StmtKind::Assign { value, op, .. } = &m.stmt(body[0]).kind else {
        unreachable!()
    };
    assert_eq!(*op, unsnarl_model::AssignOp::Declare { mutable: true });
    match &m.expr(value.unwrap()).kind {
        ExprKind::Collection {
            kind,
            elems,
            ty: Some(ty),
            ..
        } => {
            assert_eq!(*kind, CollKind::Struct);
            assert!(elems.is_empty());
            assert_eq!(&**ty, &tr("sync.WaitGroup", Some("sync.WaitGroup")));
        }
        k => panic!("{k:?}"),
    }
    assert_dump_has(
        &m,
        "target: name x
         value: Struct int
         target: name y
         value: Struct int
         target: name p
         value: Struct *sync.Mutex=sync.Mutex",
    );
}

#[test]
fn test_functions_in_test_files() {
    let src = r#"package pkg
import "testing"
func TestServe(t *testing.T) { t.Run("x", func(t *testing.T) {}) }
func Test(t *testing.T) {}
func BenchmarkX(b *testing.B) {}
func FuzzParse(f *testing.F) {}
func ExampleServer_Close() {}
func Testify() {}
func helper() {}
func (s *S) TestMethod() {}
"#;
    let m = lower_at("pkg/server_test.go", src);
    assert!(m.is_test);
    let tests: Vec<&str> = m
        .functions
        .iter()
        .filter(|f| f.is_test && !f.name.is_empty())
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(
        tests,
        vec![
            "TestServe",
            "Test",
            "BenchmarkX",
            "FuzzParse",
            "ExampleServer_Close"
        ]
    );
    // The subtest closure is test code too.
    assert!(
        m.functions
            .iter()
            .any(|f| f.kind == FnKind::Closure && f.is_test)
    );
    // The same names in a non-test file are ordinary functions...
    let plain = src.replace("import \"testing\"\n", "");
    let m = lower_at("pkg/server.go", &plain);
    assert!(!m.is_test);
    assert!(m.functions.iter().all(|f| !f.is_test));
    // ...but a file that imports `testing` is test support code.
    assert!(lower_at("pkg/server.go", src).is_test);
}

#[test]
fn go_has_no_async_functions_or_loops() {
    let src =
        "package pkg\nfunc f(ch chan int) {\n\tgo func() { for v := range ch { _ = v } }()\n}\n";
    let m = lower(src);
    assert!(m.functions.iter().all(|f| !f.is_async && !f.is_generator));
    assert!(m.stmts.iter().all(|s| !matches!(
        s.kind,
        StmtKind::For { is_async: true, .. } | StmtKind::With { .. } | StmtKind::Try { .. }
    )));
}

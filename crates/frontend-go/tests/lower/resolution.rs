use super::*;
use unsnarl_model::ExprKind;

#[test]
fn package_selector_calls() {
    let m = lower_body(
        "import (\n\"time\"\n\"net/http\"\n\"golang.org/x/sync/errgroup\"\n)",
        "time.Sleep(time.Second)\nhttp.Get(u)\ng, ctx := errgroup.WithContext(ctx)\n_ = g",
    );
    let sleep = call(&m, "Sleep");
    assert_eq!(sleep.target.as_deref(), Some("time.Sleep"));
    assert!(sleep.receiver.is_none());
    assert_eq!(m.resolved(sleep.args[0].value), Some("time.Second"));
    assert_eq!(call(&m, "Get").target.as_deref(), Some("net/http.Get"));
    assert_eq!(
        call(&m, "WithContext").target.as_deref(),
        Some("golang.org/x/sync/errgroup.WithContext")
    );
    // The callee is an Attr whose object is the package name.
    let f = call(&m, "Sleep").func;
    match &m.expr(f).kind {
        ExprKind::Attr {
            obj,
            name,
            resolved,
        } => {
            assert_eq!(name, "Sleep");
            assert_eq!(resolved.as_deref(), Some("time.Sleep"));
            assert_eq!(m.name_of(*obj), Some("time"));
            assert_eq!(m.resolved(*obj), Some("time"));
        }
        k => panic!("callee is {k:?}"),
    }
}

#[test]
fn same_package_functions_and_builtins() {
    let src = r#"package pkg
func helper() int { return 1 }
func f(ch chan int) {
	helper()
	other()
	close(ch)
	n := len(ch)
	b := make([]byte, n)
	_ = append(b, 1)
	p := new(int)
	_ = p
	panic("x")
	println(min(1, 2))
	_ = string(b)
	_ = int64(n)
}
"#;
    let m = lower(src);
    assert_eq!(call(&m, "helper").target.as_deref(), Some("pkg.helper"));
    // Declared in another file of the package: the index checks.
    assert_eq!(call(&m, "other").target.as_deref(), Some("pkg.other"));
    for b in [
        "close", "len", "make", "append", "new", "panic", "println", "min", "string", "int64",
    ] {
        assert_eq!(call(&m, b).target.as_deref(), Some(b), "builtin {b}");
    }
}

#[test]
fn shadowed_builtins_do_not_resolve_as_builtins() {
    let src = r#"package pkg
func min(a, b int) int { return a }
func f() {
	min(1, 2)
	close := func() {}
	close()
	{
		len := 3
		_ = len
	}
	_ = len("x")
}
"#;
    let m = lower(src);
    assert_eq!(call(&m, "min").target.as_deref(), Some("pkg.min"));
    assert_eq!(call(&m, "close").target, None);
    // The block's `len` has gone out of scope.
    assert_eq!(call(&m, "len").target.as_deref(), Some("len"));
}

#[test]
fn method_calls_on_values_have_receiver_and_no_target() {
    let src = r#"package pkg
import "sync"
type S struct { mu sync.Mutex }
func (s *S) Do() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.helper()
}
"#;
    let m = lower(src);
    let lock = call(&m, "Lock");
    assert_eq!(lock.target, None);
    let recv = lock.receiver.expect("receiver");
    assert_eq!(m.dotted(recv).as_deref(), Some("s.mu"));
    // The callee is the Attr `s.mu.Lock`.
    assert_eq!(m.dotted(lock.func).as_deref(), Some("s.mu.Lock"));
    assert_eq!(call(&m, "Unlock").target, None);
    let helper = call(&m, "helper");
    assert_eq!(m.dotted(helper.receiver.unwrap()).as_deref(), Some("s"));
}

#[test]
fn package_level_vars_resolve_as_names_only() {
    let src = r#"package pkg
import "sync"
var mu sync.Mutex
var counter = 0
func f() {
	mu.Lock()
	counter++
	cfg.Reload()
}
"#;
    let m = lower(src);
    let lock = call(&m, "Lock");
    assert_eq!(
        lock.target, None,
        "methods of values are the semantic pass's job"
    );
    assert_eq!(m.resolved(lock.receiver.unwrap()), Some("pkg.mu"));
    // An unknown non-local name is a package-level name of another file.
    let reload = call(&m, "Reload");
    assert_eq!(m.resolved(reload.receiver.unwrap()), Some("pkg.cfg"));
    assert_dump_has(
        &m,
        "assign Augmented(Add)
           target: name counter =pkg.counter
           value: lit Int(1)",
    );
}

#[test]
fn chains_through_packages_resolve() {
    let m = lower_body(
        "import \"net/http\"\nimport \"os\"",
        "http.DefaultClient.Do(req)\nos.Stdout.Write(b)",
    );
    let d = call(&m, "Do");
    assert_eq!(d.target.as_deref(), Some("net/http.DefaultClient.Do"));
    assert_eq!(
        m.resolved(d.receiver.unwrap()),
        Some("net/http.DefaultClient")
    );
    assert_eq!(call(&m, "Write").target.as_deref(), Some("os.Stdout.Write"));
}

#[test]
fn method_expressions_on_types_of_this_file() {
    let src = r#"package pkg
type T struct{}
func (T) M() {}
func f(t T) { T.M(t); g := T.M; g(t) }
"#;
    let m = lower(src);
    let c = call(&m, "M");
    assert_eq!(c.target.as_deref(), Some("pkg.T.M"));
    assert!(c.receiver.is_none());
    assert_eq!(call(&m, "g").target, None);
}

#[test]
fn closures_see_enclosing_locals() {
    let src = r#"package pkg
func f() {
	work := func() {}
	go func() {
		work()
		done()
	}()
}
"#;
    let m = lower(src);
    assert_eq!(call(&m, "work").target, None);
    assert_eq!(call(&m, "done").target.as_deref(), Some("pkg.done"));
}

#[test]
fn parameters_results_and_receivers_are_locals() {
    let src = r#"package pkg
func f(run func(), xs ...func()) (cb func()) {
	run()
	xs[0]()
	cb()
	return
}
func (s *S) g() { s() }
"#;
    let m = lower(src);
    assert_eq!(call(&m, "run").target, None);
    assert_eq!(call(&m, "cb").target, None);
    assert_eq!(call(&m, "s").target, None);
    // `xs[0]()` is a computed callee.
    let computed = calls(&m).into_iter().find(|c| c.name.is_empty()).unwrap();
    assert!(matches!(m.expr(computed.func).kind, ExprKind::Index { .. }));
}

#[test]
fn locals_declared_everywhere_shadow_package_names() {
    let src = r#"package pkg
func a() {}
func f(m map[string]func(), ch chan func()) {
	for a := range m { a() }
	if a := m["x"]; a != nil { a() }
	switch a := m["y"]; { default: a() }
	select { case a := <-ch: a() }
	var b func()
	b()
	const c = 1
	_ = c
	a()
}
func g(x any) {
	switch a := x.(type) {
	case func():
		a()
	}
}
"#;
    let m = lower(src);
    let targets: Vec<Option<&str>> = calls(&m)
        .into_iter()
        .filter(|c| c.name == "a")
        .map(|c| c.target.as_deref())
        .collect();
    assert_eq!(
        targets,
        vec![None, None, None, None, Some("pkg.a"), None],
        "{}",
        dump(&m)
    );
    assert_eq!(call(&m, "b").target, None);
}

#[test]
fn short_var_value_is_resolved_before_the_names_exist() {
    let src = r#"package pkg
func f() {
	{
		f := f
		f()
	}
}
"#;
    let m = lower(src);
    assert_dump_has(
        &m,
        "assign Declare { mutable: true }
           target: name f
           value: name f =pkg.f
         expr: call f",
    );
}

#[test]
fn generic_calls_resolve_through_instantiation() {
    let src = r#"package pkg
import "golang.org/x/exp/slices"
func Map[T, U any](xs []T, f func(T) U) []U { return nil }
func f() {
	Map[int, string](nil, nil)
	slices.Sort[[]int](xs)
	Map(xs, g)
}
"#;
    let m = lower(src);
    let maps: Vec<&Call> = calls(&m).into_iter().filter(|c| c.name == "Map").collect();
    assert_eq!(maps.len(), 2, "{}", dump(&m));
    for c in maps {
        assert_eq!(c.target.as_deref(), Some("pkg.Map"));
    }
    assert_eq!(
        call(&m, "Sort").target.as_deref(),
        Some("golang.org/x/exp/slices.Sort")
    );
}

#[test]
fn type_parameters_are_not_package_names() {
    let src = r#"package pkg
func New[T any]() *T { return new(T) }
type List[E any] struct { items []E; head *E }
"#;
    let m = lower(src);
    let (_, f) = func(&m, "New");
    assert_eq!(f.returns.as_ref().unwrap().resolved, None);
    let c = call(&m, "new");
    match &m.expr(c.args[0].value).kind {
        ExprKind::Path { text, resolved } => {
            assert_eq!(text, "T");
            assert_eq!(resolved, &None);
        }
        k => panic!("{k:?}"),
    }
    let list = &m.types[0];
    assert_eq!(list.fields[1].ty.resolved, None);
}

#[test]
fn module_level_names_resolve_before_their_declaration() {
    let src = r#"package pkg
func f() { g(); _ = limit; T{}.m() }
func g() {}
const limit = 3
type T struct{}
"#;
    let m = lower(src);
    assert_eq!(call(&m, "g").target.as_deref(), Some("pkg.g"));
    assert_dump_has(&m, "value: name limit =pkg.limit");
    assert_dump_has(&m, "recv: Struct T=pkg.T");
}

#[test]
fn conversions_to_named_types_look_like_calls() {
    let src = r#"package pkg
import "time"
type ID int
func f(n int) { _ = ID(n); _ = time.Duration(n); _ = []byte("x"); _ = (*ID)(nil) }
"#;
    let m = lower(src);
    assert_eq!(call(&m, "ID").target.as_deref(), Some("pkg.ID"));
    assert_eq!(
        call(&m, "Duration").target.as_deref(),
        Some("time.Duration")
    );
    // Conversions to unnamed types pass the value through. (`(*ID)(nil)`
    // parses as a call of a dereference: a computed callee.)
    let casts = m
        .exprs
        .iter()
        .filter(|e| matches!(e.kind, ExprKind::Cast(_)))
        .count();
    assert_eq!(casts, 1, "{}", dump(&m));
    assert!(
        calls(&m)
            .iter()
            .any(|c| c.name.is_empty() && c.target.is_none())
    );
}

#[test]
fn indexed_callees_are_elements_unless_they_instantiate() {
    let src = r#"package pkg
import "example.com/lib"
var handlers []func(int)
func Apply[T any](x T) {}
func f(fs map[string]func(), i int) {
	handlers[i](1)
	fs["a"]()
	Apply[int](1)
	lib.Handlers[0]()
	lib.Do[lib.Options](o)
}
"#;
    let m = lower(src);
    let all = calls(&m);
    assert_eq!(all.len(), 5, "{}", dump(&m));
    assert_eq!((all[0].name.as_str(), all[0].target.as_deref()), ("", None));
    assert_eq!((all[1].name.as_str(), all[1].target.as_deref()), ("", None));
    assert_eq!(all[2].target.as_deref(), Some("pkg.Apply"));
    assert_eq!((all[3].name.as_str(), all[3].target.as_deref()), ("", None));
    assert_eq!(all[4].target.as_deref(), Some("example.com/lib.Do"));
}

use super::*;

fn bindings(m: &FileModel) -> Vec<(String, String)> {
    m.imports
        .iter()
        .map(|i| (i.local.to_string(), i.target.to_string()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn single_import_binds_last_segment() {
    let m = lower("package pkg\nimport \"net/http\"\n");
    assert_eq!(bindings(&m), pairs(&[("http", "net/http")]));
    let span = m.imports[0].span;
    assert_eq!(span.start as usize, "package pkg\nimport ".len());
}

#[test]
fn grouped_named_dot_and_blank_imports() {
    let src = r#"package pkg

import (
	"context"
	ctx2 "context"
	. "github.com/onsi/gomega"
	_ "embed"
	"golang.org/x/sync/errgroup"
	`time`
)
"#;
    let m = lower(src);
    assert_eq!(
        bindings(&m),
        pairs(&[
            ("context", "context"),
            ("ctx2", "context"),
            ("*", "github.com/onsi/gomega"),
            ("errgroup", "golang.org/x/sync/errgroup"),
            ("time", "time"),
        ])
    );
}

#[test]
fn versioned_paths_use_the_package_segment() {
    let src = r#"package pkg
import (
	"gopkg.in/yaml.v3"
	"github.com/jackc/pgx/v5"
	"github.com/go-chi/chi/v5"
	"github.com/mattn/go-isatty"
)
func f() { yaml.Unmarshal(b, &v); pgx.Connect(c, u); chi.NewRouter(); isatty.IsTerminal(1) }
"#;
    let m = lower(src);
    assert_eq!(
        call(&m, "Unmarshal").target.as_deref(),
        Some("gopkg.in/yaml.v3.Unmarshal")
    );
    assert_eq!(
        call(&m, "Connect").target.as_deref(),
        Some("github.com/jackc/pgx/v5.Connect")
    );
    assert_eq!(
        call(&m, "NewRouter").target.as_deref(),
        Some("github.com/go-chi/chi/v5.NewRouter")
    );
    assert_eq!(
        call(&m, "IsTerminal").target.as_deref(),
        Some("github.com/mattn/go-isatty.IsTerminal")
    );
}

#[test]
fn aliased_import_resolves_calls() {
    let m = lower_body(
        "import ctx \"context\"",
        "c, cancel := ctx.WithTimeout(ctx.Background(), 5)\n_ = c\ncancel()",
    );
    let c = call(&m, "WithTimeout");
    assert_eq!(c.target.as_deref(), Some("context.WithTimeout"));
    assert!(c.receiver.is_none());
    assert_eq!(
        call(&m, "Background").target.as_deref(),
        Some("context.Background")
    );
    // `cancel` is a local: no target.
    assert_eq!(call(&m, "cancel").target, None);
}

#[test]
fn dot_import_resolves_exported_names() {
    let src = r#"package pkg
import . "github.com/onsi/gomega"
func f() { Expect(x).To(Equal(1)); helper() }
"#;
    let m = lower(src);
    assert_eq!(
        call(&m, "Expect").target.as_deref(),
        Some("github.com/onsi/gomega.Expect")
    );
    assert_eq!(
        call(&m, "Equal").target.as_deref(),
        Some("github.com/onsi/gomega.Equal")
    );
    // Unexported names cannot come from a dot import.
    assert_eq!(call(&m, "helper").target.as_deref(), Some("pkg.helper"));
    // `.To` is a method of the value Expect returns.
    let to = call(&m, "To");
    assert!(to.receiver.is_some());
    assert_eq!(to.target, None);
}

#[test]
fn several_dot_imports_are_ambiguous() {
    let src = r#"package pkg
import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)
func Local() {}
func f() { Describe("x", nil); Local() }
"#;
    let m = lower(src);
    assert_eq!(call(&m, "Describe").target, None);
    // Declared in this file: it wins over dot imports.
    assert_eq!(call(&m, "Local").target.as_deref(), Some("pkg.Local"));
}

#[test]
fn blank_import_binds_nothing() {
    let m = lower("package pkg\nimport _ \"net/http/pprof\"\nfunc f() { pprof.Index() }\n");
    assert!(m.imports.is_empty());
    // Not imported: `pprof` is taken for a package-level value.
    let c = call(&m, "Index");
    assert_eq!(c.target, None);
    assert!(c.receiver.is_some());
}

#[test]
fn import_shadowed_by_local_or_parameter() {
    let src = r#"package pkg
import "net/http"
func f(http *Client) { http.Get("u") }
func g() { url := "x"; http := newClient(); http.Get(url) }
func h() { http.Get("u") }
"#;
    let m = lower(src);
    let gets: Vec<&Call> = calls(&m).into_iter().filter(|c| c.name == "Get").collect();
    assert_eq!(gets.len(), 3);
    assert_eq!(gets[0].target, None);
    assert!(gets[0].receiver.is_some());
    assert_eq!(gets[1].target, None);
    assert_eq!(gets[2].target.as_deref(), Some("net/http.Get"));
    assert!(gets[2].receiver.is_none());
}

#[test]
fn cgo_and_raw_string_imports() {
    let m = lower("package pkg\nimport \"C\"\nimport `os`\nfunc f() { C.free(p); os.Exit(1) }\n");
    assert_eq!(call(&m, "free").target.as_deref(), Some("C.free"));
    assert_eq!(call(&m, "Exit").target.as_deref(), Some("os.Exit"));
}

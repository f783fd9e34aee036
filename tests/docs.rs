//! docs/rules.md must match the rule metadata.

use std::path::Path;

#[test]
fn docs_rules_md_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let want = unsnarl::docs::rules_markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/rules.md is stale: regenerate it with `UPDATE_DOCS=1 cargo test --test docs` \
         (or `cargo run -- generate-docs`) and commit the result"
    );
}

#[test]
fn readme_rule_overview_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let have = std::fs::read_to_string(&path).unwrap();
    let want = unsnarl::docs::readme_with_overview(&have)
        .expect("README.md lost its rules-overview markers");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    assert!(
        have == want,
        "the rule overview in README.md is stale: regenerate it with \
         `UPDATE_DOCS=1 cargo test --test docs` and commit the result"
    );
}

#[test]
fn every_rule_is_documented() {
    let md = unsnarl::docs::rules_markdown();
    for r in unsnarl_rules::all_rules() {
        let m = r.meta();
        assert!(
            md.contains(&format!("\n## {}\n", m.id)),
            "{} has no section",
            m.id
        );
        assert!(md.contains(m.summary));
    }
}

//! The analysis stages after lowering: the semantic pass, the project index,
//! and the rules (one file per rule, under a folder per language).
//!
//! The pipeline drives it in three steps:
//! 1. [`Engine::prepare`] each file (parallel): semantic pass + summaries;
//! 2. [`ProjectIndex::build`] from all summaries;
//! 3. [`Engine::check`] each file (parallel): every enabled rule.

pub mod context;
pub mod index;
pub mod registry;
pub mod rule;
pub mod semantic;

mod go;
mod js;
mod python;
mod rust;
mod shared;
mod util;

#[cfg(test)]
mod testing;

pub use context::FileCx;
pub use index::{FnSummary, ProjectIndex};
pub use registry::{all_rules, find_rule};
pub use rule::{Examples, Rule, RuleMeta};
pub use semantic::Semantic;

use unsnarl_model::walk::Tree;
use unsnarl_model::{FileModel, Finding, Knowledge, Language};

/// A file after the semantic pass, waiting for the project index.
pub struct Prepared {
    pub model: FileModel,
    pub sema: Semantic,
    pub lang: Language,
}

/// The rules to run and the knowledge they consult.
pub struct Engine {
    pub rules: Vec<&'static dyn Rule>,
    pub knowledge: Knowledge,
}

impl Engine {
    pub fn new(rules: Vec<&'static dyn Rule>, knowledge: Knowledge) -> Engine {
        Engine { rules, knowledge }
    }

    /// Runs the semantic pass and summarizes the file's functions for the
    /// project index.
    pub fn prepare(&self, mut model: FileModel, lang: Language) -> (Prepared, Vec<FnSummary>) {
        let kb = self.knowledge.table(lang);
        let sema = semantic::annotate(&mut model, kb, lang);
        let summaries = index::summarize(&model, kb, lang);
        (Prepared { model, sema, lang }, summaries)
    }

    /// Runs every enabled rule that applies to the file's language.
    pub fn check(
        &self,
        file: usize,
        path: &str,
        text: &str,
        prepared: &Prepared,
        index: &ProjectIndex,
    ) -> Vec<Finding> {
        let tree = Tree::build(&prepared.model);
        let cx = FileCx {
            file,
            path,
            text,
            lang: prepared.lang,
            model: &prepared.model,
            tree: &tree,
            sema: &prepared.sema,
            kb: self.knowledge.table(prepared.lang),
            index,
        };
        let mut out = Vec::new();
        for rule in &self.rules {
            if rule.meta().applies_to(prepared.lang) {
                rule.check(&cx, &mut out);
            }
        }
        out
    }
}

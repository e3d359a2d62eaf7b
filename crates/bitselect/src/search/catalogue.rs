//! The catalogue's text at one version, by code: what a search result shows
//! of a model and its SKUs besides price, stock and status. It changes only
//! with the catalogue version, as the index does, so a search reads only
//! the live numbers from the database.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::analyzer::normalize;

/// The catalogue's text of one model, as the database holds it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelText {
    pub spu_code: String,
    pub name: String,
    pub category: String,
    pub sub_category: String,
    pub brand: String,
    pub tags: Vec<String>,
    pub specs: Map<String, Value>,
    pub skus: Vec<SkuText>,
}

/// The catalogue's text of one SKU.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkuText {
    pub sku_code: String,
    pub name: String,
    pub specs: Map<String, Value>,
}

/// One SKU's text with what a keyword is matched against in it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkuWords<'a> {
    pub text: &'a SkuText,
    /// Its name and its own specs' values, normalized.
    pub words: &'a str,
}

/// Every model's and SKU's text, found by code.
#[derive(Debug)]
pub(crate) struct CatalogueText {
    /// In model code order.
    models: Vec<ModelText>,
    /// A SKU's model and place by its code in upper case, with its words.
    skus: HashMap<String, (usize, usize, String)>,
}

impl CatalogueText {
    /// `models` must be in model code order.
    pub(crate) fn new(models: Vec<ModelText>) -> Self {
        let mut skus = HashMap::new();
        for (m, model) in models.iter().enumerate() {
            for (s, sku) in model.skus.iter().enumerate() {
                skus.insert(sku.sku_code.to_uppercase(), (m, s, sku_words(sku)));
            }
        }
        Self { models, skus }
    }

    pub(crate) fn model(&self, spu_code: &str) -> Option<&ModelText> {
        self.models
            .binary_search_by(|m| m.spu_code.as_str().cmp(spu_code))
            .ok()
            .and_then(|at| self.models.get(at))
    }

    /// The SKU `code` names, in any case.
    pub(crate) fn sku(&self, code: &str) -> Option<SkuWords<'_>> {
        // A code read from the database is already as kept: no copy made.
        let (m, s, words) = match self.skus.get(code) {
            Some(found) => found,
            None => self.skus.get(&code.trim().to_uppercase())?,
        };
        let text = self.models.get(*m)?.skus.get(*s)?;
        Some(SkuWords { text, words })
    }
}

fn sku_words(sku: &SkuText) -> String {
    let mut words = normalize(&sku.name);
    for value in sku.specs.values().filter_map(Value::as_str) {
        words.push(' ');
        words.push_str(&normalize(value));
    }
    words
}

//! One build of the catalogue's index: a tantivy index in memory with one
//! document per model (its name, category and sub-category, brand, tags,
//! specs, and its SKUs' names and configurations), and what ranking needs
//! to know of each model.
//!
//! Ranking: BM25 over the fields, weighted (a model's own name and its
//! category count most, its SKUs' names and its specs least); every term of
//! the plan must be met. Then, whatever the scores: a model the keyword
//! names whole first (longest name first), and accessories after the
//! products when the keyword finds products too ("airpods pro" lists
//! AirPods Pro 3 before its cases). Ties go to the model code, so every
//! build of the same catalogue ranks alike.

use std::collections::HashMap;

use serde_json::{Map, Value};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, EmptyQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::{DocAddress, Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument, Term};

use super::analyzer::{self, Cut, INDEX_ANALYZER, compact};
use super::catalogue::{CatalogueText, ModelText, SkuWords};
use super::plan::{self, Concept, Plan};
use super::vocabulary::VOCABULARY;
use crate::error::{Result, ShopError};

/// The text fields and their weights.
const FIELDS: [(&str, f32); 6] = [
    ("name", 4.0),
    ("category", 3.0),
    ("tags", 2.5),
    ("brand", 1.5),
    ("skus", 1.0),
    ("specs", 0.6),
];

// A term's fields are bits of a byte.
const _: () = assert!(FIELDS.len() <= u8::BITS as usize);

/// Memory the single indexing thread may use; tantivy's least.
const WRITER_MEMORY: usize = 15_000_000;

/// What ranking and the catalogue's filters know of a model.
#[derive(Debug, Clone)]
struct Model {
    spu_code: String,
    category: String,
    /// Its tags, in lower case.
    tags: Vec<String>,
    name_compact: String,
    accessory: bool,
    /// Whether it has a SKU: a model without one is never a result.
    sellable: bool,
}

/// The filters on the catalogue's text that a search may carry, applied
/// by the index itself: a model's category and tags change only with the
/// catalogue's version, as the index does.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Within<'a> {
    pub category: Option<&'a str>,
    /// Tags every model must hold, in lower case.
    pub tags: &'a [String],
}

impl Within<'_> {
    fn holds(&self, model: &Model) -> bool {
        model.sellable
            && self.category.is_none_or(|c| model.category == c)
            && self
                .tags
                .iter()
                .all(|t| model.tags.iter().any(|held| held == t))
    }
}

/// A model a keyword found, by its place in the catalogue and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Found {
    model: usize,
    score: f32,
}

/// A category close to a keyword that found nothing, with the codes of
/// the models there that came closest, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NearCategory {
    pub category: String,
    pub spu_codes: Vec<String>,
}

/// A built index of the catalogue at one version.
pub(crate) struct Snapshot {
    version: String,
    reader: IndexReader,
    fields: Vec<(Field, f32)>,
    models: Vec<Model>,
    /// The model of each document, per segment: read once at build rather
    /// than from the fast field at every hit.
    doc_models: Vec<Vec<usize>>,
    /// Every indexed term, with the fields that hold it (bit `i` for
    /// `fields[i]`): a term is looked for only where it is, since a field
    /// without it adds nothing to a model's score, and building its query
    /// cost a search a fifth of its ranking.
    term_fields: HashMap<String, u8>,
    /// The text of every model, at the same places as `models`.
    text: CatalogueText,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("version", &self.version)
            .field("models", &self.models.len())
            .finish_non_exhaustive()
    }
}

fn spec_values(specs: &Map<String, Value>) -> String {
    specs
        .values()
        .map(|v| match v {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

impl Snapshot {
    /// Indexes `catalogue` (in model code order, so that every instance
    /// builds the same index) as the catalogue at `version`.
    pub(crate) fn build(version: String, mut catalogue: Vec<ModelText>) -> Result<Self> {
        catalogue.sort_by(|a, b| a.spu_code.cmp(&b.spu_code));
        let mut schema = Schema::builder();
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(INDEX_ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let fields: Vec<(Field, f32)> = FIELDS
            .iter()
            .map(|(name, weight)| (schema.add_text_field(name, text.clone()), *weight))
            .collect();
        let ordinal = schema.add_u64_field("model", FAST);
        let index = Index::create_in_ram(schema.build());
        index
            .tokenizers()
            .register(INDEX_ANALYZER, analyzer::analyzer(Cut::Index));
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_MEMORY)?;
        let mut models = Vec::with_capacity(catalogue.len());
        for (at, model) in catalogue.iter().enumerate() {
            let skus: Vec<String> = model
                .skus
                .iter()
                .map(|s| format!("{} / {}", s.name, spec_values(&s.specs)))
                .collect();
            let values = [
                model.name.clone(),
                format!("{} / {}", model.category, model.sub_category),
                model.tags.join(" / "),
                model.brand.clone(),
                skus.join("\n"),
                spec_values(&model.specs),
            ];
            let mut doc = TantivyDocument::new();
            for ((field, _), value) in fields.iter().zip(values) {
                doc.add_text(*field, value);
            }
            doc.add_u64(ordinal, at as u64);
            writer.add_document(doc)?;
            models.push(Model {
                spu_code: model.spu_code.clone(),
                category: model.category.clone(),
                tags: model.tags.iter().map(|t| t.to_lowercase()).collect(),
                name_compact: compact(&model.name),
                accessory: VOCABULARY.is_accessory_category(&model.category),
                sellable: !model.skus.is_empty(),
            });
        }
        writer.commit()?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let searcher = reader.searcher();
        let doc_models = doc_models(&searcher)?;
        let term_fields = term_fields(&searcher, &fields)?;
        Ok(Self {
            version,
            reader,
            fields,
            models,
            doc_models,
            term_fields,
            text: CatalogueText::new(catalogue),
        })
    }

    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    /// The SKU code `keyword` is, if it is one (in any case).
    pub(crate) fn sku_code(&self, keyword: &str) -> Option<&str> {
        self.text.sku(keyword).map(|sku| sku.text.sku_code.as_str())
    }

    /// A model's text by its code.
    pub(crate) fn model(&self, spu_code: &str) -> Option<&ModelText> {
        self.text.model(spu_code)
    }

    /// A SKU's text by its code.
    pub(crate) fn sku(&self, sku_code: &str) -> Option<SkuWords<'_>> {
        self.text.sku(sku_code)
    }

    /// The codes of the models `within`, in code order.
    pub(crate) fn all_within(&self, within: Within<'_>) -> Vec<String> {
        self.models
            .iter()
            .filter(|m| within.holds(m))
            .map(|m| m.spu_code.clone())
            .collect()
    }

    /// `keyword` as this catalogue's index understands it.
    pub(crate) fn plan(&self, keyword: &str) -> Plan {
        plan::plan(keyword, &|term: &str| self.term_fields.contains_key(term))
    }

    /// The codes of the models `within` meeting every term of `plan`, best
    /// first.
    pub(crate) fn rank(&self, plan: &Plan, within: Within<'_>) -> Result<Vec<String>> {
        let concepts: Vec<(Occur, Box<dyn Query>)> = plan
            .concepts
            .iter()
            .map(|c| (Occur::Must, self.concept_query(c)))
            .collect();
        let mut found = self.found(&BooleanQuery::new(concepts))?;
        found.retain(|f| self.models.get(f.model).is_some_and(|m| within.holds(m)));
        let named = |f: &Found| {
            self.models
                .get(f.model)
                .filter(|m| m.name_compact.len() >= 3 && plan.compact.contains(&m.name_compact))
                .map_or(0, |m| m.name_compact.len())
        };
        let products_found = found
            .iter()
            .any(|f| self.models.get(f.model).is_some_and(|m| !m.accessory));
        let after =
            |f: &Found| products_found && self.models.get(f.model).is_some_and(|m| m.accessory);
        found.sort_by(|a, b| {
            after(a)
                .cmp(&after(b))
                .then_with(|| named(b).cmp(&named(a)))
                .then_with(|| b.score.total_cmp(&a.score))
                .then_with(|| self.code(a).cmp(self.code(b)))
        });
        Ok(found.iter().map(|f| self.code(f).to_owned()).collect())
    }

    /// The categories of the models meeting some term of `plan`, closest
    /// first, at most `limit`.
    pub(crate) fn nearest_categories(
        &self,
        plan: &Plan,
        limit: usize,
    ) -> Result<Vec<NearCategory>> {
        let concepts: Vec<(Occur, Box<dyn Query>)> = plan
            .concepts
            .iter()
            .map(|c| (Occur::Should, self.concept_query(c)))
            .collect();
        let mut found = self.found(&BooleanQuery::new(concepts))?;
        found.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.code(a).cmp(self.code(b)))
        });
        // A category is as close as its closest model; accessories come
        // after products, as in a ranking.
        let mut near: Vec<(NearCategory, f32, bool)> = Vec::new();
        for f in &found {
            let Some(model) = self.models.get(f.model) else {
                continue;
            };
            match near
                .iter_mut()
                .find(|(n, _, _)| n.category == model.category)
            {
                Some((n, _, _)) => n.spu_codes.push(model.spu_code.clone()),
                None => near.push((
                    NearCategory {
                        category: model.category.clone(),
                        spu_codes: vec![model.spu_code.clone()],
                    },
                    f.score,
                    model.accessory,
                )),
            }
        }
        near.sort_by(|(a, sa, aa), (b, sb, ab)| {
            aa.cmp(ab)
                .then_with(|| sb.total_cmp(sa))
                .then_with(|| a.category.cmp(&b.category))
        });
        Ok(near.into_iter().take(limit).map(|(n, _, _)| n).collect())
    }

    fn code(&self, found: &Found) -> &str {
        self.models
            .get(found.model)
            .map_or("", |m| m.spu_code.as_str())
    }

    /// Every model `query` matches, with its score.
    fn found(&self, query: &dyn Query) -> Result<Vec<Found>> {
        let searcher = self.reader.searcher();
        let limit = self.models.len().max(1);
        let hits = searcher.search(query, &TopDocs::with_limit(limit).order_by_score())?;
        hits.into_iter()
            .map(|(score, address)| {
                Ok(Found {
                    model: self.model_of(address)?,
                    score,
                })
            })
            .collect()
    }

    /// The model a document of the index stands for.
    fn model_of(&self, address: DocAddress) -> Result<usize> {
        self.doc_models
            .get(address.segment_ord as usize)
            .and_then(|docs| docs.get(address.doc_id as usize))
            .copied()
            .ok_or_else(|| ShopError::Search(format!("文档 {address:?} 没有型号序号")))
    }

    /// A term met by any of its alternatives.
    fn concept_query(&self, concept: &Concept) -> Box<dyn Query> {
        concept_of(concept, &|term| self.term_query(term))
    }

    /// An index term in any field that holds it, scored by the field's
    /// weight; a term no field holds matches nothing.
    fn term_query(&self, term: &str) -> Box<dyn Query> {
        let held = self.term_fields.get(term).copied().unwrap_or(0);
        let fields: Vec<(Field, f32)> = self
            .fields
            .iter()
            .enumerate()
            .filter(|(at, _)| held & (1 << at) != 0)
            .map(|(_, field)| *field)
            .collect();
        if fields.is_empty() {
            return Box::new(EmptyQuery);
        }
        term_in(term, &fields)
    }
}

/// `concept` met by any of its alternatives, each index term as `term` asks.
fn concept_of(concept: &Concept, term: &dyn Fn(&str) -> Box<dyn Query>) -> Box<dyn Query> {
    let alternatives: Vec<(Occur, Box<dyn Query>)> = concept
        .alternatives
        .iter()
        .map(|terms| {
            let all: Vec<(Occur, Box<dyn Query>)> =
                terms.iter().map(|t| (Occur::Must, term(t))).collect();
            (
                Occur::Should,
                Box::new(BooleanQuery::new(all)) as Box<dyn Query>,
            )
        })
        .collect();
    Box::new(BooleanQuery::new(alternatives))
}

/// `term` in each of `fields`, scored by the field's weight.
fn term_in(term: &str, fields: &[(Field, f32)]) -> Box<dyn Query> {
    let clauses: Vec<(Occur, Box<dyn Query>)> = fields
        .iter()
        .map(|(field, weight)| {
            let query = TermQuery::new(
                Term::from_field_text(*field, term),
                IndexRecordOption::WithFreqs,
            );
            (
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(query), *weight)) as Box<dyn Query>,
            )
        })
        .collect();
    Box::new(BooleanQuery::new(clauses))
}

/// Every term of the index, with the fields (bits of `fields`' places)
/// that hold it in some segment.
fn term_fields(searcher: &Searcher, fields: &[(Field, f32)]) -> Result<HashMap<String, u8>> {
    let mut held: HashMap<String, u8> = HashMap::new();
    for segment in searcher.segment_readers() {
        for (at, (field, _)) in fields.iter().enumerate() {
            let index = segment.inverted_index(*field)?;
            let mut terms = index
                .terms()
                .stream()
                .map_err(tantivy::TantivyError::from)?;
            while terms.advance() {
                let term = std::str::from_utf8(terms.key())
                    .map_err(|_| ShopError::Search("索引中的词不是 UTF-8 文本".to_owned()))?;
                *held.entry(term.to_owned()).or_default() |= 1 << at;
            }
        }
    }
    Ok(held)
}

/// The model of every document, per segment, from the `model` fast field.
fn doc_models(searcher: &Searcher) -> Result<Vec<Vec<usize>>> {
    searcher
        .segment_readers()
        .iter()
        .map(|segment| {
            let column = segment.fast_fields().u64("model")?;
            (0..segment.max_doc())
                .map(|doc| {
                    column
                        .first(doc)
                        .and_then(|at| usize::try_from(at).ok())
                        .ok_or_else(|| ShopError::Search(format!("文档 {doc} 没有型号序号")))
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::store::sqlite_file::Db;
    use crate::store::{Store, TxKind};

    /// The demo catalogue's index, from a seeded shop.
    fn demo_snapshot() -> Snapshot {
        let dir = tempfile::tempdir().unwrap();
        crate::Shop::open(dir.path()).unwrap();
        let store = Store::Sqlite(Arc::new(
            Db::open(&dir.path().join(crate::DB_FILE)).unwrap(),
        ));
        let catalogue = store
            .run(TxKind::Read, |conn| super::super::load_catalogue(conn))
            .unwrap();
        Snapshot::build("demo".to_owned(), catalogue).unwrap()
    }

    /// The relevance set's keywords, each as its plan.
    fn relevance_plans(snapshot: &Snapshot) -> Vec<Plan> {
        let relevance: Value =
            serde_json::from_str(include_str!("../../tests/data/relevance.json")).unwrap();
        let plans: Vec<Plan> = relevance["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| snapshot.plan(q["query"].as_str().unwrap()))
            .collect();
        assert!(plans.len() >= 40, "read the relevance set");
        plans
    }

    /// A term looked for only in the fields that hold it ranks every model
    /// exactly as looked for in all six: the same models, the same scores.
    #[test]
    fn a_term_looked_for_where_it_is_scores_as_one_looked_for_everywhere() {
        let snapshot = demo_snapshot();
        let everywhere =
            |concept: &Concept| concept_of(concept, &|term| term_in(term, &snapshot.fields));
        let mut compared = 0;
        for plan in relevance_plans(&snapshot) {
            let query = |each: &dyn Fn(&Concept) -> Box<dyn Query>| {
                BooleanQuery::new(
                    plan.concepts
                        .iter()
                        .map(|c| (Occur::Must, each(c)))
                        .collect(),
                )
            };
            let pruned = snapshot
                .found(&query(&|c| snapshot.concept_query(c)))
                .unwrap();
            let full = snapshot.found(&query(&everywhere)).unwrap();
            assert_eq!(pruned, full, "{plan:?}");
            compared += full.len();
        }
        assert!(compared > 100, "the set's keywords found {compared} models");
    }

    /// The fields a term is held in are those where it occurs in some
    /// document, for every term the relevance set's keywords look for.
    #[test]
    fn the_fields_of_a_term_are_those_where_documents_hold_it() {
        let snapshot = demo_snapshot();
        let searcher = snapshot.reader.searcher();
        let mut terms = 0;
        for plan in relevance_plans(&snapshot) {
            for term in plan
                .concepts
                .iter()
                .flat_map(|c| c.alternatives.iter().flatten())
            {
                let held = snapshot.term_fields.get(term.as_str()).copied();
                let occurs: u8 = snapshot
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, (field, _))| {
                        searcher
                            .doc_freq(&Term::from_field_text(*field, term))
                            .unwrap()
                            > 0
                    })
                    .fold(0, |bits, (at, _)| bits | 1 << at);
                assert_eq!(held.unwrap_or(0), occurs, "{term}");
                terms += 1;
            }
        }
        assert!(terms > 60, "compared {terms} terms");
    }
}

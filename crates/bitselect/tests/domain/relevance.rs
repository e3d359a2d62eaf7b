//! How well search finds what shoppers ask for, measured on the relevance
//! set (tests/data/relevance.json): for each query the models a person
//! expects, and per query and on average recall@10 (the share of the
//! expected models in the first ten, of at most ten) and nDCG@10 (whether
//! they come first). The goal: average recall@10 of at least 0.9, and
//! every query finding at least one expected model.

use std::collections::HashSet;

use crate::support::*;
use bitselect::params::SearchProductParams;
use serde::Deserialize;

const RELEVANCE_SET: &str = include_str!("../data/relevance.json");
const GOAL_RECALL: f64 = 0.9;
const K: usize = 10;

#[derive(Debug, Deserialize)]
struct RelevanceSet {
    queries: Vec<Judged>,
}

#[derive(Debug, Deserialize)]
struct Judged {
    query: String,
    expected: Vec<String>,
}

/// The share of the expected models among the first `K` found, out of as
/// many as `K` places can hold.
fn recall_at_k(found: &[String], expected: &HashSet<&str>) -> f64 {
    let hits = found
        .iter()
        .take(K)
        .filter(|code| expected.contains(code.as_str()))
        .count();
    hits as f64 / expected.len().min(K) as f64
}

/// Discounted gain of the expected models where they were found, against
/// the gain of them all first.
fn ndcg_at_k(found: &[String], expected: &HashSet<&str>) -> f64 {
    let gain = |rank: usize| 1.0 / ((rank + 2) as f64).log2();
    let dcg: f64 = found
        .iter()
        .take(K)
        .enumerate()
        .filter(|(_, code)| expected.contains(code.as_str()))
        .map(|(rank, _)| gain(rank))
        .sum();
    let ideal: f64 = (0..expected.len().min(K)).map(gain).sum();
    dcg / ideal
}

#[test]
fn shoppers_queries_find_the_models_a_person_expects() {
    let t = open_shop();
    let set: RelevanceSet = serde_json::from_str(RELEVANCE_SET).unwrap();
    assert!(set.queries.len() >= 40, "the set holds at least 40 queries");
    let mut recalls = Vec::new();
    let mut ndcgs = Vec::new();
    let mut found_none = Vec::new();
    println!(
        "{:<28} {:>9} {:>8}  first found",
        "query", "recall@10", "nDCG@10"
    );
    for judged in &set.queries {
        let result = t
            .shop
            .search_product(&SearchProductParams {
                keyword: Some(judged.query.clone()),
                limit: Some(K as u32),
                ..Default::default()
            })
            .unwrap();
        let found: Vec<String> = result.items.iter().map(|m| m.spu_code.clone()).collect();
        let expected: HashSet<&str> = judged.expected.iter().map(String::as_str).collect();
        let recall = recall_at_k(&found, &expected);
        let ndcg = ndcg_at_k(&found, &expected);
        println!(
            "{:<28} {recall:>9.2} {ndcg:>8.2}  {}",
            judged.query,
            found.iter().take(4).cloned().collect::<Vec<_>>().join(" ")
        );
        if recall == 0.0 {
            found_none.push(judged.query.as_str());
        }
        recalls.push(recall);
        ndcgs.push(ndcg);
    }
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    let (recall, ndcg) = (mean(&recalls), mean(&ndcgs));
    println!(
        "average over {} queries: recall@10 {recall:.3}, nDCG@10 {ndcg:.3}",
        set.queries.len()
    );
    assert!(
        found_none.is_empty(),
        "queries that found none of their expected models: {found_none:?}"
    );
    assert!(
        recall >= GOAL_RECALL,
        "average recall@10 {recall:.3} is below the goal {GOAL_RECALL}"
    );
}

#[test]
fn two_shops_on_one_database_answer_every_query_alike() {
    let t = open_shop();
    let other = t.reopen();
    let set: RelevanceSet = serde_json::from_str(RELEVANCE_SET).unwrap();
    for judged in &set.queries {
        let params = SearchProductParams {
            keyword: Some(judged.query.clone()),
            limit: Some(20),
            ..Default::default()
        };
        assert_eq!(
            t.shop.search_product(&params).unwrap(),
            other.search_product(&params).unwrap(),
            "query {:?}",
            judged.query
        );
    }
}

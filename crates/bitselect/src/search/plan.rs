//! A keyword as the engine understands it: the terms a model must meet,
//! each met by any of its alternatives (an alternative needs all of its
//! index terms), the words left out as saying nothing, and the keyword
//! compacted for recognising a model named whole.
//!
//! A term is a synonym phrase of the vocabulary (met by itself or by what
//! it means) or a word the segmenter cut. A word that is in no document
//! whole falls back to its parts: a Chinese word to the words it holds
//! (折叠屏 → 折叠), a word of letters and digits to its pieces (iphone17 →
//! iphone 17) or, letters only, to two words that are in the catalogue
//! (macmini → mac mini). A single Chinese character in no document is
//! left out like a word of no meaning.

use super::analyzer::{self, Cut, compact, is_cjk, letter_digit_pieces, normalize};
use super::vocabulary::VOCABULARY;

/// One term of a keyword.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Concept {
    /// What the shopper said, normalized.
    pub said: String,
    /// What was looked for, in the catalogue's words: the phrase said and
    /// the phrases it means.
    pub looked_for: Vec<String>,
    /// Each alternative: index terms that must all be in a model.
    pub alternatives: Vec<Vec<String>>,
}

/// A keyword as the engine searches it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Plan {
    pub concepts: Vec<Concept>,
    /// Words that were left out: they say nothing about the product.
    pub ignored: Vec<String>,
    /// The keyword without spaces, normalized.
    pub compact: String,
}

/// Plans `keyword`; `known` says whether an index term is in any model.
pub(crate) fn plan(keyword: &str, known: &dyn Fn(&str) -> bool) -> Plan {
    let normalized = normalize(keyword);
    let mut query = analyzer::analyzer(Cut::Query);
    let mut terms = |text: &str| analyzer::terms(&mut query, text);
    let mut out = Plan {
        compact: compact(&normalized),
        ..Plan::default()
    };
    let mut at = 0;
    let said = VOCABULARY.find_in(&normalized);
    let mut spans: Vec<(usize, usize, Option<&super::vocabulary::Synonym>)> = Vec::new();
    for s in &said {
        if s.from > at {
            spans.push((at, s.from, None));
        }
        spans.push((s.from, s.to, Some(s.synonym)));
        at = s.to;
    }
    if at < normalized.len() {
        spans.push((at, normalized.len(), None));
    }
    for (from, to, synonym) in spans {
        let text = &normalized[from..to];
        match synonym {
            Some(synonym) => {
                let mut looked_for = vec![text.to_owned()];
                looked_for.extend(synonym.find.iter().cloned());
                let mut alternatives: Vec<Vec<String>> = Vec::new();
                for phrase in &looked_for {
                    let phrase_terms = terms(phrase);
                    if !phrase_terms.is_empty() && !alternatives.contains(&phrase_terms) {
                        alternatives.push(phrase_terms);
                    }
                }
                out.concepts.push(Concept {
                    said: text.to_owned(),
                    looked_for,
                    alternatives,
                });
            }
            None => {
                for word in analyzer::words(text, Cut::Query) {
                    plan_word(&word.text, &mut terms, known, &mut out);
                }
            }
        }
    }
    out
}

fn plan_word(
    word: &str,
    terms: &mut dyn FnMut(&str) -> Vec<String>,
    known: &dyn Fn(&str) -> bool,
    out: &mut Plan,
) {
    if VOCABULARY.is_ignored(word) {
        out.ignored.push(word.to_owned());
        return;
    }
    let whole = terms(word);
    if whole.is_empty() {
        return;
    }
    let mut alternatives = vec![whole.clone()];
    if !whole.iter().all(|t| known(t)) {
        let chinese = word.chars().any(is_cjk);
        if chinese && word.chars().count() == 1 {
            out.ignored.push(word.to_owned());
            return;
        }
        let parts: Vec<String> = if chinese {
            analyzer::words(word, Cut::Index)
                .into_iter()
                .filter(|w| w.text != word)
                .flat_map(|w| terms(&w.text))
                .collect()
        } else {
            latin_parts(word, terms, known)
        };
        if !parts.is_empty() && parts != whole {
            alternatives.push(parts);
        }
    }
    out.concepts.push(Concept {
        said: word.to_owned(),
        looked_for: vec![word.to_owned()],
        alternatives,
    });
}

/// A word of letters and digits in no model, as parts that may be:
/// letters and digits apart, or two words the catalogue holds.
fn latin_parts(
    word: &str,
    terms: &mut dyn FnMut(&str) -> Vec<String>,
    known: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let pieces = letter_digit_pieces(word);
    if pieces.len() > 1 {
        return pieces
            .into_iter()
            .flat_map(|(a, b)| terms(&word[a..b]))
            .collect();
    }
    let bounds: Vec<usize> = word.char_indices().map(|(at, _)| at).skip(2).collect();
    for at in bounds {
        let (left, right) = word.split_at(at);
        if right.chars().count() < 2 {
            break;
        }
        let parts: Vec<String> = terms(left).into_iter().chain(terms(right)).collect();
        if parts.len() == 2 && parts.iter().all(|t| known(t)) {
            return parts;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn everything_known(_: &str) -> bool {
        true
    }

    #[test]
    fn synonyms_become_one_term_met_by_what_they_mean() {
        let plan = plan("轻薄笔记本", &everything_known);
        let said: Vec<&str> = plan.concepts.iter().map(|c| c.said.as_str()).collect();
        assert_eq!(said, ["轻薄", "笔记本"]);
        assert!(
            plan.concepts[1]
                .alternatives
                .contains(&vec!["电脑".to_owned(), "macbook".to_owned()])
        );
    }

    #[test]
    fn words_of_no_meaning_are_left_out() {
        let plan = plan("我想要一个 iPad", &everything_known);
        assert_eq!(plan.concepts.len(), 1, "{plan:?}");
        assert_eq!(plan.concepts[0].alternatives, [vec!["ipad".to_owned()]]);
        assert!(!plan.ignored.is_empty());
    }

    #[test]
    fn a_joined_model_name_falls_back_to_its_pieces() {
        // Index terms as the analyzer writes them: English words stemmed.
        let known = |term: &str| ["iphon", "17", "mac", "mini"].contains(&term);
        let plan = plan("iphone17 macmini", &known);
        assert_eq!(
            plan.concepts[0].alternatives,
            [
                vec!["iphone17".to_owned()],
                vec!["iphon".to_owned(), "17".to_owned()]
            ]
        );
        assert_eq!(
            plan.concepts[1].alternatives,
            [
                vec!["macmini".to_owned()],
                vec!["mac".to_owned(), "mini".to_owned()]
            ]
        );
        assert_eq!(plan.compact, "iphone17macmini");
    }
}

//! The shop's vocabulary (data/vocabulary.json, compiled in like the
//! catalogue): what shoppers call things, which words carry no product
//! meaning, and which categories are accessories.
//!
//! A synonym entry's `say` phrases are found in a normalized keyword
//! (longest first; a phrase of Latin letters or digits only where it is a
//! whole word, so "pad" is not found in "ipad"); each found phrase becomes
//! one term of the query, met by the phrase itself or by any `find` phrase.

use std::collections::HashSet;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use serde::Deserialize;

use super::analyzer::normalize;

const VOCABULARY_JSON: &str = include_str!("../../data/vocabulary.json");

/// The vocabulary, parsed once: it is compiled-in data.
pub(crate) static VOCABULARY: LazyLock<Vocabulary> = LazyLock::new(|| {
    // The file is part of the build and checked by a unit test below; a
    // malformed one leaves the shop without synonyms rather than down.
    serde_json::from_str::<RawVocabulary>(VOCABULARY_JSON)
        .map(Vocabulary::from)
        .unwrap_or_else(|error| {
            tracing::error!(%error, "data/vocabulary.json is malformed; searching without it");
            Vocabulary::default()
        })
});

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawVocabulary {
    accessory_categories: Vec<String>,
    ignore: Vec<String>,
    synonyms: Vec<RawSynonym>,
}

#[derive(Debug, Deserialize)]
struct RawSynonym {
    say: Vec<String>,
    find: Vec<String>,
}

/// One synonym entry: phrases a shopper says, phrases the catalogue uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Synonym {
    pub say: Vec<String>,
    pub find: Vec<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Vocabulary {
    accessory_categories: HashSet<String>,
    ignore: HashSet<String>,
    synonyms: Vec<Synonym>,
    /// Every `say` phrase (normalized) with its entry, longest first.
    phrases: Vec<(String, usize)>,
    /// Finds every phrase of [`Self::phrases`] in a keyword in one pass;
    /// its pattern numbers are their places there.
    matcher: Option<AhoCorasick>,
}

impl From<RawVocabulary> for Vocabulary {
    fn from(raw: RawVocabulary) -> Self {
        let synonyms: Vec<Synonym> = raw
            .synonyms
            .into_iter()
            .map(|s| Synonym {
                say: s.say.iter().map(|p| normalize(p)).collect(),
                find: s.find,
            })
            .collect();
        let mut phrases: Vec<(String, usize)> = Vec::new();
        for (entry, synonym) in synonyms.iter().enumerate() {
            for phrase in &synonym.say {
                phrases.push((phrase.clone(), entry));
                // "smart watch" is also typed "smartwatch".
                if phrase.contains(' ') {
                    phrases.push((phrase.replace(' ', ""), entry));
                }
            }
        }
        phrases.sort_by(|(a, ea), (b, eb)| {
            b.chars()
                .count()
                .cmp(&a.chars().count())
                .then_with(|| a.cmp(b))
                .then(ea.cmp(eb))
        });
        phrases.dedup_by(|(a, _), (b, _)| a == b);
        let matcher = AhoCorasick::new(phrases.iter().map(|(phrase, _)| phrase))
            .inspect_err(
                |error| tracing::error!(%error, "the vocabulary's phrases cannot be searched for"),
            )
            .ok();
        Self {
            accessory_categories: raw.accessory_categories.into_iter().collect(),
            ignore: raw.ignore.iter().map(|w| normalize(w)).collect(),
            synonyms,
            phrases,
            matcher,
        }
    }
}

/// Where a synonym phrase stands in a keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Said<'v> {
    /// Byte range in the normalized keyword.
    pub from: usize,
    pub to: usize,
    pub synonym: &'v Synonym,
}

impl Vocabulary {
    /// True for a word that says nothing about the product wanted.
    pub(crate) fn is_ignored(&self, word: &str) -> bool {
        self.ignore.contains(word)
    }

    pub(crate) fn is_accessory_category(&self, category: &str) -> bool {
        self.accessory_categories.contains(category)
    }

    /// Every word the segmenter should know: the phrases said and found.
    pub(crate) fn dictionary_words(&self) -> impl Iterator<Item = &str> {
        self.synonyms
            .iter()
            .flat_map(|s| s.say.iter().chain(&s.find))
            .map(String::as_str)
            .chain(self.ignore.iter().map(String::as_str))
    }

    /// The synonym phrases in `keyword` (normalized), longest first and not
    /// overlapping, in keyword order.
    pub(crate) fn find_in(&self, keyword: &str) -> Vec<Said<'_>> {
        let Some(matcher) = &self.matcher else {
            return Vec::new();
        };
        // Every occurrence of every phrase, overlapping ones too, taken
        // longest phrase first and then from the left.
        let mut occurrences: Vec<(usize, usize, usize)> = matcher
            .find_overlapping_iter(keyword)
            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
            .collect();
        occurrences.sort_unstable();
        let mut taken = vec![false; keyword.len()];
        let mut found = Vec::new();
        for (phrase, from, to) in occurrences {
            let Some(synonym) = self
                .phrases
                .get(phrase)
                .and_then(|(_, entry)| self.synonyms.get(*entry))
            else {
                continue;
            };
            if claim(&mut taken, keyword, from, to) {
                found.push(Said { from, to, synonym });
            }
        }
        found.sort_by_key(|said| said.from);
        found
    }
}

/// Marks the bytes `from..to` of `keyword` taken by a phrase found there,
/// unless a longer phrase took some of them or the phrase runs on into a
/// word; says whether it did.
fn claim(taken: &mut [bool], keyword: &str, from: usize, to: usize) -> bool {
    let Some(span) = taken.get_mut(from..to) else {
        return false;
    };
    if span.iter().any(|t| *t) || !whole_word(keyword, from, to) {
        return false;
    }
    span.iter_mut().for_each(|t| *t = true);
    true
}

/// A phrase that begins or ends with a Latin letter or digit must not be
/// part of a longer word there: "pad" is no synonym inside "ipad".
fn whole_word(text: &str, from: usize, to: usize) -> bool {
    let latin = |c: char| c.is_ascii_alphanumeric();
    let starts_latin = text[from..].chars().next().is_some_and(latin);
    let ends_latin = text[..to].chars().next_back().is_some_and(latin);
    let before = text[..from].chars().next_back();
    let after = text[to..].chars().next();
    let runs_on_before = starts_latin && before.is_some_and(latin);
    let runs_on_after = ends_latin && after.is_some_and(latin);
    !(runs_on_before || runs_on_after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_file_parses_and_holds_the_shoppers_words() {
        let raw: RawVocabulary = serde_json::from_str(VOCABULARY_JSON).unwrap();
        let vocabulary = Vocabulary::from(raw);
        assert!(vocabulary.is_ignored("推荐"));
        assert!(vocabulary.is_accessory_category("配件"));
        let said: Vec<&str> = vocabulary
            .find_in("laptop")
            .iter()
            .flat_map(|s| s.synonym.find.iter().map(String::as_str))
            .collect();
        assert_eq!(said, ["电脑 MacBook"]);
    }

    #[test]
    fn latin_phrases_are_found_only_as_whole_words_and_the_longest_wins() {
        let vocabulary = &*VOCABULARY;
        assert!(vocabulary.find_in("ipad pro").is_empty());
        let found = vocabulary.find_in("smartwatch 降噪耳机");
        let phrases: Vec<&str> = found
            .iter()
            .map(|s| &"smartwatch 降噪耳机"[s.from..s.to])
            .collect();
        assert_eq!(phrases, ["smartwatch", "降噪", "耳机"]);
        let apple_pencil = vocabulary.find_in("apple pencil");
        assert_eq!(apple_pencil.len(), 1, "{apple_pencil:?}");
    }

    /// The phrases found one phrase at a time, a scan of the keyword each:
    /// what [`Vocabulary::find_in`] must agree with.
    fn found_by_scanning<'v>(vocabulary: &'v Vocabulary, keyword: &str) -> Vec<Said<'v>> {
        let mut taken = vec![false; keyword.len()];
        let mut found = Vec::new();
        for (phrase, entry) in &vocabulary.phrases {
            let synonym = &vocabulary.synonyms[*entry];
            let mut start = 0;
            while let Some(offset) = keyword[start..].find(phrase.as_str()) {
                let from = start + offset;
                let to = from + phrase.len();
                start = from + phrase.chars().next().map_or(1, char::len_utf8);
                if claim(&mut taken, keyword, from, to) {
                    found.push(Said { from, to, synonym });
                }
            }
        }
        found.sort_by_key(|said| said.from);
        found
    }

    #[test]
    fn one_pass_over_the_keyword_finds_what_a_scan_for_each_phrase_finds() {
        let vocabulary = &*VOCABULARY;
        let relevance: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/data/relevance.json")).unwrap();
        let mut keywords: Vec<String> = relevance["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| normalize(q["query"].as_str().unwrap()))
            .collect();
        assert!(keywords.len() >= 40, "{}", keywords.len());
        let phrases: Vec<&str> = vocabulary.phrases.iter().map(|(p, _)| p.as_str()).collect();
        // Each phrase alone, run into its neighbour, beside it, and twice
        // overlapping itself ("耳机机" holds 耳机 once; "aaa" holds "aa" twice).
        for pair in phrases.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            keywords.push(a.to_owned());
            keywords.push(format!("{a}{b}"));
            keywords.push(format!("{b} {a}"));
            keywords.push(format!("x{a}{a}9"));
        }
        for keyword in &keywords {
            assert_eq!(
                vocabulary.find_in(keyword),
                found_by_scanning(vocabulary, keyword),
                "{keyword}"
            );
        }
    }
}

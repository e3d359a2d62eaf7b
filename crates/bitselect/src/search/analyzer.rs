//! How catalogue text and a shopper's words become index terms: Chinese
//! runs segmented by jieba (its dictionary plus the shop's vocabulary),
//! other letters and digits as words, then lower case and English stems
//! (tantivy's filters), so that "AirPods" and "airpod", "Watches" and
//! "watch" meet.
//!
//! The index keeps every word a text may be searched by: a Chinese run cut
//! for search (智能手表 → 智能, 手表, 智能手表) and a word of letters and
//! digits whole and in pieces (iphone17 → iphone17, iphone, 17; m4 → m4, m,
//! 4). A query is cut into whole words; the query plan falls back to the
//! pieces itself when the whole word is in no document.

use std::sync::LazyLock;

use jieba_rs::Jieba;
use tantivy::tokenizer::{LowerCaser, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer};

use super::vocabulary::VOCABULARY;

/// The name the index's text fields are analysed under.
pub(crate) const INDEX_ANALYZER: &str = "shop_index";

/// How a text is cut into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Every word a document may be found by, overlapping.
    Index,
    /// The words a shopper said, whole.
    Query,
}

/// One word of a text and where it stands (byte offsets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub text: String,
    pub from: usize,
    pub to: usize,
}

/// jieba's own dictionary cut to the words it saw 20 times or more: 79,746
/// of its 349,045 words, 0.4 MB in a package where the whole took about
/// 2 MB, and half the shop's memory. The words left out are rare (names,
/// idioms, old terms); a shopper's word among them is cut into shorter
/// words, which the query plan still finds: the relevance set's recall is
/// the same on both (docs/benchmarks.md).
const JIEBA_WORDS: &str = include_str!("../../data/jieba-words.txt");

/// The Chinese segmenter: the common part of jieba's dictionary and every
/// word of the shop's vocabulary. Built once per process (it is
/// compiled-in data, the same for every shop) and only read after that.
static SEGMENTER: LazyLock<Jieba> = LazyLock::new(|| {
    let mut jieba = Jieba::with_dict(&mut JIEBA_WORDS.as_bytes()).unwrap_or_else(|error| {
        // Compiled-in and checked by a test: this would be a build of a
        // damaged file. Chinese is then cut by jieba's model alone.
        tracing::error!(%error, "jieba's word list does not load; cutting Chinese without it");
        Jieba::empty()
    });
    for word in VOCABULARY.dictionary_words() {
        if word.chars().any(is_cjk) {
            jieba.add_word(word, None, None);
        }
    }
    jieba
});

/// A CJK ideograph: text that jieba segments.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F | 0x3007)
}

/// A character of a word in letters or digits (Latin, accented, Greek...).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

/// What a shopper typed, in the shape the shop compares: full-width letters,
/// digits and signs as their ASCII forms, lower case, runs of whitespace as
/// one space, trimmed.
pub(crate) fn normalize(text: &str) -> String {
    let folded: String = text
        .chars()
        .map(|c| match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ => c,
        })
        .flat_map(char::to_lowercase)
        .collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` without spaces, normalized: how a model's name and a keyword are
/// compared whole ("iphone17" names "iPhone 17").
pub(crate) fn compact(text: &str) -> String {
    normalize(text)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// The words of `text`, cut as `cut` says, in order.
pub(crate) fn words(text: &str, cut: Cut) -> Vec<Word> {
    let mut out = Vec::new();
    let mut run_start = 0;
    let mut run_kind: Option<bool> = None; // Some(true): CJK, Some(false): letters/digits
    let flush = |out: &mut Vec<Word>, from: usize, to: usize, cjk: bool| {
        let run = &text[from..to];
        if cjk {
            let tokens = match cut {
                Cut::Index => SEGMENTER.cut_for_search(run, true),
                Cut::Query => SEGMENTER.cut(run, true),
            };
            out.extend(tokens.into_iter().map(|token| Word {
                text: token.word.to_owned(),
                from: from + token.byte_start,
                to: from + token.byte_end,
            }));
        } else {
            out.push(Word {
                text: run.to_owned(),
                from,
                to,
            });
            if cut == Cut::Index {
                let pieces = letter_digit_pieces(run);
                if pieces.len() > 1 {
                    out.extend(pieces.into_iter().map(|(a, b)| Word {
                        text: run[a..b].to_owned(),
                        from: from + a,
                        to: from + b,
                    }));
                }
            }
        }
    };
    for (at, c) in text.char_indices() {
        let kind = if is_cjk(c) {
            Some(true)
        } else if is_word_char(c) {
            Some(false)
        } else {
            None
        };
        if kind != run_kind {
            if let Some(cjk) = run_kind {
                flush(&mut out, run_start, at, cjk);
            }
            run_start = at;
            run_kind = kind;
        }
    }
    if let Some(cjk) = run_kind {
        flush(&mut out, run_start, text.len(), cjk);
    }
    out
}

/// Where a word of letters and digits changes between the two: "a19pro" →
/// "a", "19", "pro" (as byte ranges of `word`).
pub(crate) fn letter_digit_pieces(word: &str) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut digit: Option<bool> = None;
    for (at, c) in word.char_indices() {
        let is_digit = c.is_ascii_digit();
        if digit.is_some_and(|d| d != is_digit) {
            pieces.push((start, at));
            start = at;
        }
        digit = Some(is_digit);
    }
    if start < word.len() {
        pieces.push((start, word.len()));
    }
    pieces
}

/// The words of a text as tantivy tokens.
#[derive(Clone)]
pub(crate) struct ShopTokenizer {
    cut: Cut,
}

impl Tokenizer for ShopTokenizer {
    type TokenStream<'a> = Words;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Words {
        let tokens: Vec<Token> = words(text, self.cut)
            .into_iter()
            .enumerate()
            .map(|(position, word)| Token {
                offset_from: word.from,
                offset_to: word.to,
                position,
                text: word.text,
                position_length: 1,
            })
            .collect();
        Words {
            tokens: tokens.into_iter(),
            current: Token::default(),
        }
    }
}

/// The tokens of one text, in order.
pub(crate) struct Words {
    tokens: std::vec::IntoIter<Token>,
    current: Token,
}

impl TokenStream for Words {
    fn advance(&mut self) -> bool {
        match self.tokens.next() {
            Some(token) => {
                self.current = token;
                true
            }
            None => false,
        }
    }

    fn token(&self) -> &Token {
        &self.current
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

/// The analyzer of `cut`: words, lower case, English stems.
pub(crate) fn analyzer(cut: Cut) -> TextAnalyzer {
    TextAnalyzer::builder(ShopTokenizer { cut })
        .filter(LowerCaser)
        .filter(Stemmer::default())
        .build()
}

/// The index terms of `text` cut as `cut` says.
pub(crate) fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        if !token.text.is_empty() {
            out.push(token.text.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str, cut: Cut) -> Vec<String> {
        words(text, cut).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn chinese_is_cut_into_words_and_search_cuts_add_the_parts() {
        assert_eq!(texts("降噪耳机", Cut::Query), ["降噪", "耳机"]);
        let indexed = texts("智能手表", Cut::Index);
        assert!(indexed.contains(&"智能".to_owned()), "{indexed:?}");
        assert!(indexed.contains(&"手表".to_owned()), "{indexed:?}");
        assert!(indexed.contains(&"智能手表".to_owned()), "{indexed:?}");
    }

    #[test]
    fn the_word_list_loads_whole_and_cuts_a_shoppers_sentence() {
        let lines = JIEBA_WORDS.lines().count();
        assert_eq!(lines, 79_746, "the word list's lines");
        assert!(Jieba::with_dict(&mut JIEBA_WORDS.as_bytes()).is_ok());
        assert_eq!(
            texts("我想买一个便宜的蓝牙音箱", Cut::Query),
            ["我", "想买", "一个", "便宜", "的", "蓝牙", "音箱"]
        );
    }

    #[test]
    fn letters_and_digits_are_indexed_whole_and_in_pieces() {
        assert_eq!(texts("iPhone17", Cut::Index), ["iPhone17", "iPhone", "17"]);
        assert_eq!(texts("iPhone17", Cut::Query), ["iPhone17"]);
        assert_eq!(
            texts("USB-C 转 3.5 毫米", Cut::Query),
            ["USB", "C", "转", "3", "5", "毫米"]
        );
    }

    #[test]
    fn full_width_and_case_and_spacing_are_normalized() {
        assert_eq!(normalize("  ＩＰｈｏｎｅ　１７  Pro "), "iphone 17 pro");
        assert_eq!(compact("iPhone 17"), compact("iphone17"));
    }

    #[test]
    fn english_words_are_lower_cased_and_stemmed() {
        let mut analyzer = analyzer(Cut::Query);
        assert_eq!(terms(&mut analyzer, "AirPods Watches"), ["airpod", "watch"]);
    }
}

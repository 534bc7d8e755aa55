"""Language-aware tokens for the full-text index and the hashing embedder, in every script.

SQLite's unicode61 tokenizer treats a whole run of Chinese characters as one token (so 记忆
would never match 原生记忆系统) and splits Devanagari, Thai and Hebrew words at their
combining marks. We tokenize in Python instead and store the tokens space-separated, so
the FTS5 table only splits at spaces (``FTS_TOKENIZER``). The text is NFKC-normalized, and
then each run of letters, marks, digits and underscores becomes tokens by its script:

* **Han, kana and Hangul** (no spaces, or particles glued to words): overlapping character
  bigrams plus single characters. Bigrams carry most of the meaning of Chinese words;
  unigrams rescue one-character queries.
* **Thai, Lao, Khmer and Myanmar** (no spaces between words, and no dictionary here):
  overlapping bigrams of grapheme clusters (a letter with its vowel and tone marks), so a
  word of two or more clusters is found wherever it occurs.
* **Every other script** (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, ...): words,
  case-folded, stripped of optional marks (diacritics, Hebrew points, Arabic vowel signs),
  then stemmed by the Snowball stemmer of the script's main language (English for Latin,
  Russian for Cyrillic, ...; PyStemmer), so "Größe",
  "grösse" and "GROSSE" meet, and so do "used" and "uses". Code identifiers are kept whole
  and split: ``user_id`` gives ``user_id``, ``user``, ``id``; ``camelCase`` gives
  ``camelcase``, ``camel``, ``case``.

The full-text index and its queries (``index_text``, ``query_terms``; tokenizer 3) also map
English word forms that Snowball keeps apart through state/lemmas.py (went -> go, children ->
child, picture -> photo), and add answer cues (state/answer_cues.py: a "when" question and
the texts that say when share a term). Since tokenizer 5 they also fold the letters that have
no decomposition to strip (``ł``, ``ø``, ``đ``, ``æ``, ``œ``, ``ı``: see LETTER_FOLDS), so
"Łódź" meets "Lodz" and "đường" meets "duong", and make other scripts' digits 0-9 (٢٠٢٣ is
2023); a query keeps the unfolded form as well, which matches an index (or a PostgreSQL row)
written before. Since tokenizer 6 they meet spellings that vary by keyboard or habit
(``spelling``: see ARABIC_FOLDS and the notes after it): Hebrew words also without their
one-letter prefixes (פגישה finds הפגישה), Arabic-script letters typed two ways (کتاب = كتاب,
المدرسه = المدرسة), the Indic nukta and chandrabindu (फाइल = फ़ाइल), apostrophes inside
Cyrillic words (пʼятниця = п'ятниця = пятниця), traditional and simplified Chinese
characters (會議 = 会议) and words joined by a zero-width non-joiner (کتاب‌ها = کتابها); again a query keeps tokenizer 5's tokens as well. Since
tokenizer 7 a text whose function words say it is German, Dutch, French, Turkish, Persian,
... (since 8 also Serbian, Nepali, Yiddish, ...: every language PyStemmer has a stemmer for)
holds its words of that language's script stemmed by its stemmer, tagged ("besprech·de":
state/languages.py), and a query asks for its words' tagged stems in the languages the index
holds (``language_terms``), so "Besprechung" finds "Besprechungen". The hashing embedder
reads plain ``tokens`` (its vectors did not change with tokenizers 3, 5, 6, 7 and 8).

``TOKENIZER_VERSION`` names this scheme and the full-text index's format: a store built with
another version rebuilds its derived indexes in the background (the previous schemes are kept
in state/tokenize_v1.py, state/tokenize_v2.py, state/tokenize_v4.py, state/tokenize_v5.py,
state/tokenize_v6.py and state/tokenize_v7.py to answer meanwhile; 3 made the tokens 4
makes, 8 and 9 those 10 makes).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Collection
from functools import lru_cache

import regex
import Stemmer

from state import languages
from state.answer_cues import index_cues, query_cues
from state.han_variants import to_simplified
from state.lemmas import LEMMAS

# 4: the tokens of 3; a turn stored without a session id whose text starts with a time stamp
# before its speaker ("[2023-05-08] Caroline: ...") now gets its context columns too
# (state/turn_context.py SPEAKER), so a store indexed by 3 rebuilds its index to give them.
# 5: letters without a decomposition folded (LETTER_FOLDS), and other scripts' digits made
# 0-9, in the index and its queries.
# 6: spellings that vary by keyboard or habit met (``spelling``): Hebrew words also without
# their one-letter prefixes, Arabic-script letters typed two ways, Indic nukta and
# chandrabindu, apostrophes inside Cyrillic words, traditional Chinese characters as
# simplified, words joined by a zero-width non-joiner.
# 7: a text whose function words say it is German, Dutch, French, ..., Persian
# (state/languages.py) holds its words' stems in that language, tagged, instead of the
# script's main stemmer's, and a marker token.
# 8: the same for the other languages PyStemmer has a stemmer for: Lithuanian, Estonian,
# Basque, Irish, Esperanto, Serbian (Latin and Cyrillic), Nepali, Yiddish and Sesotho.
# 9: the tokens of 8; a note stored without a session id whose text starts with a label
# ("Decision: ...", "Open loop: ...": state/turn_context.py NOTE_LABELS) is no conversation
# turn any more, so its context columns are empty; and a turn without a session id takes
# only the turns among the records before it, not a note of its kind between them; and a
# turn written "D1:3 Caroline: ...", "- Caroline: ..." or "**Caroline:** ..." is a turn. A
# store indexed by 8 rebuilds its index to make all three so.
# 10: the tokens of 9; a note or document that starts with a header's label ("Title: ...",
# "Project: ...", "标题：...") is no turn either, and "[Caroline]: ..." is a turn. A store
# indexed by 8 or 9 rebuilds its index to make it so.
TOKENIZER_VERSION = 10
# FTS5 splits our space-separated tokens only at ASCII non-alphanumerics ('_' is kept):
# every non-ASCII character is part of a token, so a Devanagari or Thai token stays whole.
FTS_TOKENIZER = "ascii tokenchars '_'"
# The FTS table's columns in this version: a record's own tokens, and for a conversation turn
# those of the two turns before it (state/turn_context.py), ranked by turn_context.RANK.
# Part of the index format: a change rebuilds the index like a tokenizer change does.
FTS_COLUMNS = ("tokens", "before1", "before2")

_CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\u30fc\p{Hangul}"
_CLUSTER_CLASS = r"\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_RUN = regex.compile(
    rf"(?P<cjk>[{_CJK_CLASS}]+)"
    rf"|(?P<clusters>[{_CLUSTER_CLASS}]+)"
    rf"|(?P<word>(?:(?![{_CJK_CLASS}{_CLUSTER_CLASS}])[\p{{L}}\p{{M}}\p{{N}}_])+)"
)
_CJK = regex.compile(rf"[{_CJK_CLASS}]")
# Runs between ASCII non-word characters (everything but letters, digits and '_'), split by
# the standard re first: regex's finditer over the script classes is most of tokens()' time
# (41 of 60 us on an English turn), and an ASCII run is one word. Other runs go through
# NFKC and _RUN; NFKC never joins across an ASCII non-word character, so the result is the
# same (checked on 4,000 bench texts and 20,000 random strings: mem1 turns 38.7 -> 14.7 us).
_ASCII_SPLIT = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]+")
_GRAPHEME = regex.compile(r"\X")
# Where a camelCase word splits: lower -> Upper, and UPPER -> Upper lower ("HTTPServer").
_CAMEL = regex.compile(r"(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})")

# The Snowball stemmer for a word, by the script of its first letter (the block it starts
# in): the main language written in that script. Hebrew has no Snowball stemmer here.
_SCRIPT_STARTS = [
    0x0000,
    0x0370,
    0x0400,
    0x0530,
    0x0590,
    0x0600,
    0x0700,
    0x0900,
    0x0980,
    0x0B80,
    0x0C00,
    0x1E00,
    0x1F00,
    0x2000,
    0xFB50,
    0xFE00,
    0xFE70,
    0xFF00,
]
_SCRIPT_STEMMERS = [
    "english",
    "greek",
    "russian",
    "armenian",
    None,
    "arabic",
    None,
    "hindi",
    None,
    "tamil",
    None,
    "english",
    "greek",
    None,
    "arabic",
    None,
    "arabic",
    None,
]
_STEMMERS = {name: Stemmer.Stemmer(name) for name in set(_SCRIPT_STEMMERS) if name}


def _english_stopwords() -> frozenset[str]:
    """Snowball's English stop list (snowballstemmer.org, english/stop.txt) and chat fillers.

    Chat fillers ("yeah", "okay") match nearly every turn of a conversation; dropping them
    from queries keeps OR queries small and fast."""
    snowball = """i me my myself we our ours ourselves you your yours yourself yourselves he
    him his himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had having
    do does did doing would should could ought i'm you're he's she's it's we're they're i've
    you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
    they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
    wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's
    there's when's where's why's how's a an the and but if or because as until while of at by
    for with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how all
    any both each few more most other some such no nor not only own same so than too very"""
    # Contractions are tokenized at the apostrophe ("don't" becomes "don" and "t"): their
    # pieces, but not "won" (won't) or "let" (let's), which are words of their own.
    pieces = """s t d ll re ve m don didn doesn isn aren wasn weren hasn haven hadn wouldn
    shouldn couldn mustn shan"""
    fillers = "can will just also really oh yeah ok okay hey hi"
    words = {w for w in snowball.split() if "'" not in w}
    return frozenset(words | set(pieces.split()) | set(fillers.split()))


STOPWORDS = _english_stopwords()
CJK_STOP = frozenset("的了是在我你他她它们吗呢吧啊呀哦嗯和也都就这那")


# Marks that are optional in the spelling, so text is written with and without them: Latin,
# Greek and Cyrillic diacritics (é, ё), Hebrew points and Arabic vowel signs. Marks that
# are part of the spelling (Devanagari vowel signs, Thai tone marks) are kept.
_OPTIONAL_MARKS = regex.compile(r"[\u0300-\u036f\u0591-\u05c7\u064b-\u065f\u0670]")


# Letters that no Unicode decomposition splits into a base and a mark, so stripping marks
# leaves them, but that people write without their stroke or ligature on a keyboard that
# lacks them: Polish ł (Łódź / Lodz), Danish and Norwegian ø, Vietnamese and Croatian đ,
# Icelandic ð and þ, Maltese ħ, Sami ŧ, æ and œ (cœur / coeur), Turkish dotless ı. Lower
# case only: words are case-folded first. ß needs nothing here (case folding makes it ss).
LETTER_FOLDS = str.maketrans(
    {"ł": "l", "ø": "o", "đ": "d", "ð": "d", "ħ": "h", "ŧ": "t", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i"}
)


# Spellings that differ by keyboard or habit in scripts whose words are otherwise whole
# (tokenizer 6, ``spelling``), found missing by searching real sentences the way people type
# them (tests/state/test_tokenize_scripts.py SPELLINGS):
#
# * Arabic script: Persian and Urdu keyboards type ک, ی and ہ where Arabic ones type ك, ي and
#   ه; ي at a word's end is often typed ى (فى for في), and ة as ه (المدرسه for المدرسة).
#   Folded to one form before the (Arabic) stemmer, which knows ك and ي and strips ة after
#   the article where it keeps a final ه: كتاب = کتاب, المدرسة = المدرسه, مستشفى = مستشفي.
#   A final ه is made ة (the stemmer then treats both alike, and both sides of a search go
#   the same way). Hamza on or under alef is a mark that _OPTIONAL_MARKS drops already:
#   أحمد = احمد.
# * Indic scripts: the nukta (फ़ाइल / फाइल, ज़रूरी / जरूरी) is left out as often as it is typed,
#   and Devanagari's chandrabindu is written as anusvara (हाँ / हां), as Lucene's
#   HindiNormalizer folds them.
ARABIC_FOLDS = str.maketrans({"ک": "ك", "ی": "ي", "ى": "ي", "ہ": "ه", "ۃ": "ة"})
_NUKTAS = "\u093c\u09bc\u0a3c\u0abc\u0b3c\u0cbc"
_SPELLING_MARKS = regex.compile(rf"[\u0300-\u036f\u0591-\u05c7\u064b-\u065f\u0670{_NUKTAS}]")
INDIC_FOLDS = str.maketrans({"\u0901": "\u0902"})
# What a language's stem is folded by after stemming (state/languages.py tagged_stem): the
# letters above, and a Nepali stem's nukta and chandrabindu as tokenizer 6 folds them.
STEM_FOLDS: dict[int, str | None] = {**LETTER_FOLDS, **INDIC_FOLDS, **dict.fromkeys(map(ord, _NUKTAS))}
# * Hebrew writes its conjunction, prepositions and article as one-letter prefixes of the
#   next word (ו and, ב in, ל to, מ from, ה the, ש that, כ as): "הפגישה" is "the meeting",
#   "בירושלים" "in Jerusalem". No stemmer here knows Hebrew, so a word that starts with up to
#   three of them is indexed, and asked for, also without them while three letters are left:
#   "פגישה" finds "הפגישה", "ירושלים" "בירושלים". Given up: a word whose own first letters
#   are such (שלום also gives "לום") has an extra token that can meet another word's.
HEBREW_PREFIXES = frozenset("ובלמהשכ")
HEBREW_MAX_PREFIXES = 3
HEBREW_MIN_LETTERS = 3
# * Ukrainian and Belarusian write an apostrophe inside words (п'ятниця, об'єкт) as ', ’ or ʼ,
#   and often not at all: inside a Cyrillic word it is dropped, so the three and "пятниця"
#   meet (an ASCII one would otherwise split the word in two).
_CYRILLIC_APOSTROPHE = regex.compile(r"(?<=\p{Cyrillic})['\u2019\u02bc](?=\p{Cyrillic})")
# * Chinese is written in traditional characters (Taiwan, Hong Kong) and simplified ones: each
#   traditional character is made its simplified form (state/han_variants.py, from OpenCC's
#   character table), so 會議 and 会议 meet. Characters only, not phrases: enough to search.
# * A zero-width non-joiner keeps letters apart inside a word (Persian کتاب‌ها "books", می‌روم
#   "I go"), and is typed as often as a space or nothing: such a word gives its parts and
#   their joined form, as an identifier does.
_ZWNJ_WORD = regex.compile(r"[\p{L}\p{M}]+(?:\u200c[\p{L}\p{M}]+)+")


def _spelled(word: str) -> str:
    """A case-folded word (already without its optional marks) with tokenizer 6's letter
    folds: Arabic-script letters (a final ه as ة), Devanagari chandrabindu."""
    word = word.translate(ARABIC_FOLDS).translate(INDIC_FOLDS)
    return f"{word[:-1]}ة" if len(word) > 1 and word[-1] == "ه" else word


def _hebrew_bare(word: str) -> list[str]:
    """``word`` without each run of its leading Hebrew prefix letters (see HEBREW_PREFIXES)."""
    bare = []
    for count in range(1, HEBREW_MAX_PREFIXES + 1):
        if len(word) - count < HEBREW_MIN_LETTERS or word[count - 1] not in HEBREW_PREFIXES:
            break
        bare.append(word[count:])
    return bare


def _respelled_text(text: str) -> str:
    """``text`` with tokenizer 6's changes made before it is split into words: apostrophes
    inside Cyrillic words dropped, and each word joined by zero-width non-joiners followed
    by its joined form."""
    if "\u200c" in text:
        text = _ZWNJ_WORD.sub(lambda m: f"{m.group()} {m.group().replace(chr(0x200C), '')}", text)
    if "'" in text or "\u2019" in text or "\u02bc" in text:  # str's scan: most texts have none
        text = _CYRILLIC_APOSTROPHE.sub("", text)
    return text


# Decimal digits of other scripts (Arabic-Indic ٢٠٢٣, Persian ۱۴۰۲, Devanagari २०२३, Thai
# ๒๕๖๖, ...), which NFKC leaves as they are: folded to 0-9 with LETTER_FOLDS, so a year or a
# number is found however it was typed.
_OTHER_DIGIT = regex.compile(r"(?![0-9])\p{Nd}")


def _ascii_digit(match: regex.Match[str]) -> str:
    return str(unicodedata.digit(match.group()))


# Any character that LETTER_FOLDS, _OTHER_DIGIT or tokenizer 6's letter folds would change
# (a word's final ه aside: no one character says it is there; such a token is looked up as
# the embedder made it, as every token of a text without these characters is).
_FOLDABLE = regex.compile(
    rf"[łøđðħŧþæœıŁØĐÐĦŦÞÆŒکیىہۃ\u0901{_NUKTAS}\u0958-\u095f\u09dc-\u09df\u0a59-\u0a5e\u0b5c\u0b5d]"
    r"|(?![0-9])\p{Nd}"
)


def folded_forms(text: str, tokens_of_text: Collection[str]) -> dict[str, str]:
    """Each of ``tokens_of_text`` that the index holds folded (tokenizers 5 and 6: letters,
    digits, spellings) -> that form (the hashing embedder looks a query token's frequency up
    by it); none for the usual text without such letters or digits, found by one scan (a
    query is embedded on every CJK search: folding each token cost a long Chinese query 15 %
    more)."""
    if text.isascii() or (not _FOLDABLE.search(text) and text.translate(to_simplified()) == text):
        return {}
    forms = {
        t: _spelled(
            _strip_diacritics(_OTHER_DIGIT.sub(_ascii_digit, t.translate(LETTER_FOLDS)), True)
        ).translate(to_simplified())
        for t in tokens_of_text
    }
    return {t: f for t, f in forms.items() if f != t}


def _strip_diacritics(word: str, spelling: bool = False) -> str:
    """``word`` without optional marks (é -> e, ё -> е, שָׁלוֹם -> שלום); with ``spelling``
    the Indic nukta too (फ़ाइल -> फाइल)."""
    if word.isascii():
        return word
    marks = _SPELLING_MARKS if spelling else _OPTIONAL_MARKS
    return unicodedata.normalize("NFC", marks.sub("", unicodedata.normalize("NFD", word)))


def _stemmer_for(word: str) -> Stemmer.Stemmer | None:
    name = _SCRIPT_STEMMERS[bisect.bisect_right(_SCRIPT_STARTS, ord(word[0])) - 1]
    return _STEMMERS[name] if name else None


@lru_cache(maxsize=65536)
def _stem(word: str, fold: bool = False, spelling: bool = False) -> str:
    """One case-folded word as an index token: without diacritics (and with ``fold``, its
    LETTER_FOLDS folded; with ``spelling``, tokenizer 6's letter folds), then stemmed (the
    English stemmer leaves "grösse" whole but makes "grosse" "gross")."""
    word = _strip_diacritics(word, spelling)
    if fold and not word.isascii():
        word = word.translate(LETTER_FOLDS)
    if spelling and not word.isascii():
        word = _spelled(word)
    if len(word) > 2 and not word.isdigit():
        stemmer = _stemmer_for(word)
        if stemmer is not None:
            word = stemmer.stemWord(word)
    return word


@lru_cache(maxsize=65536)
def _word_tokens(
    word: str,
    for_query: bool,
    lemmas: bool = False,
    fold: bool = False,
    spelling: bool = False,
    language: str | None = None,
) -> tuple[str, ...]:
    """The tokens of one word run (letters, marks, digits, underscores), see module docstring;
    ``lemmas``: a word of state/lemmas.py is stemmed as its lemma (an identifier's parts are
    not); ``fold``: LETTER_FOLDS folded, and a query keeps the unfolded tokens too;
    ``spelling``: tokenizer 6's spellings met (a query keeps tokenizer 5's tokens too);
    ``language``: the text's language (tokenizer 7), whose tagged stem a word of its script
    of three letters or more gets instead of the script's main stemmer's (not an identifier
    or its parts, not a function word: state/languages.py tagged_stem)."""
    folded = word.casefold()
    parts = [p for piece in word.split("_") for p in _CAMEL.split(piece) if p]
    if len(parts) > 1:  # an identifier: the whole of it, and each part
        whole = _strip_diacritics(folded, spelling)
        if fold:
            whole = whole.translate(LETTER_FOLDS)
        if spelling and not whole.isascii():
            whole = _spelled(whole)
        out = (
            whole,
            *(
                _stem(p.casefold(), fold, spelling)
                for p in parts
                if not (for_query and p.casefold() in STOPWORDS)
            ),
        )
    elif not parts or (for_query and folded in STOPWORDS):
        return ()
    elif language is not None and (stem := languages.tagged_stem(folded, language, STEM_FOLDS)):
        return (stem,)
    else:
        out = (_stem(LEMMAS.get(folded, folded) if lemmas else folded, fold, spelling),)
        if spelling and out[0][:1] in HEBREW_PREFIXES:
            out = (*out, *_hebrew_bare(out[0]))
    if spelling and for_query and not word.isascii():
        # An index (or a PostgreSQL row) written before tokenizer 6 holds tokenizer 5's tokens.
        return (*out, *(t for t in _word_tokens(word, for_query, lemmas, fold) if t not in out))
    if fold and for_query and not word.isascii():
        # An index written before tokenizer 5 (a PostgreSQL store's older rows) holds the
        # unfolded tokens: the query asks for both, and the one no row holds matches nothing.
        out = (*out, *(t for t in _word_tokens(word, for_query, lemmas) if t not in out))
    return out


def _cjk_tokens(run: str) -> list[str]:
    chars = list(run)
    out = list(chars)
    out.extend(chars[i] + chars[i + 1] for i in range(len(chars) - 1))
    return out


def _cluster_tokens(run: str) -> list[str]:
    clusters = _GRAPHEME.findall(run)
    if len(clusters) == 1:
        return clusters
    return [clusters[i] + clusters[i + 1] for i in range(len(clusters) - 1)]


def _run_tokens(
    run: str, for_query: bool, lemmas: bool, fold: bool, spelling: bool = False, language: str | None = None
) -> list[str]:
    """The tokens of one NFKC-normalized run between ASCII separators, by script."""
    out: list[str] = []
    for match in _RUN.finditer(run):
        kind = match.lastgroup
        if kind == "word":
            out.extend(_word_tokens(match.group(), for_query, lemmas, fold, spelling, language))
        elif kind == "cjk":
            han = match.group()
            simplified = han.translate(to_simplified()) if spelling else han
            out.extend(_cjk_tokens(simplified))
            if for_query and simplified != han:  # tokenizer 5's, as an older index holds them
                out.extend(_cjk_tokens(han))
        else:
            out.extend(_cluster_tokens(match.group()))
    return out


def tokens(
    text: str,
    *,
    for_query: bool = False,
    lemmas: bool = False,
    fold: bool = False,
    spelling: bool = False,
    language: str | None = None,
) -> list[str]:
    """Split text into index tokens (see module docstring).

    With ``for_query`` stopwords are dropped (English words and CJK function characters).
    CJK single characters stay in queries: BM25's IDF weighs them, and they are how 绘画
    meets 画画 and 画作 (MADial-Bench zh MRR@10 +0.04 on both halves, bench/RESULTS.md).
    ``lemmas``: words of state/lemmas.py become their lemma's token, and ``fold``: letters
    of LETTER_FOLDS are folded and every script's decimal digits become 0-9 (both the
    full-text index's and its queries'; the embedder's tokens stay without); ``spelling``:
    tokenizer 6's spellings met (see ARABIC_FOLDS and the notes after it); ``language``: the
    text's language other than English, whose stems its words of that language's script get
    (tokenizer 7, the index's tokens only: see ``index_text``).
    """
    if spelling and not text.isascii():
        respelled = _respelled_text(text)
        if respelled != text:
            out = _split_tokens(respelled, for_query, lemmas, fold, spelling, language)
            if for_query:  # tokenizer 5's tokens as well, as an older index holds them
                had = set(out)
                out += [t for t in _split_tokens(text, True, lemmas, fold, False) if t not in had]
            return out
    return _split_tokens(text, for_query, lemmas, fold, spelling, language)


def _split_tokens(
    text: str, for_query: bool, lemmas: bool, fold: bool, spelling: bool, language: str | None = None
) -> list[str]:
    """:func:`tokens` of a text whose tokenizer-6 respelling (if any) is made."""
    out: list[str] = []
    for run in _ASCII_SPLIT.findall(text):
        if run.isascii():  # most runs: exactly one word, and NFKC leaves it as it is
            out.extend(_word_tokens(run, for_query, lemmas, language=language))  # nothing to fold in ASCII
            continue
        normal = unicodedata.normalize("NFKC", run)
        if fold and _OTHER_DIGIT.search(normal):
            out.extend(
                _run_tokens(
                    _OTHER_DIGIT.sub(_ascii_digit, normal), for_query, lemmas, fold, spelling, language
                )
            )
            if for_query:  # as for LETTER_FOLDS: the digits as an older index holds them, too
                out.extend(_run_tokens(normal, for_query, lemmas, False))
            continue
        out.extend(_run_tokens(normal, for_query, lemmas, fold, spelling, language))
    if for_query:
        out = [t for t in out if t not in CJK_STOP]
    return out


def index_text(text: str) -> str:
    """The space-separated token string stored in the FTS5 table: lemmas, folded letters,
    spellings met, answer cues in, and a text in another language than English stemmed in
    it (``text_language``)."""
    language = text_language(text)
    out = [*tokens(text, lemmas=True, fold=True, spelling=True, language=language), *index_cues(text)]
    if language is not None:
        out.append(languages.marker(language))
    return " ".join(out)


_ASCII_WORD = re.compile(r"[a-z]+")


def _language_words(text: str) -> tuple[str, list[str]]:
    """(``text`` NFKC-normalized, its case-folded words): what state/languages.py reads."""
    if text.isascii():  # most texts: the standard re, as _ASCII_SPLIT does (~4x regex's speed)
        return text, _ASCII_WORD.findall(text.lower())
    normal = unicodedata.normalize("NFKC", text)
    return normal, languages.words(normal)


def _held_words(text: str, held: Collection[str]) -> tuple[list[str], list[str]]:
    """(``text``'s words in the scripts of the languages, each as the index makes its tokens:
    a word joined by a zero-width non-joiner also whole, می‌روم as میروم, as _respelled_text
    gives it; the languages of ``held`` in CODES' order)."""
    normal, words = _language_words(text)
    if not normal.isascii():
        words = languages.script_words(_respelled_text(normal))
    return words, [code for code in languages.CODES if code in held]


def text_language(text: str, codes: tuple[str, ...] = languages.CODES) -> str | None:
    """The language of ``codes`` other than English that ``text``'s function words (and
    letters) name (state/languages.py ``detect``; of two that tie, the first of CODES), else
    None."""
    found = languages.detect(_language_words(text)[1], STOPWORDS, codes)
    return found[0] if found else None


def language_terms(text: str, held: Collection[str], *, max_terms: int = 256) -> list[str]:
    """A query's words as a text in each language of ``held`` indexes them (tokenizer 7:
    the languages the index holds texts in, by their markers), asked beside
    :func:`query_terms`: such a text holds its words' tagged stems instead of English ones,
    so each word of a record meets one term of a query, not two. At most ``max_terms``
    (the last, as last_distinct keeps)."""
    if not held:
        return []
    words, codes = _held_words(text, held)
    return last_distinct(languages.stems(words, codes, STEM_FOLDS), max_terms)


def language_forms(text: str, held: Collection[str]) -> dict[str, list[str]]:
    """Each word's plain token (as :func:`tokens` makes it for the hashing embedder, and
    folded as the index folds it) -> its tagged stems in the languages of ``held``: a text in such a language holds those instead, so a query word's document
    frequency is theirs too (state/search.py ``with_language_forms``)."""
    if not held:
        return {}
    words, codes = _held_words(text, held)
    forms: dict[str, list[str]] = {}
    for word in dict.fromkeys(words):
        tagged = [t for code in codes if (t := languages.tagged_stem(word, code, STEM_FOLDS))]
        if tagged:
            for plain in {_stem(word), _stem(word, True, True)}:
                forms.setdefault(plain, []).extend(tagged)
    return forms


def query_terms(text: str, *, max_terms: int = 256) -> list[str]:
    """The distinct query tokens of ``text`` (lemmas, folded letters, spellings met and
    answer cues in), at most ``max_terms``."""
    return last_distinct(
        [*tokens(text, for_query=True, lemmas=True, fold=True, spelling=True), *query_cues(text)], max_terms
    )


def last_distinct(terms: list[str], max_terms: int) -> list[str]:
    """The distinct ``terms`` in order, at most ``max_terms``.

    The cap is generous on purpose, and a longer text keeps its *last* tokens: with a
    dialogue as the query, the end of the conversation is the part nearest the memory
    sought (MADial-Bench: cutting at 64 terms cost MRR 0.55 -> 0.51; keeping the last 256
    rather than the first ranked like keeping 512, see bench/RESULTS.md).
    """
    seen: dict[str, None] = {}
    for token in reversed(terms):
        seen.setdefault(token, None)
        if len(seen) >= max_terms:
            break
    return list(reversed(seen))


def fts_match(terms: list[str]) -> str | None:
    """An FTS5 OR-query over ``terms``, or None if there are none. Tokens are double-quoted,
    so user input can never inject FTS5 syntax."""
    return " OR ".join(f'"{t}"' for t in terms) if terms else None


def is_cjk_char(token: str) -> bool:
    """A single CJK character token (the query tokens whose posting lists are longest)."""
    return len(token) == 1 and _CJK.match(token) is not None


def is_cjk(token: str) -> bool:
    """A token made of CJK characters (a unigram or a bigram)."""
    return _CJK.match(token) is not None


# Stopwords as index tokens (stemmed: "does" is stored as "doe"), for the hashing embedder,
# which sees index tokens.
STOP_TOKENS = STOPWORDS | CJK_STOP | frozenset(_stem(word) for word in STOPWORDS)

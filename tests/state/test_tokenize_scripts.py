"""Every script is searchable: real sentences in many scripts, mixed with code identifiers,
stored through the real store and found by queries written the way a person would ask
(another inflection, without diacritics, another case), and nothing else found."""

from __future__ import annotations

import pytest

from state import tokenize, tokenize_v4, tokenize_v5
from state.memories import NewMemory
from state.tokenize import STOPWORDS, index_text, query_terms, tokens

# (script, stored sentence with an identifier, query that must find it)
SENTENCES = [
    ("latin-diacritics", "Die Größe der Datei `user_id.csv` wurde geändert, sagt Jürgen.", "grosse datei"),
    ("latin-french", "Le café près de la gare ferme à 18 h ; voir src/cafe/hours.py.", "cafe gare"),
    ("cyrillic", "Встреча перенесена на пятницу, см. тикет MEM-42 в getUserName.", "встречу в пятницу"),
    ("greek", "Η συνάντηση μετατέθηκε για την Παρασκευή λόγω του snake_case bug.", "συναντήσεις Παρασκευή"),
    ("arabic", "تم تأجيل اجتماع الفريق إلى يوم الجمعة بسبب خطأ في config_loader.", "اجتماع الفريق"),
    ("hebrew", "הפגישה נדחתה ליום שישי בגלל באג ב-parseHeaders.", "הפגישה ביום שישי"),
    ("devanagari", "टीम की बैठक शुक्रवार तक टाल दी गई है, फ़ाइल api/routes.py देखें।", "बैठक शुक्रवार"),
    ("thai", "การประชุมทีมถูกเลื่อนไปเป็นวันศุกร์ เพราะบั๊กใน retry_policy", "ประชุมทีม"),
    ("hangul", "팀 회의가 금요일로 변경되었습니다. fetchUserProfile 함수 문제입니다.", "회의 금요일"),
    ("kana", "チームの会議は金曜日に変更されました。ログインのバグです。", "会議は金曜日"),
    ("han", "团队会议改到周五了，因为 payment_gateway 模块有问题。", "会议改到周五"),
    (
        "latin-english",
        "The release series was used by three teams before we switched.",
        "uses of the releases",
    ),
]
IDENTIFIER_QUERIES = [
    ("user_id", "latin-diacritics"),
    ("user id", "latin-diacritics"),
    ("getUserName", "cyrillic"),
    ("user name", "cyrillic"),
    ("snake_case", "greek"),
    ("config_loader", "arabic"),
    ("parseHeaders", "hebrew"),
    ("parse headers", "hebrew"),
    ("api/routes.py", "devanagari"),
    ("retry_policy", "thai"),
    ("fetchUserProfile", "hangul"),
    ("user profile", "hangul"),
    ("payment_gateway", "han"),
    ("src/cafe/hours.py", "latin-french"),
]


def _stored(store, cases) -> dict[int, str]:
    """One memory per ``(name, text, ...)`` case, all in one namespace: seq -> name."""
    seqs: dict[int, str] = {}
    with store.transaction():
        for name, text, *_ in cases:
            record = store.memories.create(
                NewMemory(namespace="wsp_scripts", kind="note", content=text, source="test")
            )
            seqs[record["seq"]] = name
    return seqs


@pytest.fixture
def filled(store):
    """The store with one memory per sentence, each in the same namespace, by script."""
    return store, _stored(store, SENTENCES)


def _found(store, seqs, query: str, limit: int = 3) -> list[str]:
    store.search.vector_weight = 0.0  # words alone: what the tokenizer makes findable
    return [seqs[hit.seq] for hit in store.search.search(query, ["wsp_scripts"], limit=limit)]


@pytest.mark.parametrize("script,sentence,query", SENTENCES, ids=[s[0] for s in SENTENCES])
def test_each_script_is_found_by_its_own_words(filled, script, sentence, query):
    store, seqs = filled
    found = _found(store, seqs, query)
    assert found and found[0] == script, (query, found)


@pytest.mark.parametrize("query,script", IDENTIFIER_QUERIES, ids=[q for q, _ in IDENTIFIER_QUERIES])
def test_code_identifiers_are_found_whole_and_by_their_parts(filled, query, script):
    store, seqs = filled
    assert _found(store, seqs, query)[:1] == [script], query


@pytest.mark.parametrize("script,sentence,query", SENTENCES, ids=[s[0] for s in SENTENCES])
def test_a_query_in_another_script_finds_nothing(filled, script, sentence, query):
    """A script's words match no sentence of another script (no accidental collisions).
    Japanese and Chinese share Han characters (会 in 会議 and 会议), so they may meet."""
    store, seqs = filled
    kin = {"kana": {"han"}, "han": {"kana"}}.get(script, set())
    assert set(_found(store, seqs, query, limit=20)) <= {script} | kin


def test_word_forms_meet_after_folding():
    """Snowball stemming, diacritics and case folded alike on both sides."""
    same = [
        ("used", "uses"),
        ("series", "series"),
        ("memories", "memory"),
        ("Größe", "GROSSE"),
        ("café", "Cafe"),
        ("встреча", "встречи"),
        ("ёлка", "елка"),
        ("שָׁלוֹם", "שלום"),
        ("Συνάντηση", "συναντήσεις"),
        ("ｆｕｌｌ", "full"),
    ]
    for left, right in same:
        assert tokens(left) == tokens(right), (left, right)
    assert tokens("use") == tokens("used")


# Letters that no decomposition strips (tokenizer 5, state/tokenize.py LETTER_FOLDS): written
# with them and without, as a keyboard that lacks them types them.
UNDECOMPOSED = [
    ("polish", "Spotkanie w Łodzi przełożone na piątek, Łukasz wie", "lodzi lukasz"),
    ("danish", "Søren flytter til København efter sommerferien", "soren kobenhavn"),
    ("vietnamese", "Đường đến Đà Nẵng bị ngập vì mưa lớn", "duong da"),
    ("french-ligature", "Ma sœur a le cœur sur la main", "soeur coeur"),
    ("turkish", "Yarınki toplantı iptal edildi, Işık haber verdi", "yarinki toplanti isik"),
    ("icelandic", "Þórður fór til Ærøskøbing í gær", "thordur aeroskobing"),
    ("ascii-typed", "Lodz office moves to Tromso, says Bjorn", "Łódź Tromsø Bjørn"),
]


@pytest.mark.parametrize("language,sentence,query", UNDECOMPOSED, ids=[u[0] for u in UNDECOMPOSED])
def test_letters_without_a_decomposition_are_found_without_them(store, language, sentence, query):
    assert _found(store, _stored(store, UNDECOMPOSED), query)[:1] == [language], query


DIGITS = [
    ("arabic", "انتهى المشروع في عام ٢٠٢٣ بنجاح", "2023"),
    ("persian", "قرارداد در سال ۱۴۰۲ امضا شد", "1402"),
    ("devanagari", "यह परियोजना २०२१ में शुरू हुई", "2021"),
    ("thai", "โครงการเริ่มในปี ๒๕๖๖", "2566"),
    ("ascii", "The lease ends in 2027", "٢٠٢٧"),
]


@pytest.mark.parametrize("script,sentence,query", DIGITS, ids=[d[0] for d in DIGITS])
def test_every_scripts_digits_meet_ascii_digits(store, script, sentence, query):
    assert _found(store, _stored(store, DIGITS), query) == [script], query


def test_a_query_folds_letters_and_keeps_them_for_older_indexes():
    """The index holds the folded form; a query asks for both, so an index written before
    tokenizer 5 (state/tokenize_v4.py's tokens, a PostgreSQL store's older rows) still matches."""
    assert index_text("Łódź København đường cœur toplantı").split() == [
        "lodz",
        "kobenhavn",
        "duong",
        "coeur",
        "toplanti",
    ]
    assert query_terms("Łódź") == ["lodz", "łodz"]
    assert query_terms("user_łódź") == ["user_lodz", "user", "lodz", "user_łodz", "łodz"]
    assert tokenize_v4.index_text("Łódź cœur") == "łodz cœur"
    assert tokenize_v4.query_terms("Łódź") == ["łodz"]
    assert index_text("٢٠٢٣ ๒๕๖๖").split()[:2] == ["2023", "2566"]
    assert query_terms("۱۴۰۲") == ["1402", "۱۴۰۲"]
    assert tokenize_v4.query_terms("۱۴۰۲") == ["۱۴۰۲"]
    assert tokens("Łódź ۱۴۰۲") == ["łodz", "۱۴۰۲"]  # the hashing embedder's tokens: its vectors unchanged


def test_identifiers_keep_their_whole_and_their_parts():
    assert tokens("user_id") == ["user_id", "user", "id"]
    assert tokens("camelCase")[0] == "camelcase" and "camel" in tokens("camelCase")
    assert tokens("HTTPServer") == ["httpserver", "http", "server"]
    assert tokens("src/memory/store.py") == ["src", *tokens("memory"), "store", "py"]


def test_no_spaced_scripts_become_overlapping_pieces():
    thai = tokens("สวัสดีครับ")
    assert "ครั" not in thai or len(thai) > 1  # grapheme bigrams, never a bare tone mark
    assert all(not ("\u0e31" <= t[0] <= "\u0e3a" or "\u0e47" <= t[0] <= "\u0e4e") for t in thai)
    assert "记忆" in tokens("原生记忆系统") and "记" in tokens("原生记忆系统")


def test_query_stopwords_are_dropped_but_stored_words_are_kept():
    assert tokens("the plan for the release", for_query=True) == tokens("plan release")
    assert "the" in tokens("the plan")
    assert {"won", "let"}.isdisjoint(STOPWORDS)  # words of their own, not contraction pieces


# Tokenizer 6: spellings that differ by keyboard or habit, each way round (a stored text, and
# queries written another way that must find it). (case, stored sentence, queries)
SPELLINGS = [
    ("hebrew-article", "הפגישה עם הילדים נדחתה", ["פגישה", "ילדים"]),
    ("hebrew-preposition", "נסענו בשבוע שעבר לירושלים", ["ירושלים", "שבוע"]),
    ("hebrew-bare", "חורף קר מאוד השנה", ["בחורף", "והחורף"]),
    ("persian-keyboard", "کتاب جدید را دیروز خواندم", ["كتاب جديد"]),
    ("arabic-on-persian-keyboard", "سأرسل التقرير إلى المدير غدا", ["مدیر"]),
    ("teh-marbuta", "المدرسة مغلقة اليوم بسبب العاصفة", ["المدرسه", "مدرسه"]),
    ("alef-maksura", "ذهبنا إلى مستشفى المدينة", ["مستشفي"]),
    ("zwnj", "کتاب‌ها روی میز هستند", ["کتابها", "کتاب‌ها"]),
    ("zwnj-joined", "من هر روز به دفتر میروم", ["می‌روم"]),
    ("nukta", "कृपया नई फ़ाइल अपलोड करें", ["फाइल"]),
    ("nukta-bare", "जरूरी बैठक कल सुबह है", ["ज़रूरी"]),
    ("chandrabindu", "मैं कल दफ्तर आऊँगा", ["आऊंगा"]),
    ("ukrainian-apostrophe", "Зустріч перенесли на п’ятницю", ["пʼятницю", "п'ятницю", "пятницю"]),
    ("ukrainian-modifier", "Об'єкт пʼятниці готовий", ["об’єкт", "обєкт", "пятниці"]),
    ("traditional-chinese", "團隊會議改到週五下午", ["会议", "周五"]),
    ("simplified-chinese", "这个项目的发布时间推迟了", ["發佈", "項目"]),
]


@pytest.mark.parametrize(
    "case,sentence,query",
    [(c, s, q) for c, s, qs in SPELLINGS for q in qs],
    ids=[f"{c}-{q}" for c, _, qs in SPELLINGS for q in qs],
)
def test_spellings_that_differ_by_keyboard_or_habit_meet(store, case, sentence, query):
    assert _found(store, _stored(store, SPELLINGS), query)[:1] == [case], query


def test_hebrew_prefixes_leave_three_letters_and_old_indexes_still_match():
    """A word is also indexed without up to three leading prefix letters (ו ב ל מ ה ש כ) while
    three letters are left; a query asks for tokenizer 5's tokens too, so an index (or a
    PostgreSQL row) written before tokenizer 6 still matches."""
    assert index_text("ובבית").split() == ["ובבית", "בבית", "בית"]
    assert index_text("בית").split() == ["בית"]  # not "ית"
    assert index_text("מים").split() == ["מים"]
    assert index_text("שלום").split() == ["שלום", "לום"]  # given up: its own first letter
    assert query_terms("הפגישה") == ["הפגישה", "פגישה"]
    assert tokenize_v5.index_text("הפגישה") == "הפגישה"
    assert query_terms("п’ятницю") == ["пятниц", "п", "ятниц"]  # 6's word, then 5's pieces
    assert tokenize_v5.index_text("п’ятницю") == "п ятниц"
    assert query_terms("کتاب") == ["كتاب", "کتاب"]
    assert tokenize_v5.query_terms("کتاب") == ["کتاب"]
    assert query_terms("फ़ाइल") == ["फाइल", "फ़ाइल"]
    assert index_text("會議") == "会 议 会议"
    assert query_terms("會議") == ["会", "议", "会议", "會", "議", "會議"]
    assert query_terms("会议") == ["会", "议", "会议"]
    assert tokenize_v5.index_text("會議") == "會 議 會議"


def test_the_embedder_finds_the_index_form_of_a_respelled_word():
    """The hashing embedder's plain tokens keep the spelling typed (its vectors unchanged);
    it looks their document frequencies up by the form the index holds (folded_forms)."""
    assert tokenize.folded_forms("團隊會議", tokens("團隊會議"))["會議"] == "会议"
    assert tokenize.folded_forms("团队会议", tokens("团队会议")) == {}
    assert tokens("کتاب فى फ़ाइल") == ["کتاب", "فى", "फ़ाइल"]
    assert tokenize.folded_forms("کتاب فى फ़ाइल", tokens("کتاب فى फ़ाइल")) == {
        "کتاب": "كتاب",
        "فى": "في",
        "फ़ाइल": "फाइल",
    }
    assert tokenize.folded_forms("plain English", ["plain", "english"]) == {}

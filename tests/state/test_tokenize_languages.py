"""Latin-script languages other than English, and Persian, are stemmed in their own language
(tokenizer 7, state/languages.py), and since tokenizer 8 every other language PyStemmer has a
stemmer for, in Latin, Cyrillic, Devanagari and Hebrew script: real sentences stored through
the real store, found by a keyword query in another inflection, the way a person or an agent
asks; English indexed as before."""

from __future__ import annotations

import pytest

from state import languages, tokenize_v6, tokenize_v7
from state.memories import NewMemory
from state.tokenize import STOPWORDS, index_text, language_terms, query_terms, text_language
from tests.state.test_tokenize_scripts import _found, _stored

# (language, stored sentence, a query in other word forms that must find it first)
SENTENCES = [
    ("de", "Die Besprechungen mit den Kunden wurden auf Freitag verschoben.", "Besprechung Kunde"),
    (
        "de-compound",
        "Wir haben die Datenbanken gestern migriert und die Tabellen geprüft.",
        "Datenbank Tabelle",
    ),
    ("nl", "De vergaderingen met de klanten zijn verplaatst naar vrijdag.", "vergadering klant"),
    ("fr", "Nous avons déployé les nouvelles versions du serveur hier soir.", "déploiement"),
    ("es", "Actualizamos las dependencias y corregimos los errores de compilación.", "actualizar corregir"),
    ("it", "Le riunioni con i clienti sono state spostate a venerdì.", "riunione cliente"),
    ("pt", "As reuniões com os clientes foram adiadas para sexta-feira.", "adiar"),
    ("ca", "Les reunions amb els clients s'han ajornat fins divendres.", "reunió ajornada"),
    ("sv", "Vi flyttade mötena med kunderna till fredag eftersom servern var nere.", "flytta kunder"),
    ("da", "Vi har flyttet møderne med kunderne til fredag, fordi serveren er nede.", "møde kunde"),
    ("no", "Vi har flyttet møtene med kundene til fredag fordi serveren er nede.", "møte kunde"),
    (
        "fi",
        "Asiakkaiden kanssa pidetyt kokoukset siirrettiin perjantaille, koska palvelin ei toimi.",
        "kokouksia asiakkaat",
    ),
    (
        "hu",
        "Az ügyfelekkel tartott megbeszéléseket péntekre halasztották, mert nem megy a szerver.",
        "ügyfél",
    ),
    ("tr", "Müşterilerle yapılan toplantılar cumaya ertelendi çünkü sunucu çalışmıyor.", "müşteri"),
    ("ro", "Întâlnirile cu clienții au fost mutate vineri pentru că serverul nu merge.", "întâlnirilor"),
    ("pl", "Spotkania z klientami przeniesiono na piątek, bo serwer nie działa.", "spotkanie klient"),
    ("cs", "Schůzky se zákazníky byly přesunuty na pátek, protože server nefunguje.", "schůzka zákazník"),
    ("id", "Pertemuan dengan para pelanggan dipindahkan ke hari Jumat karena server mati.", "temu langganan"),
    ("fa", "کتابهای جدید را دیروز از کتابخانه گرفتم.", "کتاب"),
    ("fa-plural", "دانشجویان این دانشگاه امروز امتحان دارند.", "دانشجو"),
    ("fa-verb", "ما دیروز با بچه‌ها به بازار رفتیم و میوه خریدیم.", "خرید"),
]
# Tokenizer 8's languages: the query's forms are ones their Snowball stemmer makes one with
# the stored forms (it keeps others apart: Serbian "sastanak" / "sastanci", Basque "bezeroa"
# / "bezeroekin", README "Search").
SENTENCES_8 = [
    (
        "lt",
        "Susitikimai su klientais buvo atidėti iki penktadienio, nes serveris neveikia.",
        "susitikimas klientas",
    ),
    ("et", "Koosolekud klientidega lükati reedele, sest server ei tööta.", "koosolekul klientidele"),
    (
        "eu",
        "Bezeroekin izandako bilerak ostiralera atzeratu dira, zerbitzariak ez baitu funtzionatzen.",
        "bileretan",
    ),
    (
        "ga",
        "Cuireadh ár gcruinnithe leis na custaiméirí siar go dtí an Aoine, mar níl an freastalaí ag obair.",
        "cruinnithe",
    ),
    (
        "eo",
        "La kunvenoj kun la klientoj estas prokrastitaj ĝis vendredo, ĉar la servilo ne funkcias.",
        "kunveno kliento",
    ),
    ("sr", "Sastanci sa klijentima su odloženi za petak jer server ne radi.", "klijent"),
    ("sr-cyrillic", "Састанци са купцима су одложени за петак јер сервер не ради.", "kupci"),
    ("ne", "ग्राहकहरूसँगको बैठक शुक्रबारसम्म सारिएको छ किनभने सर्भरले काम गरेको छैन।", "ग्राहक बैठकमा"),
    (
        "yi",
        "די זיצונגען מיט די קליענטן זענען אָפּגעלייגט ביז פֿרײַטיק, ווײַל דער סערווער אַרבעט ניט.",
        "זיצונג קליענט",
    ),
    (
        "st",
        "Dikopano le bareki di chechisetswa ho Labohlano hobane seva ha e sebetse, empa re tla leka hape.",
        "moreki",
    ),
]
ENGLISH = [
    (
        "en",
        "The meetings with the customers were moved to Friday because the server was down.",
        "meeting customer",
    ),
    ("en-names", "We flew to Bahía de los Ángeles last week; Søren and Łukasz came too.", "Angeles"),
    ("en-code", "Renamed user_id to account_id in src/db/schema.py and fixed getUserName.", "user profile"),
]


@pytest.fixture
def filled(store):
    return store, _stored(store, SENTENCES + SENTENCES_8 + ENGLISH)


@pytest.mark.parametrize(
    "language,sentence,query", SENTENCES + SENTENCES_8, ids=[s[0] for s in SENTENCES + SENTENCES_8]
)
def test_each_language_is_found_in_other_word_forms(filled, language, sentence, query):
    store, seqs = filled
    assert _found(store, seqs, query)[:1] == [language], query


@pytest.mark.parametrize("language,sentence,query", SENTENCES, ids=[s[0] for s in SENTENCES])
def test_english_stems_alone_did_not_meet_them(language, sentence, query):
    """What tokenizer 6 (English stems for every Latin-script word) made of the same pair:
    no query term in the stored tokens, so each case above tests tokenizer 7's stems."""
    assert not set(tokenize_v6.query_terms(query)) & set(tokenize_v6.index_text(sentence).split())


@pytest.mark.parametrize("language,sentence,query", SENTENCES_8, ids=[s[0] for s in SENTENCES_8])
def test_tokenizer_7_did_not_meet_them(language, sentence, query):
    """What tokenizer 7 made of the same pair (the script's main stemmer, or Spanish or
    Polish stems for a text whose function words those share): no query term in the stored
    tokens, so each case above tests tokenizer 8's languages."""
    assert not set(tokenize_v7.query_terms(query)) & set(tokenize_v7.index_text(sentence).split())


def test_tokenizer_8_indexes_tokenizer_7s_languages_and_english_as_7_did():
    for _, sentence, _ in SENTENCES + ENGLISH:
        assert index_text(sentence) == tokenize_v7.index_text(sentence)


def test_english_is_indexed_as_before_and_asks_as_before():
    for _, sentence, query in ENGLISH:
        assert index_text(sentence) == tokenize_v6.index_text(sentence)
        assert language_terms(query, set()) == []  # a store without texts in other languages


def test_a_word_meets_one_term_of_a_query_not_two(filled):
    """An English query in a store that holds German texts: a German text's words hold
    their German stems instead of English ones, so it does not outrank the English text
    for holding a word twice over, and an English word inside it is still found."""
    store, seqs = filled
    assert _found(store, seqs, "meeting customer")[:1] == ["en"]
    assert _found(store, seqs, "user profile")[:1] == ["en-code"]
    with store.transaction():
        record = store.memories.create(
            NewMemory(
                namespace="wsp_scripts",
                kind="note",
                content="Das Deployment ist fehlgeschlagen, weil der Build-Cache voll war.",
                source="test",
            )
        )
        seqs[record["seq"]] = "de-english-words"
    assert "de-english-words" in _found(store, seqs, "deployment build cache")


def test_detect_names_the_language_of_its_function_words():
    def detected(text: str) -> tuple[str, ...] | None:
        return languages.detect(languages.words(text.casefold()), STOPWORDS)

    assert detected("Die Besprechungen mit den Kunden wurden verschoben.") == ("de",)
    assert detected("De vergaderingen met de klanten zijn verplaatst naar vrijdag.") == ("nl",)
    assert detected("Le riunioni con i clienti sono state spostate.") == ("it",)  # "i", "a": one letter
    assert detected("Müşterilerle yapılan toplantılar ertelendi.") == ("tr",)  # no function word: ş, ı
    assert detected("I met the team in Berlin and we talked about a plan.") == ()
    assert detected("We flew to Bahía de los Ángeles last week.") == ()  # names in an English text
    assert detected("user_id account_id getUserName") is None
    assert detected("Møderne med kunderne blev flyttet til fredag.") == ("da",)
    assert detected("کتابهای جدید را دیروز از کتابخانه گرفتم") == ("fa",)
    assert not detected("تم تأجيل اجتماع الفريق إلى يوم الجمعة بسبب خطأ")  # Arabic: its own stemmer
    assert not detected("ما هو الحل؟ هم لا يعرفون ما حدث أو لماذا")  # ما، هم، أو: Arabic words too
    assert not detected("میں نے کل کتابیں پڑھیں اور وہ بہت اچھی تھیں")  # Urdu: پ and ھ, not Persian
    assert text_language("Vi har flyttet møderne og møtene til fredag") in {"da", "no"}  # a tie: one of them
    # Tokenizer 8: a script's other languages are told from its main one's texts.
    assert detected("Састанак је одложен за петак") == ("sr",)  # је, and ј
    assert not detected("Встреча перенесена на пятницу, потому что сервер не работает")  # Russian
    assert not detected("Зустріч перенесли на п'ятницю, бо сервер не працює і треба чекати")  # Ukrainian
    assert not detected("Срещата се отлага за петък, защото сървърът не работи и те са заети")  # Bulgarian
    assert detected("बैठक शुक्रबार सारिएको छ किनभने सर्भर चलेको छैन") == ("ne",)
    assert not detected("बैठक शुक्रवार तक टाल दी गई है क्योंकि सर्वर काम नहीं कर रहा है")  # Hindi
    assert detected("די זיצונג איז אָפּגעלייגט ביז פֿרײַטיק") == ("yi",)
    assert not detected("הפגישה נדחתה ליום שישי כי השרת לא עובד ואיך נמשיך")  # Hebrew
    assert detected("La kunveno estas prokrastita ĝis vendredo") == ("eo",)
    assert detected("La reunión con los clientes se aplazó hasta el viernes por la tarde") == ("es",)
    assert detected("Spotkania z klientami przeniesiono na piątek, bo serwer nie działa") == ("pl",)
    assert text_language("Sastanci su odloženi jer server ne radi", languages.TOKENIZER_7_CODES) != "sr"


def test_a_text_in_a_language_holds_its_marker_identifiers_and_function_words_as_before():
    tokens = index_text("Die Besprechungen mit den Kunden, siehe user_id und getUserName.").split()
    assert languages.marker("de") in tokens
    assert {"besprech·de", "kund·de"} <= set(tokens)
    assert {"user_id", "user", "id", "getusername", "get", "name"} <= set(tokens)  # identifiers: English
    assert {"die", "mit", "den"} <= set(tokens)  # function words keep their English token
    assert "besprechungen" not in tokens  # one token a word


def test_a_query_asks_each_language_the_index_holds():
    assert language_terms("Besprechung Kunde", {"de"}) == ["besprech·de", "kund·de"]
    assert language_terms("Besprechung Kunde", {"de", "nl"}) == [
        "besprech·de",
        "kund·de",
        "besprechung·nl",
        "kund·nl",
    ]
    assert language_terms("Besprechung", set()) == []
    assert language_terms("كتاب", {"fa"}) == language_terms("کتاب", {"fa"}) == ["کتاب·fa"]  # either keyboard
    assert query_terms("Besprechung Kunde") == tokenize_v6.query_terms("Besprechung Kunde")  # unchanged


def test_a_query_vector_weighs_the_words_a_text_in_a_language_holds(store, monkeypatch):
    """The hashing embedder weighs a query's words by how many records hold them, and leaves
    out a word none holds: a German text holds "besprech·de", not "besprechung", so those
    records count for the query's word too (else its vector keeps only trigrams)."""
    from state.search import with_language_forms
    from state.tokenize import language_forms

    _stored(store, SENTENCES[:1])
    forms = language_forms("Besprechung Kunden", store.search.languages())
    assert forms == {"besprechung": ["besprech·de"], "kunden": ["kund·de"]}
    counted = with_language_forms(store.search.terms, forms)
    assert counted({"besprechung", "kunden", "freitag"})[0] == {"besprechung": 1, "kunden": 1, "freitag": 0}
    assert store.search.terms({"besprechung"})[0] == {"besprechung": 0}
    weighed = store.search.query_vector("Besprechung Kunden")
    monkeypatch.setattr(store.search, "languages", set)
    assert store.search.query_vector("Besprechung Kunden") != weighed  # trigrams alone


def test_a_text_in_a_language_written_by_another_connection_is_found(paths, migrated_database, monkeypatch):
    """The languages an index holds are kept by its own writes and read again once another
    connection (another process) has written: asked at most every LANGUAGES_CHECK_SECONDS."""
    from state import search
    from state.config import Settings
    from state.store import Store
    from tests.conftest import seed_database

    seed_database(paths, migrated_database)
    reader, writer = Store.open(paths.database, Settings()), Store.open(paths.database, Settings())
    try:
        assert reader.search.languages() == set()
        seqs = _stored(writer, SENTENCES[:1])
        monkeypatch.setattr(search, "LANGUAGES_CHECK_SECONDS", 0.0)
        assert reader.search.languages() == {"de"}
        assert _found(reader, seqs, "Besprechung Kunde") == ["de"]
    finally:
        reader.close()
        writer.close()


def test_a_persian_word_with_or_without_its_zero_width_non_joiner_meets(store):
    """Tokenizer 6 gives a word joined by a zero-width non-joiner also whole (می‌روم as
    میروم); a Persian text's words are stemmed in Persian since 7, and a query's tagged stems
    are made from the same whole forms, so the two spellings still meet both ways."""
    cases = [
        ("joined", "ما هر روز با اتوبوس به دانشگاه می‌روم.", "میروم"),
        ("plain", "آنها هر روز با قطار به کارخانه میروند.", "می‌روند"),
    ]
    seqs = _stored(store, cases)
    for name, _, query in cases:
        assert _found(store, seqs, query)[:1] == [name], query

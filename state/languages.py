"""Which language a text is written in, of those PyStemmer has a Snowball stemmer for beside
each script's main one, and its words' stems in it.

The full-text index stems every word with the Snowball stemmer of its script's main language
(state/tokenize.py: English for Latin, Russian for Cyrillic, Hindi for Devanagari, Arabic;
Hebrew script none): German "Besprechungen" and "Besprechung", Polish "spotkania" and
"spotkanie" stayed apart, and a query in one form found nothing stored in the other; Persian
was stemmed by the Arabic stemmer (دانشجویان and دانشجو stayed apart, and it cut the ب of
بزرگ), Serbian by the Russian one, Nepali by the Hindi one. Since tokenizer 7 a text whose
function words (and letters: ş, ł, ő, گ, ...) name another language (``detect``) is indexed
in it: each word of that language's script (``_SCRIPTS``) of three letters or more, not a
function word, gets its stem by that language's Snowball stemmer, tagged with the language
(``tagged_stem``: "besprech·de"), instead of its script's main stem, and the text gets a
marker token (``marker``: "·de"). Tokenizer 7 told 17 Latin-script languages and Persian;
8 tells the rest (Lithuanian, Estonian, Basque, Irish, Esperanto, Sesotho, Serbian in both
alphabets, Nepali, Yiddish). So

* a text in English, or one whose language is not told, is indexed exactly as before, and
  an English query never meets a German stem by chance ("customers" is German "custom");
* a query asks for its words' tagged stems in each language the index holds texts in (their
  markers' document frequencies: ``held``), beside its script's main stems: an English-only
  store queries as before, and each word of a record meets one term of a query, not two (a
  text in German does not outrank an English one for holding a word twice over);
* identifiers, short words and function words keep their main tokens in every text.

The function words are frequent ones of each language, leaving out those that are English
words too (ENGLISH_LOOKALIKES: "in", "for", "van", "come"), so a few foreign names in an
English text do not make it foreign, and those of the main language of the same script
(Russian's for Serbian's Cyrillic ones); letters a main language writes and the other does
not veto it (Urdu's for Persian, Russian's and Bulgarian's for Serbian).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable
from functools import lru_cache

import regex
import Stemmer

# Set apart from a stem by a character that no index token holds otherwise (the tokenizer
# splits words at it: Catalan writes "l·l" but as two words here), and that FTS5's ascii
# tokenizer keeps inside a token as every non-ASCII character.
TAG = "\u00b7"

# (code, Snowball stemmer, frequent function words; those that are English words as well are
# left out when read: ENGLISH_LOOKALIKES)
_LANGUAGES: tuple[tuple[str, str, str], ...] = (
    (
        "de",
        "german",
        "der die das den und ist nicht mit dem ein eine einen einem einer zu auf für von sich auch wir sie"
        " ich wurde wurden haben sind noch nach bei aus wie oder aber wenn dass des werden wird"
        " kann nur schon sehr über unter zum zur vom beim durch gegen ohne um dann jetzt heute",
    ),
    (
        "nl",
        "dutch",
        "de het een van en ik je niet dat zijn op te met voor maar ook als bij nog naar dan wel"
        " uit zijn wordt worden heeft hebben kan moet zou deze dit wij zij hij jij geen meer"
        " omdat door over tegen onder waar vandaag morgen",
    ),
    (
        "fr",
        "french",
        "de le la les un une des du et est sont pas que qui dans pour sur avec ce cette ces il elle"
        " ils elles nous vous je tu mais ou donc ni car au aux leur leurs été être avoir avons ont"
        " fait plus très aussi comme chez sans sous entre aujourd demain",
    ),
    (
        "es",
        "spanish",
        "de el la los las un una unos unas del y es son que en con para por pero como más muy este"
        " esta estos estas ese esa eso ya se lo le les su sus nos yo tú él ella ellos nosotros"
        " fue fueron está están hay ha han sin sobre entre hasta desde cuando también hoy mañana",
    ),
    (
        "it",
        "italian",
        "il lo la gli le un uno una del della dei delle degli e è sono che di da in con per su"
        " tra fra non ma anche come più molto questo questa questi queste quello quella ci si"
        " io tu lui lei noi voi loro stato stata stati state ha hanno oggi domani perché",
    ),
    (
        "pt",
        "portuguese",
        "de o a os as um uma uns umas do da dos das e é são que em no na nos nas com para por mas"
        " como mais muito este esta estes estas esse essa isso ele ela eles elas nós você foi"
        " foram está estão não sem sobre entre até quando também hoje amanhã",
    ),
    (
        "ca",
        "catalan",
        "de el la els les un una uns unes del dels i és són que en amb per però com més molt"
        " aquest aquesta aquests aquestes això ell ella ells elles nosaltres vosaltres va van"
        " està estan no sense sobre entre fins quan també avui demà",
    ),
    (
        "sv",
        "swedish",
        "och att det som en ett är på för med av till den inte har om var jag vi de du han hon"
        " men eller så kan ska skulle från här där också bara mycket efter under utan vid"
        " när idag imorgon eftersom hade blev blir finns ingen inga alla redan detta dessa denna"
        " sedan innan medan mellan hos vår våra deras",
    ),
    (
        "da",
        "danish",
        "og at det som en et er på for med af til den ikke har om var jeg vi de du han hun men"
        " eller så kan skal skulle fra her der også bare meget efter under uden ved når blev"
        " bliver fordi havde ingen alle allerede denne dette disse siden mellem hos vores deres",
    ),
    (
        "no",
        "norwegian",
        "og at det som en et er på for med av til den ikke har om var jeg vi de du han hun men"
        " eller så kan skal skulle fra her der også bare mye etter under uten ved når ble blir"
        " fordi hadde ingen alle allerede denne dette disse siden mellom hos vår våre deres",
    ),
    (
        "fi",
        "finnish",
        "ja on ei se että oli ovat olla kun mutta tai myös tämä tuo nämä ne hän he me te minä"
        " sinä jo vielä nyt sitten koska kanssa ilman mukaan jälkeen ennen tänään huomenna",
    ),
    (
        "hu",
        "hungarian",
        "a az és egy hogy nem is van volt vagy de meg már csak még mint ezt azt ez az ki mi"
        " ők mi ti ő én te lesz lett kell nagyon után előtt alatt között ma holnap",
    ),
    (
        "tr",
        "turkish",
        "ve bir bu da de için ile çok daha ama ya gibi ne o şu ben sen biz siz onlar olan olarak"
        " var yok değil mi kadar sonra önce bugün yarın her en",
    ),
    (
        "ro",
        "romanian",
        "și în de la cu pe un o este sunt că nu se din pentru care mai dar ca au fost fi acest"
        " această acesta aceasta ei ele noi voi eu tu el ea azi astăzi mâine",
    ),
    (
        "id",
        "indonesian",
        "dan yang di ke dari ini itu dengan untuk tidak ada akan pada juga saya kami kita anda"
        " mereka dia sudah belum bisa harus karena oleh atau tetapi hari besok",
    ),
    (
        "pl",
        "polish",
        "i w z na się nie że do jest są to jak ale czy od po za przez dla tak też już jego jej"
        " ich oraz lub był była było były został została zostały dziś jutro",
    ),
    (
        "cs",
        "czech",
        "a v na se je že to s z do jsou jak ale by od po pro tak také už jeho její jejich nebo"
        " byl byla bylo byly který která které dnes zítra",
    ),
    (
        "fa",
        "persian",
        "است را که این آن در با از برای تا یا اما شد شده بود کرد کرده می نمی های ها یک"
        " هر چه چون اگر باید خود شما آنها امروز فردا",
    ),
    # Tokenizer 8: the other languages PyStemmer has a Snowball stemmer for. Their function
    # words leave out those of English (a, an, is, ...) and the words of the language each
    # script's texts are stemmed in when none is told: Serbian's Cyrillic ones Russian's
    # (на, не, за, да, до, из, после, или, сам), Nepali's Hindi's (हो, आज, को), Yiddish's
    # Hebrew's (איך).
    (
        "lt",
        "lithuanian",
        "ir yra kad su iš ar bet tai jis ji jie jos mes jūs buvo bus kaip nuo apie prie dėl nes"
        " labai šiandien rytoj kuris kuri kurie kurios taip dabar čia ten tik jau dar savo mano",
    ),
    (
        "et",
        "estonian",
        "ja ei et see mis kui oli ka aga või ning siis nagu ta nad meie teie mina sina täna homme"
        " ole oma olen oled oleme olid seda selle sest kõik veel juba ainult väga pärast enne koos",
    ),
    (
        "eu",
        "basque",
        "eta da ez bat du dira zen baina ere hau hori bere gaur bihar nire zure dute izan egin"
        " ditu dago daude zuen zituen baino oso beste guztiak nola zer noiz",
    ),
    (
        "ga",
        "irish",
        "agus bhí tá níl ní sé sí seo siad muid sibh inniu amárach leis chuig faoi ag ach ar"
        " freisin ansin anseo nuair cén cad conas",
    ),
    (
        "eo",
        "esperanto",
        "kaj la estas ne por al kun mi li ŝi ni ili sed ĉar kiu kio kiel kiam hodiaŭ morgaŭ"
        " estis estos tiu tio ĉi ankaŭ nur pli tre sen pri antaŭ ĝis",
    ),
    (
        "sr",
        "serbian",
        "je su što šta koji koja koje kao ali nije će smo ste jer bio bila bilo danas sutra ovaj"
        " ova ovo zbog nakon posle poslije mogu može samo već još kada gde gdje sa za ne na od iz"
        " do se da је су што шта који која које као али није ће смо сте јер био била било данас"
        " сутра овај ова ово због након са од се",
    ),
    (
        "ne",
        "nepali",
        "छन् पनि लाई ले गर्न भएको थियो हुन्छ त्यो यो तर भोलि गरेको हामी तपाईं मा छैन हुने गरी गर्ने भने सबै"
        " किनभने गरेर भयो अनि वा जुन कुनै धेरै अहिले पहिले पछि लागि तथा नै रहेको गएको आएको भन्ने",
    ),
    (
        "yi",
        "yiddish",
        "איז און דער דאס ניט נישט מיט פֿון אויף אױף צו ער זי מיר ווען װען וואס װאָס האט האָט"
        " געווען געװען היינט הײַנט מארגן מאָרגן אבער אָבער אויך אױך זיין זײַן ווערן װערן"
        " מיין מײַן ביי בײַ נאך נאָך שוין זייער זײער",
    ),
    (
        "st",
        "sesotho",
        "hore empa kapa hape hobane kajeno hosane bona rona lona feela haholo tsena tseo mme teng"
        " ntse hoba jwale joalo kamoo moo",
    ),
)

CODES: tuple[str, ...] = tuple(code for code, _, _ in _LANGUAGES)
# The languages tokenizer 7 told (state/tokenize_v7.py tells only these, as it did).
TOKENIZER_7_CODES: tuple[str, ...] = CODES[: CODES.index("fa") + 1]
# Letters that only some of these languages write: a word holding one counts as a function
# word of each (a short note has few function words: "Müşterilerle yapılan toplantılar
# ertelendi" has none, but ş and ı). Romanian ş is the cedilla that keyboards type for ș.
LETTERS: dict[str, tuple[str, ...]] = {
    "ğ": ("tr",),
    "ı": ("tr",),
    "ş": ("tr", "ro"),
    "ș": ("ro",),
    "ț": ("ro",),
    "ţ": ("ro",),
    "ă": ("ro",),
    "ł": ("pl",),
    "ą": ("pl",),
    "ę": ("pl",),
    "ś": ("pl",),
    "ź": ("pl",),
    "ż": ("pl",),
    "ń": ("pl",),
    "ř": ("cs",),
    "ů": ("cs",),
    "ě": ("cs",),
    "ő": ("hu",),
    "ű": ("hu",),
    "ã": ("pt",),
    "õ": ("pt",),
    "ñ": ("es",),
    "ß": ("de",),
    "ø": ("da", "no"),
    "æ": ("da", "no"),
    "å": ("sv", "da", "no"),
    "پ": ("fa",),
    "چ": ("fa",),
    "ژ": ("fa",),
    "گ": ("fa",),
    "ė": ("lt",),
    "į": ("lt",),
    "ų": ("lt",),
    "ĉ": ("eo",),
    "ĝ": ("eo",),
    "ĥ": ("eo",),
    "ĵ": ("eo",),
    "ŝ": ("eo",),
    "ŭ": ("eo",),
    "ђ": ("sr",),
    "ћ": ("sr",),
    "џ": ("sr",),
    "љ": ("sr",),
    "њ": ("sr",),
    "ј": ("sr",),
    "װ": ("yi",),
    "ױ": ("yi",),
    "ײ": ("yi",),
}
# Persian function words above leave out those Arabic writes alike (ما, هم, او): an Arabic
# text keeps the Arabic stemmer. Letters of Urdu that Persian does not write: an Urdu text, whose words the Persian stemmer
# would cut wrong, is not taken for Persian however many پ and گ it holds.
_NOT_PERSIAN = frozenset("ٹڈڑںےھ")
# Cyrillic letters Serbian (and Macedonian) do not write and Russian, Ukrainian, Belarusian and
# Bulgarian do: a Bulgarian text says "са" and "се" as Serbian does, but not in Serbian words.
_NOT_SERBIAN = frozenset("щъыэёяюйьіїєґў")
# Persian written on an Arabic keyboard (ي ك, ى at a word's end): made Persian before the
# Persian stemmer, which knows the suffixes only in Persian letters (tokenizer 6 folds them
# the other way for the Arabic stemmer; a tagged stem is compared only with tagged stems).
_PERSIAN_LETTERS = str.maketrans({"ي": "ی", "ى": "ی", "ك": "ک", "ہ": "ه", "ۃ": "ة"})
_STEMMERS = {code: Stemmer.Stemmer(name) for code, name, _ in _LANGUAGES}
# The fewest function words (or words with a telling letter) that name a language.
MIN_FUNCTION_WORDS = 2

# The words a language's stems are made of: those of its script (Latin unless named here).
_SCRIPTS = {"fa": r"\p{Arabic}", "sr": r"\p{Latin}\p{Cyrillic}", "ne": r"\p{Devanagari}", "yi": r"\p{Hebrew}"}
_SCRIPT_OF = {code: regex.compile("[" + _SCRIPTS.get(code, r"\p{Latin}") + r"\p{M}]+") for code in CODES}
_SCRIPT_WORD = regex.compile(r"[\p{Latin}\p{Arabic}\p{Cyrillic}\p{Devanagari}\p{Hebrew}\p{M}]+")
# Languages whose stems keep their marks (see ``stem``).
_KEEP_MARKS = frozenset({"ne"})
_WORD = regex.compile(r"[\p{L}\p{M}]+")
_MARKS = regex.compile(r"\p{Mn}")


def _bare(word: str) -> str:
    """``word`` without its diacritics (the function words are matched typed either way)."""
    if word.isascii():
        return word
    return unicodedata.normalize("NFC", _MARKS.sub("", unicodedata.normalize("NFD", word)))


# Function words above that are English words as well (most of them English function words):
# left out, or a few borrowed words would make an English text foreign.
ENGLISH_LOOKALIKES = frozenset(
    """a i in on is as at by do no to so he me we us her for men till var under over door
    met car plus son con hay ha sin come state yo io ma per van sense mint care um vi er bare
    ale pro en dag""".split()
)


def _function_words() -> dict[str, frozenset[str]]:
    """Each function word (as written and without diacritics) -> the languages it is one of."""
    languages: dict[str, set[str]] = {}
    for code, _, words in _LANGUAGES:
        for word in words.split():
            # One letter says too little (Czech "s" is English "'s" too); Romanian "în" bare is
            # "in". Nepali's marks are its vowels, not optional (see ``stem``).
            forms = {word} if code in _KEEP_MARKS else {word, _bare(word)}
            for form in forms - ENGLISH_LOOKALIKES:
                if len(form) > 1:
                    languages.setdefault(form, set()).add(code)
    return {word: frozenset(codes) for word, codes in languages.items()}


FUNCTION_WORDS = _function_words()


class _Detector:
    """What ``detect`` counts for a set of languages: their function words and letters only,
    and English's function words that are none of theirs (so tokenizer 7's detection stays
    as it was beside tokenizer 8's languages)."""

    def __init__(self, codes: tuple[str, ...]) -> None:
        self.codes = codes
        self.function_words = {
            word: kept for word, of in FUNCTION_WORDS.items() if (kept := of.intersection(codes))
        }
        self.function_set = frozenset(self.function_words)
        self.letters = {
            letter: chosen for letter, of in LETTERS.items() if (chosen := tuple(c for c in of if c in codes))
        }
        self.letter_set = frozenset(self.letters)
        self._english: dict[frozenset[str], frozenset[str]] = {}

    def english_only(self, english: frozenset[str]) -> frozenset[str]:
        """The English function words that tell English: not one letter, not another language's."""
        found = self._english.get(english)
        if found is None:
            found = self._english[english] = frozenset(
                word for word in english if len(word) > 1 and word not in self.function_words
            )
        return found


def marker(code: str) -> str:
    """The token a text in language ``code`` holds once (how a query knows the index has one)."""
    return f"{TAG}{code}"


MARKERS: tuple[str, ...] = tuple(marker(code) for code in CODES)


def held(tokens: Collection[str]) -> set[str]:
    """The languages whose markers are among ``tokens`` (an index's, or a record's)."""
    return {code for code, mark in zip(CODES, MARKERS, strict=True) if mark in tokens}


def tagged(stem: str, code: str) -> str:
    """A stem of language ``code`` as an index token."""
    return f"{stem}{TAG}{code}"


def detect(
    words: Iterable[str], english: frozenset[str], codes: tuple[str, ...] = CODES
) -> tuple[str, ...] | None:
    """The languages of ``codes`` of which ``words`` (case-folded) hold the most distinct
    function words (a word with one of a language's LETTERS counts as one): ``()`` when they
    hold English ones (``english``, but neither one-letter words, as in no language, nor
    another language's function words: Spanish "de") and at least as many, None when no
    other language has ``MIN_FUNCTION_WORDS``. Close languages that tie (Danish and
    Norwegian) are all returned. Set operations first: every record written is asked (~5 us
    an English turn, was ~16 word by word)."""
    detector = _detector(codes)
    distinct = set(words)
    english_count = len(distinct & detector.english_only(english))
    counts: dict[str, int] = {}
    for word in distinct & detector.function_set:
        for code in detector.function_words[word]:
            counts[code] = counts.get(code, 0) + 1
    for word in distinct:
        if not word.isascii() and (letters := detector.letter_set.intersection(word)):
            for code in {code for letter in letters for code in detector.letters[letter]}:
                counts[code] = counts.get(code, 0) + 1
    for code, vetoes in (("fa", _NOT_PERSIAN), ("sr", _NOT_SERBIAN)):
        if code in counts and any(vetoes.intersection(word) for word in distinct if not word.isascii()):
            del counts[code]
    best = max(counts.values(), default=0)
    if english_count and english_count >= best:
        return ()
    if best < MIN_FUNCTION_WORDS:
        return None
    return tuple(code for code in codes if counts.get(code) == best)


@lru_cache(maxsize=4)
def _detector(codes: tuple[str, ...]) -> _Detector:
    return _Detector(codes)


@lru_cache(maxsize=65536)
def stem(word: str, code: str) -> str:
    """A case-folded word's stem in language ``code``, then without diacritics: stemmed as
    written (Turkish vowel harmony, Hungarian é/e alternate in suffixes), met however typed
    where the stemmer makes both forms one ("ügyfél" and "ügyfelekkel" give "ugyfel").
    Nepali keeps its marks: Devanagari's vowel signs are part of its words."""
    stemmed = _STEMMERS[code].stemWord(word)
    return stemmed if code in _KEEP_MARKS else _bare(stemmed)


def script_words(text: str) -> list[str]:
    """The case-folded words of an NFKC-normalized ``text`` in the scripts these languages
    are written in (Latin; Arabic, Cyrillic, Devanagari and Hebrew for some), in order."""
    return _SCRIPT_WORD.findall(text.casefold())


def words(text: str) -> list[str]:
    """The case-folded words of any script (what ``detect`` counts; English's too)."""
    return _WORD.findall(text.casefold())


def tagged_stem(word: str, code: str, folds: dict[int, str | None]) -> str | None:
    """A case-folded word's index token in a text of language ``code``: its tagged stem
    (``folds``: the tokenizer's letter folds, ø -> o, made after stemming like the
    diacritics); None for a word that keeps the token its script's main stemmer gives (the
    English, Arabic, Russian or Hindi one; a Hebrew-script word none): not all letters of
    the language's script (``_SCRIPT_OF``), of fewer than three, or one of the language's
    function words (as common as English ones). Serbian's stemmer gives Latin stems of
    Cyrillic words as well, so "састанак" and "sastanak" meet."""
    if len(word) < 3 or code in FUNCTION_WORDS.get(word, ()) or not _SCRIPT_OF[code].fullmatch(word):
        return None
    if code == "fa":
        return tagged(stem(word.translate(_PERSIAN_LETTERS), code), code)
    return tagged(stem(word, code).translate(folds), code)


def stems(words: Collection[str], codes: Iterable[str], folds: dict[int, str | None]) -> list[str]:
    """The tagged stems of ``words`` (case-folded) in each language of ``codes``, as a
    text in that language holds them (``tagged_stem``)."""
    out: list[str] = []
    for code in codes:
        for word in words:
            if (token := tagged_stem(word, code, folds)) is not None:
                out.append(token)
    return out

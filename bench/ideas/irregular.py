"""Irregular English verb and noun forms mapped to their lemma before stemming, for
bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/irregular.py

Snowball leaves went/go, met/meet, bought/buy, children/child apart; a question often asks
in another form than the turn said ("When did Caroline go to ..." / "I went to ...").
:data:`IRREGULAR` maps the case-folded word to its lemma, in index and query tokens alike
(a patch of ``state.tokenize._stem``, which both go through). Forms whose other sense is
common in conversation are left out (rose, bit, left, ground, bound, wound, bore, born,
lay, lives, leaves), and so are forms that are the lemma's own spelling (cut, put, hit).
``LEFT`` and ``COMPARATIVES`` are measured as separate variants.

Measured on tokenizer 2 (main up to a60e4a9; bench/RESULTS.md and helper-17's notes have
the figures). Since 33539fd the default does this itself (state/lemmas.py,
state/answer_cues.py, the loose turn chain), so on later code these variants stack on it;
to reproduce the figures, run them on that tree::

    git archive a60e4a9 | tar -x -C /tmp/t2 && cd /tmp/t2
    PYTHONPATH=. python bench/retrieval_turns.py bench/data/conversations/DATASET.json
        --split tune --ideas /path/to/this/bench/ideas/irregular.py
"""

from __future__ import annotations

from functools import lru_cache

from retrieval_turns import Config

import state.tokenize as tokenize

# base: past and participle forms that Snowball does not bring to the base's stem
_VERBS = """
arise: arose arisen | awake: awoke awoken | beat: beaten | become: became
begin: began begun | bend: bent | bleed: bled | blow: blew blown | break: broke broken
breed: bred | bring: brought | build: built | burn: burnt | buy: bought | catch: caught
choose: chose chosen | cling: clung | come: came | creep: crept | deal: dealt | dig: dug
dive: dove | draw: drew drawn | dream: dreamt | drink: drank drunk | drive: drove driven
eat: ate eaten | fall: fell fallen | feed: fed | feel: felt | fight: fought | find: found
flee: fled | fling: flung | fly: flew flown | forbid: forbade forbidden
forget: forgot forgotten | forgive: forgave forgiven | freeze: froze frozen
get: got gotten | give: gave given | go: went gone | grow: grew grown | hang: hung
hear: heard | hide: hid hidden | hold: held | keep: kept | kneel: knelt | know: knew known
lay: laid | lead: led | lean: leant | leap: leapt | learn: learnt | lend: lent | lie: lain
light: lit | lose: lost | make: made | mean: meant | meet: met | mistake: mistook mistaken
overcome: overcame | pay: paid | prove: proven | ride: rode ridden | ring: rang rung
rise: risen | run: ran | say: said | see: saw seen | seek: sought | sell: sold | send: sent
sew: sewn | shake: shook shaken | shine: shone | shoot: shot | show: shown
shrink: shrank shrunk | sing: sang sung | sink: sank sunk | sit: sat | sleep: slept
slide: slid | smell: smelt | speak: spoke spoken | speed: sped | spell: spelt
spend: spent | spill: spilt | spin: spun | spit: spat | spring: sprang sprung
stand: stood | steal: stole stolen | stick: stuck | sting: stung | stink: stank stunk
strike: struck stricken | strive: strove striven | swear: swore sworn | sweep: swept
swim: swam swum | swing: swung | take: took taken | teach: taught | tear: tore torn
tell: told | think: thought | throw: threw thrown | understand: understood
undertake: undertook undertaken | wake: woke woken | wear: wore worn | weave: wove woven
weep: wept | win: won | withdraw: withdrew withdrawn | write: wrote written
undergo: underwent undergone | overtake: overtook overtaken | outgrow: outgrew outgrown
rewrite: rewrote rewritten | retake: retook retaken | mislead: misled
misunderstand: misunderstood | overhear: overheard | oversleep: overslept
withhold: withheld | uphold: upheld | foresee: foresaw foreseen | overdo: overdid overdone
rebuild: rebuilt | remake: remade | repay: repaid | resell: resold | rerun: reran
behold: beheld | befall: befell befallen | forsake: forsook forsaken | partake: partook
outrun: outran | overeat: overate overeaten | undo: undid undone | redo: redid redone
"""
_NOUNS = """
child: children | grandchild: grandchildren | man: men | woman: women | person: people
foot: feet | tooth: teeth | goose: geese | mouse: mice | ox: oxen | wife: wives
knife: knives | half: halves | wolf: wolves | shelf: shelves | loaf: loaves
thief: thieves | calf: calves | scarf: scarves | elf: elves | hoof: hooves
criterion: criteria | phenomenon: phenomena | cactus: cacti | fungus: fungi
nucleus: nuclei | stimulus: stimuli | analysis: analyses | crisis: crises
thesis: theses | diagnosis: diagnoses | datum: data
"""
LEFT = "leave: left"
COMPARATIVES = "good: better best | bad: worse worst | far: farther farthest further furthest"


def table(*specs: str) -> dict[str, str]:
    """{form: lemma} from 'lemma: form form | lemma: form' specs; every form of a compound
    noun (grandchildren) too."""
    out: dict[str, str] = {}
    for spec in specs:
        for entry in spec.replace("\n", " | ").split("|"):
            if not entry.strip():
                continue
            lemma, _, forms = entry.partition(":")
            for form in forms.split():
                out[form.strip()] = lemma.strip()
    return out


IRREGULAR = table(_VERBS, _NOUNS)


def lemma_patches(mapping: dict[str, str]) -> tuple:
    """Patches that send every word through ``mapping`` before Snowball (index and query)."""
    stem = tokenize._stem

    @lru_cache(maxsize=65536)
    def _stem(word: str) -> str:
        return stem(mapping.get(word, word))

    word_tokens = lru_cache(maxsize=65536)(tokenize._word_tokens.__wrapped__)
    return ((tokenize, "_stem", _stem), (tokenize, "_word_tokens", word_tokens))


def ideas() -> list[Config]:
    return [
        Config.shipped("irregular forms", patches=lemma_patches(IRREGULAR)),
        Config.shipped("irregular verbs only", patches=lemma_patches(table(_VERBS))),
        Config.shipped("irregular forms + left", patches=lemma_patches(table(_VERBS, _NOUNS, LEFT))),
        Config.shipped(
            "irregular forms + comparatives", patches=lemma_patches(table(_VERBS, _NOUNS, COMPARATIVES))
        ),
    ]

"""English word forms that the Snowball stemmer keeps apart from the word a question uses.

Conversational questions often ask in another form than the turn said: "When did Caroline
go to the support group?" of "I went to a support group yesterday"; "what did she bring" of
"she brought"; "the kids" of "the children"; "the picture" of a turn that "[shares a photo]".
The search tokens (state/tokenize.py, tokenizer 3) map each case-folded word through
:data:`LEMMAS` before stemming, in the index and in queries alike.

Chosen on the tuning halves of three datasets of long conversations, reported on their
held-out halves (bench/RESULTS.md, "choosing tokenizer 3"): the irregular forms took the
summed recall@10 of the tuning halves from 2.269 to 2.332, the photo words to 2.399; MADial-Bench
(no conversation turns) moved within noise. Left out: forms whose other sense is common in
conversation (rose, bit, left, ground, bound, wound, bore, born, lay, lives, leaves), forms that
are the lemma's own spelling (cut, put, hit), comparatives (better/best: no gain, MADial-Bench
English lost), family words (mom/mother: mixed) and British spellings (no instance measured).
"""

from __future__ import annotations

# lemma: forms that Snowball does not bring to the lemma's stem
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
# The word shared-photo turns carry ("[shares a photo: ...]", as LoCoMo's captions are
# stored), and the words questions ask about them with. Not "image": no gain measured.
_PHOTO = "photo: photos picture pictures pic pics photograph photographs snapshot snapshots"


def parse(*specs: str) -> dict[str, str]:
    """{form: lemma} from ``"lemma: form form | lemma: form"`` specs."""
    table: dict[str, str] = {}
    for spec in specs:
        for entry in spec.replace("\n", " | ").split("|"):
            lemma, _, forms = entry.partition(":")
            for form in forms.split():
                table[form] = lemma.strip()
    return table


LEMMAS: dict[str, str] = parse(_VERBS, _NOUNS, _PHOTO)

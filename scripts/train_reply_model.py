"""Train the reply model (ledger/reply_model.py) on the labelled batteries in tests/data.

    .venv/bin/python scripts/train_reply_model.py [--out ledger/reply_model.npz]

Offline and deterministic: MiniLM embeddings of each reply and of the proposal the rules
find in its assistant turn, then full-batch gradient descent from zero weights. Rows whose
assistant turn proposes nothing (`no_proposal`) are skipped. The benchmark corpus is never
used. The weights file records the training files' SHA-256, so a test can tell when the
data changed and the model was not retrained.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.embeddings import MODEL_ID, MiniLMEmbedder  # noqa: E402
from ledger import reply_model  # noqa: E402
from ledger.classifier import detect_proposal  # noqa: E402

TRAINING_FILES = (
    "tests/data/classify_labelled.jsonl",
    "tests/data/classify_fresh.jsonl",
    "tests/data/classify_unseen.jsonl",
    "tests/data/classify_train.jsonl",
    "tests/data/classify_train2.jsonl",
    "tests/data/classify_train3.jsonl",
    "tests/data/classify_train4.jsonl",
    "tests/data/classify_train5.jsonl",
    "tests/data/classify_train6.jsonl",
    "tests/data/classify_train7.jsonl",
    "tests/data/classify_train8.jsonl",
    "tests/data/classify_train9.jsonl",
    "tests/data/classify_train10.jsonl",
    "tests/data/classify_train11.jsonl",
    "tests/data/classify_train12.jsonl",
)


def load_rows(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """(proposal, reply, label) for every labelled row that answers a proposal."""
    rows = []
    for name in TRAINING_FILES:
        for line in (root / name).read_text().splitlines():
            if not line.strip():
                continue
            obj = json.loads(line)
            label = reply_model.LABEL_OF.get(obj["label"])
            proposal = detect_proposal(obj["assistant"])
            if label is None or proposal is None:
                continue
            rows.append((proposal.text, obj["user"], label))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=reply_model.WEIGHTS)
    args = parser.parse_args(argv)
    rows = load_rows()
    embedder = MiniLMEmbedder()
    replies = np.asarray(embedder.embed_arrays([r for _, r, _ in rows]))
    proposals = np.asarray(embedder.embed_arrays([p for p, _, _ in rows]))
    texts = [r for _, r, _ in rows]
    vocab = reply_model.vocabulary(texts)
    x = reply_model.features(replies, proposals, texts, vocab)
    labels = [label for _, _, label in rows]
    w = reply_model.train(x, labels)
    predicted = (x @ w).argmax(axis=1)
    accuracy = float(
        np.mean([reply_model.LABELS[i] == g for i, g in zip(predicted, labels, strict=True)])
    )
    meta = {
        "labels": list(reply_model.LABELS),
        "embedding_model": MODEL_ID,
        "files": {name: reply_model.file_digest(ROOT / name) for name in TRAINING_FILES},
        "rows": dict(Counter(labels)),
        "l2": reply_model.L2,
        "steps": reply_model.STEPS,
        "rate": reply_model.RATE,
        "gram_min_count": reply_model.GRAM_MIN_COUNT,
        "training_accuracy": round(accuracy, 4),
        "vocabulary": vocab,
    }
    np.savez_compressed(args.out, w=w.astype(np.float32), meta=json.dumps(meta))
    print(
        f"wrote {args.out}: {len(rows)} rows {meta['rows']}, {len(vocab)} words and pairs, "
        f"training accuracy {accuracy:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

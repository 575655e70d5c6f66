"""Index texts with one peer of ctxsearch, the way its own documentation shows: a script
run by the peers' virtualenv (`lab.peer_venv`), never imported by ctxsearch.

    python peer_systems.py SYSTEM TEXTS SCRATCH MODEL

SYSTEM is `llm` (llm embed-multi with llm-sentence-transformers), `chroma` (a persistent
collection with Chroma's SentenceTransformerEmbeddingFunction), `txtai` (Embeddings with
content, saved) or `sentence-transformers` (bare `SentenceTransformer.encode`, nothing
stored). TEXTS is a JSON-lines file of {"id", "text"}; SCRATCH a folder the peer may
write into; MODEL the local model folder every system loads. It prints one JSON line
saying how many texts were indexed; the caller measures the whole process (wall time,
peak memory).

Only the standard library and the peer's own packages are imported here: the peers'
virtualenv has no ctxsearch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _read_texts(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


def index_llm(texts: Path, scratch: Path, model: str) -> int:
    """`llm embed-multi` over the JSON lines, into a database in `scratch`; the model
    registered with llm-sentence-transformers by its local folder."""
    user_dir = scratch / "llm-user"
    user_dir.mkdir(parents=True, exist_ok=True)
    (user_dir / "sentence-transformers.json").write_text(json.dumps([{"name": model}]))
    environment = {**os.environ, "LLM_USER_PATH": str(user_dir)}
    command = [str(Path(sys.executable).with_name("llm")), "embed-multi", "peers", str(texts)]
    command += ["--format", "nl", "-m", f"sentence-transformers/{model}"]
    command += ["--database", str(scratch / "llm.db")]
    subprocess.run(command, check=True, env=environment, stdout=subprocess.DEVNULL)
    return len(_read_texts(texts))


def index_chroma(texts: Path, scratch: Path, model: str) -> int:
    """A persistent Chroma collection embedding with SentenceTransformerEmbeddingFunction."""
    import chromadb
    from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction

    records = _read_texts(texts)
    client = chromadb.PersistentClient(path=str(scratch / "chroma"))
    collection = client.create_collection(
        "peers", embedding_function=SentenceTransformerEmbeddingFunction(model, device="cpu")
    )
    collection.add(ids=[r["id"] for r in records], documents=[r["text"] for r in records])
    return collection.count()


def index_txtai(texts: Path, scratch: Path, model: str) -> int:
    """txtai Embeddings with content (its SQLite document store), saved to `scratch`."""
    from txtai import Embeddings

    records = _read_texts(texts)
    embeddings = Embeddings(path=model, content=True)
    embeddings.index([(r["id"], r["text"], None) for r in records])
    embeddings.save(str(scratch / "txtai"))
    return embeddings.count()


def index_sentence_transformers(texts: Path, scratch: Path, model: str) -> int:
    """Bare `SentenceTransformer.encode` (batch 32, normalised); nothing is stored."""
    from sentence_transformers import SentenceTransformer

    records = _read_texts(texts)
    encoder = SentenceTransformer(model, device="cpu")
    vectors = encoder.encode([r["text"] for r in records], normalize_embeddings=True)
    return len(vectors)


SYSTEMS = {
    "llm": index_llm,
    "chroma": index_chroma,
    "txtai": index_txtai,
    "sentence-transformers": index_sentence_transformers,
}


def main(arguments: list[str]) -> None:
    system, texts, scratch, model = arguments
    count = SYSTEMS[system](Path(texts), Path(scratch), model)
    print(json.dumps({"system": system, "texts": count}))


if __name__ == "__main__":
    main(sys.argv[1:])

"""Web documents for the tests, written with warcio as a crawler writes them: a WET file is
gzipped WARC/1.0, one gzip member a record, a `conversion` record a page (its lines are
paragraphs), after a `warcinfo` record."""
from __future__ import annotations

import io
import json
from pathlib import Path

# Pages of two sites in French and their English versions: paragraph i of a French page is the
# translation of paragraph i of its English page; each site's menu line is boilerplate.
FRENCH = {
    "http://jardin.example/fr/roses": [
        "Les roses fleurissent au début de l'été dans notre jardin.",
        "Accueil | Boutique | Contact",
        "Il faut arroser les plantes chaque matin quand il fait chaud.",
    ],
    "http://jardin.example/fr/pommes": [
        "Nous avons récolté trois paniers de pommes ce week-end.",
        "Accueil | Boutique | Contact",
        "La tarte aux pommes de ma grand-mère est la meilleure du village.",
    ],
    "http://jardin.example/fr/hiver": [
        "En hiver, le jardin se repose sous la neige.",
        "Accueil | Boutique | Contact",
    ],
    "http://gare.example/horaires": [
        "Le train pour Lyon part à huit heures du quai numéro deux.",
    ],
}
ENGLISH = {
    "http://garden.example/en/roses": [
        "The roses bloom at the beginning of summer in our garden.",
        "Home | Shop | Contact",
        "The plants must be watered every morning when it is hot.",
    ],
    "http://garden.example/en/apples": [
        "We picked three baskets of apples this weekend.",
        "Home | Shop | Contact",
        "My grandmother's apple pie is the best in the village.",
    ],
    "http://garden.example/en/winter": [
        "In winter, the garden rests under the snow.",
        "Home | Shop | Contact",
    ],
    "http://station.example/times": [
        "The train to Lyon leaves at eight o'clock from platform two.",
    ],
}


def write_wet(path: Path, pages: dict[str, list[str]], gzip: bool = True) -> Path:
    """A WET file of `pages` (URL: paragraphs), a conversion record each."""
    from warcio.warcwriter import WARCWriter
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=gzip)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "tests"}))
        for url, paragraphs in pages.items():
            text = "".join(f"{paragraph}\n" for paragraph in paragraphs).encode("utf-8")
            writer.write_record(writer.create_warc_record(
                url, "conversion", payload=io.BytesIO(text), warc_content_type="text/plain"))
    return path


def write_jsonl(path: Path, pages: dict[str, list[str]], field: str = "text") -> Path:
    """A JSON-lines file of `pages`, a record each: its URL and its paragraphs as one text."""
    with open(path, "w", encoding="utf-8") as out:
        for url, paragraphs in pages.items():
            out.write(json.dumps({"url": url, field: "\n".join(paragraphs)},
                                 ensure_ascii=False) + "\n")
    return path

"""Translation files: every language has every key (with the same placeholders and its plural
forms), and every key the client uses exists. Static checks, no browser needed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

WEB = Path(__file__).resolve().parents[2] / "web"
I18N = WEB / "i18n"
JS_FILES = sorted((WEB / "js").rglob("*.js"))

# CLDR plural categories each language needs for whole numbers.
PLURAL_FORMS = {"en": {"one", "other"}, "ru": {"one", "few", "many", "other"}, "az": {"one", "other"},
                "et": {"one", "other"}, "fi": {"one", "other"}}  # fmt: skip
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# t('key' ...) calls; `t(` must not be part of a longer name (set(, .t( ...).
T_CALL = re.compile(r"(?<![\w.$])t\(\s*")
LITERAL = re.compile(r"""(['"])([A-Za-z0-9_.]+)\1""")


def load(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def forms(value: Any) -> list[str]:
    return list(value.values()) if isinstance(value, dict) else [value]


def placeholders(value: Any) -> set[str]:
    return {name for text in forms(value) for name in PLACEHOLDER.findall(text)}


def strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    return re.sub(r"(?m)(^|[^:'\"`\\])//.*$", r"\1", source)


def used_keys() -> tuple[dict[str, list[str]], list[str]]:
    """Keys passed to t() per file, and the t() calls whose key is not a string literal."""
    keys: dict[str, list[str]] = {}
    dynamic: list[str] = []
    for path in JS_FILES:
        source = strip_comments(path.read_text(encoding="utf-8"))
        for match in T_CALL.finditer(source):
            before = source[max(0, match.start() - 9) : match.start()]
            if before.endswith("function "):
                continue  # the definition in i18n.js
            literal = LITERAL.match(source, match.end())
            if literal is None:
                line = source.count("\n", 0, match.start()) + 1
                dynamic.append(f"{path.relative_to(WEB)}:{line}: {source[match.start() : match.start() + 40]!r}")
            else:
                keys.setdefault(literal.group(2), []).append(str(path.relative_to(WEB)))
    return keys, dynamic


def test_the_languages_are_the_ones_the_client_offers() -> None:
    files = {path.stem for path in I18N.glob("*.json")}
    assert files == set(PLURAL_FORMS)
    source = (WEB / "js" / "i18n.js").read_text(encoding="utf-8")
    offered = re.search(r"LANGUAGES = \[([^\]]*)\]", source)
    assert offered is not None
    assert set(re.findall(r"'(\w+)'", offered.group(1))) == files
    assert re.findall(r"'(\w+)'", offered.group(1))[0] == "en", "English is the default"


@pytest.mark.parametrize("lang", sorted(PLURAL_FORMS))
def test_every_key_is_translated_with_the_same_placeholders(lang: str) -> None:
    english, other = load("en"), load(lang)
    missing = sorted(set(english) - set(other))
    extra = sorted(set(other) - set(english))
    assert not missing, f"{lang}.json lacks {missing}"
    assert not extra, f"{lang}.json has keys English does not: {extra}"
    for key, value in other.items():
        assert all(isinstance(text, str) and text.strip() for text in forms(value)), f"{lang}:{key} is empty"
        assert placeholders(value) == placeholders(english[key]), f"{lang}:{key} placeholders differ from English"
        for text in forms(value):
            assert placeholders(text) <= placeholders(english[key]), f"{lang}:{key} uses an unknown placeholder"


@pytest.mark.parametrize("lang", sorted(PLURAL_FORMS))
def test_plural_forms_cover_the_language(lang: str) -> None:
    for key, value in load(lang).items():
        if isinstance(value, dict):
            assert set(value) >= PLURAL_FORMS[lang], f"{lang}:{key} needs the forms {sorted(PLURAL_FORMS[lang])}"
            assert set(value) <= {"zero", "one", "two", "few", "many", "other"}, f"{lang}:{key}: unknown form"
            assert "count" in placeholders(value), f"{lang}:{key}: plural forms are chosen by {{count}}"


def test_the_client_uses_only_existing_keys_and_only_literal_keys() -> None:
    keys, dynamic = used_keys()
    assert not dynamic, "t() must be called with a literal key so this test can check it:\n" + "\n".join(dynamic)
    english = load("en")
    unknown = {key: files for key, files in keys.items() if key not in english}
    assert not unknown, f"keys used in the JS but missing from en.json: {unknown}"
    assert len(keys) > 200  # the scan really found the client's strings


def test_every_key_is_used() -> None:
    keys, _ = used_keys()
    unused = sorted(set(load("en")) - set(keys))
    assert not unused, f"keys in en.json that no script uses: {unused}"


def test_guest_name_prefix_is_a_valid_name_everywhere() -> None:
    # The suggested guest name must pass the server's name rule in every language.
    for lang in PLURAL_FORMS:
        prefix = load(lang)["auth.guest_name_prefix"]
        assert re.fullmatch(r"[A-Za-z0-9_-]{2,19}", prefix), f"{lang}: {prefix!r}"


def test_the_page_shell_has_no_untranslated_text() -> None:
    for page in ("index.html",):  # the one shell of every page (app/web_pages.py)
        html = (WEB / page).read_text(encoding="utf-8")
        body = re.search(r"<body[^>]*>(.*)</body>", html, flags=re.S)
        assert body is not None
        text = re.sub(r"<!--.*?-->|<[^>]+>", "", body.group(1), flags=re.S).strip()
        assert text == "", f"visible text in {page} must come from the translations: {text!r}"

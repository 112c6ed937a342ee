"""The readable slug of a user's file name: cut to its length, it never ends (or starts) with a dash (FLD-1)."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.folder import HASH_LENGTH, SLUG_LENGTH, file_name_for

NAME = re.compile(rf"(?:(?P<slug>[a-z0-9-]+)-)?(?P<hash>[0-9a-f]{{{HASH_LENGTH}}})\.json")


def slug_of(user_id: str) -> str:
    found = NAME.fullmatch(file_name_for(user_id))
    assert found is not None, file_name_for(user_id)
    return found.group("slug") or ""


def model_slug(user_id: str) -> str:
    """FLD-1 as written: ASCII letters and digits (NFKD, accents dropped, lower case), other runs one dash, at most 40, no dash at either end."""
    folded = unicodedata.normalize("NFKD", user_id).encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", folded)
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_LENGTH:
            return (candidate[:SLUG_LENGTH]).rstrip("-")
        slug = candidate
    return slug


@pytest.mark.parametrize(
    "user_id",
    [
        "a" * 39 + " b",  # the cut falls right after the dash
        "a" * 39 + "--b",
        "a" * 40 + " b",
        "x" * 38 + "!?" + "y" * 10,
        "Jakub Rojíček " * 5,
        "-" * 3 + "a" * 45,
    ],
)
def test_fld_1_a_slug_cut_at_its_length_does_not_end_in_a_dash(user_id):
    """FLD-1: when 40 characters end at a dash, the dash goes too: the name is `<slug>-<hash>`, never `<slug>--<hash>`."""
    slug = slug_of(user_id)
    assert slug == model_slug(user_id)
    assert not slug.endswith("-") and "--" not in file_name_for(user_id)


@example("a" * 39 + " b")
@example("é" * 39 + "ß" + "x")
@given(st.text(alphabet=st.sampled_from(list("aZ9 -_./éßﬁ\u0301\u00b2")), max_size=60))
def test_fld_1_every_slug_is_letters_digits_and_single_inner_dashes(user_id):
    """FLD-1: the slug is at most 40 characters of [a-z0-9-], no dash at either end, no two in a row, the id's own letters and digits."""
    slug = slug_of(user_id)
    assert slug == model_slug(user_id)
    assert len(slug) <= SLUG_LENGTH and not slug.startswith("-") and not slug.endswith("-") and "--" not in slug


def test_fld_1_the_folder_names_the_file_with_that_slug(tmp_path):
    """FLD-1, FLD-2: MemoryFolder.path_for uses the same name, directly in the folder."""
    folder = sm.MemoryFolder(tmp_path)
    user_id = "a" * 39 + " b"
    path = folder.path_for(user_id)
    assert path.parent == tmp_path and path.name == file_name_for(user_id)
    assert path.name.startswith("a" * 39 + "-") and not path.name.startswith("a" * 39 + "--")

"""A value type this binding does not know (a newer libuniheap's, or
damage) raises an error naming it; it never reads as None, which is a
stored null. The list is made by tests/c/prog_forge_type.c, its first
element's type forged in place."""
import pytest

import uniheap
from conftest import run_prog


@pytest.mark.parametrize("forged", [99, 0])
def test_an_element_of_an_unknown_type_raises(heap, heapd, forged):
    r = run_prog("prog_forge_type", heapd.sock, "forged.list", forged)
    assert r.returncode == 0, r.stdout + r.stderr
    lst = heap.roots["forged.list"]
    with pytest.raises(uniheap.Error, match=f"value type {forged} is not one this binding "
                       "knows: upgrade the Python binding"):
        lst[0]
    with pytest.raises(uniheap.Error, match=f"value type {forged}"):
        list(lst)
    assert lst[1] == 2          # the element beside it reads as before
    assert len(lst) == 2
